"""The MongoDB modules, given arguments and read back as JSON as Ansible does, against mongod double
processes on loopback ports."""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import signal
import sys
import time

import pytest

pymongo = pytest.importorskip("pymongo")

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "doubles", "mongodb"))
from harness import FAST_SETTINGS, Cluster, wait_until  # noqa: E402  pylint: disable=wrong-import-position

PASSWORD = "module-test-pw"


def run_module(module_name, _tmp_path, check=False, diff=False, **args):
    """Run a module's main() in this process as Ansible would run it (arguments in, JSON out)."""
    from ansible.module_utils import basic  # pylint: disable=import-outside-toplevel
    args = dict(args, _ansible_check_mode=check, _ansible_diff=diff)
    basic._ANSIBLE_ARGS = json.dumps({"ANSIBLE_MODULE_ARGS": args}).encode()  # pylint: disable=protected-access
    basic._ANSIBLE_PROFILE = "legacy"  # pylint: disable=protected-access
    module = importlib.import_module("ansible_collections.dbops.clusters.plugins.modules." + module_name)
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        try:
            module.main()
        except SystemExit:
            pass
    try:
        return json.loads(output.getvalue())
    except ValueError:
        raise AssertionError("%s printed no JSON: %r" % (module_name, output.getvalue())) from None


def login(node, **extra):
    return dict(login_host="127.0.0.1", login_port=node.port, login_user="root", login_password=PASSWORD, **extra)


def client(node, auth=True):
    credentials = dict(username="root", password=PASSWORD) if auth else {}
    return pymongo.MongoClient(node.host, directConnection=True, serverSelectionTimeoutMS=3000, **credentials)


def primary_node(cluster, auth=True):
    def find():
        for node in cluster.nodes:
            if node.alive():
                try:
                    if client(node, auth).admin.command("hello")["isWritablePrimary"]:
                        return node
                except pymongo.errors.PyMongoError:
                    pass
        return None
    return wait_until(find, timeout=15, what="a primary")


def config_hosts(node):
    members = client(node).admin.command("replSetGetConfig")["config"]["members"]
    return sorted(m["host"] for m in members), [m for m in members if m.get("newlyAdded")]


@pytest.fixture(scope="module")
def five(tmp_path_factory):
    cluster = Cluster(tmp_path_factory.mktemp("modrs"), size=5).start()
    try:
        yield cluster
    finally:
        cluster.stop()


def members_arg(nodes, extra=None):
    return [dict({"host": n.host}, **(extra or {}).get(n.index, {})) for n in nodes]


def test_initiate_then_expand_shrink_and_gate(five, tmp_path):
    nodes = five.nodes
    first = dict(login_host="127.0.0.1", login_port=nodes[0].port)  # no user yet: the localhost exception
    planned = run_module("mongodb_rs_initiate", tmp_path, check=True, set_name="rs0", members=members_arg(nodes[:3]),
                         settings=FAST_SETTINGS, **first)
    assert planned["changed"] and planned["decision"].startswith("would run replSetInitiate")
    assert not pymongo.MongoClient(nodes[0].host, directConnection=True).admin.command("hello").get("setName") \
        or "setVersion" not in pymongo.MongoClient(nodes[0].host, directConnection=True).admin.command("hello")
    bad = run_module("mongodb_rs_initiate", tmp_path, set_name="rs0", settings=FAST_SETTINGS,
                     members=members_arg(nodes[:3], {2: {"hidden": True, "priority": 1}}), **first)
    assert bad["failed"] and "members[2].priority must be 0 for a hidden member" in bad["msg"]
    done = run_module("mongodb_rs_initiate", tmp_path, set_name="rs0", members=members_arg(nodes[:3]),
                      settings=FAST_SETTINGS, **first)
    assert done["changed"] and done["primary"], done
    primary = primary_node(five, auth=False)
    pymongo.MongoClient(primary.host, directConnection=True).admin.command(
        "createUser", "root", pwd=PASSWORD, roles=["root"])
    again = run_module("mongodb_rs_initiate", tmp_path, set_name="rs0", members=members_arg(nodes[:3]),
                       settings=FAST_SETTINGS, **login(nodes[0]))
    assert not again["changed"] and not again["members_differ"]

    gate = run_module("mongodb_rs_health", tmp_path, expected_members=3, timeout=60, interval=0.2, **login(nodes[1]))
    assert gate["ok"], gate

    # Expand 3 -> 5 in one run; check mode first plans without changing anything.
    plan = run_module("mongodb_rs_reconfigure", tmp_path, check=True, members=members_arg(nodes),
                      wait_timeout=30, **login(nodes[0]))
    assert plan["changed"] and plan["plan"] == ["add voting member %s" % nodes[3].host,
                                                "add voting member %s" % nodes[4].host]
    assert config_hosts(primary)[0] == sorted(n.host for n in nodes[:3])
    started = time.monotonic()
    grown = run_module("mongodb_rs_reconfigure", tmp_path, diff=True, members=members_arg(nodes), wait_timeout=30,
                       **login(nodes[0]))
    assert grown["changed"], grown
    assert len(grown["steps"]) == 2 and all("add voting member" in s for s in grown["steps"])
    assert config_hosts(primary_node(five)) == (sorted(n.host for n in nodes), [])
    assert nodes[4].host in grown["diff"]["after"] and nodes[4].host not in grown["diff"]["before"]
    print("expand 3->5 took %.1fs" % (time.monotonic() - started))
    # Each reconfig the double recorded changed the voting set by at most one member.
    reconfigs = [set(e["members"]) for e in five.events() if e["event"] == "reconfig" and "members" in e]
    assert all(len(a ^ b) <= 1 for a, b in zip(reconfigs, reconfigs[1:]))
    same = run_module("mongodb_rs_reconfigure", tmp_path, members=members_arg(nodes), wait_timeout=30,
                      **login(nodes[1]))
    assert not same["changed"] and same["plan"] == []
    gate = run_module("mongodb_rs_health", tmp_path, expected_members=5, timeout=60, interval=0.2, **login(nodes[3]))
    assert gate["ok"], gate

    # Shrink 5 -> 3, removing the current primary: it steps down first.
    primary = primary_node(five)
    keep = [n for n in nodes if n is not primary][:3]
    shrunk = run_module("mongodb_rs_reconfigure", tmp_path, members=members_arg(keep, {keep[0].index: {
        "priority": 2}}), wait_timeout=30, step_down_secs=30, secondary_catch_up_period_secs=10, **login(keep[0]))
    assert shrunk["changed"], shrunk
    # The other leaving member loses its priority first, so the one step-down hands over to a member that stays.
    assert "priority 0 for %s before %s steps down" % (
        next(n for n in nodes if n is not primary and n not in keep).host, primary.host) in shrunk["steps"][0]
    assert [s for s in shrunk["steps"] if s.startswith("step down")] == ["step down %s" % primary.host]
    assert sum(1 for s in shrunk["steps"] if "remove voting member" in s) == 2
    new_primary = primary_node(five)
    assert config_hosts(new_primary) == (sorted(n.host for n in keep), [])
    # The removed members learn it from the primary's heartbeat replies and stop replicating.
    for gone in (n for n in nodes if n not in keep):
        wait_until(lambda g=gone: "setVersion" in client(g).admin.command("hello") and not client(g).admin.command(
            "hello").get("secondary") and not client(g).admin.command("hello")["isWritablePrimary"], timeout=5,
            what="%s REMOVED" % gone.host)
        assert client(gone).admin.command("replSetGetStatus").get("myState") == 10
    # The priority-2 member takes over once caught up.
    wait_until(lambda: primary_node(five) is keep[0], timeout=10, what="priority takeover by %s" % keep[0].host)
    gate = run_module("mongodb_rs_health", tmp_path, expected_members=3, timeout=60, interval=0.2, **login(keep[1]))
    assert gate["ok"], gate


def test_health_gate_reports_lag_and_check_mode_never_fails(five, tmp_path):
    primary = primary_node(five)
    members = client(primary).admin.command("replSetGetConfig")["config"]["members"]
    secondaries = [n for n in five.nodes if n.host in {m["host"] for m in members} and n is not primary]
    lagging = secondaries[0]
    lagging.kill(signal.SIGSTOP)
    try:
        writer = client(primary).test.get_collection("lag", write_concern=pymongo.WriteConcern(w=1))
        writer.insert_one({"n": 1})
        time.sleep(1.2)
        writer.insert_one({"n": 2})
        gate = run_module("mongodb_rs_health", tmp_path, max_lag_seconds=0.5, timeout=0, **login(primary))
        assert gate["failed"] and not gate["ok"]
        assert any(u.startswith("%s lags the primary" % lagging.host) for u in gate["unmet"]), gate["unmet"]
        looked = run_module("mongodb_rs_health", tmp_path, check=True, max_lag_seconds=0.5, timeout=30,
                            **login(primary))
        assert not looked.get("failed") and not looked["ok"] and looked["checks"] == 1
    finally:
        lagging.kill(signal.SIGCONT)
    assert run_module("mongodb_rs_health", tmp_path, timeout=60, interval=0.2, **login(lagging))["ok"]


def test_health_gate_fails_at_once_on_a_refused_login(five, tmp_path):
    """The gate contract: a server that refuses the login is not waited for, in check mode neither."""
    primary = primary_node(five)
    for check in (False, True):
        started = time.time()
        wrong = login(primary)
        wrong["login_password"] = "wrong"
        gate = run_module("mongodb_rs_health", tmp_path, check=check, timeout=60, interval=0.2, **wrong)
        assert gate["failed"] and not gate["ok"] and gate["checks"] == 1, gate
        assert "waiting cannot change that" in gate["msg"] and time.time() - started < 20


def test_stepdown_module(five, tmp_path):
    primary = primary_node(five)
    members = {m["host"] for m in client(primary).admin.command("replSetGetConfig")["config"]["members"]}
    secondary = next(n for n in five.nodes if n.host in members and n is not primary)
    gate = run_module("mongodb_rs_health", tmp_path, timeout=60, interval=0.2, **login(primary))
    assert gate["ok"], gate
    untouched = run_module("mongodb_rs_stepdown", tmp_path, **login(secondary))
    assert not untouched["changed"] and not untouched["was_primary"]
    planned = run_module("mongodb_rs_stepdown", tmp_path, check=True, **login(primary))
    assert planned["changed"] and planned["caught_up"] and primary_node(five) is primary
    others = [n for n in five.nodes if n.host in members and n is not primary]
    for node in others:
        node.kill(signal.SIGSTOP)
    try:
        client(primary).test.get_collection("sd", write_concern=pymongo.WriteConcern(w=1)).insert_one({"x": 1})
        refused = run_module("mongodb_rs_stepdown", tmp_path, secondary_catch_up_period_secs=1, step_down_secs=30,
                             **login(primary))
        assert refused["failed"] and "no electable secondary caught up" in refused["msg"]
    finally:
        for node in others:
            node.kill(signal.SIGCONT)
    # Resumed members may call an election at once (their election timer ran out while stopped).
    assert run_module("mongodb_rs_health", tmp_path, timeout=60, interval=0.2, **login(secondary))["ok"]
    primary = primary_node(five)
    done = run_module("mongodb_rs_stepdown", tmp_path, secondary_catch_up_period_secs=5, step_down_secs=30,
                      wait_timeout=20, **login(primary))
    assert done["changed"] and done["new_primary"] not in (None, primary.host), done


def test_fcv_module_checks_binaries(five, tmp_path):
    assert run_module("mongodb_rs_health", tmp_path, timeout=60, interval=0.2, **login(primary_node(five)))["ok"]
    primary = primary_node(five)
    read = run_module("mongodb_fcv", tmp_path, **login(primary))
    assert read == dict(read, changed=False, fcv="8.0", before="8.0")
    planned = run_module("mongodb_fcv", tmp_path, check=True, diff=True, version="7.0", **login(primary))
    assert planned["changed"] and planned["fcv"] == "7.0" and "8.0" in planned["diff"]["before"]
    assert run_module("mongodb_fcv", tmp_path, **login(primary))["fcv"] == "8.0"
    done = run_module("mongodb_fcv", tmp_path, version="7.0", **login(primary))
    assert done["changed"] and done["fcv"] == "7.0"
    assert not run_module("mongodb_fcv", tmp_path, version="7.0", **login(primary))["changed"]
    # A member downgraded to a 7.0 binary: raising FCV to 8.0 must stop before the change.
    members = {m["host"] for m in client(primary).admin.command("replSetGetConfig")["config"]["members"]}
    old = next(n for n in five.nodes if n.host in members and n is not primary_node(five))
    old.kill(signal.SIGTERM)
    old.start(binary_version="7.0")
    refused = run_module("mongodb_fcv", tmp_path, version="8.0", **login(primary_node(five)))
    assert refused["failed"] and old.host in refused["msg"] and "cannot run featureCompatibilityVersion 8.0" in \
        refused["msg"]
    assert old.alive()
    assert run_module("mongodb_fcv", tmp_path, **login(primary_node(five)))["fcv"] == "7.0"


def test_balancer_module_through_a_mongos(tmp_path):
    cluster = Cluster(tmp_path / "cfg", size=1, cluster_role="configsvr").start()
    try:
        config_node = cluster.nodes[0]
        pymongo.MongoClient(config_node.host, directConnection=True).admin.command(
            "replSetInitiate", dict(cluster.config(), configsvr=True))
        primary_node(cluster, auth=False)
        router = cluster.add_node()
        router.start_router("rs0/%s" % config_node.host)
        anonymous = pymongo.MongoClient(router.host, serverSelectionTimeoutMS=3000)
        # The localhost exception through mongos, judged on the config servers' users.
        anonymous.admin.command("createUser", "root", pwd=PASSWORD, roles=["root"])
        with pytest.raises(pymongo.errors.OperationFailure):
            anonymous.admin.command("balancerStatus")
        mongos = dict(login_host="127.0.0.1", login_port=router.port, login_user="root", login_password=PASSWORD)
        assert run_module("mongodb_balancer", tmp_path, **mongos) == dict(
            run_module("mongodb_balancer", tmp_path, **mongos), changed=False, mode="full")
        planned = run_module("mongodb_balancer", tmp_path, check=True, state="stopped", **mongos)
        assert planned["changed"] and planned["mode"] == "off"
        assert run_module("mongodb_balancer", tmp_path, **mongos)["mode"] == "full"
        stopped = run_module("mongodb_balancer", tmp_path, state="stopped", **mongos)
        assert stopped["changed"] and stopped["before"] == "full" and stopped["mode"] == "off"
        assert not run_module("mongodb_balancer", tmp_path, state="stopped", **mongos)["changed"]
        assert run_module("mongodb_balancer", tmp_path, state="started", **mongos)["mode"] == "full"
        # The config server recorded the changes in order; the state survives in config.settings.
        assert [e["stopped"] for e in cluster.events() if e["event"] == "balancer"] == [False, True, False]
        failed = run_module("mongodb_balancer", tmp_path, login_host="127.0.0.1", login_port=router.port,
                            login_user="root", login_password="nope")
        assert failed["failed"] and "Authentication failed" in failed["msg"]
    finally:
        cluster.stop()


def test_user_module_creates_the_first_user_through_the_localhost_exception(tmp_path):
    cluster = Cluster(tmp_path / "one", size=1).start()
    try:
        node = cluster.nodes[0]
        pymongo.MongoClient(node.host, directConnection=True).admin.command("replSetInitiate", cluster.config())
        primary_node(cluster, auth=False)
        args = dict(name="root", password=PASSWORD, roles=["root"], **login(node))
        planned = run_module("mongodb_user", tmp_path, check=True, **args)
        assert planned["changed"] and planned["localhost_exception"]
        created = run_module("mongodb_user", tmp_path, **args)
        assert created["changed"] and created["localhost_exception"], created
        assert client(node).admin.command("replSetGetStatus")["ok"] == 1
        assert not run_module("mongodb_user", tmp_path, **args)["changed"]
        app = run_module("mongodb_user", tmp_path, name="app", password="app-pw", database="app",
                         roles=["readWrite"], **login(node))
        assert app["changed"] and not app["localhost_exception"]
        writer = pymongo.MongoClient(node.host, directConnection=True, username="app", password="app-pw",
                                     authSource="app")
        writer.app.t.insert_one({"x": 1})
        with pytest.raises(pymongo.errors.OperationFailure):
            writer.admin.command("replSetGetStatus")
    finally:
        cluster.stop()


def test_user_module_rotates_a_password_logged_in_with_the_old_one_and_resumes(tmp_path):
    """update_password=always: the role's rotation of its administrator, logged in with the credentials file
    (the old password); a second run whose file still holds the old password (a run stopped before rewriting
    it) changes nothing; on_create never resets a password."""
    cluster = Cluster(tmp_path / "one", size=1).start()
    try:
        node = cluster.nodes[0]
        pymongo.MongoClient(node.host, directConnection=True).admin.command("replSetInitiate", cluster.config())
        primary_node(cluster, auth=False)
        assert run_module("mongodb_user", tmp_path, name="root", password=PASSWORD, roles=["root"],
                          **login(node))["changed"]
        new = "rotated pw: with 'quotes' and \\"
        rotate = dict(name="root", password=new, update_password="always", **login(node))

        planned = run_module("mongodb_user", tmp_path, check=True, **rotate)
        assert planned["changed"] and planned["password_changed"] and "would give" in planned["decision"], planned
        assert client(node).admin.command("ping")["ok"] == 1          # check mode changed nothing

        rotated = run_module("mongodb_user", tmp_path, **rotate)
        assert rotated["changed"] and rotated["password_changed"], rotated
        with pytest.raises(pymongo.errors.OperationFailure) as refused:
            client(node).admin.command("ping")
        assert refused.value.code == 18
        as_new = pymongo.MongoClient(node.host, directConnection=True, serverSelectionTimeoutMS=3000,
                                     username="root", password=new)
        assert as_new.admin.command("replSetGetStatus")["ok"] == 1

        resumed = run_module("mongodb_user", tmp_path, **rotate)          # the login options: still the old one
        assert not resumed["changed"] and "earlier run" in resumed["decision"], resumed
        as_new_login = login(node)
        as_new_login["login_password"] = new                                # the credentials file, rewritten
        current = run_module("mongodb_user", tmp_path, name="root", password=new, update_password="always",
                             **as_new_login)
        assert not current["changed"] and not current["password_changed"], current
        kept = run_module("mongodb_user", tmp_path, name="root", password="another", **as_new_login)
        assert not kept["changed"], kept                                  # on_create: never reset
        assert as_new.admin.command("ping")["ok"] == 1

        lost = run_module("mongodb_user", tmp_path, name="root", password="a third one", update_password="always",
                          **login(node))
        assert lost["failed"] and "localhost exception is closed" in lost["msg"], lost
        assert "a third one" not in json.dumps(lost)
    finally:
        cluster.stop()


def test_initiate_asks_every_member_and_never_starts_a_second_set(tmp_path):
    """The group's first host is new while the others already form the set: no replSetInitiate there."""
    cluster = Cluster(tmp_path / "second", size=3).start()
    try:
        new, old = cluster.nodes[0], cluster.nodes[1:]
        pymongo.MongoClient(old[0].host, directConnection=True).admin.command("replSetInitiate", dict(
            cluster.config(), members=[{"_id": i, "host": n.host} for i, n in enumerate(old)]))
        set_primary = primary_node(cluster, auth=False)
        args = dict(set_name="rs0", members=members_arg(cluster.nodes), settings=FAST_SETTINGS,
                    login_host="127.0.0.1", login_port=new.port)
        # Before the first user exists: judged on the hosts hello lists.
        planned = run_module("mongodb_rs_initiate", tmp_path, check=True, **args)
        assert not planned["changed"] and planned["members_differ"], planned
        pymongo.MongoClient(set_primary.host, directConnection=True).admin.command(
            "createUser", "root", pwd=PASSWORD, roles=["root"])
        seen = run_module("mongodb_rs_initiate", tmp_path, login_user="root", login_password=PASSWORD, **args)
        assert not seen["changed"] and seen["members_differ"], seen
        assert seen["primary"] == set_primary.host and "initiated already" in seen["decision"]
        assert sorted(m["host"] for m in seen["config"]["members"]) == sorted(n.host for n in old)
        assert "setVersion" not in pymongo.MongoClient(new.host, directConnection=True).admin.command("hello")
        assert len([e for e in cluster.events() if e["event"] == "initiated"]) == 1
    finally:
        cluster.stop()


def test_initiate_refuses_while_a_listed_member_does_not_answer(tmp_path):
    cluster = Cluster(tmp_path / "silent", size=3)
    try:
        for node in cluster.nodes[:2]:
            node.start()
        refused = run_module("mongodb_rs_initiate", tmp_path, set_name="rs0", members=members_arg(cluster.nodes),
                             settings=FAST_SETTINGS, login_host="127.0.0.1", login_port=cluster.nodes[0].port,
                             connect_timeout=2)
        assert refused["failed"] and cluster.nodes[2].host in refused["msg"] and "did not answer" in refused["msg"]
        assert not [e for e in cluster.events() if e["event"] == "initiated"]
    finally:
        cluster.stop()


def test_gate_after_a_restart_waits_until_the_member_caught_up(five, tmp_path):
    primary = primary_node(five)
    members = {m["host"] for m in client(primary).admin.command("replSetGetConfig")["config"]["members"]}
    member = next(n for n in five.nodes if n.host in members and n is not primary)
    member.kill(signal.SIGTERM)
    writer = client(primary).test.get_collection("restart", write_concern=pymongo.WriteConcern(w=1))
    writer.insert_many([{"n": i} for i in range(50)])
    member.start()
    gate = run_module("mongodb_rs_health", tmp_path, caught_up=True, timeout=60, interval=0.2, **login(member))
    assert gate["ok"], gate
    assert client(member).test.restart.with_options(
        read_preference=pymongo.ReadPreference.SECONDARY_PREFERRED).count_documents({}) == 50


def test_shard_and_upgrade_plan_modules_on_a_sharded_cluster(tmp_path):
    """mongodb_shard adds a shardsvr set once (check mode predicts it); mongodb_upgrade_plan reads every
    member and router, plans config servers, the shard and the router in order, and refuses an unhealthy
    cluster naming the member."""
    config = Cluster(tmp_path / "cfg", size=1, set_name="cfg", binary_version="7.0", cluster_role="configsvr")
    shard = Cluster(tmp_path / "sh", size=3, set_name="shard1", binary_version="7.0", cluster_role="shardsvr")
    clusters = [config, shard]
    try:
        config.start()
        shard.start()
        pymongo.MongoClient(config.nodes[0].host, directConnection=True).admin.command(
            "replSetInitiate", dict(config.config(), configsvr=True))
        pymongo.MongoClient(shard.nodes[0].host, directConnection=True).admin.command(
            "replSetInitiate", shard.config())
        for item in clusters:
            first = primary_node(item, auth=False)
            pymongo.MongoClient(first.host, directConnection=True).admin.command(
                "createUser", "root", pwd=PASSWORD, roles=["root"])
        wait_until(lambda: all(m["stateStr"] in ("PRIMARY", "SECONDARY") for m in client(primary_node(shard)).admin.command(
            "replSetGetStatus")["members"]), timeout=20, what="the shard's members")
        router = config.add_node(binary_version="7.0")
        router.start_router("cfg/%s" % config.nodes[0].host)
        mongos = dict(login_host="127.0.0.1", login_port=router.port, login_user="root", login_password=PASSWORD)
        members = [n.host for n in shard.nodes]
        planned = run_module("mongodb_shard", tmp_path, check=True, set_name="shard1", members=members, **mongos)
        assert planned.get("changed") and planned["decision"] == "add" and planned["shards"] == [], planned
        added = run_module("mongodb_shard", tmp_path, set_name="shard1", members=members, **mongos)
        assert added["changed"] and [s["_id"] for s in added["shards"]] == ["shard1"], added
        again = run_module("mongodb_shard", tmp_path, set_name="shard1", members=members, **mongos)
        assert not again["changed"] and again["decision"] == "none"
        renamed = run_module("mongodb_shard", tmp_path, name="other", set_name="shard1", members=members, **mongos)
        assert renamed["failed"] and "already shard shard1" in renamed["msg"]

        args = dict(config_servers=[config.nodes[0].host], shards=[{"name": "shard1", "members": members}],
                    routers=[router.host], target="8.0", login_user="root", login_password=PASSWORD)
        # The config server set has one member: its primary cannot step down, so the plan is refused naming
        # the downtime, unless it is accepted; then that member is upgraded in place, without a step-down.
        one_member = run_module("mongodb_upgrade_plan", tmp_path, **args)
        assert one_member["failed"] and "replica set config: the primary %s cannot be stepped down" % (
            config.nodes[0].host) in one_member["msg"], one_member
        assert "only member" in one_member["msg"] and "mongodb_rs_allow_downtime=true" in one_member["msg"]
        args["allow_downtime"] = True
        result = run_module("mongodb_upgrade_plan", tmp_path, **args)
        assert result.get("current") == "7.0" and result["path"] == ["8.0"] and result["fcv"] == "7.0", result
        primary = primary_node(shard).host
        flat = [(s["action"], s.get("host"), s.get("in_place", False)) for s in result["steps"]]
        secondaries = sorted(h for h in members if h != primary)
        expected = [("balancer_stop", None, False), ("upgrade", config.nodes[0].host, True)]
        expected += [("upgrade", h, False) for h in secondaries]
        expected += [("stepdown", primary, False), ("upgrade", primary, False), ("upgrade", router.host, False),
                     ("balancer_start", None, False)]
        assert flat == expected
        assert not [s for s in result["steps"] if s["action"] == "fcv"]
        assert [s["action"] for s in run_module("mongodb_upgrade_plan", tmp_path, raise_fcv=True, **args)["steps"]
                ][-1] == "fcv"
        downgrade_args = dict(args)
        downgrade_args["target"] = "6.0"
        downgrade = run_module("mongodb_upgrade_plan", tmp_path, **downgrade_args)
        assert downgrade["failed"] and "downgrade" in downgrade["msg"]
        victim = [n for n in shard.nodes if n.host == secondaries[0]][0]
        victim.kill()
        refused = run_module("mongodb_upgrade_plan", tmp_path, **args)
        assert refused["failed"] and "not ready" in refused["msg"] and victim.host in refused["msg"], refused
    finally:
        for item in clusters:
            item.stop()
