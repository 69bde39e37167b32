"""The scheduled backups' receiver (roles/percona_server/files/dbops_mysql_backup.py receive), run for real: the agent
as systemd starts it for one connection (the connection on its stdin and stdout), a client on localhost speaking
the members' side of the protocol in TLS with copy certificates, with a real tar stream."""
import io
import json
import os
import re
import socket
import ssl
import subprocess
import sys
import tarfile
import time

import pytest
import yaml

from ansible_collections.dbops.clusters.plugins.module_utils import copy_channel

from copy_certs import copy_tls

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
AGENT = os.path.join(REPO, "roles", "percona_server", "files", "dbops_mysql_backup.py")
COLLECTIONS = os.path.join(REPO, ".collections")


def start_agent(tmp_path, members, keep=2, settings=None):
    """(client socket, agent process, repository, certificates): the agent receiving one connection from the
    test, as the backup host mbk."""
    tls = copy_tls(tmp_path / "tls", ["mbk", "db1", "db2"], rogue=["db9"])
    repository = tmp_path / "repo"
    config = tmp_path / "ledger.json"
    config.write_text(json.dumps({"cluster_group": "ledger", "repository": str(repository), "keep": keep,
                                  "members": members, "timeout": 20, "max_age": 3600, "method": "clone",
                                  "tls": tls["mbk"], **(settings or {})}))
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    client = socket.create_connection(listener.getsockname(), timeout=20)
    accepted = listener.accept()[0]
    listener.close()
    agent = subprocess.Popen([sys.executable, AGENT, "receive", str(config)], stdin=accepted, stdout=accepted,
                             stderr=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=COLLECTIONS))
    accepted.close()
    return client, agent, repository, tls


def receive(tmp_path, members, keep=2, member="db2", settings=None):
    """(the member's channel, agent process, repository): a member with the copy certificate of `member`."""
    client, agent, repository, tls = start_agent(tmp_path, members, keep, settings)
    context = copy_channel._context(ssl.Purpose.SERVER_AUTH, tls[member])  # pylint: disable=protected-access
    return copy_channel.Channel(context.wrap_socket(client, server_hostname="mbk")), agent, repository


def ask(channel, message):
    channel.send_message(message)


def answer(channel):
    return channel.read_message(20)


def stream(channel, data, exit_code=0, end=True):
    """The member's side of the copy: the bytes in frames, the end frame and the tool's outcome."""
    channel.sock.sendall(copy_channel.LENGTH.pack(len(data)) + data)
    if end:
        channel.sock.sendall(copy_channel.LENGTH.pack(0))
        ask(channel, {"exit": exit_code, "sent": len(data), "words": "" if exit_code == 0 else "tar: write error"})


def copy_of_a_data_directory():
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, content in (("./mysql.ibd", b"dictionary"), ("./app/t.ibd", b"rows")):
            info = tarfile.TarInfo(name)
            info.size = len(content)
            archive.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


def test_a_members_backup_lands_described_with_latest_and_a_status(tmp_path):
    client, agent, repository = receive(tmp_path, {"db1": "10.0.0.1", "db2": "127.0.0.1"})
    ask(client, {"op": "offer", "member": "db2", "fresh_within": 60})
    go = answer(client)
    assert go["go"] and go["name"].endswith("-db2"), go
    ask(client, {"member": "db2", "method": "clone", "started": 1.0, "source_host": "10.0.0.1",
                 "gtid_executed_before": "u:1-5", "gtid_executed_after": "u:1-7"})
    stream(client, copy_of_a_data_directory())
    result = answer(client)
    assert agent.wait(20) == 0, agent.stderr.read()
    assert result["ok"] and "complete (%d bytes)" % len(copy_of_a_data_directory()) in result["message"], result
    backup = repository / go["name"]
    assert (backup / "app" / "t.ibd").read_bytes() == b"rows"
    description = json.loads((backup / "dbops-backup.json").read_text())
    assert (description["member"], description["source"], description["complete"], description["scheduled"]) == (
        "db2", "db1", True, True)
    assert description["gtid_executed_after"] == "u:1-7"
    assert os.readlink(str(repository / "latest")) == str(backup)
    status = json.loads((repository / "dbops-backup-status.json").read_text())
    assert status["last_good"]["name"] == go["name"] and status["last_attempt"]["outcome"] == "complete"
    assert oct((repository / "dbops-backup-status.json").stat().st_mode & 0o777) == "0o600"
    assert not (repository / ".dbops-backup.receiving").exists()

    # the next member's turn finds it fresh
    client, agent, repository = receive(tmp_path, {"db1": "127.0.0.1", "db2": "10.0.0.2"}, member="db1")
    ask(client, {"op": "offer", "member": "db1", "fresh_within": 120})
    # seconds since the backup: 0 on an idle machine, a few under load
    reply = answer(client)
    assert reply["go"] is False and re.match(r"^%s \(of db2\) finished [0-9] s ago, within this turn's 120 s$"
                                             % re.escape(go["name"]), reply["reason"]), reply
    assert agent.wait(20) == 0


# A Galera receiver whose tools are stand-ins: tar unpacks the stream, true "prepares" (the copy's checkpoints file
# says what mariadb-backup's would).
GALERA = {"method": "galera", "tool": "true", "stream": "tar", "galera_info": "mariadb_backup_galera_info",
          "checkpoints": "mariadb_backup_checkpoints", "prepare_options": ["--prepare"]}


def galera_copy(backup_type, from_lsn, to_lsn):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, content in (
                ("./mariadb_backup_galera_info", b"6c0d3d64-0f5c-11ef-8d1f-2a6f4e5b9c01:120"),
                ("./mariadb_backup_checkpoints", ("backup_type = %s\nfrom_lsn = %d\nto_lsn = %d\nlast_lsn = %d\n" % (
                    backup_type, from_lsn, to_lsn, to_lsn + 16)).encode())):
            info = tarfile.TarInfo(name)
            info.size = len(content)
            archive.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


def galera_turn(tmp_path, level, lineage, copy):
    """(answer, result, status) of one Galera turn of db2 offered at level with its data directory's lineage."""
    time.sleep(1.1)     # backups are named by the second they were offered in
    client, agent, repository = receive(tmp_path, {"db1": "10.0.0.1", "db2": "127.0.0.1"}, settings=GALERA)
    ask(client, {"op": "offer", "member": "db2", "fresh_within": -1, "level": level, "lineage": lineage})
    go = answer(client)
    ask(client, {"member": "db2", "method": "galera", "started": time.time(), "lineage": lineage})
    stream(client, copy(go))
    result = answer(client)
    assert agent.wait(20) == (0 if result["ok"] else 1), agent.stderr.read()
    return go, result, json.loads((repository / "dbops-backup-status.json").read_text()), repository


def test_a_galera_incremental_turn_extends_the_chain_of_its_member_else_copies_a_full_backup(tmp_path):
    # no complete backup yet: the incremental turn copies a full backup, saying why
    full, result, status, repository = galera_turn(tmp_path, "incremental", "db2 L1",
                                                   lambda go: galera_copy("log-applied", 0, 5000))
    assert (full["go"], full["level"], full["from_lsn"]) == (True, "full", None), full
    assert "no complete backup" in full["plan"] and result["ok"], (full, result)
    described = json.loads((repository / full["name"] / "dbops-backup.json").read_text())
    assert (described["type"], described["prepared"], described["to_lsn"], described["lineage"]) == (
        "full", True, 5000, "db2 L1")
    # the next incremental turn from the same data directory: an incremental from the full backup's to_lsn
    inc, result, status, repository = galera_turn(tmp_path, "incremental", "db2 L1",
                                                  lambda go: galera_copy("incremental", go["from_lsn"], 7000))
    assert (inc["level"], inc["from_lsn"], inc["name"].endswith("-db2-incremental")) == ("incremental", 5000, True)
    assert result["ok"], result
    described = json.loads((repository / inc["name"] / "dbops-backup.json").read_text())
    assert (described["type"], described["base"], described["prepared"], described["from_lsn"]) == (
        "incremental", full["name"], False, 5000)
    assert (status["last_attempt"]["level"], status["last_attempt"]["chain"]) == (
        "incremental", [full["name"], inc["name"]])
    assert [turn["name"] for turn in status["turns"]] == [inc["name"], full["name"]]
    # an incremental that does not start where its base ends is not complete
    bad, result, status, repository = galera_turn(tmp_path, "incremental", "db2 L1",
                                                  lambda go: galera_copy("incremental", 4000, 8000))
    assert bad["level"] == "incremental" and not result["ok"] and "does not join its chain" in result["message"]
    assert not (repository / bad["name"] / "dbops-backup.json").exists()
    # db2's data directory was replaced (a state transfer): a full backup again, saying why
    again, result, status, repository = galera_turn(tmp_path, "incremental", "db2 L2",
                                                    lambda go: galera_copy("log-applied", 0, 9000))
    assert again["level"] == "full" and "is not the one %s copied" % inc["name"] in again["plan"], again
    assert status["last_attempt"]["chain"] == [again["name"]]


def failed_backup(repository, go):
    assert not (repository / go["name"] / "dbops-backup.json").exists()
    status = json.loads((repository / "dbops-backup-status.json").read_text())
    assert status["last_attempt"]["outcome"] == "failed" and "last_good" not in status
    return status["last_attempt"]["message"]


def test_a_stream_that_does_not_unpack_is_recorded_as_failed_and_leaves_no_description(tmp_path):
    client, agent, repository = receive(tmp_path, {"db2": "127.0.0.1"})
    ask(client, {"op": "offer", "member": "db2", "fresh_within": 60})
    go = answer(client)
    ask(client, {"member": "db2", "method": "clone", "started": 1.0})
    stream(client, copy_of_a_data_directory()[:700])    # a damaged archive, sent whole
    result = answer(client)
    assert agent.wait(20) == 1
    assert not result["ok"] and "did not unpack whole (tar exit" in result["message"], result
    assert "did not unpack whole" in failed_backup(repository, go)


def test_a_copy_whose_tool_failed_on_the_member_is_not_complete_even_if_it_unpacked(tmp_path):
    client, agent, repository = receive(tmp_path, {"db2": "127.0.0.1"})
    ask(client, {"op": "offer", "member": "db2", "fresh_within": 60})
    go = answer(client)
    ask(client, {"member": "db2", "method": "clone", "started": 1.0})
    stream(client, copy_of_a_data_directory(), exit_code=2)
    assert not answer(client)["ok"]
    assert agent.wait(20) == 1
    assert failed_backup(repository, go) == "the member's copy failed (exit 2: tar: write error)"


def test_a_connection_cut_mid_stream_is_recorded_as_failed(tmp_path):
    client, agent, repository = receive(tmp_path, {"db2": "127.0.0.1"})
    ask(client, {"op": "offer", "member": "db2", "fresh_within": 60})
    go = answer(client)
    ask(client, {"member": "db2", "method": "clone", "started": 1.0})
    stream(client, copy_of_a_data_directory()[:700], end=False)    # the member died mid-stream
    client.close()
    assert agent.wait(20) == 1
    assert "the connection closed before the rest of the stream" in failed_backup(repository, go)


def test_a_member_whose_clone_failed_is_recorded(tmp_path):
    client, agent, repository = receive(tmp_path, {"db2": "127.0.0.1"})
    ask(client, {"op": "offer", "member": "db2", "fresh_within": 60})
    answer(client)
    ask(client, {"abort": "the clone failed: (1045) access denied"})
    assert not answer(client)["ok"]
    assert agent.wait(20) == 1
    status = json.loads((repository / "dbops-backup-status.json").read_text())
    assert status["last_attempt"]["message"] == "the clone failed: (1045) access denied"


def test_an_offer_for_another_member_than_the_certificate_names_is_refused(tmp_path):
    """db1's host (its certificate) cannot send a backup as db2, even from db2's address."""
    client, agent, repository = receive(tmp_path, {"db1": "10.0.0.1", "db2": "127.0.0.1"}, member="db1")
    ask(client, {"op": "offer", "member": "db2", "fresh_within": 60})
    refused = answer(client)
    assert agent.wait(20) == 1
    assert refused == {"go": False, "reason": "127.0.0.1 (certificate of db1) is not member db2 of ledger"}
    assert not repository.exists() or not os.listdir(str(repository))


@pytest.mark.parametrize("certificate", ["db9", None])
def test_a_connection_without_a_copy_certificate_is_refused_before_any_message(tmp_path, certificate):
    client, agent, repository, tls = start_agent(tmp_path, {"db2": "127.0.0.1"})
    if certificate:     # a certificate of another CA
        context = copy_channel._context(ssl.Purpose.SERVER_AUTH, tls[certificate])  # pylint: disable=protected-access
    else:               # TLS, but no client certificate
        context = ssl.create_default_context(cafile=tls["mbk"]["ca"])
    with pytest.raises((ssl.SSLError, OSError, copy_channel.CopyChannelError)):
        channel = copy_channel.Channel(context.wrap_socket(client, server_hostname="mbk"))
        ask(channel, {"op": "offer", "member": "db2", "fresh_within": 60})
        answer(channel)
    assert agent.wait(20) == 1
    assert b"refused a connection from 127.0.0.1: the TLS handshake failed" in agent.stderr.read()
    assert not repository.exists()


def test_a_plain_tcp_connection_is_refused(tmp_path):
    client, agent, repository, _tls = start_agent(tmp_path, {"db2": "127.0.0.1"})
    client.sendall(b'{"op": "offer", "member": "db2", "fresh_within": 60}\n')
    assert agent.wait(20) == 1
    assert b"the TLS handshake failed" in agent.stderr.read()
    assert not repository.exists()


@pytest.mark.parametrize("members", [{"db2": "10.0.0.2"}, {"db1": "127.0.0.1"}])
def test_an_offer_from_an_address_that_is_not_the_named_members_is_refused(tmp_path, members):
    client, agent, repository = receive(tmp_path, members)
    ask(client, {"op": "offer", "member": "db2", "fresh_within": 60})
    refused = answer(client)
    assert agent.wait(20) == 1
    assert refused == {"go": False, "reason": "127.0.0.1 (certificate of db2) is not member db2 of ledger"}
    assert not repository.exists() or not os.listdir(str(repository))


@pytest.mark.parametrize("agent", ["dbops_mysql_backup.py", "dbops_mysql_binlog_archive.py"])
def test_the_role_installs_every_module_utils_file_each_agent_imports(agent):
    """The agents run on hosts with only the module_utils files the role copies beside them
    (percona_server_agent_libraries): the whole import closure of each must be in that list (a new import would
    otherwise fail on every host at its first run, not here)."""
    utils = os.path.join(REPO, "plugins", "module_utils")
    imported = re.compile(r"plugins\.module_utils(?:\.(\w+))? import \(?\s*([\w,\s]+?)\)?\s*(?:#|$)", re.M)

    def imports(path):
        with open(path) as handle:
            text = handle.read()
        names = set()
        for module, listed in imported.findall(text):
            names |= {module} if module else {n.strip() for n in listed.split(",") if n.strip()}
        return {n + ".py" for n in names if os.path.exists(os.path.join(utils, n + ".py"))}

    closure, todo = set(), imports(os.path.join(REPO, "roles", "percona_server", "files", agent))
    while todo:
        name = todo.pop()
        closure.add(name)
        todo |= imports(os.path.join(utils, name)) - closure
    with open(os.path.join(REPO, "roles", "percona_server", "vars", "main.yml")) as handle:
        role_vars = yaml.safe_load(handle)
    assert agent in role_vars["percona_server_agents"]
    installed = role_vars["percona_server_agent_libraries"]
    assert closure and closure <= set(installed), sorted(closure - set(installed))
