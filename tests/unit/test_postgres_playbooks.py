"""The PostgreSQL cluster playbooks refuse a --limit that leaves members out, before contacting any host.

Runs ansible-playbook against an inventory whose hosts cannot be reached (unreachable_playbooks.py): a refusal
must come with no host contacted; without --limit the check passes and the next play's first contact is the
expected UNREACHABLE."""
import pytest

from ansible_collections.dbops.clusters.tests.unit.unreachable_playbooks import run_playbook, write_inventory

PLAYBOOKS = ["pg_switchover.yml", "pg_failover.yml", "rolling_restart_postgres.yml", "pg_reinit.yml"]


def run(tmp_path, playbook, group="postgres", limit=None, extra=None, all_vars=None):
    inventory = write_inventory(tmp_path, group, ["pga", "pgb", "pgc"], all_vars)
    return run_playbook(inventory, playbook, limit, extra)


@pytest.mark.parametrize("playbook", PLAYBOOKS)
@pytest.mark.parametrize("limit,left_out", [("pga", "pgb, pgc"), ("pga,pgb,web1", "pgc")])
def test_limit_leaving_members_out_is_refused_before_any_contact(tmp_path, playbook, limit, left_out):
    result = run(tmp_path, playbook, limit=limit)
    assert result.returncode != 0
    assert "--limit leaves %s of the inventory group postgres (postgres_tuned_group) out of the play" % left_out \
        in result.stdout, result.stdout[-3000:]
    assert "UNREACHABLE" not in result.stdout, result.stdout[-3000:]


@pytest.mark.parametrize("playbook", PLAYBOOKS)
@pytest.mark.parametrize("where", ["extra", "inventory"])
def test_group_named_by_postgres_tuned_group_is_the_one_checked(tmp_path, playbook, where):
    """The playbooks read the group from the variable the role reads, from -e or from the inventory."""
    if where == "extra":
        result = run(tmp_path, playbook, group="pgcluster", limit="pgb", extra={"postgres_tuned_group": "pgcluster"})
    else:
        result = run(tmp_path, playbook, group="pgcluster", limit="pgb", all_vars={"postgres_tuned_group": "pgcluster"})
    assert result.returncode != 0
    assert "--limit leaves pga, pgc of the inventory group pgcluster" in result.stdout, result.stdout[-3000:]
    assert "UNREACHABLE" not in result.stdout


@pytest.mark.parametrize("playbook", PLAYBOOKS)
@pytest.mark.parametrize("limit", [None, "web1"])
def test_a_group_that_matches_no_host_fails_naming_the_variable(tmp_path, playbook, limit):
    """The role's docs allow any group name: a playbook left on the default must not skip every play and exit 0."""
    result = run(tmp_path, playbook, group="ledgerpg", limit=limit)
    assert result.returncode != 0
    assert "postgres_tuned_group=postgres matches no host of the inventory" in result.stdout, result.stdout[-3000:]
    assert "UNREACHABLE" not in result.stdout


@pytest.mark.parametrize("playbook", PLAYBOOKS)
def test_a_limit_holding_no_member_is_refused(tmp_path, playbook):
    result = run(tmp_path, playbook, limit="web1")
    assert result.returncode != 0
    assert "--limit leaves pga, pgb, pgc of the inventory group postgres" in result.stdout, result.stdout[-3000:]


@pytest.mark.parametrize("playbook", PLAYBOOKS)
@pytest.mark.parametrize("limit", [None, "postgres"])
def test_whole_group_passes_the_check_and_goes_on(tmp_path, playbook, limit):
    result = run(tmp_path, playbook, limit=limit)
    assert "out of the play" not in result.stdout
    # the check passed for the run_once host, then the next play reached for the hosts
    assert "ok: [pga]" in result.stdout.split("TASK [The group is named once, has members, and the play holds them]")[1]
    assert "TASK [Put the group's members in the play in the group the next plays target]" in result.stdout
    assert "UNREACHABLE" in result.stdout, result.stdout[-3000:]


def test_the_every_engine_restart_passes_over_a_missing_postgres_group(tmp_path):
    """rolling_restart.yml restarts the engines the inventory has: no PostgreSQL group is no error there."""
    result = run(tmp_path, "rolling_restart.yml", group="galera")
    output = " ".join(result.stdout.split())           # the yaml callback folds long messages
    assert "postgres_tuned_group=postgres matches no host: no such cluster, nothing to do" in output, \
        result.stdout[-3000:]
    assert "matches no host of the inventory" not in output
    assert "is a part of pg_switchover.yml" not in output     # the imported parts pass over it too
