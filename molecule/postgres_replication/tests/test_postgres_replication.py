"""Verify streaming replication: rows reach every replica; after the switchover drill, no acknowledged row is lost
and the old primary follows the new one."""
import json
import os
import time

import psycopg2
APP_PASSWORD = "molecule-app-secret"     # the scenario's app role (molecule.yml)
MEMBERS = ("pga", "pgb", "pgc")


def psql(host, query):
    result = host.run("runuser -u postgres -- psql -X -At -d app -c %s", query)
    assert result.rc == 0, result.stderr
    return result.stdout.strip()


def roles(lab_hosts):
    return {name: psql(lab_hosts[name], "SELECT pg_is_in_recovery()") for name in MEMBERS}


def wait_for(check, timeout=30):
    deadline = time.time() + timeout
    while True:
        value = check()
        if value or time.time() > deadline:
            return value
        time.sleep(0.5)


def test_exactly_one_primary_and_the_others_stream(lab_hosts):
    seen = roles(lab_hosts)
    primaries = [name for name, in_recovery in seen.items() if in_recovery == "f"]
    assert len(primaries) == 1, seen
    streaming = psql(lab_hosts[primaries[0]],
                     "SELECT string_agg(application_name || ':' || state, ',' ORDER BY application_name) "
                     "FROM pg_stat_replication")
    assert streaming == ",".join("%s:streaming" % n for n in MEMBERS if n != primaries[0])


def test_row_committed_on_the_primary_is_read_on_each_replica(lab_hosts, lab_ips):
    seen = roles(lab_hosts)
    primary = [name for name, in_recovery in seen.items() if in_recovery == "f"][0]
    marker = "row-%d" % time.time_ns()
    connection = psycopg2.connect(host=lab_ips[primary], user="app", password=APP_PASSWORD, dbname="app")
    connection.autocommit = True
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE IF NOT EXISTS markers (v TEXT PRIMARY KEY)")
        cursor.execute("INSERT INTO markers VALUES (%s)", (marker,))
    connection.close()
    for name in MEMBERS:
        if name != primary:
            found = wait_for(lambda n=name: psql(lab_hosts[n], "SELECT count(*) FROM markers WHERE v = '%s'"
                                                 % marker) == "1")
            assert found, "%s never received the row committed on %s" % (name, primary)
            refused = lab_hosts[name].run("runuser -u postgres -- psql -X -At -d app -c %s",
                                          "INSERT INTO markers VALUES ('x')")
            assert refused.rc != 0 and "read-only" in refused.stderr


def drill_results():
    directory = os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "drill")
    with open(os.path.join(directory, "writer.json"), encoding="utf-8") as handle:
        summary = json.load(handle)
    with open(os.path.join(directory, "acks.txt"), encoding="utf-8") as handle:
        acked = {int(line) for line in handle if line.strip()}
    return summary, acked


def test_switchover_kept_every_acknowledged_row(lab_hosts, lab_ips):
    summary, acked = drill_results()
    assert summary["acked"] == len(acked) > 0
    # the writer wrote through two primaries: the switchover happened under it
    assert len(summary["primaries_written"]) == 2 and summary["primaries_written"][0] == lab_ips["pga"], summary
    print("switchover write gap: %.2f s, %d acknowledged, %d failed commits" % (
        summary["write_gap_seconds"], summary["acked"], summary["failed_commits"]))
    seen = roles(lab_hosts)
    assert seen["pga"] == "t", "the old primary pga is not a replica: %s" % seen
    for name in MEMBERS:
        def missing(n=name):
            return acked - {int(v) for v in psql(lab_hosts[n], "SELECT id FROM acks").split()}
        wait_for(lambda: not missing())
        lacking = missing()
        assert not lacking, "%s lacks acknowledged rows %s" % (name, sorted(lacking)[:10])


def test_old_primary_follows_the_new_one(lab_hosts):
    assert psql(lab_hosts["pga"], "SELECT pg_is_in_recovery()") == "t"
    assert psql(lab_hosts["pga"], "SELECT status FROM pg_stat_wal_receiver") == "streaming"
