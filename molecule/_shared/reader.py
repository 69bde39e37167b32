#!/usr/bin/env python3
"""A client that runs read transactions through a proxy continuously and counts every one that failed.

Used by drills of a planned restart behind ProxySQL. Each transaction (START TRANSACTION, the serving server's
name, SELECT SLEEP(--hold), the name again, COMMIT) is bound to one backend connection for its whole length, so
ProxySQL cannot run it again elsewhere when that server stops under it: the client sees the error. Single SELECTs
would not do: ProxySQL re-runs a failed one on another reader, and a restart without a drain would look clean.

    reader.py --host 10.0.0.31 --port 6033 --user probe --password-file F --summary summary.json \
              [--threads 4] [--hold 0.5] [--seconds 600] [--stop-file F] [--log transactions.log]

The serving server's name is read from performance_schema.global_variables, not @@hostname: a statement naming
a variable stops ProxySQL multiplexing the session, which then stays on one backend and no drain could move it.
--log records one line per transaction: "start end thread server ok" or "start end thread server error: ...".
The summary gives the counts, the failures by error and, per server, how many transactions it served.
The password is read from a file (0600), never from the command line.
"""
import argparse
import json
import os
import threading
import time

import pymysql

SERVER_SQL = "SELECT VARIABLE_VALUE FROM performance_schema.global_variables WHERE VARIABLE_NAME = 'hostname'"


def connect(args, password):
    return pymysql.connect(host=args.host, port=args.port, user=args.user, password=password, autocommit=True,
                           connect_timeout=5, read_timeout=30, write_timeout=30)


def one_transaction(connection, hold):
    """Runs one read transaction; returns the server that served it (the same at both ends, or an error)."""
    with connection.cursor() as cursor:
        cursor.execute("START TRANSACTION READ ONLY")
        cursor.execute(SERVER_SQL)
        first = cursor.fetchone()[0]
        cursor.execute("SELECT SLEEP(%s)", (hold,))
        cursor.execute(SERVER_SQL)
        last = cursor.fetchone()[0]
        cursor.execute("COMMIT")
    if first != last:
        raise RuntimeError("one transaction served by %s then %s" % (first, last))
    return first


def run(index, args, password, stop, totals, lock, log):
    connection = None
    while not stop.is_set():
        started = time.time()
        server = "-"
        try:
            if connection is None:
                connection = connect(args, password)
            server = one_transaction(connection, args.hold)
            outcome = "ok"
        except (pymysql.err.MySQLError, RuntimeError) as err:
            outcome = "error: %s" % (err.args[0] if err.args else type(err).__name__)
            try:
                if connection is not None:
                    connection.close()
            except Exception:  # pylint: disable=broad-except  # the connection is already broken
                pass
            connection = None
        ended = time.time()
        with lock:
            if outcome == "ok":
                totals["ok"] += 1
                totals["served"][server] = totals["served"].get(server, 0) + 1
            else:
                totals["failed"] += 1
                totals["failures"][outcome] = totals["failures"].get(outcome, 0) + 1
            if log is not None:
                log.write("%.3f %.3f %d %s %s\n" % (started, ended, index, server, outcome))
                log.flush()
        if outcome != "ok":
            stop.wait(0.2)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, default=6033)
    parser.add_argument("--user", required=True)
    parser.add_argument("--password-file", required=True)
    parser.add_argument("--summary", required=True)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--hold", type=float, default=0.5, help="seconds each transaction stays open")
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--stop-file")
    parser.add_argument("--log")
    args = parser.parse_args()
    with open(args.password_file, encoding="utf-8") as handle:
        password = handle.read().strip()

    totals = {"ok": 0, "failed": 0, "failures": {}, "served": {}}
    lock, stop = threading.Lock(), threading.Event()
    log = open(args.log, "a", encoding="utf-8") if args.log else None
    started = time.time()
    threads = [threading.Thread(target=run, args=(index, args, password, stop, totals, lock, log))
               for index in range(args.threads)]
    for thread in threads:
        thread.daemon = True
        thread.start()
    while time.time() - started < args.seconds and not (args.stop_file and os.path.exists(args.stop_file)):
        time.sleep(0.2)
    stop.set()
    for thread in threads:
        thread.join(args.hold + 35)
    if log is not None:
        log.close()
    summary = dict(totals, seconds=round(time.time() - started, 1), started=round(started, 3))
    with open(args.summary, "w", encoding="utf-8") as handle:
        json.dump(summary, handle, indent=2)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
