"""The rolling upgrade plan of an async GTID topology (module_utils/mysql_upgrade.py, filter mysql_upgrade_plan)."""
import pytest

from ansible_collections.dbops.clusters.plugins.filter.mysql_upgrade_plan import mysql_upgrade_plan
from ansible_collections.dbops.clusters.plugins.module_utils import mysql_upgrade

MEMBERS = ["src", "rep1", "rep2"]
DECLARED = {"src": "", "rep1": "src", "rep2": "src"}
NAMES = ["mysql-server-core", "mysql-server"]
OLD = "9.7.3-1"
NEW = "9.7.4-2"
UUIDS = {"src": "aaaaaaaa-0000-0000-0000-000000000001", "rep1": "aaaaaaaa-0000-0000-0000-000000000002",
         "rep2": "aaaaaaaa-0000-0000-0000-000000000003", "rep3": "aaaaaaaa-0000-0000-0000-000000000004"}


def state(name, source="", replicas=(), io="Yes", sql="Yes", sql_error="", running=True):
    replica = None
    if source:
        replica = {"source_uuid": UUIDS[source], "source_host": "10.0.0.1", "source_port": 3306, "io_running": io,
                   "sql_running": sql, "io_error": "", "sql_error": sql_error, "lag": 0}
    return {"running": running, "server_uuid": UUIDS[name], "read_only": bool(source),
            "super_read_only": bool(source), "gtid_executed": "", "replica": replica,
            "replicas": [UUIDS[r] for r in replicas]}


def packages(installed=OLD, target=NEW, wanted=None, available=None):
    return dict((package, {"installed": installed, "target": target, "wanted": wanted,
                           "available": available if available is not None else [NEW, OLD]}) for package in NAMES)


def states(**overrides):
    value = {"src": {"state": state("src", replicas=("rep1", "rep2")), "packages": packages()},
             "rep1": {"state": state("rep1", "src"), "packages": packages()},
             "rep2": {"state": state("rep2", "src"), "packages": packages()}}
    value.update(overrides)
    return value


def plan(value=None, in_play=None, members=None, declared=None):
    return mysql_upgrade.plan_upgrade(members or MEMBERS, value if value is not None else states(), NAMES,
                                      in_play or members or MEMBERS, declared or DECLARED, "mysql")


def test_the_replicas_first_the_source_last():
    result = plan()
    assert result["refusals"] == []
    assert result["order"] == ["rep1", "rep2", "src"]
    assert result["source"] == "src"
    assert result["steps"] == {"src": "upgrade", "rep1": "upgrade", "rep2": "upgrade"}
    assert result["changes"]["rep1"]["mysql-server-core"] == [OLD, NEW]
    assert result["target_version"] == "9.7.4"
    assert "hands its writes to an upgraded replica" in result["why"]


def test_a_chain_goes_deepest_first():
    members = MEMBERS + ["rep3"]
    declared = dict(DECLARED, rep3="rep1")
    value = states(rep1={"state": state("rep1", "src", replicas=("rep3",)), "packages": packages()},
                   rep3={"state": state("rep3", "rep1"), "packages": packages()})
    result = plan(value, members=members, declared=declared)
    assert result["refusals"] == [] and result["order"] == ["rep3", "rep1", "rep2", "src"]


def test_servers_on_the_target_are_skipped_so_a_second_run_resumes():
    value = states(rep1={"state": state("rep1", "src"), "packages": packages(installed=NEW)})
    result = plan(value)
    assert result["refusals"] == []
    assert result["steps"] == {"src": "upgrade", "rep1": "skip", "rep2": "upgrade"}
    assert result["changes"]["rep1"] == {}


def test_a_server_outside_the_play_is_refused_naming_the_group_variable():
    result = plan(in_play=["src", "rep1"])
    assert any("rep2 (members of percona_server_group=mysql) are outside the play" in r for r in result["refusals"])


def test_a_server_down_is_refused():
    value = states(rep2={"state": {"running": False}, "packages": packages()})
    assert any(r.startswith("rep2: no MySQL server answers") for r in plan(value)["refusals"])


def test_a_live_topology_that_contradicts_the_inventory_is_refused():
    # after a switchover to rep1 the inventory still names src the source
    value = {"src": {"state": state("src", "rep1"), "packages": packages()},
             "rep1": {"state": state("rep1", replicas=("src", "rep2")), "packages": packages()},
             "rep2": {"state": state("rep2", "rep1"), "packages": packages()}}
    refusals = plan(value)["refusals"]
    assert any("src: the inventory makes it a source (no percona_server_source) but it replicates from rep1" in r
               and "playbooks/mysql_switchover.yml" in r for r in refusals), refusals


def test_broken_replication_is_refused():
    value = states(rep1={"state": state("rep1", "src", sql="No", sql_error="Duplicate entry"), "packages": packages()})
    refusals = plan(value)["refusals"]
    assert any("rep1: replication from src is not healthy (I/O thread Yes, SQL thread No: Duplicate entry)" in r
               for r in refusals), refusals


def test_a_version_the_source_lacks_and_a_downgrade_are_refused():
    value = states(rep1={"state": state("rep1", "src"),
                         "packages": packages(target=None, wanted="9.7.9-1", available=[OLD])},
                   rep2={"state": state("rep2", "src"), "packages": packages(installed=NEW, target=OLD)})
    refusals = plan(value)["refusals"]
    assert any("rep1: the package source has no mysql-server-core 9.7.9-1 (percona_server_upgrade_versions)" in r
               for r in refusals), refusals
    assert any("rep2: mysql-server-core %s is newer than the target %s" % (NEW, OLD) in r for r in refusals), refusals


@pytest.mark.parametrize("installed, target, refused", [
    ("8.4.3-1", "8.4.6-1", None),
    ("8.4.3-1", "9.7.4-1", None),
    ("8.0.40-1", "9.7.4-1", "skips the LTS series between them"),
    ("8.4.3-1", "9.1.0-1", "9.1 is not an LTS series"),
])
def test_the_jump_follows_mysqls_upgrade_paths(installed, target, refused):
    value = dict((name, {"state": entry["state"], "packages": packages(installed=installed, target=target,
                                                                       available=[installed, target])})
                 for name, entry in states().items())
    refusals = [r for r in plan(value)["refusals"] if "percona_server_upgrade_release" in r]
    if refused:
        assert len(refusals) == 1 and refused in refusals[0], refusals
    else:
        assert refusals == []


def test_every_reason_at_once():
    value = states(rep2={"state": {"running": False}, "packages": packages(target=None, wanted="1.0")})
    refusals = plan(value, in_play=["src", "rep2"])["refusals"]
    assert len(refusals) >= 3, refusals


def test_the_filter_passes_everything_through():
    result = mysql_upgrade_plan(MEMBERS, states(), NAMES, MEMBERS, DECLARED, "mysql")
    assert result["order"] == ["rep1", "rep2", "src"] and result["refusals"] == []
