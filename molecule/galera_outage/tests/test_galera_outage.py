"""After a staggered outage (g1 killed, g2 stopped cleanly, g3 writing alone then killed) and
playbooks/galera_recover.yml: three Synced nodes, bootstrapped from the node the writer's own record says
acknowledged the last commit, and every acknowledged commit on every node."""
import json
import os

import pytest

NODES = ("g1", "g2", "g3")


def acks_by_host(drill):
    counts = {}
    with open(os.path.join(drill["dir"], "acks.log"), encoding="utf-8") as handle:
        for line in handle:
            host = line.split()[2]
            counts[host] = counts.get(host, 0) + 1
    return counts


@pytest.fixture(scope="module")
def report(drill):
    with open(os.path.join(drill["dir"], "decision.json"), encoding="utf-8") as handle:
        return json.load(handle)


@pytest.mark.parametrize("node", NODES)
def test_cluster_is_back_with_three_synced_nodes(lab_hosts, sql, node):
    wsrep = dict(sql(lab_hosts[node], "SHOW GLOBAL STATUS LIKE 'wsrep_%'"))
    assert (wsrep["wsrep_local_state_comment"], wsrep["wsrep_cluster_status"], wsrep["wsrep_cluster_size"]) == \
        ("Synced", "Primary", "3")


def test_the_outage_was_staggered_so_positions_differ(drill, lab_ips, report):
    counts = acks_by_host(drill)
    print("writer:", drill["summary"], "acknowledged per node:", counts)
    for node in NODES:
        assert counts.get(lab_ips[node], 0) >= 100, "the writer never committed on %s" % node
    states = report["states"]
    print("positions:", {node: (state["seqno"], state["recovered"]) for node, state in states.items()})
    assert len({state["seqno"] for state in states.values()}) == 3, "the three positions should differ"
    assert not states["g2"]["recovered"], "g2 stopped cleanly: its position comes from grastate.dat"


def last_acknowledged_host(drill):
    """The host of the highest acknowledged id in the writer's ack log ("id epoch host" lines)."""
    with open(os.path.join(drill["dir"], "acks.log"), encoding="utf-8") as handle:
        return max((int(line.split()[0]), line.split()[2]) for line in handle if line.strip())[1]


def test_recovery_bootstrapped_the_node_that_acknowledged_last(drill, lab_ips, report):
    last = last_acknowledged_host(drill)
    by_ip = {ip: node for node, ip in lab_ips.items()}
    decision = report["decision"]
    print("writer's ack log: last commit acknowledged by", by_ip.get(last, last),
          "(summary says %s)" % by_ip.get(drill["summary"]["last_acked_host"]))
    print("decision:", decision["decision"], decision["bootstrap_node"], decision["reason"])
    assert drill["summary"]["last_acked_host"] == last
    assert last == lab_ips["g3"], "the drill should leave g3 as the last writer, not %s" % by_ip.get(last, last)
    assert decision["decision"] == "bootstrap"
    assert decision["bootstrap_node"] == by_ip[last]


def test_recovery_time_is_reported(drill):
    with open(os.path.join(drill["dir"], "recovery.json"), encoding="utf-8") as handle:
        seconds = json.load(handle)["seconds"]
    print("recovery (galera_recover.yml, from the last kill to three Synced nodes): %.1f s" % seconds)
    assert 0 < seconds < 600


@pytest.mark.parametrize("node", NODES)
def test_no_acknowledged_commit_is_lost(lab_hosts, sql, drill, node):
    present = {int(row[0]) for row in sql(lab_hosts[node], "SELECT id FROM app.counter")}
    missing = sorted(drill["acked"] - present)
    assert not missing, "%s lost %d acknowledged rows, first %s" % (node, len(missing), missing[:10])
