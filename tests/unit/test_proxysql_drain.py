"""proxysql_drain's plan (module_utils/proxysql_admin.py drain_plan): weight 0 to drain, the saved weights to
put a backend back, refusals before any change."""
import pytest

from ansible_collections.dbops.clusters.plugins.module_utils.proxysql_admin import DrainError, drain_plan


def rows(*spec):
    return [{"hostgroup_id": str(hg), "hostname": host, "port": "3306", "weight": str(weight)}
            for hg, host, weight in spec]


# The proxysql role's Galera rows: every member in the writer hostgroup, heaviest first.
GALERA = rows((10, "g1", 10000000), (10, "g2", 100000), (10, "g3", 1000))


def test_a_drain_sets_weight_zero_on_every_row_of_the_backend():
    statements, reason = drain_plan("drained", "g1", 3306, GALERA, GALERA)
    assert statements == [("UPDATE mysql_servers SET weight=0 WHERE hostname=%s AND port=%s", ("g1", 3306))]
    assert "10000000 in hostgroup 10" in reason


def test_a_drained_backend_is_left_alone():
    memory = rows((10, "g1", 0), (10, "g2", 100000), (10, "g3", 1000))
    assert drain_plan("drained", "g1", 3306, memory, GALERA)[0] == []


def test_a_backend_the_proxy_does_not_have_is_refused():
    with pytest.raises(DrainError, match="g9:3306 is not a backend of this proxy"):
        drain_plan("drained", "g9", 3306, GALERA, GALERA)
    with pytest.raises(DrainError, match="not a backend"):
        drain_plan("drained", "g1", 3307, GALERA, GALERA)


def test_a_drain_that_leaves_a_hostgroup_without_a_server_is_refused():
    # async replication: the source alone in the writer hostgroup, readers elsewhere
    replication = rows((10, "src", 1000), (20, "src", 1000), (20, "rep1", 1000))
    with pytest.raises(DrainError, match="only server of hostgroup 10"):
        drain_plan("drained", "src", 3306, replication, replication)
    assert drain_plan("drained", "rep1", 3306, replication, replication)[0]      # a reader has others beside it
    # the other members drained already: nothing left to serve
    with pytest.raises(DrainError, match="only server of hostgroup 10"):
        drain_plan("drained", "g3", 3306, rows((10, "g1", 0), (10, "g2", 0), (10, "g3", 1000)), GALERA)


def test_online_puts_back_the_saved_weights_only_where_they_differ():
    memory = rows((10, "g1", 0), (20, "g1", 5), (10, "g2", 100000))
    disk = rows((10, "g1", 10000000), (20, "g1", 5), (10, "g2", 100000))
    statements, reason = drain_plan("online", "g1", 3306, memory, disk)
    assert statements == [("UPDATE mysql_servers SET weight=%s WHERE hostgroup_id=%s AND hostname=%s AND port=%s",
                           (10000000, 10, "g1", 3306))]
    assert "10000000 in hostgroup 10" in reason
    assert drain_plan("online", "g1", 3306, disk, disk)[0] == []


def test_online_without_a_saved_weight_is_refused():
    memory = rows((10, "g1", 0), (10, "g2", 100000))
    with pytest.raises(DrainError, match="no saved row for hostgroup 10"):
        drain_plan("online", "g1", 3306, memory, rows((10, "g2", 100000)))


def runtime(*spec):
    return [{"hostgroup_id": str(hg), "hostname": host, "port": "3306", "weight": str(weight), "status": status}
            for hg, host, weight, status in spec]


def test_a_writer_only_the_runtime_has_in_its_hostgroup_is_refused():
    """Group Replication with the super_read_only monitor: every member is declared a reader, the monitor alone
    puts the primary in the writer hostgroup. Draining it would leave the writes nowhere to go."""
    declared = rows((20, "gr1", 1000), (20, "gr2", 1000), (20, "gr3", 1000))
    live = runtime((10, "gr1", 1000, "ONLINE"), (20, "gr1", 1000, "ONLINE"), (20, "gr2", 1000, "ONLINE"),
                   (20, "gr3", 1000, "ONLINE"))
    with pytest.raises(DrainError, match="only server of runtime hostgroup 10"):
        drain_plan("drained", "gr1", 3306, declared, declared, live)
    assert drain_plan("drained", "gr2", 3306, declared, declared, live)[0]        # a secondary can go


def test_the_galera_writer_can_be_drained_the_monitor_keeps_the_others_as_candidates():
    """ProxySQL's Galera monitor keeps the other members in the writer hostgroup as SHUNNED: candidates."""
    live = runtime((10, "g1", 10000000, "ONLINE"), (10, "g2", 100000, "SHUNNED"), (10, "g3", 1000, "SHUNNED"),
                   (12, "g2", 100000, "ONLINE"), (12, "g3", 1000, "ONLINE"), (20, "g2", 100000, "ONLINE"),
                   (20, "g3", 1000, "ONLINE"))
    assert drain_plan("drained", "g1", 3306, GALERA, GALERA, live)[0]
    assert drain_plan("drained", "g2", 3306, GALERA, GALERA, live)[0]
    gone = runtime((10, "g1", 10000000, "ONLINE"), (10, "g2", 100000, "OFFLINE_HARD"), (10, "g3", 0, "SHUNNED"))
    with pytest.raises(DrainError, match="only server of runtime hostgroup 10"):
        drain_plan("drained", "g1", 3306, GALERA, GALERA, gone)
