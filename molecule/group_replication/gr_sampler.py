#!/usr/bin/env python3
"""Sample every member of a Group Replication group while a drill runs: its uptime and the group view it
sees (host, state and role of each member). One JSON line per answer, or {"t", "host", "up": false} when a
member does not answer, so a test can tell when each member restarted (its uptime fell), whether the
primary role moved before the old primary went down, and whether the group kept a majority throughout.

    gr_sampler.py --hosts IP1,IP2,IP3 --user U --password-file F --out samples.jsonl --stop-file F
The password is read from a file (0600), never from the command line.
"""
import argparse
import json
import os
import threading
import time

import pymysql


def connect(host, user, password):
    return pymysql.connect(host=host, user=user, password=password, autocommit=True, connect_timeout=1,
                           read_timeout=2, write_timeout=2)


def sample(host, user, password, interval, until, write):
    """Ask one member every interval until until() says stop. Each member has its own thread and connection, so
    a member that hangs while it stops (up to the read timeout) does not delay the answers of the others."""
    connection = None
    while not until():
        record = {"t": round(time.time(), 3), "host": host, "up": False}
        try:
            if connection is None:
                connection = connect(host, user, password)
            with connection.cursor() as cursor:
                cursor.execute("SHOW GLOBAL STATUS LIKE 'Uptime'")
                uptime = int(cursor.fetchone()[1])
                cursor.execute("SELECT MEMBER_ID = @@server_uuid, MEMBER_HOST, MEMBER_STATE, MEMBER_ROLE "
                               "FROM performance_schema.replication_group_members")
                rows = cursor.fetchall()
            record.update(up=True, uptime=uptime,
                          state=([r[2] for r in rows if r[0]] or ["OFFLINE"])[0],
                          view=[[r[1], r[2], r[3] or ""] for r in rows if r[1]])
        except pymysql.err.MySQLError:
            try:
                if connection is not None:
                    connection.close()
            except Exception:  # pylint: disable=broad-except  # already broken
                pass
            connection = None
        write(record)
        time.sleep(interval)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hosts", required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--password-file", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--stop-file", required=True)
    parser.add_argument("--interval", type=float, default=0.2)
    parser.add_argument("--seconds", type=float, default=600)
    args = parser.parse_args()
    with open(args.password_file, encoding="utf-8") as handle:
        password = handle.read().strip()
    started = time.time()
    lock = threading.Lock()

    def until():
        return os.path.exists(args.stop_file) or time.time() - started >= args.seconds

    with open(args.out, "a", encoding="utf-8") as out:
        def write(record):
            with lock:
                out.write(json.dumps(record) + "\n")
                out.flush()

        threads = [threading.Thread(target=sample, args=(host, args.user, password, args.interval, until, write))
                   for host in args.hosts.split(",")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()


if __name__ == "__main__":
    main()
