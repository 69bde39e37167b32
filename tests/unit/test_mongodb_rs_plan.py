"""The pure MongoDB planners: member validation, reconfiguration steps, health verdicts, upgrade order."""
import datetime

import pytest

from ansible_collections.dbops.clusters.plugins.module_utils import mongodb_rs_plan as plan


def members(*hosts, **overrides):
    out = []
    for index, host in enumerate(hosts):
        member = {"_id": index, "host": host}
        member.update(overrides.get(host, {}))
        out.append(member)
    return out


def voters(step_members):
    return {m["host"] for m in step_members if m["votes"]}


def replay(current, steps):
    """Check every step against the server's safe-reconfig rule and return the final member list."""
    state = [plan.normalize_member(m) for m in current]
    for step in steps:
        if "stepdown" in step:
            continue
        before, after = voters(state), voters(step["members"])
        assert len(before ^ after) <= 1, "step %r changes %s" % (step["summary"], before ^ after)
        assert len(after) <= plan.MAX_VOTING
        plan.validate_members(step["members"])
        ids = [m["_id"] for m in step["members"]]
        assert len(ids) == len(set(ids))
        state = step["members"]
    return state


H = ["db%d:27017" % i for i in range(1, 10)]


@pytest.mark.parametrize("current, desired", [
    (H[:1], H[:3]),              # 1 -> 3
    (H[:3], H[:5]),              # expand 3 -> 5 in one run
    (H[:5], H[:3]),              # shrink 5 -> 3
    (H[:3], H[:7]),              # up to the voting limit
    (H[:3], [H[0], H[3], H[4]]),  # replace two members
    (H[:7], H[2:9]),             # replace at the 7-voter limit: removal first
    (H[:3], H[:3]),              # nothing to do
])
def test_every_step_changes_at_most_one_voter_and_ends_at_the_desired_set(current, desired):
    steps = plan.plan_reconfig(members(*current), [{"host": h} for h in desired])
    final = replay(members(*current), steps)
    assert plan.members_match(final, [{"host": h} for h in desired])
    assert len(steps) == len(set(current) ^ set(desired))
    ids = dict((m["host"], m["_id"]) for m in members(*current))
    assert all(m["_id"] == ids[m["host"]] for m in final if m["host"] in ids)


def test_expansion_adds_before_removing():
    steps = plan.plan_reconfig(members(*H[:3]), [{"host": h} for h in (H[0], H[3], H[4])])
    assert [s["summary"].split()[0] for s in steps] == ["add", "remove", "add", "remove"]


def test_attribute_changes_come_first_in_one_step():
    current = members(*H[:3])
    desired = [{"host": H[0], "priority": 2}, {"host": H[1], "tags": {"dc": "b"}},
               {"host": H[2], "hidden": True, "priority": 0}, {"host": H[3]}]
    steps = plan.plan_reconfig(current, desired)
    assert len(steps) == 2
    first = dict((m["host"], m) for m in steps[0]["members"])
    assert first[H[0]]["priority"] == 2 and first[H[2]]["hidden"] and H[3] not in first
    assert voters(steps[1]["members"]) == set(H[:4])


def test_non_voting_members_join_with_the_attribute_step():
    steps = plan.plan_reconfig(members(*H[:3]), [{"host": h} for h in H[:3]] + [
        {"host": H[3], "votes": 0, "priority": 0}, {"host": H[4], "votes": 0, "priority": 0}])
    assert len(steps) == 1
    replay(members(*H[:3]), steps)


def test_changing_votes_is_a_voter_change():
    steps = plan.plan_reconfig(members(*H[:3]), [{"host": H[0]}, {"host": H[1]},
                                                 {"host": H[2], "votes": 0, "priority": 0}])
    assert [s["summary"] for s in steps] == ["make %s non-voting" % H[2]]


def test_a_primary_that_must_leave_steps_down_first():
    steps = plan.plan_reconfig(members(*H[:3]), [{"host": h} for h in H[1:3]], primary=H[0])
    assert steps[0] == {"stepdown": H[0], "summary": steps[0]["summary"]}
    assert [s["summary"] for s in steps[1:]] == ["remove voting member %s" % H[0]]
    steps = plan.plan_reconfig(members(*H[:3]), [{"host": H[0], "priority": 0}, {"host": H[1]}, {"host": H[2]}],
                               primary=H[0])
    assert "stepdown" in steps[0]


def test_members_leaving_with_the_primary_lose_their_priority_before_it_steps_down():
    """5 -> 3 without the primary db1 and db2: the step-down must not hand the primary to db2."""
    current = members(*H[:5])
    steps = plan.plan_reconfig(current, [{"host": h} for h in H[2:5]], primary=H[0])
    assert [s["summary"].split(" ")[0] for s in steps] == ["priority", "step", "remove", "remove"], steps
    lowered = dict((m["host"], m["priority"]) for m in steps[0]["members"])
    assert lowered == {H[0]: 1.0, H[1]: 0.0, H[2]: 1.0, H[3]: 1.0, H[4]: 1.0}
    assert steps[1] == {"stepdown": H[0], "summary": steps[1]["summary"]}
    assert plan.members_match(replay(current, steps), [{"host": h} for h in H[2:5]])
    # Planned again after the priority step (as the module does), it steps down at once.
    again = plan.plan_reconfig(steps[0]["members"], [{"host": h} for h in H[2:5]], primary=H[0])
    assert "stepdown" in again[0]


def test_new_members_get_free_ids():
    current = members(*H[:3])
    current[1]["_id"] = 5
    steps = plan.plan_reconfig(current, [{"host": h} for h in H[:5]])
    ids = [m["_id"] for m in steps[-1]["members"]]
    assert sorted(ids) == [0, 1, 2, 3, 5]


@pytest.mark.parametrize("desired, message", [
    ([], "at least one member"),
    ([{"host": "db1"}], "members[0].host must be host:port"),
    ([{"host": H[0]}, {"host": H[0]}], "members[1].host"),
    ([{"host": H[0]}, {"host": H[1], "votes": 0, "priority": 1}], "members[1].priority must be 0 for a non-voting"),
    ([{"host": H[0]}, {"host": H[1], "hidden": True, "priority": 1}], "members[1].priority must be 0 for a hidden"),
    ([{"host": H[0]}, {"host": H[1], "arbiterOnly": True, "priority": 1}], "must be 0 for an arbiter"),
    ([{"host": H[0], "votes": 2}], "members[0].votes must be 0 or 1"),
    ([{"host": h} for h in H[:8]], "8 voting members"),
    ([{"host": H[0], "priority": 0}], "no electable member"),
    ([{"host": H[0], "priority": 1001}], "between 0 and 1000"),
])
def test_invalid_desired_members_are_refused_naming_the_option(desired, message):
    with pytest.raises(plan.PlanError) as failure:
        plan.plan_reconfig(members(*H[:3]), desired)
    assert message in str(failure.value)


def test_hidden_members_default_to_priority_zero():
    assert plan.normalize_member({"host": H[0], "hidden": True})["priority"] == 0
    assert plan.normalize_member({"host": H[0], "votes": 0})["priority"] == 0


def status(*states, lag=0):
    now = datetime.datetime(2026, 1, 1, 12, 0, 0)
    out = []
    for index, state in enumerate(states):
        behind = lag if state == "SECONDARY" and index == len(states) - 1 else 0
        out.append({"name": H[index], "stateStr": state, "optimeDate": now - datetime.timedelta(seconds=behind)})
    return {"members": out}


def test_health_verdicts():
    assert plan.health_problems(status("PRIMARY", "SECONDARY", "SECONDARY"), 10, 3, True) == []
    assert plan.health_problems(status("PRIMARY", "SECONDARY", "ARBITER"), 10) == []
    problems = plan.health_problems(status("PRIMARY", "SECONDARY", "(not reachable/healthy)"), 10)
    assert problems == ["%s is (not reachable/healthy)" % H[2]]
    assert "0 members are PRIMARY" in plan.health_problems(status("SECONDARY", "SECONDARY"), 10)[0]
    lagging = plan.health_problems(status("PRIMARY", "SECONDARY", "SECONDARY", lag=30), 10)
    assert lagging == ["%s lags the primary by 30.0s (limit 10s)" % H[2]]
    assert plan.health_problems(status("PRIMARY", "SECONDARY"), 10, 3) == ["the config has 2 members, expected 3"]
    assert "not committed" in plan.health_problems(status("PRIMARY", "SECONDARY", "SECONDARY"), 10, None, False)[0]


def test_restart_order_puts_the_primary_last_after_a_stepdown():
    order = plan.restart_order(status("SECONDARY", "PRIMARY", "SECONDARY")["members"])
    assert order == [{"host": H[0], "stepdown": False, "in_place": False},
                     {"host": H[2], "stepdown": False, "in_place": False},
                     {"host": H[1], "stepdown": True, "in_place": False}]
    with pytest.raises(plan.PlanError):
        plan.restart_order(status("SECONDARY", "SECONDARY")["members"])


def test_sharded_upgrade_order():
    cfg = [{"name": "cfg%d:27019" % i, "stateStr": s} for i, s in enumerate(("PRIMARY", "SECONDARY", "SECONDARY"))]
    shard_b = [{"name": "b%d:27018" % i, "stateStr": s} for i, s in enumerate(("SECONDARY", "PRIMARY"))]
    shard_a = [{"name": "a%d:27018" % i, "stateStr": s} for i, s in enumerate(("SECONDARY", "SECONDARY", "PRIMARY"))]
    steps = plan.upgrade_order(cfg, {"shardB": shard_b, "shardA": shard_a}, ["mongos2:27017", "mongos1:27017"])
    flat = [(s["action"], s.get("host")) for s in steps]
    assert flat == [
        ("balancer_stop", None),
        ("upgrade", "cfg1:27019"), ("upgrade", "cfg2:27019"), ("stepdown", "cfg0:27019"), ("upgrade", "cfg0:27019"),
        ("upgrade", "a0:27018"), ("upgrade", "a1:27018"), ("stepdown", "a2:27018"), ("upgrade", "a2:27018"),
        ("upgrade", "b0:27018"), ("stepdown", "b1:27018"), ("upgrade", "b1:27018"),
        ("upgrade", "mongos1:27017"), ("upgrade", "mongos2:27017"),
        ("balancer_start", None)]


def test_upgrade_path_is_one_release_at_a_time():
    assert plan.upgrade_path("6.0", "8.0") == ["7.0", "8.0"]
    assert plan.upgrade_path("8.0", "8.0") == []
    with pytest.raises(plan.PlanError):
        plan.upgrade_path("8.0", "7.0")
    with pytest.raises(plan.PlanError):
        plan.upgrade_path("5.0", "8.0")


@pytest.mark.parametrize("fcv, binary, allowed", [("7.0", "8.0", True), ("8.0", "8.0", True),
                                                  ("6.0", "8.0", False), ("8.0", "7.0", False)])
def test_fcv_allows_binary(fcv, binary, allowed):
    assert plan.fcv_allows_binary(fcv, binary) is allowed


NEW = {"isWritablePrimary": False, "setName": "rs0", "info": "Does not have a valid replica set config"}
OLD = {"isWritablePrimary": False, "setName": "rs0", "setVersion": 3, "primary": "db2:27017"}


@pytest.mark.parametrize("answers, action, text", [
    ({H[0]: NEW, H[1]: NEW, H[2]: NEW}, "initiate", "none of the 3 members has a config"),
    ({H[0]: NEW, H[1]: OLD, H[2]: OLD}, "exists", "seen on db2:27017, db3:27017"),   # the first host is new
    ({H[0]: NEW, H[1]: "connection refused", H[2]: dict(OLD, primary=None)}, "exists", "seen on db3:27017"),
    ({H[0]: NEW, H[1]: NEW, H[2]: "connection refused"}, "refuse", "db3:27017 did not answer"),
    ({H[0]: NEW, H[1]: dict(NEW, setName="other"), H[2]: NEW}, "refuse", "db2:27017 runs with another replSetName"),
])
def test_initiate_only_when_every_member_answered_without_a_config(answers, action, text):
    decision = plan.initiate_decision("rs0", answers, local=H[0])
    assert decision["action"] == action and text in decision["reason"], decision
    if action == "exists":   # read from the primary the initiated members name, else from one that answered
        assert decision["source"] == ("db2:27017" if answers[H[1]] == OLD else "db3:27017")


def test_caught_up_needs_the_primary_position_from_when_the_gate_started():
    from bson import Timestamp

    def status(mine, primarys, my_state="SECONDARY"):
        return {"members": [
            {"name": "db1:27017", "stateStr": "PRIMARY", "optime": {"ts": Timestamp(100, primarys), "t": 2}},
            {"name": "db2:27017", "stateStr": my_state, "self": True, "optime": {"ts": Timestamp(100, mine), "t": 2}}]}
    target = plan.primary_optime(status(1, 7))
    assert target == (2, 100, 7)
    assert "has applied up to (2, 100, 1)" in plan.caught_up_problem(status(1, 9), target)
    assert plan.caught_up_problem(status(7, 9), target) is None      # the primary moved on: not required
    assert plan.caught_up_problem(status(8, 8, "STARTUP2"), target) == "db2:27017 is STARTUP2"
    assert plan.primary_optime({"members": [{"name": "db1:27017", "stateStr": "SECONDARY", "self": True}]}) is None


def test_a_delayed_member_is_judged_against_its_configured_delay():
    """A member delayed by an hour is an hour behind by design: the gate passes it while it is within its delay
    plus max_lag_seconds, and still fails it when it is further behind, or when a member without a delay lags."""
    config = [{"host": H[0]}, {"host": H[1]},
              {"host": H[2], "priority": 0, "hidden": True, "secondaryDelaySecs": 3600}]
    delayed = status("PRIMARY", "SECONDARY", "SECONDARY", lag=3605)
    assert plan.health_problems(delayed, 10, 3, True, config) == []
    assert plan.health_problems(delayed, 10, 3, True) == ["%s lags the primary by 3605.0s (limit 10s)" % H[2]]
    stuck = status("PRIMARY", "SECONDARY", "SECONDARY", lag=3700)
    assert plan.health_problems(stuck, 10, 3, True, config) == [
        "%s lags the primary by 3700.0s (limit 10s beyond its secondaryDelaySecs of 3600s)" % H[2]]
    # The delay is that member's only: an undelayed member lagging 3605 s still fails.
    other = [dict(config[0]), dict(config[1], secondaryDelaySecs=3600), dict(config[2], secondaryDelaySecs=0)]
    assert len(plan.health_problems(delayed, 10, 3, True, other)) == 1
    # slaveDelay, the field's name before MongoDB 5.0, counts the same.
    assert plan.health_problems(delayed, 10, 3, True, [{"host": H[2], "slaveDelay": 3600}]) == []


def test_a_restarted_delayed_member_is_caught_up_within_its_delay():
    from bson import Timestamp
    now = datetime.datetime(2026, 1, 1, 12, 0, 0)

    def seen(behind):
        return {"members": [
            {"name": "db1:27017", "stateStr": "PRIMARY", "optime": {"ts": Timestamp(200, 1), "t": 2},
             "optimeDate": now},
            {"name": "db2:27017", "stateStr": "SECONDARY", "self": True, "optime": {"ts": Timestamp(100, 1), "t": 2},
             "optimeDate": now - datetime.timedelta(seconds=behind)}]}
    config = [{"host": "db1:27017"}, {"host": "db2:27017", "priority": 0, "secondaryDelaySecs": 60}]
    target = (2, 200, 1)
    assert plan.caught_up_problem(seen(65), target, config, 10) is None
    assert "more than its delay plus 10s" in plan.caught_up_problem(seen(75), target, config, 10)
    # Without its config the same member never reaches the primary's position from the gate's start.
    assert "has applied up to" in plan.caught_up_problem(seen(65), target)


CFG = [{"name": "cfg%d:27019" % i, "stateStr": s} for i, s in enumerate(("SECONDARY", "PRIMARY"))]
SHARD = {"s1": [{"name": "s%d:27018" % i, "stateStr": s} for i, s in enumerate(("PRIMARY", "SECONDARY"))]}


def summary(steps):
    return [(s["release"], s["action"], s.get("host") or s.get("version")) for s in steps]


def test_upgrade_plan_two_releases_raises_the_intermediate_fcv_and_the_last_only_when_asked():
    kept = plan.plan_upgrade(CFG, SHARD, ["r1:27017"], "6.0", "8.0", fcv="6.0", raise_fcv=False)
    one_release = [("balancer_stop", None), ("upgrade", "cfg0:27019"), ("stepdown", "cfg1:27019"),
                   ("upgrade", "cfg1:27019"), ("upgrade", "s1:27018"), ("stepdown", "s0:27018"),
                   ("upgrade", "s0:27018"), ("upgrade", "r1:27017"), ("balancer_start", None)]
    assert summary(kept) == ([("7.0",) + s for s in one_release] + [("7.0", "fcv", "7.0")]
                             + [("8.0",) + s for s in one_release])
    raised = plan.plan_upgrade(CFG, SHARD, ["r1:27017"], "6.0", "8.0", fcv="6.0", raise_fcv=True)
    assert summary(raised) == summary(kept) + [("8.0", "fcv", "8.0")]
    # Every binary step runs on data whose FCV the new binary supports.
    fcv = "6.0"
    for step in raised:
        if step["action"] == "fcv":
            fcv = step["version"]
        elif step["action"] == "upgrade":
            assert plan.fcv_allows_binary(fcv, step["release"]), step


@pytest.mark.parametrize("current, target, fcv, message", [
    ("7.0", "8.0", "6.0", "featureCompatibilityVersion is 6.0 but the binaries run 7.0: set it to 7.0"),
    ("8.0", "7.0", "8.0", "a downgrade from 8.0 to 7.0"),
])
def test_upgrade_plan_refusals(current, target, fcv, message):
    with pytest.raises(plan.PlanError, match=message):
        plan.plan_upgrade(CFG, SHARD, [], current, target, fcv=fcv, raise_fcv=True)


def test_upgrade_plan_to_the_running_release_raises_only_fcv_and_only_when_asked():
    assert plan.plan_upgrade(CFG, SHARD, [], "8.0", "8.0", fcv="7.0", raise_fcv=False) == []
    assert plan.plan_upgrade(CFG, SHARD, [], "8.0", "8.0", fcv="8.0", raise_fcv=True) == []
    assert plan.plan_upgrade(CFG, SHARD, [], "8.0", "8.0", fcv="7.0", raise_fcv=True) == [
        {"action": "fcv", "version": "8.0", "release": "8.0"}]
    with pytest.raises(plan.PlanError, match="cannot be raised to 8.0 in one step"):
        plan.plan_upgrade(CFG, SHARD, [], "8.0", "8.0", fcv="6.0", raise_fcv=True)


# Members as replSetGetStatus reports them, with their config fields merged (plan.merge_config).
KINDS = {"P": {"stateStr": "PRIMARY"}, "S": {"stateStr": "SECONDARY"},
         "A": {"stateStr": "ARBITER", "arbiterOnly": True, "votes": 1, "priority": 0},
         "H": {"stateStr": "SECONDARY", "hidden": True, "priority": 0},
         "Z": {"stateStr": "SECONDARY", "priority": 0},                       # priority 0
         "D": {"stateStr": "SECONDARY", "priority": 0, "hidden": True, "secondaryDelaySecs": 3600},
         "N": {"stateStr": "SECONDARY", "votes": 0, "priority": 0},           # non-voting
         "R": {"stateStr": "RECOVERING"}}


def layout(config_states, shard_states, routers):
    """replSetGetStatus-like members: config_states a string of KINDS letters, shard_states {name: string}."""
    cfg = [dict(KINDS[c], name="cfg%d:27019" % i) for i, c in enumerate(config_states)]
    shards = dict((shard, [dict(KINDS[c], name="%s-%d:27018" % (shard, i)) for i, c in enumerate(states)])
                  for shard, states in shard_states.items())
    return cfg, shards, ["mongos%d:27017" % i for i in range(routers)]


def handover_possible(states):
    return any(c == "S" for c in states)


LAYOUTS = [
    ("P", {"sh1": "P"}, 1),                                   # one-member sets
    ("PSS", {"sh1": "SPS"}, 1),                               # the lab's shape
    ("SSP", {"sh1": "SSSSP", "sh2": "PSA"}, 2),               # five members, an arbiter
    ("SPSSS", {"a": "SP", "b": "PSS", "c": "SSPHH"}, 3),      # three shards, hidden members
    ("PSSSSSS", {"z": "SSSSSSP", "y": "P"}, 0),               # seven voters, no router, a one-member shard
    ("PSS", {"pa": "PA", "ph": "HP", "pz": "ZPN", "pd": "DP"}, 1),  # shards whose primary cannot hand over
    ("PZ", {"ok": "SP"}, 1),                                  # a config set whose only secondary has priority 0
]


@pytest.mark.parametrize("cfg_states, shard_states, routers", LAYOUTS)
@pytest.mark.parametrize("allow_downtime", [False, True])
def test_upgrade_order_invariants_on_many_layouts(cfg_states, shard_states, routers, allow_downtime):
    cfg, shards, router_names = layout(cfg_states, shard_states, routers)
    stuck = sorted(name for name, states in [("config", cfg_states)] + list(shard_states.items())
                   if not handover_possible(states))
    if stuck and not allow_downtime:
        # Refused, naming the first set (config, then shards by name), the downtime and the variable.
        with pytest.raises(plan.PlanError) as refused:
            plan.upgrade_order(cfg, shards, router_names)
        first = "config" if "config" in stuck else stuck[0]
        assert "replica set %s: the primary" % first in str(refused.value)
        assert "without a primary" in str(refused.value) and "mongodb_rs_allow_downtime=true" in str(refused.value)
        return
    steps = plan.upgrade_order(cfg, shards, router_names, allow_downtime=allow_downtime)
    flat = [(s["action"], s.get("replica_set"), s.get("host")) for s in steps]
    assert flat[0] == ("balancer_stop", None, None) and flat[-1] == ("balancer_start", None, None)
    upgrades = [(rs, host) for action, rs, host in flat if action == "upgrade"]
    # Every member and router exactly once.
    expected = ([("config", m["name"]) for m in cfg] + [(name, m["name"]) for name in shards for m in shards[name]]
                + [(None, r) for r in router_names])
    assert sorted(upgrades, key=str) == sorted(expected, key=str)
    # Config servers first, then each shard as a block in name order, then the routers.
    blocks = [rs for rs, _host in upgrades]
    assert blocks == ["config"] * len(cfg) + sum(([n] * len(shards[n]) for n in sorted(shards)), []) + [None] * routers
    # In each set the primary is upgraded last, right after its own step-down, and only it steps down; a
    # primary that cannot hand over (allowed downtime) is upgraded last, in place, without a step-down.
    for name, members in [("config", cfg)] + list(shards.items()):
        primary = [m["name"] for m in members if m["stateStr"] == "PRIMARY"][0]
        mine = [(action, host) for action, rs, host in flat if rs == name]
        in_place = [s["host"] for s in steps if s.get("replica_set") == name and s.get("in_place")]
        if name in stuck:
            assert mine[-1] == ("upgrade", primary) and in_place == [primary]
            assert [a for a, _h in mine].count("stepdown") == 0
        else:
            assert mine[-2:] == [("stepdown", primary), ("upgrade", primary)] and in_place == []
            assert [a for a, _h in mine].count("stepdown") == 1


@pytest.mark.parametrize("cfg_states, shard_states, routers", LAYOUTS)
@pytest.mark.parametrize("raise_fcv", [False, True])
def test_upgrade_plan_on_many_layouts_keeps_every_binary_on_an_fcv_it_supports(
        cfg_states, shard_states, routers, raise_fcv):
    cfg, shards, router_names = layout(cfg_states, shard_states, routers)
    steps = plan.plan_upgrade(cfg, shards, router_names, "6.0", "8.0", fcv="6.0", raise_fcv=raise_fcv,
                              allow_downtime=True)
    fcv = "6.0"
    per_release = {}
    for step in steps:
        if step["action"] == "fcv":
            fcv = step["version"]
            continue
        if step["action"] == "upgrade":
            assert plan.fcv_allows_binary(fcv, step["release"]), step
            per_release.setdefault(step["release"], []).append(step["host"])
    members = len(cfg) + sum(len(m) for m in shards.values()) + routers
    assert sorted(per_release) == ["7.0", "8.0"] and all(len(h) == members for h in per_release.values())
    assert fcv == ("8.0" if raise_fcv else "7.0")
    # Balancer off before every upgrade of a release and on again at its end.
    for release in ("7.0", "8.0"):
        mine = [s["action"] for s in steps if s["release"] == release and s["action"] != "fcv"]
        assert mine[0] == "balancer_stop" and mine[-1] == "balancer_start"


@pytest.mark.parametrize("cfg_states, shard_states", [("PP", {"sh1": "PS"}), ("SS", {"sh1": "PS"}),
                                                      ("PS", {"sh1": "SS"})])
def test_upgrade_order_refuses_a_set_without_exactly_one_primary(cfg_states, shard_states):
    cfg, shards, routers = layout(cfg_states, shard_states, 1)
    with pytest.raises(plan.PlanError, match="exactly one PRIMARY"):
        plan.upgrade_order(cfg, shards, routers)


@pytest.mark.parametrize("states, why", [
    ("P", "is the set's only member"),
    ("PA", "arbiter"),
    ("PH", "hidden"),
    ("PZ", "priority 0"),
    ("PD", "hidden"),          # a delayed member must be hidden (and priority 0)
    ("PN", "non-voting"),
    ("PR", "RECOVERING"),      # a secondary that is not SECONDARY now cannot take over either
    ("PAZH", "arbiter"),
])
def test_a_primary_without_a_member_to_take_over_is_refused_unless_downtime_is_allowed(states, why):
    members = [dict(KINDS[c], name="h%d:27017" % i) for i, c in enumerate(states)]
    with pytest.raises(plan.PlanError) as refused:
        plan.restart_order(members, set_name="rs0")
    message = str(refused.value)
    assert message.startswith("replica set rs0: the primary h0:27017 cannot be stepped down")
    assert why in message and "no writes" in message and "mongodb_rs_allow_downtime=true" in message
    order = plan.restart_order(members, allow_downtime=True)
    assert order[-1] == {"host": "h0:27017", "stepdown": False, "in_place": True}
    assert [o["host"] for o in order[:-1]] == sorted(m["name"] for m in members[1:])
    assert not any(o["stepdown"] or o["in_place"] for o in order[:-1])


@pytest.mark.parametrize("states", ["PS", "PSA", "PSH", "PZS", "SPD", "PSSSS"])
def test_one_electable_secondary_is_enough_for_a_step_down(states):
    members = [dict(KINDS[c], name="h%d:27017" % i) for i, c in enumerate(states)]
    primary = [m["name"] for m in members if m["stateStr"] == "PRIMARY"][0]
    for allow in (False, True):
        order = plan.restart_order(members, allow_downtime=allow)
        assert order[-1] == {"host": primary, "stepdown": True, "in_place": False}


def test_restart_plan_reads_electability_from_the_config():
    """replSetGetStatus says SECONDARY for a priority-0 member; only the config says it cannot take over."""
    status = [{"name": "a:27017", "stateStr": "PRIMARY"}, {"name": "b:27017", "stateStr": "SECONDARY"}]
    config = [{"_id": 0, "host": "a:27017", "priority": 1}, {"_id": 1, "host": "b:27017", "priority": 0}]
    refused = plan.restart_plan(status, config, set_name="rs0")
    assert refused["order"] == [] and "b:27017: priority 0" in refused["error"]
    allowed = plan.restart_plan(status, config, allow_downtime=True)
    assert allowed["error"] is None and allowed["primary"] == "a:27017" and allowed["primary_in_place"]
    electable = plan.restart_plan(status, [dict(m, priority=1) for m in config])
    assert electable["error"] is None and not electable["primary_in_place"]
    assert electable["order"][-1] == {"host": "a:27017", "stepdown": True, "in_place": False}


def test_restart_plan_filter_on_a_mongodb_rs_state_result():
    """The filter rolling_restart_mongodb.yml uses, on what mongodb_rs_state returns (members' `state`)."""
    from ansible.errors import AnsibleFilterError
    from ansible_collections.dbops.clusters.plugins.filter.mongodb_restart_plan import mongodb_restart_plan
    one = {"set_name": "rs0", "members": [{"name": "m1:27017", "state": "PRIMARY"}],
           "config": {"members": [{"_id": 0, "host": "m1:27017", "priority": 1, "votes": 1}]}}
    refused = mongodb_restart_plan(one)
    assert refused["order"] == [] and refused["error"].startswith("replica set rs0: the primary m1:27017")
    assert "only member" in refused["error"]
    allowed = mongodb_restart_plan(one, True)
    assert allowed["error"] is None and allowed["primary_in_place"] and allowed["order"] == [
        {"host": "m1:27017", "stepdown": False, "in_place": True}]
    three = {"set_name": "rs0", "members": [{"name": "m%d:27017" % i, "state": s}
                                            for i, s in enumerate(("SECONDARY", "PRIMARY", "SECONDARY"))],
             "config": {"members": [{"_id": i, "host": "m%d:27017" % i} for i in range(3)]}}
    normal = mongodb_restart_plan(three)
    assert normal["error"] is None and not normal["primary_in_place"] and normal["primary"] == "m1:27017"
    with pytest.raises(AnsibleFilterError):
        mongodb_restart_plan({"initiated": False})
