"""After a staggered outage (g1 killed under writes, g2 stopped cleanly, g3 writing alone then killed) and
playbooks/galera_recover.yml: three Synced nodes; the node that actually bootstrapped (read from the servers,
not from the decision's report) is the one the writer's own ack log says acknowledged last; positions
differed (g1 < g2 < g3); every acknowledged commit is on every node; the recovery time is printed."""
import json
import os

import pytest

NODES = ("g1", "g2", "g3")

# This drill's record (side_effect.yml runs two drills on one converge); read by conftest's `drill` fixture.
WRITER_RECORD = "drill-outage"


@pytest.fixture(scope="module")
def acks(drill):
    """The writer's ack log: [(id, epoch, host address)] in commit order."""
    with open(os.path.join(drill["dir"], "acks.log"), encoding="utf-8") as handle:
        rows = [line.split() for line in handle if line.strip()]
    return sorted((int(row[0]), float(row[1]), row[2]) for row in rows)


@pytest.fixture(scope="module")
def timeline(drill):
    with open(os.path.join(drill["dir"], "timeline.json"), encoding="utf-8") as handle:
        return json.load(handle)


@pytest.fixture(scope="module")
def report(drill):
    with open(os.path.join(drill["dir"], "decision.json"), encoding="utf-8") as handle:
        return json.load(handle)


def status(sql, host):
    return dict(sql(host, "SHOW GLOBAL STATUS WHERE Variable_name LIKE 'wsrep_%' OR Variable_name = 'Uptime'"))


@pytest.mark.parametrize("node", NODES)
def test_cluster_is_back_with_three_synced_nodes(lab_hosts, sql, node):
    wsrep = status(sql, lab_hosts[node])
    assert (wsrep["wsrep_local_state_comment"], wsrep["wsrep_cluster_status"], wsrep["wsrep_cluster_size"]) == \
        ("Synced", "Primary", "3")


def test_the_writer_committed_in_every_phase_of_the_outage(drill, acks, timeline, lab_ips):
    """g1 before its kill; g2 or g3 after it (once Galera evicted g1); g3 alone after g2 stopped."""
    phases = {
        "on g1 before it was killed": [a for a in acks if a[1] < timeline["g1_killed"] and a[2] == lab_ips["g1"]],
        "on g2/g3 after g1 was killed": [a for a in acks if timeline["g1_killed"] < a[1] < timeline["g2_stopped"]
                                         and a[2] in (lab_ips["g2"], lab_ips["g3"])],
        "on g3 alone after g2 stopped": [a for a in acks if a[1] > timeline["g2_stopped"] and a[2] == lab_ips["g3"]],
    }
    print("writer:", drill["summary"])
    print("commits per phase:", {phase: len(rows) for phase, rows in phases.items()})
    for phase, rows in phases.items():
        assert len(rows) >= 300, "only %d commits %s" % (len(rows), phase)
    assert not [a for a in acks if a[1] > timeline["g1_killed"] and a[2] == lab_ips["g1"]], "g1 wrote after its kill"
    assert not [a for a in acks if a[1] > timeline["g2_stopped"] and a[2] == lab_ips["g2"]], "g2 wrote after its stop"


def test_positions_differ_g1_behind_g2_behind_g3(report):
    states = report["states"]
    print("positions:", {node: (state["seqno"], "recovered" if state["recovered"] else "grastate.dat")
                         for node, state in states.items()})
    assert states["g1"]["seqno"] < states["g2"]["seqno"] < states["g3"]["seqno"]
    assert states["g1"]["recovered"] and states["g3"]["recovered"], "a SIGKILL leaves seqno -1: --wsrep-recover"
    assert not states["g2"]["recovered"], "g2 stopped cleanly: its position comes from grastate.dat"


def test_the_node_that_bootstrapped_is_the_one_that_acknowledged_last(lab_hosts, lab_ips, sql, drill, acks, report):
    """The truth is the writer's record and the servers: the bootstrap node started first in the recovery, so
    its uptime is the longest (the others start one at a time after it is Synced)."""
    by_ip = {ip: node for node, ip in lab_ips.items()}
    last_writer = by_ip[acks[-1][2]]
    uptimes = {node: int(status(sql, lab_hosts[node])["Uptime"]) for node in NODES}
    started_first = max(uptimes, key=uptimes.get)
    decision = report["decision"]
    print("writer's ack log: last commit (id %d) acknowledged by %s" % (acks[-1][0], last_writer))
    print("uptimes after the recovery:", uptimes, "-> bootstrapped:", started_first)
    print("decision's report:", decision["decision"], decision["bootstrap_node"], "-", decision["reason"])
    assert last_writer == "g3", "the drill should leave g3 as the last writer, not %s" % last_writer
    assert sorted(uptimes.values())[-1] > sorted(uptimes.values())[-2], "no single node started first"
    assert started_first == last_writer, "%s bootstrapped, but %s acknowledged the last commit" % (
        started_first, last_writer)
    assert (decision["decision"], decision["bootstrap_node"]) == ("bootstrap", last_writer)


# About twice the slowest recovery measured on this 2-core kind with another scenario beside it (35-96 s).
RECOVERY_BOUND_S = 200


def test_recovery_time_is_reported_and_bounded(timeline):
    recovery = timeline["recovery_ended"] - timeline["recovery_started"]
    print("recovery: galera_recover.yml took %.1f s to three Synced nodes (%.1f s after g3 was killed; bound %d s)"
          % (recovery, timeline["recovery_ended"] - timeline["g3_killed"], RECOVERY_BOUND_S))
    assert 0 < recovery < RECOVERY_BOUND_S


@pytest.mark.parametrize("node", NODES)
def test_no_acknowledged_commit_is_lost(lab_hosts, sql, drill, node):
    present = {int(row[0]) for row in sql(lab_hosts[node], "SELECT id FROM app.counter")}
    missing = sorted(drill["acked"] - present)
    print("%s holds %d rows, %d acknowledged" % (node, len(present), len(drill["acked"])))
    assert not missing, "%s lost %d acknowledged rows, first %s" % (node, len(missing), missing[:10])
