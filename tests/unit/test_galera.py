"""Unit tests for module_utils/galera.py: grastate.dat, --wsrep-recover output, wsrep status and the bootstrap decision.

The grastate.dat texts and log lines are copies of what MariaDB 11.8 with galera-4 wrote in the lab (podman,
Debian trixie), plus the older file format without safe_to_bootstrap and PXC 8's log format.
"""
import pytest

from ansible_collections.dbops.clusters.plugins.module_utils import galera

UUID = "f3fce748-e5f3-11f1-9b48-23d4b883f3ea"
OTHER = "11111111-2222-3333-4444-555555555555"

# After `systemctl stop mariadb` on g3, g2, g1 in that order (lab, MariaDB 11.8.6, galera-4).
GRASTATE_LAST_STOPPED = """# GALERA saved state
version: 2.1
uuid:    f3fce748-e5f3-11f1-9b48-23d4b883f3ea
seqno:   12
safe_to_bootstrap: 1
"""
GRASTATE_FIRST_STOPPED = """# GALERA saved state
version: 2.1
uuid:    f3fce748-e5f3-11f1-9b48-23d4b883f3ea
seqno:   10
safe_to_bootstrap: 0
"""
# While running, and after kill -9 of every node.
GRASTATE_RUNNING = """# GALERA saved state
version: 2.1
uuid:    f3fce748-e5f3-11f1-9b48-23d4b883f3ea
seqno:   -1
safe_to_bootstrap: 0
"""
# Galera 3 before safe_to_bootstrap existed (Galera documentation, crash recovery).
GRASTATE_OLD = """# GALERA saved state
version: 2.1
uuid:    5ee99582-bb8d-11e2-b8e3-23de375c1d30
seqno:   8204503945773
cert_index:
"""
GRASTATE_ZERO = """# GALERA saved state
version: 2.1
uuid:    00000000-0000-0000-0000-000000000000
seqno:   -1
safe_to_bootstrap: 0
"""

# Tail of the lab's `mariadbd --wsrep-recover --user=mysql --datadir=/var/lib/mysql --log-error=<file>`.
RECOVER_LOG_MARIADB = """2026-11-21 21:44:59 0 [Note] InnoDB: log sequence number 75921; transaction id 90
2026-11-21 21:44:59 0 [Warning] InnoDB: Skipping buffer pool dump/restore during wsrep recovery.
2026-11-21 21:44:59 0 [Note] Plugin 'FEEDBACK' is disabled.
2026-11-21 21:45:00 0 [Note] Server socket created on IP: '0.0.0.0', port: '3306'.
2026-11-21 21:45:00 0 [Note] WSREP: Recovered position: f3fce748-e5f3-11f1-9b48-23d4b883f3ea:19
"""
# The same run with wsrep_on=OFF (or wsrep_provider=none) in the option files.
RECOVER_LOG_DISABLED = """2026-11-21 21:39:49 0 [Warning] InnoDB: Skipping buffer pool dump/restore during wsrep recovery.
2026-11-21 21:39:49 0 [Note] Plugin 'wsrep-provider' is disabled.
2026-11-21 21:39:51 0 [Note] WSREP: disabled, skipping position recovery
"""
RECOVER_LOG_PXC8 = ("2026-10-06T01:44:30.673582Z 0 [Note] [MY-000000] [WSREP] Recovered position: "
                    "4e7ca4a7-c127-11f1-804c-2e28d37e9dfc:603\n")


# ------------------------------------------------------------------------------------------ grastate.dat

def test_grastate_clean_stop_of_the_last_node():
    assert galera.parse_grastate(GRASTATE_LAST_STOPPED) == {"uuid": UUID, "seqno": 12, "safe_to_bootstrap": True}


def test_grastate_clean_stop_of_an_earlier_node():
    assert galera.parse_grastate(GRASTATE_FIRST_STOPPED) == {"uuid": UUID, "seqno": 10, "safe_to_bootstrap": False}


def test_grastate_running_or_crashed_has_no_seqno():
    assert galera.parse_grastate(GRASTATE_RUNNING) == {"uuid": UUID, "seqno": -1, "safe_to_bootstrap": False}


def test_grastate_without_safe_to_bootstrap_line():
    state = galera.parse_grastate(GRASTATE_OLD)
    assert state == {"uuid": "5ee99582-bb8d-11e2-b8e3-23de375c1d30", "seqno": 8204503945773,
                     "safe_to_bootstrap": False}


def test_grastate_zero_uuid_is_fresh():
    state = galera.parse_grastate(GRASTATE_ZERO)
    assert state["uuid"] == galera.ZERO_UUID
    assert galera.is_fresh_position(state["uuid"], state["seqno"])
    assert not galera.is_fresh_position(UUID, -1)
    assert galera.is_fresh_position(None, -1)


def test_grastate_seqno_with_gtid_suffix_and_crlf():
    text = "version: 2.1\r\nuuid: %s\r\nseqno: 42,0-1-42\r\nsafe_to_bootstrap: 1\r\n" % UUID.upper()
    assert galera.parse_grastate(text) == {"uuid": UUID, "seqno": 42, "safe_to_bootstrap": True}


@pytest.mark.parametrize("text", [
    "", "# GALERA saved state\nversion: 2.1\n", "uuid: not-a-uuid\nseqno: 1\n", "uuid: %s\nseqno: x\n" % UUID,
    "uuid: %s\nseqno: 3\nsafe_to_bootstrap: yes\n" % UUID, None,
])
def test_grastate_unreadable(text):
    with pytest.raises(galera.GaleraStateError):
        galera.parse_grastate(text)


# ------------------------------------------------------------------------------------- --wsrep-recover

def test_recovered_position_mariadb():
    assert galera.parse_recovered_position(RECOVER_LOG_MARIADB) == (UUID, 19)
    assert not galera.recovery_skipped(RECOVER_LOG_MARIADB)


def test_recovered_position_pxc8_bracketed_subsystem():
    assert galera.parse_recovered_position(RECOVER_LOG_PXC8) == ("4e7ca4a7-c127-11f1-804c-2e28d37e9dfc", 603)


def test_recovered_position_with_gtid_suffix():
    line = "2023-06-04  8:24:23 0 [Note] WSREP: Recovered position: %s:5,0-1-5\n" % UUID
    assert galera.parse_recovered_position(line) == (UUID, 5)


def test_recovered_position_last_run_wins():
    log = (RECOVER_LOG_MARIADB + "2026-11-21 21:50:00 0 [Note] WSREP: Recovered position: %s:23\n" % UUID)
    assert galera.parse_recovered_position(log) == (UUID, 23)


def test_recovered_position_of_a_node_that_never_joined():
    log = "2026-11-21 21:50:00 0 [Note] WSREP: Recovered position: %s:-1\n" % galera.ZERO_UUID
    uuid, seqno = galera.parse_recovered_position(log)
    assert galera.is_fresh_position(uuid, seqno)


@pytest.mark.parametrize("log", [RECOVER_LOG_DISABLED, "", None,
                                 "[Note] WSREP: Recovered position: foo:1",
                                 "[Note] WSREP: Recovered position: %s:bar" % UUID])
def test_no_recovered_position(log):
    assert galera.parse_recovered_position(log) is None


def test_recovery_skipped_when_wsrep_is_disabled():
    assert galera.recovery_skipped(RECOVER_LOG_DISABLED)


# ------------------------------------------------------------------------------------ wsrep status

STATUS_SYNCED = {  # SHOW GLOBAL STATUS LIKE 'wsrep_%' on g1 (subset)
    "wsrep_local_state_uuid": UUID, "wsrep_last_committed": "5", "wsrep_local_state": "4",
    "wsrep_local_state_comment": "Synced", "wsrep_cluster_size": "3", "wsrep_cluster_state_uuid": UUID,
    "wsrep_cluster_status": "Primary", "wsrep_connected": "ON", "wsrep_local_index": "1", "wsrep_ready": "ON",
}


def test_wsrep_summary():
    summary = galera.wsrep_summary(STATUS_SYNCED)
    assert summary == {"cluster_status": "Primary", "local_state_comment": "Synced", "cluster_size": 3,
                       "cluster_state_uuid": UUID, "ready": "ON", "connected": "ON", "local_index": 1,
                       "local_state_uuid": UUID, "last_committed": 5}
    assert galera.wsrep_summary({}) is None
    assert galera.wsrep_summary({"wsrep_ready": "OFF"}) is None


def test_health_of_a_synced_node():
    assert galera.health_problems(galera.wsrep_summary(STATUS_SYNCED), 3) == []


def test_health_names_every_unmet_condition():
    # g1 alone after its two peers were killed (lab): non-Primary, Initialized, not ready.
    status = dict(STATUS_SYNCED, wsrep_local_state_comment="Initialized", wsrep_cluster_status="non-Primary",
                  wsrep_ready="OFF", wsrep_cluster_size="1")
    problems = galera.health_problems(galera.wsrep_summary(status), 3)
    assert problems == ["wsrep_local_state_comment is 'Initialized', wanted 'Synced'",
                        "wsrep_cluster_status is 'non-Primary', wanted 'Primary'",
                        "wsrep_ready is 'OFF', wanted 'ON'",
                        "wsrep_cluster_size is 1, wanted 3"]


def test_health_of_a_node_that_does_not_answer():
    assert galera.health_problems(None, 3, False, "(2003, \"Can't connect\")") == [
        "the server does not answer ((2003, \"Can't connect\"))"]
    problems = galera.health_problems(galera.wsrep_summary(STATUS_SYNCED), 3, False, "(1047, 'WSREP ...')")
    assert problems == ["the node does not answer queries (SELECT 1: (1047, 'WSREP ...'))"]
    assert galera.health_problems(None, 3) == [
        "the server reports no wsrep status (wsrep is off or the provider is not loaded)"]


# ------------------------------------------------------------------------------------ bootstrap decision

def stopped(seqno, uuid=UUID, safe=False, recovered=False, grastate=True):
    """A galera_state result of a stopped node."""
    return {"changed": False, "grastate_found": grastate, "uuid": uuid, "seqno": seqno, "safe_to_bootstrap": safe,
            "recovered": recovered, "running": False, "wsrep": None, "reason": "test"}


def running(status="Primary", state="Synced", size=3, uuid=UUID, seqno=20):
    wsrep = {"cluster_status": status, "local_state_comment": state, "cluster_size": size,
             "cluster_state_uuid": uuid, "ready": "ON" if status == "Primary" else "OFF", "connected": "ON",
             "local_index": 0, "local_state_uuid": uuid, "last_committed": seqno}
    return {"changed": False, "grastate_found": True, "uuid": uuid, "seqno": seqno, "safe_to_bootstrap": False,
            "recovered": False, "running": True, "wsrep": wsrep, "reason": "test"}


def fresh(grastate=False):
    return stopped(-1, uuid=galera.ZERO_UUID if grastate else None, grastate=grastate)


def refusal(states, expected=3, force=None):
    with pytest.raises(galera.BootstrapRefused) as info:
        galera.decide_bootstrap(states, expected, force)
    return info.value.reason


def test_all_running_in_one_primary_component_is_none():
    result = galera.decide_bootstrap({"g1": running(), "g2": running(), "g3": running()}, 3)
    assert result["decision"] == "none"
    assert result["bootstrap_node"] is None and result["join_order"] == []
    assert set(n["action"] for n in result["nodes"].values()) == {"none"}
    assert result["reason"] == "all 3 nodes run in one Primary component (%s)" % UUID


def test_running_primary_component_means_the_others_join():
    states = {"g1": running(size=1), "g2": stopped(-1), "g3": stopped(10)}
    result = galera.decide_bootstrap(states, 3)
    assert result["decision"] == "join"
    assert result["join_order"] == ["g2", "g3"]
    assert result["nodes"]["g1"]["action"] == "none"
    assert result["nodes"]["g2"]["action"] == "join" and result["nodes"]["g3"]["action"] == "join"
    assert result["bootstrap_node"] is None and not result["set_safe_to_bootstrap"]
    assert "never bootstrap" in result["reason"]


def test_a_donor_or_joiner_in_the_primary_component_is_left_alone():
    states = {"g1": running(state="Donor/Desynced"), "g2": running(state="Joiner"), "g3": stopped(10)}
    result = galera.decide_bootstrap(states, 3)
    assert result["join_order"] == ["g3"]
    assert result["nodes"]["g2"] == {"action": "none", "reason": "runs in the Primary component (Joiner)"}


def test_non_primary_nodes_join_a_running_primary_component_and_unknown_ones_are_left_alone():
    states = {"g1": running(size=1), "g2": {"unreachable": True, "msg": "ssh timeout"},
              "g3": running(status="non-Primary", state="Initialized", size=1)}
    result = galera.decide_bootstrap(states, 3)
    assert result["decision"] == "join" and result["join_order"] == ["g3"]
    assert result["nodes"]["g2"]["action"] == "none"
    assert "unreachable" in result["nodes"]["g2"]["reason"] and "not started" in result["nodes"]["g2"]["reason"]
    assert "restart it" in result["nodes"]["g3"]["reason"]
    assert result["running_size"] == 1


def test_all_members_running_but_fewer_than_expected():
    result = galera.decide_bootstrap({"g1": running(size=2), "g2": running(size=2)}, 3)
    assert result["decision"] == "none"
    assert "only 2 of the 3 expected nodes reported" in result["reason"]


def test_never_bootstrap_beside_a_primary_component_even_when_forced():
    reason = refusal({"g1": running(), "g2": stopped(30), "g3": stopped(10)}, force="g2")
    assert "a Primary component is running on g1" in reason and "refusing to bootstrap g2" in reason


def test_two_primary_components_of_different_clusters_are_refused():
    reason = refusal({"g1": running(), "g2": running(uuid=OTHER), "g3": stopped(1)})
    assert "different cluster uuids" in reason and OTHER in reason


def test_new_cluster_bootstraps_the_first_node_in_the_given_order():
    states = {"db3": fresh(), "db1": fresh(grastate=True), "db2": fresh()}
    result = galera.decide_bootstrap(states, 3)
    assert result["decision"] == "bootstrap"
    assert result["bootstrap_node"] == "db3"
    assert result["join_order"] == ["db1", "db2"]
    assert result["reason"].startswith("new cluster: no node has state")
    assert result["nodes"]["db3"]["reason"] == "new cluster: no node has state"
    assert not result["set_safe_to_bootstrap"]


def test_a_standalone_server_without_state_counts_as_fresh():
    # Debian starts the server without wsrep right after installing it.
    standalone = dict(fresh(), running=True, wsrep=None)
    result = galera.decide_bootstrap({"g1": standalone, "g2": fresh(), "g3": fresh()}, 3)
    assert result["bootstrap_node"] == "g1"


def test_new_cluster_with_an_unknown_node_is_refused():
    reason = refusal({"g1": fresh(), "g2": fresh(), "g3": {"failed": True, "msg": "boom"}})
    assert "cannot compare positions: g3 galera_state failed: boom" in reason


def test_clean_full_stop_bootstraps_the_highest_seqno():
    # Stopped g3, g2, g1 in that order, as in the lab.
    states = {"g1": stopped(10), "g2": stopped(12, safe=True), "g3": stopped(11)}
    result = galera.decide_bootstrap(states, 3)
    assert result["decision"] == "bootstrap" and result["bootstrap_node"] == "g2"
    assert result["join_order"] == ["g1", "g3"]
    assert not result["set_safe_to_bootstrap"]
    assert result["nodes"]["g2"]["reason"] == "highest seqno 12 (from grastate.dat), others at 10, 11"
    assert result["nodes"]["g1"]["reason"].startswith("seqno 10 < 12: joins")
    assert result["reason"].startswith("full stop of cluster %s: g2 bootstraps" % UUID)


def test_highest_seqno_wins_over_safe_to_bootstrap():
    result = galera.decide_bootstrap({"g1": stopped(10, safe=True), "g2": stopped(11), "g3": stopped(9)}, 3)
    assert result["bootstrap_node"] == "g2"
    assert result["set_safe_to_bootstrap"]


def test_tie_prefers_safe_to_bootstrap():
    result = galera.decide_bootstrap({"g1": stopped(12), "g2": stopped(12, safe=True), "g3": stopped(11)}, 3)
    assert result["bootstrap_node"] == "g2"
    assert "safe_to_bootstrap: 1" in result["nodes"]["g2"]["reason"]
    assert not result["set_safe_to_bootstrap"]


def test_tie_without_safe_flag_takes_the_first_and_says_equally_advanced():
    # kill -9 of every node: all seqno -1 in grastate, positions recovered from InnoDB (lab: 15, 19, 19).
    states = {"g1": stopped(15, recovered=True), "g2": stopped(19, recovered=True),
              "g3": stopped(19, recovered=True)}
    result = galera.decide_bootstrap(states, 3)
    assert result["bootstrap_node"] == "g2"
    assert result["join_order"] == ["g1", "g3"]
    assert "equally advanced" in result["reason"]
    assert result["set_safe_to_bootstrap"]
    assert result["nodes"]["g3"]["reason"] == "seqno 19, equally advanced: joins, by IST"


def test_recovered_position_decides():
    states = {"g1": stopped(7, recovered=True), "g2": stopped(5), "g3": stopped(9, recovered=True)}
    result = galera.decide_bootstrap(states, 3)
    assert result["bootstrap_node"] == "g3"
    assert "recovered by --wsrep-recover" in result["nodes"]["g3"]["reason"]


def test_fresh_nodes_join_after_the_most_advanced():
    result = galera.decide_bootstrap({"g1": fresh(), "g2": stopped(4), "g3": fresh(grastate=True)}, 3)
    assert result["bootstrap_node"] == "g2"
    assert result["join_order"] == ["g1", "g3"]
    assert "SST" in result["nodes"]["g1"]["reason"]


def test_different_uuids_are_refused_naming_hosts_and_uuids():
    reason = refusal({"g1": stopped(12), "g2": stopped(11), "g3": stopped(10, uuid=OTHER)})
    assert "different cluster uuids" in reason
    assert "g1=%s" % UUID in reason and "g3=%s" % OTHER in reason


def test_unknown_seqno_is_refused():
    states = {"g1": stopped(12), "g2": dict(stopped(-1), reason="grastate.dat says seqno -1 and recover=false"),
              "g3": stopped(10)}
    reason = refusal(states)
    assert "cannot compare positions: g2" in reason and "recover=false" in reason


@pytest.mark.parametrize("result, words", [
    (None, "no galera_state result"), ({}, "no galera_state result"),
    ({"failed": True, "msg": "cannot read grastate.dat"}, "galera_state failed: cannot read grastate.dat"),
    ({"unreachable": True, "msg": "Failed to connect"}, "unreachable: Failed to connect"),
    ({"skipped": True}, "skipped"), ({"changed": False}, "not one of galera_state"),
])
def test_missing_or_failed_results_are_refused(result, words):
    reason = refusal({"g1": stopped(12), "g2": result, "g3": stopped(10)})
    assert "cannot compare positions: g2" in reason and words in reason


def test_fewer_nodes_than_expected_are_refused():
    assert "only 2 of the 3 expected nodes" in refusal({"g1": stopped(12), "g2": stopped(10)})


def test_a_running_non_primary_node_with_state_is_refused():
    states = {"g1": running(status="non-Primary", state="Initialized", size=1, seqno=23),
              "g2": stopped(23, recovered=True), "g3": stopped(22)}
    reason = refusal(states)
    assert "g1 runs outside any Primary component" in reason
    assert "wsrep_provider_pc_bootstrap=ON" in reason


def test_refusal_carries_per_node_notes():
    with pytest.raises(galera.BootstrapRefused) as info:
        galera.decide_bootstrap({"g1": stopped(12), "g2": None, "g3": stopped(10)}, 3)
    assert info.value.nodes["g2"] == {"action": "none", "reason": "not decided: no galera_state result"}
    assert info.value.nodes["g1"]["action"] == "none"


def test_string_seqno_from_templating_is_read_as_a_number():
    result = galera.decide_bootstrap({"g1": stopped("9"), "g2": stopped("12"), "g3": stopped("10")}, "3")
    assert result["bootstrap_node"] == "g2"


def test_force_node_overrides_refusals_and_lists_them():
    states = {"g1": stopped(12), "g2": stopped(-1), "g3": stopped(10, uuid=OTHER)}
    result = galera.decide_bootstrap(states, 3, force_node="g1")
    assert result["decision"] == "bootstrap" and result["bootstrap_node"] == "g1"
    assert result["join_order"] == ["g2", "g3"]
    assert "forced" in result["reason"] or "force_node" in result["reason"]
    assert "different cluster uuids" in result["reason"] and "cannot compare positions: g2" in result["reason"]
    assert "replaces its data" in result["nodes"]["g3"]["reason"]
    assert result["set_safe_to_bootstrap"]


def test_force_node_behind_the_others_says_what_is_lost():
    states = {"g1": stopped(12, safe=True), "g2": stopped(11), "g3": stopped(10)}
    result = galera.decide_bootstrap(states, 3, force_node="g3")
    assert result["bootstrap_node"] == "g3" and result["join_order"] == ["g1", "g2"]
    assert "the rules would choose g1" in result["reason"]
    assert "g3 is behind (seqno 10 < 12)" in result["reason"]
    assert result["nodes"]["g1"]["reason"].startswith("seqno 12 > 10 of the bootstrap node: joins by SST")
    assert result["set_safe_to_bootstrap"]


def test_force_node_that_the_rules_agree_with():
    result = galera.decide_bootstrap({"g1": stopped(12, safe=True), "g2": stopped(11)}, 2, force_node="g1")
    assert result["reason"].endswith("overridden: nothing (the rules agree)")
    assert not result["set_safe_to_bootstrap"]


def test_force_node_overrides_an_unknown_node_and_a_running_non_primary_one():
    states = {"g1": running(status="non-Primary", state="Initialized", size=1), "g2": stopped(20), "g3": None}
    result = galera.decide_bootstrap(states, 3, force_node="g2")
    assert result["bootstrap_node"] == "g2" and result["join_order"] == ["g1", "g3"]
    assert "restart it if it does not join by itself" in result["nodes"]["g1"]["reason"]


def test_force_node_must_be_a_given_host():
    assert "force_node g9 is not one of the nodes given" in refusal({"g1": stopped(1)}, 1, force="g9")


def test_force_node_must_not_be_running():
    reason = refusal({"g1": running(status="non-Primary", state="Initialized", size=1), "g2": stopped(3)}, 2,
                     force="g1")
    assert "force_node g1 is running" in reason


def test_empty_states_and_bad_expected_size():
    assert "no node states" in refusal({})
    assert "expected_size" in refusal({"g1": fresh()}, 0)


# ------------------------------------------------------------- membership from the inventory, --limit, converge

def test_limit_on_stopped_members_joins_them_to_the_primary_component_outside_the_play():
    """5 members; g1, g2 run a Primary component of 2 outside the play; --limit g3,g4,g5 (stopped)."""
    states = {"g1": running(size=2, seqno=40), "g2": running(size=2, seqno=40), "g3": stopped(30),
              "g4": stopped(31), "g5": stopped(32, safe=True)}
    result = galera.decide_bootstrap(states, 5, out_of_play=["g1", "g2"], mode="converge")
    assert result["decision"] == "join" and result["bootstrap_node"] is None
    assert result["join_order"] == ["g3", "g4", "g5"]
    assert result["running_size"] == 2


def test_the_old_view_of_only_the_play_would_have_bootstrapped_a_second_primary():
    """What the role decided before membership came from the inventory: a bootstrap among the 3 in the play."""
    result = galera.decide_bootstrap({"g3": stopped(30), "g4": stopped(31), "g5": stopped(32, safe=True)}, 3)
    assert result["decision"] == "bootstrap"


def test_unreachable_members_outside_the_play_refuse_a_bootstrap():
    states = {"g1": {"unreachable": True, "msg": "unreachable when the run began"},
              "g2": {"unreachable": True, "msg": "unreachable when the run began"},
              "g3": stopped(30), "g4": stopped(31), "g5": stopped(32, safe=True)}
    reason = refusal_with(states, 5, out_of_play=["g1", "g2"], mode="converge")
    assert "cannot compare positions: g1 unreachable" in reason and "g2 unreachable" in reason


def test_members_outside_the_play_refuse_a_bootstrap_even_when_their_state_is_known():
    states = {"g1": stopped(40), "g2": stopped(40), "g3": stopped(30), "g4": stopped(31), "g5": stopped(32)}
    reason = refusal_with(states, 5, out_of_play=["g1", "g2"])
    assert "g1 is outside the play (--limit)" in reason and "g2 is outside the play" in reason


def test_a_forced_bootstrap_never_starts_members_outside_the_play():
    states = {"g1": None, "g2": stopped(40), "g3": stopped(30)}
    result = galera.decide_bootstrap(states, 3, force_node="g2", out_of_play=["g1"])
    assert result["bootstrap_node"] == "g2" and result["join_order"] == ["g3"]
    assert result["nodes"]["g1"]["action"] == "none" and "outside the play" in result["nodes"]["g1"]["reason"]


def test_force_node_outside_the_play_is_refused():
    reason = refusal_with({"g1": stopped(4), "g2": stopped(3), "g3": stopped(2)}, 3, force_node="g1",
                          out_of_play=["g1"])
    assert "force_node g1 is outside the play" in reason


def test_stopped_members_outside_the_play_are_left_alone_beside_a_primary_component():
    states = {"g1": running(size=2), "g2": running(size=2), "g3": stopped(30)}
    result = galera.decide_bootstrap(states, 3, out_of_play=["g3"], mode="converge")
    assert result["decision"] == "none" and result["join_order"] == []
    assert "outside the play" in result["nodes"]["g3"]["reason"]
    assert "2 of the 3 members run" in result["reason"] and "left alone: g3" in result["reason"]


def test_a_converge_refuses_a_node_running_outside_the_primary_component():
    states = {"g1": running(size=2), "g2": running(size=2),
              "g3": running(status="non-Primary", state="Initialized", size=1)}
    reason = refusal_with(states, 3, mode="converge")
    assert "g3 runs outside a Primary component (g3: cluster_status non-Primary)" in reason
    assert "galera_recover.yml" in reason


def test_a_converge_refuses_when_every_node_runs_non_primary():
    states = dict((h, running(status="non-Primary", state="Initialized", size=1)) for h in ("g1", "g2", "g3"))
    reason = refusal_with(states, 3, mode="converge")
    assert "neither stops nor restarts" in reason and "no Primary component runs" in reason


def test_a_recovery_joins_a_node_running_outside_the_primary_component():
    states = {"g1": running(size=2), "g2": running(size=2),
              "g3": running(status="non-Primary", state="Initialized", size=1)}
    assert galera.decide_bootstrap(states, 3, mode="recover")["join_order"] == ["g3"]


def test_unknown_mode_is_refused():
    assert "mode must be" in refusal_with({"g1": fresh()}, 1, mode="fix")


def refusal_with(states, expected, **options):
    with pytest.raises(galera.BootstrapRefused) as info:
        galera.decide_bootstrap(states, expected, **options)
    return info.value.reason
