"""group_replication refuses bad accounts, privileges and missing passwords before any change, with the rules
every MySQL-family role shares, named with its own variables.

Runs ansible-playbook on the controller (-c local) against an inventory with a `gr` group; the check under test
fails before the first task that would change a host."""
import json
import os
import subprocess
import sys

import pytest
import yaml

from ansible_collections.dbops.clusters.tests.unit.role_batch import assert_control_passed, run_role_batch

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


ADDRESSES = {"n1": {"group_replication_address": "10.0.2.1"}, "n2": {"group_replication_address": "10.0.2.2"},
             "n3": {"group_replication_address": "10.0.2.3"}}


def run_plan(tmp_path, variables, members=None):
    inventory = tmp_path / "inventory.yml"
    members = members or {"n1": None, "n2": None, "n3": None}
    inventory.write_text(yaml.safe_dump({"all": {"children": {"gr": {"hosts": members}}}}))
    (tmp_path / "vars.json").write_text(json.dumps(dict({
        "group_replication_flavor": "mysql", "group_replication_group": "gr",
        "group_replication_recovery_password": "it's a secret"}, **variables)))
    play = tmp_path / "play.yml"
    play.write_text(yaml.safe_dump([{"hosts": "all", "gather_facts": False, "tasks": [
        {"name": "Plan", "ansible.builtin.include_role": {"name": "dbops.clusters.group_replication",
                                                          "tasks_from": "plan.yml"}}]}]))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".collections"))
    command = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory),
               "-c", "local", "-e", "@%s" % (tmp_path / "vars.json"), str(play)]
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=180, check=False)


def test_accounts_are_refused_by_the_family_rules_before_any_change(tmp_path):
    result = run_plan(tmp_path, {"group_replication_users": [
        {"name": "app", "host": "%", "password": "pw", "privileges": {"app.*": "SELECT,INSRET"}},
        {"name": "nopw", "host": "%"}], "group_replication_databases": [{"name": "bad`name"}],
        "group_replication_port": 70000})
    assert result.returncode != 0, result.stdout[-2000:]
    for words in ("group_replication_users[0] (app@%): INSRET on app.*: no such privilege",
                  "group_replication_users[1] (nopw@%): has no password (no default password)",
                  "group_replication_databases[0].name", "group_replication_port=70000"):
        assert words in result.stdout, "%r not in:\n%s" % (words, result.stdout[-2500:])
    assert "it's a secret" not in result.stdout


def test_a_restart_clears_both_pending_files_of_that_member_only(tmp_path):
    """mysql_config keeps a member's restart reasons in two files (the server's and, with -gr, the Group
    Replication file's); restart_pending_clear.yml removes both once that member restarted."""
    pending = tmp_path / "dbops-restart-pending"
    for path in (pending, tmp_path / "dbops-restart-pending-gr", tmp_path / "other-member-pending"):
        path.write_text("back_log: 10000 -> 77\n")
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"all": {"children": {"gr": {"hosts": {"n1": None}}}}}))
    play = tmp_path / "play.yml"
    play.write_text(yaml.safe_dump([{"hosts": "n1", "gather_facts": False, "tasks": [
        {"name": "Clear", "ansible.builtin.include_role": {"name": "dbops.clusters.group_replication",
                                                           "tasks_from": "restart_pending_clear.yml"},
         "vars": {"group_replication_member": "n1", "group_replication_restart_pending_file": str(pending)}}]}]))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".collections"))
    result = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory),
                             "-c", "local", str(play)], cwd=REPO, env=env, capture_output=True, text=True,
                            timeout=180, check=False)
    assert result.returncode == 0, result.stdout[-2000:]
    assert sorted(p.name for p in tmp_path.glob("*pending*")) == ["other-member-pending"]


def test_two_members_with_one_server_id_are_refused_before_any_change(tmp_path):
    members = dict(ADDRESSES, n3={"group_replication_address": "10.0.2.3", "percona_server_server_id": 513})
    result = run_plan(tmp_path, {}, members=members)
    assert result.returncode != 0
    # 10.0.2.1 derives 2 * 256 + 1 = 513.
    assert "n1, n3 share server_id 513 in one group" in result.stdout, result.stdout[-2500:]


# All cases in one ansible-playbook run: group caseN, one host with the case's variable as a group variable, next
# to a group with nothing bad in it (test_good_members_pass_the_plan). Most of a host's time goes to the db_host
# dependency (its modules run on this machine), not to starting ansible-playbook: one host a case, as the checks
# are each host's own (a run per case with three hosts took ~100 s, and so did one run with three hosts a case).
OUT_OF_RANGE = [
    ("group_replication_flow_control_threshold", -5, "group_replication_flow_control_threshold=-5: must be from 0"),
    ("group_replication_autorejoin_tries", 5000, "group_replication_autorejoin_tries=5000: must be from 0 to 2016"),
    ("group_replication_unreachable_majority_timeout", -1,
     "group_replication_unreachable_majority_timeout=-1: must be from 0 to 31536000"),
    ("group_replication_clone_threshold", 0, "group_replication_clone_threshold=0: must be from 1"),
    ("group_replication_transaction_size_limit", "lots", "group_replication_transaction_size_limit='lots'"),
    ("group_replication_gate_timeout", 0, "group_replication_gate_timeout=0: must be from 1"),
    ("group_replication_gate_max_queue", -1, "group_replication_gate_max_queue=-1: must be from 0"),
    ("group_replication_member_weight", 101, "group_replication_member_weight=101: must be from 0 to 100"),
    ("percona_server_overrides", {"innodb_io_capacity": -100},
     "percona_server_overrides.innodb_io_capacity=-100: negative values are refused"),
    ("percona_server_overrides", {"server_id": 9}, "percona_server_overrides.server_id: the role sets it"),
]


def run_plan_batch(tmp_path, cases, members, control_members):
    """plan.yml once for every case. Group caseN: hosts caseN_M for each of members (M: its host variables), with
    cases[N] and group_replication_group=caseN as group variables, so its members are its own hosts.
    Group `control`: the same without a case's variables. Returns run_role_batch's report and the groups."""
    groups = {name: {"hosts": {"%s_%s" % (name, m): dict(hostvars or {}) for m, hostvars in hosts.items()},
                     "vars": dict({"group_replication_group": name}, **variables)}
              for name, hosts, variables in [("case%d" % i, members, case) for i, case in enumerate(cases)]
              + [("control", control_members, {})]}
    batch = run_role_batch(tmp_path, {"all": {"children": groups}}, "group_replication", "plan.yml", {
        "group_replication_flavor": "mysql", "group_replication_recovery_password": "it's a secret"})
    return dict(batch, groups=groups)


@pytest.fixture(scope="module")
def out_of_range(tmp_path_factory):
    return run_plan_batch(tmp_path_factory.mktemp("out_of_range"), [{case[0]: case[1]} for case in OUT_OF_RANGE],
                          {"n1": ADDRESSES["n1"]}, ADDRESSES)


def test_good_members_pass_the_plan(out_of_range):
    """The control group of the batch: the hosts of ADDRESSES, nothing bad."""
    assert_control_passed(out_of_range, out_of_range["groups"]["control"]["hosts"], "group_replication", "plan.yml")


@pytest.mark.parametrize("variable, value, words", OUT_OF_RANGE)
def test_numbers_out_of_range_are_refused_naming_the_variable(out_of_range, variable, value, words):
    case = "case%d" % OUT_OF_RANGE.index((variable, value, words))
    assert_control_passed(out_of_range, out_of_range["groups"]["control"]["hosts"], "group_replication", "plan.yml")
    assert out_of_range["groups"][case]["vars"][variable] == value
    for host in sorted(out_of_range["groups"][case]["hosts"]):
        messages = out_of_range["failures"].get(host)
        assert messages, "%s (%s=%r) did not fail" % (host, variable, value)
        assert len(messages) == 1 and words in messages[0][1], "%r not in %s's failure: %s" % (words, host, messages)


def test_a_member_that_failed_earlier_is_planned_as_unreadable_not_a_crash(tmp_path):
    """A member whose server did not start fails before group.yml reads it: the plan must name it as a member
    that could not be read (and refuse a bootstrap without it), not crash on its missing state."""
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"all": {"children": {"gr": {"hosts": ADDRESSES}}}}))
    (tmp_path / "vars.json").write_text(json.dumps({
        "group_replication_flavor": "mysql", "group_replication_group": "gr",
        "group_replication_recovery_password": "pw",   # no server answers here: members read as not running
        # group.yml's modules import PyMySQL: the test's own Python has it, the machine's python3 need not
        "ansible_python_interpreter": sys.executable}))
    play = tmp_path / "play.yml"
    play.write_text(yaml.safe_dump([{"hosts": "all", "gather_facts": False, "tasks": [
        {"name": "Plan", "ansible.builtin.include_role": {"name": "dbops.clusters.group_replication",
                                                          "tasks_from": "plan.yml"}},
        {"name": "n2 fails before its state is read (its server did not start)",
         "ansible.builtin.fail": {"msg": "mysqld did not start"}, "when": "inventory_hostname == 'n2'"},
        {"name": "Group", "ansible.builtin.include_role": {"name": "dbops.clusters.group_replication",
                                                           "tasks_from": "group.yml"},
         "vars": {"group_replication_group_name_effective": "0b6f5f4e-1b5e-4c1e-9a7e-2a7b6f0e6c11"}}]}]))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".collections"))
    result = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory),
                             "-c", "local", "-e", "@%s" % (tmp_path / "vars.json"), str(play)], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=180, check=False)
    assert "has no attribute" not in result.stdout, result.stdout[-3000:]
    assert "n2 (could not be read: it did not report its state" in result.stdout, result.stdout[-3000:]
    assert result.returncode != 0


def test_gr_reboot_refuses_a_play_that_leaves_members_out(tmp_path):
    """--limit with group_replication_ignore_unreachable would bootstrap the members in the play past the ones
    left out, which may be ONLINE in a running group: a second group. The playbook refuses before any change
    (run in check mode: nothing could be written on the controller even if the refusal were missing)."""
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"all": {"children": {"group_replication": {"hosts": ADDRESSES}}}}))
    (tmp_path / "vars.json").write_text(json.dumps({
        "group_replication_flavor": "mysql", "group_replication_recovery_password": "pw",
        "group_replication_ignore_unreachable": True}))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".collections"))
    result = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory),
                             "-c", "local", "--check", "--limit", "n1", "-e", "@%s" % (tmp_path / "vars.json"),
                             os.path.join(REPO, "playbooks", "gr_reboot.yml")], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=180, check=False)
    assert result.returncode != 0
    assert "leaves n2, n3 of group_replication out" in result.stdout, result.stdout[-3000:]
    assert "Write the Group Replication option file" not in result.stdout, result.stdout[-3000:]
