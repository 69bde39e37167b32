"""PgBouncer in front of each PostgreSQL member (postgres_tuned_pgbouncer): the pool sizes and their reasons, the
refusals of pools the server cannot take, the inputs, and the files the role renders (pgbouncer.ini with its
listen file included inside the [pgbouncer] section, the client access rules, the password lookup)."""
import configparser
import os

import pytest

from ansible_collections.dbops.clusters.plugins.filter.pgbouncer_settings import pgbouncer_settings
from ansible_collections.dbops.clusters.plugins.module_utils.pgbouncer_tuning import (
    DIRECT_CONNECTIONS, PoolerInputError, recommend)
from ansible_collections.dbops.clusters.plugins.module_utils.postgres_inputs import pgbouncer_errors
from ansible_collections.dbops.clusters.tests.unit.unreachable_playbooks import REPO, run_playbook

FACTS = {"max_connections": "100", "superuser_reserved_connections": 3, "cpus": 4, "pools": 2,
         "pool_mode": "transaction", "max_client_conn": 1000}


def plan(overrides=None, **changes):
    facts = dict(FACTS)
    facts.update(changes)
    return recommend(facts, overrides)


def value(settings, name):
    return int(settings[name]["value"])


def test_two_connections_per_cpu_when_the_server_has_room():
    settings = plan()
    assert value(settings, "default_pool_size") == 8
    assert "2 per CPU x 4 CPUs" in settings["default_pool_size"]["reason"]
    # every pool together, with its reserve, fits what max_connections leaves after the reserved slots
    assert (value(settings, "default_pool_size") + value(settings, "reserve_pool_size")) * 2 \
        <= 100 - 3 - DIRECT_CONNECTIONS
    assert value(settings, "max_db_connections") == 100 - 3 - DIRECT_CONNECTIONS
    assert settings["pool_mode"]["value"] == "transaction"
    assert value(settings, "server_login_retry") == 1
    assert value(settings, "max_prepared_statements") > 0


def test_a_small_server_caps_each_pool_at_its_share_and_says_so():
    settings = plan(max_connections="40", cpus=16, pools=3)
    budget = 40 - 3 - DIRECT_CONNECTIONS        # 27 for three pools: 9 each, not 32
    assert value(settings, "default_pool_size") == budget // 3
    assert "shared by 3 pools" in settings["default_pool_size"]["reason"]
    assert value(settings, "reserve_pool_size") == 0      # no room left in the share


def test_session_mode_keeps_no_prepared_statement_setting():
    settings = plan(pool_mode="session")
    assert "max_prepared_statements" not in settings
    assert "session pooling" in settings["pool_mode"]["reason"]


def test_an_override_replaces_the_derived_value_and_names_its_source():
    settings = plan({"default_pool_size": "20", "query_wait_timeout": 30})
    assert settings["default_pool_size"] == {"value": "20", "reason": "set in postgres_tuned_pgbouncer_overrides",
                                             "source": "override"}
    assert value(settings, "query_wait_timeout") == 30


@pytest.mark.parametrize("overrides, facts, error", [
    ({"default_pool_siz": 5}, {}, "'default_pool_siz' is not a setting the role lets you override"),
    ({"default_pool_size": 0}, {}, "default_pool_size=0 must be between 1 and 10000"),
    ({"default_pool_size": "many"}, {}, "default_pool_size='many' must be a whole number"),
    ({"default_pool_size": 60}, {}, "exceeds the 87 server connections this member has for the pooler"),
    ({"ignore_startup_parameters": "a\nb"}, {}, "must be one line of text"),
    ({}, {"max_connections": "12"}, "max_connections=12 leaves 0 server connections for PgBouncer's 2 pools"),
    ({}, {"pool_mode": "connection"}, "postgres_tuned_pgbouncer_pool_mode='connection' must be one of"),
    ({}, {"max_client_conn": 0}, "postgres_tuned_pgbouncer_max_client_conn=0 must be between 1 and 100000"),
])
def test_pools_the_server_cannot_take_are_refused_naming_the_input(overrides, facts, error):
    with pytest.raises(PoolerInputError) as raised:
        plan(overrides, **facts)
    assert error in str(raised.value)
    # the filter the role calls returns the same sentence instead of raising
    facts_all = dict(FACTS)
    facts_all.update(facts)
    assert error in pgbouncer_settings(facts_all, overrides)["error"]


def inputs(**changes):
    values = dict(pgbouncer=True, pgbouncer_port=6432, pgbouncer_pool_mode="transaction",
                  pgbouncer_max_client_conn=1000, pgbouncer_overrides={}, port=5432, ha="patroni",
                  patroni_rest_port=8008)
    values.update(changes)
    return values


@pytest.mark.parametrize("changes, error", [
    ({}, None),
    ({"pgbouncer": False, "pgbouncer_port": "nonsense"}, None),        # off: its other inputs are not read
    ({"pgbouncer": "perhaps"}, "postgres_tuned_pgbouncer='perhaps' must be true or false"),
    ({"pgbouncer_port": 70000}, "postgres_tuned_pgbouncer_port=70000 must be from 1 to 65535"),
    ({"pgbouncer_port": 5432}, "postgres_tuned_pgbouncer_port and postgres_tuned_port must differ"),
    ({"pgbouncer_port": 8008}, "postgres_tuned_pgbouncer_port and postgres_tuned_patroni_rest_port must differ"),
    ({"pgbouncer_pool_mode": "Transaction"}, "postgres_tuned_pgbouncer_pool_mode='Transaction' must be session"),
    ({"pgbouncer_max_client_conn": -1}, "postgres_tuned_pgbouncer_max_client_conn=-1 must be from 1 to 100000"),
    ({"pgbouncer_overrides": ["default_pool_size"]}, "postgres_tuned_pgbouncer_overrides must be a dict"),
])
def test_pooler_inputs(changes, error):
    errors = pgbouncer_errors(inputs(**changes))
    assert (errors == []) if error is None else any(error in e for e in errors), errors


TEMPLATES = os.path.join(REPO, "roles", "postgres_tuned", "templates")
INVENTORY = """
all:
  vars:
    ansible_connection: local
  hosts:
    pga:
      postgres_tuned_address: 10.0.0.1
"""
PLAY = """
- hosts: pga
  gather_facts: false
  vars:
    postgres_tuned_tls: true
    postgres_tuned_port: 5432
    postgres_tuned_socket_dir: /var/run/postgresql
    postgres_tuned_config_dir: /etc/postgresql/17/main
    postgres_tuned_pgbouncer: true
    postgres_tuned_pgbouncer_port: 6432
    postgres_tuned_pgbouncer_config_dir: /etc/pgbouncer
    postgres_tuned_pgbouncer_auth_user: dbops_pgbouncer
    postgres_tuned_replication_user: replicator
    postgres_tuned_members: [pga]
    postgres_tuned_access:
      - {database: app, user: app, address: 10.9.0.0/24}
      - {database: report, user: reader, address: 10.8.0.0/16, tls: false}
    postgres_tuned_pgbouncer_plan: "{{ {'max_connections': 100, 'cpus': 2, 'pools': 2,
                                        'pool_mode': 'transaction', 'max_client_conn': 500}
                                       | dbops.clusters.pgbouncer_settings({}) }}"
  tasks:
    - ansible.builtin.copy:
        dest: "%(out)s/{{ item }}"
        content: "{{ lookup('ansible.builtin.template', '%(templates)s/' ~ item ~ '.j2') }}"
        mode: "0600"
      loop: [pgbouncer.ini, pgbouncer_listen.ini, pgbouncer_hba.conf, pg_hba.conf, pg_ident.conf]
"""


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    out = tmp_path_factory.mktemp("pgbouncer")
    (out / "inventory.yml").write_text(INVENTORY)
    (out / "play.yml").write_text(PLAY % {"out": out, "templates": TEMPLATES})
    result = run_playbook(out / "inventory.yml", out / "play.yml")
    assert result.returncode == 0, result.stdout[-3000:]
    return out


def test_pgbouncer_ini_parses_with_every_setting_after_its_reason(rendered):
    text = (rendered / "pgbouncer.ini").read_text()
    # the listen file is included inside [pgbouncer] and has no header: PgBouncer resets a section whose header
    # appears again
    assert text.rstrip().splitlines()[-1] == "%include /etc/pgbouncer/listen.ini"
    assert "[" not in "".join(line for line in (rendered / "pgbouncer_listen.ini").read_text().splitlines()
                              if not line.startswith(";;"))
    parser = configparser.ConfigParser(comment_prefixes=(";", "%"), interpolation=None)
    parser.read_string(text)
    section = parser["pgbouncer"]
    assert section["auth_type"] == "hba"
    assert section["auth_user"] == "dbops_pgbouncer"
    assert section["auth_query"] == "SELECT uname, phash FROM dbops_pgbouncer.user_lookup($1)"
    assert section["client_tls_sslmode"] == "require"
    assert section["pool_mode"] == "transaction"
    assert section["max_client_conn"] == "500"
    assert parser["databases"]["*"] == "host=/var/run/postgresql port=5432"
    lines = text.splitlines()
    for name in ("default_pool_size", "max_db_connections", "server_login_retry"):
        index = next(i for i, line in enumerate(lines) if line.startswith(name + " = "))
        assert lines[index - 1].startswith(";; "), name


def test_the_listen_file_names_the_member_and_localhost(rendered):
    lines = (rendered / "pgbouncer_listen.ini").read_text().splitlines()
    assert "listen_addr = 10.0.0.1,127.0.0.1" in lines
    assert "listen_port = 6432" in lines


def test_the_pooler_applies_the_same_access_rules_as_the_server(rendered):
    rules = [line.split() for line in (rendered / "pgbouncer_hba.conf").read_text().splitlines()
             if line and not line.startswith("#")]
    assert ["hostssl", "app", "app", "10.9.0.0/24", "scram-sha-256"] in rules
    assert ["host", "report", "reader", "10.8.0.0/16", "scram-sha-256"] in rules
    console = rules.index(["local", "pgbouncer", "postgres", "peer"])     # for the postgres OS user only
    for rule in (["local", "all", "postgres", "reject"], ["host", "all", "postgres", "0.0.0.0/0", "reject"],
                 ["host", "all", "postgres", "::/0", "reject"]):
        assert console < rules.index(rule) < rules.index(["local", "all", "all", "scram-sha-256"]), rule
    assert not any(rule[-1] in ("trust", "md5", "password") for rule in rules)


def test_the_lookup_role_logs_in_by_peer_before_the_password_rules(rendered):
    rules = [line.split() for line in (rendered / "pg_hba.conf").read_text().splitlines()
             if line and not line.startswith("#")]
    lookup = rules.index(["local", "postgres", "dbops_pgbouncer", "peer", "map=dbops_pgbouncer"])
    assert lookup < rules.index(["local", "all", "all", "scram-sha-256"])
    ident = [line.split() for line in (rendered / "pg_ident.conf").read_text().splitlines()
             if line and not line.startswith("#")]
    assert ["dbops_pgbouncer", "postgres", "dbops_pgbouncer"] in ident
