"""The mongod double's rollback, drilled with writers in flight: a killed primary takes its w:1 writes with it.

Writes acknowledged with w: "majority" survive the loss of the primary; writes acknowledged with w: 1 that
no secondary has are rolled back when the old primary rejoins:
https://www.mongodb.com/docs/manual/core/replica-set-rollbacks/ and
https://www.mongodb.com/docs/manual/reference/write-concern/
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import pytest

pymongo = pytest.importorskip("pymongo")
from pymongo.errors import PyMongoError, WriteConcernError  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "doubles", "mongodb"))
from harness import Cluster, wait_until  # noqa: E402  pylint: disable=wrong-import-position

# The double's clients and its password, as its own tests reach it.
from test_mongodb_double import PASSWORD, admin, direct, primary_of  # noqa: E402  pylint: disable=wrong-import-position
# Longer than the primary's wait for new entries in an oplog pull (0.3 s): a pull reply composed after a
# secondary was stopped may still reach it when it runs again, so only writes sent after this grace are
# certain to be on the primary alone.
STOPPED_GRACE_SECONDS = 1.0
# Short enough that a majority writer gives up while the secondaries are stopped, long enough that a
# majority write on a loaded machine with the secondaries running is acknowledged.
MAJORITY_WTIMEOUT_MS = 1000


def committed(client):
    return client.admin.command("replSetGetConfig", commitmentStatus=True)["commitmentStatus"]


def all_ids(node):
    return {doc["_id"] for doc in admin(node).drill.items.find()}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A 3-member set with a keyfile and a root user, every member PRIMARY or SECONDARY."""
    rs = Cluster(tmp_path_factory.mktemp("rs"), size=3).start()
    try:
        direct(rs.nodes[0]).admin.command("replSetInitiate", rs.config())
        direct(primary_of(rs)).admin.command("createUser", "root", pwd=PASSWORD, roles=["root"])
        wait_until(lambda: committed(admin(primary_of(rs))), what="the first config committed")

        def all_healthy():
            states = [m["stateStr"] for m in admin(primary_of(rs)).admin.command("replSetGetStatus")["members"]]
            return all(s in ("PRIMARY", "SECONDARY") for s in states)
        wait_until(all_healthy, timeout=10, what="all members PRIMARY/SECONDARY")
        yield rs
    finally:
        rs.stop()


class Writer(threading.Thread):
    """Inserts unique _ids until stopped, through a replica-set client that follows the primary.

    `acknowledged` gets (_id, time the insert was sent) only once the server acknowledged the insert with the
    writer's write concern; an insert that failed, or whose write concern timed out, is not acknowledged.
    """

    def __init__(self, cluster, name, write_concern):
        super().__init__(name=name, daemon=True)
        self.prefix = name
        self.client = pymongo.MongoClient(
            ",".join(n.host for n in cluster.nodes), replicaSet=cluster.set_name, username="root",
            password=PASSWORD, retryWrites=False, serverSelectionTimeoutMS=5000, connectTimeoutMS=2000,
            socketTimeoutMS=5000)
        self.collection = self.client.drill.get_collection("items", write_concern=write_concern)
        self.stop_event = threading.Event()
        self.acknowledged = []
        self.write_concern_timeouts = []
        self.failed = []

    def run(self):
        sequence = 0
        while not self.stop_event.is_set():
            sequence += 1
            doc_id = "%s-%06d" % (self.prefix, sequence)
            sent = time.monotonic()
            try:
                self.collection.insert_one({"_id": doc_id, "writer": self.prefix})
            except WriteConcernError:
                self.write_concern_timeouts.append(doc_id)
            except PyMongoError:
                self.failed.append(doc_id)
                self.stop_event.wait(0.05)
            else:
                self.acknowledged.append((doc_id, sent))
            # A pace that keeps the members' heartbeats on time on a loaded machine.
            self.stop_event.wait(0.01)

    def stop(self):
        self.stop_event.set()
        self.join(timeout=20)
        assert not self.is_alive(), "%s did not stop" % self.name
        self.client.close()


def sent_between(writers, start, end):
    return [doc_id for writer in writers for doc_id, sent in writer.acknowledged if start <= sent < end]


def test_killed_primary_keeps_majority_writes_and_rolls_back_unreplicated_w1_writes(cluster):
    old = primary_of(cluster)
    secondaries = [n for n in cluster.nodes if n is not old]
    majority_writers = [Writer(cluster, "majority-%d" % i, pymongo.WriteConcern(
        w="majority", wtimeout=MAJORITY_WTIMEOUT_MS)) for i in range(2)]
    w1_writers = [Writer(cluster, "w1-%d" % i, pymongo.WriteConcern(w=1)) for i in range(2)]
    writers = majority_writers + w1_writers
    for writer in writers:
        writer.start()
    try:
        wait_until(lambda: all(len(w.acknowledged) >= 20 for w in writers), timeout=15,
                   what="every writer acknowledged on the first primary")
        # The secondaries stop; the primary goes on acknowledging w:1 writes that only it has.
        for node in secondaries:
            node.kill(signal.SIGSTOP)
        try:
            time.sleep(STOPPED_GRACE_SECONDS)
            primary_only_from = time.monotonic()
            # Well within heartbeatTimeoutSecs (5 s), after which the primary would step down by itself.
            wait_until(lambda: len(sent_between(w1_writers, primary_only_from, float("inf"))) >= 10,
                       timeout=3, interval=0.02, what="w:1 writes acknowledged by the primary alone")
            killed_at = time.monotonic()
            old.kill(signal.SIGKILL)
        finally:
            for node in secondaries:
                node.kill(signal.SIGCONT)
        new = primary_of(cluster, exclude=[old])
        election_seconds = time.monotonic() - killed_at
        assert election_seconds < 10, "election took %.1fs" % election_seconds
        # The writers find the new primary and go on there.
        elected_at = time.monotonic()
        wait_until(lambda: all(sent_between([w], elected_at, float("inf")) for w in majority_writers),
                   timeout=15, what="majority writes acknowledged by the new primary")
    finally:
        for writer in writers:
            writer.stop()

    admin(new).drill.items.with_options(write_concern=pymongo.WriteConcern(w="majority")).insert_one(
        {"_id": "marker"})
    old.start()

    def old_primary_rejoined():
        return (direct(old).admin.command("hello").get("secondary")
                and admin(old).drill.items.find_one({"_id": "marker"}) is not None)
    wait_until(old_primary_rejoined, timeout=20, interval=0.1, what="the old primary SECONDARY with the marker")
    # Every write sent before the marker is before it in the oplog, so a member with the marker has them all.
    for node in secondaries:
        wait_until(lambda node=node: admin(node).drill.items.find_one({"_id": "marker"}), timeout=10,
                   what="the marker on %s" % node.host)

    majority_acknowledged = {doc_id for w in majority_writers for doc_id, _sent in w.acknowledged}
    w1_acknowledged = {doc_id for w in w1_writers for doc_id, _sent in w.acknowledged}
    w1_primary_only = set(sent_between(w1_writers, primary_only_from, killed_at))
    majority_while_stopped = sent_between(majority_writers, primary_only_from, killed_at)
    majority_timeouts = sum(len(w.write_concern_timeouts) for w in majority_writers)
    rollbacks = [e for e in cluster.events() if e["event"] == "rollback" and e["host"] == old.host]
    members = {node.host: all_ids(node) for node in cluster.nodes}
    w1_missing_everywhere = w1_acknowledged - set.union(*members.values())
    print("majority acked %d, w:1 acked %d, w:1 lost (sent while the primary was alone) %d, w:1 acked and on no "
          "member %d, majority wtimeouts %d, rollback entries %s, election %.2fs, documents per member %s" % (
              len(majority_acknowledged), len(w1_acknowledged), len(w1_primary_only), len(w1_missing_everywhere),
              majority_timeouts, [e["entries"] for e in rollbacks], election_seconds,
              sorted(len(ids) for ids in members.values())))

    assert w1_primary_only, "no w:1 write was acknowledged by the primary alone: nothing could roll back"
    assert not majority_while_stopped, "majority writes acknowledged without a majority: %s" % majority_while_stopped
    for host, ids in members.items():
        assert not majority_acknowledged - ids, "%s lost majority-acknowledged writes: %s" % (
            host, sorted(majority_acknowledged - ids)[:10])
        assert not w1_primary_only & ids, "%s kept w:1 writes only the killed primary had: %s" % (
            host, sorted(w1_primary_only & ids)[:10])
    assert len(rollbacks) == 1, rollbacks
    assert rollbacks[0]["entries"] >= len(w1_primary_only)
    assert len({len(ids) for ids in members.values()}) == 1, {h: len(ids) for h, ids in members.items()}
    assert len({frozenset(ids) for ids in members.values()}) == 1, "members hold different documents"
