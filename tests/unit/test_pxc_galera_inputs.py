"""pxc_galera refuses bad input before any change, naming the variable; membership comes from the inventory
group; a change of the cluster address alone restarts nothing; a running cluster is never renamed.

Runs ansible-playbook on the controller (-c local) against an inventory with a `galera` group; the checks
under test fail before the first task that would change a host."""
import json
import os
import subprocess
import sys

import pytest
import yaml

from ansible_collections.dbops.clusters.tests.unit.role_batch import assert_control_passed, run_role_batch

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_role(tmp_path, tasks_from, variables, members=("n1", "n2", "n3"), group="galera", limit=None,
             host_vars=None, any_errors_fatal=False, then=None):
    """Runs the role's tasks_from on the members, shows pxc_galera_restart_reasons, then runs the role's task file
    then (main.yml's order: schedule_restart.yml, later rolling_restart.yml)."""
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"all": {"children": {group: {"hosts": {
        m: (host_vars or {}).get(m) for m in members}}}}}))
    # The restart-pending file goes to tmp_path: a test never writes into the controller's /etc.
    (tmp_path / "vars.json").write_text(json.dumps(dict({
        "pxc_galera_address": "10.0.0.1", "pxc_galera_restart_pending_file": str(tmp_path / "restart-pending")},
        **variables)))
    play = tmp_path / "play.yml"
    tasks = [
        {"name": "Run the role's tasks", "ansible.builtin.include_role": {
            "name": "dbops.clusters.pxc_galera", "tasks_from": tasks_from}},
        {"name": "Show the restart reasons", "ansible.builtin.debug": {
            "msg": "REASONS={{ pxc_galera_restart_reasons | default('unset') | to_json }}"}},
    ] + ([{"name": "Then the role's " + then, "ansible.builtin.include_role": {
        "name": "dbops.clusters.pxc_galera", "tasks_from": then}}] if then else [])
    play.write_text(yaml.safe_dump([{"hosts": "all", "gather_facts": False, "any_errors_fatal": any_errors_fatal,
                                     "tasks": tasks}]))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".collections"))
    command = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory),
               "-c", "local", "-e", "@%s" % (tmp_path / "vars.json"), str(play)]
    if limit:
        command += ["--limit", limit]
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=180, check=False)


def refused(result, *words):
    assert result.returncode != 0, result.stdout[-2000:]
    for word in words:
        assert word in result.stdout, "%r not in:\n%s" % (word, result.stdout[-2500:])


# ------------------------------------------------------------------------------------------ membership

def test_members_come_from_the_inventory_group_not_the_play(tmp_path):
    """--limit n1: the group still has 4 members, which is refused as even (the play's 1 host is not counted)."""
    result = run_role(tmp_path, "cluster_facts.yml", {"pxc_galera_flavor": "mariadb"},
                      members=("n1", "n2", "n3", "n4"), limit="n1")
    refused(result, "pxc_galera_group=galera has 4 members (n1, n2, n3, n4)")


def test_limit_while_members_outside_the_play_cannot_be_reached_is_refused_naming_them(tmp_path):
    gone = {"ansible_connection": "ssh", "ansible_host": "192.0.2.1", "ansible_ssh_common_args": "-o ConnectTimeout=2"}
    result = run_role(tmp_path, "cluster_facts.yml", {"pxc_galera_flavor": "mariadb"}, limit="n1",
                      host_vars={"n2": gone, "n3": gone})
    refused(result, "n2, n3 (members of galera) cannot be reached", "Refusing before any change")


def test_the_unreachable_refusal_is_reached_under_any_errors_fatal(tmp_path):
    """The role runs under any_errors_fatal, where ansible-core counts an ignored unreachable result as a
    failure: reading the outside members must not end the play before the refusal says why (galera_limit)."""
    gone = {"ansible_connection": "ssh", "ansible_host": "192.0.2.1", "ansible_ssh_common_args": "-o ConnectTimeout=2"}
    result = run_role(tmp_path, "cluster_facts.yml", {"pxc_galera_flavor": "mariadb"}, limit="n1",
                      host_vars={"n2": gone, "n3": gone}, any_errors_fatal=True)
    refused(result, "n2, n3 (members of galera) cannot be reached", "Refusing before any change",
            "pxc_galera_force_bootstrap_node")


def _tasks(node):
    """Every task mapping in a parsed task file, blocks, rescues and always sections included."""
    if isinstance(node, list):
        for item in node:
            yield from _tasks(item)
    elif isinstance(node, dict):
        yield node
        for key in ("block", "rescue", "always", "tasks", "pre_tasks", "post_tasks", "handlers"):
            yield from _tasks(node.get(key))


def test_every_read_that_ignores_unreachable_hosts_is_exempt_from_any_errors_fatal():
    """The role and the Galera playbooks run under any_errors_fatal, where an ignored unreachable result still
    ends the play for every host: each such read must say any_errors_fatal: false, or its message is lost."""
    files = [os.path.join(REPO, "roles", "pxc_galera", "tasks", f)
             for f in os.listdir(os.path.join(REPO, "roles", "pxc_galera", "tasks"))]
    files += [os.path.join(REPO, "playbooks", f) for f in os.listdir(os.path.join(REPO, "playbooks"))
              if "galera" in f]
    found, wrong = 0, []
    for path in files:
        with open(path, encoding="utf-8") as handle:
            for task in _tasks(yaml.safe_load(handle)):
                if task.get("ignore_unreachable"):
                    found += 1
                    if task.get("any_errors_fatal") is not False:
                        wrong.append("%s: %s" % (os.path.relpath(path, REPO), task.get("name")))
    assert found >= 2, "the reads this test guards were not found"
    assert not wrong, wrong


def test_a_missing_group_is_refused_naming_the_variable(tmp_path):
    result = run_role(tmp_path, "cluster_facts.yml", {"pxc_galera_flavor": "mariadb"}, group="db")
    refused(result, "pxc_galera_group=galera: no such inventory group")


# ------------------------------------------------------------------------------------------- bad input

def test_bad_numbers_are_refused_each_naming_its_variable(tmp_path):
    """One run: the range check loops over every Galera number, so each bad one is named."""
    result = run_role(tmp_path, "plan.yml", {
        "pxc_galera_flavor": "mariadb", "pxc_galera_gcache_min_mb": -128,
        "pxc_galera_write_mb_per_hour": -5, "pxc_galera_fc_limit": 0, "pxc_galera_join_timeout": -1,
        "pxc_galera_ist_window_minutes": "ten"})
    refused(result, "pxc_galera_gcache_min_mb=-128: must be a whole number from 1",
            "pxc_galera_write_mb_per_hour=-5: must be a whole number from 0",
            "pxc_galera_fc_limit=0: must be a whole number from 1",
            "pxc_galera_join_timeout=-1: must be a whole number from 1",
            "pxc_galera_ist_window_minutes=ten: must be a whole number")


def test_the_family_numbers_are_refused_naming_this_roles_variables(tmp_path):
    """Port and tuning numbers go through the checks every MySQL-family role shares."""
    result = run_role(tmp_path, "plan.yml", {
        "pxc_galera_flavor": "mariadb", "pxc_galera_port": 70000, "pxc_galera_rto_minutes": 0,
        "pxc_galera_redo_mb_per_hour": -1, "pxc_galera_overrides": {"innodb_io_capacity": -200}})
    refused(result, "pxc_galera_port=70000: must be from 1 to 65535", "pxc_galera_rto_minutes=0",
            "pxc_galera_redo_mb_per_hour=-1", "pxc_galera_overrides.innodb_io_capacity=-200: negative")


def test_accounts_are_refused_by_the_family_rules_before_any_change(tmp_path):
    """The same account, privilege and password rules as percona_server, named with this role's variables:
    a misspelt privilege used to pass the plan and fail only at the grant, its message hidden by no_log."""
    result = run_role(tmp_path, "plan.yml", {"pxc_galera_flavor": "mariadb", "pxc_galera_users": [
        {"name": "app", "host": "%", "password": "pw", "privileges": {"app.*": "SELECT,INSRET"}},
        {"name": "nopw", "host": "%"}], "pxc_galera_databases": [{"name": "bad`name"}]})
    refused(result, "pxc_galera_users[0] (app@%): INSRET on app.*: no such privilege on MariaDB",
            "pxc_galera_users[1] (nopw@%): has no password (no default password)",
            "pxc_galera_databases[0].name")


# Both cases in one ansible-playbook run, each on a member of one `galera` group with its variable as a host
# variable, next to a member with nothing bad in it. Most of a host's time goes to the db_host dependency (its
# modules run on this machine), not to starting ansible-playbook, and Galera needs 3 members: a group per case
# and a control group (9 hosts) took longer than a run per case (6 hosts).
DURATIONS_AND_NAMES = [
    ("pxc_galera_evs_inactive_check_period", "PT0S", "pxc_galera_evs_inactive_check_period=PT0S: not an ISO 8601"),
    ("pxc_galera_cluster_name", "my cluster;", "pxc_galera_cluster_name=my cluster;: use 1 to 32"),
]


def run_plan_batch(tmp_path, cases):
    """plan.yml once for every case, in one `galera` group: host caseN has cases[N] as host variables; one or two
    control hosts with nothing bad make the count odd, and at least 3, as Galera needs. The checks under test are
    each host's own. Returns run_role_batch's report, the hosts and the control hosts."""
    hosts = {"case%d" % i: dict(variables) for i, variables in enumerate(cases)}
    control = ["control%d" % i for i in range(1 if len(cases) % 2 == 0 else 2)]
    hosts.update({name: None for name in control})
    batch = run_role_batch(tmp_path, {"all": {"children": {"galera": {"hosts": hosts}}}}, "pxc_galera", "plan.yml", {
        "pxc_galera_flavor": "mariadb", "pxc_galera_address": "10.0.0.1",
        "pxc_galera_restart_pending_file": str(tmp_path / "restart-pending")})
    return dict(batch, hosts=hosts, control=control)


@pytest.fixture(scope="module")
def durations_and_names(tmp_path_factory):
    return run_plan_batch(tmp_path_factory.mktemp("durations_and_names"),
                          [{case[0]: case[1]} for case in DURATIONS_AND_NAMES])


@pytest.mark.parametrize("name, value, words", DURATIONS_AND_NAMES)
def test_bad_durations_and_names_are_refused(durations_and_names, name, value, words):
    batch, host = durations_and_names, "case%d" % DURATIONS_AND_NAMES.index((name, value, words))
    assert_control_passed(batch, batch["control"], "pxc_galera", "plan.yml")
    # and no case's host reached the plan's end
    assert sorted(h for h, outcome in batch["last"]["hosts"].items() if not outcome.get("failed")) == batch["control"]
    assert batch["hosts"][host] == {name: value}
    messages = batch["failures"].get(host)
    assert messages, "%s (%s=%r) did not fail" % (host, name, value)
    assert len(messages) == 1 and words in messages[0][1], "%r not in %s's failure: %s" % (words, host, messages)


def test_bad_provider_options_are_refused_each_naming_the_option(tmp_path):
    """One run: the check loops over every option, so each bad one is named with what it must be."""
    result = run_role(tmp_path, "plan.yml", {"pxc_galera_flavor": "mariadb", "pxc_galera_extra_provider_options": {
        "gcache.size": "0", "gcs.fc_limit": "100; pc.ignore_sb=yes", "evs.suspect_timeout": "5",
        "pc.ignore_sb": "maybe", "gcs.fc_factor": "1.5", "socket.ssl_cipher": "A B", "Bad Name": "1",
        "gcache.page_size": "-1G", "gcs.max_packet_size": "64K"}})
    refused(result,
            "gcache.size=0 is not a valid Galera provider option (a positive size such as 512M)",
            "gcache.page_size=-1G is not a valid Galera provider option (a positive size",
            "gcs.fc_limit=100; pc.ignore_sb=yes is not a valid Galera provider option (a positive whole number)",
            "evs.suspect_timeout=5 is not a valid Galera provider option (an ISO 8601",
            "pc.ignore_sb=maybe is not a valid Galera provider option (yes or no)",
            "gcs.fc_factor=1.5 is not a valid Galera provider option (a fraction",
            "socket.ssl_cipher=A B is not a valid Galera provider option (a dotted name",
            "Bad Name=1 is not a valid Galera provider option")
    assert "gcs.max_packet_size=64K is not" not in result.stdout, "a valid option was refused"


# ------------------------------------------------------------------------- restarts and online changes

def decision_none(members=("n1", "n2", "n3")):
    return {"nodes": {m: {"action": "none", "reason": "runs"} for m in members}}


# The cluster address alone restarting nothing is decided by mysql_config (restarts: false in the wsrep
# template): tests/unit/test_pxc_galera_templates.py. Writing the reasons to the pending file before the option
# file, and reporting them on the next run, is mysql_config's too: tests/unit/test_mysql_inputs.py. Here: what
# the role does with the reasons mysql_config returns.

RESTART_STARTED = "TASK [dbops.clusters.pxc_galera : Check the cluster is complete before the node leaves"


def test_static_changes_restart_the_member_through_the_rolling_restart(tmp_path):
    result = run_role(tmp_path, "schedule_restart.yml", then="rolling_restart.yml", variables={
        "pxc_galera_members": ["n1", "n2", "n3"],
        "pxc_galera_decision": decision_none(),
        "pxc_galera_config_innodb": {"restart_reasons": ["innodb_log_file_size: 48M -> 96M"]},
        "pxc_galera_config_wsrep": {"restart_reasons": ["wsrep_provider_options: a -> b"]},
        "pxc_galera_gate_timeout": 1})
    assert 'REASONS=["innodb_log_file_size: 48M -> 96M", "wsrep_provider_options: a -> b"]' in result.stdout, \
        result.stdout[-2000:]
    assert RESTART_STARTED in result.stdout


def test_no_change_restarts_nothing(tmp_path):
    result = run_role(tmp_path, "schedule_restart.yml", then="rolling_restart.yml", variables={
        "pxc_galera_members": ["n1", "n2", "n3"],
        "pxc_galera_decision": decision_none(),
        "pxc_galera_config_innodb": {"restart_reasons": []}, "pxc_galera_config_wsrep": {"restart_reasons": []}})
    assert result.returncode == 0, result.stdout[-2000:]
    assert 'REASONS=[]' in result.stdout and RESTART_STARTED not in result.stdout


def test_a_pending_restart_stays_pending_until_the_restart_succeeds(tmp_path):
    """mysql_config reports a reason an earlier run left; the gate before the restart fails here (no server on
    the controller): the run stops and both pending files must survive for the next run."""
    pending, pending_wsrep = tmp_path / "restart-pending", tmp_path / "restart-pending-wsrep"
    pending.write_text("innodb_log_file_size: 48M -> 96M\n")
    pending_wsrep.write_text("wsrep_provider_options: a -> b\n")
    result = run_role(tmp_path, "schedule_restart.yml", then="rolling_restart.yml", variables={
        "pxc_galera_members": ["n1", "n2", "n3"],
        "pxc_galera_decision": decision_none(),
        "pxc_galera_config_innodb": {"restart_reasons": ["pending since an earlier run: innodb_log_file_size: 48M -> 96M"]},
        "pxc_galera_config_wsrep": {"restart_reasons": []}, "pxc_galera_gate_timeout": 1})
    assert 'REASONS=["pending since an earlier run: innodb_log_file_size: 48M -> 96M"]' in result.stdout, \
        result.stdout[-2000:]
    assert RESTART_STARTED in result.stdout
    assert result.returncode != 0, "the gate cannot pass without a server:\n" + result.stdout[-2000:]
    assert pending.exists() and pending_wsrep.exists(), "the restart did not succeed: the reasons must stay"


def test_a_member_started_by_the_run_forgets_its_pending_restart(tmp_path):
    pending, pending_wsrep = tmp_path / "restart-pending", tmp_path / "restart-pending-wsrep"
    pending.write_text("server not running: start it with the new configuration\n")
    pending_wsrep.write_text("server not running: start it with the new configuration\n")
    result = run_role(tmp_path, "schedule_restart.yml", then="rolling_restart.yml", variables={
        "pxc_galera_members": ["n1", "n2", "n3"],
        "pxc_galera_decision": {"nodes": {m: {"action": "join", "reason": "stopped"} for m in ("n1", "n2", "n3")}},
        "pxc_galera_config_innodb": {"restart_reasons": []}, "pxc_galera_config_wsrep": {"restart_reasons": []}})
    assert result.returncode == 0, result.stdout[-2000:]
    assert 'REASONS="unset"' in result.stdout and RESTART_STARTED not in result.stdout
    assert not pending.exists() and not pending_wsrep.exists()


def test_a_running_cluster_is_never_renamed(tmp_path):
    state = {"running": True, "wsrep": {"cluster_status": "Primary", "cluster_name": "old_name"}}
    result = run_role(tmp_path, "configure.yml", {
        "pxc_galera_flavor": "mariadb", "pxc_galera_flavor_info": {"galera": {"service": "mariadb"}},
        "pxc_galera_members": ["n1", "n2", "n3"], "pxc_galera_state": state, "pxc_galera_cluster_name": "new_name"})
    refused(result, "pxc_galera_cluster_name=new_name, but the cluster runs as old_name",
            "stop every member cleanly, one at a time")


def test_a_rename_is_refused_before_any_write_when_the_running_member_is_outside_the_play(tmp_path):
    """--limit n1 on a stopped member while n2 and n3 run under the old name outside the play: the refusal
    comes from their states (read by delegation), before this member's option files are written."""
    outside = {"results": [{"item": m, "running": True,
                            "wsrep": {"cluster_status": "Primary", "cluster_name": "old_name"}} for m in ("n2", "n3")]}
    result = run_role(tmp_path, "configure.yml", {
        "pxc_galera_flavor": "mariadb", "pxc_galera_flavor_info": {"galera": {"service": "mariadb"}},
        "pxc_galera_members": ["n1", "n2", "n3"], "pxc_galera_state": {"running": False, "wsrep": None},
        "pxc_galera_outside_states": outside, "pxc_galera_cluster_name": "new_name"}, limit="n1")
    refused(result, "pxc_galera_cluster_name=new_name, but the cluster runs as old_name")
    assert "Write the" not in result.stdout, result.stdout[-2500:]
