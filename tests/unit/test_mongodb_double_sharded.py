"""The double's sharded-cluster rules: addShard through mongos (shardsvr required, idempotent, recorded in
config.shards on the config servers), listShards, and the balancer commands a user runs on mongos."""

from __future__ import annotations

import os
import sys

import pytest

pymongo = pytest.importorskip("pymongo")
from pymongo.errors import OperationFailure  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "doubles", "mongodb"))
from harness import Cluster, wait_until  # noqa: E402  pylint: disable=wrong-import-position


def direct(node):
    return pymongo.MongoClient(node.host, directConnection=True, serverSelectionTimeoutMS=3000)


def initiate_one(cluster, **extra):
    client = direct(cluster.nodes[0])
    client.admin.command("replSetInitiate", dict(cluster.config(), **extra))
    wait_until(lambda: client.admin.command("hello").get("isWritablePrimary"), what="a primary")
    return client


@pytest.fixture(scope="module")
def sharded(tmp_path_factory):
    root = tmp_path_factory.mktemp("sharded")
    config = Cluster(os.path.join(str(root), "cfg"), size=1, set_name="cfg", keyfile=False, cluster_role="configsvr")
    shard = Cluster(os.path.join(str(root), "sh1"), size=1, set_name="sh1", keyfile=False, cluster_role="shardsvr")
    plain = Cluster(os.path.join(str(root), "plain"), size=1, set_name="plain", keyfile=False)
    router = Cluster(os.path.join(str(root), "mongos"), size=1, keyfile=False)
    clusters = [config, shard, plain, router]
    try:
        for item in (config, shard, plain):
            item.start()
        initiate_one(config, configsvr=True)
        initiate_one(shard)
        initiate_one(plain)
        router.nodes[0].start_router("cfg/" + config.nodes[0].host)
        yield {"config": config, "shard": shard, "plain": plain, "mongos": direct(router.nodes[0])}
    finally:
        for item in clusters:
            item.stop()


def test_add_shard_needs_a_shardsvr_replica_set_and_is_idempotent(sharded):
    mongos = sharded["mongos"]
    plain_seed = "plain/" + sharded["plain"].nodes[0].host
    with pytest.raises(OperationFailure, match="shardsvr"):
        mongos.admin.command("addShard", plain_seed)
    with pytest.raises(OperationFailure, match="does not belong"):
        mongos.admin.command("addShard", "other/" + sharded["shard"].nodes[0].host)
    seed = "sh1/" + sharded["shard"].nodes[0].host
    assert mongos.admin.command("addShard", seed)["shardAdded"] == "sh1"
    assert mongos.admin.command("addShard", seed)["shardAdded"] == "sh1"  # again: ok, no second record
    shards = mongos.admin.command("listShards")["shards"]
    assert [(s["_id"], s["host"]) for s in shards] == [("sh1", seed)]
    with pytest.raises(OperationFailure, match="already shard sh1"):
        mongos.admin.command("addShard", seed, name="other")
    identity = direct(sharded["shard"].nodes[0]).admin.system.version.find_one({"_id": "shardIdentity"})
    assert identity["shardName"] == "sh1"
    assert [e["shard"] for e in sharded["config"].events() if e["event"] == "shard_added"] == ["sh1"]


def test_balancer_commands_on_mongos_change_the_config_servers_state(sharded):
    mongos = sharded["mongos"]
    assert mongos.admin.command("balancerStatus")["mode"] == "full"
    mongos.admin.command("balancerStop")
    assert mongos.admin.command("balancerStatus")["mode"] == "off"
    config_doc = direct(sharded["config"].nodes[0]).config.settings.find_one({"_id": "balancer"})
    assert config_doc["stopped"] is True
    mongos.admin.command("balancerStart")
    assert mongos.admin.command("balancerStatus")["mode"] == "full"
    assert [e["stopped"] for e in sharded["config"].events() if e["event"] == "balancer"] == [False, True, False]


def test_fcv_set_through_mongos_reaches_every_shard_then_the_config_servers(sharded):
    mongos = sharded["mongos"]
    config = direct(sharded["config"].nodes[0])
    shard = direct(sharded["shard"].nodes[0])

    def fcv(client):
        return client.admin.command("getParameter", 1, featureCompatibilityVersion=1)["featureCompatibilityVersion"]

    assert fcv(config)["version"] == fcv(shard)["version"] == "8.0"
    with pytest.raises(OperationFailure, match="confirm"):
        mongos.admin.command("setFeatureCompatibilityVersion", "7.0")
    assert fcv(shard)["version"] == "8.0"  # refused before any shard moved
    with pytest.raises(OperationFailure, match="Invalid feature compatibility version"):
        mongos.admin.command("setFeatureCompatibilityVersion", "6.0", confirm=True)
    mongos.admin.command("setFeatureCompatibilityVersion", "7.0", confirm=True)
    assert fcv(config)["version"] == fcv(shard)["version"] == "7.0"
    mongos.admin.command("setFeatureCompatibilityVersion", "8.0", confirm=True)
    assert fcv(config)["version"] == fcv(shard)["version"] == "8.0"
