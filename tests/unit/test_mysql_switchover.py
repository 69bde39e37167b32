"""mysql_switchover: the live source, the switchover plan and the converge refusal after a switchover."""
import pytest

from ansible_collections.dbops.clusters.plugins.module_utils.mysql_flavors import replication_terms
from ansible_collections.dbops.clusters.plugins.modules import mysql_switchover as module
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_switchover import (
    converge_conflicts, live_source, plan)

U = {"src": "aaaaaaaa-0000-0000-0000-000000000001", "rep1": "aaaaaaaa-0000-0000-0000-000000000002",
     "rep2": "aaaaaaaa-0000-0000-0000-000000000003"}


def source(gtid="aaaaaaaa-0000-0000-0000-000000000001:1-100", replicas=("rep1", "rep2"), name="src",
           read_only=False):
    return {"running": True, "server_uuid": U[name], "read_only": read_only, "super_read_only": read_only,
            "gtid_executed": gtid, "replica": None, "replicas": [U[r] for r in replicas]}


def replica(name, gtid="aaaaaaaa-0000-0000-0000-000000000001:1-100", of="src", lag=0, io="Yes", sql="Yes",
            sql_error=""):
    return {"running": True, "server_uuid": U[name], "read_only": True, "super_read_only": True,
            "gtid_executed": gtid, "replicas": [],
            "replica": {"source_uuid": U[of], "source_host": "10.0.0.1", "source_port": 3306, "io_running": io,
                        "sql_running": sql, "io_error": "", "sql_error": sql_error, "lag": lag}}


def cluster(**changes):
    states = {"src": source(), "rep1": replica("rep1"), "rep2": replica("rep2")}
    states.update(changes)
    return states


def test_the_source_is_read_from_the_servers_not_the_names():
    states = {"src": replica("src", of="rep2"), "rep1": replica("rep1", of="rep2"),
              "rep2": source(name="rep2", replicas=("src", "rep1"))}
    assert live_source(states) == ("rep2", None)


def test_two_writable_roots_are_refused():
    states = cluster(rep1=source(name="rep1", replicas=()))
    name, error = live_source(states)
    assert name is None and "two sources" in error


def test_a_switchover_to_a_named_replica():
    result = plan(cluster(), "rep2")
    assert result["errors"] == []
    assert (result["phase"], result["source"], result["target"]) == ("switchover", "src", "rep2")
    assert result["fence"] == ["src"] and result["promote"] == "rep2" and result["repoint"] == ["src", "rep1"]
    # the old source read-only first, the target writable last
    assert result["steps"][0].startswith("src: read_only") and "writable last" in result["steps"][2]


def test_without_a_target_the_most_caught_up_replica_is_chosen_and_why():
    states = cluster(rep1=replica("rep1", gtid="aaaaaaaa-0000-0000-0000-000000000001:1-90", lag=1))
    result = plan(states)
    assert result["target"] == "rep2"
    assert "rep2 misses 0" in result["reason"] and "rep1 misses 10" in result["reason"]


def test_ties_go_to_the_smaller_lag_then_the_name():
    assert plan(cluster())["target"] == "rep1"
    assert plan(cluster(rep1=replica("rep1", lag=3)))["target"] == "rep2"


def test_errant_gtid_on_the_target_is_refused():
    errant = "aaaaaaaa-0000-0000-0000-000000000001:1-100,aaaaaaaa-0000-0000-0000-000000000002:1-2"
    result = plan(cluster(rep1=replica("rep1", gtid=errant)), "rep1")
    assert any(e.startswith("errant GTID on rep1: aaaaaaaa-0000-0000-0000-000000000002:1-2") for e in result["errors"])
    assert result["phase"] is None


def test_broken_or_lagging_replication_is_refused():
    broken = plan(cluster(rep2=replica("rep2", sql="No", sql_error="Duplicate entry")), "rep1")
    assert any("rep2: I/O thread Yes, SQL thread No: Duplicate entry" in e for e in broken["errors"])
    lagging = plan(cluster(rep1=replica("rep1", lag=120)), "rep1", 60)
    assert any("rep1: lag 120 s, limit 60 s" in e for e in lagging["errors"])


def test_a_target_outside_the_group_is_refused():
    result = plan(cluster(), "nobody")
    assert result["errors"] == ["mysql_switchover_target=nobody: not a member (members: rep1, rep2, src)"]


def test_cascaded_replica_is_refused():
    result = plan(cluster(rep2=replica("rep2", of="rep1")), "rep1")
    assert any("rep2 replicates from rep1" in e for e in result["errors"])


def test_a_member_down_is_refused():
    result = plan(cluster(rep2={"running": False}), "rep1")
    assert result["errors"] == ["rep2: no MySQL server answers; every member must run for a switchover"]


def test_a_switchover_stopped_after_the_promotion_is_finished():
    # rep1 promoted (writable, no source), src fenced (read-only, no source), rep2 still follows src
    states = {"src": source(read_only=True, replicas=("rep2",)), "rep1": source(name="rep1", replicas=()),
              "rep2": replica("rep2")}
    result = plan(states)
    assert result["errors"] == []
    assert (result["phase"], result["source"], result["target"]) == ("resume", "rep1", "rep1")
    assert result["repoint"] == ["rep2", "src"] and result["fence"] == [] and result["promote"] is None
    assert "half-way" in plan(states, "rep2")["errors"][0]


def test_a_fenced_source_whose_switchover_never_promoted_is_still_the_source():
    states = cluster(src=source(read_only=True))
    assert live_source(states) == ("src", None)
    assert plan(states, "rep1")["phase"] == "switchover"


def test_the_plan_names_the_replicas_that_follow_the_source():
    # a rolling restart hands a source's writes over only where replicas follow it (not on a first converge)
    assert plan(cluster())["following"] == ["rep1", "rep2"]
    first_converge = {"src": source(replicas=()), "rep1": dict(replica("rep1"), replica=None, read_only=False),
                      "rep2": dict(replica("rep2"), replica=None, read_only=False)}
    assert plan(first_converge)["following"] == []


def test_nothing_to_do_when_the_target_already_is_the_source():
    assert plan(cluster(), "src")["phase"] == "done"


DECLARED = {"src": "", "rep1": "src", "rep2": "src"}


def test_converge_agrees_with_the_topology_it_built():
    assert converge_conflicts(DECLARED, cluster()) == []


def test_converge_on_a_first_install_has_nothing_to_compare():
    fresh = {"src": {"running": False}, "rep1": source(name="rep1", replicas=()),
             "rep2": source(name="rep2", replicas=())}
    assert converge_conflicts(DECLARED, fresh) == []


def test_converge_after_a_switchover_names_each_mismatch():
    after = {"src": replica("src", of="rep1"), "rep1": source(name="rep1", replicas=("src", "rep2")),
             "rep2": replica("rep2", of="rep1")}
    assert converge_conflicts(DECLARED, after) == [
        "rep1: the inventory makes it a replica of src but it is a source, rep2, src replicate from it",
        "rep2: the inventory makes it a replica of src but it replicates from rep1",
        "src: the inventory makes it a source (no percona_server_source) but it replicates from rep1"]


def test_converge_limited_to_one_replica_still_sees_it_follows_another_host():
    elsewhere = dict(replica("rep2")["replica"], source_uuid="x", source_host="10.0.0.12")
    after = {"rep2": dict(replica("rep2", of="rep1"), replica=elsewhere)}
    assert converge_conflicts(DECLARED, after, {"rep1": "10.0.0.12", "src": "10.0.0.11"}) == [
        "rep2: the inventory makes it a replica of src but it replicates from rep1"]


class FakeSession:
    """A MySQL 9.7 server in a given state; records the statements run."""

    def __init__(self, read_only=False, replica=False, gtid="aaaaaaaa-0000-0000-0000-000000000001:1-100",
                 check_mode=False):
        self.read_only, self.replica, self.gtid, self.check_mode, self.queries = read_only, replica, gtid, check_mode, []

    def variables(self, names):
        on = "ON" if self.read_only else "OFF"
        return {"server_uuid": U["rep1"], "read_only": on, "super_read_only": on, "gtid_executed": self.gtid,
                "gtid_mode": "ON"}

    def fetch(self, query, args=None):
        if query == "SHOW REPLICA STATUS" and self.replica:
            return [{"Source_UUID": U["src"], "Source_Host": "10.0.0.11", "Source_Port": 3306,
                     "Replica_IO_Running": "Yes", "Replica_SQL_Running": "Yes", "Seconds_Behind_Source": 0,
                     "Last_IO_Error": "", "Last_SQL_Error": "", "Auto_Position": 1}]
        return []

    def value(self, query, args=None):
        return "0"

    def execute(self, query, args=None):
        self.queries.append(query)


def run(session, step, gtid_set=None):
    return module.run_step(session, {"step": step, "gtid_set": gtid_set, "timeout": 5},
                           replication_terms("mysql", "9.7.0"))


def test_fence_makes_the_source_read_only_and_persists_it():
    session = FakeSession()
    assert run(session, "fence")[0] == "fence"
    assert session.queries == ["SET PERSIST read_only = ON", "SET PERSIST super_read_only = ON"]
    again = FakeSession(read_only=True)
    assert run(again, "fence")[0] == "none" and again.queries == []


def test_promote_removes_replication_before_it_makes_the_server_writable():
    session = FakeSession(read_only=True, replica=True)
    assert run(session, "promote", "aaaaaaaa-0000-0000-0000-000000000001:1-100")[0] == "promote"
    assert session.queries == ["STOP REPLICA", "RESET REPLICA ALL", "SET PERSIST super_read_only = OFF",
                               "SET PERSIST read_only = OFF"]


def test_promote_refuses_a_replica_that_lacks_the_old_sources_transactions():
    session = FakeSession(read_only=True, replica=True, gtid="aaaaaaaa-0000-0000-0000-000000000001:1-90")
    with pytest.raises(ValueError, match="aaaaaaaa-0000-0000-0000-000000000001:91-100 of the old source"):
        run(session, "promote", "aaaaaaaa-0000-0000-0000-000000000001:1-100")
    assert session.queries == []


def test_unfence_refuses_a_replica():
    with pytest.raises(ValueError, match="refusing to make a replica writable"):
        run(FakeSession(read_only=True, replica=True), "unfence")


def test_a_replica_read_after_the_source_committed_more_is_not_errant():
    # read one after another under writes: the replica already applied src:101-105 the source was read without
    later = replica("rep1", gtid="aaaaaaaa-0000-0000-0000-000000000001:1-105")
    assert plan(cluster(rep1=later), "rep1")["errors"] == []


def test_a_server_running_without_the_roles_driver_is_not_compared():
    """A server installed by hand (running, no PyMySQL yet: the role installs it) was not built by the role, so
    the live-topology check before the first change leaves it out instead of failing or guessing."""
    from ansible_collections.dbops.clusters.plugins.filter.mysql_live_topology_conflicts import (
        mysql_live_topology_conflicts)
    hostvars = {"src": {"percona_server_live": {"state": {"running": True, "read": False}}},
                "rep1": {"percona_server_source": "src",
                         "percona_server_live": {"state": {"running": True, "read": False}}}}
    assert mysql_live_topology_conflicts(None, hostvars, ["src", "rep1"], "percona_server_live") == []
    # the same two servers read after a switchover to rep1: refused
    hostvars["src"]["percona_server_live"] = {"state": {
        "running": True, "server_uuid": "u-src", "replicas": [],
        "replica": {"source_uuid": "u-rep1", "source_host": "10.0.0.12", "source_port": 3306}}}
    hostvars["rep1"]["percona_server_live"] = {"state": {"running": True, "server_uuid": "u-rep1", "replica": None,
                                                         "replicas": ["u-src"]}}
    conflicts = mysql_live_topology_conflicts(None, hostvars, ["src", "rep1"], "percona_server_live")
    assert any(c.startswith("src: the inventory makes it a source") for c in conflicts), conflicts
