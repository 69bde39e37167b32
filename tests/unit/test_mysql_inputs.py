"""Input refusals of the MySQL roles and modules, the server's option list, error numbers, restart order."""
import grp
import json
import os
import pwd

import pytest
import yaml

from ansible.module_utils.testing import patch_module_args
from ansible_collections.dbops.clusters.plugins.module_utils import mysql_errors as errors
from ansible_collections.dbops.clusters.plugins.module_utils import mysql_inputs as inputs
from ansible_collections.dbops.clusters.plugins.module_utils import mysql_settings as settings
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_connection import ConnectionError_
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_flavors import FlavorError, flavor_on

# An excerpt of `mysqld --no-defaults --verbose --help` of MySQL 9.7.4 (Debian sid), as the lab's server prints it.
MYSQLD_HELP = """mysqld  Ver 9.7.4-2 for Linux on x86_64 ((Debian))
BuildID[sha1]=cc8a18826385d7182761a4a8f41044748267244d
Copyright (c) 2000, 2026, Oracle and/or its affiliates.

Oracle is a registered trademark of Oracle Corporation and/or its
affiliates. Other names may be trademarks of their respective
owners.

Starts the MySQL database server.

Usage: mysqld [OPTIONS]

...
  --innodb-buffer-pool-size=#
                      The size of the memory buffer InnoDB uses to cache data
                      and indexes of its tables.
  --innodb-change-buffer-max-size=#
  --log-bin[=name]    Configures the name prefix to use for binary log files.
                      If the --log-bin option is not supplied, the name prefix
                      defaults to "binlog". If the --log-bin option is supplied
  --log-bin-index=name
                      File that holds the names for binary log files.
  --log-bin-trust-function-creators
  --max-connections=# The number of simultaneous clients allowed
  --max-delayed-threads=#
  --skip-name-resolve Don't resolve hostnames. All hostnames are IP's or
                      'localhost'.
  --skip-networking   Don't allow connection with TCP/IP
  -u, --user=name     Run mysqld daemon as user.
  --validate-config   Validate the server configuration specified by the user.
                      (Defaults to on; use --skip-xa-detach-on-prepare to disable.)

Variables (--variable-name=value)
and boolean options {FALSE|TRUE}                             Value (after reading options)
------------------------------------------------------------ -------------
activate-all-roles-on-login                                  FALSE
activate-mandatory-roles                                     TRUE
admin-address                                                (No default value)
admin-port                                                   33062
admin-ssl-ca                                                 (No default value)
admin-ssl-capath                                             (No default value)
admin-ssl-cert                                               (No default value)
admin-ssl-cipher                                             (No default value)
gtid-mode                                                    ON
innodb-buffer-pool-size                                      134217728
log-bin                                                      binlog
max-connections                                              151
server-id                                                    1
skip-name-resolve                                            FALSE
table-open-cache-instances                                   16
xa-detach-on-prepare                                         TRUE

To see what values a running MySQL server is using, type
'mysqladmin variables' instead of 'mysqld --verbose --help'.
"""

# An excerpt of `mariadbd --no-defaults --verbose --help` of MariaDB 11.8.6 (Debian trixie), the lab's.
MARIADBD_HELP = """/usr/sbin/mariadbd  Ver 11.8.6-MariaDB-0+deb13u1 from Debian for debian-linux-gnu on x86_64
Copyright (c) 2000, 2018, Oracle, MariaDB Corporation Ab and others.

  --innodb-buffer-pool-size=#
                      The size of the memory buffer InnoDB uses to cache data
                      and indexes of its tables
  --wsrep-provider=name
                      Path to replication provider library
  --wsrep-provider-options=name

Variables (--variable-name=value)
and boolean options {FALSE|TRUE}                             Value (after reading options)
------------------------------------------------------------ -------------
innodb-buffer-pool-size                                      134217728
wsrep-provider                                               none
wsrep-provider-options

To see what variables a running server is using, type
'SELECT * FROM INFORMATION_SCHEMA.GLOBAL_VARIABLES' instead of 'mariadbd --verbose --help'
"""

ME = pwd.getpwuid(os.getuid()).pw_name
MY_GROUP = grp.getgrgid(os.getgid()).gr_name


def known():
    return settings.parse_help_options(MYSQLD_HELP)


def test_help_lists_options_from_both_parts():
    names = known()
    assert {"innodb_buffer_pool_size", "log_bin", "skip_name_resolve", "max_connections", "user",
            "table_open_cache_instances", "server_id", "gtid_mode", "admin_ssl_ca"} <= names
    assert "variables" not in names and "and" not in names and "to" not in names
    assert settings.parse_help_options(MARIADBD_HELP) == {"innodb_buffer_pool_size", "wsrep_provider",
                                                          "wsrep_provider_options"}


def test_unknown_options_refuses_typos_only():
    wanted = ["innodb_buffer_pool_size", "innodb-buffer-pool-size", "skip-name-resolve", "log_bin",
              "skip_log_bin", "loose-group_replication_group_name", "innodb_bufer_pool_size", "max_conections"]
    assert settings.unknown_options(wanted, known()) == ["innodb_bufer_pool_size", "max_conections"]
    assert settings.closest("innodb_bufer_pool_size", known()) == "innodb_buffer_pool_size"
    assert settings.closest("zzz", known()) is None


@pytest.mark.parametrize("code, unreachable, denied", [
    (1045, False, True), (1044, False, True), (1698, False, True), (2003, True, False), (2002, True, False),
    (2013, True, False), (1049, False, False)])
def test_error_numbers(code, unreachable, denied):
    err = ConnectionError_("x", code=code)
    assert errors.is_unreachable(err) is unreachable
    assert errors.is_access_denied(err) is denied


def test_describe_names_the_error():
    class Fake(Exception):
        pass
    assert errors.describe(Fake(1049, "Unknown database 'x'")) == "ER_BAD_DB (1049): Unknown database 'x'"
    assert errors.describe(Fake("no number")) == "no number"
    assert errors.error_code(Fake(1045, "denied")) == errors.ER_ACCESS_DENIED


def test_flavor_paths_by_os_family_and_refusal():
    row = flavor_on("percona", "Debian")
    assert (row["datadir"], row["socket"], row["tls_dir"], row["server_binary"]) == (
        "/var/lib/mysql", "/run/mysqld/mysqld.sock", "/etc/mysql/tls", "/usr/sbin/mysqld")
    assert flavor_on("mariadb", "Debian")["server_binary"] == "/usr/sbin/mariadbd"
    with pytest.raises(FlavorError, match="flavor mysql is not supported on OS family 'RedHat': the roles support Debian"):
        flavor_on("mysql", "RedHat")


GOOD = {"family": "mysql", "port": 3306, "server_id": 0, "binlog_expire_seconds": 604800, "rto_minutes": 15,
        "redo_mb_per_hour": 0, "redo_sample_seconds": 0, "overrides": {"max_connections": 77},
        "databases": [{"name": "app"}], "replication_user": "repl",
        "config_file": "zz-dbops.cnf", "restart_pending_file": "dbops-restart-pending",
        "users": [{"name": "app", "host": "%", "password": "it's a \\ \"pass\" word",
                   "privileges": {"app.*": "ALL", "*.*": "PROCESS,REPLICATION CLIENT,BACKUP_ADMIN"}}]}


def test_good_input_passes():
    assert inputs.role_errors(GOOD) == []
    assert inputs.role_errors(dict(GOOD, address="10.0.3.7")) == []
    assert inputs.role_errors(dict(GOOD, address="db1.example.com", server_id=12)) == []


@pytest.mark.parametrize("change, expected", [
    ({"port": 0}, "percona_server_port=0: must be from 1 to 65535"),
    ({"port": 70000}, "percona_server_port=70000: must be from 1 to 65535"),
    ({"port": "33o6"}, "percona_server_port='33o6': must be a whole number"),
    ({"server_id": -1}, "percona_server_server_id=-1: must be from 0 to 4294967295"),
    ({"binlog_expire_seconds": -5}, "percona_server_binlog_expire_seconds=-5"),
    ({"rto_minutes": 0}, "percona_server_rto_minutes=0"),
    ({"redo_mb_per_hour": -10}, "percona_server_redo_mb_per_hour=-10"),
    ({"redo_sample_seconds": 99999}, "percona_server_redo_sample_seconds=99999"),
    ({"restart_max_lag_seconds": -1}, "percona_server_restart_max_lag_seconds=-1"),
    ({"restart_gate_timeout": 0}, "percona_server_restart_gate_timeout=0"),
    ({"overrides": {"innodb_io_capacity": -200}}, "percona_server_overrides.innodb_io_capacity=-200: negative"),
    ({"overrides": {"innodb_log_buffer_size": "-16M"}}, "percona_server_overrides.innodb_log_buffer_size=-16M"),
    ({"overrides": {"max_connections": None}}, "percona_server_overrides.max_connections: must be a single value"),
    ({"databases": [{"name": "my-app"}, {"name": "bad`name"}]}, "percona_server_databases[1].name: schema name"),
    ({"databases": [{"name": "x" * 65}]}, "longer than 64 characters"),
    ({"users": [{"name": "u" * 33, "host": "%", "password": "p"}]}, "longer than 32 characters, the limit"),
    ({"users": [{"name": "o'brien", "host": "%", "password": "p"}]}, "percona_server_users[0] (o'brien@%)"),
    ({"users": [{"name": "app", "password": "p", "privileges": {"app.*": "SELECT,INSRET"}}]},
     "percona_server_users[0] (app@%): INSRET on app.*: no such privilege on MySQL/Percona Server"),
    ({"users": [{"name": "app", "password": "p", "privileges": {"app.*": "SELECT,SUPER"}}]},
     "SUPER on app.*: global privileges can only be granted on '*.*'"),
    ({"users": [{"name": "app", "password": "p", "privileges": {"app": "SELECT"}}]}, "privilege key 'app'"),
    ({"replication_user": "r" * 40}, "percona_server_replication_user: user name"),
    ({"address": "db1.example.com"}, "percona_server_address='db1.example.com': cannot derive a server_id"),
    ({"address": "10.0.0.0"}, "derives server_id 0"),
    ({"config_file": "zz-dbops.conf"}, "percona_server_config_file='zz-dbops.conf': must end in .cnf"),
    ({"config_file": "../my.cnf"}, "percona_server_config_file='../my.cnf': must be a file name"),
    ({"restart_pending_file": "pending.cnf"}, "percona_server_restart_pending_file='pending.cnf': must not end in"),
    ({"restart_pending_file": ""}, "percona_server_restart_pending_file='': must be a file name"),
])
def test_bad_input_is_refused_naming_the_variable(change, expected):
    bad = dict(GOOD, **change)
    found = inputs.role_errors(bad)
    assert any(expected in sentence for sentence in found), found


@pytest.mark.parametrize("proxies, expected", [
    ("p1", "group_replication_proxies='p1': must be a list of inventory host names"),
    ([""], "must be a list of inventory host names"),
    (["p9"], "group_replication_proxies names p9, not hosts of the inventory"),
    (["gr2"], "group_replication_proxies names gr2, a member of the cluster itself"),
])
def test_the_proxies_in_front_are_inventory_hosts_outside_the_cluster(proxies, expected):
    cluster = {"inventory": ["gr1", "gr2", "gr3", "p1", "p2"], "members": ["gr1", "gr2", "gr3"]}
    assert inputs.role_errors(dict(cluster, proxies=["p1", "p2"], drain_timeout=30), "group_replication_") == []
    found = inputs.role_errors(dict(cluster, proxies=proxies), "group_replication_")
    assert any(expected in sentence for sentence in found), found
    found = inputs.role_errors(dict(cluster, proxies=[], drain_timeout=-1), "group_replication_")
    assert found == ["group_replication_drain_timeout=-1: must be from 0 to 3600"], found


def test_messages_never_carry_a_password():
    bad = dict(GOOD, users=[{"name": "app", "password": "s3cret-Pw", "privileges": {"app.*": "NOPE"}}])
    found = inputs.role_errors(bad)
    assert found and not any("s3cret-Pw" in sentence for sentence in found)


def test_mariadb_privileges_and_user_length():
    assert inputs.privilege_errors("v", {"*.*": "BINLOG MONITOR,SLAVE MONITOR"}, "mariadb") == []
    assert inputs.privilege_errors("v", {"*.*": "BACKUP_ADMIN"}, "mariadb") != []
    assert inputs.account_errors("v", "u" * 60, "%", "mariadb") == []


def test_server_id_from_address_or_explicit():
    assert inputs.server_id_for("10.89.203.12") == 203 * 256 + 12
    assert inputs.server_id_for("10.89.203.12", 7) == 7
    with pytest.raises(ValueError, match="set percona_server_server_id"):
        inputs.server_id_for("10.0.0.0")
    with pytest.raises(ValueError):
        inputs.server_id_for("")


def topo(**hosts):
    return dict((name, {"source": source, "server_id": server_id}) for name, (source, server_id) in hosts.items())


def test_topology_accepts_a_source_and_replicas():
    hosts = topo(src=("", 1), rep1=("src", 2), rep2=("src", 3), other=("", 2))
    assert inputs.topology_errors("rep1", hosts) == []
    assert inputs.topology_errors("src", hosts) == []


@pytest.mark.parametrize("me, hosts, expected", [
    ("rep1", topo(rep1=("rep1", 2)), "cannot replicate from itself"),
    ("rep1", topo(rep1=("ghost", 2)), "percona_server_source=ghost: not a host of the inventory"),
    ("a", topo(a=("b", 1), b=("c", 2), c=("a", 3)), "the chain a -> b -> c -> a loops back"),
    ("rep2", topo(src=("", 1), rep1=("src", 2), rep2=("src", 2)), "rep1, rep2 share server_id 2"),
    ("src", topo(src=("", 5), rep1=("src", 5)), "rep1, src share server_id 5"),
    ("deep", topo(src=("", 1), mid=("src", 2), deep=("mid", 1)), "deep, src share server_id 1"),
])
def test_topology_refusals(me, hosts, expected):
    found = inputs.topology_errors(me, hosts)
    assert any(expected in sentence for sentence in found), found


def test_unknown_server_ids_are_not_compared():
    assert inputs.topology_errors("rep1", topo(src=("", None), rep1=("src", None))) == []


def test_restart_order_replicas_first_deepest_first_sources_last():
    sources = {"src": "", "rep1": "src", "rep2": "src", "deep": "rep1", "lone": ""}
    assert inputs.restart_order(["src", "rep1", "lone", "deep", "rep2"], sources) == [
        "deep", "rep1", "rep2", "src", "lone"]
    assert inputs.restart_order(["a", "b"], {"a": "b", "b": "a"}) in (["a", "b"], ["b", "a"])


# ---------------------------------------------------------------------------- modules, without a server


def run_module(module, args, monkeypatch, capsys):
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            module.main()
    return json.loads(capsys.readouterr().out)


def test_mysql_config_fails_on_access_denied_and_writes_nothing(tmp_path, monkeypatch, capsys):
    from ansible_collections.dbops.clusters.plugins.modules import mysql_config

    def denied(params):
        raise ConnectionError_("cannot connect to MySQL at /run/mysqld/mysqld.sock as root: ER_ACCESS_DENIED "
                               "(1045): Access denied", code=1045)
    monkeypatch.setattr(mysql_config, "connect", denied)
    path = tmp_path / "zz.cnf"
    result = run_module(mysql_config, {"path": str(path), "settings": {"max_connections": {"value": 10}},
                                       "owner": ME, "group": MY_GROUP}, monkeypatch, capsys)
    assert result["failed"] and "refused the login" in result["msg"] and "1045" in result["msg"]
    assert not path.exists()


def test_mysql_config_writes_the_file_when_the_server_is_down(tmp_path, monkeypatch, capsys):
    from ansible_collections.dbops.clusters.plugins.modules import mysql_config

    def down(params):
        raise ConnectionError_("cannot connect", code=2003)
    monkeypatch.setattr(mysql_config, "connect", down)
    path = tmp_path / "zz.cnf"
    result = run_module(mysql_config, {"path": str(path), "settings": {"max_connections": {"value": 10}},
                                       "mode": "0640", "owner": ME, "group": MY_GROUP}, monkeypatch, capsys)
    assert not result.get("failed"), result
    assert result["file_changed"] and not result["server_running"]
    assert "max_connections = 10" in path.read_text()
    assert oct(path.stat().st_mode & 0o777) == "0o640"
    assert not [p for p in tmp_path.iterdir() if p.name != "zz.cnf"], "a temporary file was left behind"


@pytest.mark.parametrize("mode", ["644x", "rw-r--r--", "0999", "7"])
def test_mysql_config_refuses_a_bad_mode(tmp_path, monkeypatch, capsys, mode):
    from ansible_collections.dbops.clusters.plugins.modules import mysql_config
    result = run_module(mysql_config, {"path": str(tmp_path / "zz.cnf"), "settings": {}, "mode": mode},
                        monkeypatch, capsys)
    assert result["failed"] and "is not an octal file mode" in result["msg"]


def test_mysql_config_refuses_an_unknown_option_before_writing(tmp_path, monkeypatch, capsys):
    from ansible_collections.dbops.clusters.plugins.modules import mysql_config
    binary = tmp_path / "mysqld"
    binary.write_text("#!/bin/sh\ncat <<'HELP'\n" + MYSQLD_HELP + "\nHELP\n")
    binary.chmod(0o755)
    path = tmp_path / "zz.cnf"
    result = run_module(mysql_config, {"path": str(path), "server_binary": str(binary),
                                       "settings": {"innodb_bufer_pool_size": {"value": "1G"},
                                                    "max_connections": {"value": 10}}}, monkeypatch, capsys)
    assert result["failed"], result
    assert "innodb_bufer_pool_size (did you mean innodb_buffer_pool_size?) not known to" in result["msg"]
    assert result["unknown_options"] == ["innodb_bufer_pool_size"]
    assert not path.exists()


def test_an_account_without_a_password_is_refused_unless_it_is_removed():
    found = inputs.role_errors(dict(GOOD, users=[{"name": "app", "host": "%"}]))
    assert "percona_server_users[0] (app@%): has no password (no default password)" in found
    assert inputs.role_errors(dict(GOOD, users=[{"name": "old", "host": "%", "state": "absent"}])) == []


def test_a_cluster_role_gets_the_same_checks_under_its_own_prefix():
    """pxc_galera and group_replication are layers on the same base: their accounts, schemas, overrides and
    numbers are refused by the same rules, each message naming the role's own variable."""
    galera = {"family": "mariadb", "port": 70000, "overrides": {"innodb_io_capacity": -1},
              "databases": [{"name": "bad`name"}],
              "users": [{"name": "app", "password": "p", "privileges": {"app.*": "SELECT,INSRET"}},
                        {"name": "nopw", "host": "%"}]}
    found = inputs.role_errors(galera, "pxc_galera_")
    for expected in ("pxc_galera_port=70000: must be from 1 to 65535",
                     "pxc_galera_overrides.innodb_io_capacity=-1: negative",
                     "pxc_galera_databases[0].name: schema name",
                     "pxc_galera_users[0] (app@%): INSRET on app.*: no such privilege on MariaDB",
                     "pxc_galera_users[1] (nopw@%): has no password"):
        assert any(expected in sentence for sentence in found), (expected, found)
    assert not any("percona_server_" in sentence for sentence in found), found


def test_only_the_numbers_a_role_has_are_checked():
    assert inputs.role_errors({"family": "mysql", "users": [], "overrides": {}}, "group_replication_") == []


def test_group_replication_names_its_recovery_account():
    found = inputs.role_errors({"family": "mysql", "recovery_user": "r" * 40, "users": [
        {"name": "app", "host": "%", "password": "pw", "privileges": {"app.*": "SELEKT"}}]}, "group_replication_")
    assert any(s.startswith("group_replication_recovery_user: user name") for s in found), found
    assert any("group_replication_users[0] (app@%): SELEKT on app.*" in s for s in found), found


def server_that_runs(monkeypatch, mysql_config, variables):
    """A running server whose variables are `variables` (no SET GLOBAL is expected of these static settings)."""
    class RunningSession:
        queries = []

        def __init__(self, connection, check_mode=False):
            pass

        def variables(self, names):
            return {name: variables[name] for name in names if name in variables}

        def close(self):
            pass
    monkeypatch.setattr(mysql_config, "connect", lambda params: object())
    monkeypatch.setattr(mysql_config, "Session", RunningSession)


def test_a_restart_a_stopped_run_never_made_is_still_due_on_the_next_run(tmp_path, monkeypatch, capsys):
    # The first run writes the option file and stops before its restart (a failure, a killed play): the server
    # still runs the old value. The next run finds the file as it wants it; the pending file keeps the restart due.
    from ansible_collections.dbops.clusters.plugins.modules import mysql_config
    server_that_runs(monkeypatch, mysql_config, {"back_log": "10000"})
    path, pending = tmp_path / "zz.cnf", tmp_path / "dbops-restart-pending"
    args = {"path": str(path), "restart_pending_file": str(pending), "owner": ME, "group": MY_GROUP,
            "settings": {"back_log": {"value": 77, "dynamic": False}}}
    first = run_module(mysql_config, args, monkeypatch, capsys)
    assert first["restart_required"] and first["restart_reasons"] == ["back_log: running 10000, wanted 77"], first
    assert pending.read_text() == "back_log: running 10000, wanted 77\n"
    assert oct(pending.stat().st_mode & 0o777) == "0o600"

    second = run_module(mysql_config, args, monkeypatch, capsys)  # no restart happened in between
    assert not second["file_changed"] and not second["changed"], second
    assert second["restart_required"], second
    assert second["restart_reasons"] == ["pending since an earlier run: back_log: running 10000, wanted 77"]

    pending.unlink()  # what the caller does after the restarted server passed its gate
    server_that_runs(monkeypatch, mysql_config, {"back_log": "77"})
    third = run_module(mysql_config, args, monkeypatch, capsys)
    assert not third["restart_required"] and not third["changed"] and not pending.exists(), third


def test_check_mode_predicts_a_pending_restart_and_writes_nothing(tmp_path, monkeypatch, capsys):
    from ansible_collections.dbops.clusters.plugins.modules import mysql_config
    server_that_runs(monkeypatch, mysql_config, {"back_log": "10000"})
    path, pending = tmp_path / "zz.cnf", tmp_path / "dbops-restart-pending"
    pending.write_text("innodb_log_buffer_size: 16M -> 64M\n")
    result = run_module(mysql_config, {"path": str(path), "restart_pending_file": str(pending), "_ansible_check_mode": True,
                                       "settings": {"back_log": {"value": 77, "dynamic": False}}}, monkeypatch, capsys)
    assert result["changed"] and result["restart_required"], result
    assert result["restart_reasons"] == ["back_log: running 10000, wanted 77",
                                         "pending since an earlier run: innodb_log_buffer_size: 16M -> 64M"]
    assert not path.exists() and pending.read_text() == "innodb_log_buffer_size: 16M -> 64M\n"


# ------------------------------------------------------------------ values checked by the server binary itself

# Captured from MySQL 9.7.4 (Debian sid) and MariaDB 11.8.9 (trixie), `--verbose --help` with the values given.
MYSQL_REFUSES_ENUM = ("2026-11-27T10:41:08.245341Z 0 [ERROR] [MY-000077] [Server] /usr/sbin/mysqld: Error while "
                      "setting value 'READ-COMITTED' to 'transaction-isolation'.\n"
                      "2026-11-27T10:41:08.247963Z 0 [ERROR] [MY-010119] [Server] Aborting\n")
MARIADB_REFUSES_ENUM = ("2026-11-27 10:41:13 0 [ERROR] /usr/sbin/mariadbd: Error while setting value "
                        "'READ-COMITTED' to 'transaction-isolation'\n")
HELP_TABLE = """Variables (--variable-name=value)
and boolean options {FALSE|TRUE}                             Value (after reading options)
------------------------------------------------------------ -------------
innodb-buffer-pool-size                                      1073741824
innodb-io-capacity                                           100
max-connections                                              1
skip-name-resolve                                            TRUE
transaction-isolation                                        READ-COMMITTED

To see what values a running MySQL server is using, type
"""


@pytest.mark.parametrize("errors", [MYSQL_REFUSES_ENUM, MARIADB_REFUSES_ENUM])
def test_a_value_the_server_cannot_parse_is_refused_naming_the_override(errors):
    found = settings.value_refusals(
        {"transaction_isolation": {"value": "READ-COMITTED", "source": "override"},
         "max_connections": {"value": 10, "source": "derived"}}, 1, errors, {}, "percona_server_overrides")
    assert len(found) == 1, found
    assert found[0].startswith("percona_server_overrides.transaction_isolation=READ-COMITTED: the server refuses "
                               "it: ")
    assert "Error while setting value 'READ-COMITTED' to 'transaction-isolation'" in found[0]
    assert "Aborting" not in found[0]


def test_an_override_moved_into_range_is_refused_with_the_value_the_server_would_run():
    shown = settings.parse_help_values(HELP_TABLE)
    assert shown["innodb_io_capacity"] == "100" and shown["skip_name_resolve"] == "TRUE"
    candidate = {"innodb_io_capacity": {"value": 50, "source": "override"},
                 "max_connections": {"value": 0, "source": "override"},
                 "innodb_buffer_pool_size": {"value": "1G", "source": "override"},
                 "skip_name_resolve": {"value": "ON"},
                 "transaction_isolation": {"value": "read-committed", "source": "override"}}
    found = settings.value_refusals(candidate, 0, "", shown, "percona_server_overrides")
    assert found == [
        "percona_server_overrides.innodb_io_capacity=50: outside the range the server accepts; it would run 100",
        "percona_server_overrides.max_connections=0: outside the range the server accepts; it would run 1"]


def test_a_derived_value_rounded_by_the_server_is_not_refused():
    shown = settings.parse_help_values(HELP_TABLE)
    assert settings.value_refusals({"max_connections": {"value": 0, "source": "derived"}}, 0, "", shown) == []


def test_plugin_loads_and_loose_options_are_not_given_to_the_check():
    known = {"plugin_load_add", "max_connections"}
    assert [o for o in ("plugin_load_add", "loose_group_replication_group_name", "max_connections")
            if settings.value_checked(o, known)] == ["max_connections"]


# A stand-in with mysqld's option parsing for two options: it reads only --defaults-file (as mysqld does when
# it comes first), refuses an unknown transaction_isolation and moves innodb_io_capacity up to its minimum.
PARSING_MYSQLD = r'''#!/usr/bin/env python3
import sys
args = sys.argv[1:]
open(sys.argv[0] + ".argv", "w").write("\n".join(args))
values = {}
if args[0].startswith("--defaults-file="):
    for line in open(args[0].split("=", 1)[1]):
        if "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            values[key.strip()] = value.strip()
iso = values.get("transaction_isolation", "REPEATABLE-READ")
if iso.upper() not in ("READ-UNCOMMITTED", "READ-COMMITTED", "REPEATABLE-READ", "SERIALIZABLE"):
    sys.stderr.write("2026-01-01T00:00:00Z 0 [ERROR] [MY-000077] [Server] mysqld: Error while setting value '%s' "
                     "to 'transaction-isolation'.\n2026-01-01T00:00:00Z 0 [ERROR] [MY-010119] [Server] Aborting\n"
                     % iso)
    sys.exit(1)
print("  --innodb-io-capacity=#\n  --transaction-isolation=name\n  --wsrep-sst-auth=name\n")
print("Variables (--variable-name=value)\nand boolean options {FALSE|TRUE}  Value (after reading options)")
print("-" * 60 + " " + "-" * 13)
print("innodb-io-capacity  %d" % max(100, int(values.get("innodb_io_capacity", 200))))
print("transaction-isolation  %s" % iso.upper())
print("wsrep-sst-auth  %s" % values.get("wsrep_sst_auth", "(No default value)"))
print("")
'''


@pytest.mark.parametrize("overrides, words", [
    ({"transaction_isolation": "READ-COMITTED"},
     "percona_server_overrides.transaction_isolation=READ-COMITTED: the server refuses it: mysqld: Error while "
     "setting value 'READ-COMITTED' to 'transaction-isolation'"),
    ({"innodb_io_capacity": 50},
     "percona_server_overrides.innodb_io_capacity=50: outside the range the server accepts; it would run 100"),
])
def test_mysql_config_refuses_a_value_the_server_would_not_run_before_writing(tmp_path, monkeypatch, capsys,
                                                                              overrides, words):
    from ansible_collections.dbops.clusters.plugins.modules import mysql_config
    binary = tmp_path / "mysqld"
    binary.write_text(PARSING_MYSQLD)
    binary.chmod(0o755)
    path, pending = tmp_path / "zz.cnf", tmp_path / "pending"
    candidate = dict((name, {"value": value, "source": "override", "dynamic": False})
                     for name, value in overrides.items())
    candidate["wsrep_sst_auth"] = {"value": "sst:s3cret-Pw", "online": False}
    result = run_module(mysql_config, {"path": str(path), "server_binary": str(binary), "settings": candidate,
                                       "restart_pending_file": str(pending),
                                       "override_variable": "percona_server_overrides"}, monkeypatch, capsys)
    assert result["failed"], result
    assert words in result["msg"] and "Nothing was written" in result["msg"]
    assert not path.exists() and not pending.exists()
    argv = (tmp_path / "mysqld.argv").read_text()
    assert argv.startswith("--defaults-file=") and "s3cret-Pw" not in argv   # values never on a command line
    assert not list(tmp_path.glob("dbops-mysql-check-*"))


def test_mysql_config_writes_values_the_server_accepts(tmp_path, monkeypatch, capsys):
    from ansible_collections.dbops.clusters.plugins.modules import mysql_config

    def down(params):
        raise ConnectionError_("cannot connect", code=2003)
    monkeypatch.setattr(mysql_config, "connect", down)
    binary = tmp_path / "mysqld"
    binary.write_text(PARSING_MYSQLD)
    binary.chmod(0o755)
    path = tmp_path / "zz.cnf"
    result = run_module(mysql_config, {"path": str(path), "server_binary": str(binary), "owner": ME, "group": MY_GROUP,
                                       "settings": {"transaction_isolation": {"value": "READ-COMMITTED",
                                                                              "source": "override"},
                                                    "innodb_io_capacity": {"value": 2000, "source": "override"}}},
                        monkeypatch, capsys)
    assert not result.get("failed"), result
    assert "transaction_isolation = READ-COMMITTED" in path.read_text()


def test_the_binary_names_its_version_and_flavor():
    assert settings.parse_help_version(MYSQLD_HELP) == "9.7.4"
    assert settings.parse_help_version(MARIADBD_HELP) == "11.8.6"
    assert settings.parse_help_version("no version here\n  --port=#\n") is None
    assert settings.parse_help_flavor(MYSQLD_HELP) == "mysql" and settings.parse_help_flavor(MARIADBD_HELP) == "mariadb"
    percona = "/usr/sbin/mysqld  Ver 8.4.3-3 for Linux on x86_64 (Percona Server (GPL), Release '3', Revision 'x')"
    assert settings.parse_help_flavor(percona) == "percona" and settings.parse_help_version(percona) == "8.4.3"


def test_another_flavors_binary_is_not_judged_by_series():
    from ansible_collections.dbops.clusters.plugins.module_utils.mysql_server_options import series_refusal
    # the percona flavor's path predicted on a MySQL 9.7 host: the install it would replace, not an upgrade
    assert series_refusal("8.4", "9.7.4", "/usr/sbin/mysqld", "percona", "mysql") is None
    assert series_refusal("8.4", "9.7.4", "/usr/sbin/mysqld", "mysql", "mysql")


@pytest.mark.parametrize("series, installed, refused", [
    ("9.7", "9.7.4", False), ("8.4", "8.4.3", False), ("11.8", "11.8.6", False),
    ("8.4", "9.7.4", True), ("8.0", "8.4.3", True), ("11.4", "11.8.6", True),
    ("8.4", None, False),          # not installed yet: a first install installs the series asked for
])
def test_another_series_than_the_installed_one_is_refused(series, installed, refused):
    from ansible_collections.dbops.clusters.plugins.module_utils.mysql_server_options import series_refusal
    message = series_refusal(series, installed, "/usr/sbin/mysqld")
    assert bool(message) == refused
    if refused:
        assert "percona_server_version asks for series %s, but /usr/sbin/mysqld is %s" % (series, installed) in message
        assert "Nothing was written" in message
        # every refused case here asks for an older series than the installed one: no path leads there
        assert "never moved to an older series" in message and "rolling_upgrade" not in message


def test_a_newer_series_names_the_upgrade_playbook():
    from ansible_collections.dbops.clusters.plugins.module_utils.mysql_server_options import series_refusal
    message = series_refusal("9.7", "8.4.3", "/usr/sbin/mysqld")
    assert message.endswith("or move the server to 9.7 one server at a time, the replicas first and the source "
                            "last after a hand-over, with playbooks/rolling_upgrade_mysql.yml (docs/upgrades.md).")
    layered = series_refusal("11.8", "11.4.5", "/usr/sbin/mariadbd",
                             upgrade_path="with playbooks/rolling_upgrade_galera.yml")
    assert layered.endswith("move the server to 11.8 with playbooks/rolling_upgrade_galera.yml.")


def test_mysql_tuning_refuses_a_series_the_installed_binary_is_not(tmp_path, monkeypatch, capsys):
    from ansible_collections.dbops.clusters.plugins.modules import mysql_tuning
    binary = tmp_path / "mysqld"
    binary.write_text("#!/bin/sh\ncat <<'HELP'\n" + MYSQLD_HELP + "\nHELP\n")
    binary.chmod(0o755)
    base = {"memory_mb": 2048, "cpus": 2, "flavor": "mysql", "server_binary": str(binary)}
    result = run_module(mysql_tuning, dict(base, version="8.4"), monkeypatch, capsys)
    assert result["failed"] and result["installed_version"] == "9.7.4", result
    assert "percona_server_version asks for series 8.4" in result["msg"]
    result = run_module(mysql_tuning, dict(base, version="9.7"), monkeypatch, capsys)
    assert not result.get("failed"), result


def test_the_series_refusal_names_the_layers_variable_and_upgrade_path(tmp_path, monkeypatch, capsys):
    """pxc_galera and group_replication plan through percona_server's plan.yml: the refusal names their variable and
    their path, not the async one."""
    from ansible_collections.dbops.clusters.plugins.modules import mysql_tuning
    binary = tmp_path / "mysqld"
    binary.write_text("#!/bin/sh\ncat <<'HELP'\n" + MYSQLD_HELP + "\nHELP\n")
    binary.chmod(0o755)
    result = run_module(mysql_tuning, {"memory_mb": 2048, "cpus": 2, "flavor": "mysql", "version": "8.4",
                                       "server_binary": str(binary), "version_variable": "pxc_galera_version",
                                       "upgrade_path": "one member at a time with playbooks/rolling_upgrade_galera.yml"},
                        monkeypatch, capsys)
    assert result["failed"]
    assert result["msg"].startswith("pxc_galera_version asks for series 8.4, but %s is 9.7.4" % binary)
    assert "Set pxc_galera_version to 9.7" in result["msg"]
    # 8.4 is older than the installed 9.7: no upgrade path leads there, the path is not offered
    assert result["msg"].endswith("never moved to an older series (restore a backup of that series, or rebuild "
                                  "the server).")
    roles = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "roles")
    with open(os.path.join(roles, "pxc_galera", "tasks", "plan.yml"), encoding="utf-8") as handle:
        galera = [task for task in yaml.safe_load(handle) if task.get("ansible.builtin.include_role", {}).get(
            "tasks_from") == "plan.yml"][0]["vars"]
    assert galera["percona_server_version_variable"] == "pxc_galera_version"
    assert "playbooks/rolling_upgrade_galera.yml" in galera["percona_server_upgrade_path"]
    with open(os.path.join(roles, "group_replication", "tasks", "server.yml"), encoding="utf-8") as handle:
        group = [task for task in yaml.safe_load(handle) if task.get("ansible.builtin.include_role", {}).get(
            "tasks_from") == "plan.yml"][0]["vars"]
    assert "primary last" in group["percona_server_upgrade_path"]
    assert "playbooks/rolling_upgrade_gr.yml" in group["percona_server_upgrade_path"]


def test_mysql_tuning_refuses_a_removed_override_before_asking_the_binary(tmp_path, monkeypatch, capsys):
    """The lab's 9.7 binary does not know expire_logs_days either; the plan's refusal comes first, naming the
    release and the replacement, and a translated name is what the binary is asked about."""
    from ansible_collections.dbops.clusters.plugins.modules import mysql_tuning
    binary = tmp_path / "mysqld"
    binary.write_text("#!/bin/sh\ncat <<'HELP'\n" + MYSQLD_HELP + "\nHELP\n")
    binary.chmod(0o755)
    base = {"memory_mb": 2048, "cpus": 2, "flavor": "mysql", "version": "9.7", "server_binary": str(binary)}
    result = run_module(mysql_tuning, dict(base, overrides={"expire_logs_days": 7}), monkeypatch, capsys)
    assert result["failed"] and result["variable"] == "expire_logs_days"
    assert "expire_logs_days was removed in MySQL 8.2.0" in result["msg"]
    assert "use binlog_expire_logs_seconds instead" in result["msg"]
    # This trimmed --help lists no transaction-isolation: the name the binary is asked about is the new one.
    result = run_module(mysql_tuning, dict(base, overrides={"tx_isolation": "READ-COMMITTED"}), monkeypatch, capsys)
    assert result["failed"] and result["variable"] == "overrides"
    assert result["msg"].startswith("overrides: transaction_isolation not known to %s" % binary), result["msg"]
    result = run_module(mysql_tuning, dict(base, server_binary=str(tmp_path / "absent"),
                                           overrides={"tx_isolation": "READ-COMMITTED"}), monkeypatch, capsys)
    assert result["translated"] == {"tx_isolation": "transaction_isolation"}, result
    assert result["settings"]["transaction_isolation"]["value"] == "READ-COMMITTED"
