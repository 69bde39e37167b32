"""Bad role input fails before any change, with a message that names the problem.

Runs ansible-playbook against hosts that are never contacted: the checks under test run on the controller
(set_fact/assert) before the first task that would reach a host."""
import json
import os
import subprocess
import sys

import pytest

from ansible_collections.dbops.clusters.tests.unit.role_batch import assert_control_passed, run_role_batch

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_play(tmp_path, hosts, role, tasks_from, variables):
    play = tmp_path / "play.yml"
    play.write_text(
        "- hosts: all\n  gather_facts: false\n  tasks:\n"
        "    - ansible.builtin.include_role:\n        name: %s\n        tasks_from: %s\n" % (role, tasks_from))
    extra = tmp_path / "vars.yml"
    extra.write_text("\n".join("%s: %r" % item for item in variables.items()) + "\n")
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    env["ANSIBLE_COLLECTIONS_PATH"] = os.path.join(REPO, ".collections")
    command = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", ",".join(hosts) + ",",
               "-c", "local", "-e", "@%s" % extra, str(play)]
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False)


# Both sizes in one ansible-playbook run: group caseN with those hosts, next to a group of three
# (test_galera_accepts_three_nodes); pxc_galera_group names each host's own group.
GALERA_SIZES = [["n1", "n2"], ["n1", "n2", "n3", "n4"]]


def run_cluster_facts_batch(tmp_path, cases, control):
    """cluster_facts.yml once for every case: group caseN has the hosts caseN_M for each M of cases[N], group
    `control` the hosts control_M for each M of control, and pxc_galera_group names each host's group.
    Returns run_role_batch's report and the groups."""
    groups = {name: {"hosts": {"%s_%s" % (name, m): None for m in members},
                     "vars": {"pxc_galera_group": name}}
              for name, members in [("case%d" % i, case) for i, case in enumerate(cases)] + [("control", control)]}
    batch = run_role_batch(tmp_path, {"all": {"children": groups}}, "pxc_galera", "cluster_facts.yml",
                           {"pxc_galera_flavor": "mariadb", "pxc_galera_address": "10.0.0.1"}, timeout=300)
    return dict(batch, groups=groups)


@pytest.fixture(scope="module")
def galera_sizes(tmp_path_factory):
    return run_cluster_facts_batch(tmp_path_factory.mktemp("galera_sizes"), GALERA_SIZES, ["n1", "n2", "n3"])


def assert_sizes_control_passed(batch):
    """The group of three passes cluster_facts.yml in the same run as the cases."""
    assert_control_passed(batch, batch["groups"]["control"]["hosts"], "pxc_galera", "cluster_facts.yml")


@pytest.mark.parametrize("nodes", GALERA_SIZES)
def test_galera_refuses_an_even_or_too_small_cluster(galera_sizes, nodes):
    case = "case%d" % GALERA_SIZES.index(nodes)
    assert_sizes_control_passed(galera_sizes)
    assert len(galera_sizes["groups"][case]["hosts"]) == len(nodes)
    for host in sorted(galera_sizes["groups"][case]["hosts"]):
        messages = galera_sizes["failures"].get(host)
        assert messages, "%s (a group of %d) did not fail" % (host, len(nodes))
        assert len(messages) == 1 and "at least three and an odd count" in messages[0][1], (host, messages)


def test_galera_refuses_a_flavor_without_galera(tmp_path):
    result = run_play(tmp_path, ["n1", "n2", "n3"], "dbops.clusters.pxc_galera", "cluster_facts.yml",
                      {"pxc_galera_flavor": "mysql"})
    assert result.returncode != 0 and "has no Galera" in result.stdout, result.stdout[-2000:]


def test_galera_accepts_three_nodes(galera_sizes):
    """The control group of the batch above."""
    assert_sizes_control_passed(galera_sizes)


def test_unknown_flavor_is_refused_naming_the_known_ones(tmp_path):
    result = run_play(tmp_path, ["n1", "n2", "n3"], "dbops.clusters.pxc_galera", "cluster_facts.yml",
                      {"pxc_galera_flavor": "oracle"})
    assert result.returncode != 0
    assert "unknown flavor 'oracle': expected one of mariadb, mysql, percona" in result.stdout, result.stdout[-2000:]


# ------------------------------------------------------------------------------------------- percona_server


def run_validate(tmp_path, inventory, variables=None, limit=None, role_vars=None):
    """percona_server's validate.yml against a YAML inventory whose hosts are never contacted.

    role_vars: variables given to the role in the play (include_role vars), which hostvars do not show."""
    inventory_file = tmp_path / "inventory.yml"
    inventory_file.write_text(inventory)
    play = tmp_path / "play.yml"
    play.write_text(
        "- hosts: all\n  gather_facts: false\n  tasks:\n"
        "    - ansible.builtin.include_role:\n        name: dbops.clusters.percona_server\n"
        "        tasks_from: validate.yml\n"
        + ("      vars: %s\n" % json.dumps(role_vars) if role_vars else ""))
    extra = tmp_path / "vars.json"
    extra.write_text(json.dumps(variables or {}))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    env["ANSIBLE_COLLECTIONS_PATH"] = os.path.join(REPO, ".collections")
    command = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory_file),
               "-c", "local", "-e", "@%s" % extra, str(play)]
    if limit:
        command += ["--limit", limit]
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False)


REPLICATION = """
all:
  vars: {percona_server_replication_password: "r'e\\\\p l\\"pw", percona_server_flavor: mysql}
  hosts:
    src: {percona_server_address: 10.0.1.1}
    rep1: {percona_server_address: 10.0.1.2, percona_server_source: src}
    rep2: {percona_server_address: 10.0.1.3, percona_server_source: src}
"""


def test_percona_server_accepts_a_good_topology_and_odd_passwords(tmp_path):
    users = [{"name": "app", "host": "10.0.%", "password": "q'uo\"te \\ back slash",
              "privileges": {"app.*": "ALL", "*.*": "PROCESS"}}]
    result = run_validate(tmp_path, REPLICATION, {"percona_server_users": users, "percona_server_databases":
                                                  [{"name": "app"}]})
    assert result.returncode == 0, result.stdout[-3000:]


def test_percona_server_refuses_bad_values_naming_each_variable(tmp_path):
    users = [{"name": "app", "password": "not-in-the-message", "privileges": {"app.*": "SELECT,INSRET"}}]
    result = run_validate(tmp_path, REPLICATION, {"percona_server_port": 70000, "percona_server_users": users,
                                                  "percona_server_overrides": {"innodb_io_capacity": -100}})
    assert result.returncode != 0
    for expected in ("percona_server_port=70000: must be from 1 to 65535",
                     "INSRET on app.*: no such privilege",
                     "percona_server_overrides.innodb_io_capacity=-100: negative values are refused"):
        assert expected in result.stdout, result.stdout[-3000:]
    assert "not-in-the-message" not in result.stdout


def test_percona_server_refuses_proxies_it_cannot_drain_on(tmp_path):
    # the proxies in front drain a server before its restart: inventory hosts, never a server of the topology
    result = run_validate(tmp_path, REPLICATION, {"percona_server_proxies": ["px9", "src"],
                                                  "percona_server_drain_timeout": -1})
    assert result.returncode != 0
    for expected in ("percona_server_proxies names px9, not hosts of the inventory",
                     "percona_server_proxies names src, a member of the cluster itself",
                     "percona_server_drain_timeout=-1"):
        assert expected in result.stdout, result.stdout[-3000:]


def test_percona_server_refuses_a_bad_hand_over_and_switchover_timeout(tmp_path):
    result = run_validate(tmp_path, REPLICATION, {"percona_server_restart_hand_over": "sometimes",
                                                  "percona_server_switchover_timeout": 0})
    assert result.returncode != 0
    for expected in ("percona_server_restart_hand_over='sometimes': must be true or false",
                     "percona_server_switchover_timeout=0: must be from 1 to 3600"):
        assert expected in result.stdout, result.stdout[-3000:]


def test_percona_server_refuses_a_source_outside_the_inventory(tmp_path):
    inventory = REPLICATION.replace("percona_server_source: src}", "percona_server_source: srcc}", 1)
    result = run_validate(tmp_path, inventory)
    assert result.returncode != 0
    assert "percona_server_source=srcc: not a host of the inventory" in result.stdout, result.stdout[-3000:]


def test_percona_server_refuses_duplicate_server_ids_even_under_limit(tmp_path):
    inventory = REPLICATION.replace("{percona_server_address: 10.0.1.3,",
                                    "{percona_server_address: 10.0.1.3, percona_server_server_id: 258,")
    result = run_validate(tmp_path, inventory, limit="rep2")
    assert result.returncode != 0
    assert "rep1, rep2 share server_id 258" in result.stdout, result.stdout[-3000:]


def test_percona_server_refuses_a_replica_of_itself(tmp_path):
    inventory = REPLICATION.replace("rep2: {percona_server_address: 10.0.1.3, percona_server_source: src}",
                                    "rep2: {percona_server_address: 10.0.1.3, percona_server_source: rep2}")
    result = run_validate(tmp_path, inventory)
    assert result.returncode != 0
    assert "percona_server_source=rep2: a server cannot replicate from itself" in result.stdout, result.stdout[-3000:]


# The play may give the role its source or server_id (role vars, a host-specific expression): the check must
# compare the values the role will use, not only the inventory's.
STANDALONE = """
all:
  vars: {percona_server_replication_password: pw, percona_server_flavor: mysql}
  hosts:
    db1: {percona_server_address: 10.0.1.1}
    db2: {percona_server_address: 10.0.1.2}
"""


def test_percona_server_refuses_a_source_given_in_the_play_naming_the_server_itself(tmp_path):
    result = run_validate(tmp_path, STANDALONE, role_vars={"percona_server_source": "{{ inventory_hostname }}"})
    assert result.returncode != 0
    assert "percona_server_source=db1: a server cannot replicate from itself" in result.stdout, result.stdout[-3000:]


def test_percona_server_refuses_a_source_given_in_the_play_outside_the_inventory(tmp_path):
    result = run_validate(tmp_path, STANDALONE.replace("db2: {", "db2: {percona_server_source: db1, "),
                          role_vars={"percona_server_source": "{{ 'db9' if inventory_hostname == 'db1' else '' }}"})
    assert result.returncode != 0
    assert "percona_server_source=db9: not a host of the inventory" in result.stdout, result.stdout[-3000:]


def test_percona_server_refuses_the_same_server_id_given_in_the_play(tmp_path):
    inventory = STANDALONE.replace("db2: {", "db2: {percona_server_source: db1, ")
    result = run_validate(tmp_path, inventory, role_vars={"percona_server_server_id": 7})
    assert result.returncode != 0
    assert "db1, db2 share server_id 7" in result.stdout, result.stdout[-3000:]


def test_percona_server_refuses_a_server_id_override(tmp_path):
    # percona_server_overrides.server_id would be replaced by the role's own server_id without a word.
    result = run_validate(tmp_path, STANDALONE, {"percona_server_overrides": {"server_id": 7}})
    assert result.returncode != 0
    assert "percona_server_overrides.server_id: the role sets it from percona_server_server_id" in result.stdout, \
        result.stdout[-3000:]


# ------------------------------------------------------------------------------------------- mongodb_rs


MONGODB = """
all:
  children:
    mongodb:
      hosts:
        m1: {mongodb_rs_address: 10.0.0.1}
        m2: {mongodb_rs_address: 10.0.0.2}
        m3: {mongodb_rs_address: 10.0.0.3, mongodb_rs_member: {votes: 2}}
"""


def run_whole_role(tmp_path, inventory, hosts, role, variables, check=False, timeout=120):
    """The role's main entry point on `hosts` of the inventory text, `-c local` (hosts never contacted: a task that
    reached one would run on this machine), its inputs as extra variables (JSON: types kept)."""
    inventory_file = tmp_path / "inventory.yml"
    inventory_file.write_text(inventory)
    play = tmp_path / "play.yml"
    play.write_text("- hosts: %s\n  gather_facts: false\n  roles:\n    - dbops.clusters.%s\n" % (hosts, role))
    extra = tmp_path / "vars.json"
    extra.write_text(json.dumps(variables))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    env["ANSIBLE_COLLECTIONS_PATH"] = os.path.join(REPO, ".collections")
    command = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory_file),
               "-c", "local", "-e", "@%s" % extra, str(play)] + (["--check"] if check else [])
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout, check=False)


def test_mongodb_rs_refuses_bad_values_before_any_task_reaches_a_host(tmp_path):
    """The role's input check is its first task after the basic assert: with several bad values it stops there,
    each named (the hosts are never contacted: a task that reached one would run on this machine)."""
    variables = {"mongodb_rs_keyfile_content": "a2V5ZmlsZS1jb250ZW50", "mongodb_rs_admin_password": "not-shown",
                 "mongodb_rs_package_version": "8.0.4", "mongodb_rs_port": 70000, "mongodb_rs_set_name": "rs/0",
                 "mongodb_rs_bind_ip": "0.0.0.0: {", "mongodb_rs_settings": {"electionTimeoutMilis": 5000},
                 "mongodb_rs_cache_size_gb": -1, "mongodb_rs_member": {"priority": -1}}
    result = run_whole_role(tmp_path, MONGODB, "mongodb", "mongodb_rs", variables)
    assert result.returncode != 0
    output = result.stdout
    assert "Refuse bad input before any change" in output, output[-3000:]
    assert "Check the TLS mode step" not in output and "Install the server" not in output, output[-3000:]
    for expected in ("mongodb_rs_port must be from 1 to 65535, got 70000", "mongodb_rs_set_name must be",
                     "mongodb_rs_bind_ip: ", "mongodb_rs_settings: unknown key 'electionTimeoutMilis'",
                     "mongodb_rs_cache_size_gb must be 0", "mongodb_rs_member.priority must be from 0 to 1000"):
        assert expected in output, output[-3000:]
    assert "not-shown" not in output


# The roles that size a server prepare the host through db_host (drivers, /etc/dbops, kernel settings) only after
# their own checks: bad input is refused with db_host not run. In check mode, on hosts of an inventory group that
# are never contacted (a task that reached one would run on this machine, and check mode keeps it from changing it).
# Each case: the role, its group variable, the inputs it needs to reach its checks, one bad input and its message.
FIRST_CHANGE_CASES = [
    ("pxc_galera", "pxc_galera_group",
     {"pxc_galera_flavor": "mariadb", "pxc_galera_address": "10.0.0.1", "pxc_galera_fc_limit": 0},
     "pxc_galera_fc_limit"),
    ("group_replication", "group_replication_group",
     {"group_replication_flavor": "mysql", "group_replication_address": "10.0.0.1",
      "group_replication_recovery_password": "not-shown", "group_replication_flow_control_threshold": -5},
     "group_replication_flow_control_threshold=-5: must be from 0"),
    ("postgres_tuned", "postgres_tuned_group",
     {"postgres_tuned_address": "10.0.0.1", "postgres_tuned_replication_password": "not-shown",
      "postgres_tuned_port": 70000},
     "postgres_tuned_port"),
]


@pytest.mark.parametrize("role, group_variable, variables, words", FIRST_CHANGE_CASES,
                         ids=[case[0] for case in FIRST_CHANGE_CASES])
def test_bad_input_is_refused_before_db_host_prepares_the_host(tmp_path, role, group_variable, variables, words):
    result = run_whole_role(tmp_path, "all:\n  children:\n    members:\n      hosts: {n1: {}, n2: {}, n3: {}}\n",
                            "members", role, dict(variables, **{group_variable: "members"}), check=True,
                            timeout=180)
    output = result.stdout
    assert result.returncode != 0, output[-3000:]
    assert words in output, output[-3000:]
    assert "db_host :" not in output, output[-3000:]
    assert "not-shown" not in output


SCHEDULE_INPUTS = {"percona_server_backup_host": "localhost", "percona_server_schedule_group": "ledger",
                   "percona_server_schedule_members": ["db1"], "percona_server_schedule_candidates": ["db1"],
                   "percona_server_schedule_repository": "/var/backups/mysql/ledger",
                   "percona_server_schedule_host_address": "127.0.0.1", "percona_server_schedule_service": "mysql",
                   "percona_server_schedule_rule": "it replicates", "percona_server_schedule_receiver_settings": {},
                   "percona_server_schedule_member_settings": {}, "percona_server_backup_schedule": "daily"}


@pytest.mark.parametrize("changes, said", [
    ({"percona_server_backup_schedule_turn": 0}, "percona_server_backup_schedule_turn=0 must be seconds from 1"),
    ({"percona_server_backup_receiver_port": 80}, "percona_server_backup_receiver_port=80 must be a port"),
    ({"percona_server_backup_max_age": 600}, "percona_server_backup_max_age=600 must be seconds, 3600 or more"),
    ({"percona_server_schedule_candidates": []}, "no member of ledger may take a turn"),
    ({"percona_server_backup_schedule": "every tuesday-ish"},
     "percona_server_backup_schedule=every tuesday-ish is not a systemd calendar expression"),
])
def test_the_schedule_refuses_its_own_bad_inputs_naming_them(tmp_path, changes, said):
    result = run_play(tmp_path, ["localhost"], "dbops.clusters.percona_server", "schedule_check.yml",
                      dict(SCHEDULE_INPUTS, **changes))
    assert result.returncode != 0 and said in result.stdout + result.stderr, result.stdout[-2000:]


def test_the_schedule_accepts_a_calendar_systemd_reads(tmp_path):
    result = run_play(tmp_path, ["localhost"], "dbops.clusters.percona_server", "schedule_check.yml",
                      dict(SCHEDULE_INPUTS, percona_server_backup_schedule="*-*-* 02:30:00 UTC"))
    assert result.returncode == 0, result.stdout[-2000:]
