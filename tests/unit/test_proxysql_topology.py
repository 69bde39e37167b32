"""The proxysql role's topology template (roles/proxysql/templates/tables.yml.j2), rendered by Ansible's own
templar with the role's defaults: Galera, Group Replication and async variants, the weighted single writer,
the read/write split and the sharding rules. Rules are then evaluated the way ProxySQL does (by rule_id,
first match with apply=1 wins, case-insensitive) on digests shaped as ProxySQL writes them."""
import os
import re

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "roles", "proxysql")
HOSTS = ["g1", "g2", "g3", "p1", "p2"]


def render(**overrides):
    with open(os.path.join(ROLE, "defaults", "main.yml"), encoding="utf-8") as handle:
        variables = yaml.safe_load(handle)
    with open(os.path.join(ROLE, "templates", "tables.yml.j2"), encoding="utf-8") as handle:
        source = handle.read()
    variables.update(groups={"galera": ["g1", "g2", "g3"], "proxysql": ["p1", "p2"]},
                     # inventory addresses only, no gathered facts (a play of the proxies alone has none)
                     hostvars=dict((host, {"ansible_host": "10.0.0.%d" % index}) for index, host in enumerate(HOSTS, 1)),
                     proxysql_users=[{"username": "app", "password": "secret"}])
    variables.update(overrides)
    return yaml.safe_load(Templar(loader=DataLoader(), variables=variables).template(trust_as_template(source)))


def route(rules, digest, default):
    for rule in sorted(rules, key=lambda r: r["rule_id"]):
        pattern = rule.get("match_digest") or rule.get("match_pattern")
        if rule.get("active", 1) and re.search(pattern, digest, re.IGNORECASE) and rule.get("apply"):
            return rule["destination_hostgroup"]
    return default


def test_galera_weighted_single_writer_with_ordered_fallbacks():
    tables = render(proxysql_writer_order=["g2", "g1"])
    assert [(s["hostgroup_id"], s["hostname"], s["weight"]) for s in tables["mysql_servers"]] == [
        (10, "10.0.0.2", 10000000), (10, "10.0.0.1", 100000), (10, "10.0.0.3", 1000)]
    galera, = tables["mysql_galera_hostgroups"]
    assert (galera["writer_hostgroup"], galera["backup_writer_hostgroup"], galera["reader_hostgroup"],
            galera["offline_hostgroup"], galera["max_writers"]) == (10, 12, 20, 9999, 1)
    assert tables["mysql_replication_hostgroups"] == tables["mysql_group_replication_hostgroups"] == []


def test_group_replication_variant():
    tables = render(proxysql_topology="group_replication")
    gr, = tables["mysql_group_replication_hostgroups"]
    assert (gr["writer_hostgroup"], gr["reader_hostgroup"], gr["max_writers"]) == (10, 20, 1)
    assert tables["mysql_replication_hostgroups"] == []
    assert tables["mysql_galera_hostgroups"] == []
    assert {s["hostgroup_id"] for s in tables["mysql_servers"]} == {10}


def test_group_replication_followed_by_super_read_only():
    # ProxySQL 2.7's GR monitor cannot read MySQL 9.x (sysown/proxysql#4954): the primary is then found by
    # its super_read_only OFF; every member starts as a reader and ProxySQL adds the primary to the writers
    tables = render(proxysql_topology="group_replication", proxysql_group_replication_monitor="super_read_only")
    assert tables["mysql_group_replication_hostgroups"] == tables["mysql_galera_hostgroups"] == []
    assert tables["mysql_replication_hostgroups"] == [
        {"writer_hostgroup": 10, "reader_hostgroup": 20, "check_type": "super_read_only",
         "comment": "dbops.clusters group_replication"}]
    assert [(s["hostgroup_id"], s["hostname"]) for s in tables["mysql_servers"]] == [
        (20, "10.0.0.1"), (20, "10.0.0.2"), (20, "10.0.0.3")]


def test_backends_over_tls_on_request():
    assert {s.get("use_ssl", 0) for s in render()["mysql_servers"]} == {0}
    assert {s["use_ssl"] for s in render(proxysql_backend_use_ssl=True)["mysql_servers"]} == {1}


def test_async_variant_finds_the_source_by_read_only_never_by_the_inventory_order():
    """Every server is declared a reader: ProxySQL's read_only check makes the writable one the writer, so a
    converge of the proxies after a switchover does not put the old source (read-only now) back as the writer."""
    tables = render(proxysql_topology="async")
    assert tables["mysql_replication_hostgroups"] == [
        {"writer_hostgroup": 10, "reader_hostgroup": 20, "check_type": "read_only", "comment": "dbops.clusters"}]
    assert [(s["hostgroup_id"], s["hostname"]) for s in tables["mysql_servers"]] == [
        (20, "10.0.0.1"), (20, "10.0.0.2"), (20, "10.0.0.3")]


@pytest.mark.parametrize("digest,hostgroup", [
    ("SELECT id FROM t WHERE id = ? FOR UPDATE", 10),        # the seed sent this to the readers
    ("select id from t where id = ? for share", 10),
    ("SELECT id FROM t WHERE id = ? LOCK IN SHARE MODE", 10),
    ("SELECT id FROM t WHERE id = ?", 20),
    ("INSERT INTO t VALUES (?)", 10),                        # the user's default hostgroup: the writer
    ("UPDATE t SET a = ? WHERE id = ?", 10),
])
def test_read_write_split_sends_locking_reads_to_the_writer(digest, hostgroup):
    tables = render()
    user, = tables["mysql_users"]
    assert route(tables["mysql_query_rules"], digest, user["default_hostgroup"]) == hostgroup
    assert user["transaction_persistent"] == 1


def test_sharding_rules_match_whole_table_names_only():
    shards = [{"table": "sbtest%d" % i, "hostgroup": 100 + i % 3} for i in range(1, 13)]
    tables = render(proxysql_shard_tables=shards, proxysql_read_write_split=False)
    rules = tables["mysql_query_rules"]
    assert rules[0]["match_pattern"] == "\\bsbtest1\\b"
    assert route(rules, "SELECT c FROM sbtest10 WHERE id = ?", 0) == 100 + 10 % 3
    assert route(rules, "SELECT c FROM sbtest1 WHERE id = ?", 0) == 100 + 1 % 3
    assert route(rules, "SELECT c FROM sbtest1x WHERE id = ?", 0) == 0
    assert len({rule["rule_id"] for rule in rules}) == 12


def test_cluster_peers_only_when_enabled():
    assert render()["proxysql_servers"] == []
    peers = render(proxysql_cluster_enabled=True)["proxysql_servers"]
    assert [(p["hostname"], p["port"]) for p in peers] == [("10.0.0.4", 6032), ("10.0.0.5", 6032)]


def test_backends_are_addressed_by_the_inventory_not_by_facts():
    hostvars = {"g1": {"ansible_host": "db1.example", "proxysql_backend_address": "192.0.2.1",
                       "ansible_facts": {"default_ipv4": {"address": "172.16.0.1"}}},
                "g2": {"ansible_host": "192.0.2.2", "ansible_facts": {"default_ipv4": {"address": "172.16.0.2"}}},
                "g3": {}}
    servers = render(hostvars=hostvars)["mysql_servers"]
    # the override, then ansible_host, then the inventory name; never the gathered default_ipv4
    assert [(s["comment"], s["hostname"]) for s in servers] == [("g1", "192.0.2.1"), ("g2", "192.0.2.2"), ("g3", "g3")]
