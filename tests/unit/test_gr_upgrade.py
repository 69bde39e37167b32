"""The rolling upgrade plan of a Group Replication group (module_utils/gr_upgrade.py, filter gr_upgrade_plan)."""
import copy

import pytest

from ansible_collections.dbops.clusters.plugins.filter.gr_upgrade_plan import gr_upgrade_plan
from ansible_collections.dbops.clusters.plugins.module_utils import gr_upgrade as gu
from ansible_collections.dbops.clusters.plugins.module_utils import package_upgrade

MEMBERS = ["gr1", "gr2", "gr3"]
NAMES = ["mysql-server-core", "mysql-server"]
OLD = "9.7.3-1"
NEW = "9.7.4-2"
UUIDS = {"gr1": "11111111-1111-1111-1111-111111111111", "gr2": "22222222-2222-2222-2222-222222222222",
         "gr3": "33333333-3333-3333-3333-333333333333"}
ADDRESSES = {"gr1": "10.0.0.1", "gr2": "10.0.0.2", "gr3": "10.0.0.3"}


def view(primary="gr2", states=None):
    states = states or {}
    return [{"member_id": UUIDS[name], "host": ADDRESSES[name], "port": 3306, "state": states.get(name, "ONLINE"),
             "role": "PRIMARY" if name == primary else "SECONDARY", "version": "9.7.3"} for name in MEMBERS]


def member(name, installed=OLD, target=NEW, running="9.7.3", primary="gr2", wanted=None, available=None, **state):
    report = {"running": True, "server_uuid": UUIDS[name], "member_state": "ONLINE",
              "member_role": "PRIMARY" if name == primary else "SECONDARY", "group_name": "g-uuid",
              "single_primary_mode": True, "version": running, "view": view(primary)}
    report.update(state)
    return {"state": report, "error": None,
            "packages": dict((package, {"installed": installed, "target": target, "wanted": wanted,
                                        "available": available if available is not None else [NEW, OLD]})
                             for package in NAMES)}


def states(**overrides):
    value = dict((name, member(name)) for name in MEMBERS)
    value.update(overrides)
    return value


def plan(value=None, in_play=None):
    return gu.plan_upgrade(MEMBERS, value if value is not None else states(), NAMES, in_play or MEMBERS, "gr")


def test_the_secondaries_first_the_primary_last():
    result = plan()
    assert result["refusals"] == []
    assert result["primary"] == "gr2"
    assert result["order"] == ["gr1", "gr3", "gr2"]
    assert result["steps"] == {"gr1": "upgrade", "gr2": "upgrade", "gr3": "upgrade"}
    assert result["changes"]["gr1"]["mysql-server-core"] == [OLD, NEW]
    assert result["target_version"] == "9.7.4"
    assert "gr2 is the PRIMARY" in result["why"]


def test_the_primary_is_read_from_the_servers_not_the_inventory():
    value = dict((name, member(name, primary="gr1")) for name in MEMBERS)
    assert plan(value)["order"] == ["gr2", "gr3", "gr1"]


def test_a_new_server_version_cannot_be_handed_over_to_and_the_group_elects():
    """MySQL refuses set_as_primary to a member above the lowest version: the primary leaves, the group elects."""
    handover = plan()["handover"]
    assert handover["mode"] == "election"
    assert "lowest server version" in handover["why"] and "20.5.1.1 Changing the Primary" in handover["why"]


def test_a_rebuild_that_keeps_the_server_version_is_handed_over_by_a_planned_switch():
    value = dict((name, member(name, installed="9.7.4-1", target="9.7.4-2", running="9.7.4")) for name in MEMBERS)
    result = plan(value)
    assert result["refusals"] == []
    assert result["handover"]["mode"] == "switch"


def test_a_second_run_skips_the_members_already_upgraded_and_the_primary_still_goes_last():
    value = states(gr1=member("gr1", installed=NEW, running="9.7.4"), gr3=member("gr3", installed=NEW, running="9.7.4"))
    result = plan(value)
    assert result["refusals"] == []
    assert result["steps"] == {"gr1": "skip", "gr2": "upgrade", "gr3": "skip"}
    assert result["order"][-1] == "gr2"


def test_a_group_already_on_the_target_skips_everyone_and_moves_no_primary():
    value = dict((name, member(name, installed=NEW, running="9.7.4")) for name in MEMBERS)
    result = plan(value)
    assert result["refusals"] == []
    assert set(result["steps"].values()) == {"skip"}
    assert result["handover"]["mode"] == "none"


def test_a_member_outside_the_play_is_refused_naming_the_group_variable():
    result = plan({"gr1": member("gr1")}, in_play=["gr1"])
    assert result["refusals"][0].startswith("gr2, gr3 (members of group_replication_group=gr) are outside the play")


def test_members_outside_the_play_are_found_in_the_view_by_their_address():
    """Not read, they are still in the group's view: that is the one reason, not a view without them."""
    result = gu.plan_upgrade(MEMBERS, {"gr1": member("gr1")}, NAMES, ["gr1"], "gr", addresses=ADDRESSES)
    assert len(result["refusals"]) == 1, result["refusals"]
    assert gr_upgrade_plan(MEMBERS, {"gr1": member("gr1")}, NAMES, ["gr1"], "gr", ADDRESSES)["refusals"] \
        == result["refusals"]


@pytest.mark.parametrize("member_state", ["RECOVERING", "ERROR", "OFFLINE"])
def test_a_member_not_online_is_refused(member_state):
    value = states(gr3=member("gr3", member_state=member_state))
    for name in MEMBERS:
        value[name]["state"]["view"] = view(states={"gr3": member_state})
    result = plan(value)
    assert "gr3 is %s, not ONLINE" % member_state in result["refusals"][0]
    assert any("the group's view (from gr1): gr3 is %s" % member_state in refusal for refusal in result["refusals"])


def test_a_stopped_server_is_refused():
    value = states(gr1=dict(member("gr1"), state={"running": False}, error="Can't connect"))
    assert any(refusal.startswith("gr1: the server does not answer (Can't connect)") for refusal in plan(value)["refusals"])


def test_an_incomplete_view_is_refused():
    value = states()
    for name in MEMBERS:
        value[name]["state"]["view"] = [entry for entry in view() if entry["host"] != ADDRESSES["gr3"]]
    assert "the group's view (from gr1): gr3 is not in the group's view" in plan(value)["refusals"]


def test_a_target_the_source_does_not_have_is_refused_naming_the_variable():
    value = states(gr1=member("gr1", target=None, wanted="9.7.99-1"))
    refusals = plan(value)["refusals"]
    assert ("gr1: the package source has no mysql-server-core 9.7.99-1 (group_replication_upgrade_versions) "
            "(available: %s, %s)" % (NEW, OLD)) in refusals


def test_a_downgrade_is_refused_even_when_the_source_lacks_the_version_asked_for():
    value = dict((name, member(name, installed=NEW, target=None, wanted="1.0", running="9.7.4")) for name in MEMBERS)
    refusals = plan(value)["refusals"]
    assert len(refusals) == 6
    assert all("a downgrade, refused" in refusal and "group_replication_upgrade_versions" in refusal
               for refusal in refusals)


def test_a_downgrade_the_source_has_is_refused():
    value = states(gr1=member("gr1", installed=NEW, target=OLD, running="9.7.4", wanted=OLD))
    assert sum("a downgrade, refused" in refusal for refusal in plan(value)["refusals"]) == 2


@pytest.mark.parametrize("current, target, words", [
    ((8, 0, 40), (8, 0, 41), None),
    ((8, 4, 3), (8, 4, 7), None),
    ((8, 0, 40), (8, 4, 3), None),            # LTS to the next LTS
    ((8, 4, 3), (9, 7, 4), None),
    ((8, 0, 40), (9, 7, 4), "skips the LTS series between them"),
    ((8, 4, 3), (9, 3, 0), "9.3 is not an LTS series"),
    ((9, 3, 0), (9, 7, 4), "the servers run 9.3, not an LTS series"),
    ((9, 7, 4), (9, 7, 3), None),             # a downgrade: the package check names it
])
def test_the_jump_follows_mysqls_upgrade_paths(current, target, words):
    refusal = gu.jump_refusal(current, target)
    if words is None:
        assert refusal is None
    else:
        assert words in refusal and "3.2 Upgrade Paths" in refusal and "group_replication_upgrade_release" in refusal


def test_an_unsupported_jump_is_refused_in_the_plan():
    value = dict((name, member(name, installed="8.0.40-1", target="9.7.4-2", running="8.0.40")) for name in MEMBERS)
    assert any("skips the LTS series between them" in refusal for refusal in plan(value)["refusals"])


def test_a_server_not_restarted_since_its_package_changed_is_refused():
    value = states(gr1=member("gr1", installed=NEW, running="9.7.3"))
    assert any(refusal.startswith("gr1 runs 9.7.3 but its mysql-server-core package is 9.7.4")
               for refusal in plan(value)["refusals"])


def test_every_reason_at_once():
    value = {"gr1": member("gr1", installed=NEW, target=None, wanted="1.0", running="9.7.4", member_state="RECOVERING")}
    refusals = plan(value, in_play=["gr1"])["refusals"]
    assert refusals[0].startswith("gr2, gr3 (members of group_replication_group=gr)")
    assert any("gr1 is RECOVERING" in refusal for refusal in refusals)
    assert sum("a downgrade, refused" in refusal for refusal in refusals) == 2


def test_a_group_with_a_member_the_inventory_does_not_name_is_refused():
    value = states()
    extra = {"member_id": "44444444-4444-4444-4444-444444444444", "host": "10.0.0.4", "state": "ONLINE",
             "role": "SECONDARY"}
    for name in MEMBERS:
        value[name]["state"]["view"] = view() + [extra]
    assert any("not in group_replication_group=gr (10.0.0.4)" in refusal for refusal in plan(value)["refusals"])


def test_multi_primary_keeps_the_groups_order():
    value = states()
    for name in MEMBERS:
        value[name]["state"].update(single_primary_mode=False, member_role="PRIMARY")
        value[name]["state"]["view"] = [dict(entry, role="PRIMARY") for entry in view()]
    result = plan(value)
    assert result["refusals"] == [] and result["order"] == MEMBERS and result["primary"] is None
    assert "multi-primary" in result["why"]


def test_the_filter_takes_what_ansible_hands_it():
    assert gr_upgrade_plan(MEMBERS, copy.deepcopy(states()), NAMES, MEMBERS, "gr")["order"] == ["gr1", "gr3", "gr2"]


def test_the_galera_plan_shares_the_package_step():
    """One member step for every engine: the Galera plan refuses a downgrade asked for the same way."""
    from ansible_collections.dbops.clusters.plugins.module_utils import galera_upgrade
    assert galera_upgrade.member_step is package_upgrade.member_step
    step, changes, refusals = package_upgrade.member_step(
        "g1", {"galera-4": {"installed": "26.4.27-1", "target": None, "wanted": "26.4.1-1", "available": []}},
        ["galera-4"])
    assert step == "skip" and changes == {} and "a downgrade, refused" in refusals[0]
