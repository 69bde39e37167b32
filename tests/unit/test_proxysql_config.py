"""Unit tests for module_utils/proxysql_config.py: the planner behind the proxysql_config module.

Current rows are shaped as ProxySQL 2.7's admin interface returns them: every value as text.
"""
import hashlib

import pytest

from ansible_collections.dbops.clusters.plugins.module_utils import proxysql_config as planner


def native_hash(password):
    return "*" + hashlib.sha1(hashlib.sha1(password.encode()).digest()).hexdigest().upper()


def server(hostgroup, host, weight, **extra):
    row = {"hostgroup_id": str(hostgroup), "hostname": host, "port": "3306", "gtid_port": "0",
           "status": "ONLINE", "weight": str(weight), "compression": "0", "max_connections": "1000",
           "max_replication_lag": "0", "use_ssl": "0", "max_latency_ms": "0", "comment": ""}
    row.update(extra)
    return row


def user(name, password, hostgroup=10):
    return {"username": name, "password": password, "active": "1", "use_ssl": "0",
            "default_hostgroup": str(hostgroup), "default_schema": None, "schema_locked": "0",
            "transaction_persistent": "1", "fast_forward": "0", "backend": "1", "frontend": "1",
            "max_connections": "10000", "attributes": "", "comment": ""}


def test_matching_rows_plan_nothing_and_publish_nothing():
    current = {"mysql_servers": [server(10, "10.0.0.1", 1000000000)]}
    declared = {"mysql_servers": [{"hostgroup_id": 10, "hostname": "10.0.0.1", "weight": 1000000000}]}
    result = planner.plan(declared, current)
    assert result["statements"] == []
    assert result["publish"] == []


def test_changed_weight_is_one_update_and_only_mysql_servers_is_published():
    current = {"mysql_servers": [server(10, "10.0.0.1", 1000)],
               "mysql_users": [user("app", "secret")]}
    declared = {"mysql_servers": [{"hostgroup_id": 10, "hostname": "10.0.0.1", "weight": 1000000000}],
                "mysql_users": [{"username": "app", "password": "secret"}]}
    result = planner.plan(declared, current)
    assert result["statements"] == [
        ("UPDATE mysql_servers SET weight=%s WHERE hostgroup_id=%s AND hostname=%s AND port=%s",
         ["1000000000", "10", "10.0.0.1", "3306"])]
    assert result["publish"] == ["LOAD MYSQL SERVERS TO RUNTIME", "SAVE MYSQL SERVERS TO DISK"]


def test_new_row_is_inserted_with_the_default_port():
    result = planner.plan({"mysql_servers": [{"hostgroup_id": 11, "hostname": "10.0.0.2", "weight": 5}]},
                          {"mysql_servers": []})
    sql, args = result["statements"][0]
    assert sql == "INSERT INTO mysql_servers (hostgroup_id, hostname, port, weight) VALUES (%s, %s, %s, %s)"
    assert args == ["11", "10.0.0.2", "3306", "5"]


def test_hostgroup_tables_publish_mysql_servers():
    result = planner.plan({"mysql_galera_hostgroups": [{"writer_hostgroup": 10, "backup_writer_hostgroup": 12,
                                                        "reader_hostgroup": 20, "offline_hostgroup": 9999,
                                                        "max_writers": 1, "writer_is_also_reader": 0}]},
                          {"mysql_galera_hostgroups": []})
    assert result["publish"] == ["LOAD MYSQL SERVERS TO RUNTIME", "SAVE MYSQL SERVERS TO DISK"]


@pytest.mark.parametrize("stored", ["secret", native_hash("secret")])
def test_clear_password_equals_its_stored_clear_text_or_native_hash(stored):
    result = planner.plan({"mysql_users": [{"username": "app", "password": "secret"}]},
                          {"mysql_users": [user("app", stored)]})
    assert result["statements"] == []


def test_caching_sha2_hash_is_recognised():
    # '$A$005$' + 20-byte salt + SHA-256 crypt digest, computed by the shared helper used for MySQL accounts.
    from ansible_collections.dbops.clusters.plugins.module_utils.mysql_privileges import sha256_crypt
    salt = "abcdefghijklmnopqrst"
    stored = "$A$005$" + salt + sha256_crypt("secret", salt, 5000)
    assert planner.hashed_password_matches(stored, "secret")
    assert not planner.hashed_password_matches(stored, "other")


def test_changed_password_against_a_hash_is_an_update_with_the_secret_redacted_in_the_diff():
    result = planner.plan({"mysql_users": [{"username": "app", "password": "new-secret"}]},
                          {"mysql_users": [user("app", native_hash("secret"))]})
    (sql, args), = result["statements"]
    assert sql == "UPDATE mysql_users SET password=%s WHERE username=%s AND backend=%s"
    assert args == ["new-secret", "app", "1"]
    assert result["publish"] == ["LOAD MYSQL USERS TO RUNTIME", "SAVE MYSQL USERS TO DISK"]
    assert result["diff"]["after"]["mysql_users"] == [{"username": "app", "backend": "1", "password": "********"}]
    assert "new-secret" not in repr(result["diff"]) and "secret" not in repr(result["diff"]["before"])


def test_declared_hash_is_compared_as_text():
    stored = native_hash("secret")
    assert planner.plan({"mysql_users": [{"username": "app", "password": stored}]},
                        {"mysql_users": [user("app", stored)]})["statements"] == []
    assert planner.plan({"mysql_users": [{"username": "app", "password": native_hash("x")}]},
                        {"mysql_users": [user("app", stored)]})["statements"]


def test_prune_deletes_only_undeclared_rows_of_pruned_tables():
    current = {"mysql_query_rules": [{"rule_id": "1", "match_digest": "^SELECT", "apply": "1"},
                                     {"rule_id": "2", "match_digest": "x", "apply": "1"}],
               "mysql_servers": [server(10, "10.0.0.1", 1), server(10, "10.0.0.9", 1)]}
    declared = {"mysql_query_rules": [{"rule_id": 1, "match_digest": "^SELECT"}],
                "mysql_servers": [{"hostgroup_id": 10, "hostname": "10.0.0.1"}]}
    result = planner.plan(declared, current, prune_tables=["mysql_query_rules"])
    assert result["statements"] == [("DELETE FROM mysql_query_rules WHERE rule_id=%s", ["2"])]
    assert result["publish"] == ["LOAD MYSQL QUERY RULES TO RUNTIME", "SAVE MYSQL QUERY RULES TO DISK"]
    assert planner.plan(declared, current)["statements"] == []


def test_prune_refuses_global_variables_and_undeclared_tables():
    with pytest.raises(planner.PlanError, match="cannot be pruned"):
        planner.plan({"global_variables": []}, {"global_variables": []}, prune_tables=["global_variables"])
    with pytest.raises(planner.PlanError, match="not declared"):
        planner.plan({}, {}, prune_tables=["mysql_servers"])


def test_global_variables_publish_by_prefix_and_refuse_unknown_names():
    current = {"global_variables": [{"variable_name": "mysql-monitor_username", "variable_value": "monitor"},
                                    {"variable_name": "admin-refresh_interval", "variable_value": "2000"}]}
    declared = {"global_variables": [{"variable_name": "mysql-monitor_username", "variable_value": "mon"},
                                     {"variable_name": "admin-refresh_interval", "variable_value": 2000}]}
    result = planner.plan(declared, current, save=False)
    assert result["publish"] == ["LOAD MYSQL VARIABLES TO RUNTIME"]
    with pytest.raises(planner.PlanError, match="does not exist"):
        planner.plan({"global_variables": [{"variable_name": "mysql-nope", "variable_value": "1"}]}, current)


def test_secret_variables_are_redacted_in_the_diff():
    current = {"global_variables": [{"variable_name": "mysql-monitor_password", "variable_value": "old"}]}
    result = planner.plan({"global_variables": [{"variable_name": "mysql-monitor_password",
                                                 "variable_value": "new"}]}, current)
    assert "new" not in repr(result["diff"]) and "old" not in repr(result["diff"])


def test_missing_key_duplicate_rows_and_unknown_columns_are_refused():
    with pytest.raises(planner.PlanError, match="has no hostname"):
        planner.plan({"mysql_servers": [{"hostgroup_id": 1}]}, {"mysql_servers": []})
    with pytest.raises(planner.PlanError, match="declared twice"):
        planner.plan({"mysql_query_rules": [{"rule_id": 1}, {"rule_id": "1"}]}, {"mysql_query_rules": []})
    with pytest.raises(planner.PlanError, match="no column 'wieght'"):
        planner.plan({"mysql_servers": [{"hostgroup_id": 10, "hostname": "10.0.0.1", "wieght": 1}]},
                     {"mysql_servers": [server(10, "10.0.0.1", 1)]})


def test_booleans_and_nulls_compare_as_proxysql_prints_them():
    current = {"mysql_query_rules": [{"rule_id": "1", "active": "1", "username": None}]}
    assert planner.plan({"mysql_query_rules": [{"rule_id": 1, "active": True, "username": None}]},
                        current)["statements"] == []


def test_memory_left_unpublished_by_an_earlier_run_is_published():
    # A run that failed after its INSERTs left the rules in memory only: declared rows match memory, but
    # memory differs from disk, so the rules are loaded and saved now.
    rule = {"rule_id": "1000", "match_pattern": "\\bsbtest1\\b", "apply": "1"}
    declared = {"mysql_query_rules": [{"rule_id": 1000, "match_pattern": "\\bsbtest1\\b", "apply": 1}]}
    result = planner.plan(declared, {"mysql_query_rules": [rule]}, saved_tables={"mysql_query_rules": []})
    assert result["statements"] == []
    assert result["unpublished"] == ["MYSQL QUERY RULES"]
    assert result["publish"] == ["LOAD MYSQL QUERY RULES TO RUNTIME", "SAVE MYSQL QUERY RULES TO DISK"]
    same = planner.plan(declared, {"mysql_query_rules": [rule]}, saved_tables={"mysql_query_rules": [dict(rule)]})
    assert same["publish"] == []


def test_unpublished_global_variables_are_judged_on_declared_names_only():
    memory = [{"variable_name": "mysql-monitor_username", "variable_value": "mon"},
              {"variable_name": "mysql-threads", "variable_value": "4"}]
    disk = [{"variable_name": "mysql-monitor_username", "variable_value": "mon"},
            {"variable_name": "mysql-threads", "variable_value": "2"}]
    declared = {"global_variables": [{"variable_name": "mysql-monitor_username", "variable_value": "mon"}]}
    assert planner.plan(declared, {"global_variables": memory}, saved_tables={"global_variables": disk})["publish"] == []


class FakeProxySQL:
    """pymysql.connect stand-in: an admin interface on one address with one password, refusing other passwords
    as ProxySQL does (1045) and other addresses as a closed port does (2003). `client_port` answers like
    ProxySQL's client interface, which refuses the admin user (1045). It starts listening after `starts_after`
    connection attempts (a ProxySQL still starting)."""

    def __init__(self, pymysql, accepted, port=6032, client_port=6033, starts_after=0):
        self.pymysql, self.accepted, self.port, self.client_port = pymysql, accepted, port, client_port
        self.starts_after, self.tried = starts_after, []

    def __call__(self, **kwargs):
        self.tried.append((kwargs["port"], kwargs["password"]) if kwargs["port"] != 6032 or self.port != 6032
                          else kwargs["password"])
        if kwargs["port"] == self.client_port:
            raise self.pymysql.err.OperationalError(1045, "ProxySQL Error: Access denied for user 'dbops_admin'")
        if kwargs["port"] != self.port or len(self.tried) <= self.starts_after:
            raise self.pymysql.err.OperationalError(2003, "Can't connect to MySQL server on '127.0.0.1'")
        if kwargs["password"] != self.accepted:
            raise self.pymysql.err.OperationalError(1045, "ProxySQL Error: Access denied for user 'dbops_admin'")
        return "connection"


@pytest.fixture
def admin_login(tmp_path, monkeypatch):
    """login(accepted, file_password, fallback, ...) -> (result or the error, logins tried in order)."""
    pymysql = pytest.importorskip("pymysql")
    from ansible_collections.dbops.clusters.plugins.module_utils import proxysql_admin as module
    from ansible_collections.dbops.clusters.plugins.module_utils.mysql_connection import ConnectionError_

    def login(accepted, file_password, fallback=None, file_port=6032, listening=6032, fallback_port=None,
              starts_after=0, wait_timeout=0):
        option_file = tmp_path / "admin.cnf"
        option_file.write_text("[client]\nuser=dbops_admin\npassword=%s\nhost=127.0.0.1\nport=%d\n"
                               % (file_password, file_port))
        option_file.chmod(0o600)
        fake = FakeProxySQL(pymysql, accepted, port=listening, starts_after=starts_after)
        monkeypatch.setattr(module.pymysql, "connect", fake)
        monkeypatch.setattr(module.time, "sleep", lambda seconds: None)
        params = {"login_host": "127.0.0.1", "login_port": 6032, "connect_timeout": 1,
                  "login_config_file": str(option_file), "login_fallback_password": fallback,
                  "login_fallback_host": "127.0.0.1" if fallback_port else None,
                  "login_fallback_port": fallback_port, "wait_timeout": wait_timeout}
        try:
            return module.admin_connection(params), fake.tried
        except ConnectionError_ as err:
            return err, fake.tried
    return login


def test_the_credentials_file_is_tried_first_and_the_fallback_is_not_needed(admin_login):
    assert admin_login("old-secret", "old-secret", fallback="new-secret") == (("connection", "given"), ["old-secret"])


def test_a_refused_file_password_falls_back_to_the_password_a_stopped_run_already_set(admin_login):
    # the run changed admin-admin_credentials, then stopped before rewriting the file
    assert admin_login("new-secret", "old-secret", fallback="new-secret") == (
        ("connection", "fallback password"), ["old-secret", "new-secret"])


def test_without_a_fallback_or_with_a_wrong_one_the_first_refusal_is_reported(admin_login):
    for fallback in (None, "other-secret"):
        error, tried = admin_login("new-secret", "old-secret", fallback=fallback)
        assert "Access denied" in str(error) and "dbops_admin" in str(error), error
        assert tried == ["old-secret"] + ([fallback] if fallback else [])


def test_a_file_left_with_the_client_port_falls_back_to_the_inventorys_admin_port(admin_login):
    # An earlier run moved the admin interface onto the client port and rewrote the file with it; the
    # correct inventory names 6032 again, where ProxySQL's admin listens: the file's port is not the only way in.
    result, tried = admin_login("secret-1", "secret-1", fallback="secret-1", file_port=6033, fallback_port=6032)
    assert result == ("connection", "fallback address")
    assert tried == [(6033, "secret-1"), "secret-1"]


def test_an_admin_interface_moved_to_the_inventorys_port_is_found_with_the_new_password(admin_login):
    # A run set the new port and password, then stopped before rewriting the file (old port, old password).
    result, tried = admin_login("new-secret", "old-secret", fallback="new-secret", file_port=6032, listening=6040,
                                fallback_port=6040)
    assert result == ("connection", "fallback address and password")
    assert tried[-1] == (6040, "new-secret")


def test_the_module_waits_for_an_admin_interface_that_is_still_starting(admin_login):
    result, tried = admin_login("secret-1", "secret-1", fallback="secret-1", starts_after=3, wait_timeout=30)
    assert result == ("connection", "given") and len(tried) == 4
    error, tried = admin_login("secret-1", "secret-1", fallback="secret-1", starts_after=3, wait_timeout=0)
    assert "Can't connect" in str(error) and len(tried) == 1


def test_login_attempts_try_the_file_then_the_inventorys_password_then_its_address():
    given = {"user": "a", "password": "old", "host": "127.0.0.1", "port": 6033}
    attempts = planner.login_attempts(given, {"password": "new", "host": "127.0.0.1", "port": 6032})
    assert [(label, kw["port"], kw["password"]) for label, kw in attempts] == [
        ("given", 6033, "old"), ("fallback password", 6033, "new"), ("fallback address", 6032, "old"),
        ("fallback address and password", 6032, "new")]
    same = planner.login_attempts(given, {"password": "old", "host": None, "port": None})
    assert [label for label, dummy in same] == ["given"]


def test_nulls_in_memory_and_disk_rows_are_compared_without_a_type_error():
    # After a failed apply, memory holds rows whose NULL columns sit beside text in another row (comment NULL
    # vs 'reads'); sorting them to compare with disk raised TypeError (NULL vs text), so no run converged.
    rules = [{"rule_id": "100", "match_digest": "^SELECT", "comment": None},
             {"rule_id": "110", "match_digest": "^SELECT", "comment": "reads"}]
    declared = {"mysql_query_rules": [{"rule_id": 100, "match_digest": "^SELECT"},
                                      {"rule_id": 110, "match_digest": "^SELECT"}]}
    disk = [dict(rules[1]), {"rule_id": "100", "match_digest": "^SELECT", "comment": ""}]
    result = planner.plan(declared, {"mysql_query_rules": rules}, saved_tables={"mysql_query_rules": disk})
    assert result["statements"] == [] and result["unpublished"] == ["MYSQL QUERY RULES"]
    same = planner.plan(declared, {"mysql_query_rules": rules},
                        saved_tables={"mysql_query_rules": [dict(rules[1]), dict(rules[0])]})
    assert same["publish"] == []


def test_memory_and_disk_tables_with_different_columns_publish_instead_of_failing():
    # A disk table of an older schema (no 'attributes' column) than memory: the rows differ, so publish.
    memory = [{"username": "app", "backend": "1", "password": "x", "attributes": ""}]
    disk = [{"username": "app", "backend": "1", "password": "x"}]
    declared = {"mysql_users": [{"username": "app", "password": "x"}]}
    result = planner.plan(declared, {"mysql_users": memory}, saved_tables={"mysql_users": disk})
    assert result["publish"] == ["LOAD MYSQL USERS TO RUNTIME", "SAVE MYSQL USERS TO DISK"]
