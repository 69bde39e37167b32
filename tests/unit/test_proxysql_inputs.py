"""The proxysql role's input checks (module_utils/proxysql_inputs.py): each bad input is refused with a
sentence naming its variable, the role's defaults pass, and no password reaches a message."""
import json
import os
import subprocess
import sys

import pytest
import yaml

from ansible_collections.dbops.clusters.plugins.module_utils import mysql_connection, proxysql_inputs

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROLE = os.path.join(REPO, "roles", "proxysql")


def defaults(**overrides):
    """The role's defaults as the role passes them (without the proxysql_ prefix), with overrides."""
    with open(os.path.join(ROLE, "defaults", "main.yml"), encoding="utf-8") as handle:
        variables = yaml.safe_load(handle)
    inputs = dict((name[len("proxysql_"):], value) for name, value in variables.items())
    inputs.update(users=[{"username": "app", "password": "app-secret-1"}], cluster_address="10.0.0.21")
    inputs.update(overrides)
    return inputs


def errors(**overrides):
    return proxysql_inputs.role_errors(defaults(**overrides))


def test_the_role_defaults_and_the_lab_declarations_pass():
    assert errors() == []
    assert errors(shard_tables=[{"table": "sbtest1", "hostgroup": 20}],
                  extra_query_rules=[{"rule_id": 200, "match_digest": "^UPDATE sbtest\\d+ ", "destination_hostgroup": 10}],
                  extra_servers=[{"hostgroup_id": 30, "hostname": "10.0.0.9", "port": 3307}],
                  global_variables={"mysql-connect_retries_on_failure": 2, "admin-web_enabled": "false"},
                  topology="async", hostgroups={"writer": 10, "backup_writer": 10, "reader": 20, "offline": 20}) == []


BAD = [
    # (overrides, the sentence expected, as a substring)
    ({"mysql_port": 70000}, "proxysql_mysql_port=70000: must be from 1 to 65535"),
    ({"admin_port": 0}, "proxysql_admin_port=0: must be from 1 to 65535"),
    ({"backend_port": "33o6"}, "proxysql_backend_port='33o6': must be a whole number"),
    ({"threads": 0}, "proxysql_threads=0: must be from 1 to 255"),
    ({"threads": 256}, "proxysql_threads=256: must be from 1 to 255"),
    ({"max_connections": -1}, "proxysql_max_connections=-1: must be from 1 to 1000000"),
    ({"monitor_interval_ms": 0}, "proxysql_monitor_interval_ms=0: must be from 100"),
    ({"healthcheck_interval_ms": 10}, "proxysql_healthcheck_interval_ms=10: must be from 100"),
    ({"healthcheck_timeout_ms": -300}, "proxysql_healthcheck_timeout_ms=-300: must be from 100 to 600000"),
    ({"healthcheck_max_timeout_count": 11}, "proxysql_healthcheck_max_timeout_count=11: must be from 1 to 10"),
    ({"monitor_connect_timeout_ms": True}, "proxysql_monitor_connect_timeout_ms=True: must be a whole number"),
    ({"writer_is_also_reader": 3}, "proxysql_writer_is_also_reader=3: must be from 0 to 2"),
    ({"max_writers": 0}, "proxysql_max_writers=0: must be from 1"),
    ({"query_retries_on_failure": -1}, "proxysql_query_retries_on_failure=-1: must be from 0 to 1000"),
    ({"read_query_retries": 1001}, "proxysql_read_query_retries=1001: must be from 0 to 1000"),
    ({"global_variables": {"mysql-query_retries_on_failure": 1}},
     "mysql-query_retries_on_failure: set by the role from proxysql_query_retries_on_failure"),
    ({"admin_port": 6033}, "proxysql_admin_port=6033 is also proxysql_mysql_port on 127.0.0.1 and 0.0.0.0"),
    ({"admin_address": "10.0.0.300"}, "proxysql_admin_address='10.0.0.300': must be an IP address"),
    ({"mysql_address": "0.0.0.0;"}, "proxysql_mysql_address='0.0.0.0;': must be an IP address"),
    ({"cluster_enabled": True}, "proxysql_admin_address=127.0.0.1: ProxySQL Cluster peers cannot reach"),
    ({"cluster_enabled": True, "admin_address": "10.0.0.22"},
     "proxysql_cluster_address=10.0.0.21: the peers connect there on proxysql_admin_port=6032"),
    ({"hostgroups": {"writer": 10, "backup_writer": 12, "reader": 10, "offline": 9999}},
     "proxysql_hostgroups: writer and reader share hostgroup id 10"),
    ({"hostgroups": {"writer": 10, "backup_writer": 12, "reader": 0, "offline": 9999}},
     "proxysql_hostgroups.reader=0: must be from 1"),
    ({"hostgroups": {"writer": 10, "reader": 20, "offline": 9999}}, "proxysql_hostgroups.backup_writer is missing"),
    ({"users": [{"username": "app"}]}, "proxysql_users[0] (app): has no password"),
    ({"users": [{"username": "app", "password": ""}]}, "proxysql_users[0] (app): has no password"),
    ({"users": [{"password": "x-secret-1"}]}, "proxysql_users[0]: username is required"),
    ({"users": [{"username": "a", "password": "p-secret-1"}, {"username": "a", "password": "p-secret-2"}]},
     "proxysql_users[1] (a): declared twice (also proxysql_users[0])"),
    ({"extra_query_rules": [{"rule_id": 200, "match_digest": "^SELECT (", "destination_hostgroup": 20}]},
     "proxysql_extra_query_rules[0] (rule_id 200).match_digest='^SELECT (': does not compile"),
    ({"extra_query_rules": [{"rule_id": 200, "match_pattern": "(\\w+) \\1"}]},
     "match_pattern='(\\\\w+) \\\\1': uses a backreference (\\1), which RE2 does not support"),
    ({"extra_query_rules": [{"rule_id": 200, "match_digest": "^SELECT (?!.*FOR UPDATE)"}]},
     "uses a negative lookahead (?!...), which RE2 does not support"),
    ({"extra_query_rules": [{"rule_id": 110, "match_digest": "^SELECT"}]},
     "proxysql_extra_query_rules[0] (rule_id 110): rule_id 110 is the role's own read/write split rule"),
    ({"shard_tables": [{"table": "t1", "hostgroup": 30}], "extra_query_rules": [{"rule_id": 1000}]},
     "rule_id 1000 is the role's own sharding rule (proxysql_shard_tables[0])"),
    ({"extra_query_rules": [{"rule_id": 200}, {"rule_id": "200"}]},
     "proxysql_extra_query_rules[1] (rule_id 200): rule_id 200 is declared twice"),
    ({"extra_query_rules": [{"match_digest": "^SELECT"}]}, "proxysql_extra_query_rules[0]: rule_id must be"),
    ({"shard_tables": [{"table": "sb.*", "hostgroup": 30}]}, "proxysql_shard_tables[0].table='sb.*': must be a table"),
    ({"extra_servers": [{"hostgroup_id": -1, "hostname": "10.0.0.9"}]},
     "proxysql_extra_servers[0].hostgroup_id=-1: must be from 0"),
    ({"global_variables": {"admin-mysql_ifaces": "0.0.0.0:6032"}},
     "proxysql_global_variables.admin-mysql_ifaces: set by the role from proxysql_admin_address/proxysql_admin_port"),
    ({"global_variables": {"mysql-threads": 8}}, "proxysql_global_variables.mysql-threads: set by the role from "
                                                 "proxysql_threads"),
    ({"global_variables": {"admin-restapi_enabled": "true"}},
     "proxysql_global_variables.admin-restapi_enabled=true: opens an admin listener on every address"),
    ({"global_variables": {"mysql_max_allowed_packet": 1}},
     "proxysql_global_variables.mysql_max_allowed_packet: not a ProxySQL variable name"),
    ({"global_variables": {"mysql-query_processor_regex": 3}},
     "proxysql_global_variables.mysql-query_processor_regex=3: must be from 1 to 2"),
]


@pytest.mark.parametrize("overrides, expected", BAD, ids=[expected[:60] for dummy, expected in BAD])
def test_each_bad_input_is_refused_naming_its_variable(overrides, expected):
    found = errors(**overrides)
    assert any(expected in sentence for sentence in found), found


def test_admin_and_client_on_one_port_but_different_addresses_do_not_collide():
    assert errors(admin_port=6033, admin_address="127.0.0.1", mysql_address="10.0.0.21") == []


def test_with_pcre_lookarounds_and_backreferences_pass_but_broken_patterns_do_not():
    pcre = {"mysql-query_processor_regex": 1}
    assert errors(global_variables=pcre, extra_query_rules=[{"rule_id": 200, "match_digest": "^SELECT (?!x)"}]) == []
    assert errors(global_variables=pcre, extra_query_rules=[{"rule_id": 200, "match_digest": "^SELECT ["}]) != []


@pytest.mark.parametrize("pattern", [
    "^SELECT .*(FOR UPDATE|FOR SHARE|LOCK IN SHARE MODE)", "\\bsbtest1\\b", "(?i)^select +", "a+?b*?c??",
    "[]a-z]+", "[(?=]", "x{2,1000}", "(?P<table>\\w+)", "[\\1]"])
def test_re2_accepts_what_re2_accepts(pattern):
    assert proxysql_inputs.re2_errors(pattern) is None


@pytest.mark.parametrize("pattern, why", [
    ("(?<=FROM )t", "lookbehind"), ("(?<!x)y", "negative lookbehind"), ("(?>a+)b", "atomic group"),
    ("(?P<t>a)(?P=t)", "named backreference"), ("(a)?(?(1)b|c)", "conditional"), ("a(?#note)", "comment group"),
    ("a*+", "possessive"), ("a{2}+", "possessive"), ("a{1001}", "more than 1000"), ("(?x) a", "flag"),
    ("end\\Z", "\\Z")])
def test_re2_refuses_what_re2_refuses(pattern, why):
    assert why in (proxysql_inputs.re2_errors(pattern) or ""), pattern


def test_no_password_reaches_a_message():
    found = errors(users=[{"username": "app", "password": "hunter2-secret", "default_hostgroup": "ten"}],
                   global_variables={"admin-stats_credentials": ["hunter3-secret"]})
    assert found and not any("hunter" in sentence for sentence in found), found


# ------------------------------------------------------------------------- the role's own validate.yml


def run_validate(tmp_path, variables):
    """proxysql's validate.yml for one proxy in front of a Galera group; no host is contacted."""
    inventory = tmp_path / "inventory.yml"
    inventory.write_text("all:\n  children:\n    proxysql:\n      hosts: {p1: {ansible_host: 10.0.0.21}}\n"
                         "    galera:\n      hosts: {g1: {}, g2: {}, g3: {}}\n")
    play = tmp_path / "play.yml"
    play.write_text(
        "- hosts: proxysql\n  gather_facts: false\n  tasks:\n"
        "    - ansible.builtin.include_role:\n        name: dbops.clusters.proxysql\n"
        "        tasks_from: validate.yml\n")
    extra = tmp_path / "vars.json"
    extra.write_text(json.dumps(dict({"proxysql_admin_password": "admin-secret-1",
                                      "proxysql_monitor_password": "monitor-secret-1"}, **variables)))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".collections"))
    command = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory),
               "-c", "local", "-e", "@%s" % extra, str(play)]
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False)


def test_the_role_accepts_its_defaults_with_users_and_rules(tmp_path):
    result = run_validate(tmp_path, {"proxysql_users": [{"username": "app", "password": "app-secret-1"}],
                                     "proxysql_shard_tables": [{"table": "sbtest1", "hostgroup": 20}]})
    assert result.returncode == 0, result.stdout[-3000:]


def test_the_role_refuses_what_proxysql_cannot_run_naming_each_variable(tmp_path):
    result = run_validate(tmp_path, {
        "proxysql_mysql_port": 70000, "proxysql_threads": 0, "proxysql_max_connections": -5,
        "proxysql_monitor_interval_ms": 0, "proxysql_healthcheck_timeout_ms": -1,
        "proxysql_users": [{"username": "app"}, {"username": "ops", "password": "not-in-the-message"}],
        "proxysql_extra_query_rules": [{"rule_id": 300, "match_digest": "^SELECT ("}],
        "proxysql_global_variables": {"admin-mysql_ifaces": "0.0.0.0:6032"},
        "proxysql_hostgroups": {"writer": 10, "backup_writer": 10, "reader": 20, "offline": 9999}})
    assert result.returncode != 0
    for expected in ("proxysql_mysql_port=70000", "proxysql_threads=0", "proxysql_max_connections=-5",
                     "proxysql_monitor_interval_ms=0", "proxysql_healthcheck_timeout_ms=-1",
                     "proxysql_users[0] (app): has no password", "proxysql_extra_query_rules[0] (rule_id 300)",
                     "proxysql_global_variables.admin-mysql_ifaces", "writer and backup_writer share hostgroup id 10"):
        assert expected in result.stdout, result.stdout[-3000:]
    assert "not-in-the-message" not in result.stdout


def test_the_role_refuses_a_proxy_outside_the_proxies_group(tmp_path):
    result = run_validate(tmp_path, {"proxysql_group": "proxies"})
    assert result.returncode != 0
    assert "p1 is not a host of proxysql_group (proxies)" in result.stdout, result.stdout[-3000:]


def test_the_role_refuses_an_admin_port_that_is_the_client_port(tmp_path):
    result = run_validate(tmp_path, {"proxysql_admin_port": 6033})
    assert result.returncode != 0
    assert "proxysql_admin_port=6033 is also proxysql_mysql_port" in result.stdout, result.stdout[-3000:]


def test_an_admin_password_with_a_hash_reaches_the_client_unchanged(tmp_path):
    """The credentials file quotes the password (mysql_option_value): '#' would otherwise end it there."""
    password = "admin#secret 'x'"
    play = tmp_path / "render.yml"
    play.write_text(
        "- hosts: localhost\n  gather_facts: false\n  tasks:\n"
        "    - ansible.builtin.copy:\n"
        "        dest: %s/admin.cnf\n"
        "        content: \"{{ lookup('ansible.builtin.template', '%s') }}\"\n"
        "        mode: '0600'\n"
        % (tmp_path, os.path.join(REPO, "roles", "proxysql", "templates", "admin-credentials.cnf.j2")))
    extra = tmp_path / "vars.json"
    extra.write_text(json.dumps({"proxysql_admin_password": password, "proxysql_admin_user": "radmin",
                                 "proxysql_admin_login_host": "127.0.0.1", "proxysql_admin_port": 6032}))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".collections"))
    subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c",
                    "local", "-e", "@%s" % extra, str(play)], cwd=REPO, env=env, check=True, capture_output=True)
    login = tmp_path / "admin.cnf"
    assert mysql_connection.read_option_file(str(login))["password"] == password
    printed = subprocess.run(["my_print_defaults", "--defaults-file=%s" % login, "client"], capture_output=True,
                             text=True, check=True).stdout
    assert "--password=%s\n" % password in printed, printed
    result = run_validate(tmp_path, {"proxysql_admin_password": "admin#secret-1"})
    assert result.returncode == 0, result.stdout[-3000:]
