"""group_replication refuses bad accounts, privileges and missing passwords before any change, with the rules
every MySQL-family role shares, named with its own variables.

Runs ansible-playbook on the controller (-c local) against an inventory with a `gr` group; the check under test
fails before the first task that would change a host."""
import json
import os
import subprocess
import sys

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_plan(tmp_path, variables):
    inventory = tmp_path / "inventory.yml"
    members = {"n1": None, "n2": None, "n3": None}
    inventory.write_text(yaml.safe_dump({"all": {"children": {"gr": {"hosts": members}}}}))
    (tmp_path / "vars.json").write_text(json.dumps(dict({
        "group_replication_flavor": "mysql", "group_replication_inventory_group": "gr",
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
