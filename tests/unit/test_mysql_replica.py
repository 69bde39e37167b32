"""mysql_replica: verified TLS to the source, and SQL errors turned into clear failures."""
import json

import pytest

from ansible.module_utils.testing import patch_module_args
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_flavors import replication_terms
from ansible_collections.dbops.clusters.plugins.modules import mysql_replica

PARAMS = {"source_host": "10.0.0.1", "source_port": 3306, "source_user": "repl", "source_password": "p'w",
          "connect_retry": 10, "ssl": True, "ssl_ca": "/etc/mysql/tls/ca.pem", "ssl_verify_server_cert": True,
          "get_source_public_key": True}


@pytest.mark.parametrize("flavor, version, words", [
    ("mysql", "9.7.4", "SOURCE_SSL_VERIFY_SERVER_CERT = 1"),
    ("mysql", "8.0.20", "MASTER_SSL_VERIFY_SERVER_CERT = 1"),
    ("mariadb", "11.8.2-MariaDB", "MASTER_SSL_VERIFY_SERVER_CERT = 1"),
])
def test_tls_asks_the_replica_to_verify_the_source_identity(flavor, version, words):
    statement, args = mysql_replica.change_statement(replication_terms(flavor, version), PARAMS, flavor == "mariadb")
    assert words in statement
    assert "p'w" in args and "p'w" not in statement


def test_no_verification_without_tls_or_when_turned_off():
    terms = replication_terms("mysql", "9.7.4")
    plain = dict(PARAMS, ssl=False, ssl_ca=None)
    assert "VERIFY" not in mysql_replica.change_statement(terms, plain, False)[0]
    off = dict(PARAMS, ssl_verify_server_cert=False)
    assert "VERIFY" not in mysql_replica.change_statement(terms, off, False)[0]


def test_a_replica_that_does_not_verify_is_reconfigured():
    status = {"Source_Host": "10.0.0.1", "Source_Port": 3306, "Source_User": "repl", "Connect_Retry": 10,
              "Auto_Position": 1, "Source_SSL_Allowed": "Yes", "Source_SSL_CA_File": "/etc/mysql/tls/ca.pem",
              "Source_SSL_Verify_Server_Cert": "No"}
    assert mysql_replica.configured_differs(status, PARAMS, False) == ["ssl_verify_server_cert is No, wanted Yes"]
    status["Source_SSL_Verify_Server_Cert"] = "Yes"
    assert mysql_replica.configured_differs(status, PARAMS, False) == []


class RefusingSession:
    """A session whose server refuses CHANGE REPLICATION SOURCE (as MySQL does while the threads run)."""

    def __init__(self):
        self.queries = []
        self.check_mode = False

    def value(self, query, args=None):
        return "9.7.4"

    def fetch(self, query, args=None):
        return []

    def execute(self, query, args=None):
        self.queries.append(query)
        if query.startswith("CHANGE"):
            raise mysql_replica.pymysql.err.OperationalError(3021, "This operation cannot be performed with a "
                                                                   "running replica io thread")
        return 0

    def close(self):
        pass


def test_sql_errors_fail_with_the_statement_and_the_error_name(monkeypatch, capsys):
    monkeypatch.setattr(mysql_replica, "connect", lambda params: object())
    monkeypatch.setattr(mysql_replica, "Session", lambda connection, check_mode=False: RefusingSession())
    args = {"source_host": "10.0.0.1", "source_user": "repl", "source_password": "secret-pw"}
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            mysql_replica.main()
    result = json.loads(capsys.readouterr().out)
    assert result["failed"]
    assert result["msg"].startswith("CHANGE REPLICATION SOURCE TO SOURCE_HOST = %s")
    assert "ER_REPLICA_THREAD_RUNNING (3021)" in result["msg"]
    assert result["error_code"] == 3021
    assert "secret-pw" not in json.dumps(result)


class RotationSession:
    """A replica configured as requested whose channel keeps `stored` (user, password), or a MariaDB without the
    metadata table (stored None)."""

    def __init__(self, stored, version="9.7.4"):
        self.stored, self.version, self.queries, self.check_mode = stored, version, [], False

    def value(self, query, args=None):
        return self.version

    def fetch(self, query, args=None):
        if "slave_master_info" in query:
            if self.stored is None:
                raise mysql_replica.pymysql.err.ProgrammingError(1146, "Table 'mysql.slave_master_info' doesn't exist")
            assert args == [""]
            return [{"user": self.stored[0], "password": self.stored[1]}]
        return [{"Source_Host": "10.0.0.1", "Source_Port": 3306, "Source_User": "repl", "Connect_Retry": 10,
                 "Auto_Position": 1, "Using_Gtid": "Slave_Pos", "Source_SSL_Allowed": "Yes",
                 "Master_SSL_Allowed": "Yes", "Source_SSL_CA_File": "/etc/mysql/tls/ca.pem",
                 "Master_SSL_CA_File": "/etc/mysql/tls/ca.pem", "Source_SSL_Verify_Server_Cert": "Yes",
                 "Master_SSL_Verify_Server_Cert": "Yes", "Replica_IO_Running": "Yes", "Replica_SQL_Running": "Yes",
                 "Slave_IO_Running": "Yes", "Slave_SQL_Running": "Yes"}]

    def execute(self, query, args=None):
        self.queries.append(query)
        return 0


ROTATION_PARAMS = dict(PARAMS, state="running", password_update="on_change")


def test_a_rotated_password_reconfigures_the_channel_without_saying_either_password():
    session = RotationSession(("repl", "old-secret"))
    decision, reason, dummy, dummy = mysql_replica.decide_and_apply(session, ROTATION_PARAMS)
    assert decision == "configure"
    assert reason == "the channel holds another password for repl (a rotation)"
    assert session.queries[1].startswith("CHANGE REPLICATION SOURCE TO")
    assert "old-secret" not in reason and "p'w" not in reason


def test_on_configure_leaves_a_channel_holding_another_password_alone():
    """The source's account may still have the old password (the source outside the play): no rotation yet."""
    session = RotationSession(("repl", "old-secret"))
    decision = mysql_replica.decide_and_apply(session, dict(ROTATION_PARAMS, password_update="on_configure"))[0]
    assert decision == "none" and session.queries == []


def test_the_same_password_changes_nothing_and_mariadb_is_not_compared():
    session = RotationSession(("repl", "p'w"))
    assert mysql_replica.decide_and_apply(session, ROTATION_PARAMS)[0] == "none"
    assert session.queries == []
    mariadb = RotationSession(None, version="11.8.2-MariaDB")
    assert mysql_replica.decide_and_apply(mariadb, ROTATION_PARAMS)[0] == "none"


class FakeSession:
    """Answers the two reads mysql_replica_health makes: the version, then SHOW REPLICA STATUS."""
    rows = []

    def __init__(self, connection, check_mode=False):
        pass

    def value(self, query):
        return "9.7.0"

    def fetch(self, query):
        return FakeSession.rows

    def close(self):
        pass


@pytest.mark.parametrize("rows, require, ok, unmet, refused", [
    ([], False, True, [], None),
    ([], True, False, ["no replication configured on this server"], "no replication configured on this server"),
    ([{"Replica_IO_Running": "Yes", "Replica_SQL_Running": "Yes", "Seconds_Behind_Source": 3}], True, True, [], None),
    ([{"Replica_IO_Running": "Yes", "Replica_SQL_Running": "Yes", "Seconds_Behind_Source": 90}], True, False,
     ["lag 90 s, limit 60 s"], None),
    ([{"Replica_IO_Running": "Connecting", "Replica_SQL_Running": "Yes", "Seconds_Behind_Source": None,
       "Last_IO_Error": "error connecting to source"}], True, False,
     ["I/O thread Connecting, SQL thread Yes: error connecting to source"], None),
])
def test_replica_gate_answers_in_the_gate_shape(monkeypatch, capsys, rows, require, ok, unmet, refused):
    from ansible_collections.dbops.clusters.plugins.modules import mysql_replica_health
    monkeypatch.setattr(mysql_replica_health, "gate_connect", lambda params: object())
    monkeypatch.setattr(mysql_replica_health, "Session", FakeSession)
    FakeSession.rows = rows
    with patch_module_args({"require_configured": require, "timeout": 0}):
        with pytest.raises(SystemExit):
            mysql_replica_health.main()
    result = json.loads(capsys.readouterr().out)
    assert (result["ok"], result["unmet"], result["checks"]) == (ok, unmet, 1)
    assert bool(result.get("failed")) == (not ok)
    assert ("waiting cannot change that" in result.get("msg", "")) == bool(refused)
    assert set(result) >= {"configured", "io_running", "sql_running", "lag_seconds", "waited_seconds"}


def test_stored_credentials_none_without_the_metadata_table_other_errors_raised():
    from ansible_collections.dbops.clusters.plugins.module_utils.mysql_flavors import stored_source_credentials
    assert stored_source_credentials(RotationSession(None)) is None
    assert stored_source_credentials(RotationSession(("repl", "x"))) == ("repl", "x")

    class Denied(RotationSession):
        def fetch(self, query, args=None):
            raise mysql_replica.pymysql.err.OperationalError(1142, "SELECT command denied")
    with pytest.raises(mysql_replica.pymysql.err.OperationalError):
        stored_source_credentials(Denied(None))
