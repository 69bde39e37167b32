"""The one order of every engine's rolling operations (plugins/module_utils/rolling.py) and its filter."""
from ansible_collections.dbops.clusters.plugins.filter.rolling_order import rolling_order as rolling_order_filter
from ansible_collections.dbops.clusters.plugins.module_utils import galera_upgrade, mongodb_rs_plan, mysql_inputs
from ansible_collections.dbops.clusters.plugins.module_utils.rolling import rolling_order, source_depth


def test_the_member_taking_the_writes_goes_last_the_others_keep_their_order():
    assert rolling_order(["db1", "db2", "db3"], last="db1") == ["db2", "db3", "db1"]
    assert rolling_order(["db3", "db1", "db2"], last="db1") == ["db3", "db2", "db1"]


def test_without_a_writer_among_the_members_the_order_is_the_given_one():
    assert rolling_order(["db1", "db2"]) == ["db1", "db2"]
    assert rolling_order(["db2", "db3"], last="db1") == ["db2", "db3"]     # only the changed members restart
    assert rolling_order([], last="db1") == []


def test_each_member_is_taken_once():
    assert rolling_order(["db1", "db2", "db1"], last="db2") == ["db1", "db2"]


def test_a_chain_goes_deepest_replica_first_its_root_last():
    sources = {"src": "", "rep1": "src", "rep2": "rep1", "other": ""}
    assert source_depth("rep2", sources) == 2 and source_depth("src", sources) == 0
    assert rolling_order(["src", "rep1", "rep2", "other"], sources=sources) == ["rep2", "rep1", "src", "other"]


def test_a_source_loop_cannot_hang_the_order():
    sources = {"a": "b", "b": "a"}
    assert sorted(rolling_order(["a", "b"], sources=sources)) == ["a", "b"]


def test_every_engine_orders_through_it():
    """The planners that existed before keep their answers, now from rolling_order."""
    assert mysql_inputs.restart_order(["src", "rep1", "rep2"], {"src": "", "rep1": "src", "rep2": "rep1"}) \
        == ["rep2", "rep1", "src"]
    members = [{"name": "m3", "stateStr": "SECONDARY"}, {"name": "m1", "stateStr": "PRIMARY"},
               {"name": "m2", "stateStr": "SECONDARY"}]
    assert [step["host"] for step in mongodb_rs_plan.restart_order(members)] == ["m2", "m3", "m1"]
    state = {"wsrep": {"local_state_comment": "Synced", "cluster_status": "Primary", "cluster_size": 3,
                       "cluster_state_uuid": "u"}, "reason": "", "packages": {}}
    states = dict((member, dict(state, client_connections=count)) for member, count in
                  (("g1", 5), ("g2", 0), ("g3", 1)))
    assert galera_upgrade.plan_upgrade(["g1", "g2", "g3"], states, [], ["g1", "g2", "g3"])["order"] \
        == ["g2", "g3", "g1"]


def test_the_filter_takes_inventory_names_and_an_empty_writer():
    assert rolling_order_filter(["db1", "db2"], "db1") == ["db2", "db1"]
    assert rolling_order_filter(["db1", "db2"], "") == ["db1", "db2"]
    assert rolling_order_filter(["db1", "db2"], None) == ["db1", "db2"]
