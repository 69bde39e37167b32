#!/usr/bin/env python3
"""Failover drills through the VIP, with a client that commits a row every --pause seconds and records each.

Runs on the controller (the VIP is on the podman bridge, which the host reaches). The client commits one row
per transaction through ProxySQL and reads @@hostname in the same transaction (transaction_persistent keeps
it on the backend that commits), so each request says which backend took it. The drills act through
`podman exec` / `podman network`, each timestamped inside the container right before the fault:

  worker_kill     kill -9 ProxySQL's worker on the VIP holder; its angel restarts it (VIP stays)
  service_kill    kill -9 the whole service (angel and worker, restart disabled) on the VIP holder: VIP moves
  service_restart start it again: with preempt the VIP comes back (failback)
  writer_kill     kill -9 the Galera writer: the proxies move writes to the next weighted node
  network_cut     disconnect the VIP holder from the network: VIP moves
  network_back    reconnect it: one holder again

Output in --out: requests.jsonl (every request), acks.txt (acknowledged ids), events.json, vrrp.log (the
keepalived notify hooks' transitions from every proxy), results.json (per-drill measurements).
The password is read from a 0600 file, never from the command line.

    drill.py --vip 10.0.0.100 --port 6033 --user writer --password-file F --database app
             --network NET --proxies p1=ctr,p2=ctr --proxy-ips p1=ip,p2=ip --galera g1=ctr,... --out DIR
"""
import argparse
import fcntl
import json
import os
import subprocess
import threading
import time

import pymysql

TABLE = "ha_writes"
STATE_LOG = "/var/log/keepalived-state.log"


def podman(*args, check=True):
    result = subprocess.run(["podman"] + list(args), capture_output=True, text=True, timeout=120)
    if check and result.returncode != 0:
        raise RuntimeError("podman %s failed: %s" % (" ".join(args), result.stderr.strip()))
    return result.stdout


def in_container(container, script, check=True):
    """Run a shell script in a container; return its stdout."""
    return podman("exec", container, "sh", "-c", script, check=check)


def stamped(container, script):
    """Run script in the container after printing the container's clock (same kernel clock as the host)."""
    out = in_container(container, "date +%s.%N; " + script)
    return float(out.splitlines()[0])


class Client(threading.Thread):
    """Commits a row per transaction through the VIP; records start, end, outcome and backend of each."""

    def __init__(self, args, password, out):
        super().__init__(daemon=True)
        self.args, self.password = args, password
        self.requests, self.stop = [], threading.Event()
        self.acks = open(os.path.join(out, "acks.txt"), "w", encoding="utf-8")
        self.next_id = 1

    def connect(self):
        return pymysql.connect(host=self.args.vip, port=self.args.port, user=self.args.user,
                               password=self.password, database=self.args.database, autocommit=False,
                               connect_timeout=self.args.timeout, read_timeout=self.args.timeout,
                               write_timeout=self.args.timeout)

    def run(self):
        connection = None
        while not self.stop.is_set():
            row_id, self.next_id = self.next_id, self.next_id + 1   # never reuse an id that may have landed
            started = time.time()
            record = {"id": row_id, "start": started}
            try:
                if connection is None:
                    connection = self.connect()
                with connection.cursor() as cursor:
                    cursor.execute("INSERT INTO %s (id, node) VALUES (%%s, @@hostname)" % TABLE, (row_id,))
                    cursor.execute("SELECT @@hostname")
                    backend = cursor.fetchone()[0]
                connection.commit()
                record.update(end=time.time(), ok=True, backend=backend)
                self.acks.write("%d\n" % row_id)
                self.acks.flush()
            except (pymysql.err.MySQLError, OSError) as err:
                record.update(end=time.time(), ok=False,
                              error="%s: %s" % (type(err).__name__, err.args[0] if err.args else ""))
                try:
                    if connection is not None:
                        connection.close()
                except Exception:  # pylint: disable=broad-except  # a dead connection cannot close cleanly
                    pass
                connection = None
            self.requests.append(record)
            time.sleep(self.args.pause)
        self.acks.close()


def vip_holders(proxies, vip):
    holders = []
    for name, container in proxies.items():
        out = in_container(container, "ip -o -4 addr show | grep -F ' %s/' || true" % vip, check=False)
        if out.strip():
            holders.append(name)
    return holders


def proxysql_worker(container):
    """(angel pid, worker pid) of ProxySQL: the worker is the proxysql process whose parent is a proxysql."""
    rows = [line.split() for line in in_container(container, "ps -o pid=,ppid= -C proxysql").splitlines()]
    pids = {int(pid) for pid, dummy in rows}
    for pid, ppid in rows:
        if int(ppid) in pids:
            return int(ppid), int(pid)
    return None, None   # between the worker's death and the angel's new fork


def wait_until(predicate, timeout, step=0.05):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    return None


def argument_parser(settle):
    """The options every drill script takes (this one and group_replication's proxy_drill.py)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--vip", required=True)
    parser.add_argument("--port", type=int, default=6033)
    parser.add_argument("--user", required=True)
    parser.add_argument("--password-file", required=True)
    parser.add_argument("--database", required=True)
    parser.add_argument("--proxies", required=True, help="name=container,...")
    parser.add_argument("--out", required=True)
    parser.add_argument("--pause", type=float, default=0.05)
    parser.add_argument("--timeout", type=float, default=0.5, help="client connect/read/write timeout")
    parser.add_argument("--settle", type=float, default=settle, help="seconds of traffic after each drill")
    return parser


def pairs(text):
    """'a=x,b=y' -> {'a': 'x', 'b': 'y'}"""
    return dict(item.split("=", 1) for item in text.split(","))


def run_alone():
    """Drills that bound timings run one at a time: each takes the lock DBOPS_DRILL_LOCK exclusively
    (tests/run_all.sh sets it for every scenario). A scenario run_all.sh runs alone also gets DBOPS_ALONE_LOCK,
    which every other scenario holds shared for its whole run: its drill first waits until no other scenario runs,
    so the gaps it bounds do not share the CPU with another scenario's work. That lock is taken first, holding
    nothing, so it never waits on a scenario that waits on it. The locks are held until this process ends.
    Without them (a scenario run by hand) nothing is waited for."""
    run_alone.handles = []
    for name in ("DBOPS_ALONE_LOCK", "DBOPS_DRILL_LOCK"):
        path = os.environ.get(name)
        if not path:
            continue
        started = time.monotonic()
        handle = open(path, "a", encoding="utf-8")  # pylint: disable=consider-using-with  # held to the end
        fcntl.flock(handle, fcntl.LOCK_EX)
        run_alone.handles.append(handle)
        print("%s %s taken after %.1f s" % (name, path, time.monotonic() - started), flush=True)


def prepare(args):
    """Waits to run alone (run_alone), reads the password from its 0600 file, creates --out and gives the client
    an empty table through the VIP; returns the password. The proxies' VRRP state logs are kept whole: the report
    reads each proxy's state before a fault from them (the transitions since the converge), and windows every
    later transition by time."""
    run_alone()
    with open(args.password_file, encoding="utf-8") as handle:
        password = handle.read().strip()
    os.makedirs(args.out, exist_ok=True)
    setup = pymysql.connect(host=args.vip, port=args.port, user=args.user, password=password,
                            database=args.database, autocommit=True, connect_timeout=5)
    with setup.cursor() as cursor:
        cursor.execute("CREATE TABLE IF NOT EXISTS %s (id BIGINT PRIMARY KEY, node VARCHAR(64), "
                       "at TIMESTAMP(6) DEFAULT CURRENT_TIMESTAMP(6))" % TABLE)
        cursor.execute("DELETE FROM %s" % TABLE)
    setup.close()
    return password


def write_record(out, client, events, proxies, hostnames):
    """The drill's record in OUT for report.py: every request (requests.jsonl), and the events with each proxy's
    VRRP transitions from its keepalived state log (events.json)."""
    vrrp = []
    for name, container in proxies.items():
        for line in in_container(container, "cat %s" % STATE_LOG, check=False).splitlines():
            parts = line.split()
            if len(parts) >= 4:
                vrrp.append({"at": float(parts[0]), "proxy": name, "instance": parts[2], "state": parts[3]})
    vrrp.sort(key=lambda entry: entry["at"])
    with open(os.path.join(out, "requests.jsonl"), "w", encoding="utf-8") as handle:
        for record in client.requests:
            handle.write(json.dumps(record) + "\n")
    with open(os.path.join(out, "events.json"), "w", encoding="utf-8") as handle:
        json.dump({"events": events, "vrrp": vrrp, "hostnames": hostnames}, handle, indent=1)


def main():
    parser = argument_parser(settle=5.0)
    parser.add_argument("--network", required=True)
    parser.add_argument("--proxy-ips", required=True, help="name=ip,...")
    parser.add_argument("--galera", required=True, help="name=container,...")
    args = parser.parse_args()
    proxies, proxy_ips, galera = pairs(args.proxies), pairs(args.proxy_ips), pairs(args.galera)
    password = prepare(args)
    hostnames = dict((name, in_container(container, "hostname").strip()) for name, container in galera.items())

    client = Client(args, password, args.out)
    events = []

    def event(drill, what, at, **extra):
        entry = dict(drill=drill, what=what, at=at, **extra)
        events.append(entry)
        print("%.3f %-16s %s %s" % (at, drill, what, extra or ""), flush=True)

    client.start()
    time.sleep(3)

    # 1. kill -9 the worker; the angel forks a new one.
    holder = vip_holders(proxies, args.vip)[0]
    angel, worker = proxysql_worker(proxies[holder])
    if worker is None:
        raise RuntimeError("no ProxySQL worker under an angel on %s" % holder)
    # The kill and the wait for the angel's new worker run in one shell, so both times are the container's.
    out = in_container(proxies[holder], (
        "date +%%s.%%N; kill -9 %(w)d; i=0; while [ $i -lt 1000 ]; do "
        "new=$(ps -o pid=,ppid= -C proxysql | awk -v a=%(a)d '$2==a {print $1}'); "
        "if [ -n \"$new\" ] && [ \"$new\" != %(w)d ] && ss -Hltn 'sport = :%(p)d' | grep -q .; "
        "then date +%%s.%%N; break; fi; i=$((i+1)); sleep 0.01; done") % {"w": worker, "a": angel, "p": args.port})
    times = [float(line) for line in out.split()]
    event("worker_kill", "kill", times[0], proxy=holder, pid=worker)
    if len(times) > 1:
        event("worker_kill", "angel_restarted", times[1], proxy=holder, angel=angel)
    time.sleep(args.settle)

    # 2. kill -9 the whole service on the VIP holder, with systemd's restart disabled for the drill.
    holder = vip_holders(proxies, args.vip)[0]
    in_container(proxies[holder], "mkdir -p /run/systemd/system/proxysql.service.d && printf '[Service]\\nRestart=no\\n'"
                 " > /run/systemd/system/proxysql.service.d/zz-drill.conf && systemctl daemon-reload")
    at = stamped(proxies[holder], "systemctl kill -s KILL proxysql")
    event("service_kill", "kill", at, proxy=holder)
    time.sleep(args.settle)
    event("service_kill", "holders", time.time(), holders=vip_holders(proxies, args.vip))

    # 3. start it again: with preempt, the VIP returns to it.
    in_container(proxies[holder], "rm -f /run/systemd/system/proxysql.service.d/zz-drill.conf && systemctl daemon-reload")
    at = stamped(proxies[holder], "systemctl start proxysql")
    event("service_restart", "start", at, proxy=holder)
    time.sleep(args.settle)
    event("service_restart", "holders", time.time(), holders=vip_holders(proxies, args.vip))

    # 4. kill -9 the Galera writer (the backend of the last acknowledged commit).
    last_backend = [r["backend"] for r in client.requests if r.get("ok")][-1]
    writer = [name for name, host in hostnames.items() if host == last_backend][0]
    at = stamped(galera[writer], "pkill -9 -x mariadbd")
    event("writer_kill", "kill", at, node=writer, backend=last_backend)
    time.sleep(args.settle + 1)

    # 5. cut the VIP holder's network.
    holder = vip_holders(proxies, args.vip)[0]
    at = time.time()
    podman("network", "disconnect", args.network, proxies[holder])
    event("network_cut", "disconnect", at, proxy=holder, done=time.time())
    time.sleep(args.settle)
    others = [name for name in proxies if name != holder]
    event("network_cut", "holders", time.time(), holders=vip_holders(dict((n, proxies[n]) for n in others), args.vip))

    # 6. reconnect it: adverts meet again and one holder remains.
    at = time.time()
    podman("network", "connect", "--ip", proxy_ips[holder], args.network, proxies[holder])
    event("network_back", "connect", at, proxy=holder, done=time.time())
    time.sleep(args.settle)
    event("network_back", "holders", time.time(), holders=vip_holders(proxies, args.vip))

    client.stop.set()
    client.join(10)

    # Every member back and Synced before anyone counts rows (the killed writer restarts and rejoins).
    def all_synced():
        for container in galera.values():
            out = in_container(container, "mariadb -N -B -e \"SHOW STATUS LIKE 'wsrep_local_state_comment'\"",
                               check=False)
            if "Synced" not in out:
                return False
        return True
    event("end", "galera_synced" if wait_until(all_synced, 120, step=1) else "galera_not_synced", time.time())

    # When the killed writer was Synced again (its own log): the proxies must not have sent it writes before.
    kill_at = [e["at"] for e in events if e["drill"] == "writer_kill" and e["what"] == "kill"][0]
    journal = in_container(galera[writer], "journalctl -o short-unix --no-pager -q --since @%d" % int(kill_at),
                           check=False)
    synced_at = [float(line.split()[0]) for line in journal.splitlines()
                 if "-> synced" in line.lower() and float(line.split()[0]) > kill_at]
    if synced_at:
        event("writer_kill", "rejoined_synced", synced_at[0], node=writer)

    write_record(args.out, client, events, proxies, hostnames)
    print("requests: %d, acknowledged: %d" % (len(client.requests), sum(1 for r in client.requests if r.get("ok"))))


if __name__ == "__main__":
    main()
