#!/usr/bin/env python3
"""A PostgreSQL client that commits one row at a time into its own table and logs, for every acknowledged
commit, when the INSERT was sent and when the server acknowledged it.

A point-in-time restore to a target T must hold every row acknowledged before T, and no row whose INSERT was
sent after T (its commit record is later than T); only a commit in flight at T may land on either side. The
shared writers log one time per acknowledgement, which cannot tell those apart, hence this one.

    writer_pitr.py --host 10.0.0.1 --user app --password-file F --database app --table pitr_acks \
                   --ack-log acks.log --summary writer.json [--seconds 240] [--stop-file F] [--pause 0.02]
The ack log has one line per acknowledged commit: "id sent_epoch acked_epoch". The password is read from a file
(0600), never from the command line. The table is created if missing and continued from its highest id.
"""
import argparse
import json
import os
import time

import psycopg2


def connect(args, password):
    connection = psycopg2.connect(host=args.host, user=args.user, password=password, dbname=args.database,
                                  connect_timeout=2, application_name="writer_pitr")
    connection.autocommit = True
    return connection


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--password-file", required=True)
    parser.add_argument("--database", required=True)
    parser.add_argument("--table", required=True)
    parser.add_argument("--ack-log", required=True)
    parser.add_argument("--summary", required=True)
    parser.add_argument("--seconds", type=float, default=240)
    parser.add_argument("--stop-file")
    parser.add_argument("--pause", type=float, default=0.02)
    args = parser.parse_args()
    with open(args.password_file, encoding="utf-8") as handle:
        password = handle.read().strip()
    table = '"%s"' % args.table.replace('"', '""')

    connection = connect(args, password)
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE IF NOT EXISTS %s (id BIGINT PRIMARY KEY, "
                       "at TIMESTAMPTZ DEFAULT clock_timestamp())" % table)
        cursor.execute("SELECT COALESCE(MAX(id), 0) FROM %s" % table)
        next_id = cursor.fetchone()[0] + 1

    acked, failed, failures = 0, 0, {}
    started = time.time()
    with open(args.ack_log, "a", encoding="utf-8") as log:
        while time.time() - started < args.seconds:
            if args.stop_file and os.path.exists(args.stop_file):
                break
            try:
                if connection is None:
                    connection = connect(args, password)
                sent = time.time()
                with connection.cursor() as cursor:
                    cursor.execute("INSERT INTO %s (id) VALUES (%%s)" % table, (next_id,))
                log.write("%d %.6f %.6f\n" % (next_id, sent, time.time()))
                log.flush()
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
    summary = {"acked": acked, "failed_commits": failed, "failures": failures,
               "seconds": round(time.time() - started, 1)}
    with open(args.summary, "w", encoding="utf-8") as handle:
        json.dump(summary, handle, indent=2)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
