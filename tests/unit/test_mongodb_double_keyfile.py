"""The double's keyfiles as mongod reads them: one key or a YAML sequence of keys, and members that authenticate to
each other while they share at least one key, which is what lets a key rotation run without downtime
(https://www.mongodb.com/docs/manual/tutorial/rotate-key-replica-set/)."""

from __future__ import annotations

import os
import signal
import sys

import pytest

pymongo = pytest.importorskip("pymongo")

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "doubles", "mongodb"))
from harness import Cluster, wait_until  # noqa: E402  pylint: disable=wrong-import-position
from mongod_double import read_keyfile  # noqa: E402  pylint: disable=wrong-import-position

PASSWORD = "double-keyfile-pw"
OLD = "a-shared-test-key-0123456789"      # the harness's key
NEW = "QW5vdGhlcktleUZvclJvdGF0aW9u"


def test_a_keyfile_holds_one_key_or_a_sequence_of_keys():
    assert read_keyfile(b"abc def\nghi\n") == ["abcdefghi"]           # whitespace inside a key is ignored
    assert read_keyfile(b"'abc'\n") == ["abc"]
    assert read_keyfile(b"- abc\n- \"def\"\n") == ["abc", "def"]
    assert read_keyfile(b"---\n- abc\n  def\n- ghi\n") == ["abcdef", "ghi"]   # an item's continuation line
    assert read_keyfile(b"\n") == []


def direct(node, **kwargs):
    return pymongo.MongoClient(node.host, directConnection=True, serverSelectionTimeoutMS=3000, **kwargs)


def states(cluster):
    """Each member's state as the primary sees it (None while there is no primary)."""
    for node in cluster.nodes:
        if not node.alive():
            continue
        try:
            client = direct(node, username="root", password=PASSWORD)
            status = client.admin.command("replSetGetStatus")
        except pymongo.errors.PyMongoError:
            continue
        if status.get("myState") == 1:
            return dict((member["name"], member["stateStr"]) for member in status["members"])
    return None


def healthy(cluster):
    seen = states(cluster)
    return seen is not None and all(state in ("PRIMARY", "SECONDARY") for state in seen.values())


def restart_with(node, tmp_path, content):
    node.keyfile = str(tmp_path / ("keyfile-%d" % node.index))
    with open(node.keyfile, "w") as handle:
        handle.write(content)
    os.chmod(node.keyfile, 0o600)
    node.kill(signal.SIGTERM)
    node.start()


@pytest.fixture()
def cluster(tmp_path):
    rs = Cluster(tmp_path / "rs", size=3).start()
    try:
        first = direct(rs.nodes[0])
        first.admin.command("replSetInitiate", rs.config())
        wait_until(lambda: states_without_auth(rs), timeout=15, what="a primary")
        yield rs
    finally:
        rs.stop()


def states_without_auth(cluster):
    """The first user, created through the localhost exception on the primary once there is one."""
    for node in cluster.nodes:
        try:
            if direct(node).admin.command("hello").get("isWritablePrimary"):
                direct(node).admin.command("createUser", "root", pwd=PASSWORD, roles=["root"])
                return True
        except pymongo.errors.PyMongoError:
            continue
    return False


def test_a_rotation_keeps_every_member_in_the_set(cluster, tmp_path):
    wait_until(lambda: healthy(cluster), timeout=15, what="every member PRIMARY or SECONDARY")
    # both keys everywhere, one member at a time: the restarted member shares the old key with the others
    for node in cluster.nodes:
        restart_with(node, tmp_path, "- %s\n- %s\n" % (OLD, NEW))
        wait_until(lambda: healthy(cluster), timeout=15, what="the set healthy after %s took both keys" % node.host)
    # then the new key alone: the restarted member shares it with the members that still hold both
    for node in cluster.nodes:
        restart_with(node, tmp_path, NEW + "\n")
        wait_until(lambda: healthy(cluster), timeout=15, what="the set healthy after %s took the new key" % node.host)


def test_a_member_given_the_new_key_alone_too_early_is_shut_out(cluster, tmp_path):
    wait_until(lambda: healthy(cluster), timeout=15, what="every member PRIMARY or SECONDARY")
    # the shortcut the rotation exists to avoid: one member on the new key while the others run the old one
    node = cluster.nodes[2]
    restart_with(node, tmp_path, NEW + "\n")
    # its heartbeats are refused both ways: the primary marks it down once heartbeatTimeoutSecs (5 s) passed
    wait_until(lambda: (states(cluster) or {}).get(node.host) not in ("PRIMARY", "SECONDARY", None), timeout=12,
               what="%s seen down by the primary" % node.host)
    with pytest.raises(AssertionError):
        wait_until(lambda: healthy(cluster), timeout=3, what="the set healthy")
