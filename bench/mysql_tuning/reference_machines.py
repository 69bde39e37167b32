#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the tuning engine recommends for the seeds' reference machines, beside what the seeds used.

Run from anywhere: `.venv/bin/python bench/mysql_tuning/reference_machines.py`. It needs the repository's
`.collections` link (made by `make deps`) and nothing but the standard library. For each machine it prints the
facts given to the engine, then one row per setting: the engine's value, the value the seed post used (see
shared/seeds-digest.md sections 6a, 6c and 7; for the lab host, which no seed describes, the server's built-in
default), whether they agree, and why they differ.
"""
from __future__ import absolute_import, division, print_function

import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, ".collections"))

from ansible_collections.dbops.clusters.plugins.module_utils.mysql_tuning import (  # noqa: E402 pylint: disable=wrong-import-position
    TuningInputError,
    parse_size,
    recommend,
)

MACHINES = [
    {
        "title": "seeds' tpcc box: 2x E5-2683 v3 (56 threads), 256 GB, Samsung SM863 SATA SSD, Percona Server 5.7.11 "
                 "(\"What is a big innodb_log_file_size?\") -> percona 8.4.3 here",
        "facts": {"memory_mb": 262144, "cpus": 56, "disk_type": "ssd", "flavor": "percona", "version": "8.4.3",
                  "redo_mb_per_hour": 12288, "rto_minutes": 40, "workload": "oltp", "durability": "durable"},
        "note": "redo_mb_per_hour=12288 is the seeds' '12 GB/hour written'; rto_minutes=40 is what the seeds' 8 GB of "
                "redo costs at ~5 min per GB",
        "variants": [("rto_minutes", 15), ("rto_minutes", 60)],
        "seed": {
            "innodb_buffer_pool_size": ("64G", "the tpcc test held 150 GB of data in a 64 GB pool on purpose, to force "
                                               "flushing; a dedicated server would give InnoDB ~3/4 of RAM"),
            "innodb_redo_log_capacity": ("8G", "seeds: 2G x 2 was ~20% slower, 15G overkill, 8G sufficient; the "
                                               "engine's 8G is the RTO cap (40 min / 5 min per GB)"),
            "innodb_io_capacity": ("5000", "the seeds tuned for the SM863 (~5000 sustained write IOPS); the engine "
                                           "uses the generic SSD figure 2000 - override for a known device"),
            "innodb_io_capacity_max": ("7500", "as above"),
            "innodb_flush_log_at_trx_commit": ("1 (5.7 default)", ""),
            "sync_binlog": ("1 (5.7 default)", ""),
        },
    },
    {
        "title": "seeds' 'Millions of Queries per Second' Percona box: 24 threads, 252 GB, ~33K IOPS storage; OLTP RW "
                 "set (RO set in brackets) -> percona 8.4.3 here",
        "facts": {"memory_mb": 258048, "cpus": 24, "disk_type": "nvme", "flavor": "percona", "version": "8.4.3",
                  "workload": "oltp", "durability": "relaxed"},
        "note": "the post gives no write rate, so the redo log is sized from the pool and capped by the default "
                "rto_minutes=15; durability=relaxed matches its innodb_flush_log_at_trx_commit=2",
        "variants": [],
        "seed": {
            "innodb_buffer_pool_size": ("128G", "benchmark data fit in 128G; the engine gives a dedicated host 3/4"),
            "innodb_buffer_pool_instances": ("128", "MySQL's maximum is 64; the engine takes one per CPU"),
            "innodb_redo_log_capacity": ("8G x 16 = 128G [1G x 3]", "128G means hours of crash recovery; the "
                                                                    "engine caps redo by the RTO (15 min -> 3G)"),
            "innodb_flush_log_at_trx_commit": ("2", ""),
            "innodb_flush_method": ("O_DIRECT_NO_FSYNC", "skips fsync after writes: safe only with power-safe "
                                                         "caches, so the engine keeps O_DIRECT"),
            "innodb_io_capacity": ("18000 [2000]", "the engine's NVMe figure 10000; override for a measured device"),
            "innodb_io_capacity_max": ("36000 [4000]", "as above"),
            "innodb_flush_neighbors": ("0", ""),
            "innodb_thread_concurrency": ("144 [0]", "0 lets InnoDB schedule; 144 only matched the other box's "
                                                     "144 threads"),
            "innodb_read_io_threads": ("[4]", "the engine takes half the CPUs (4-16); with native AIO either works"),
            "innodb_write_io_threads": ("[4]", "the engine takes a quarter of the CPUs (4-16)"),
            "innodb_page_cleaners": ("8 [4]", "one per pool instance, at most 16"),
            "innodb_purge_threads": ("4", ""),
            "max_connections": ("16000 [4000]", "benchmark thread counts; the engine uses 50 per CPU for OLTP"),
            "table_open_cache": ("8000", "4 tables per connection for the engine's 1200 connections"),
            "table_open_cache_instances": ("16", ""),
            "sort_buffer_size": ("32K", "the seeds shrank per-query buffers for point selects; 256K is MySQL's "
                                        "default"),
            "performance_schema": ("OFF", "benchmarks disable it; the seeds also found its default overhead small"),
        },
    },
    {
        "title": "16 GB / 8 vCPU SSD VM (the seeds' GCE nodes in the ProxySQL sharding test) -> percona 8.4.3 here",
        "facts": {"memory_mb": 16384, "cpus": 8, "disk_type": "ssd", "flavor": "percona", "version": "8.4.3",
                  "redo_mb_per_hour": 2048},
        "note": "redo_mb_per_hour=2048 is an assumed moderate OLTP rate; the seeds give only the pool size",
        "variants": [],
        "seed": {
            "innodb_buffer_pool_size": ("10G", "the seeds left 6 GB to the OS on a shared test VM; the engine "
                                               "gives a dedicated 16 GB host 3/4"),
        },
    },
    {
        "title": "1 GiB / 2 CPU lab host, MySQL 9.7.4 (no seed: right column is the server's built-in default)",
        "facts": {"memory_mb": 1024, "cpus": 2, "flavor": "mysql", "version": "9.7.4"},
        "note": "memory is the lab's declared limit; no disk type or write rate is declared, as in the lab",
        "variants": [],
        "seed": {
            "innodb_buffer_pool_size": ("128M", "the default fits any host; the engine gives a dedicated 1 GiB host half"),
            "innodb_redo_log_capacity": ("100M", "the engine's floor is 256M (no write rate declared)"),
            "innodb_flush_log_at_trx_commit": ("1", ""),
            "sync_binlog": ("1", ""),
            "innodb_io_capacity": ("10000", "8.4+ assumes fast storage; the engine assumes an SSD when not told"),
            "innodb_io_capacity_max": ("20000", "as above (the default is 2 x innodb_io_capacity)"),
            "innodb_flush_neighbors": ("0", ""),
            "max_connections": ("151", "151 x 4M would not fit beside the pool in 1 GiB"),
            "thread_cache_size": ("9", "8 + max_connections/100; the engine keeps a quarter of max_connections"),
            "table_open_cache": ("4000", "the engine's floor 2000 is plenty for 64 connections"),
            "table_open_cache_instances": ("16", "one per CPU"),
            "lock_wait_timeout": ("31536000", "one year hides a stuck DDL; pinned to MariaDB's one day"),
            "group_concat_max_len": ("1024", "1K silently truncates; pinned to MariaDB's 1M"),
            "sort_buffer_size": ("256K", ""),
            "performance_schema": ("ON", ""),
        },
    },
    {
        "title": "1 GiB / 2 CPU lab host, MariaDB 11.8.6 (no seed: right column is the server's built-in default)",
        "facts": {"memory_mb": 1024, "cpus": 2, "flavor": "mariadb", "version": "11.8.6"},
        "note": "MariaDB gets no innodb_buffer_pool_instances, innodb_page_cleaners, innodb_thread_concurrency or "
                "innodb_flush_method",
        "variants": [],
        "seed": {
            "innodb_buffer_pool_size": ("128M", "the engine gives a dedicated 1 GiB host half"),
            "innodb_log_file_size": ("96M", "the engine's floor is 256M (no write rate declared)"),
            "sync_binlog": ("0", "MariaDB's default loses binlog events on a crash; durable profile pins 1"),
            "innodb_io_capacity": ("200", "MariaDB assumes a spinning disk; the engine assumes an SSD when not told"),
            "innodb_io_capacity_max": ("2000", "as above"),
            "innodb_flush_neighbors": ("1", "useless on SSD"),
            "binlog_format": ("MIXED", "pinned to ROW, as MySQL"),
            "max_connections": ("151", "151 x 4M would not fit beside the pool in 1 GiB"),
            "thread_cache_size": ("151", "a quarter of max_connections"),
            "table_open_cache": ("2000", ""),
            "max_allowed_packet": ("16M", "pinned to MySQL 8.0's 64M"),
            "sort_buffer_size": ("2M", "pinned to MySQL's 256K, as the connection budget assumes"),
            "lock_wait_timeout": ("86400", ""),
            "group_concat_max_len": ("1M", ""),
            "key_buffer_size": ("128M", "the MyISAM key cache is idle on an InnoDB server"),
            "innodb_max_undo_log_size": ("10M", "pinned to MySQL's 1G"),
            "performance_schema": ("OFF", "on, as the seeds recommend"),
        },
    },
]


def _same(engine, seed):
    """Whether the seed's value (first figure of it) equals the engine's, comparing sizes as sizes."""
    first = seed.split(" ")[0].strip("[]")
    try:
        return parse_size(engine) == parse_size(first)
    except TuningInputError:
        return engine.lower() == first.lower()


def _table(result, seed):
    rows = [("setting", "engine", "seed / default", "", "why they differ")]
    for name, setting in result["settings"].items():
        seed_value, why = seed.get(name, ("-", ""))
        if seed_value == "-":
            mark = ""
        elif _same(setting["value"], seed_value):
            mark, why = "=", ""
        else:
            mark = "!="
        rows.append((name, setting["value"], seed_value, mark, why))
    for name, (seed_value, why) in seed.items():
        if name not in result["settings"]:
            rows.append((name, "(not set)", seed_value, "!=", why or result["omitted"].get(name, "")))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = []
    for index, row in enumerate(rows):
        lines.append("  %-*s | %-*s | %-*s | %-*s | %s" % (widths[0], row[0], widths[1], row[1], widths[2], row[2],
                                                         widths[3], row[3], row[4]))
        if index == 0:
            lines.append("  " + "-+-".join("-" * width for width in widths) + "-+-" + "-" * 15)
    return lines


def main():
    for machine in MACHINES:
        facts = machine["facts"]
        print("== %s" % machine["title"])
        print("   facts: %s" % " ".join("%s=%s" % item for item in sorted(facts.items())))
        print("   note: %s" % machine["note"])
        result = recommend(facts)
        for line in _table(result, machine["seed"]):
            print(line)
        for name, changed in machine["variants"]:
            variant = dict(facts)
            variant[name] = changed
            try:
                setting = recommend(variant)["settings"]["innodb_redo_log_capacity"]
                print("   with %s=%s: innodb_redo_log_capacity = %s (%s)" % (name, changed, setting["value"],
                                                                           setting["reason"]))
            except TuningInputError as err:
                print("   with %s=%s: refused: %s" % (name, changed, err))
        for warning in result["warnings"]:
            print("   warning: %s" % warning)
        print("")
    return 0


if __name__ == "__main__":
    sys.exit(main())
