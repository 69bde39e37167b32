"""Render every template of percona_server for the percona flavor (which cannot be installed here) and check
the result: valid YAML, each setting explained, every name one Percona Server 8.4 accepts, the TLS paths of
the flavor table, and an option file mysql_settings renders and parses back unchanged.

Templates are rendered by ansible-playbook itself (the collection's filters included), on the controller."""
import json
import os
import subprocess
import sys

import pytest

from ansible_collections.dbops.clusters.plugins.module_utils import mysql_removed_options, mysql_settings
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_flavors import flavor_on
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_tuning import (
    invalid_variable_reason, parse_version, plan_version, recommend)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TEMPLATES = os.path.join(REPO, "roles", "percona_server", "templates")
DEFAULTS = {
    "percona_server_flavor": "percona", "percona_server_address": "10.0.3.7", "percona_server_server_id": 0,
    "percona_server_port": 3306, "percona_server_bind_address": "0.0.0.0", "percona_server_source": "",
    "percona_server_tls": False, "percona_server_require_secure_transport": False,
    "percona_server_binlog_expire_seconds": 604800, "percona_server_tls_dir": flavor_on("percona", "Debian")["tls_dir"],
}


def render(tmp_path, template, variables, as_text=False):
    """The template rendered by ansible-playbook: its YAML as data, or its text."""
    play = tmp_path / "render.yml"
    as_data = "" if as_text else " | from_yaml"
    play.write_text(
        "- hosts: localhost\n  gather_facts: false\n  tasks:\n"
        "    - ansible.builtin.copy:\n"
        "        dest: %s\n"
        "        content: \"{{ lookup('ansible.builtin.template', '%s')%s | to_json }}\"\n"
        "        mode: '0600'\n" % (tmp_path / "out.json", os.path.join(TEMPLATES, template), as_data))
    extra = tmp_path / "vars.json"
    extra.write_text(json.dumps(variables))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".collections"))
    command = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local",
               "-e", "@%s" % extra, str(play)]
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    return json.loads((tmp_path / "out.json").read_text())


CASES = {
    "source": {},
    "replica_with_tls": {"percona_server_source": "src", "percona_server_tls": True, "percona_server_server_id": 42,
                         "percona_server_require_secure_transport": True},
}


def test_every_template_has_a_case():
    assert sorted(os.listdir(TEMPLATES)) == [
        "base_settings.yml.j2", "mysql-backup-check.service.j2", "mysql-backup-check.timer.j2",
        "mysql-backup-receive.service.j2", "mysql-backup-receive.socket.j2", "mysql-backup-send.service.j2",
        "mysql-backup-send.timer.j2", "mysql-binlog-archive.service.j2"], "a new template needs render cases here"


SCHEDULE = {"percona_server_schedule_group": "ledger",
            "percona_server_schedule_conf": "/etc/dbops/mysql-backup/ledger.json",
            "percona_server_backup_host": "bk1", "percona_server_schedule_host_address": "10.0.9.5",
            "percona_server_backup_receiver_port": 4457, "percona_server_backup_timeout": 3600,
            "percona_server_backup_max_age": 93600, "percona_server_backup_max_lag": 60,
            "percona_server_schedule_addresses": {"db2": "10.0.3.8", "db1": "10.0.3.7"},
            "percona_server_backup_schedule": "*-*-* 02:30:00 UTC", "percona_server_backup_schedule_turn": 600,
            "percona_server_schedule_rank": 2, "percona_server_restart_gate_timeout": 300,
            "percona_server_schedule_service": "mysql", "inventory_hostname": "db1",
            "percona_server_schedule_rule": "it is a replica that replicates within 60 s (or the only server)\n"}


def test_the_schedule_units_run_the_agent_with_its_settings_and_no_secret(tmp_path):
    send = render(tmp_path, "mysql-backup-send.service.j2", SCHEDULE, as_text=True)
    assert "ExecStart=/usr/bin/python3 /usr/local/lib/dbops/dbops_mysql_backup.py send " \
           "/etc/dbops/mysql-backup/ledger.json\n" in send
    assert "Type=oneshot\n" in send and "After=network-online.target mysql.service\n" in send
    # its turn (2 x 600 s), one backup, the gate after it, and a margin
    assert "TimeoutStartSec=%d\n" % (1200 + 3600 + 300 + 300) in send and "waits\n# 1200 s" in send
    assert "bk1 only if it is a replica that replicates within 60 s (or the only server), and no backup" in send
    timer = render(tmp_path, "mysql-backup-send.timer.j2", SCHEDULE, as_text=True)
    assert "OnCalendar=*-*-* 02:30:00 UTC\n" in timer and "Persistent=true\n" in timer
    socket_unit = render(tmp_path, "mysql-backup-receive.socket.j2", SCHEDULE, as_text=True)
    assert "ListenStream=10.0.9.5:4457\n" in socket_unit and "Accept=yes\n" in socket_unit
    assert "IPAddressDeny=any\nIPAddressAllow=10.0.3.7 10.0.3.8\n" in socket_unit
    receive = render(tmp_path, "mysql-backup-receive.service.j2", SCHEDULE, as_text=True)
    assert "StandardInput=socket\nStandardOutput=socket\n" in receive and "RuntimeMaxSec=7320\n" in receive
    check = render(tmp_path, "mysql-backup-check.service.j2", SCHEDULE, as_text=True)
    assert "dbops_mysql_backup.py check /etc/dbops/mysql-backup/ledger.json\n" in check
    assert "OnCalendar=hourly\n" in render(tmp_path, "mysql-backup-check.timer.j2", SCHEDULE, as_text=True)
    for text in (send, timer, socket_unit, receive, check):
        assert "password" not in text.lower()


def test_the_clone_plugin_is_loaded_unless_the_caller_loads_it(tmp_path):
    settings = render(tmp_path, "base_settings.yml.j2", DEFAULTS)
    assert settings["plugin_load_add"]["value"] == "mysql_clone.so"
    assert settings["plugin_load_add"]["dynamic"] is False
    settings = render(tmp_path, "base_settings.yml.j2", dict(DEFAULTS, percona_server_load_clone=False))
    assert "plugin_load_add" not in settings


def test_the_binlog_archive_unit_runs_the_service_with_its_settings_and_no_secret(tmp_path):
    text = render(tmp_path, "mysql-binlog-archive.service.j2", {
        "dbops_cluster_group": "ledger", "percona_server_backup_repository": "/var/backups/mysql/ledger",
        "percona_server_archive_conf_dir": "/etc/dbops/mysql-binlog"}, as_text=True)
    assert ("ExecStart=/usr/bin/python3 /usr/local/lib/dbops/dbops_mysql_binlog_archive.py "
            "/etc/dbops/mysql-binlog/ledger.json\n") in text
    assert "Restart=always\n" in text and "UMask=0077\n" in text
    assert "/var/backups/mysql/ledger/binlog/<source>/" in text
    assert "password" not in text.lower()


@pytest.mark.parametrize("case", sorted(CASES))
def test_base_settings_render_for_percona(tmp_path, case):
    variables = dict(DEFAULTS, **CASES[case])
    settings = render(tmp_path, "base_settings.yml.j2", variables)
    version = parse_version(flavor_on("percona", "Debian")["default_series"])
    for name, setting in settings.items():
        assert set(setting) >= {"value", "dynamic", "reason"}, name
        assert setting["reason"], name
        assert invalid_variable_reason(mysql_settings.variable_name(name), "mysql", version) is None, name
    # The option file made from them parses back to the same values.
    text = mysql_settings.render(settings, "header")
    parsed = mysql_settings.parse(text)
    assert {k: mysql_settings.normalize(v) for k, v in parsed.items()} == {
        k: mysql_settings.normalize(s["value"]) for k, s in settings.items()}
    if case == "source":
        assert settings["server_id"]["value"] == 3 * 256 + 7
        assert "read_only" not in settings and "ssl_ca" not in settings
    else:
        assert settings["server_id"]["value"] == 42
        assert settings["super_read_only"]["value"] == "ON" and "replica of src" in settings["read_only"]["reason"]
        assert settings["ssl_ca"]["value"] == "/etc/mysql/tls/ca.pem"
        assert settings["ssl_key"]["value"] == "/etc/mysql/tls/server-key.pem"
        assert settings["require_secure_transport"]["value"] == "ON"


# Every release series the role installs or runs: Percona Server 8.0 and 8.4, MySQL 8.4 and the lab's 9.7.
TARGETS = [("percona", "8.0"), ("percona", "8.4"), ("mysql", "8.4"), ("mysql", "9.7")]


@pytest.fixture(scope="module")
def rendered_cases(tmp_path_factory):
    """base_settings.yml.j2 rendered for each case (a source, a replica with TLS, no clone plugin)."""
    cases = dict(CASES, without_clone={"percona_server_load_clone": False})
    return dict((case, render(tmp_path_factory.mktemp(case), "base_settings.yml.j2", dict(DEFAULTS, **variables)))
                for case, variables in cases.items())


@pytest.mark.parametrize("flavor, series", TARGETS)
def test_nothing_the_role_renders_is_removed_in_the_series(rendered_cases, flavor, series):
    """The option file the role writes (the tuning plan plus the base settings, as configure.yml combines them)
    holds no option the series removed or renamed (module_utils/mysql_removed_options.py), for every workload and
    durability profile the engine plans."""
    version = plan_version(series)
    plans = [recommend({"memory_mb": memory, "cpus": 4, "flavor": flavor, "version": series, "workload": workload,
                        "durability": durability, "disk_type": "hdd"})["settings"]
             for memory in (1024, 65536) for workload in ("oltp", "write_heavy")
             for durability in ("durable", "ephemeral")]
    for base in rendered_cases.values():
        for plan in plans:
            settings = dict(plan, **base)
            for option, setting in settings.items():
                assert mysql_removed_options.decision(option, setting["value"], flavor, version) is None, option
