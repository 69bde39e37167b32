"""Unit tests for the pure parts of mysql_user, mysql_database and mysql_secure_baseline.

Privilege parsing and normalisation, grant diffs, identifier quoting and validation, statement building,
password hash checks and root's authentication methods; the server rows used here were taken from MySQL 9.7
and MariaDB 11.8.
"""
import pytest

from ansible_collections.dbops.clusters.plugins.module_utils import mysql_privileges as mp
from ansible_collections.dbops.clusters.plugins.modules import mysql_secure_baseline as baseline
from ansible_collections.dbops.clusters.plugins.modules import mysql_user

MYSQL_KNOWN = mp.server_privileges([{"Privilege": name} for name in (
    "Alter", "Alter routine", "Create", "Create routine", "Create role", "Create temporary tables", "Create view",
    "Create user", "Delete", "Drop", "Drop role", "Event", "Execute", "File", "Grant option", "Index", "Insert",
    "Lock tables", "Process", "Proxy", "References", "Reload", "Replication client", "Replication slave",
    "Select", "Show databases", "Show view", "Shutdown", "Super", "Trigger", "Create tablespace", "Update",
    "Usage", "BACKUP_ADMIN", "SYSTEM_VARIABLES_ADMIN", "SHOW_ROUTINE")])
MARIADB_KNOWN = mp.server_privileges([{"Privilege": name} for name in (
    "Alter", "Alter routine", "Create", "Create routine", "Create temporary tables", "Create view", "Create user",
    "Delete", "Delete history", "Drop", "Event", "Execute", "File", "Grant option", "Index", "Insert",
    "Lock tables", "Process", "Proxy", "References", "Reload", "Binlog admin", "Binlog monitor", "Binlog replay",
    "Replication master admin", "Replication slave admin", "Slave monitor", "Replication slave", "Select",
    "Show databases", "Show view", "Shutdown", "Super", "Trigger", "Create tablespace", "Update", "Set user",
    "Federated admin", "Connection admin", "Read_only admin", "Usage", "Show Create Routine")])


# ------------------------------------------------------------------------------------------- identifiers

@pytest.mark.parametrize("name", ["app", "app_1", "my-db", "a$b", "X" * 64])
def test_valid_identifiers_are_backtick_quoted(name):
    assert mp.quote_identifier(name) == "`%s`" % name


@pytest.mark.parametrize("name", ["", "a`b", "d1`; DROP DATABASE mysql; --", "a b", "a.b", "a'b", "a\\b",
                                  "X" * 65, "t%", None])
def test_unsafe_identifiers_are_refused(name):
    with pytest.raises(mp.PrivilegeError):
        mp.quote_identifier(name)


def test_grant_database_names_may_carry_wildcards():
    assert mp.quote_identifier("app\\_%", wildcards=True) == "`app\\_%`"
    with pytest.raises(mp.PrivilegeError):
        mp.quote_identifier("app`%", wildcards=True)


@pytest.mark.parametrize("user, host", [("app", "%"), ("repl", "10.89.%"), ("a.b-c", "db1.example.com"),
                                        ("x", "::1")])
def test_valid_accounts(user, host):
    assert mp.validate_account(user, host) == (user, host)


@pytest.mark.parametrize("user, host", [("", "%"), ("a'b", "%"), ("a", "h'"), ("a", ""), ("a\\", "%"),
                                        (" a", "%"), ("a", "h\n"), ("u" * 81, "%")])
def test_invalid_accounts(user, host):
    with pytest.raises(mp.PrivilegeError):
        mp.validate_account(user, host)


def test_grantee_and_local_hosts():
    assert mp.grantee("app", "%") == "'app'@'%'"
    assert all(mp.is_local_host(h) for h in ("localhost", "LOCALHOST", "127.0.0.1", "::1"))
    assert not any(mp.is_local_host(h) for h in ("%", "10.0.0.1", "db1", "127.0.0.%"))


# ----------------------------------------------------------------------------------------- privileges

@pytest.mark.parametrize("key, expected", [
    ("*.*", "*.*"), ("app.*", "app.*"), ("`app`.*", "app.*"), ("app.t1", "app.t1"), ("`app`.`t1`", "app.t1"),
    ("app\\_%.*", "app\\_%.*"), (" app . * ", "app.*"),
])
def test_priv_keys_are_normalised(key, expected):
    assert mp.parse_priv_key(key) == expected


@pytest.mark.parametrize("key", ["app", "*.t1", "a`b.*", "app.t%", "", "app.t 1"])
def test_bad_priv_keys(key):
    with pytest.raises(mp.PrivilegeError):
        mp.parse_priv_key(key)


def test_key_kinds():
    assert [mp.key_kind(k) for k in ("*.*", "app.*", "app.t1")] == ["global", "database", "table"]


@pytest.mark.parametrize("text, expected", [
    ("SELECT,INSERT", mp.Level(["SELECT", "INSERT"])),
    (" select , insert ", mp.Level(["SELECT", "INSERT"])),
    ("replication   client", mp.Level(["REPLICATION CLIENT"])),
    ("ALL", mp.Level([], all_=True)),
    ("ALL PRIVILEGES,GRANT OPTION", mp.Level([], all_=True, grant=True)),
    ("SELECT,GRANT", mp.Level(["SELECT"], grant=True)),
    ("USAGE", mp.Level([])),
    (["SELECT", "backup_admin"], mp.Level(["SELECT", "BACKUP_ADMIN"])),
])
def test_priv_lists(text, expected):
    assert mp.parse_priv_list(text) == expected


@pytest.mark.parametrize("text", ["SELECT (col1)", "ALL,SELECT", "SELECT;DROP", "SEL'ECT", 5, ["SELECT", 1]])
def test_bad_priv_lists(text):
    with pytest.raises(mp.PrivilegeError):
        mp.parse_priv_list(text)


def test_normalize_refuses_one_level_named_twice():
    assert mp.normalize_privileges({"app.*": "ALL", "*.*": "PROCESS"}) == {
        "app.*": mp.Level([], all_=True), "*.*": mp.Level(["PROCESS"])}
    with pytest.raises(mp.PrivilegeError):
        mp.normalize_privileges({"app.*": "ALL", "`app`.*": "SELECT"})
    assert mp.normalize_privileges(None) == {}


def test_server_privileges_drop_pseudo_privileges():
    assert "USAGE" not in MYSQL_KNOWN and "GRANT OPTION" not in MYSQL_KNOWN and "PROXY" not in MYSQL_KNOWN
    assert "CREATE TEMPORARY TABLES" in MYSQL_KNOWN and "BACKUP_ADMIN" in MYSQL_KNOWN
    assert "SHOW CREATE ROUTINE" in MARIADB_KNOWN


def test_all_expands_per_level_and_server():
    # Measured: MySQL 9.7 grants 18 privileges for ALL on db.* and 12 on db.table; MariaDB 11.8 20 and 13.
    assert len(mp.all_privileges("database", MYSQL_KNOWN)) == 18
    assert len(mp.all_privileges("table", MYSQL_KNOWN)) == 12
    assert len(mp.all_privileges("database", MARIADB_KNOWN)) == 20
    assert len(mp.all_privileges("table", MARIADB_KNOWN)) == 13
    assert mp.all_privileges("global", MYSQL_KNOWN) == MYSQL_KNOWN


def test_resolve_names_aliases_and_errors():
    level = mp.resolve_names(mp.Level(["REPLICATION CLIENT", "PROCESS"]), "*.*", MARIADB_KNOWN, mariadb=True)
    assert level.privs == frozenset(["BINLOG MONITOR", "PROCESS"])
    level = mp.resolve_names(mp.Level(["REPLICATION CLIENT"]), "*.*", MYSQL_KNOWN)
    assert level.privs == frozenset(["REPLICATION CLIENT"])
    with pytest.raises(mp.PrivilegeError, match="unknown privilege"):
        mp.resolve_names(mp.Level(["SELEKT"]), "*.*", MYSQL_KNOWN)
    with pytest.raises(mp.PrivilegeError, match="cannot be granted at database level"):
        mp.resolve_names(mp.Level(["PROCESS"]), "app.*", MYSQL_KNOWN)
    level = mp.resolve_names(mp.Level([], all_=True, grant=True), "app.t1", MYSQL_KNOWN)
    assert level.all_ and level.grant and "SELECT" in level.privs and "EXECUTE" not in level.privs


def rows(names, grantable="NO", **extra):
    return [dict(extra, PRIVILEGE_TYPE=name, IS_GRANTABLE=grantable) for name in names]


def test_current_privileges_from_information_schema():
    current = mp.current_privileges(
        rows(["USAGE"]),
        rows(["SELECT", "INSERT"], "YES", TABLE_SCHEMA="app") + rows(["SELECT"], TABLE_SCHEMA="app\\_%"),
        rows(["UPDATE"], TABLE_SCHEMA="app", TABLE_NAME="t1"))
    assert current == {"app.*": {"SELECT": True, "INSERT": True}, "app\\_%.*": {"SELECT": False},
                       "app.t1": {"UPDATE": False}}


def test_current_privileges_merge_duplicate_rows():
    # MySQL lists a dynamic privilege twice (NO and YES) after REVOKE GRANT OPTION ON *.*.
    current = mp.current_privileges(rows(["SELECT", "BACKUP_ADMIN"]) + rows(["BACKUP_ADMIN"], "YES"), [], [])
    assert current == {"*.*": {"SELECT": False, "BACKUP_ADMIN": True}}


def test_usage_with_grant_option_is_kept():
    assert mp.current_privileges(rows(["USAGE"], "YES"), [], []) == {"*.*": {"USAGE": True}}


def test_describe_collapses_all():
    full = dict((name, False) for name in mp.all_privileges("database", MYSQL_KNOWN))
    assert mp.describe_current({"app.*": full, "*.*": {"PROCESS": True}}, MYSQL_KNOWN) == {
        "app.*": "ALL", "*.*": "PROCESS,GRANT"}
    assert mp.describe_desired({"a.*": mp.Level([], True, True), "b.*": mp.Level(["SELECT"])}) == {
        "a.*": "ALL,GRANT", "b.*": "SELECT"}


def resolved(privileges, known=MYSQL_KNOWN, mariadb=False):
    return dict((key, mp.resolve_names(level, key, known, mariadb))
                for key, level in mp.normalize_privileges(privileges).items())


def test_diff_nothing_to_do():
    desired = resolved({"app.*": "ALL", "*.*": "PROCESS"})
    current = {"app.*": dict((n, False) for n in desired["app.*"].privs), "*.*": {"PROCESS": False}}
    assert mp.diff_privileges(desired, current) == []


def test_diff_grants_all_as_all_privileges():
    assert mp.diff_privileges(resolved({"app.*": "ALL"}), {}) == [("grant", "app.*", "ALL")]


def test_diff_fills_a_partial_all_with_the_missing_names():
    actions = mp.diff_privileges(resolved({"app.t1": "ALL"}), {"app.t1": {"SELECT": False}})
    assert actions[0][0] == "grant" and "SELECT" not in actions[0][2] and "UPDATE" in actions[0][2]


def test_diff_revokes_undeclared_privileges_and_levels():
    current = {"app.*": {"SELECT": False, "DELETE": False}, "old.*": {"SELECT": True}, "*.*": {"PROCESS": False}}
    actions = mp.diff_privileges(resolved({"app.*": "SELECT,INSERT"}), current)
    assert actions == [
        ("revoke", "*.*", ["PROCESS"]),
        ("revoke", "app.*", ["DELETE"]),
        ("revoke", "old.*", ["SELECT"]),
        ("revoke_grant_option", "old.*", []),
        ("grant", "app.*", ["INSERT"]),
    ]


def test_diff_append_only_adds():
    current = {"app.*": {"SELECT": True, "DELETE": False}, "old.*": {"SELECT": False}}
    assert mp.diff_privileges(resolved({"app.*": "INSERT"}), current, append=True) == [("grant", "app.*", ["INSERT"])]


def test_diff_empty_declaration_revokes_everything():
    actions = mp.diff_privileges({}, {"*.*": {"PROCESS": False}})
    assert actions == [("revoke", "*.*", ["PROCESS"])]


def test_diff_adds_grant_option():
    actions = mp.diff_privileges(resolved({"app.*": "SELECT,GRANT"}), {"app.*": {"SELECT": False}})
    assert actions == [("grant_with_option", "app.*", ["SELECT"])]


def test_diff_removes_grant_option_at_database_level():
    actions = mp.diff_privileges(resolved({"app.*": "SELECT"}), {"app.*": {"SELECT": True}})
    assert actions == [("revoke_grant_option", "app.*", [])]


def test_diff_mysql_dynamic_grant_option_is_revoked_first_and_granted_again():
    current = {"*.*": {"SELECT": True, "BACKUP_ADMIN": True}}
    actions = mp.diff_privileges(resolved({"*.*": "SELECT,BACKUP_ADMIN"}), current)
    assert actions == [("revoke", "*.*", ["BACKUP_ADMIN"]), ("revoke_grant_option", "*.*", []),
                       ("grant", "*.*", ["BACKUP_ADMIN"])]


def test_diff_mysql_dynamic_only_grant_option_needs_no_revoke_grant_option():
    current = {"*.*": {"SELECT": False, "BACKUP_ADMIN": True}}
    actions = mp.diff_privileges(resolved({"*.*": "SELECT,BACKUP_ADMIN"}), current)
    assert actions == [("revoke", "*.*", ["BACKUP_ADMIN"]), ("grant", "*.*", ["BACKUP_ADMIN"])]


def test_diff_mariadb_grant_option_covers_all_global_privileges():
    current = {"*.*": {"SELECT": True, "BINLOG MONITOR": True}}
    desired = resolved({"*.*": "SELECT,REPLICATION CLIENT"}, MARIADB_KNOWN, mariadb=True)
    actions = mp.diff_privileges(desired, current, mysql_dynamic_grant_option=False)
    assert actions == [("revoke_grant_option", "*.*", [])]


# ------------------------------------------------------------------------------------------ statements

@pytest.mark.parametrize("action, sql", [
    (("grant", "app.*", "ALL"), "GRANT ALL PRIVILEGES ON `app`.* TO %s@%s"),
    (("grant", "*.*", ["PROCESS", "REPLICATION CLIENT"]), "GRANT PROCESS, REPLICATION CLIENT ON *.* TO %s@%s"),
    (("grant_with_option", "app.t1", ["SELECT"]), "GRANT SELECT ON `app`.`t1` TO %s@%s WITH GRANT OPTION"),
    (("revoke", "app\\_%.*", ["SELECT"]), "REVOKE SELECT ON `app\\_%%`.* FROM %s@%s"),
    (("revoke_grant_option", "*.*", []), "REVOKE GRANT OPTION ON *.* FROM %s@%s"),
])
def test_action_sql(action, sql):
    assert mp.action_sql(action) == sql


def test_action_sql_survives_pymysql_substitution():
    # PyMySQL runs `statement % escaped_args`: the doubled % becomes the wildcard again.
    sql = mp.action_sql(("revoke", "app\\_%.*", ["SELECT"]))
    assert sql % ("'app'", "'%'") == "REVOKE SELECT ON `app\\_%`.* FROM 'app'@'%'"


def test_action_sql_refuses_unknown_action():
    with pytest.raises(mp.PrivilegeError):
        mp.action_sql(("drop", "*.*", []))


@pytest.mark.parametrize("kwargs, sql", [
    ({}, "CREATE USER %s@%s IDENTIFIED BY %s"),
    ({"plugin": "caching_sha2_password", "tls_required": True},
     "CREATE USER %s@%s IDENTIFIED WITH caching_sha2_password BY %s REQUIRE SSL"),
    ({"plugin": "auth_socket", "with_password": False}, "CREATE USER %s@%s IDENTIFIED WITH auth_socket"),
    ({"plugin": "ed25519", "mariadb": True}, "CREATE USER %s@%s IDENTIFIED VIA ed25519 USING PASSWORD(%s)"),
    ({"plugin": "unix_socket", "with_password": False, "mariadb": True},
     "CREATE USER %s@%s IDENTIFIED VIA unix_socket"),
])
def test_create_user_sql_keeps_the_password_a_placeholder(kwargs, sql):
    assert mp.create_user_sql(**kwargs) == sql


def test_plugin_names_are_validated():
    with pytest.raises(mp.PrivilegeError):
        mp.identified_sql("sha2; DROP USER root", True)


@pytest.mark.parametrize("args, sql", [
    (("create", "app", "utf8mb4", None), "CREATE DATABASE `app` CHARACTER SET utf8mb4"),
    (("alter", "app", "utf8mb4", "utf8mb4_bin"), "ALTER DATABASE `app` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"),
    (("drop", "app"), "DROP DATABASE `app`"),
])
def test_database_sql(args, sql):
    assert mp.database_sql(*args) == sql


@pytest.mark.parametrize("args", [("create", "app", "utf8 mb4"), ("alter", "app", "latin1", "x;y"),
                                  ("drop", "a`b"), ("rename", "app")])
def test_database_sql_refuses(args):
    with pytest.raises(mp.PrivilegeError):
        mp.database_sql(*args)


@pytest.mark.parametrize("ssl_type, required, ok", [
    ("", False, True), ("", True, False), ("ANY", True, True), ("ANY", False, False),
    ("X509", True, True), ("SPECIFIED", False, False), (None, False, True), ("NONE", True, False),
])
def test_tls_satisfied(ssl_type, required, ok):
    assert mp.tls_satisfied(ssl_type, required) is ok


# ------------------------------------------------------------------------------- which account a login hits

@pytest.mark.parametrize("pattern, client, ok", [
    ("%", "localhost", True), ("localhost", "LOCALHOST", True), ("local%", "localhost", True),
    ("l_calhost", "localhost", True), ("10.0.0.%", "localhost", False), ("127.0.0.1", "localhost", False),
    ("a.b", "axb", False),
])
def test_host_matches(pattern, client, ok):
    assert mp.host_matches(pattern, client) is ok


@pytest.mark.parametrize("accounts, user, host, ok", [
    ([("app", "localhost"), ("", "localhost")], "app", "localhost", True),
    ([("app", "%")], "app", "%", True),
    ([("app", "%"), ("", "localhost")], "app", "%", False),      # the anonymous account is more specific
    ([("app", "%"), ("app", "localhost")], "app", "%", False),
    ([("app", "%"), ("other", "localhost")], "app", "%", True),
    ([("repl", "10.0.0.%")], "repl", "10.0.0.%", False),          # a socket login never reaches it
])
def test_socket_login_target(accounts, user, host, ok):
    assert mp.socket_login_target(accounts, user, host) is ok


# ------------------------------------------------------------------------------------------ password hashes

# caching_sha2_password string MySQL 9.7 stored for the password 'x1' ($A$, 0x00A * 1000 rounds, 20-byte salt).
MYSQL97_X1 = bytes.fromhex(
    "24412430304124607A1A7B146A7367367B43637D25381F04470739484F42677156686E534147616D75476355776944576E664E"
    "62666F4A386D724B6E427734456F69624A3531")


def test_sha256_crypt_matches_glibc():
    # glibc crypt('Hello world!', '$5$saltstring') and '$5$rounds=10000$saltstringsaltstring'.
    assert mp.sha256_crypt("Hello world!", "saltstring") == "5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5"
    assert mp.sha256_crypt("Hello world!", "saltstringsaltst", 10000) == "3xv.VbSHBb41AL9AvLeujZkZRBAwqFMz2.opqey6IcA"


def test_caching_sha2_password_checked_against_a_real_mysql_hash():
    assert mp.password_matches("caching_sha2_password", MYSQL97_X1, "x1") is True
    assert mp.password_matches("caching_sha2_password", MYSQL97_X1, "x2") is False
    assert mp.password_matches("caching_sha2_password", b"$A$005$short", "x1") is None


def test_native_password_hash():
    # MariaDB 11.8 stored this for 'x1'.
    assert mp.native_password_hash("x1") == "*6891F9D51EB5A38D1BB310DDBC6379A189A4F575"
    assert mp.password_matches("mysql_native_password", b"*6891F9D51EB5A38D1BB310DDBC6379A189A4F575", "x1") is True
    assert mp.password_matches("mysql_native_password", b"*6891F9D51EB5A38D1BB310DDBC6379A189A4F575", "x") is False
    assert mp.password_matches("mysql_native_password", b"invalid", "x1") is None


def test_other_plugins_cannot_be_checked_locally():
    assert mp.password_matches("ed25519", b"abc", "x") is None
    assert mp.password_matches("caching_sha2_password", None, "x") is None


# ------------------------------------------------------------------------------------ root's authentication

@pytest.mark.parametrize("text, methods, socket_plugin, only", [
    ("CREATE USER `root`@`localhost` IDENTIFIED WITH 'auth_socket' REQUIRE NONE PASSWORD EXPIRE DEFAULT",
     [("auth_socket", None)], "auth_socket", True),
    ("CREATE USER `root`@`localhost` IDENTIFIED WITH 'caching_sha2_password' AS '$A$005$xyz' REQUIRE NONE",
     [("caching_sha2_password", "$A$005$xyz")], "auth_socket", False),
    ("CREATE USER `root`@`localhost` IDENTIFIED VIA mysql_native_password USING 'invalid' OR unix_socket",
     [("mysql_native_password", "invalid"), ("unix_socket", None)], "unix_socket", True),
    ("CREATE USER `root`@`localhost` IDENTIFIED VIA mysql_native_password USING '*6891F9D51EB5A38D1BB310DDBC6379A189A4F575'"
     " OR unix_socket", [("mysql_native_password", "*6891F9D51EB5A38D1BB310DDBC6379A189A4F575"), ("unix_socket", None)],
     "unix_socket", False),
    ("CREATE USER `root`@`localhost` IDENTIFIED VIA unix_socket", [("unix_socket", None)], "unix_socket", True),
    ("CREATE USER `root`@`localhost` IDENTIFIED BY PASSWORD '*6891F9D51EB5A38D1BB310DDBC6379A189A4F575'",
     [("mysql_native_password", "*6891F9D51EB5A38D1BB310DDBC6379A189A4F575")], "unix_socket", False),
    ("CREATE USER `root`@`localhost`", [("mysql_native_password", "")], "unix_socket", False),
])
def test_auth_methods_and_socket_only(text, methods, socket_plugin, only):
    assert mp.auth_methods(text) == methods
    assert mp.socket_only(methods, socket_plugin) is only


# ----------------------------------------------------------------------------------- module logic, no server

class FakeSession(object):
    """Answers fetch/value from a table of canned results, keyed by a fragment of the query."""

    def __init__(self, answers):
        self.answers = answers
        self.queries = []

    def fetch(self, query, args=None):
        for fragment, result in self.answers.items():
            if fragment in query:
                return result
        raise AssertionError("unexpected query %s" % query)

    def value(self, query, args=None):
        result = self.fetch(query, args)
        return list(result[0].values())[0] if result else None


def test_root_socket_status_mariadb():
    shown = "CREATE USER `root`@`localhost` IDENTIFIED VIA mysql_native_password USING 'invalid' OR unix_socket"
    session = FakeSession({"COUNT(*)": [{"n": 1}], "SHOW CREATE USER": [{"CREATE USER for root@localhost": shown}]})
    status = baseline.root_socket_status(session, mariadb=True)
    assert status["socket_only"] and status["methods"] == ["mysql_native_password", "unix_socket"]


def test_root_socket_status_mysql_password_root():
    shown = "CREATE USER `root`@`localhost` IDENTIFIED WITH 'caching_sha2_password' AS 'abc'"
    session = FakeSession({"COUNT(*)": [{"n": 1}], "SHOW CREATE USER": [{"x": shown}]})
    status = baseline.root_socket_status(session, mariadb=False)
    assert not status["socket_only"] and "IDENTIFIED WITH auth_socket" in status["message"]


def test_root_socket_status_without_root():
    status = baseline.root_socket_status(FakeSession({"COUNT(*)": [{"n": 0}]}), mariadb=False)
    assert not status["socket_only"] and "does not exist" in status["message"]


def test_test_grant_reasons():
    accounts = set([("keep", "%")])
    assert "left without its account" in baseline.test_grant_reason({"User": "", "Host": "%", "Db": "test"}, accounts)
    reason = baseline.test_grant_reason({"User": "keep", "Host": "%", "Db": "test\\_%"}, accounts)
    assert "starts with test_" in reason and "left without" not in reason


PARAMS = {"password": "pw", "login_port": 3306}
ACCOUNT = {"plugin": "caching_sha2_password", "ssl_type": "", "auth": MYSQL97_X1.hex()}


def test_check_password_trusts_a_matching_login(monkeypatch):
    monkeypatch.setattr(mysql_user, "test_login", lambda *a: ("matched", "the socket", "app@%"))
    matches, how = mysql_user.check_password(FakeSession({}), PARAMS, "app", "%", ACCOUNT)
    assert matches is True and "succeeded" in how


def test_check_password_refusal_is_conclusive_only_for_the_sole_candidate(monkeypatch):
    monkeypatch.setattr(mysql_user, "test_login", lambda *a: ("refused", "the socket", "denied"))
    sole = FakeSession({"SELECT User, Host": [{"User": "app", "Host": "%"}]})
    assert mysql_user.check_password(sole, PARAMS, "app", "%", ACCOUNT)[0] is False
    # with an anonymous localhost account the refusal proves nothing: the stored hash decides ('x1' here)
    shadowed = FakeSession({"SELECT User, Host": [{"User": "app", "Host": "%"}, {"User": "", "Host": "localhost"}]})
    assert mysql_user.check_password(shadowed, dict(PARAMS, password="x1"), "app", "%", ACCOUNT)[0] is True
    assert mysql_user.check_password(shadowed, PARAMS, "app", "%", ACCOUNT)[0] is False


def test_check_password_falls_back_to_the_hash_over_tcp(monkeypatch):
    monkeypatch.setattr(mysql_user, "test_login", lambda *a: ("refused", "TCP with TLS to 127.0.0.1:3306", "x"))
    matches, how = mysql_user.check_password(FakeSession({}), dict(PARAMS, password="x1"), "repl", "10.%",
                                             dict(ACCOUNT, ssl_type="ANY"))
    assert matches is True and "hash matches" in how


def test_check_password_cannot_tell_for_other_plugins(monkeypatch):
    monkeypatch.setattr(mysql_user, "test_login", lambda *a: ("error", "the socket", "plugin not loaded"))
    matches, how = mysql_user.check_password(FakeSession({}), PARAMS, "app", "%",
                                             {"plugin": "ed25519", "ssl_type": "", "auth": "6162"})
    assert matches is None and "cannot be checked locally" in how


def test_check_password_skips_the_login_for_certificate_accounts(monkeypatch):
    def fail(*args):
        raise AssertionError("no test login expected")
    monkeypatch.setattr(mysql_user, "test_login", fail)
    matches, how = mysql_user.check_password(FakeSession({}), dict(PARAMS, password="x1"), "app", "%",
                                             dict(ACCOUNT, ssl_type="X509"))
    assert matches is True and "client certificate" in how


def test_no_test_login_where_a_local_login_cannot_reach_the_account(monkeypatch):
    def refuse_connect(**kwargs):
        raise AssertionError("no connection expected")
    monkeypatch.setattr(mysql_user, "connection_kwargs", lambda params: {"unix_socket": "/run/mysqld/mysqld.sock"})
    monkeypatch.setattr(mysql_user.pymysql, "connect", refuse_connect)
    outcome, where, detail = mysql_user.test_login({}, "repl", "10.0.0.%", "pw", False)
    assert outcome is None and "cannot reach repl@10.0.0.%" in detail


class AccountSession(FakeSession):
    """A server with one account for mysql_user's main(): answers its reads, records its statements."""

    def __init__(self, answers, check_mode=False):
        super(AccountSession, self).__init__(answers)
        self.check_mode = check_mode
        self.executed = []

    def execute(self, query, args=None):
        self.queries.append(query)
        self.executed.append((query, args))

    def close(self):
        pass


def run_user_module(monkeypatch, capsys, answers, login_outcome, **params):
    import json
    from ansible.module_utils.testing import patch_module_args
    session = AccountSession(answers)
    monkeypatch.setattr(mysql_user, "connect", lambda module_params: object())
    monkeypatch.setattr(mysql_user, "Session", lambda connection, check_mode=False: session)
    monkeypatch.setattr(mysql_user, "test_login", lambda *a: login_outcome)
    with patch_module_args(dict(params, name="gr_recovery", host="%")):
        with pytest.raises(SystemExit):
            mysql_user.main()
    return json.loads(capsys.readouterr().out), session


def answers_for(version, holds_old):
    return {"SELECT VERSION()": [{"v": version}],
            "authentication_string": [{"plugin": "caching_sha2_password", "ssl_type": "", "auth": ""}],
            "SHOW PRIVILEGES": [], "SELECT User, Host FROM mysql.user": [{"User": "gr_recovery", "Host": "%"}],
            "additional_password": [{"held": 1 if holds_old else 0}],
            "USER_PRIVILEGES": [], "SCHEMA_PRIVILEGES": [], "TABLE_PRIVILEGES": []}


def test_a_rotated_password_keeps_the_current_one_as_secondary(monkeypatch, capsys):
    result, session = run_user_module(monkeypatch, capsys, answers_for("9.7.4", False),
                                      ("refused", "the socket", "denied"), password="new", update_password="always",
                                      retain_current_password=True)
    assert result["changes"]["password"] and result["changed"], result
    rotate = "ALTER USER %s@%s IDENTIFIED WITH caching_sha2_password BY %s RETAIN CURRENT PASSWORD"
    assert session.executed == [(rotate, ("gr_recovery", "%", "new"))]


def test_the_old_password_is_discarded_only_when_one_is_held(monkeypatch, capsys):
    result, session = run_user_module(monkeypatch, capsys, answers_for("9.7.4", True), None,
                                      discard_old_password=True)
    assert result["changes"]["old_password_discarded"] and session.executed == [
        ("ALTER USER %s@%s DISCARD OLD PASSWORD", ("gr_recovery", "%"))]
    result, session = run_user_module(monkeypatch, capsys, answers_for("9.7.4", False), None,
                                      discard_old_password=True)
    assert not result["changed"] and session.executed == []


def mariadb_answers(methods):
    return dict(answers_for("11.8.9-MariaDB-0+deb13u1", False),
                authentication_string=[{"plugin": "mysql_native_password", "ssl_type": "",
                                        "auth": b"*F80A16243524922D382A633DDBD9671A2AEEACB9".hex()}],
                auth_or=[{"methods": methods}])


def test_on_mariadb_the_current_password_is_kept_as_a_second_method(monkeypatch, capsys):
    result, session = run_user_module(monkeypatch, capsys, mariadb_answers(None), ("refused", "the socket", "denied"),
                                      password="new", update_password="always", retain_current_password=True)
    assert result["changes"]["password"] and result["changed"], result
    rotate = ("ALTER USER %s@%s IDENTIFIED VIA mysql_native_password USING PASSWORD(%s) "
              "OR mysql_native_password USING %s")
    assert session.executed == [(rotate, ("gr_recovery", "%", "new", "*F80A16243524922D382A633DDBD9671A2AEEACB9"))]


def test_on_mariadb_discarding_keeps_the_first_method_alone(monkeypatch, capsys):
    result, session = run_user_module(monkeypatch, capsys, mariadb_answers(2), None, discard_old_password=True)
    assert result["changes"]["old_password_discarded"] and session.executed == [
        ("ALTER USER %s@%s IDENTIFIED VIA mysql_native_password USING %s",
         ("gr_recovery", "%", "*F80A16243524922D382A633DDBD9671A2AEEACB9"))]
    result, session = run_user_module(monkeypatch, capsys, mariadb_answers(None), None, discard_old_password=True)
    assert not result["changed"] and session.executed == []
