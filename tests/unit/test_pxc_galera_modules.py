"""galera_state and galera_health run in-process against a temporary datadir and a stand-in server binary.

galera_state must not run --wsrep-recover in check mode (it starts the server binary): the stand-in binary
leaves a mark when it runs, and check mode must leave none while saying it would recover."""
import json
import stat

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.dbops.clusters.plugins.modules import galera_health, galera_state

UUID = "f3fce748-e5f3-11f1-9b48-23d4b883f3ea"


@pytest.fixture
def crashed_node(tmp_path):
    """A datadir after kill -9 (seqno -1, InnoDB data) and a server binary that logs a recovered position."""
    datadir = tmp_path / "data"
    datadir.mkdir()
    (datadir / "grastate.dat").write_text("# GALERA saved state\nversion: 2.1\nuuid:    %s\nseqno:   -1\n"
                                          "safe_to_bootstrap: 0\n" % UUID)
    (datadir / "ibdata1").write_text("")
    mark = tmp_path / "server-ran"
    binary = tmp_path / "mysqld"
    binary.write_text("#!/bin/sh\ntouch %s\necho '[Note] WSREP: Recovered position: %s:42' >&2\n" % (mark, UUID))
    binary.chmod(binary.stat().st_mode | stat.S_IEXEC)
    return {"datadir": str(datadir), "binary": str(binary), "mark": mark,
            "socket": str(tmp_path / "no-server.sock")}


def run(module, args, monkeypatch, capsys, check_mode=False):
    monkeypatch.setattr(galera_state, "server_processes", lambda: [])
    if check_mode:
        args = dict(args, _ansible_check_mode=True)
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            module.main()
    return json.loads(capsys.readouterr().out)


def test_check_mode_says_it_would_recover_and_runs_nothing(crashed_node, monkeypatch, capsys):
    result = run(galera_state, {"datadir": crashed_node["datadir"], "mysqld": crashed_node["binary"],
                                "login_unix_socket": crashed_node["socket"]}, monkeypatch, capsys, check_mode=True)
    assert not crashed_node["mark"].exists(), "check mode ran the server binary"
    assert result["would_recover"] is True and result["recovered"] is False
    assert result["seqno"] == -1
    assert "check mode: would run %s --wsrep-recover" % crashed_node["binary"] in result["reason"]


def test_a_real_run_recovers_the_position(crashed_node, monkeypatch, capsys):
    result = run(galera_state, {"datadir": crashed_node["datadir"], "mysqld": crashed_node["binary"],
                                "login_unix_socket": crashed_node["socket"]}, monkeypatch, capsys)
    assert crashed_node["mark"].exists()
    assert (result["uuid"], result["seqno"], result["recovered"], result["would_recover"]) == (UUID, 42, True, False)


def test_health_progress_names_a_state_transfer_in_progress(tmp_path):
    (tmp_path / "sst_in_progress").write_text("")
    assert galera_health.phase(None, "Can't connect", str(tmp_path)) == \
        "not answering, receiving a state transfer (SST)"
    assert galera_health.phase(None, "Can't connect", str(tmp_path / "none")) == "not answering (Can't connect)"
    summary = {"local_state_comment": "Joined", "cluster_status": "Primary", "cluster_size": 3}
    assert galera_health.phase(summary, None, str(tmp_path)) == "Joined, Primary of 3"


def test_health_fails_at_once_when_the_watched_unit_failed(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(galera_health, "unit_state", lambda module, service: "failed")
    monkeypatch.setattr(galera_health, "unit_log", lambda module, service: ["WSREP: SST failed"])
    with patch_module_args({"expected_size": 3, "timeout": 600, "interval": 0.1, "service": "mariadb",
                            "datadir": str(tmp_path), "login_unix_socket": str(tmp_path / "no.sock")}):
        with pytest.raises(SystemExit):
            galera_health.main()
    result = json.loads(capsys.readouterr().out)
    assert result["failed"] and result["waited_seconds"] < 30
    assert result["msg"].startswith("the node is not healthy and will not become so (mariadb is failed)")
    assert result["unit_log"] == ["WSREP: SST failed"]


class RunningServer:
    """A Session stand-in for a Synced member with two client sessions: answers the queries galera_state makes."""

    queries = []

    def __init__(self, connection, check_mode=False):
        self.check_mode = check_mode

    def fetch(self, query, args=None):
        RunningServer.queries.append(query)
        if query.startswith("SHOW GLOBAL STATUS"):
            return [{"Variable_name": name, "Value": value} for name, value in (
                ("wsrep_cluster_status", "Primary"), ("wsrep_local_state_comment", "Synced"),
                ("wsrep_local_state_uuid", UUID), ("wsrep_last_committed", "7"), ("wsrep_ready", "ON"),
                ("wsrep_cluster_size", "3"))]
        if "PROCESSLIST" in query:
            return [{"COUNT(*)": 2}]
        raise AssertionError("unexpected query %s" % query)

    def value(self, query, args=None):
        rows = self.fetch(query, args)
        return list(rows[0].values())[0] if rows else None

    def variables(self, names):
        return {"wsrep_on": "ON", "wsrep_cluster_name": "lab"}

    def close(self):
        pass


def test_a_running_member_reports_its_position_and_its_client_sessions(crashed_node, monkeypatch, capsys):
    """The rolling upgrade orders members by client_connections: the count comes from the server's process list
    (through the driver), in check mode too (a read)."""
    monkeypatch.setattr(galera_state, "connect", lambda params: object())
    monkeypatch.setattr(galera_state, "Session", RunningServer)
    for check_mode in (False, True):
        result = run(galera_state, {"datadir": crashed_node["datadir"], "recover": False}, monkeypatch, capsys,
                     check_mode=check_mode)
        assert (result["running"], result["uuid"], result["seqno"]) == (True, UUID, 7)
        assert result["client_connections"] == 2
    assert not crashed_node["mark"].exists()
    assert any("information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID()" in q for q in RunningServer.queries)


def test_a_stopped_member_reports_no_client_sessions(crashed_node, monkeypatch, capsys):
    result = run(galera_state, {"datadir": crashed_node["datadir"], "recover": False,
                                "login_unix_socket": crashed_node["socket"]}, monkeypatch, capsys)
    assert result["running"] is False and result["client_connections"] is None
