#!/usr/bin/env python3
"""A MongoDB client that inserts documents continuously with w: majority and records exactly which inserts
were acknowledged, while a sampler records what every member says about itself.

It connects as an application does (a replica-set URI seeded with the members), so it always writes to the
current primary. Retryable writes are off: an insert whose outcome the client does not know is counted as
failed and its id is never reused, so an acknowledged id is one the server confirmed once.

    writer_mongo.py --hosts 10.0.0.1:27017,10.0.0.2:27017 --replica-set rs0 --user admin --password-file F \
                    --ack-file acks.txt --summary writer.json --sample-file samples.jsonl [--seconds 300] \
                    [--stop-file F]
The password is read from a file (0600), never from the command line.

Samples (one JSON line per member every --sample-interval seconds): {"t", "host", "up", "primary",
"secondary", "optime": [term, seconds, increment]}; a member that does not answer within 0.5 s is up=false.
"""
import argparse
import json
import os
import threading
import time

import pymongo
from pymongo.errors import PyMongoError


def tls_options(ca_file):
    """TLS with the collection's CA (the members' names checked), or nothing when no CA file is given."""
    return dict(tls=True, tlsCAFile=ca_file) if ca_file else {}


def sample(hosts, path, interval, stop, ca_file):
    clients = dict((h, pymongo.MongoClient(h, directConnection=True, serverSelectionTimeoutMS=500,
                                           connectTimeoutMS=500, socketTimeoutMS=500, **tls_options(ca_file)))
                   for h in hosts)
    with open(path, "a", encoding="utf-8") as out:
        while not stop.is_set():
            for host, client in clients.items():
                record = {"t": round(time.time(), 3), "host": host, "up": False}
                try:
                    seen = client.admin.command("hello")     # needs no login
                    optime = seen.get("lastWrite", {}).get("opTime", {})
                    ts = optime.get("ts")
                    record.update(up=True, primary=bool(seen.get("isWritablePrimary")),
                                  secondary=bool(seen.get("secondary")),
                                  optime=[int(optime.get("t", -1)), getattr(ts, "time", 0), getattr(ts, "inc", 0)])
                except PyMongoError:
                    pass
                out.write(json.dumps(record) + "\n")
            out.flush()
            stop.wait(interval)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hosts", required=True)
    parser.add_argument("--replica-set", required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--password-file", required=True)
    parser.add_argument("--ack-file", required=True)
    parser.add_argument("--summary", required=True)
    parser.add_argument("--sample-file", required=True)
    parser.add_argument("--sample-interval", type=float, default=0.2)
    parser.add_argument("--seconds", type=float, default=300)
    parser.add_argument("--stop-file")
    parser.add_argument("--pause", type=float, default=0.02)
    parser.add_argument("--tls-ca-file", help="connect over TLS, checking the members against this CA")
    args = parser.parse_args()
    with open(args.password_file, encoding="utf-8") as handle:
        password = handle.read().strip()
    hosts = args.hosts.split(",")
    stop = threading.Event()
    sampler = threading.Thread(target=sample, args=(hosts, args.sample_file, args.sample_interval, stop,
                                                        args.tls_ca_file), daemon=True)
    sampler.start()

    client = pymongo.MongoClient(hosts, replicaSet=args.replica_set, username=args.user, password=password,
                                 authSource="admin", retryWrites=False, serverSelectionTimeoutMS=2000,
                                 connectTimeoutMS=2000, socketTimeoutMS=15000, **tls_options(args.tls_ca_file))
    collection = client.drill.get_collection("acks", write_concern=pymongo.WriteConcern(w="majority",
                                                                                        wtimeout=10000))
    acked, failed, failures = 0, 0, {}
    next_id, gap, gap_ended, last_ack = 1, 0.0, None, None
    primaries = []
    started = time.time()
    with open(args.ack_file, "a", encoding="utf-8") as acks:
        while time.time() - started < args.seconds:
            if args.stop_file and os.path.exists(args.stop_file):
                break
            try:
                collection.insert_one({"_id": next_id, "at": time.time()})
                now = time.time()
                acks.write("%d\n" % next_id)
                acks.flush()
                primary = "%s:%s" % client.primary if client.primary else None
                if not primaries or primaries[-1] != primary:
                    primaries.append(primary)
                if last_ack is not None and now - last_ack > gap:
                    gap, gap_ended = now - last_ack, next_id
                last_ack = now
                acked += 1
            except PyMongoError as err:
                # Not acknowledged: the insert may or may not have landed, so it never counts as written.
                failed += 1
                key = "%s: %s" % (type(err).__name__, str(err).splitlines()[0][:80])
                failures[key] = failures.get(key, 0) + 1
                time.sleep(0.1)
            next_id += 1     # never reuse an id, acknowledged or not
            time.sleep(args.pause)
    stop.set()
    sampler.join(5)
    summary = {"acked": acked, "failed_inserts": failed, "failures": failures, "primaries_written": primaries,
               "write_gap_seconds": round(gap, 2), "gap_ended_at_id": gap_ended,
               "seconds": round(time.time() - started, 1)}
    with open(args.summary, "w", encoding="utf-8") as handle:
        json.dump(summary, handle, indent=2)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
