"""After a full SIGKILL outage and playbooks/galera_recover.yml: three Synced nodes, and every commit the
writer saw acknowledged is on every node."""
import json
import os

import pytest

NODES = ("g1", "g2", "g3")
DRILL = os.path.join(os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", ""), "drill")


def sql(host, query):
    result = host.run("mariadb -N -B -e %s", query)
    assert result.rc == 0, result.stderr
    return [line.split("\t") for line in result.stdout.splitlines()]


@pytest.mark.parametrize("node", NODES)
def test_cluster_is_back_with_three_synced_nodes(lab_hosts, node):
    wsrep = dict(sql(lab_hosts[node], "SHOW GLOBAL STATUS LIKE 'wsrep_%'"))
    assert (wsrep["wsrep_local_state_comment"], wsrep["wsrep_cluster_status"], wsrep["wsrep_cluster_size"]) == \
        ("Synced", "Primary", "3")


def test_the_writer_wrote_and_then_lost_every_node():
    with open(os.path.join(DRILL, "writer.json"), encoding="utf-8") as handle:
        summary = json.load(handle)
    print("writer:", summary)
    assert summary["acked"] >= 500
    assert summary["failed_commits"] > 0      # the kill happened while it wrote


def test_recovery_bootstrapped_from_the_most_advanced_node():
    with open(os.path.join(DRILL, "decision.json"), encoding="utf-8") as handle:
        report = json.load(handle)
    decision, states = report["decision"], report["states"]
    print("decision:", decision["decision"], decision["bootstrap_node"], decision["reason"])
    print("positions:", {node: (state["seqno"], state["recovered"]) for node, state in states.items()})
    assert decision["decision"] == "bootstrap"
    assert all(state["recovered"] for state in states.values()), "a crash leaves seqno -1: positions must be recovered"
    assert states[decision["bootstrap_node"]]["seqno"] == max(state["seqno"] for state in states.values())


@pytest.mark.parametrize("node", NODES)
def test_no_acknowledged_row_is_lost(lab_hosts, node):
    with open(os.path.join(DRILL, "acks.txt"), encoding="utf-8") as handle:
        acked = {int(line) for line in handle if line.strip()}
    present = {int(row[0]) for row in sql(lab_hosts[node], "SELECT id FROM app.counter")}
    missing = sorted(acked - present)
    assert not missing, "%s lost %d acknowledged rows, first %s" % (node, len(missing), missing[:10])
