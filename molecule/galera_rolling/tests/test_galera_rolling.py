"""After a rolling restart under continuous writes: three Synced nodes, each restarted while the writer ran,
every acknowledged row on every node, and the number of failed commits reported."""
import pytest

NODES = ("g1", "g2", "g3")


def test_writer_kept_writing_through_the_restarts(drill):
    summary = drill["summary"]
    print("rolling restart: %d commits acknowledged, %d failed (%s)" % (
        summary["acked"], summary["failed_commits"], summary["failures"]))
    assert summary["acked"] > 200


@pytest.mark.parametrize("node", NODES)
def test_every_node_restarted_while_the_writer_ran_and_is_synced(lab_hosts, sql, drill, node):
    wsrep = dict(sql(lab_hosts[node], "SHOW GLOBAL STATUS LIKE 'wsrep_%'"))
    assert (wsrep["wsrep_local_state_comment"], wsrep["wsrep_cluster_size"]) == ("Synced", "3")
    uptime = int(sql(lab_hosts[node], "SHOW GLOBAL STATUS LIKE 'Uptime'")[0][1])
    assert uptime < drill["summary"]["seconds"] + 10, "%s was not restarted during the writer's run" % node


@pytest.mark.parametrize("node", NODES)
def test_every_acknowledged_row_is_on_every_node(lab_hosts, sql, drill, node):
    present = {int(row[0]) for row in sql(lab_hosts[node], "SELECT id FROM app.counter")}
    missing = sorted(drill["acked"] - present)
    assert not missing, "%s lacks %d acknowledged rows, first %s" % (node, len(missing), missing[:10])


@pytest.mark.parametrize("node", NODES)
def test_the_role_handler_restarted_each_member_for_its_static_change(lab_hosts, sql, node):
    assert sql(lab_hosts[node], "SELECT @@table_open_cache_instances") == [["3"]]
    wsrep = dict(sql(lab_hosts[node], "SHOW GLOBAL STATUS LIKE 'wsrep_%'"))
    assert (wsrep["wsrep_local_state_comment"], wsrep["wsrep_cluster_size"]) == ("Synced", "3")
