#!/usr/bin/env python3
"""Failover drills through the VIP in front of a Group Replication group, with ha_failover's client.

The client, the podman helpers and the measurements are molecule/ha_failover's drill.py and report.py,
imported (not copied): this file only chooses the faults and reads the group. The drills, one after another:

  primary_kill     kill -9 the GR primary's mysqld (systemd restart disabled): the group elects another
                   primary, ProxySQL's read_only check moves the writer hostgroup to it
  service_kill     kill -9 the whole ProxySQL service (angel and worker) on the VIP holder: the VIP moves
  service_restart  start it again: with preempt the VIP comes back
  member_rejoin    start the killed member's mysqld: it rejoins the group by itself (start_on_boot)

Output in --out: requests.jsonl, acks.txt, events.json, vrrp.log entries, results.json/results.md and one
timeline per drill (report.py), plus group.json: the election seen in the new primary's error log, the
rejoin, and the members' states at the end. The password is read from a 0600 file.

    proxy_drill.py --vip IP --user U --password-file F --database app --proxies p1=ctr,... --members gr1=ctr,...
                --out DIR
"""
import json
import os
import sys
import time
from datetime import datetime

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "ha_failover"))

import drill as ha  # noqa: E402  pylint: disable=wrong-import-position
import report as ha_report  # noqa: E402  pylint: disable=wrong-import-position

DRILLS = ["primary_kill", "service_kill", "service_restart", "member_rejoin"]
FAULTS = {"primary_kill": "kill", "service_kill": "kill", "service_restart": "start", "member_rejoin": "start"}
# The seeds' nearest figures (seeds-digest section 4), and what bounds a primary kill here: the group itself.
SEEDS = {
    "primary_kill": ("GR elects a new primary after expelling the dead one (member_expel_timeout 0: ~5 s)",
                     "see the election time"),
    "service_kill": ("ProxySQL crash, single VIP (2 s checks)", "5.06 s"),
    "service_restart": ("failback after restart", "4.04 s"),
    "member_rejoin": ("(no seed figure)", "-"),
}
TITLES = {
    "primary_kill": "kill -9 the Group Replication primary",
    "service_kill": "kill -9 ProxySQL (angel and worker) on the VIP holder",
    "service_restart": "start ProxySQL again (preempt: failback)",
    "member_rejoin": "start the killed member again (it rejoins)",
}
ERROR_LOG = "/var/log/mysql/error.log"
MEMBERS_QUERY = ("SELECT MEMBER_HOST, MEMBER_STATE, MEMBER_ROLE FROM performance_schema.replication_group_members")


def mysql(container, query, check=False):
    """Rows of a query run as root over the member's socket (auth_socket); [] when the server is down."""
    out = ha.in_container(container, "mysql -N -B -e \"%s\" 2>/dev/null" % query, check=check)
    return [line.split("\t") for line in out.splitlines() if line.strip()]


def group_view(members, addresses):
    """{member name: (state, role)} as the first member that answers sees the group."""
    for container in members.values():
        rows = mysql(container, MEMBERS_QUERY)
        if rows:
            by_address = dict((row[0], (row[1], row[2])) for row in rows)
            return dict((name, by_address.get(address)) for name, address in addresses.items())
    return {}


def primary_of(members, addresses):
    view = group_view(members, addresses)
    primaries = [name for name, entry in view.items() if entry and entry == ("ONLINE", "PRIMARY")]
    return primaries[0] if len(primaries) == 1 else None


def log_times(container, since, needle):
    """Times (epoch) of the member's error-log lines after `since` that contain `needle`."""
    times = []
    for line in ha.in_container(container, "grep -F %s %s || true" % (json.dumps(needle), ERROR_LOG),
                                check=False).splitlines():
        stamp = line.split(" ", 1)[0]
        try:
            at = datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
        except ValueError:
            continue
        if at > since:
            times.append(at)
    return times


def main():
    parser = ha.argument_parser(settle=3.0)
    parser.add_argument("--members", required=True, help="name=container,...")
    parser.add_argument("--addresses", required=True, help="name=address the group reports,...")
    args = parser.parse_args()
    proxies, members, addresses = ha.pairs(args.proxies), ha.pairs(args.members), ha.pairs(args.addresses)
    # The drill starts a killed server itself: no systemd restart behind its back.
    for container in members.values():
        ha.in_container(container, "mkdir -p /run/systemd/system/mysql.service.d && printf '[Service]\\nRestart=no\\n'"
                        " > /run/systemd/system/mysql.service.d/zz-drill.conf && systemctl daemon-reload")
    password = ha.prepare(args)
    hostnames = dict((name, ha.in_container(container, "hostname").strip()) for name, container in members.items())
    group = {"hostnames": hostnames}

    client = ha.Client(args, password, args.out)
    events = []

    def event(drill, what, at, **extra):
        entry = dict(drill=drill, what=what, at=at, **extra)
        events.append(entry)
        print("%.3f %-16s %s %s" % (at, drill, what, extra or ""), flush=True)

    def acked_on(hostname, after):
        return any(r.get("ok") and r["backend"] == hostname and r["end"] > after for r in list(client.requests))

    old_primary = primary_of(members, addresses)
    if old_primary is None:
        raise RuntimeError("no single ONLINE primary before the drills: %s" % group_view(members, addresses))
    client.start()
    time.sleep(3)

    # 1. kill -9 the primary; wait for the group's new primary and the client's first commit on it.
    at = ha.stamped(members[old_primary], "systemctl kill -s KILL mysql")
    event("primary_kill", "kill", at, node=old_primary, backend=hostnames[old_primary])
    survivors = dict((n, c) for n, c in members.items() if n != old_primary)
    new_primary = ha.wait_until(lambda: primary_of(survivors, dict((n, addresses[n]) for n in survivors)), 90,
                                step=0.2)
    event("primary_kill", "primary_seen", time.time(), node=new_primary)
    if new_primary is None or not ha.wait_until(lambda: acked_on(hostnames[new_primary], at), 60):
        event("primary_kill", "writes_not_resumed", time.time(), node=new_primary)
    time.sleep(args.settle)
    if new_primary:
        # The group's own account of the election, from the new primary's error log.
        elected = log_times(members[new_primary], at, "This server is working as primary member")
        group["election_log_s"] = round(elected[0] - at, 3) if elected else None
    group.update(killed=old_primary, new_primary=new_primary)

    # 2. kill -9 the whole ProxySQL service on the VIP holder (systemd restart disabled for the drill).
    holder = ha.vip_holders(proxies, args.vip)[0]
    ha.in_container(proxies[holder], "mkdir -p /run/systemd/system/proxysql.service.d && printf '[Service]\\n"
                    "Restart=no\\n' > /run/systemd/system/proxysql.service.d/zz-drill.conf && systemctl daemon-reload")
    at = ha.stamped(proxies[holder], "systemctl kill -s KILL proxysql")
    event("service_kill", "kill", at, proxy=holder)
    time.sleep(args.settle)
    event("service_kill", "holders", time.time(), holders=ha.vip_holders(proxies, args.vip))

    # 3. start it again: with preempt the VIP returns to it.
    ha.in_container(proxies[holder], "rm -f /run/systemd/system/proxysql.service.d/zz-drill.conf && "
                    "systemctl daemon-reload")
    at = ha.stamped(proxies[holder], "systemctl start proxysql")
    event("service_restart", "start", at, proxy=holder)
    time.sleep(args.settle)
    event("service_restart", "holders", time.time(), holders=ha.vip_holders(proxies, args.vip))

    # 4. start the killed member: it rejoins by itself (group_replication_start_on_boot), under traffic.
    ha.in_container(members[old_primary], "rm -f /run/systemd/system/mysql.service.d/zz-drill.conf && "
                    "systemctl daemon-reload")
    at = ha.stamped(members[old_primary], "systemctl start mysql")
    event("member_rejoin", "start", at, node=old_primary)
    online = ha.wait_until(lambda: (group_view(members, addresses).get(old_primary) or ("",))[0] == "ONLINE", 120,
                           step=0.5)
    event("member_rejoin", "online" if online else "not_online", time.time(), node=old_primary)
    group["rejoin_online_s"] = round(time.time() - at, 3) if online else None
    time.sleep(args.settle)

    client.stop.set()
    client.join(10)
    for container in members.values():
        ha.in_container(container, "rm -f /run/systemd/system/mysql.service.d/zz-drill.conf && systemctl daemon-reload")

    # Every member ONLINE with an empty applier queue before anyone counts rows.
    def settled():
        view = group_view(members, addresses)
        if not view or any(not entry or entry[0] != "ONLINE" for entry in view.values()):
            return False
        return all(mysql(c, "SELECT COUNT_TRANSACTIONS_REMOTE_IN_APPLIER_QUEUE FROM "
                            "performance_schema.replication_group_member_stats WHERE MEMBER_ID = @@server_uuid")
                   == [["0"]] for c in members.values())
    event("end", "group_settled" if ha.wait_until(settled, 120, step=1) else "group_not_settled", time.time())
    group["view_at_end"] = group_view(members, addresses)

    ha.write_record(args.out, client, events, proxies, hostnames)

    # ha_failover's measurements and timelines, told this scenario's drills.
    ha_report.DRILLS[:] = DRILLS
    ha_report.FAULTS.update(FAULTS)
    ha_report.SEEDS.update(SEEDS)
    ha_report.TITLES.update(TITLES)
    requests, loaded = ha_report.load(args.out)
    report = ha_report.measure(requests, loaded)
    report["group"] = group
    backends = sorted(set(r["backend"] for r in requests if r.get("ok")))
    for drill, result in report["drills"].items():
        with open(os.path.join(args.out, "%s.svg" % drill), "w", encoding="utf-8") as handle:
            handle.write(ha_report.svg(drill, result, requests, loaded, backends))
    with open(os.path.join(args.out, "results.json"), "w", encoding="utf-8") as handle:
        json.dump(report, handle, indent=1)
    table = ha_report.markdown(report)
    primary = report["drills"].get("primary_kill", {})
    table += ("\nPrimary kill: %s killed, %s elected; the group's election (its error log: 'working as primary "
              "member') %s s after the kill, the first commit through the VIP on the new primary %s s after it; "
              "the killed member ONLINE again %s s after its start.\n"
              % (old_primary, new_primary, group.get("election_log_s"), primary.get("backend_switch_s"),
                 group.get("rejoin_online_s")))
    with open(os.path.join(args.out, "results.md"), "w", encoding="utf-8") as handle:
        handle.write(table)
    print(table)
    print("requests: %d, acknowledged: %d" % (len(client.requests), sum(1 for r in client.requests if r.get("ok"))))


if __name__ == "__main__":
    main()
