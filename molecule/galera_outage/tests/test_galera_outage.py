"""After a full SIGKILL outage and playbooks/galera_recover.yml: three Synced nodes, bootstrapped from the most
advanced one, and every commit the writer saw acknowledged is on every node."""
import json
import os

import pytest

NODES = ("g1", "g2", "g3")


@pytest.mark.parametrize("node", NODES)
def test_cluster_is_back_with_three_synced_nodes(lab_hosts, sql, node):
    wsrep = dict(sql(lab_hosts[node], "SHOW GLOBAL STATUS LIKE 'wsrep_%'"))
    assert (wsrep["wsrep_local_state_comment"], wsrep["wsrep_cluster_status"], wsrep["wsrep_cluster_size"]) == \
        ("Synced", "Primary", "3")


def test_the_writer_wrote_and_then_lost_every_node(drill):
    print("writer:", drill["summary"])
    assert drill["summary"]["acked"] >= 500
    assert drill["summary"]["failed_commits"] > 0      # the kill happened while it wrote


def test_recovery_bootstrapped_from_the_most_advanced_node(drill):
    with open(os.path.join(drill["dir"], "decision.json"), encoding="utf-8") as handle:
        report = json.load(handle)
    decision, states = report["decision"], report["states"]
    print("decision:", decision["decision"], decision["bootstrap_node"], decision["reason"])
    print("positions:", {node: (state["seqno"], state["recovered"]) for node, state in states.items()})
    assert decision["decision"] == "bootstrap"
    assert all(state["recovered"] for state in states.values()), "a crash leaves seqno -1: positions must be recovered"
    assert states[decision["bootstrap_node"]]["seqno"] == max(state["seqno"] for state in states.values())


@pytest.mark.parametrize("node", NODES)
def test_no_acknowledged_row_is_lost(lab_hosts, sql, drill, node):
    present = {int(row[0]) for row in sql(lab_hosts[node], "SELECT id FROM app.counter")}
    missing = sorted(drill["acked"] - present)
    assert not missing, "%s lost %d acknowledged rows, first %s" % (node, len(missing), missing[:10])
