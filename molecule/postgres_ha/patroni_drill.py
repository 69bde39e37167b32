#!/usr/bin/env python3
"""Patroni failover drills through the VIP, with a client that commits a row every --pause seconds and records each.

Runs on the controller (the VIP is on the podman bridge). The client commits one row per transaction through
HAProxy's write port and the row records the member's address, so each acknowledgement says which member took it
(read from listen_addresses: behind PgBouncer the server sees a local-socket client, and inet_server_addr() is
null).
Each drill acts through `podman exec` / `podman network`, stamped inside the container right before the fault,
then waits until Patroni reports one running leader and every member streaming again:

  postgres_kill   kill -9 the leader's postmaster: Patroni restarts it in place (crash recovery), no failover
  patroni_kill    kill -9 Patroni on the leader: systemd starts it again; PostgreSQL never stopped
  switchover      the planned switchover (the --switchover command: pg_switchover.yml through Patroni)
  etcd_one_down   kill -9 etcd's leader (systemctl kill -s KILL) and hold it down: the other two elect a leader
                  and keep quorum; nothing happens to PostgreSQL (same leader, same timeline, no failed commit)
  etcd_quorum_lost stop etcd on both replicas' hosts: no member can renew the leader key; the leader demotes
                  itself (read-only) and writes stop until quorum returns
  network_cut     disconnect the leader's network: it cannot renew its key, demotes itself; a replica takes over
                  after ttl; while cut, the old leader must answer read-only
  network_back    reconnect it: it rejoins as a replica of the new leader by itself (pg_rewind if needed)
  rolling_restart rolling_restart_postgres.yml: each replica restarted through Patroni, then a switchover
  etcd_rolling_restart  rolling_restart_etcd.yml (the --etcd-rolling-restart command): each etcd member restarted
                  between two gates, etcd's leader last; Patroni keeps its leader and timeline
  etcd_replace    --etcd-lost's etcd member lost (etcd stopped, its data directory wiped: a dead disk; its
                  PostgreSQL and Patroni keep running), replaced with the --etcd-replace command
                  (etcd_replace_member.yml), then the --etcd-converge command (the converge again with the new
                  member group, so Patroni's configuration names the new members); Patroni keeps its leader

etcd is read as Patroni reads it: through the members' client URLs with a certificate of the etcd CA, logged in as
Patroni's etcd user (/v3/maintenance/status, /v3/cluster/member/list).

Output in --out: requests.jsonl (every request), acks.txt (acknowledged ids), events.json, results.json.
The password is read from a 0600 file, never from the command line.

    patroni_drill.py --vip IP --user app --password-file F --database app --members pg1=ctr=ip,... --network NET
             --api-ca CA --switchover CMD_JSON --rolling-restart CMD_JSON --etcd-hosts pg1=ctr=ip,...,px1=ctr=ip
             --etcd-ca F --etcd-cert F --etcd-key F --etcd-user patroni --etcd-password-file F
             --etcd-rolling-restart CMD_JSON --etcd-lost pg3 --etcd-replace CMD_JSON --etcd-converge CMD_JSON
             --out DIR
"""
import argparse
import json
import os
import ssl
import subprocess
import sys
import threading
import time
import urllib.request

import psycopg2

# The lab helpers every drill shares (podman, stamped faults, waiting, the drill lock): ha_failover's drill.py.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ha_failover"))
from drill import podman, run_alone, stamped, wait_until  # noqa: E402  pylint: disable=wrong-import-position

# The collection's etcd client (module_utils/etcd.py: the v3 JSON gateway over HTTPS), as verify imports it.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".collections"))
from ansible_collections.dbops.clusters.plugins.module_utils.etcd import (  # noqa: E402  pylint: disable=C0413
    Client as EtcdClient, EtcdError)

TABLE = "ha_writes"
PATRONI = "patroni@17-main"
ETCD_DATA_DIR = "/var/lib/etcd/dbops"      # the etcd role's etcd_data_dir


# The address of the member that runs the statement: Patroni sets listen_addresses to localhost and the member's
# address; the client's connection ends in PgBouncer, so inet_server_addr() would be null.
MEMBER_SQL = ("coalesce(host(inet_server_addr()), "
              "substring(current_setting('listen_addresses') from '[0-9]+[.][0-9]+[.][0-9]+[.][0-9]+'))")


class Client(threading.Thread):
    """Commits a row per transaction through the VIP; records start, end, outcome and member of each."""

    def __init__(self, args, password, out):
        super().__init__(daemon=True)
        self.args, self.password = args, password
        self.requests, self.stop = [], threading.Event()
        self.acks = open(os.path.join(out, "acks.txt"), "w", encoding="utf-8")  # pylint: disable=consider-using-with
        self.next_id = 1
        self.last_ack = 0.0         # when the last commit was acknowledged (the settle step waits for a new one)

    def connect(self):
        # tcp_user_timeout: a member cut off mid-commit fails the request in 2 s instead of hanging the client
        return psycopg2.connect(host=self.args.vip, port=self.args.port, user=self.args.user,
                                password=self.password, dbname=self.args.database, sslmode="require",
                                connect_timeout=2, tcp_user_timeout=2000, keepalives_idle=1,
                                keepalives_interval=1, keepalives_count=2)

    def run(self):
        connection = None
        while not self.stop.is_set():
            row_id, self.next_id = self.next_id, self.next_id + 1   # never reuse an id that may have landed
            record = {"id": row_id, "start": time.time()}
            try:
                if connection is None:
                    connection = self.connect()
                with connection.cursor() as cursor:
                    cursor.execute("INSERT INTO %s (id, node) VALUES (%%s, %s) RETURNING node" % (TABLE, MEMBER_SQL),
                                   (row_id,))
                    member = cursor.fetchone()[0]
                connection.commit()
                record.update(end=time.time(), ok=True, member=member)
                self.last_ack = record["end"]
                self.acks.write("%d\n" % row_id)
                self.acks.flush()
            except (psycopg2.Error, OSError) as err:
                record.update(end=time.time(), ok=False, error="%s: %s" % (type(err).__name__, str(err).strip()[:200]))
                try:
                    if connection is not None:
                        connection.close()
                except psycopg2.Error:
                    pass
                connection = None
            self.requests.append(record)
            time.sleep(self.args.pause)
        self.acks.close()


class Patroni:
    """Reads the cluster from the members' REST APIs (the CA verifies them)."""

    def __init__(self, members, ca_file):
        self.members = members
        self.context = ssl.create_default_context(cafile=ca_file)

    def cluster(self, skip=()):
        for name, (dummy, address) in self.members.items():
            if name in skip:
                continue
            try:
                with urllib.request.urlopen("https://%s:8008/cluster" % address, timeout=2,
                                            context=self.context) as response:
                    return json.load(response)
            except (OSError, ValueError):
                continue
        return {}

    def leader(self, skip=()):
        for member in self.cluster(skip).get("members", []):
            if member.get("role") == "leader" and member.get("state") == "running":
                return member["name"]
        return None

    def settled(self, skip=()):
        """One running leader and every other member streaming on the leader's timeline."""
        members = self.cluster(skip).get("members", [])
        leaders = [m for m in members if m.get("role") == "leader" and m.get("state") == "running"]
        others = [m for m in members if m.get("role") != "leader"]
        return (len(members) == len(self.members) and len(leaders) == 1
                and all(m.get("state") == "streaming" and m.get("timeline") == leaders[0].get("timeline")
                        for m in others))

    def timeline(self, skip=()):
        for member in self.cluster(skip).get("members", []):
            if member.get("role") == "leader":
                return member.get("timeline")
        return None


class Etcd:
    """The etcd members as Patroni sees them: each host's client URL, asked as Patroni's etcd user."""

    def __init__(self, hosts, args, password):
        self.hosts = hosts
        self.clients = dict((name, EtcdClient("https://%s:2379" % address, args.etcd_ca, args.etcd_cert,
                                              args.etcd_key, timeout=2, user=args.etcd_user, password=password))
                            for name, (dummy, address) in hosts.items())

    def call(self, name, path):
        try:
            return self.clients[name].call(path, {})
        except EtcdError:
            self.clients[name].token = None      # a restarted member forgot its tokens
            return None

    def members(self, skip=()):
        """{id: name} of the cluster's member list, asked of the first host that answers."""
        for name in self.hosts:
            answer = None if name in skip else self.call(name, "/v3/cluster/member/list")
            if answer:
                return dict((m.get("ID"), m.get("name", "")) for m in answer.get("members", []))
        return {}

    def leader(self, skip=()):
        """The leader's name when every listed member outside skip answers and names the same leader, itself
        outside skip; else None. Right after a leader dies its followers still name it until their election
        timeout (1 s): skip it to wait for the new one."""
        members = self.members(skip)
        seen = set()
        for name in members.values():
            if name in skip:
                continue
            status = self.call(name, "/v3/maintenance/status") if name in self.clients else None
            if not status:
                return None
            seen.add(status.get("leader"))
        leader = members.get(seen.pop()) if len(seen) == 1 else None
        return None if leader in skip else leader


def in_recovery(container):
    """What the member's own server says through its socket: True (read-only), False (primary), None (it refuses
    sessions: starting, shutting down or stopped)."""
    result = subprocess.run(["podman", "exec", container, "runuser", "-u", "postgres", "--", "psql", "-XAtc",
                             "SELECT pg_is_in_recovery()"], capture_output=True, text=True, timeout=30, check=False)
    return {"t": True, "f": False}.get(result.stdout.strip())


def run_playbook(argv_json, drill, event, out, what="done", log=None):
    """Run an operations playbook (JSON argv) while the client writes; its output in OUT/LOG.log (LOG: the
    drill's name unless given)."""
    log = log or drill
    result = subprocess.run(json.loads(argv_json), capture_output=True, text=True, timeout=900, check=False)
    event(drill, what, rc=result.returncode)
    with open(os.path.join(out, log + ".log"), "w", encoding="utf-8") as handle:
        handle.write(result.stdout + result.stderr)
    if result.returncode != 0:
        # the failure itself, in the scenario's output: the log goes with the scenario's destroy
        lines = (result.stdout + result.stderr).splitlines()
        failed = [i for i, line in enumerate(lines) if "fatal:" in line or "[ERROR]" in line]
        raise SystemExit("%s failed: see %s/%s.log\n%s" % (
            drill, out, log, "\n".join(lines[failed[0]:failed[0] + 30] if failed else lines[-40:])))


def hosts_option(value):
    """name=container=address,... -> {name: (container, address)}"""
    hosts = {}
    for item in value.split(","):
        name, container, address = item.split("=")
        hosts[name] = (container, address)
    return hosts


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--vip", required=True)
    parser.add_argument("--port", type=int, default=5000)
    parser.add_argument("--user", required=True)
    parser.add_argument("--password-file", required=True)
    parser.add_argument("--database", required=True)
    parser.add_argument("--members", required=True, help="name=container=address,...")
    parser.add_argument("--network", required=True)
    parser.add_argument("--api-ca", required=True, help="the CA of Patroni's REST API certificates")
    parser.add_argument("--switchover", required=True, help="JSON argv of the planned switchover")
    parser.add_argument("--rolling-restart", required=True, help="JSON argv of the rolling restart")
    parser.add_argument("--etcd-hosts", required=True, help="name=container=address,... of every host that is or "
                        "becomes an etcd member")
    parser.add_argument("--etcd-ca", required=True)
    parser.add_argument("--etcd-cert", required=True, help="a client certificate of the etcd CA")
    parser.add_argument("--etcd-key", required=True)
    parser.add_argument("--etcd-user", default="patroni")
    parser.add_argument("--etcd-password-file", required=True)
    parser.add_argument("--etcd-rolling-restart", required=True, help="JSON argv of etcd's rolling restart")
    parser.add_argument("--etcd-lost", required=True, help="the etcd member whose data is lost")
    parser.add_argument("--etcd-replace", required=True, help="JSON argv of the member replacement")
    parser.add_argument("--etcd-converge", required=True, help="JSON argv of the converge with the new members")
    parser.add_argument("--out", required=True)
    parser.add_argument("--pause", type=float, default=0.05)
    parser.add_argument("--settle", type=float, default=3.0, help="seconds of traffic after each drill settled")
    args = parser.parse_args()

    run_alone()
    with open(args.password_file, encoding="utf-8") as handle:
        password = handle.read().strip()
    os.makedirs(args.out, exist_ok=True)
    members = hosts_option(args.members)
    patroni = Patroni(members, args.api_ca)
    etcd_hosts = hosts_option(args.etcd_hosts)
    with open(args.etcd_password_file, encoding="utf-8") as handle:
        etcd = Etcd(etcd_hosts, args, handle.read().strip())
    if not wait_until(patroni.settled, 60, step=0.2):
        raise SystemExit("the cluster is not settled before the drills: %s" % patroni.cluster())

    setup = psycopg2.connect(host=args.vip, port=args.port, user=args.user, password=password,
                             dbname=args.database, sslmode="require", connect_timeout=5)
    setup.autocommit = True
    with setup.cursor() as cursor:
        cursor.execute("CREATE TABLE IF NOT EXISTS %s (id bigint PRIMARY KEY, node text, "
                       "at timestamptz DEFAULT clock_timestamp())" % TABLE)
        cursor.execute("TRUNCATE %s" % TABLE)
    setup.close()

    client = Client(args, password, args.out)
    events = []

    def event(drill, what, at=None, **extra):
        entry = dict(drill=drill, what=what, at=at if at is not None else time.time(), **extra)
        events.append(entry)
        print("%.3f %-16s %s %s" % (entry["at"], drill, what, json.dumps(extra) if extra else ""), flush=True)

    def settle(drill, timeout=90, skip=()):
        if not wait_until(lambda: patroni.settled(skip), timeout, step=0.2):
            event(drill, "not_settled", cluster=patroni.cluster(skip))
            raise SystemExit("%s: the cluster did not settle within %d s" % (drill, timeout))
        settled_at = time.time()
        event(drill, "settled", settled_at, leader=patroni.leader(skip))
        # Patroni settled is not yet the write path back: HAProxy puts a member back after two good checks (1 s
        # apart), so the next drill waits for a commit through the VIP; else this drill's gap would show in the
        # next one's window (seen: patroni_kill settled 1.5 s after the kill, its writes came back during the
        # switchover).
        if not wait_until(lambda: client.last_ack > settled_at, 60, step=0.1):
            raise SystemExit("%s: no commit through the VIP within 60 s after the cluster settled" % drill)
        event(drill, "writing", client.last_ack)
        time.sleep(args.settle)

    client.start()
    time.sleep(args.settle)
    try:
        leader = patroni.leader()
        container = members[leader][0]
        postmaster = podman("exec", container, "head", "-1", "/var/lib/postgresql/17/main/postmaster.pid").strip()
        event("postgres_kill", "kill", stamped(container, "kill -9 %s" % postmaster), leader=leader)
        # Patroni notices within loop_wait and starts PostgreSQL again in place (crash recovery), still leading
        started = wait_until(lambda: podman("exec", container, "head", "-1", "/var/lib/postgresql/17/main/"
                                            "postmaster.pid", check=False).strip() not in ("", postmaster)
                             and in_recovery(container) is False, 60, step=0.5)
        event("postgres_kill", "restarted" if started else "not_restarted", member=leader)
        settle("postgres_kill")

        leader = patroni.leader()
        container = members[leader][0]
        main_pid = podman("exec", container, "systemctl", "show", "-P", "MainPID", PATRONI).strip()
        event("patroni_kill", "kill", stamped(container, "systemctl kill -s KILL %s" % PATRONI), leader=leader)
        # systemd starts Patroni again (Restart=on-failure); it finds PostgreSQL running and keeps leading
        restarted = wait_until(lambda: podman("exec", container, "systemctl", "show", "-P", "MainPID", PATRONI,
                                              check=False).strip() not in ("", "0", main_pid), 30, step=0.2)
        event("patroni_kill", "restarted" if restarted else "not_restarted", member=leader)
        settle("patroni_kill")

        leader = patroni.leader()
        event("switchover", "start", leader=leader)
        run_playbook(args.switchover, "switchover", event, args.out)
        settle("switchover")

        # etcd's leader, wherever it is, killed and held down (the automatic restart cancelled, as a dead process)
        leader, timeline = patroni.leader(), patroni.timeline()
        etcd_leader = wait_until(etcd.leader, 30, step=0.2)
        if etcd_leader is None:
            raise SystemExit("etcd_one_down: no etcd leader that every member agrees on")
        container = etcd_hosts[etcd_leader][0]
        event("etcd_one_down", "kill", stamped(container, "systemctl kill -s KILL etcd.service; sleep 0.3; "
                                                          "systemctl stop etcd.service"),
              member=etcd_leader, leader=leader, timeline=timeline)
        elected = wait_until(lambda: etcd.leader(skip=(etcd_leader,)), 30, step=0.2)
        event("etcd_one_down", "etcd_leader_elected", member=elected)
        time.sleep(3 * args.settle)
        event("etcd_one_down", "leader_after", leader=patroni.leader(), timeline=patroni.timeline(),
              etcd_state=podman("exec", container, "systemctl", "is-active", "etcd.service", check=False).strip())
        stamped(container, "systemctl start etcd.service")
        whole = wait_until(lambda: len(etcd.members()) == 3 and etcd.leader(), 60, step=0.2)
        event("etcd_one_down", "etcd_whole" if whole else "etcd_not_whole", members=sorted(etcd.members().values()),
              etcd_leader=whole)
        settle("etcd_one_down")

        leader = patroni.leader()
        replicas = [name for name in members if name != leader]
        at = stamped(members[replicas[0]][0], "systemctl stop etcd")
        at = min(at, stamped(members[replicas[1]][0], "systemctl stop etcd"))
        event("etcd_quorum_lost", "stop", at, members=replicas, leader=leader)
        demoted = wait_until(lambda: in_recovery(members[leader][0]), 60, step=0.5)
        event("etcd_quorum_lost", "leader_read_only" if demoted else "leader_still_primary", member=leader)
        for name in replicas:
            stamped(members[name][0], "systemctl start etcd")
        event("etcd_quorum_lost", "quorum_back")
        settle("etcd_quorum_lost", timeout=120)

        leader = patroni.leader()
        container = members[leader][0]
        event("network_cut", "disconnect", stamped(container, "true"), leader=leader)
        podman("network", "disconnect", args.network, container)
        # Cut off from etcd, the leader demotes at once: a fast shutdown refuses new sessions and ends the open
        # ones, then (once its WAL senders give up, wal_sender_timeout) it starts again as a replica.
        refused = wait_until(lambda: in_recovery(container) is not False, 60, step=0.2)
        event("network_cut", "old_leader_refuses_writes" if refused else "old_leader_still_primary", member=leader)
        new_leader = wait_until(lambda: patroni.leader(skip=(leader,)) not in (None, leader)
                                and patroni.leader(skip=(leader,)), 90)
        event("network_cut", "new_leader", leader=new_leader)
        demoted = wait_until(lambda: in_recovery(container), 90, step=0.5)
        event("network_cut", "old_leader_read_only" if demoted else "old_leader_still_primary", member=leader)
        time.sleep(args.settle)
        event("network_back", "connect", stamped(container, "true"), member=leader)
        podman("network", "connect", "--ip", members[leader][1], args.network, container)
        settle("network_back", timeout=120)
        event("network_back", "rejoined", member=leader,
              role=[m.get("role") for m in patroni.cluster().get("members", []) if m.get("name") == leader])

        leader = patroni.leader()
        event("rolling_restart", "start", leader=leader)
        run_playbook(args.rolling_restart, "rolling_restart", event, args.out)
        settle("rolling_restart")

        # The order is read from the servers: each member's start on the kernel's monotonic clock (systemd's
        # ActiveEnterTimestampMonotonic, microseconds; the containers share the controller's kernel).
        leader, timeline = patroni.leader(), patroni.timeline()
        etcd_leader = wait_until(etcd.leader, 30, step=0.2)
        etcd_names = sorted(etcd.members().values())
        event("etcd_rolling_restart", "start", leader=leader, timeline=timeline, etcd_leader=etcd_leader,
              etcd_members=etcd_names, monotonic_us=int(time.monotonic() * 1e6))
        run_playbook(args.etcd_rolling_restart, "etcd_rolling_restart", event, args.out)
        event("etcd_rolling_restart", "restarted", started=dict(
            (name, int(podman("exec", etcd_hosts[name][0], "systemctl", "show", "-P", "ActiveEnterTimestampMonotonic",
                              "etcd.service").strip() or 0)) for name in etcd_names))
        settle("etcd_rolling_restart")
        event("etcd_rolling_restart", "leader_after", leader=patroni.leader(), timeline=patroni.timeline())

        # A dead disk under pg3's etcd member: PostgreSQL and Patroni keep running there, on the other members.
        leader, timeline = patroni.leader(), patroni.timeline()
        container = etcd_hosts[args.etcd_lost][0]
        event("etcd_replace", "lose", stamped(container, "systemctl stop etcd.service; find %s -mindepth 1 -delete"
                                                         % ETCD_DATA_DIR),
              member=args.etcd_lost, leader=leader, timeline=timeline)
        run_playbook(args.etcd_replace, "etcd_replace", event, args.out, what="replaced")
        run_playbook(args.etcd_converge, "etcd_replace", event, args.out, what="converged", log="etcd_converge")
        settle("etcd_replace")
        event("etcd_replace", "leader_after", leader=patroni.leader(), timeline=patroni.timeline(),
              etcd_members=sorted(etcd.members().values()), etcd_leader=wait_until(etcd.leader, 30, step=0.2),
              lost_state=podman("exec", container, "systemctl", "is-active", "etcd.service", check=False).strip())
    finally:
        client.stop.set()
        client.join(30)
        with open(os.path.join(args.out, "requests.jsonl"), "w", encoding="utf-8") as handle:
            for record in client.requests:
                handle.write(json.dumps(record) + "\n")
        with open(os.path.join(args.out, "events.json"), "w", encoding="utf-8") as handle:
            json.dump({"events": events, "members": {n: a for n, (c, a) in members.items()}}, handle, indent=1)


if __name__ == "__main__":
    main()
