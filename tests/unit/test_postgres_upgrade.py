"""A PostgreSQL major upgrade decided from what the servers said (playbooks/pg_upgrade_major.yml), and the role's
refusal to change the major of a running server."""
import pytest

from ansible_collections.dbops.clusters.plugins.filter.postgres_major_refusal import postgres_major_refusal
from ansible_collections.dbops.clusters.plugins.filter.postgres_upgrade_plan import postgres_upgrade_plan
from ansible_collections.dbops.clusters.plugins.module_utils import postgres_upgrade as pu

POLICY_18 = """postgresql-18:
  Installed: (none)
  Candidate: 18.1-1
  Version table:
     18.1-1 50
         50 http://deb.example/debian sid/main amd64 Packages
"""
POLICY_NONE = """postgresql-19:
  Installed: (none)
  Candidate: (none)
  Version table:
"""


def member(major, in_recovery, running=True):
    return dict(running=running, in_recovery=in_recovery if running else None, major=major)


def cluster(primary=17, replicas=(17, 17)):
    members = {"pga": member(primary, False)}
    for index, major in enumerate(replicas):
        members["pg" + "bcd"[index]] = member(major, True)
    return members


def test_majors_from_server_version_num_and_pg_version():
    assert pu.major_of(170006) == 17
    assert pu.major_of("180001") == 18
    assert pu.major_of("17") == 17
    assert pu.major_of(None) is None and pu.major_of("17beta1") is None


def test_apt_candidate():
    assert pu.apt_candidate(POLICY_18) == "18.1-1"
    assert pu.apt_candidate(POLICY_NONE) is None
    assert pu.apt_candidate("N: Unable to locate package postgresql-19") is None


def test_a_healthy_cluster_upgrades_the_primary_then_rebuilds_every_replica():
    decided = pu.plan(cluster(), 18, "18.1-1")
    assert decided["error"] == ""
    assert decided["primary"] == "pga" and decided["source"] == 17
    assert decided["actions"] == {"pga": pu.UPGRADE_PRIMARY, "pgb": pu.REBUILD_REPLICA, "pgc": pu.REBUILD_REPLICA}


def test_the_primary_is_the_server_not_in_recovery_whatever_its_name():
    members = {"pga": member(17, True), "pgb": member(17, False), "pgc": member(17, True)}
    assert pu.plan(members, "18", "18.1-1")["actions"]["pgb"] == pu.UPGRADE_PRIMARY


@pytest.mark.parametrize("target, words", [
    (17, "downgraded"), (16, "downgraded"), (19, "skips a major"), ("eighteen", "whole number"),
    (True, "whole number"), (12, "or later")])
def test_a_downgrade_a_skipped_major_or_a_bad_target_is_refused_naming_the_variable(target, words):
    decided = pu.plan(cluster(primary=18, replicas=(18, 18)) if words == "downgraded" else cluster(), target, "x")
    assert words in decided["error"] and "pg_upgrade_target" in decided["error"]
    assert decided["actions"] == {}


def test_an_unhealthy_cluster_is_refused_before_any_change():
    members = cluster()
    members["pgc"] = member(17, None, running=False)
    assert "pgc does not answer" in pu.plan(members, 18, "18.1-1")["error"]
    members = cluster()
    members["pgb"] = member(17, False)           # two primaries
    assert "exactly one primary" in pu.plan(members, 18, "18.1-1")["error"]


def test_a_target_apt_cannot_find_is_refused():
    error = pu.plan(cluster(), 18, None)["error"]
    assert "apt finds no package postgresql-18 to install on pga, pgb, pgc" in error
    error = pu.plan(cluster(), 18, {"pga": "18.1-1", "pgb": "18.1-1", "pgc": None})["error"]
    assert "to install on pgc " in error


def test_a_replica_ahead_of_its_primary_is_refused():
    """A replica rebuilt before its primary was upgraded (the order broken) cannot stream; refused, not skipped."""
    error = pu.plan(cluster(replicas=(18, 17)), 18, "18.1-1")["error"]
    assert "pgb (18)" in error and "only from the upgraded primary" in error


def test_a_second_run_skips_what_is_on_the_target_and_finishes_the_rest():
    decided = pu.plan(cluster(primary=18, replicas=(18, 17)), 18, "18.1-1")    # installed: apt says so
    assert decided["error"] == ""
    assert decided["actions"] == {"pga": pu.DONE, "pgb": pu.DONE, "pgc": pu.REBUILD_REPLICA}
    # a replica stopped halfway through its copy is copied again: the upgraded primary holds everything
    members = cluster(primary=18, replicas=(18, 18))
    members["pgc"] = member(None, None, running=False)
    assert pu.plan(members, 18, "18.1-1")["actions"]["pgc"] == pu.REBUILD_REPLICA
    done = pu.plan(cluster(primary=18, replicas=(18, 18)), 18, None)
    assert set(done["actions"].values()) == {pu.DONE} and "nothing left to do" in done["reason"]


def test_the_filter_reads_registered_results_and_apt_policy():
    results = [dict(item=host, **state) for host, state in cluster().items()]
    decided = postgres_upgrade_plan(results, 18, POLICY_18)
    assert decided["candidate"] == "18.1-1" and decided["actions"]["pga"] == pu.UPGRADE_PRIMARY
    assert "apt finds no package" in postgres_upgrade_plan(results, 18, POLICY_NONE)["error"]
    per_member = dict((host, POLICY_18) for host in ("pga", "pgb", "pgc"))
    assert postgres_upgrade_plan(results, 18, per_member)["error"] == ""
    per_member["pgb"] = POLICY_NONE
    assert "on pgb " in postgres_upgrade_plan(results, 18, per_member)["error"]


def test_the_role_refuses_to_change_the_major_of_a_running_member():
    refusal = postgres_major_refusal(member(17, False), 18, "pga")
    assert "pga runs PostgreSQL 17" in refusal and pu.PLAYBOOK in refusal and "pg_upgrade_target=18" in refusal
    assert "never downgraded" in postgres_major_refusal(member(18, True), 17, "pgb")
    assert postgres_major_refusal(member(17, True), 17, "pgb") == ""
    assert postgres_major_refusal(member(None, None, running=False), 18, "pgc") == ""    # a new member


def test_the_role_names_the_member_of_a_looped_result():
    assert postgres_major_refusal(dict(member(17, True), item="pgc"), 18).startswith("pgc runs PostgreSQL 17")


def test_source_only_column_options_are_stripped_from_user_columns_only():
    assert pu.source_only_options(17) == ("pg_attver",) and pu.source_only_options(16) == ()
    sql = pu.strip_options_sql(("pg_attver",))
    assert "attrelid >= 16384" in sql and "o NOT LIKE 'pg_attver=%'" in sql and "o LIKE 'pg_attver=%'" in sql
    assert pu.strip_options_sql(()) == ""


def test_the_filter_names_the_source_only_options_to_strip():
    results = [dict(item=host, **state) for host, state in cluster().items()]
    decided = postgres_upgrade_plan(results, 18, POLICY_18)
    assert decided["source_only_options"] == ["pg_attver"] and "UPDATE" in decided["strip_options_sql"]
