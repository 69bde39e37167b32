"""The proxy tier after one drill run: ProxySQL safe and identical on both proxies, the VIP moved where it
should, writes kept flowing with short gaps, and every acknowledged row is on every Galera member."""
import json

import pymysql
import pytest

PROXIES = ("p1", "p2")
MEMBERS = ("g1", "g2", "g3")
VIP = "10.89.213.100"
GAP_LIMIT_S = 1.0
# admin_password.yml (after the drills) converged the proxies with a new admin password.
OLD_ADMIN_PASSWORD = "molecule-admin-secret"
NEW_ADMIN_PASSWORD = "molecule-admin-secret-2"


@pytest.mark.parametrize("proxy", PROXIES)
def test_admin_interface_is_on_loopback_and_refuses_the_package_default(lab_hosts, proxy, proxysql_admin):
    host = lab_hosts[proxy]
    listening = host.run("ss -Hltn 'sport = :6032'").stdout
    assert "127.0.0.1:6032" in listening and "0.0.0.0:6032" not in listening, listening
    refused = host.run("python3 -c %s", "import pymysql; pymysql.connect(host='127.0.0.1', port=6032, "
                                        "user='admin', password='admin')")
    assert refused.rc != 0 and "Access denied" in refused.stderr, refused.stderr
    assert proxysql_admin(host, "SELECT 1 AS one") == [{"one": "1"}]


def login(host, address, port, user, password):
    """Log in from host (a proxy) to a MySQL-protocol server; (rc, stderr)."""
    result = host.run("python3 -c %s", "import pymysql; pymysql.connect(host=%r, port=%d, user=%r, password=%r, "
                                       "connect_timeout=5).close()" % (address, port, user, password))
    return result.rc, result.stderr


def admin_login(host, password):
    """Log in to the admin interface as the role's admin user; (rc, stderr)."""
    return login(host, "127.0.0.1", 6032, "dbops_admin", password)


@pytest.mark.parametrize("proxy", PROXIES)
def test_a_changed_admin_password_reaches_the_running_proxysql(lab_hosts, proxy, proxysql_admin):
    # p2: changed by the converge, logged in with its file as it was; p1: already changed by a "stopped run",
    # so the converge logged in with the new password (the fallback) and only rewrote the file
    host = lab_hosts[proxy]
    assert admin_login(host, NEW_ADMIN_PASSWORD)[0] == 0
    rc, stderr = admin_login(host, OLD_ADMIN_PASSWORD)
    assert rc != 0 and "Access denied" in stderr, stderr
    # saved to disk too (a restart keeps it), and the 0600 file the role logs in with follows it
    for table in ("runtime_global_variables", "disk.global_variables"):
        rows = proxysql_admin(host, "SELECT variable_value FROM %s WHERE variable_name = 'admin-admin_credentials'"
                              % table)
        assert rows == [{"variable_value": "dbops_admin:" + NEW_ADMIN_PASSWORD}], table


OLD_MONITOR_PASSWORD = "molecule-monitor-secret"
NEW_MONITOR_PASSWORD = "molecule-monitor-secret-2"


def monitor_login(host, address, password):
    """Log in to a Galera member as ProxySQL's monitor, from a proxy; (rc, stderr)."""
    return login(host, address, 3306, "proxysql_monitor", password)


@pytest.mark.parametrize("proxy", PROXIES)
def test_the_monitor_password_was_rotated_without_a_refused_health_check(lab_hosts, lab_ips, proxy, proxysql_admin,
                                                                          proxysql_refused_checks,
                                                                          proxysql_latest_checks):
    # admin_password.yml's converge gave the monitor a new password while both proxies checked the members every
    # 200 ms: had a proxy checked with a password the account did not accept (the proxies first, or the old one
    # dropped too early), its monitor would have logged "Access denied" and taken the members out.
    host = lab_hosts[proxy]
    rows = proxysql_admin(host, "SELECT variable_value FROM runtime_global_variables "
                                "WHERE variable_name = 'mysql-monitor_password'")
    assert rows == [{"variable_value": NEW_MONITOR_PASSWORD}]
    refused = proxysql_refused_checks(host, "galera")
    print("%s: health checks refused during the run: %s" % (proxy, dict((t, len(r)) for t, r in refused.items())))
    assert not any(refused.values()), refused
    # and the proxy checks every member with the new password now: each member's latest Galera check answered
    # (runtime_mysql_servers' status is no measure here: ProxySQL lifts a SHUNNED row only when a client asks that
    # hostgroup for a connection, and nothing reads from the readers after the planned restart)
    latest = proxysql_latest_checks(host, "galera")
    assert sorted(latest) == sorted(lab_ips[member] for member in MEMBERS) and not any(latest.values()), latest
    for member in MEMBERS:
        assert monitor_login(host, lab_ips[member], NEW_MONITOR_PASSWORD)[0] == 0, member
        rc, stderr = monitor_login(host, lab_ips[member], OLD_MONITOR_PASSWORD)
        assert rc != 0 and "Access denied" in stderr, (member, stderr)


def test_a_masked_unit_is_unmasked_and_started(lab_hosts):
    # admin_password.yml masked and stopped p2's ProxySQL before the converge
    host = lab_hosts["p2"]
    assert host.run("systemctl is-enabled proxysql").stdout.strip() == "enabled"
    assert host.run("systemctl is-active proxysql").stdout.strip() == "active"


@pytest.mark.parametrize("proxy", PROXIES)
def test_credential_files_are_0600_and_the_restart_policy_is_set(lab_hosts, proxy):
    host = lab_hosts[proxy]
    assert host.file("/etc/proxysql.cnf").mode == 0o600
    assert host.file("/root/.proxysql-admin.cnf").mode == 0o600
    assert host.file("/etc/keepalived/dbops/check").mode == 0o700
    assert host.run("systemctl show -p Restart --value proxysql").stdout.strip() == "on-failure"


def test_every_proxy_has_the_same_configuration(lab_hosts, proxysql_admin):
    tables = ("mysql_servers", "mysql_users", "mysql_query_rules", "mysql_galera_hostgroups")
    seen = {}
    for proxy in PROXIES:
        seen[proxy] = dict((table, sorted(json.dumps(row, sort_keys=True) for row in
                                          proxysql_admin(lab_hosts[proxy], "SELECT * FROM %s" % table)))
                           for table in tables)
    assert seen["p1"] == seen["p2"]
    assert len(seen["p1"]["mysql_servers"]) == 3


def test_weighted_single_writer_and_ordered_fallbacks(lab_hosts, lab_ips, proxysql_admin):
    rows = proxysql_admin(lab_hosts["p1"], "SELECT hostname, weight FROM mysql_servers WHERE hostgroup_id=10")
    weights = dict((row["hostname"], int(row["weight"])) for row in rows)
    assert weights[lab_ips["g1"]] > weights[lab_ips["g2"]] > weights[lab_ips["g3"]]


def test_sharding_rules_use_word_boundaries_and_are_saved_to_disk(lab_hosts, proxysql_admin):
    for table in ("mysql_query_rules", "disk.mysql_query_rules", "runtime_mysql_query_rules"):
        rows = proxysql_admin(lab_hosts["p1"], "SELECT match_pattern FROM %s WHERE rule_id=1000" % table)
        assert rows == [{"match_pattern": "\\bsbtest1\\b"}], table


def test_locking_reads_go_to_the_writer_and_plain_reads_to_the_readers(lab_hosts, proxysql_admin):
    holder = next(p for p in PROXIES if lab_hosts[p].run("ip -o -4 addr show").stdout.count(" %s/" % VIP))
    connection = pymysql.connect(host=VIP, port=6033, user="writer", password="molecule-writer-secret",
                                 database="app", autocommit=True)
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM ha_writes WHERE id = 1 FOR UPDATE")
        cursor.execute("SELECT COUNT(*) FROM ha_writes WHERE id > 0")
    connection.close()
    digests = proxysql_admin(lab_hosts[holder], "SELECT hostgroup, digest_text FROM stats_mysql_query_digest "
                                                "WHERE digest_text LIKE 'SELECT % FROM ha_writes%'")
    routes = dict((row["digest_text"], row["hostgroup"]) for row in digests)
    print("routes:", routes)
    assert [hg for text, hg in routes.items() if "FOR UPDATE" in text] == ["10"]
    assert [hg for text, hg in routes.items() if "COUNT" in text] == ["20"]


@pytest.mark.parametrize("proxy", PROXIES)
def test_writes_are_never_re_run_by_the_proxy_reads_are(lab_hosts, proxysql_admin, proxy):
    # a write whose backend failed under it may have committed: the client gets the error, the proxy never runs it
    # again (rules without their own retries take the global value); plain reads are re-run once on another reader
    host = lab_hosts[proxy]
    assert proxysql_admin(host, "SELECT variable_value FROM runtime_global_variables "
                                "WHERE variable_name = 'mysql-query_retries_on_failure'") == [{"variable_value": "0"}]
    rules = dict((row["rule_id"], row["retries"]) for row in proxysql_admin(
        host, "SELECT rule_id, retries FROM runtime_mysql_query_rules WHERE rule_id IN (100, 110)"))
    assert rules == {"100": None, "110": "1"}, rules


def test_the_vip_is_held_by_exactly_one_proxy(lab_hosts):
    holders = [p for p in PROXIES if " %s/" % VIP in lab_hosts[p].run("ip -o -4 addr show").stdout]
    assert len(holders) == 1, holders


def test_drills_ran_and_print_next_to_the_seeds(proxy_drill):
    print()
    for drill, result in proxy_drill["drills"].items():
        print("%-16s gap %.3f s  failed %d/%d  VIP move %s  backend switch %s  angel %s   seeds: %s %s" % (
            drill, result["longest_write_gap_s"], result["failed"], result["requests"], result["vip_move_s"],
            result["backend_switch_s"], result.get("angel_restart_s"), result["seed"][0], result["seed"][1]))
    assert list(proxy_drill["drills"]) == ["worker_kill", "service_kill", "service_restart", "writer_kill",
                                           "network_cut", "network_back"]
    assert proxy_drill["galera_at_end"] == "galera_synced"


@pytest.mark.parametrize("drill", ["worker_kill", "service_kill", "service_restart", "writer_kill", "network_cut",
                                   "network_back"])
def test_longest_write_gap_is_under_a_second(proxy_drill, drill):
    result = proxy_drill["drills"][drill]
    # the figures first: a CI summary shows the first 200 characters of this message
    assert result["longest_write_gap_s"] < GAP_LIMIT_S, (
        "%s: longest write gap %.3f s (bound %.1f s), from %s s after the fault; failed %d of %d %s; %s" % (
            drill, result["longest_write_gap_s"], GAP_LIMIT_S, result["gap_starts_s"], result["failed"],
            result["requests"], result["errors"], result))


def test_worker_kill_is_absorbed_by_the_angel_without_moving_the_vip(proxy_drill):
    result = proxy_drill["drills"]["worker_kill"]
    assert result["angel_restart_s"] is not None and result["angel_restart_s"] < 2.0
    assert result["vip_move_s"] is None


def test_service_kill_moves_the_vip_and_restart_brings_it_back(proxy_drill):
    kill, restart = proxy_drill["drills"]["service_kill"], proxy_drill["drills"]["service_restart"]
    assert kill["vip_holder_before"] == kill["target"]
    assert kill["vip_holder_after"] != kill["target"] and kill["vip_move_s"] is not None
    assert kill["holders_after"] == [kill["vip_holder_after"]]
    # preempt: the restarted, higher-priority proxy takes the VIP back
    assert restart["vip_holder_after"] == restart["target"] and restart["holders_after"] == [restart["target"]]


def test_writer_kill_moves_writes_to_another_member(proxy_drill):
    result = proxy_drill["drills"]["writer_kill"]
    assert result["backend_after"] != result["backend_before"] and result["backend_switch_s"] is not None


def test_network_cut_moves_the_vip(proxy_drill):
    result = proxy_drill["drills"]["network_cut"]
    assert result["vip_holder_after"] != result["target"] and result["vip_move_s"] is not None
    assert result["holders_after"] == [result["vip_holder_after"]]


@pytest.mark.parametrize("member", MEMBERS)
def test_every_acknowledged_row_is_on_every_member(lab_hosts, sql, proxy_drill, member):
    present = {int(row[0]) for row in sql(lab_hosts[member], "SELECT id FROM app.ha_writes")}
    missing = sorted(proxy_drill["acked"] - present)
    assert len(proxy_drill["acked"]) > 300
    assert not missing, "%s lacks %d acknowledged rows, first %s" % (member, len(missing), missing[:10])


def test_killed_writer_rejoins_and_gets_no_write_before_it_is_synced(proxy_drill):
    result = proxy_drill["drills"]["writer_kill"]
    assert result["rejoin_synced_s"] is not None, ("the killed writer never logged '-> synced'", result)
    assert result["writes_to_unsynced_node"] == 0, (
        "%d writes reached the killed writer before it was Synced again (start, end s after the kill): %s; %s" % (
            result["writes_to_unsynced_node"], result["unsynced_writes_s"], result))
