"""The mongod test double, driven by pymongo over loopback TCP: one process per member."""

from __future__ import annotations

import hashlib
import os
import signal
import sys
import time

import pytest

pymongo = pytest.importorskip("pymongo")
from pymongo.errors import OperationFailure, WriteConcernError  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "doubles", "mongodb"))
from harness import Cluster, wait_until  # noqa: E402  pylint: disable=wrong-import-position

PASSWORD = "double-test-pw"


def direct(node, **kwargs):
    return pymongo.MongoClient(node.host, directConnection=True, serverSelectionTimeoutMS=3000, **kwargs)


def admin(node):
    return direct(node, username="root", password=PASSWORD)


def primary_of(cluster, exclude=()):
    def find():
        for node in cluster.nodes:
            if node.alive() and node not in exclude:
                try:
                    if direct(node).admin.command("hello").get("isWritablePrimary"):
                        return node
                except pymongo.errors.PyMongoError:
                    continue
        return None
    return wait_until(find, timeout=15, what="a primary")


def wait_secondaries(cluster, client):
    def all_healthy():
        states = [m["stateStr"] for m in client.admin.command("replSetGetStatus")["members"]]
        return all(s in ("PRIMARY", "SECONDARY") for s in states) and states
    return wait_until(all_healthy, timeout=10, what="all members PRIMARY/SECONDARY")


def committed(client):
    return client.admin.command("replSetGetConfig", commitmentStatus=True)["commitmentStatus"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A 3-member set with a keyfile, initiated and given its first user through the localhost exception."""
    rs = Cluster(tmp_path_factory.mktemp("rs"), size=3).start()
    try:
        first = direct(rs.nodes[0])
        # A member config MongoDB refuses (votes 2, a negative priority) leaves the member uninitiated; the
        # refusals are kept for test_initiate_refuses_bad_votes_and_priority.
        rs.initiate_refusals = []
        for bad in ({"votes": 2}, {"priority": -1}):
            config = rs.config()
            config["members"][1].update(bad)
            try:
                first.admin.command("replSetInitiate", config)
            except OperationFailure as err:
                rs.initiate_refusals.append((bad, err.code, str(err)))
        # Auth is on and no user exists: a localhost client may initiate and create the first user.
        first.admin.command("replSetInitiate", rs.config())
        primary = primary_of(rs)
        direct(primary).admin.command("createUser", "root", pwd=PASSWORD, roles=["root"])
        wait_until(lambda: committed(admin(primary_of(rs))), what="the first config committed")
        wait_secondaries(rs, admin(primary))
        yield rs
    finally:
        rs.stop()


def test_initiate_refuses_bad_votes_and_priority(cluster):
    assert [(bad, code) for bad, code, _message in cluster.initiate_refusals] == [
        ({"votes": 2}, 93), ({"priority": -1}, 93)]
    assert "votes must be 0 or 1" in cluster.initiate_refusals[0][2]
    assert "priority must be between 0 and 1000" in cluster.initiate_refusals[1][2]


def test_localhost_exception_closes_after_the_first_user(cluster):
    anonymous = direct(primary_of(cluster))
    with pytest.raises(OperationFailure) as failure:
        anonymous.admin.command("replSetGetStatus")
    assert failure.value.code == 13
    with pytest.raises(OperationFailure) as failure:
        anonymous.admin.command("createUser", "second", pwd="x", roles=["root"])
    assert failure.value.code == 13


def test_scram_sha_256_rejects_a_wrong_password(cluster):
    with pytest.raises(OperationFailure) as failure:
        direct(cluster.nodes[0], username="root", password="wrong").admin.command("ping")
    assert failure.value.code == 18
    assert admin(cluster.nodes[0]).admin.command("replSetGetStatus")["ok"] == 1


def test_replica_set_client_writes_majority_and_reads_from_a_secondary(cluster):
    uri_hosts = ",".join(n.host for n in cluster.nodes)
    client = pymongo.MongoClient(uri_hosts, replicaSet="rs0", username="root", password=PASSWORD,
                                 serverSelectionTimeoutMS=5000)
    client.test.items.insert_one({"_id": "majority-1", "v": 1})
    primary = primary_of(cluster)
    secondary = next(n for n in cluster.nodes if n is not primary)
    # Acknowledged with w:majority, so it is on at least one secondary right away; read it there.
    found = wait_until(lambda: admin(secondary).test.items.find_one({"_id": "majority-1"}), timeout=2,
                       what="the write on a secondary")
    assert found["v"] == 1
    with pytest.raises(pymongo.errors.NotPrimaryError) as failure:
        admin(secondary).test.command("insert", "items", documents=[{"_id": "on-secondary"}])
    assert failure.value.details["code"] == 10107


def test_majority_write_times_out_without_a_majority(cluster):
    primary = primary_of(cluster)
    others = [n for n in cluster.nodes if n is not primary]
    client = admin(primary)
    for node in others:
        node.kill(signal.SIGSTOP)
    try:
        collection = client.test.get_collection(
            "items", write_concern=pymongo.WriteConcern(w="majority", wtimeout=400))
        with pytest.raises(WriteConcernError) as failure:
            collection.insert_one({"_id": "not-majority"})
        assert failure.value.code == 64
    finally:
        for node in others:
            node.kill(signal.SIGCONT)
    # Replication resumes: the write reaches the secondaries once they run again.
    wait_until(lambda: admin(others[0]).test.items.find_one({"_id": "not-majority"}), timeout=5,
               what="replication after SIGCONT")


def test_stepdown_is_refused_when_no_electable_secondary_is_caught_up(cluster):
    primary = primary_of(cluster)
    others = [n for n in cluster.nodes if n is not primary]
    client = admin(primary)
    for node in others:
        node.kill(signal.SIGSTOP)
    try:
        client.test.get_collection("items", write_concern=pymongo.WriteConcern(w=1)).insert_one({"_id": "ahead"})
        with pytest.raises(OperationFailure) as failure:
            client.admin.command("replSetStepDown", 10, secondaryCatchUpPeriodSecs=0.5)
        assert failure.value.code == 262
        assert "No electable secondaries caught up" in str(failure.value)
        assert client.admin.command("hello")["isWritablePrimary"]
    finally:
        for node in others:
            node.kill(signal.SIGCONT)


def test_stepdown_hands_over_to_a_caught_up_secondary(cluster):
    old = primary_of(cluster)
    wait_secondaries(cluster, admin(old))
    # A short step-down period: a frozen member must not be needed for the election in the next test.
    admin(old).admin.command("replSetStepDown", 3, secondaryCatchUpPeriodSecs=2)
    new = primary_of(cluster, exclude=[old])
    assert new is not old
    wait_until(lambda: [m["stateStr"] for m in admin(new).admin.command("replSetGetStatus")["members"]
                        if m["name"] == old.host] == ["SECONDARY"], timeout=3, what="the old primary seen as SECONDARY")
    # Within its step-down period the old primary refuses a step-up request (the election handoff's).
    digest = hashlib.sha256(b"".join(open(cluster.keyfile, "rb").read().split())).hexdigest()
    with pytest.raises(OperationFailure) as refused:
        direct(old).admin.command({"replSetStepUp": 1, "$keyDigest": digest})
    assert "not electable for another" in str(refused.value)
    assert primary_of(cluster) is new


def test_killed_primary_is_replaced_and_rejoins_with_the_data(cluster):
    old = primary_of(cluster)
    admin(old).test.items.insert_one({"_id": "before-kill"})
    started = time.monotonic()
    old.kill(signal.SIGKILL)
    new = primary_of(cluster, exclude=[old])
    elapsed = time.monotonic() - started
    assert elapsed < 8, "election took %.1fs" % elapsed
    assert admin(new).test.items.find_one({"_id": "before-kill"})
    admin(new).test.items.insert_one({"_id": "after-kill"})
    old.start()
    wait_until(lambda: admin(old).test.items.find_one({"_id": "after-kill"}), timeout=10,
               what="the restarted member to catch up")
    events = [e for e in cluster.events() if e["event"] == "elected"]
    assert events[-1]["host"] == new.host


def test_reconfig_rules(cluster):
    primary = primary_of(cluster)
    client = admin(primary)
    wait_until(lambda: committed(client), what="config committed")
    config = client.admin.command("replSetGetConfig")["config"]
    with pytest.raises(OperationFailure) as failure:  # version must grow
        client.admin.command("replSetReconfig", config)
    assert failure.value.code == 103
    two_new = dict(config, version=config["version"] + 1, members=config["members"] + [
        {"_id": 10, "host": "127.0.0.1:1"}, {"_id": 11, "host": "127.0.0.1:2"}])
    with pytest.raises(OperationFailure) as failure:
        client.admin.command("replSetReconfig", two_new)
    assert "at most 1 voting member" in str(failure.value)
    hidden_with_priority = dict(config, version=config["version"] + 1, members=[
        dict(m, hidden=True, priority=1) if m["host"] != primary.host else m for m in config["members"]])
    with pytest.raises(OperationFailure) as failure:
        client.admin.command("replSetReconfig", hidden_with_priority)
    assert failure.value.code == 93
    # votes other than 0/1 and a priority outside 0..1000 are refused, also by a force reconfig.
    for bad in ({"votes": 2}, {"votes": -1}, {"priority": -1}, {"priority": 1001}):
        for force in (False, True):
            wrong = dict(config, version=config["version"] + 1, members=[
                dict(m, **bad) if m["host"] != primary.host else m for m in config["members"]])
            with pytest.raises(OperationFailure) as failure:
                client.admin.command("replSetReconfig", wrong, force=force)
            assert failure.value.code == 93 and ("votes must be 0 or 1" in str(failure.value)
                                                 or "priority must be between 0 and 1000" in str(failure.value))
    assert client.admin.command("replSetGetConfig")["config"]["version"] == config["version"]
    # One non-voting change goes through and is committed.
    lower = dict(config, version=config["version"] + 1, members=[
        dict(m, priority=0.5) if m["host"] != primary.host else m for m in config["members"]])
    client.admin.command("replSetReconfig", lower)
    wait_until(lambda: committed(client), what="the new config committed")


def test_reconfig_refused_until_the_previous_config_is_committed(cluster):
    primary = primary_of(cluster)
    client = admin(primary)
    others = [n for n in cluster.nodes if n is not primary]
    wait_until(lambda: committed(client), what="config committed")
    config = client.admin.command("replSetGetConfig")["config"]
    for node in others:
        node.kill(signal.SIGSTOP)
    try:
        tags = dict(config, version=config["version"] + 1, members=[
            dict(m, tags={"dc": "a"}) for m in config["members"]])
        with pytest.raises(OperationFailure) as failure:
            client.admin.command("replSetReconfig", tags, maxTimeMS=300)
        assert failure.value.code == 50
        assert not committed(client)
        again = dict(tags, version=tags["version"] + 1)
        with pytest.raises(OperationFailure) as failure:
            client.admin.command("replSetReconfig", again)
        assert failure.value.code == 308
    finally:
        for node in others:
            node.kill(signal.SIGCONT)
    wait_until(lambda: committed(client), what="config committed after SIGCONT")


def test_fcv_rules_and_binary_start_refusal(cluster):
    client = admin(primary_of(cluster))
    assert client.admin.command("getParameter", 1, featureCompatibilityVersion=1)[
        "featureCompatibilityVersion"]["version"] == "8.0"
    with pytest.raises(OperationFailure) as failure:
        client.admin.command("setFeatureCompatibilityVersion", "6.0", confirm=True)
    assert failure.value.code == 2
    with pytest.raises(OperationFailure):
        client.admin.command("setFeatureCompatibilityVersion", "7.0")  # confirm: true is required
    client.admin.command("setFeatureCompatibilityVersion", "7.0", confirm=True)
    for node in cluster.nodes:
        wait_until(lambda n=node: admin(n).admin.command("getParameter", 1, featureCompatibilityVersion=1)[
            "featureCompatibilityVersion"]["version"] == "7.0", what="FCV 7.0 on %s" % node.host)
    # With FCV 7.0, a 7.0 binary starts on these data files (a downgrade path) ...
    secondary = next(n for n in cluster.nodes if n is not primary_of(cluster))
    secondary.kill(signal.SIGTERM)
    secondary.start(binary_version="7.0")
    assert admin(secondary).admin.command("buildInfo")["version"].startswith("7.0")
    # ... but a 7.0 member stops when FCV 8.0 replicates to it, and will not start on FCV 8.0 data.
    client = admin(primary_of(cluster))
    if primary_of(cluster) is secondary:
        pytest.fail("the 7.0 member became primary")
    client.admin.command("setFeatureCompatibilityVersion", "8.0", confirm=True)
    secondary.process.wait(timeout=10)
    assert secondary.process.returncode == 14
    process = secondary.start(binary_version="7.0", wait=False)
    assert process.wait(timeout=10) == 62
    assert b"UPGRADE PROBLEM" in process.stderr.read()
    secondary.start(binary_version="8.0")
    wait_secondaries(cluster, client)
    starts = [(e["event"], e["binary_version"]) for e in cluster.events()
              if e["event"] in ("start", "start_refused") and e["host"].endswith(":%d" % secondary.port)]
    assert starts[-3:] == [("start", "7.0"), ("start_refused", "7.0"), ("start", "8.0")]


def test_add_a_member_is_newly_added_until_secondary(tmp_path):
    rs = Cluster(tmp_path, size=2, keyfile=False).start()
    try:
        first, second = rs.nodes
        client = direct(first)
        config = rs.config()
        config["members"] = config["members"][:1]
        client.admin.command("replSetInitiate", config)
        primary_of(rs)
        client.test.items.insert_one({"_id": 1})
        wait_until(lambda: committed(client), what="config committed")
        config = client.admin.command("replSetGetConfig")["config"]
        added = dict(config, version=config["version"] + 1,
                     members=config["members"] + [{"_id": 1, "host": second.host}])
        client.admin.command("replSetReconfig", added)
        events = [e for e in rs.events() if e["event"] in ("reconfig", "newly_added_cleared")]
        assert events[0]["event"] == "reconfig"
        wait_until(lambda: not any(m.get("newlyAdded") for m in client.admin.command(
            "replSetGetConfig")["config"]["members"]), what="newlyAdded cleared")
        assert [e["event"] for e in rs.events() if e["event"] == "newly_added_cleared"]
        assert direct(second).test.items.find_one({"_id": 1})
    finally:
        rs.stop()


def test_config_server_balancer_state_is_replicated(tmp_path):
    rs = Cluster(tmp_path, size=1, keyfile=False, cluster_role="configsvr").start()
    try:
        client = direct(rs.nodes[0])
        with pytest.raises(OperationFailure):
            client.admin.command("replSetInitiate", rs.config())  # configsvr: true is required
        client.admin.command("replSetInitiate", dict(rs.config(), configsvr=True))
        primary_of(rs)
        assert client.admin.command("_configsvrBalancerStatus")["mode"] == "full"
        client.admin.command("_configsvrBalancerStop")
        assert client.admin.command("_configsvrBalancerStatus")["mode"] == "off"
        client.admin.command("_configsvrBalancerStart")
        assert [e["stopped"] for e in rs.events() if e["event"] == "balancer"] == [False, True, False]
    finally:
        rs.stop()
