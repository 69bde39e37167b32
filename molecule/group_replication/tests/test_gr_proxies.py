"""The proxy tier over the Group Replication group: proxy_drill.yml's run (ProxySQL followed the group's primary,
the VIP moved when the proxy died, writes resumed on the new primary), and, after every later drill of the
scenario, every row the drill's client had acknowledged on every member, writes through the VIP reaching the
group's primary of the moment, plain reads a secondary and locking reads the primary."""
import json
import os
import time

import pymysql
import pytest

PROXIES = ("p1", "p2")
MEMBERS = ("gr1", "gr2", "gr3")
VIP = "10.89.222.100"
PROXY_DRILL_RECORD = "drill-proxy"   # the proxy_drill fixture reads <ephemeral>/drill-proxy
WRITER_HG, READER_HG = 10, 20
# What the proxy tier may add to a gap, loose enough for a machine shared with another scenario: the first
# commit on the new primary at most this long after the group elected it; a proxy crash at most this long.
PROXY_SHARE_LIMIT_S = 3.0
SERVICE_KILL_LIMIT_S = 3.0
# The group's own share after a kill -9 of the primary: the survivors suspect it after GR's 5 s failure detection,
# expel it at once (member_expel_timeout 0) and elect; about 6.3 s measured (election in the log, and the whole
# write gap), with room for a machine running another scenario. A rejoin (restart, recovery) about 11 s.
ELECTION_LIMIT_S = 15.0
PRIMARY_KILL_GAP_LIMIT_S = 18.0
REJOIN_LIMIT_S = 45.0


def primary(lab_hosts, sql):
    rows = sql(lab_hosts["gr1"], "SELECT MEMBER_HOST FROM performance_schema.replication_group_members "
                                 "WHERE MEMBER_ROLE = 'PRIMARY' AND MEMBER_STATE = 'ONLINE'")
    assert len(rows) == 1, rows
    return rows[0][0]


def test_drills_ran_and_print_next_to_the_group(proxy_drill):
    group = proxy_drill["group"]
    print()
    for drill, result in proxy_drill["drills"].items():
        print("%-16s gap %.3f s  failed %d/%d  VIP move %s  backend switch %s   %s: %s" % (
            drill, result["longest_write_gap_s"], result["failed"], result["requests"], result["vip_move_s"],
            result["backend_switch_s"], result["seed"][0], result["seed"][1]))
    print("primary kill: %s killed, %s elected; election in the new primary's log after %s s; first commit on "
          "it through the VIP after %s s; killed member ONLINE again %s s after its start" % (
              group["killed"], group["new_primary"], group["election_log_s"],
              proxy_drill["drills"]["primary_kill"]["backend_switch_s"], group["rejoin_online_s"]))
    assert list(proxy_drill["drills"]) == ["primary_kill", "service_kill", "service_restart", "member_rejoin"]
    assert group["killed"] and group["new_primary"] and group["killed"] != group["new_primary"]


def test_primary_kill_moves_writes_to_the_new_primary(proxy_drill):
    result, group = proxy_drill["drills"]["primary_kill"], proxy_drill["group"]
    hostnames = {name: host for name, host in group["hostnames"].items()}
    assert result["backend_before"] == hostnames[group["killed"]], result
    # the first commit after the gap, and every commit after it in the drill's window, on the elected primary
    assert result["backend_switch_s"] is not None, result
    assert result["backend_after"] == hostnames[group["new_primary"]], result
    assert group["election_log_s"] is not None, group


def test_the_proxy_adds_little_to_the_groups_election(proxy_drill):
    result, group = proxy_drill["drills"]["primary_kill"], proxy_drill["group"]
    share = result["backend_switch_s"] - group["election_log_s"]
    print("\nprimary kill: gap %.3f s (bound %.0f), election %.3f s (bound %.0f), proxy's share %.3f s "
          "(bound %.0f)" % (
        result["longest_write_gap_s"], PRIMARY_KILL_GAP_LIMIT_S, group["election_log_s"], ELECTION_LIMIT_S, share,
        PROXY_SHARE_LIMIT_S))
    assert share < PROXY_SHARE_LIMIT_S, (result, group)
    assert group["election_log_s"] < ELECTION_LIMIT_S, group
    assert result["longest_write_gap_s"] < PRIMARY_KILL_GAP_LIMIT_S, result


def test_service_kill_moves_the_vip_and_writes_resume(proxy_drill):
    kill, restart = proxy_drill["drills"]["service_kill"], proxy_drill["drills"]["service_restart"]
    assert kill["vip_holder_before"] == kill["target"]
    assert kill["vip_holder_after"] != kill["target"] and kill["vip_move_s"] is not None, kill
    assert kill["holders_after"] == [kill["vip_holder_after"]]
    assert kill["longest_write_gap_s"] < SERVICE_KILL_LIMIT_S, kill
    # preempt: the restarted, higher-priority proxy takes the VIP back
    assert restart["vip_holder_after"] == restart["target"] and restart["holders_after"] == [restart["target"]]


def test_killed_member_rejoined(proxy_drill, lab_hosts, sql):
    group = proxy_drill["group"]
    assert group["rejoin_online_s"] is not None, group
    print("\nkilled member ONLINE again %.1f s after its start (bound %.0f s)" % (
        group["rejoin_online_s"], REJOIN_LIMIT_S))
    assert group["rejoin_online_s"] < REJOIN_LIMIT_S, group
    assert proxy_drill["galera_at_end"] == "group_settled", proxy_drill["galera_at_end"]
    rows = sql(lab_hosts[group["killed"]], "SELECT MEMBER_STATE FROM performance_schema.replication_group_members "
                                           "WHERE MEMBER_ID = @@server_uuid")
    assert rows == [["ONLINE"]]


@pytest.mark.parametrize("member", MEMBERS)
def test_every_acknowledged_row_is_on_every_member(lab_hosts, sql, proxy_drill, member):
    present = {int(row[0]) for row in sql(lab_hosts[member], "SELECT id FROM app.ha_writes")}
    missing = sorted(proxy_drill["acked"] - present)
    assert len(proxy_drill["acked"]) > 200
    assert not missing, "%s lacks %d acknowledged rows, first %s" % (member, len(missing), missing[:10])


def reads_through(address, count=10):
    """Plain reads through one proxy (not the VIP): ProxySQL brings a SHUNNED server back ONLINE lazily, when
    it picks a server for a query after mysql-shun_recovery_time_sec; a proxy that serves no traffic (the
    standby, restarted by a drill) keeps the rejoined member SHUNNED until a query comes (seen in a run)."""
    connection = pymysql.connect(host=address, port=6033, user="writer", password="molecule-writer-secret",
                                 database="app", autocommit=True, connect_timeout=3)
    with connection.cursor() as cursor:
        for dummy in range(count):
            cursor.execute("SELECT @@hostname")
    connection.close()


def test_the_writer_hostgroup_holds_the_primary_alone(lab_hosts, lab_ips, sql, proxysql_admin):
    """The rejoined member counts too: verify starts right after it is ONLINE again, and each proxy takes a
    member it shunned back at the first query after its recovery time: reads through the proxy, for 30 s."""
    address = primary(lab_hosts, sql)
    wanted_readers = sorted(lab_ips[m] for m in MEMBERS if lab_ips[m] != address)
    for proxy in PROXIES:
        deadline = time.monotonic() + 30
        while True:
            rows = proxysql_admin(lab_hosts[proxy], "SELECT hostgroup_id, hostname, status FROM runtime_mysql_servers")
            online = [row for row in rows if row["status"] == "ONLINE"]
            writers = sorted(row["hostname"] for row in online if int(row["hostgroup_id"]) == WRITER_HG)
            readers = sorted(row["hostname"] for row in online if int(row["hostgroup_id"]) == READER_HG)
            if (writers, readers) == ([address], wanted_readers) or time.monotonic() > deadline:
                break
            reads_through(lab_ips[proxy])
            time.sleep(1)
        assert writers == [address], (proxy, rows)
        assert readers == wanted_readers, (proxy, rows)


def test_plain_reads_go_to_a_secondary_and_locking_reads_to_the_primary(lab_hosts, sql):
    address = primary(lab_hosts, sql)
    names = dict((sql(lab_hosts[m], "SELECT @@report_host")[0][0], sql(lab_hosts[m], "SELECT @@hostname")[0][0])
                 for m in MEMBERS)
    connection = pymysql.connect(host=VIP, port=6033, user="writer", password="molecule-writer-secret",
                                 database="app", autocommit=True)
    plain, locking = set(), set()
    with connection.cursor() as cursor:
        for dummy in range(20):
            cursor.execute("SELECT @@hostname, COUNT(*) FROM ha_writes")
            plain.add(cursor.fetchone()[0])
            cursor.execute("SELECT @@hostname, id FROM ha_writes ORDER BY id LIMIT 1 FOR UPDATE")
            locking.add(cursor.fetchone()[0])
    connection.close()
    print("\nplain reads on %s, locking reads on %s (primary %s)" % (sorted(plain), sorted(locking), names[address]))
    assert locking == {names[address]}
    assert plain and names[address] not in plain


def test_the_monitor_account_has_no_privilege(lab_hosts, sql):
    grants = [row[0] for row in sql(lab_hosts["gr2"], "SHOW GRANTS FOR 'proxysql_monitor'@'%'")]
    assert grants == ["GRANT USAGE ON *.* TO `proxysql_monitor`@`%`"], grants


def test_the_vip_is_held_by_exactly_one_proxy(lab_hosts):
    holders = [p for p in PROXIES if " %s/" % VIP in lab_hosts[p].run("ip -o -4 addr show").stdout]
    assert len(holders) == 1, holders


MONITOR_PASSWORD = "molecule-proxysql-monitor-secret-2"   # monitor_rotation_drill.yml's


@pytest.mark.parametrize("proxy", PROXIES)
def test_the_monitor_password_was_rotated_on_the_primary_without_a_refused_check(lab_hosts, lab_ips, proxy,
                                                                                  proxysql_admin,
                                                                                  proxysql_refused_checks,
                                                                                  proxysql_latest_checks):
    record = os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], PROXY_DRILL_RECORD, "monitor-rotation.json")
    with open(record, encoding="utf-8") as handle:
        rotation_primary = json.load(handle)["primary"]
    # the drill proves the primary was read from the members only if the inventory's first was not it
    assert rotation_primary and rotation_primary != lab_ips["gr1"], rotation_primary
    host = lab_hosts[proxy]
    rows = proxysql_admin(host, "SELECT variable_value FROM runtime_global_variables "
                                "WHERE variable_name = 'mysql-monitor_password'")
    assert rows == [{"variable_value": MONITOR_PASSWORD}]
    # every check of the whole run that a member refused; the proxies check every 200 ms, so a moment where a proxy
    # and the account disagreed (the proxies first, or the old password dropped early) would be here
    refused = proxysql_refused_checks(host, "read_only")
    print("%s: monitor checks refused in the run: %s; password rotated on %s" % (
        proxy, dict((t, len(r)) for t, r in refused.items()), rotation_primary))
    assert not any(refused.values()), refused
    # and the proxy checks every member with the new password now: each member's latest read_only check answered
    latest = proxysql_latest_checks(host, "read_only")
    assert sorted(latest) == sorted(lab_ips[member] for member in MEMBERS) and not any(latest.values()), latest


@pytest.mark.parametrize("member", MEMBERS)
def test_the_monitor_account_kept_no_old_password(lab_hosts, sql, member):
    held = sql(lab_hosts[member], "SELECT COALESCE(JSON_CONTAINS_PATH(User_attributes, 'one', "
                                  "'$.additional_password'), 0) FROM mysql.user WHERE User = 'proxysql_monitor'")
    assert held and str(held[0][0]) == "0", held
