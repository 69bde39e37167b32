"""After a rolling restart under continuous writes: three Synced nodes, every acknowledged row on every node,
and the number of failed commits reported."""
import json
import os

import pytest

NODES = ("g1", "g2", "g3")
DRILL = os.path.join(os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", ""), "drill")


def sql(host, query):
    result = host.run("mariadb -N -B -e %s", query)
    assert result.rc == 0, result.stderr
    return [line.split("\t") for line in result.stdout.splitlines()]


def test_writer_kept_writing_through_the_restarts():
    with open(os.path.join(DRILL, "writer.json"), encoding="utf-8") as handle:
        summary = json.load(handle)
    print("rolling restart: %d commits acknowledged, %d failed (%s)" % (
        summary["acked"], summary["failed_commits"], summary["failures"]))
    assert summary["acked"] > 200


@pytest.mark.parametrize("node", NODES)
def test_every_node_restarted_while_the_writer_ran_and_is_synced(lab_hosts, node):
    with open(os.path.join(DRILL, "writer.json"), encoding="utf-8") as handle:
        writer_seconds = json.load(handle)["seconds"]
    wsrep = dict(sql(lab_hosts[node], "SHOW GLOBAL STATUS LIKE 'wsrep_%'"))
    assert (wsrep["wsrep_local_state_comment"], wsrep["wsrep_cluster_size"]) == ("Synced", "3")
    uptime = int(sql(lab_hosts[node], "SHOW GLOBAL STATUS LIKE 'Uptime'")[0][1])
    assert uptime < writer_seconds + 10, "%s was not restarted during the writer's run" % node


@pytest.mark.parametrize("node", NODES)
def test_every_acknowledged_row_is_on_every_node(lab_hosts, node):
    with open(os.path.join(DRILL, "acks.txt"), encoding="utf-8") as handle:
        acked = {int(line) for line in handle if line.strip()}
    present = {int(row[0]) for row in sql(lab_hosts[node], "SELECT id FROM app.counter")}
    missing = sorted(acked - present)
    assert not missing, "%s lacks %d acknowledged rows, first %s" % (node, len(missing), missing[:10])
