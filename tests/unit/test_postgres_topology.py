"""Who the primary is comes from the servers; what the role may empty to make a replica.

The sequence that once destroyed a live primary: a switchover to pgb, then the role re-run with pga still first
in the inventory. These tests hold the decision to what the servers say."""
import os
import struct
import time

import pytest

from ansible_collections.dbops.clusters.plugins.filter.postgres_primary import postgres_primary
from ansible_collections.dbops.clusters.plugins.module_utils import postgres_replication as pr

SYSID = "7312345678901234567"


def primary(objects=3, replicas=2, sysid=SYSID):
    return dict(running=True, in_recovery=False, has_data=True, standby_signal=False, user_objects=objects,
                streaming_replicas=replicas, system_identifier=sysid)


def replica(sysid=SYSID):
    return dict(running=True, in_recovery=True, has_data=True, standby_signal=True, user_objects=3,
                streaming_replicas=0, system_identifier=sysid)


def fresh(sysid="7399999999999999999"):
    """A cluster pg_createcluster just made on a replica-to-be: a primary holding nothing."""
    return dict(running=True, in_recovery=False, has_data=True, standby_signal=False, user_objects=0,
                streaming_replicas=0, system_identifier=sysid)


def absent():
    return dict(running=False, error="no such socket", has_data=False, standby_signal=False,
                system_identifier=None)


def stopped(standby=False, sysid=SYSID):
    return dict(running=False, error="connection refused", has_data=True, standby_signal=standby,
                system_identifier=sysid)


def test_after_a_switchover_the_servers_win_over_the_inventory_order():
    decision = pr.choose_primary({"pga": replica(), "pgb": primary(), "pgc": replica()}, "pga")
    assert decision["primary"] == "pgb" and not decision["error"]
    assert "postgres_tuned_primary names pga, the servers win" in decision["reason"]


def test_data_only_in_the_postgres_database_counts_as_data():
    # one table in the postgres database, no other database, no replica yet
    decision = pr.choose_primary({"pga": fresh(), "pgb": primary(objects=1, replicas=0)}, "pga")
    assert decision["primary"] == "pgb"


def test_replicas_streaming_from_an_empty_primary_make_it_the_primary():
    decision = pr.choose_primary({"pga": fresh(), "pgb": primary(objects=0, replicas=1), "pgc": replica()}, "pga")
    assert decision["primary"] == "pgb"


def test_a_new_cluster_takes_the_inventory_choice():
    assert pr.choose_primary({"pga": absent(), "pgb": absent()}, "pga")["primary"] == "pga"
    assert pr.choose_primary({"pga": fresh(), "pgb": fresh("1")}, "pgb")["primary"] == "pgb"


def test_two_primaries_holding_data_are_refused_naming_both():
    decision = pr.choose_primary({"pga": primary(), "pgb": primary(replicas=0), "pgc": replica()}, "pga")
    assert decision["primary"] is None
    assert "pga and pgb" in decision["error"] and "pg_rejoin.yml" in decision["error"]


def test_the_reseed_force_lets_the_user_discard_one_of_two_primaries():
    decision = pr.choose_primary({"pga": primary(), "pgb": primary(replicas=0)}, "pga", {"pgb": True})
    assert decision["primary"] == "pga" and not decision["error"]


def test_a_stopped_old_primary_of_the_same_cluster_is_not_started_beside_the_new_one():
    decision = pr.choose_primary({"pga": stopped(), "pgb": primary(), "pgc": replica()}, "pga")
    assert decision["primary"] is None and decision["stopped_primaries"] == ["pga"]
    assert "second primary beside pgb" in decision["error"] and "postgres_tuned_reseed" in decision["error"]


def test_a_stopped_member_of_another_cluster_is_left_to_the_reseed_guard():
    # a replica-to-be whose fresh cluster is stopped (an earlier run failed): not this cluster's history
    decision = pr.choose_primary({"pga": primary(), "pgb": stopped(sysid="1")}, "pga")
    assert decision["primary"] == "pga" and not decision["error"]


def test_replicas_whose_primary_is_stopped_name_it():
    decision = pr.choose_primary({"pga": replica(), "pgb": stopped(), "pgc": replica()}, "pga")
    assert decision["primary"] == "pgb" and not decision["error"]


def test_replicas_without_any_primary_are_refused_naming_the_failover():
    decision = pr.choose_primary({"pga": replica(), "pgb": replica()}, "pga")
    assert decision["primary"] is None and "pg_failover.yml" in decision["error"]


def test_a_stopped_standby_counts_as_a_replica():
    decision = pr.choose_primary({"pga": primary(), "pgb": stopped(standby=True)}, "pgb")
    assert decision["primary"] == "pga" and not decision["error"]


def test_the_filter_reads_a_looped_tasks_results():
    results = [dict(item="pga", **replica()), dict(item="pgb", **primary())]
    assert postgres_primary(results, "pga")["primary"] == "pgb"


@pytest.mark.parametrize("state,forced,expected", [
    (fresh(), False, None),
    (replica(), False, None),
    (primary(objects=1, replicas=0), False, "1 databases or tables of the user's"),
    (primary(objects=0, replicas=1), False, "1 replicas streaming from it"),
    (primary(), True, None),
    (stopped(sysid="1"), False, "is not running"),
    (stopped(sysid="1"), True, None),
    (absent(), False, None),
])
def test_reseed_refusal(state, forced, expected):
    refusal = pr.reseed_refusal("pgb", state, forced)
    if expected is None:
        assert refusal is None
    else:
        assert expected in refusal and "postgres_tuned_reseed" in refusal


def test_the_system_identifier_is_read_from_pg_control(tmp_path):
    control = tmp_path / "pg_control"
    control.write_bytes(struct.pack("<Q", 7312345678901234567) + b"\0" * 100)
    assert pr.read_system_identifier(str(control)) == "7312345678901234567"
    assert pr.read_system_identifier(str(tmp_path / "missing")) is None


def test_a_live_postmaster_is_told_from_a_stale_pid_file(tmp_path):
    """pg_failover.yml refuses while a silent member's postmaster lives (crash recovery: it takes writes soon)."""
    import shutil
    import subprocess

    from ansible_collections.dbops.clusters.plugins.modules import postgres_member_state as pms

    fake = tmp_path / "postgres"                 # a process whose name is the postmaster's
    shutil.copy("/bin/sleep", str(fake))
    process = subprocess.Popen([str(fake), "30"])
    try:
        # Popen can return before the kernel names the new program (/proc/PID/comm): wait for the name first
        for _attempt in range(200):
            with open("/proc/%d/comm" % process.pid) as comm:
                if comm.read().strip() == "postgres":
                    break
            time.sleep(0.01)
        (tmp_path / "postmaster.pid").write_text("%d\n/var/lib/postgresql/17/main\n" % process.pid)
        assert pms.postmaster_alive(str(tmp_path)) is True
    finally:
        process.kill()
        process.wait()
    assert pms.postmaster_alive(str(tmp_path)) is False          # the same file, its process gone
    (tmp_path / "postmaster.pid").write_text("%d\n" % os.getpid())
    assert pms.postmaster_alive(str(tmp_path)) is False          # alive, but not a postgres process
    (tmp_path / "postmaster.pid").unlink()
    assert pms.postmaster_alive(str(tmp_path)) is False


def test_the_roles_own_unfinished_copy_is_copied_again_but_never_a_running_primary():
    partial = {"has_data": True, "running": False, "seeding": True}
    assert pr.reseed_refusal("pgs1", partial, False) is None
    # the same directory without the marker: the role cannot tell it from a server's own data
    assert "is not running" in pr.reseed_refusal("pgs1", dict(partial, seeding=False), False)
    assert pr.reseed_refusal("pgs1", dict(partial, running=True, in_recovery=True), False) is None
    refused = pr.reseed_refusal("pgs1", dict(partial, running=True, in_recovery=False, user_objects=3), False)
    assert "runs as a primary although the role's copy onto it never finished" in refused
