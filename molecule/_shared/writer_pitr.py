#!/usr/bin/env python3
"""A PostgreSQL or MySQL client that commits one row at a time into its own table and logs, for every
acknowledged commit, when the INSERT was sent and when the server acknowledged it.

A point-in-time restore to a target T must hold every row acknowledged before T, and no row whose INSERT was
sent after T (its commit record is later than T); only a commit in flight at T may land on either side. The
shared writers log one time per acknowledgement, which cannot tell those apart, hence this one.

    writer_pitr.py --host 10.0.0.1 --user app --password-file F --database app --table pitr_acks \
                   --ack-log acks.log --summary writer.json [--engine postgres|mysql] [--seconds 240]
                   [--stop-file F] [--pause 0.02]
The ack log has one line per acknowledged commit: "id sent_epoch acked_epoch". The password is read from a file
(0600), never from the command line. The table is created if missing and continued from its highest id.
"""
import argparse
import json
import os
import time

try:
    import psycopg2
except ImportError:     # a MySQL-only controller
    psycopg2 = None
try:
    import pymysql
except ImportError:     # a PostgreSQL-only controller
    pymysql = None


class Engine:
    """What differs between the two servers: the driver, its errors, quoting, the table's definition."""

    def __init__(self, name):
        self.name = name
        if name == "mysql":
            self.errors = (pymysql.err.MySQLError,)
            self.quote = "`%s`"
            self.create = ("CREATE TABLE IF NOT EXISTS %s (id BIGINT PRIMARY KEY, "
                           "at TIMESTAMP(6) DEFAULT CURRENT_TIMESTAMP(6))")
        else:
            self.errors = (psycopg2.Error,)
            self.quote = '"%s"'
            self.create = ("CREATE TABLE IF NOT EXISTS %s (id BIGINT PRIMARY KEY, "
                           "at TIMESTAMPTZ DEFAULT clock_timestamp())")

    def connect(self, args, password):
        if self.name == "mysql":
            return pymysql.connect(host=args.host, user=args.user, password=password, database=args.database,
                                   autocommit=True, connect_timeout=2, read_timeout=5, write_timeout=5)
        connection = psycopg2.connect(host=args.host, user=args.user, password=password, dbname=args.database,
                                      connect_timeout=2, application_name="writer_pitr")
        connection.autocommit = True
        return connection

    def describe(self, err):
        code = getattr(err, "pgcode", None) or (err.args[0] if self.name == "mysql" and err.args else None)
        return "%s: %s" % (code or type(err).__name__, (str(err).strip().splitlines() or [""])[0][:80])


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
    parser.add_argument("--engine", choices=["postgres", "mysql"], default="postgres")
    args = parser.parse_args()
    engine = Engine(args.engine)
    with open(args.password_file, encoding="utf-8") as handle:
        password = handle.read().strip()
    table = engine.quote % args.table.replace(engine.quote[0], engine.quote[0] * 2)

    connection = engine.connect(args, password)
    with connection.cursor() as cursor:
        cursor.execute(engine.create % table)
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
                    connection = engine.connect(args, password)
                sent = time.time()
                with connection.cursor() as cursor:
                    cursor.execute("INSERT INTO %s (id) VALUES (%%s)" % table, (next_id,))
                log.write("%d %.6f %.6f\n" % (next_id, sent, time.time()))
                log.flush()
                acked += 1
                next_id += 1
                time.sleep(args.pause)
            except engine.errors as err:
                # The commit's fate is unknown to the client: not acknowledged, so never counted as written.
                failed += 1
                key = engine.describe(err)
                failures[key] = failures.get(key, 0) + 1
                next_id += 1          # never reuse an id whose insert may have landed
                try:
                    if connection is not None:
                        connection.close()
                except engine.errors:
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
