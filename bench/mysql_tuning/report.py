#!/usr/bin/env python3
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The MySQL tuning benchmark's report: medians, spreads and ratios from bench.yml's raw sysbench outputs.

Usage: report.py RAW.json [--record results.md] [--elapsed SECONDS]. Prints the report; with --record it also
appends it, with the date, the machine and the number of rounds, to the results file.
"""
from __future__ import absolute_import, division, print_function

import argparse
import datetime
import json
import os
import platform
import re
import statistics
import sys

CONFIGS = [
    ("stock", "MySQL stock"),
    ("dedicated", "dedicated+container_aware"),
    ("ours", "ours (percona_server role)"),
]
METRICS = [("tps", "transactions/s", True), ("qps", "queries/s", True), ("p99", "p99 latency ms", False)]
SETTING_NAMES = ["innodb_buffer_pool_size", "innodb_redo_log_capacity", "innodb_dedicated_server",
                 "innodb_io_capacity", "innodb_flush_method", "max_connections", "sync_binlog",
                 "innodb_flush_log_at_trx_commit", "temptable_max_ram", "container_aware", "version"]


def parse_sysbench(output):
    """tps, qps and p99 latency (ms) from a `sysbench ... run` output; errors if one is missing."""
    found = {}
    for key, pattern in (("tps", r"transactions:\s+\d+\s+\(([\d.]+) per sec"),
                         ("qps", r"queries:\s+\d+\s+\(([\d.]+) per sec"),
                         ("p99", r"99th percentile:\s+([\d.]+)")):
        match = re.search(pattern, output)
        if not match:
            raise ValueError("sysbench output without %s:\n%s" % (key, output[-2000:]))
        found[key] = float(match.group(1))
    return found


def size(value):
    value = int(value)
    for unit, factor in (("G", 1 << 30), ("M", 1 << 20)):
        if value >= factor and value % (factor // 16) == 0:
            return "%g%s" % (value / factor, unit)
    for unit, factor in ((" GiB", 1 << 30), (" MiB", 1 << 20)):
        if value >= factor:
            return "%.1f%s" % (value / factor, unit)
    return str(value)


def machine():
    cpu = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            cpu = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), "")
        with open("/proc/meminfo", encoding="utf-8") as handle:
            mem_kb = int(next(line.split()[1] for line in handle if line.startswith("MemTotal")))
    except (OSError, StopIteration, ValueError):
        mem_kb = 0
    return "%s, %s, %d cores, %.0f GiB RAM" % (platform.node(), cpu or "unknown CPU", os.cpu_count() or 0,
                                               mem_kb / 1048576.0)


def outcome(run):
    """What became of one measurement: "ran", "host down" (the benchmark host itself went down during the
    configuration's turn, run.yml), "killed for memory" (sysbench failed while the memory cgroup killed in
    that turn; -1: the count was killed too) or "failed"."""
    if run.get("status") == "host_down":
        return "host down"
    if int(run.get("rc", 0)) == 0:
        return "ran"
    if int(run.get("oom_kills") or 0) != 0:
        return "killed for memory"
    return "failed"


def host_evidence(run):
    """What podman and the memory cgroup said of a host that went down."""
    host = run.get("host") or {}
    kills = int(run.get("oom_kills") if run.get("oom_kills") not in (None, "") else -1)
    return ("podman: OOMKilled=%s, exit code %s, status %s, events %s; cgroup oom_kill count: %s"
            % (host.get("oom_killed"), host.get("exit_code"), host.get("status"),
               ",".join(host.get("events") or []) or "none",
               kills if kills >= 0 else "unreadable (the host went down)"))


def killed_slots(raw):
    """{config: {round: "host down" | "killed for memory"}}: the turns a configuration was killed for memory in."""
    killed = {}
    for run in raw["runs"]:
        what = outcome(run)
        if what in ("host down", "killed for memory"):
            slot = killed.setdefault(run["config"], {})
            if slot.get(int(run["round"])) != "host down":
                slot[int(run["round"])] = what
    return killed


def report(raw, elapsed=None):
    runs, failures = [], []
    for run in raw["runs"]:
        if outcome(run) != "ran":
            failures.append(run)
            continue
        runs.append(dict(run, round=int(run["round"]), **parse_sysbench(run["output"])))
    rounds = sorted({int(run["round"]) for run in raw["runs"]})
    killed = killed_slots(raw)
    lines = []
    seen = raw.get("memory_seen") or []
    limit = int(seen[0]) if seen and seen[0].isdigit() else None
    lines.append("MySQL on a host with a %s memory limit (declared to the role: %s MiB; the container's /proc/meminfo "
                 "shows %s; %s CPUs); sysbench from a second host, %s tables x %s rows (%s of data and indexes), %s threads; "
                 "%d rounds, configurations alternated (order rotated each round), server restarted into each, "
                 "sysbench prewarm + %s s warm-up, then %s s per workload%s."
                 % (size(limit) if limit and limit < 1 << 50 else "no", raw.get("declared_memory_mb"),
                    size(seen[1]) if len(seen) > 1 else "?", seen[2] if len(seen) > 2 else "?",
                    raw["tables"], raw["table_size"], size(raw["data_bytes"]) if raw.get("data_bytes") else "?",
                    raw["threads"], len(rounds), raw["warmup_seconds"], raw["seconds"],
                    "; whole run %d min" % round(float(elapsed) / 60) if elapsed else ""))
    lines.append("")
    lines.append("What each configuration runs with (SELECT @@... after its restart):")
    settings = {}
    for key, _label in CONFIGS:
        values = sorted({run["settings"] for run in raw["runs"] if run["config"] == key and run.get("settings")})
        settings[key] = values
        for value in values:
            fields = value.split("\t")
            shown = ["%s=%s" % (name, size(field) if name in SETTING_NAMES[:2] else field)
                     for name, field in zip(SETTING_NAMES, fields)]
            lines.append("  %-10s %s" % (key, " ".join(shown)))
    def cell(series, key):
        shown = "%.1f (%.1f-%.1f)" % (statistics.median(series), min(series), max(series)) if series else "-"
        if len(series) < len(rounds):
            shown += " [%d of %d]" % (len(series), len(rounds))
        if killed.get(key):
            shown += " killed for memory in %d" % len(killed[key])
        return shown

    for workload in raw["workloads"]:
        lines.append("")
        lines.append("%s: median (min-max) over %d rounds" % (workload, len(rounds)))
        # A killed configuration's cells say so after the median: its column widens to keep the table aligned.
        widths = {key: max([26] + [len(cell([run[metric] for run in runs if run["config"] == key
                                             and run["workload"] == workload], key)) for metric, _l, _h in METRICS])
                  for key, _label in CONFIGS}
        header = "  %-16s" % "metric" + "".join(" %-*s" % (widths[key], label) for key, label in CONFIGS)
        header += " %-25s %-25s %-25s" % ("ours/stock", "ours/dedicated", "dedicated/stock")
        lines.append(header)
        for metric, label, _higher_better in METRICS:
            values = {key: [run[metric] for run in runs if run["config"] == key and run["workload"] == workload]
                      for key, _label in CONFIGS}
            row = "  %-16s" % label
            for key, _label in CONFIGS:
                row += " %-*s" % (widths[key], cell(values[key], key))
            for top, bottom in (("ours", "stock"), ("ours", "dedicated"), ("dedicated", "stock")):
                per_round = []
                for number in rounds:
                    a = [run[metric] for run in runs
                         if run["config"] == top and run["workload"] == workload and run["round"] == number]
                    b = [run[metric] for run in runs
                         if run["config"] == bottom and run["workload"] == workload and run["round"] == number]
                    if a and b and b[0]:
                        per_round.append(a[0] / b[0])
                if values[top] and values[bottom] and per_round:
                    ratio = statistics.median(values[top]) / statistics.median(values[bottom])
                    row += " %-25s" % ("%.2fx (rounds %.2f-%.2f)" % (ratio, min(per_round), max(per_round)))
                else:
                    row += " %-25s" % "-"
            lines.append(row)
    if killed:
        lines.append("")
        lines.append("Killed for memory (left out of the medians; the ratios come from the rounds that ran): "
                     + "; ".join("%s in %d of %d rounds" % (config, len(killed[config]), len(rounds))
                                 for config in sorted(killed)))
        for config in sorted(killed):
            for number in sorted(killed[config]):
                run = next(run for run in raw["runs"] if run["config"] == config and int(run["round"]) == number
                           and outcome(run) == killed[config][number])
                if killed[config][number] == "host down":
                    lines.append("  round %d %s: killed for memory (host down): the benchmark host went down and "
                                 "was started again; %s" % (number, config, host_evidence(run)))
                else:
                    count = int(run["oom_kills"])
                    lines.append("  round %d %s: killed for memory (mysqld): sysbench rc %s, cgroup oom_kill count: %s"
                                 % (number, config, run["rc"],
                                    count if count >= 0 else "unknown, the count was killed too"))
    others = [run for run in failures if outcome(run) == "failed"]
    if others:
        lines.append("")
        lines.append("Failed measurements (left out of the medians):")
        for run in others:
            lines.append("  round %s %s %s: sysbench rc %s, no OOM kill in the memory cgroup during this "
                         "configuration's turn; %s" % (run["round"], run["config"], run["workload"], run["rc"],
                                                        " ".join(run.get("error", "").split())[-200:]))
    lines.append("")
    lines.append("Ratios are of the medians; the bracket gives the lowest and highest ratio within one round. For "
                 "p99 latency lower is better (a ratio below 1 means faster).")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("raw")
    parser.add_argument("--record", help="append the report to this markdown file")
    parser.add_argument("--elapsed", type=float, help="the whole run's duration in seconds")
    args = parser.parse_args(argv)
    with open(args.raw, encoding="utf-8") as handle:
        raw = json.load(handle)
    lines = report(raw, args.elapsed)
    print("\n".join(lines))
    if args.record:
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        with open(args.record, "a", encoding="utf-8") as handle:
            handle.write("\n## %s, %s, %d rounds\n\n```\n%s\n```\n"
                         % (stamp, machine(), len({int(run["round"]) for run in raw["runs"]}), "\n".join(lines)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
