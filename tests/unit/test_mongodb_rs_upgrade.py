"""The plain replica set's rolling upgrade plan (mongodb_rs_plan.plan_set_upgrade) and its filter."""
import pytest

from ansible_collections.dbops.clusters.plugins.module_utils import mongodb_rs_plan as plan
from ansible_collections.dbops.clusters.plugins.filter.mongodb_rs_upgrade_plan import mongodb_rs_upgrade_plan

A, B, C = "a:27017", "b:27017", "c:27017"


def status(*states):
    return [{"name": h, "stateStr": s} for h, s in zip((A, B, C), states)]


def config(**fields):
    return [dict({"_id": i, "host": h}, **fields.get(h, {})) for i, h in enumerate((A, B, C))]


def actions(result):
    return [(s["action"], s["host"]) for s in result["steps"]]


def test_secondaries_first_then_a_stepdown_then_the_old_primary():
    result = plan.plan_set_upgrade(status("PRIMARY", "SECONDARY", "SECONDARY"), config(),
                                   {A: "7.0.0", B: "7.0.0", C: "7.0.0"}, "7.0", "8.0")
    assert actions(result) == [("upgrade", B), ("upgrade", C), ("stepdown", A), ("upgrade", A), ("fcv_kept", None)]
    assert result["current"] == "7.0" and not result["raise_fcv"]
    assert "mongodb_rs_upgrade_raise_fcv=true" in result["steps"][-1]["reason"]


def test_a_run_that_stopped_half_way_skips_the_members_already_on_the_target():
    result = plan.plan_set_upgrade(status("SECONDARY", "PRIMARY", "SECONDARY"), config(),
                                   {A: "8.0.0", B: "7.0.0", C: "7.0.0"}, "7.0", "8.0")
    assert actions(result)[:4] == [("skip", A), ("upgrade", C), ("stepdown", B), ("upgrade", B)]
    done = plan.plan_set_upgrade(status("SECONDARY", "PRIMARY", "SECONDARY"), config(),
                                 {A: "8.0.0", B: "8.0.0", C: "8.0.0"}, "7.0", "8.0")
    assert actions(done) == [("skip", A), ("skip", B), ("skip", C), ("fcv_kept", None)] and done["order"] == []


def test_fcv_is_raised_only_on_request():
    versions = {A: "8.0.0", B: "8.0.0", C: "8.0.0"}
    asked = plan.plan_set_upgrade(status("PRIMARY", "SECONDARY", "SECONDARY"), config(), versions, "7.0", "8.0",
                                  raise_fcv=True)
    assert asked["raise_fcv"] and actions(asked)[-1] == ("fcv", None)
    assert not plan.plan_set_upgrade(status("PRIMARY", "SECONDARY", "SECONDARY"), config(), versions, "8.0", "8.0",
                                     raise_fcv=True)["raise_fcv"]


@pytest.mark.parametrize("versions, fcv, target, message", [
    ({A: "6.0.1", B: "6.0.1", C: "6.0.1"}, "6.0", "8.0",
     "Supported path: 6.0 -> 7.0 -> 8.0; run the upgrade once per release (target 7.0 first)"),
    # the intermediate release's binaries are there but its FCV was not raised: never skipped
    ({A: "7.0.1", B: "7.0.1", C: "7.0.1"}, "6.0", "8.0", "featureCompatibilityVersion is 6.0 but the binaries run 7.0"),
    ({A: "8.0.0", B: "8.0.0", C: "8.0.0"}, "8.0", "7.0", "a downgrade"),
    ({A: "7.0.1", B: "7.0.1", C: "9.0.0"}, "7.0", "8.0", "unknown releases: c:27017 9.0.0"),
    ({A: "7.0.1", B: "7.0.1"}, "7.0", "8.0", "no version read from c:27017"),
])
def test_refusals_before_any_change(versions, fcv, target, message):
    with pytest.raises(plan.PlanError) as refused:
        plan.plan_set_upgrade(status("PRIMARY", "SECONDARY", "SECONDARY"), config(), versions, fcv, target)
    assert message in str(refused.value)


def test_an_unhealthy_set_and_members_outside_the_inventory_group_are_refused():
    versions = {A: "7.0.0", B: "7.0.0", C: "7.0.0"}
    with pytest.raises(plan.PlanError) as refused:
        plan.plan_set_upgrade(status("PRIMARY", "SECONDARY", "(not reachable/healthy)"), config(), versions, "7.0",
                              "8.0", set_name="rs0")
    assert str(refused.value).startswith("replica set rs0 is not ready") and "c:27017 is (not reachable" in str(
        refused.value)
    with pytest.raises(plan.PlanError) as refused:
        plan.plan_set_upgrade(status("PRIMARY", "SECONDARY", "SECONDARY"), config(), versions, "7.0", "8.0",
                              inventory_members=[A, B])
    assert "c:27017 is in the set's config but not in the inventory group" in str(refused.value)
    with pytest.raises(plan.PlanError):
        plan.plan_set_upgrade(status("SECONDARY", "SECONDARY", "SECONDARY"), config(), versions, "7.0", "8.0")


def test_hidden_delayed_and_priority_zero_members_are_upgraded_like_secondaries_but_never_take_over():
    states = status("PRIMARY", "SECONDARY", "SECONDARY")
    versions = {A: "7.0.0", B: "7.0.0", C: "7.0.0"}
    hidden = config(**{B: {"priority": 0, "hidden": True, "secondaryDelaySecs": 3600}, C: {"priority": 0}})
    with pytest.raises(plan.PlanError) as refused:
        plan.plan_set_upgrade(states, hidden, versions, "7.0", "8.0")
    assert "cannot be stepped down" in str(refused.value) and "mongodb_rs_allow_downtime=true" in str(refused.value)
    allowed = plan.plan_set_upgrade(states, hidden, versions, "7.0", "8.0", allow_downtime=True)
    assert actions(allowed)[:3] == [("upgrade", B), ("upgrade", C), ("upgrade", A)]
    assert "in place" in allowed["steps"][2]["reason"]
    one_electable = plan.plan_set_upgrade(states, config(**{B: {"priority": 0, "hidden": True}}), versions, "7.0",
                                          "8.0")
    assert actions(one_electable)[:4] == [("upgrade", B), ("upgrade", C), ("stepdown", A), ("upgrade", A)]


def test_a_one_member_set_only_with_downtime_allowed():
    one = [{"name": A, "stateStr": "PRIMARY"}]
    with pytest.raises(plan.PlanError) as refused:
        plan.plan_set_upgrade(one, [{"_id": 0, "host": A}], {A: "7.0.0"}, "7.0", "8.0")
    assert "only member" in str(refused.value)
    allowed = plan.plan_set_upgrade(one, [{"_id": 0, "host": A}], {A: "7.0.0"}, "7.0", "8.0", allow_downtime=True)
    assert actions(allowed)[0] == ("upgrade", A) and allowed["order"][0]["in_place"]


def state(me, version, primary=False):
    out = {"me": me, "version": version, "is_primary": primary, "set_name": "rs0", "fcv": "7.0"}
    if primary:
        out.update(members=[{"name": h, "state": "PRIMARY" if h == me else "SECONDARY"} for h in (A, B, C)],
                   config={"members": config()})
    return out


def test_filter_on_mongodb_rs_state_results():
    result = mongodb_rs_upgrade_plan([state(A, "7.0.0"), state(B, "7.0.0", True), state(C, "8.0.0")], "8.0")
    assert result["error"] is None
    assert actions(result)[:4] == [("upgrade", A), ("skip", C), ("stepdown", B), ("upgrade", B)]
    outside = mongodb_rs_upgrade_plan([state(A, "7.0.0"), state(B, "7.0.0", True)], "8.0")
    assert "c:27017 is in the set's config but not in the inventory group" in outside["error"]
    # the secondaries in the order the play visits them (the group's), the primary last
    visited = mongodb_rs_upgrade_plan([state(C, "7.0.0"), state(B, "7.0.0", True), state(A, "7.0.0")], "8.0")
    assert actions(visited)[:4] == [("upgrade", C), ("upgrade", A), ("stepdown", B), ("upgrade", B)]
    none = mongodb_rs_upgrade_plan([state(A, "7.0.0"), state(B, "7.0.0")], "8.0")
    assert none["error"].startswith("0 members of the inventory group say they are PRIMARY")
