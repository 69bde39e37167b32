#!/usr/bin/env python3
"""A client that writes keys to etcd continuously, as Patroni would, and remembers which writes were acknowledged.

    writer_etcd.py --endpoints https://a:2379,https://b:2379 --ca F --cert F --key F --user U --password-file F
                   --prefix /service/drill/ --record DIR [--seconds 600] [--pause 0.05]
It logs in as the user (the password read from a 0600 file), puts PREFIX<id> = <id> through one member at a time
and moves to the next member when a write fails (as Patroni's etcd3 client does). Every acknowledged id goes to
DIR/acks.log as "id epoch endpoint" at once; every failed write to DIR/failures.log as "epoch endpoint error".
It stops when DIR/stop exists or after --seconds, and writes DIR/writer.json (acks, failures, the longest gap
between two acknowledged writes).
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".collections"))
from ansible_collections.dbops.clusters.plugins.module_utils.etcd import Client, EtcdError, b64  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    for name in ("--endpoints", "--ca", "--cert", "--key", "--user", "--password-file", "--prefix", "--record"):
        parser.add_argument(name, required=True)
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--pause", type=float, default=0.05)
    parser.add_argument("--timeout", type=float, default=3)
    args = parser.parse_args()
    with open(args.password_file, encoding="utf-8") as handle:
        password = handle.read().strip()
    endpoints = args.endpoints.split(",")
    clients = dict((e, Client(e, args.ca, args.cert, args.key, timeout=args.timeout, user=args.user,
                              password=password)) for e in endpoints)
    os.makedirs(args.record, exist_ok=True)
    acks = open(os.path.join(args.record, "acks.log"), "a", encoding="utf-8")
    failures = open(os.path.join(args.record, "failures.log"), "a", encoding="utf-8")
    stop = os.path.join(args.record, "stop")
    start = last_ack = time.time()
    current, next_id, acked, failed, max_gap = 0, 1, 0, 0, 0.0
    while not os.path.exists(stop) and time.time() - start < args.seconds:
        endpoint = endpoints[current % len(endpoints)]
        try:
            clients[endpoint].call("/v3/kv/put", {"key": b64("%s%d" % (args.prefix, next_id)),
                                                  "value": b64(str(next_id))})
        except EtcdError as err:
            failed += 1
            failures.write("%.3f %s %s\n" % (time.time(), endpoint, str(err).replace("\n", " ")))
            failures.flush()
            clients[endpoint].token = None
            current += 1
            time.sleep(0.1)
            continue
        now = time.time()
        max_gap = max(max_gap, now - last_ack)
        last_ack = now
        acks.write("%d %.3f %s\n" % (next_id, now, endpoint))
        acks.flush()
        acked += 1
        next_id += 1
        time.sleep(args.pause)
    with open(os.path.join(args.record, "writer.json"), "w", encoding="utf-8") as handle:
        json.dump({"acked": acked, "failed": failed, "max_gap_seconds": round(max_gap, 3),
                   "seconds": round(time.time() - start, 1), "last_id": next_id - 1}, handle)


if __name__ == "__main__":
    main()
