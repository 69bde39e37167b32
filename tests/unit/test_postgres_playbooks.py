"""The PostgreSQL cluster playbooks refuse a --limit that leaves members out, before contacting any host.

Runs ansible-playbook against an inventory whose hosts cannot be reached: each points SSH at a closed port on
127.0.0.1, so any task that contacts a host ends UNREACHABLE at once. A refusal must come with no host
contacted; without --limit the check passes and the next play's first contact is the expected UNREACHABLE."""
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLAYBOOKS = ["pg_switchover.yml", "pg_failover.yml", "rolling_restart_postgres.yml"]

INVENTORY = """
all:
  vars:
    ansible_connection: ssh
    ansible_host: 127.0.0.1
    ansible_port: 1
    ansible_ssh_common_args: -o ConnectTimeout=2 -o BatchMode=yes
  children:
    %s:
      hosts: {pga: {}, pgb: {}, pgc: {}}
    other:
      hosts: {web1: {}}
"""


def run(tmp_path, playbook, group="postgres", limit=None, extra=None, all_vars=None):
    inventory = tmp_path / "inventory.yml"
    text = INVENTORY % group
    for name, value in (all_vars or {}).items():
        text = text.replace("  vars:\n", "  vars:\n    %s: %s\n" % (name, value), 1)
    inventory.write_text(text)
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    env["ANSIBLE_COLLECTIONS_PATH"] = os.path.join(REPO, ".collections")
    command = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory),
               os.path.join(REPO, "playbooks", playbook)]
    if limit:
        command += ["--limit", limit]
    for name, value in (extra or {}).items():
        command += ["-e", "%s=%s" % (name, value)]
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False)


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
