#!/usr/bin/env python3
"""A PostgreSQL client that commits rows continuously and records exactly which commits were acknowledged.

It connects with libpq's multi-host failover (host=a,b,c target_session_attrs=read-write), as an application
would, so it always writes to whichever member is primary. Every acknowledged id goes to the ack file with the
time of its acknowledgement; the summary gives the longest gap between two acknowledgements (the write gap a
switchover causes) and every failure by kind.

    writer_pg.py --hosts 10.0.0.1,10.0.0.2 --user app --password-file F --database app \
                 --ack-file acks.txt --summary writer.json [--seconds 120] [--stop-file F]
The password is read from a file (0600), never from the command line.
"""
import argparse
import json
import os
import time

import psycopg2


def connect(args, password):
    connection = psycopg2.connect(host=args.hosts, user=args.user, password=password, dbname=args.database,
                                  target_session_attrs="read-write", connect_timeout=2,
                                  application_name="writer_pg")
    connection.autocommit = True
    return connection


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hosts", required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--password-file", required=True)
    parser.add_argument("--database", required=True)
    parser.add_argument("--ack-file", required=True)
    parser.add_argument("--summary", required=True)
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--stop-file")
    parser.add_argument("--pause", type=float, default=0.02)
    args = parser.parse_args()
    with open(args.password_file, encoding="utf-8") as handle:
        password = handle.read().strip()

    setup = connect(args, password)
    with setup.cursor() as cursor:
        cursor.execute("CREATE TABLE IF NOT EXISTS acks (id BIGINT PRIMARY KEY, node TEXT, "
                       "at TIMESTAMPTZ DEFAULT clock_timestamp())")
        cursor.execute("SELECT COALESCE(MAX(id), 0) FROM acks")
        next_id = cursor.fetchone()[0] + 1
    setup.close()

    acked, failed, failures = 0, 0, {}
    nodes, gap, gap_after = [], 0.0, None
    connection = None
    started = time.time()
    last_ack = None
    with open(args.ack_file, "a", encoding="utf-8") as acks:
        while time.time() - started < args.seconds:
            if args.stop_file and os.path.exists(args.stop_file):
                break
            try:
                if connection is None:
                    connection = connect(args, password)
                with connection.cursor() as cursor:
                    cursor.execute("INSERT INTO acks (id, node) VALUES (%s, host(inet_server_addr())) "
                                   "RETURNING node", (next_id,))
                    node = cursor.fetchone()[0]
                now = time.time()
                acks.write("%d\n" % next_id)
                acks.flush()
                if last_ack is not None and now - last_ack > gap:
                    gap, gap_after = now - last_ack, next_id
                if not nodes or nodes[-1] != node:
                    nodes.append(node)
                last_ack = now
                acked += 1
                next_id += 1
                time.sleep(args.pause)
            except psycopg2.Error as err:
                # The commit's fate is unknown to the client: not acknowledged, so never counted as written.
                failed += 1
                key = (err.pgcode or type(err).__name__) + ": " + str(err).strip().splitlines()[0][:80]
                failures[key] = failures.get(key, 0) + 1
                next_id += 1          # never reuse an id whose insert may have landed
                try:
                    if connection is not None:
                        connection.close()
                except psycopg2.Error:
                    pass
                connection = None
                time.sleep(0.1)
    summary = {"acked": acked, "failed_commits": failed, "failures": failures, "primaries_written": nodes,
               "write_gap_seconds": round(gap, 2), "gap_ended_at_id": gap_after,
               "seconds": round(time.time() - started, 1)}
    with open(args.summary, "w", encoding="utf-8") as handle:
        json.dump(summary, handle, indent=2)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
