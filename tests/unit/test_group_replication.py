"""Unit tests for module_utils/group_replication.py: GTID sets (untagged and MySQL 8.3+ tagged), the plan
that brings a group to its desired state (new group, complete-outage reboot, join, recover, refusals) and the
health verdict."""
import pytest

from ansible_collections.dbops.clusters.plugins.module_utils import group_replication as gr

A = "3e11fa47-71ca-11e1-9e33-c80aa9429562"
B = "4d8b6e2a-0a2c-11ef-8f8c-0242ac110002"
C = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
G = "5b0b1a8e-6d4e-5c2a-9c1e-2f1d6a1e0c33"   # group name: GR's own transactions carry it as their uuid
MEMBERS = ["gr1", "gr2", "gr3"]


# ---------------------------------------------------------------------------------------------------- GTID

def test_parse_merges_and_sorts_intervals():
    parsed = gr.parse_gtid_set("%s:7-9:1-5:6" % A.upper())
    assert parsed == {(A, ""): [(1, 9)]}
    assert gr.format_gtid_set(parsed) == A + ":1-9"


def test_parse_as_mysql_prints_it_with_newlines():
    text = "%s:1-10,\n%s:1-3:5" % (A, B)
    assert gr.parse_gtid_set(text) == {(A, ""): [(1, 10)], (B, ""): [(1, 3), (5, 5)]}


def test_parse_tagged_gtids():
    parsed = gr.parse_gtid_set("%s:1-5:etl:1-3:7:Batch_2:4" % A)
    assert parsed == {(A, ""): [(1, 5)], (A, "etl"): [(1, 3), (7, 7)], (A, "batch_2"): [(4, 4)]}
    assert gr.format_gtid_set(parsed) == A + ":1-5:batch_2:4:etl:1-3:7"


def test_tagged_and_untagged_are_different_transactions():
    assert not gr.contains("%s:1-5" % A, "%s:etl:1" % A)
    assert not gr.contains("%s:etl:1-5" % A, "%s:1" % A)
    assert gr.contains("%s:1-5:etl:1-5" % A, "%s:etl:2-3" % A)


@pytest.mark.parametrize("text", ["", None, "  \n"])
def test_empty_sets(text):
    assert gr.parse_gtid_set(text) == {}
    assert gr.contains(text, "")


@pytest.mark.parametrize("text", ["nonsense:1", A, "%s:5-1" % A, "%s:0" % A, "%s:1-2-3" % A, "%s::1" % A,
                                  "%s:-bad-:1" % A])
def test_bad_sets_are_refused(text):
    with pytest.raises(gr.GtidError):
        gr.parse_gtid_set(text)


@pytest.mark.parametrize("outer,inner,expected", [
    ("A:1-10", "A:1-10", True),
    ("A:1-10", "A:3-4:8", True),
    ("A:1-10", "A:1-11", False),
    ("A:1-5:7-10", "A:5-7", False),          # 6 is missing
    ("A:1-10", "B:1", False),
    ("A:1-10,B:1-3", "B:2", True),
    ("", "A:1", False),
    ("A:1", "", True),
])
def test_contains(outer, inner, expected):
    def sub(text):
        return text.replace("A", A).replace("B", B)
    assert gr.contains(sub(outer), sub(inner)) is expected


def test_subtract_and_union():
    left = "%s:1-10,%s:1-3" % (A, B)
    assert gr.format_gtid_set(gr.subtract(left, "%s:3-5" % A)) == "%s:1-2:6-10,%s:1-3" % (A, B)
    assert gr.subtract(left, left) == {}
    assert gr.format_gtid_set(gr.union("%s:1-3" % A, "%s:4-6,%s:1" % (A, B))) == "%s:1-6,%s:1" % (A, B)
    assert gr.count(left) == 13


# ---------------------------------------------------------------------------------------------------- plan

def member(state="OFFLINE", role="", executed="", received="", uuid=None, server_id=None, group=G, single=True,
           view=None, weight=50, running=True):
    return {"running": running, "member_state": state, "member_role": role, "gtid_executed": executed,
            "gtid_received": received, "server_uuid": uuid, "server_id": server_id, "group_name": group,
            "single_primary_mode": single, "view": view or [], "member_weight": weight}


def online_group(roles=("PRIMARY", "SECONDARY", "SECONDARY"), executed="%s:1-20" % G):
    view = [{"member_id": u, "host": h, "state": "ONLINE", "role": r}
            for u, h, r in zip((A, B, C), MEMBERS, roles)]
    return dict((h, member("ONLINE", r, executed, uuid=u, server_id=i + 1, view=view))
                for i, (h, u, r) in enumerate(zip(MEMBERS, (A, B, C), roles)))


def test_fresh_members_bootstrap_a_new_group_on_the_first():
    states = dict((h, member(uuid=u, server_id=i)) for i, (h, u) in enumerate(zip(MEMBERS, (A, B, C))))
    result = gr.plan(states, MEMBERS, G)
    assert result["decision"] == "bootstrap"
    assert result["bootstrap_member"] == "gr1"
    assert result["join_order"] == ["gr2", "gr3"]
    assert [result["actions"][m]["action"] for m in MEMBERS] == ["bootstrap", "join", "join"]


def test_new_group_starts_on_the_desired_primary_or_the_heaviest_member():
    states = dict((h, member(uuid=u, server_id=i)) for i, (h, u) in enumerate(zip(MEMBERS, (A, B, C))))
    assert gr.plan(states, MEMBERS, G, primary="gr3")["bootstrap_member"] == "gr3"
    states["gr2"]["member_weight"] = 80
    assert gr.plan(states, MEMBERS, G)["bootstrap_member"] == "gr2"


def test_healthy_group_needs_nothing():
    result = gr.plan(online_group(), MEMBERS, G)
    assert result["decision"] == "none", result["reason"]
    assert all(a["action"] == "none" for a in result["actions"].values())


def test_one_online_member_anywhere_means_join_never_bootstrap():
    states = dict((h, member(uuid=u, server_id=i)) for i, (h, u) in enumerate(zip(MEMBERS, (A, B, C))))
    view = [{"member_id": C, "host": "gr3", "state": "ONLINE", "role": "PRIMARY"}]
    states["gr3"] = member("ONLINE", "PRIMARY", "%s:1-5" % G, uuid=C, server_id=3, view=view)
    result = gr.plan(states, MEMBERS, G)
    assert result["decision"] == "converge"
    assert result["bootstrap_member"] is None
    assert result["join_order"] == ["gr1", "gr2"]
    assert result["actions"]["gr3"]["action"] == "none"


def test_member_in_error_is_recovered_with_stop_start():
    states = online_group()
    states["gr2"] = member("ERROR", "", "%s:1-18" % G, uuid=B, server_id=2)
    result = gr.plan(states, MEMBERS, G)
    assert result["decision"] == "converge"
    assert result["actions"]["gr2"]["action"] == "recover"
    assert "3093" in result["actions"]["gr2"]["reason"]
    assert result["join_order"] == ["gr2"]


def test_joiner_with_errant_transactions_is_refused_with_the_set():
    states = online_group()
    states["gr3"] = member("OFFLINE", "", "%s:1-20,%s:1-2" % (G, C), uuid=C, server_id=3)
    result = gr.plan(states, MEMBERS, G)
    assert result["actions"]["gr3"]["action"] == "refuse"
    assert C + ":1-2" in result["actions"]["gr3"]["reason"]
    assert result["join_order"] == []
    assert result["decision"] == "refuse"


def test_recovering_member_is_left_to_finish():
    states = online_group()
    states["gr3"]["member_state"] = "RECOVERING"
    result = gr.plan(states, MEMBERS, G)
    assert result["actions"]["gr3"]["action"] == "wait"
    assert result["decision"] == "none"


def test_unreachable_member_does_not_stop_a_running_group():
    states = online_group()
    states["gr3"] = None
    result = gr.plan(states, MEMBERS, G)
    assert result["actions"]["gr3"]["action"] == "skip"
    assert result["decision"] == "none"


def test_stopped_server_is_started_and_joined():
    states = online_group()
    states["gr3"] = member(running=False, uuid=None)
    result = gr.plan(states, MEMBERS, G)
    assert result["actions"]["gr3"]["action"] == "start"
    assert result["join_order"] == ["gr3"]


def test_member_of_another_group_is_never_touched():
    states = online_group()
    states["gr2"]["group_name"] = "11111111-1111-1111-1111-111111111111"
    result = gr.plan(states, MEMBERS, G)
    assert result["decision"] == "refuse"
    assert "another group" in result["reason"]


def test_online_member_without_majority_refuses():
    states = online_group()
    for m in MEMBERS:
        states[m]["view"] = [dict(v, state="UNREACHABLE" if v["host"] != "gr1" else "ONLINE")
                             for v in states[m]["view"]]
    states["gr2"] = states["gr3"] = None
    result = gr.plan(states, MEMBERS, G)
    assert result["decision"] == "refuse"
    assert "majority" in result["reason"]


def test_duplicate_server_uuid_refuses():
    states = online_group()
    states["gr3"] = member("OFFLINE", uuid=A, server_id=9)
    assert "same server_uuid" in gr.plan(states, MEMBERS, G)["reason"]


def test_duplicate_server_id_refuses():
    states = online_group()
    states["gr3"] = member("OFFLINE", uuid=C, server_id=1)
    assert "same server_id" in gr.plan(states, MEMBERS, G)["reason"]


# --- complete outage

def outage(sets, received=None):
    received = received or {}
    return dict((h, member("OFFLINE", "", sets[h], received.get(h, ""), uuid=u, server_id=i))
                for i, (h, u) in enumerate(zip(MEMBERS, (A, B, C))))


def test_reboot_from_the_member_that_holds_every_transaction():
    states = outage({"gr1": "%s:1-10" % G, "gr2": "%s:1-14" % G, "gr3": "%s:1-12" % G})
    result = gr.plan(states, MEMBERS, G)
    assert result["decision"] == "reboot"
    assert result["bootstrap_member"] == "gr2"
    assert result["join_order"] == ["gr1", "gr3"]
    assert G + ":1-14" in result["reason"]


def test_reboot_counts_received_but_unapplied_transactions():
    states = outage({"gr1": "%s:1-10" % G, "gr2": "%s:1-12" % G, "gr3": "%s:1-10" % G},
                    received={"gr3": "%s:1-15" % G})
    assert gr.plan(states, MEMBERS, G)["bootstrap_member"] == "gr3"


def test_reboot_with_tagged_gtids():
    states = outage({"gr1": "%s:1-10:ops:1-2" % G, "gr2": "%s:1-10" % G, "gr3": "%s:1-9:ops:1-2" % G})
    assert gr.plan(states, MEMBERS, G)["bootstrap_member"] == "gr1"


def test_equal_sets_prefer_the_desired_primary_then_inventory_order():
    states = outage(dict((m, "%s:1-10" % G) for m in MEMBERS))
    assert gr.plan(states, MEMBERS, G)["bootstrap_member"] == "gr1"
    assert gr.plan(states, MEMBERS, G, primary="gr3")["bootstrap_member"] == "gr3"


def test_divergence_refuses_with_every_set_shown():
    states = outage({"gr1": "%s:1-10,%s:1" % (G, A), "gr2": "%s:1-10,%s:1" % (G, B), "gr3": "%s:1-9" % G})
    result = gr.plan(states, MEMBERS, G)
    assert result["decision"] == "refuse"
    for text in ("gr1: %s:1,%s:1-10" % (A, G), "gr2: %s:1,%s:1-10" % (B, G), "gr3: %s:1-9" % G):
        assert text in result["reason"]
    assert "force_member" in result["reason"]


def test_divergence_with_a_named_member_bootstraps_it_and_refuses_the_diverged():
    states = outage({"gr1": "%s:1-10,%s:1" % (G, A), "gr2": "%s:1-10,%s:1" % (G, B), "gr3": "%s:1-9" % G})
    result = gr.plan(states, MEMBERS, G, force_member="gr1")
    assert result["decision"] == "reboot"
    assert result["bootstrap_member"] == "gr1"
    assert result["actions"]["gr2"]["action"] == "refuse"
    assert B + ":1" in result["actions"]["gr2"]["reason"]
    assert result["join_order"] == ["gr3"]
    assert "NOT in it" in result["reason"]


def test_unknown_forced_member_refuses():
    states = outage(dict((m, "") for m in MEMBERS))
    assert gr.plan(states, MEMBERS, G, force_member="gr9")["decision"] == "refuse"


@pytest.mark.parametrize("lost", ["unreachable", "stopped"])
def test_outage_with_a_member_that_cannot_be_asked_refuses_unless_forced(lost):
    states = outage({"gr1": "%s:1-10" % G, "gr2": "%s:1-14" % G, "gr3": "%s:1-12" % G})
    states["gr2"] = None if lost == "unreachable" else member(running=False)
    result = gr.plan(states, MEMBERS, G)
    assert result["decision"] == "refuse"
    assert "gr2" in result["reason"] and "force" in result["reason"]
    forced = gr.plan(states, MEMBERS, G, ignore_unreachable=True)
    assert forced["decision"] == "reboot"
    assert forced["bootstrap_member"] == "gr3"
    assert forced["actions"]["gr2"]["action"] == "skip"
    assert "forced past" in forced["reason"]


def test_member_in_error_after_outage_is_recovered_not_joined():
    states = outage({"gr1": "%s:1-10" % G, "gr2": "%s:1-14" % G, "gr3": "%s:1-12" % G})
    states["gr1"]["member_state"] = "ERROR"
    result = gr.plan(states, MEMBERS, G)
    assert result["actions"]["gr1"]["action"] == "recover"


# --- mode and primary

def test_switch_to_multi_primary():
    result = gr.plan(online_group(), MEMBERS, G, single_primary=False)
    assert result["mode_change"] == "multi_primary"
    assert result["decision"] == "converge"


def test_switch_back_to_single_primary():
    states = online_group(roles=("PRIMARY",) * 3)
    for m in MEMBERS:
        states[m]["single_primary_mode"] = False
    result = gr.plan(states, MEMBERS, G, single_primary=True, primary="gr2")
    assert result["mode_change"] == "single_primary"
    assert result["primary_change"] == "gr2"


def test_set_primary_when_another_member_is_primary():
    result = gr.plan(online_group(), MEMBERS, G, primary="gr3")
    assert result["primary_change"] == "gr3"
    assert gr.plan(online_group(), MEMBERS, G, primary="gr1")["primary_change"] is None


def test_unknown_primary_refuses():
    assert gr.plan(online_group(), MEMBERS, G, primary="gr9")["decision"] == "refuse"


def test_missing_state_is_a_programming_error():
    with pytest.raises(ValueError):
        gr.plan({"gr1": None}, MEMBERS, G)


# ---------------------------------------------------------------------------------------------------- health

VIEW = [{"member_id": A, "host": "gr1", "state": "ONLINE", "role": "PRIMARY"},
        {"member_id": B, "host": "gr2", "state": "ONLINE", "role": "SECONDARY"},
        {"member_id": C, "host": "gr3", "state": "ONLINE", "role": "SECONDARY"}]
EXPECTED = {"gr1": A, "gr2": B, "gr3": C}


def test_healthy_view():
    assert gr.health(VIEW, EXPECTED) == []


def test_missing_and_recovering_members_are_named():
    view = [VIEW[0], dict(VIEW[1], state="RECOVERING")]
    unmet = gr.health(view, EXPECTED)
    assert "gr2 is RECOVERING, not ONLINE" in unmet
    assert "gr3 is not in the group's view" in unmet


def test_two_primaries_or_none_in_single_primary_mode():
    assert any("2 ONLINE primaries" in u for u in gr.health([VIEW[0], dict(VIEW[1], role="PRIMARY"), VIEW[2]], EXPECTED))
    assert any("0 ONLINE primaries" in u for u in gr.health([dict(v, role="SECONDARY") for v in VIEW], EXPECTED))


def test_a_primary_outside_the_expected_members_is_not_accepted():
    # After kill -9 of gr1 the survivors still list it ONLINE PRIMARY until they expel it: a gate waiting for
    # the new primary (expected: gr2, gr3) must not pass on it.
    survivors = {"gr2": B, "gr3": C}
    assert gr.health(VIEW, survivors) == ["the primary gr1 is not one of the expected members (gr2, gr3)"]
    expelled = [dict(VIEW[1], role="PRIMARY"), VIEW[2]]
    assert gr.health(expelled, survivors) == []


def test_multi_primary_wants_every_member_primary():
    assert gr.health([dict(v, role="PRIMARY") for v in VIEW], EXPECTED, single_primary=False) == []
    assert gr.health(VIEW, EXPECTED, single_primary=False)


def test_queues_over_the_threshold():
    stats = [{"host": "gr2", "applier_queue": 5000, "certifier_queue": 3}, {"host": "gr3", "applier_queue": 0}]
    unmet = gr.health(VIEW, EXPECTED, stats=stats, max_queue=100)
    assert unmet == ["gr2 has 5000 transactions in its applier queue (limit 100)"]


@pytest.mark.parametrize("report, words", [
    (None, "did not report its state"),
    ({}, "did not report its state"),
    ({"failed": True, "msg": "Can't connect to local MySQL server"}, "reading its state failed: Can't connect"),
    ({"unreachable": True, "msg": "ssh: no route"}, "unreachable: ssh: no route"),
    ({"skipped": True}, "skipped"),
])
def test_a_report_without_a_state_reads_as_unread_with_its_reason(report, words):
    state, why = gr.state_from_report(report)
    assert state is None and words in why


def test_a_registered_result_or_a_bare_state_is_read():
    state = member("ONLINE", "PRIMARY")
    assert gr.state_from_report(state) == (state, None)
    assert gr.state_from_report({"changed": False, "state": state}) == (state, None)


def test_an_unread_member_is_named_with_its_reason_in_a_running_group_and_in_an_outage():
    states = online_group()
    states["gr3"] = None
    result = gr.plan(states, MEMBERS, G, unread={"gr3": "reading its state failed: boom"})
    assert result["actions"]["gr3"] == {
        "action": "skip", "reason": "could not be read (reading its state failed: boom): the group runs without it"}
    states = outage({"gr1": "%s:1-10" % G, "gr2": "%s:1-14" % G, "gr3": "%s:1-12" % G})
    states["gr2"] = None
    result = gr.plan(states, MEMBERS, G, unread={"gr2": "it did not report its state"})
    assert result["decision"] == "refuse"
    assert "gr2 (could not be read: it did not report its state)" in result["reason"]


def test_a_new_name_for_a_running_group_is_refused_naming_the_procedure():
    from ansible_collections.dbops.clusters.plugins.filter.gr_rename_refusal import gr_rename_refusal
    H = "1b2c3d4e-0000-4000-8000-000000000001"
    hostvars = {"gr1": {"group_replication_state_before": {"state": member("ONLINE", "PRIMARY")}},
                "gr2": {"group_replication_state_before": {"state": member("ONLINE", "SECONDARY")}},
                # a new member (no Group Replication yet) and one that did not report are not compared
                "gr3": {"group_replication_state_before": {"state": member("OFFLINE", group="")}}}
    refusal = gr_rename_refusal(MEMBERS, hostvars, H)
    assert "group_replication_group_name=%s: gr1 runs %s; gr2 runs %s" % (H, G, G) in refusal
    assert "playbooks/gr_reboot.yml" in refusal and "Nothing was written" in refusal
    assert gr_rename_refusal(MEMBERS, hostvars, G) == ""
    assert gr_rename_refusal(MEMBERS, {"gr1": {}, "gr2": {"group_replication_state_before": {"failed": True}}}, H) == ""


def test_a_new_tls_mode_for_a_running_group_is_refused_naming_the_procedure():
    """Members with different group_replication_ssl_mode values cannot talk: a running group keeps its mode."""
    from ansible_collections.dbops.clusters.plugins.filter.gr_tls_mode_refusal import gr_tls_mode_refusal
    primary = dict(member("ONLINE", "PRIMARY"), ssl_mode="DISABLED")
    hostvars = {"gr1": {"group_replication_state_before": {"state": primary}},
                "gr2": {"group_replication_state_before": {"state": dict(member("RECOVERING"), ssl_mode="DISABLED")}},
                # stopped (OFFLINE) members and one that did not report are not compared: they start in the new mode
                "gr3": {"group_replication_state_before": {"state": dict(member("OFFLINE"), ssl_mode="DISABLED")}}}
    refusal = gr_tls_mode_refusal(MEMBERS, hostvars, "VERIFY_IDENTITY")
    assert "group_replication_ssl_mode=VERIFY_IDENTITY: gr1 runs DISABLED; gr2 runs DISABLED;" in refusal
    assert "gr3" not in refusal and "Nothing was written" in refusal and "planned outage" in refusal
    assert gr_tls_mode_refusal(MEMBERS, hostvars, "DISABLED") == ""
    # a member read before this change has no ssl_mode: it runs the default, DISABLED
    legacy = {"gr1": {"group_replication_state_before": {"state": member("ONLINE", "PRIMARY")}}}
    assert "gr1 runs DISABLED" in gr_tls_mode_refusal(MEMBERS, legacy, "VERIFY_IDENTITY")
    assert gr_tls_mode_refusal(MEMBERS, {"gr1": {}, "gr2": {"group_replication_state_before": {"failed": True}}},
                               "VERIFY_IDENTITY") == ""
