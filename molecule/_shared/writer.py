#!/usr/bin/env python3
"""A client that commits rows continuously and remembers exactly which commits were acknowledged.

Used by HA scenarios: it writes to one node at a time and moves to the next when a commit fails (as a
client behind a proxy would), so failures are counted, never hidden. Every acknowledged id goes to the ack
file as soon as the server confirms it; verify then checks each one is on every node.

    writer.py --hosts 10.0.0.1,10.0.0.2 --user app --password-file F --database app --table counter \
              --ack-file acks.txt --summary summary.json [--seconds 60] [--stop-file F] [--give-up 15] \
              [--ack-log acks.log] [--sample-file samples.log --sample-interval 0.2] [--pause 0.02]
The password is read from a file (0600), never from the command line.

--ack-log records each acknowledged id with the time and the host that acknowledged it ("id epoch host"),
so a drill knows which node wrote last and how many commits happened after a given moment. --sample-file
runs a sampler beside the writer: every --sample-interval seconds it asks every host for its
wsrep_cluster_size, wsrep_cluster_status and Uptime ("epoch host size status uptime", or "epoch host down").
The summary names the host of the last acknowledged commit (last_acked_host).
"""
import argparse
import json
import os
import threading
import time

import pymysql


def connect(host, args, password):
    return pymysql.connect(host=host, port=args.port, user=args.user, password=password, database=args.database,
                           autocommit=True, connect_timeout=2, read_timeout=5, write_timeout=5)


def sample(hosts, args, password, path, stop):
    """Ask every host for its cluster size, status and uptime until stop is set; one line per answer."""
    connections = {}
    with open(path, "a", encoding="utf-8") as out:
        while not stop.is_set():
            for host in hosts:
                try:
                    if host not in connections:
                        connections[host] = connect(host, args, password)
                    with connections[host].cursor() as cursor:
                        cursor.execute("SHOW GLOBAL STATUS WHERE Variable_name IN "
                                       "('wsrep_cluster_size', 'wsrep_cluster_status', 'Uptime')")
                        values = dict((name.lower(), value) for name, value in cursor.fetchall())
                    out.write("%.3f %s %s %s %s\n" % (time.time(), host, values.get("wsrep_cluster_size", "-"),
                                                      values.get("wsrep_cluster_status", "-"), values.get("uptime", "-")))
                except pymysql.err.MySQLError:
                    connection = connections.pop(host, None)
                    try:
                        if connection is not None:
                            connection.close()
                    except Exception:  # pylint: disable=broad-except  # already broken
                        pass
                    out.write("%.3f %s down\n" % (time.time(), host))
            out.flush()
            stop.wait(args.sample_interval)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hosts", required=True)
    parser.add_argument("--port", type=int, default=3306)
    # Through ProxySQL: a statement naming a variable (@@hostname) keeps the client's session on one backend for
    # good (ProxySQL stops multiplexing it), so a drain could never move it. Without it, each commit may go to
    # whichever member the proxy chooses, as an application's plain INSERTs do.
    parser.add_argument("--no-node", action="store_true", help="do not record the member that wrote each row")
    parser.add_argument("--user", required=True)
    parser.add_argument("--password-file", required=True)
    parser.add_argument("--database", required=True)
    parser.add_argument("--table", default="counter")
    parser.add_argument("--ack-file", required=True)
    parser.add_argument("--summary", required=True)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--stop-file")
    parser.add_argument("--give-up", type=float, default=15, help="stop after this long with no node answering")
    # 20 ms like the other engines' writers: flat out it committed about 180 rows a second on three Galera nodes
    # for the whole drill, CPU the drill's own steps then waited for on this 2-core machine.
    parser.add_argument("--pause", type=float, default=0.02, help="seconds between commits")
    parser.add_argument("--ack-log", help="also log 'id epoch host' for every acknowledged commit")
    parser.add_argument("--sample-file", help="sample every host's cluster size, status and uptime into this file")
    parser.add_argument("--sample-interval", type=float, default=0.2)
    args = parser.parse_args()
    with open(args.password_file, encoding="utf-8") as handle:
        password = handle.read().strip()
    hosts = args.hosts.split(",")

    setup = connect(hosts[0], args, password)
    with setup.cursor() as cursor:
        cursor.execute("CREATE TABLE IF NOT EXISTS `%s` (id BIGINT PRIMARY KEY, node VARCHAR(64), "
                       "at TIMESTAMP(6) DEFAULT CURRENT_TIMESTAMP(6))" % args.table)
        cursor.execute("SELECT COALESCE(MAX(id), 0) FROM `%s`" % args.table)
        next_id = cursor.fetchone()[0] + 1
    setup.close()

    insert = ("INSERT INTO `%s` (id) VALUES (%%s)" if args.no_node
              else "INSERT INTO `%s` (id, node) VALUES (%%s, @@hostname)") % args.table
    stop_sampling = threading.Event()
    sampler = None
    if args.sample_file:
        sampler = threading.Thread(target=sample, args=(hosts, args, password, args.sample_file, stop_sampling))
        sampler.daemon = True
        sampler.start()
    ack_log = open(args.ack_log, "a", encoding="utf-8") if args.ack_log else None
    last_host = None

    acked, failed, failures, switches = 0, 0, {}, 0
    current, connection = 0, None
    started = time.time()
    last_success = started
    with open(args.ack_file, "a", encoding="utf-8") as acks:
        while time.time() - started < args.seconds:
            if args.stop_file and os.path.exists(args.stop_file):
                break
            if time.time() - last_success > args.give_up:
                break
            host = hosts[current]
            try:
                if connection is None:
                    connection = connect(host, args, password)
                with connection.cursor() as cursor:
                    cursor.execute(insert, (next_id,))
                acks.write("%d\n" % next_id)
                acks.flush()
                last_host = host
                if ack_log is not None:
                    ack_log.write("%d %.3f %s\n" % (next_id, time.time(), host))
                    ack_log.flush()
                acked += 1
                next_id += 1
                last_success = time.time()
                if args.pause:
                    time.sleep(args.pause)
            except pymysql.err.MySQLError as err:
                # The commit's fate is unknown to the client: not acknowledged, so never counted as written.
                failed += 1
                key = "%s: %s" % (host, err.args[0] if err.args else type(err).__name__)
                failures[key] = failures.get(key, 0) + 1
                next_id += 1          # never reuse an id whose insert may have landed
                try:
                    if connection is not None:
                        connection.close()
                except Exception:     # pylint: disable=broad-except  # the connection is already broken
                    pass
                connection = None
                current = (current + 1) % len(hosts)
                switches += 1
                time.sleep(0.2)
    stop_sampling.set()
    if sampler is not None:
        sampler.join(10)
    if ack_log is not None:
        ack_log.close()
    summary = {"acked": acked, "failed_commits": failed, "failures": failures, "node_switches": switches,
               "seconds": round(time.time() - started, 1), "started": round(started, 3),
               "last_acked_host": last_host}
    with open(args.summary, "w", encoding="utf-8") as handle:
        json.dump(summary, handle, indent=2)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
