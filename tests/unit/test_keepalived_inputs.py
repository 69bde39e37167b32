"""The keepalived role's input checks (module_utils/keepalived_inputs.py), and the SQL check's option file:
each bad input is refused naming its variable before `keepalived -t` sees it, and a password with '#', '\\',
quotes and spaces reaches the mysql client unchanged."""
import json
import os
import shutil
import subprocess
import sys

import pytest
import yaml

from ansible_collections.dbops.clusters.plugins.module_utils import keepalived_inputs, mysql_option_file

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROLE = os.path.join(REPO, "roles", "keepalived")


def defaults(**overrides):
    with open(os.path.join(ROLE, "defaults", "main.yml"), encoding="utf-8") as handle:
        variables = yaml.safe_load(handle)
    inputs = dict((name[len("keepalived_"):], value) for name, value in variables.items())
    inputs.update(vips=[{"address": "10.0.0.100/24", "router_id": 51}], interface="eth0", peers=2,
                  peer_addresses={"p1": ["", "10.0.0.1"], "p2": ["10.0.0.2", "192.168.0.2"]})
    inputs.update(overrides)
    return inputs


def errors(**overrides):
    return keepalived_inputs.role_errors(defaults(**overrides))


SQL = {"check": "sql", "sql_check_user": "monitor", "sql_check_password": "p#ss\\word \"q' x"}


def test_the_role_defaults_and_the_sql_check_with_an_odd_password_pass():
    assert errors() == []
    assert errors(**SQL) == []
    assert errors(vrrp_version=2, advert_int=1, preempt_delay=5, vips=[
        {"address": "10.0.0.100/24", "router_id": 51, "name": "front"}, {"address": "10.0.1.7/32", "router_id": 52}]) == []


BAD = [
    ({"vips": []}, "keepalived_vips needs at least one"),
    ({"vips": [{"address": "10.0.0.300/24", "router_id": 51}]}, "keepalived_vips[0].address='10.0.0.300/24': must be"),
    ({"vips": [{"address": "10.0.0.100/33", "router_id": 51}]}, "keepalived_vips[0].address='10.0.0.100/33'"),
    ({"vips": [{"address": "10.0.0.100", "router_id": 51}]}, "keepalived_vips[0].address='10.0.0.100'"),
    ({"vips": [{"address": "10.0.0.0/24", "router_id": 51}]}, "the network's own or broadcast address"),
    ({"vips": [{"address": "10.0.0.100/24", "router_id": 256}]}, "keepalived_vips[0].router_id=256: must be from 1"),
    ({"vips": [{"address": "10.0.0.100/24", "router_id": 51}, {"address": "10.0.0.101/24", "router_id": 51}]},
     "keepalived_vips[1].router_id=51 is also keepalived_vips[0]'s"),
    ({"vips": [{"address": "10.0.0.100/24", "router_id": 51}, {"address": "10.0.0.100/24", "router_id": 52}]},
     "keepalived_vips[1].address: 10.0.0.100 is also keepalived_vips[0]"),
    ({"vips": [{"address": "10.0.0.100/24", "router_id": 51, "name": "my vip"}]}, "keepalived_vips[0].name='my vip'"),
    ({"advert_int": 0}, "keepalived_advert_int=0: must be from 0.01 to 40.95"),
    ({"advert_int": 41}, "keepalived_advert_int=41: must be from 0.01 to 40.95"),
    ({"advert_int": 0.125}, "keepalived_advert_int=0.125: keepalived counts in hundredths"),
    ({"advert_int": "fast"}, "keepalived_advert_int='fast': must be a number of seconds"),
    ({"vrrp_version": 2, "advert_int": 0.2}, "keepalived_advert_int (VRRPv2: whole seconds)=0.2"),
    ({"vrrp_version": 4}, "keepalived_vrrp_version=4: must be 2 or 3"),
    ({"priority_base": 255}, "keepalived_priority_base=255: must be from 1 to 254"),
    ({"priority_base": 0}, "keepalived_priority_base=0: must be from 1 to 254"),
    ({"priority_base": 15, "peers": 3}, "gives the last of 3 peers priority -5: priorities run 1-254"),
    ({"priority_step": 0}, "keepalived_priority_step=0: 2 peers would share one priority"),
    ({"check_interval": -1}, "keepalived_check_interval=-1: must be from 0.01 to 3600"),
    ({"check_interval": 0}, "keepalived_check_interval=0: must be from 0.01"),
    ({"check_timeout": 0}, "keepalived_check_timeout=0: must be from 1"),
    ({"check_fall": 0}, "keepalived_check_fall=0: must be from 1"),
    ({"check_rise": "two"}, "keepalived_check_rise='two': must be a whole number"),
    ({"preempt_delay": 1001}, "keepalived_preempt_delay=1001: must be from 0 to 1000"),
    ({"interface": "eth0 eth1"}, "keepalived_interface='eth0 eth1': must be a network interface name"),
    ({"check": "tcp"}, "keepalived_check='tcp': must be process, sql or none"),
    ({"check_pidfile": "proxysql.pid"}, "keepalived_check_pidfile='proxysql.pid': must be an absolute path"),
    (dict(SQL, sql_check_password=None), "keepalived_sql_check_password is required with keepalived_check: sql"),
    (dict(SQL, sql_check_password="line\nbreak"), "keepalived_sql_check_password: control characters"),
    (dict(SQL, sql_check_user=""), "keepalived_sql_check_user='': required"),
    (dict(SQL, sql_check_port=70000), "keepalived_sql_check_port=70000: must be from 1 to 65535"),
    (dict(SQL, sql_check_query='SELECT "$(reboot)"'), "keepalived_sql_check_query='SELECT \"$(reboot)\"'"),
    ({"notify_scripts": ["/usr/local/bin/hook; rm -rf /"]}, "keepalived_notify_scripts[0]="),
    ({"peer_addresses": {"p1": ["", "10.0.0.1"], "p2": ["10.0.0.256", ""]}},
     "keepalived_address of p2='10.0.0.256': must be an IPv4 address"),
    ({"peer_addresses": {"p1": ["10.0.0.1", ""], "p2": ["", "10.0.0.1"]}}, "keepalived_address of p2=10.0.0.1 is also p1's"),
    ({"peer_addresses": {"p1": ["10.0.0.1", ""], "p2": ["", ""]}}, "keepalived_address of p2 is not known"),
]


@pytest.mark.parametrize("overrides, expected", BAD, ids=[expected[:60] for dummy, expected in BAD])
def test_each_bad_input_is_refused_naming_its_variable(overrides, expected):
    found = errors(**overrides)
    assert any(expected in sentence for sentence in found), found


def test_no_password_reaches_a_message():
    inputs = dict(SQL)
    inputs.update(sql_check_password="secret\tpart", sql_check_port=0)
    found = errors(**inputs)
    assert len(found) == 2 and not any("secret" in sentence for sentence in found), found


# ------------------------------------------------------------------------- the SQL check's option file


def read_option_file(text):
    """[client] options as the client library reads them (module_utils/mysql_option_file.parse_groups), which
    the real client's my_print_defaults is held to below."""
    return mysql_option_file.parse_groups(text)


PASSWORDS = ["p#ss\\word \"q' x", "#starts-with-hash", "ends-with-backslash\\", "  spaced  ", "\\n-not-a-newline",
             "semi;colon 'single' \"double\"", "\\\\double-backslash", "plain-password"]


@pytest.fixture(scope="module")
def rendered_logins(tmp_path_factory):
    """{password: the SQL check's login file} rendered from the role's template by ansible-playbook (the
    collection's filters included), one file per password."""
    out = tmp_path_factory.mktemp("logins")
    play = out / "render.yml"
    play.write_text(
        "- hosts: localhost\n  gather_facts: false\n  tasks:\n"
        "    - ansible.builtin.copy:\n"
        "        dest: %s/{{ index }}.cnf\n"
        "        content: \"{{ lookup('ansible.builtin.template', '%s') }}\"\n"
        "        mode: '0600'\n"
        "      vars: {keepalived_sql_check_password: '{{ item }}'}\n"
        "      loop: '{{ passwords }}'\n"
        "      loop_control: {index_var: index}\n" % (out, os.path.join(ROLE, "templates", "sql-check.cnf.j2")))
    extra = out / "vars.json"
    extra.write_text(json.dumps({"passwords": PASSWORDS, "keepalived_sql_check_host": "127.0.0.1",
                                 "keepalived_sql_check_port": 6032, "keepalived_sql_check_user": "monitor",
                                 "keepalived_check_timeout": 1}))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".collections"))
    command = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local",
               "-e", "@%s" % extra, str(play)]
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    return dict((password, (out / ("%d.cnf" % index)).read_text()) for index, password in enumerate(PASSWORDS))


@pytest.mark.parametrize("password", PASSWORDS)
def test_the_sql_check_password_reaches_the_client_unchanged(rendered_logins, password, tmp_path):
    options = read_option_file(rendered_logins[password])
    assert options["password"] == password
    assert options["user"] == "monitor" and options["port"] == "6032"
    # The client's own parser must agree (one option a line); make deps installs it (lab/host-setup.sh).
    client = shutil.which("my_print_defaults")
    assert client, "my_print_defaults is missing: run make deps (mariadb-client-core)"
    login = tmp_path / "login.cnf"
    login.write_text(rendered_logins[password])
    printed = subprocess.run([client, "--defaults-file=%s" % login, "client"], capture_output=True, text=True,
                             check=True).stdout
    assert "--password=%s\n" % password in printed, printed


def test_the_client_parser_of_this_test_is_the_one_that_broke_the_unquoted_password():
    # the file as the role wrote it before: the value unquoted
    assert read_option_file("[client]\npassword=p#ss\\word\n")["password"] == "p"
    assert read_option_file("[client]\npassword=a\\sb\n")["password"] == "a b"


def test_a_password_an_option_file_cannot_hold_is_refused():
    with pytest.raises(ValueError):
        mysql_option_file.option_value("two\nlines")


# ------------------------------------------------------------------------- the role's own validate.yml


def run_validate(tmp_path, variables):
    """keepalived's validate.yml on two proxies that are never contacted (the checks run on the controller)."""
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(
        "all:\n  children:\n    proxysql:\n      hosts:\n"
        "        p1: {keepalived_address: 10.0.0.1}\n        p2: {keepalived_address: 10.0.0.2}\n")
    play = tmp_path / "play.yml"
    play.write_text(
        "- hosts: proxysql\n  gather_facts: false\n  tasks:\n"
        "    - ansible.builtin.include_role:\n        name: dbops.clusters.keepalived\n"
        "        tasks_from: validate.yml\n")
    extra = tmp_path / "vars.json"
    extra.write_text(json.dumps(dict({"keepalived_interface": "eth0",
                                      "keepalived_vips": [{"address": "10.0.0.100/24", "router_id": 51}]},
                                     **variables)))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".collections"))
    command = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory),
               "-c", "local", "-e", "@%s" % extra, str(play)]
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False)


def test_the_role_accepts_good_input_and_an_odd_sql_check_password(tmp_path):
    result = run_validate(tmp_path, {"keepalived_check": "sql", "keepalived_sql_check_user": "monitor",
                                     "keepalived_sql_check_password": "p#ss\\word \"q' x"})
    assert result.returncode == 0, result.stdout[-3000:]


def test_the_role_refuses_bad_values_naming_each_before_keepalived_t(tmp_path):
    result = run_validate(tmp_path, {"keepalived_advert_int": 0, "keepalived_check_interval": -1,
                                     "keepalived_vips": [{"address": "10.0.0.300/24", "router_id": 51}],
                                     "keepalived_priority_base": 255, "keepalived_check": "sql",
                                     "keepalived_sql_check_user": "monitor",
                                     "keepalived_sql_check_password": "not-in-the-message\t"})
    assert result.returncode != 0
    for expected in ("keepalived_advert_int=0: must be from 0.01", "keepalived_check_interval=-1: must be from",
                     "keepalived_vips[0].address='10.0.0.300/24'", "keepalived_priority_base=255: must be from 1 to 254",
                     "keepalived_sql_check_password: control characters"):
        assert expected in result.stdout, result.stdout[-3000:]
    assert "not-in-the-message" not in result.stdout
