"""Shared testinfra fixtures for every scenario's verify.

Hosts are reached with testinfra's podman:// backend (one `podman exec` per check) rather than through
Ansible, which made each check an Ansible run. The instance config written by molecule/_shared/create.yml
maps molecule's instance names to container names (`container`) and addresses (`address`, `ip`). The collection's own module_utils are
importable (ansible_collections.dbops.clusters...) so tests compare values the way the modules do.
"""
import json
import os
import sys
import time

import pytest
import testinfra
import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ".collections"))


def _instances():
    with open(os.environ["MOLECULE_INSTANCE_CONFIG"], encoding="utf-8") as handle:
        return yaml.safe_load(handle) or []


@pytest.fixture(scope="session")
def lab_hosts():
    """{instance name: testinfra host} for every host of the scenario."""
    return {i["instance"]: testinfra.get_host("podman://" + i["container"]) for i in _instances()}


@pytest.fixture(scope="session")
def lab_ips():
    """{instance name: fixed address on the scenario's network}."""
    return {i["instance"]: i["ip"] for i in _instances()}


@pytest.fixture(scope="session")
def sql():
    """sql(host, query) -> rows (lists of strings), run as root through the server's socket: root has no
    password to pass, on MySQL (auth_socket) and MariaDB (unix_socket) alike."""
    def run(host, query):
        result = host.run("$(command -v mariadb || command -v mysql) -N -B -e %s", query)
        assert result.rc == 0, result.stderr
        return [line.split("\t") for line in result.stdout.splitlines()]
    return run


@pytest.fixture(scope="session")
def missing_acknowledged(sql):
    """missing_acknowledged(host, table, acked, wait) -> the acknowledged ids (sorted) that app.<table> on that
    server lacks, read again every second for up to `wait` seconds while some are missing (an asynchronous
    replica may still be applying the last of them)."""
    def run(host, table, acked, wait):
        deadline = time.time() + wait
        while True:
            missing = sorted(acked - {int(row[0]) for row in sql(host, "SELECT id FROM app.%s" % table)})
            if not missing or time.time() > deadline:
                return missing
            time.sleep(1)
    return run


@pytest.fixture(scope="module")
def drill(request):
    """What a scenario's writer left in <ephemeral>/drill: its summary and the acknowledged ids. A scenario with
    several drills keeps one directory per drill; a test module names its own with WRITER_RECORD = "<name>"."""
    directory = os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"],
                             getattr(request.module, "WRITER_RECORD", "drill"))
    with open(os.path.join(directory, "writer.json"), encoding="utf-8") as handle:
        summary = json.load(handle)
    with open(os.path.join(directory, "acks.txt"), encoding="utf-8") as handle:
        acked = {int(line) for line in handle if line.strip()}
    return {"dir": directory, "summary": summary, "acked": acked}


# Runs inside a proxy: admin queries with the proxysql role's 0600 credentials file, rows printed as JSON.
_PROXYSQL_ADMIN_QUERY = """
import json, sys, pymysql
c = pymysql.connect(read_default_file='/root/.proxysql-admin.cnf', read_default_group='client')
with c.cursor(pymysql.cursors.DictCursor) as cur:
    cur.execute(sys.argv[1])
    print(json.dumps(cur.fetchall(), default=str))
"""


@pytest.fixture(scope="session")
def proxysql_admin():
    """proxysql_admin(host, query) -> rows as dicts, from ProxySQL's admin interface on that proxy, logged in
    with the role's credentials file (no password passes through the test)."""
    def run(host, query):
        result = host.run("python3 -c %s %s", _PROXYSQL_ADMIN_QUERY, query)
        assert result.rc == 0, result.stderr
        return json.loads(result.stdout)
    return run


# ProxySQL's monitor logs (kept mysql-monitor_history, 10 minutes) and each one's error column.
_MONITOR_LOGS = {"connect": ("mysql_server_connect_log", "connect_error"),
                 "ping": ("mysql_server_ping_log", "ping_error"),
                 "galera": ("mysql_server_galera_log", "error"),
                 "read_only": ("mysql_server_read_only_log", "error")}


@pytest.fixture(scope="session")
def proxysql_refused_checks(proxysql_admin):
    """proxysql_refused_checks(host, health_check) -> {log: rows} of the monitor's connect, ping and health_check
    ("galera" or "read_only") checks that a backend refused (Access denied) within the logs' history."""
    def run(host, health_check):
        refused = {}
        for name in ("connect", "ping", health_check):
            table, column = _MONITOR_LOGS[name]
            refused[name] = proxysql_admin(host, "SELECT hostname, time_start_us, %s AS error FROM monitor.%s "
                                                 "WHERE %s LIKE '%%Access denied%%'" % (column, table, column))
        return refused
    return run


@pytest.fixture(scope="session")
def proxysql_latest_checks(proxysql_admin):
    """proxysql_latest_checks(host, health_check) -> {backend address: error of its newest health_check ("galera" or
    "read_only") check, None when it answered}: what the proxy's monitor sees of each backend now."""
    def run(host, health_check):
        table, column = _MONITOR_LOGS[health_check]
        latest = {}
        for row in proxysql_admin(host, "SELECT hostname, %s AS error FROM monitor.%s ORDER BY time_start_us DESC "
                                        "LIMIT 60" % (column, table)):
            latest.setdefault(row["hostname"], row["error"])
        return latest
    return run


@pytest.fixture(scope="module")
def proxy_drill(request):
    """What molecule/ha_failover's drill.py (or a script built on it) left in <ephemeral>/drill: results.json,
    plus the acknowledged ids under "acked". A test module names another directory with PROXY_DRILL_RECORD."""
    directory = os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"],
                             getattr(request.module, "PROXY_DRILL_RECORD", "drill"))
    with open(os.path.join(directory, "results.json"), encoding="utf-8") as handle:
        report = json.load(handle)
    with open(os.path.join(directory, "acks.txt"), encoding="utf-8") as handle:
        report["acked"] = {int(line) for line in handle if line.strip()}
    return report


class PointInTime:
    """A point-in-time restore drill judged from its writer's log (writer_pitr.py: "id sent acked" per acknowledged
    commit) and a target epoch: a restore to the target must hold every row acknowledged before it and none whose
    INSERT was sent after it; only a commit in flight at the target may land on either side."""

    def __init__(self, acks, target):
        self.acks, self.target = acks, target
        self.before = {i for i, sent, acked in acks if acked < target}
        self.after = {i for i, sent, acked in acks if sent > target}
        self.in_flight = {i for i, _, _ in acks} - self.before - self.after

    def figures(self, restored):
        """{newest_restored, newest, rpo (seconds the restore lacks against the newest acknowledged row),
        short_of_target (how long before the target the newest restored row was acknowledged)}."""
        acked_at = {i: acked for i, _, acked in self.acks}
        newest_restored = max(set(restored) & set(acked_at))
        newest = max(acked_at)
        return {"newest_restored": newest_restored, "newest": newest,
                "rpo": acked_at[newest] - acked_at[newest_restored],
                "short_of_target": self.target - acked_at[newest_restored]}

    def reached_the_target(self, restored):
        """The restore's newest row is the last one acknowledged before the target, or the one in flight at it."""
        return self.figures(restored)["newest_restored"] in {max(self.before)} | self.in_flight


NEWEST_PLAYBOOK_BACKUP = """
import glob, json, os, sys
found = []
for path in glob.glob(os.path.join(sys.argv[1], "*", "dbops-backup.json")):
    with open(path) as handle:
        description = json.load(handle)
    if description.get("complete") and not description.get("scheduled") and \\
            sys.argv[2] in ("any", description.get("type") or "full"):
        found.append((description["started"], os.path.dirname(path), description))
print(json.dumps(max(found)[1:] if found else None))
"""


@pytest.fixture(scope="session")
def playbook_backup():
    """playbook_backup(host, directory[, kind]) -> (path, description) of the newest complete backup a playbook took
    there, the drills' subject (the scheduled backups a later drill adds are newer, and latest points at them); kind
    "full" or "incremental" takes the newest of that type."""
    def read(host, directory, kind="any"):
        result = host.run("python3 -c %s %s %s", NEWEST_PLAYBOOK_BACKUP, directory, kind)
        assert result.rc == 0 and json.loads(result.stdout), "no playbook backup in %s: %s" % (directory,
                                                                                                result.stderr)
        return tuple(json.loads(result.stdout))
    return read


@pytest.fixture(scope="session")
def writer_drill_record():
    """writer_drill_record(name) -> the drill.json a restore drill left in <ephemeral>/<name>, with its writer's log
    (writer_pitr.py's acks.log) under "acks" as (id, sent, acked) tuples."""
    def read(name):
        directory = os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], name)
        with open(os.path.join(directory, "drill.json"), encoding="utf-8") as handle:
            record = json.load(handle)
        with open(os.path.join(directory, "acks.log"), encoding="utf-8") as handle:
            record["acks"] = [(int(i), float(sent), float(acked))
                              for i, sent, acked in (line.split() for line in handle if line.strip())]
        return record
    return read


@pytest.fixture(scope="module")
def point_in_time():
    """point_in_time(acks, target) -> PointInTime: the split of a writer's rows at a restore target."""
    return PointInTime
