"""The replication password rotated by a converge (rotation_drill.yml): the source's account took the new password
keeping the old one for the replicas' switch, each replica's channel holds the new one and still replicates, the
old one was discarded afterwards: the new password logs in, the old one no longer does, and a row written after the
rotation is on both replicas."""
import json
import os
import time

import pytest

REPLICAS = ("rep1", "rep2")


@pytest.fixture(scope="module")
def rotation(drill):
    with open(os.path.join(drill["dir"], "rotation.json"), encoding="utf-8") as handle:
        record = json.load(handle)
    print("\nreplication password rotation: account %s; replicas %s" % (record["account"], record["followed"]))
    return record


def test_the_source_account_took_the_new_password(rotation):
    """In the replication step, or before the source's restart handed its writes over (this converge restarts it:
    the switchover points every server at the new source with the new password, so the account takes it first)."""
    assert rotation["account"]["password"] is True or rotation["rotated_at_hand_over"] is True, rotation
    assert rotation["account"]["old_password_discarded"] is False     # kept while the replicas switched


@pytest.mark.parametrize("replica", REPLICAS)
def test_each_replica_channel_holds_the_new_password_and_replicates(rotation, replica):
    assert rotation[replica]["channel"] == [["repl", True]], rotation[replica]
    assert rotation[replica]["threads"] == ["ON", "ON"], rotation[replica]
    # reconfigured in the same run: told by the source's changed account, or by the channel's stored password;
    # after a hand-over the switchovers re-pointed the channel with the new password already
    assert rotation["followed"][replica] in ("password_update=always",
                                             "the channel holds another password for repl (a rotation)") \
        or (rotation["rotated_at_hand_over"] and rotation["followed"][replica].endswith("as requested")), rotation


@pytest.mark.parametrize("host", ("src",) + REPLICAS)
def test_the_old_password_was_discarded_and_only_the_new_one_logs_in(rotation, host):
    assert rotation[host]["secondary_password"] == [["0"]], rotation[host]
    assert rotation[host]["logins"]["new"] == "accepted", rotation[host]
    assert rotation[host]["logins"]["old"] == "refused 1045", rotation[host]


@pytest.mark.parametrize("replica", REPLICAS)
def test_a_row_written_after_the_rotation_reaches_the_replica(lab_hosts, sql, replica):
    deadline = time.time() + 20
    rows = []
    while time.time() < deadline and not rows:
        rows = sql(lab_hosts[replica], "SELECT id FROM verify.rotation")
        time.sleep(0.5)
    assert rows, "%s lacks the row written after the rotation" % replica
