"""The one filter every role validates its inputs with (plugins/filter/role_input_errors.py): each engine's rules
(module_utils/<engine>_inputs.py, tested in their own files) reached by name, the prefix passed through, and a
call it cannot serve refused."""
import pytest
from ansible.errors import AnsibleFilterError
from ansible_collections.dbops.clusters.plugins.filter.role_input_errors import RULES, role_input_errors


def test_every_engine_reaches_its_own_rules(monkeypatch):
    seen = []
    for engine, rules in RULES.items():
        monkeypatch.setattr(rules, "role_errors", lambda inputs, *prefix, e=engine: seen.append((e, prefix)) or [e])
        assert role_input_errors({"port": 1}, engine) == [engine]
    assert seen == [(engine, ()) for engine in RULES]
    assert sorted(RULES) == ["etcd", "keepalived", "mongodb", "mysql", "postgres", "proxysql"]


def test_the_mysql_rules_read_the_variables_of_the_role_named_by_its_prefix():
    errors = role_input_errors({"port": 70000}, "mysql", "pxc_galera_")
    assert any("pxc_galera_port" in error for error in errors), errors
    assert not any("percona_server_port" in error for error in errors), errors


def test_a_call_it_cannot_serve_is_refused():
    with pytest.raises(AnsibleFilterError, match="engine 'redis' is none of etcd, keepalived, mongodb"):
        role_input_errors({}, "redis")
    with pytest.raises(AnsibleFilterError, match="expects a dict"):
        role_input_errors(["port"], "etcd")
