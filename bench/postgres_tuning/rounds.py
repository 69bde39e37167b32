#!/usr/bin/env python3
"""The measuring half of the PostgreSQL tuning benchmark (bench.yml has set up the hosts, data and the three
configuration files). For each round, each configuration in a rotated order:

  1. stop PostgreSQL, install the configuration as conf.d/50-dbops.conf, empty the WAL archive;
  2. drop the data directory's pages from the page cache (posix_fadvise DONTNEED on every file: the
     per-file form of drop_caches, which is read-only in containers), and show the container's cgroup cache;
  3. start PostgreSQL (a cold shared_buffers), check the settings that differ, pg_prewarm every table and
     index of the benchmark database (each configuration caches what its memory layout holds);
  4. pgbench TPC-B (built in) and the project's TPC-C-like mix, each warm-up then measurement, from the client
     host; checkpoints and WAL written are read around each measurement.

Prints every round, then per workload the median tps of each configuration with its spread (min-max) and the
median of the per-round ratios (ours/stock, pgtune/stock, ours/pgtune: same round, side by side).
A configuration killed for memory (PostgreSQL killed by the memory cgroup, or the server's whole host down) is
recorded as such with podman's and the cgroup's evidence, the host is started again if it went down, and the run
goes on; the summary names the configuration and the rounds it was killed in.
Usage: rounds.py SERVER_CONTAINER CLIENT_CONTAINER SERVER_IP   (env: BENCH_ROUNDS, BENCH_SECONDS, BENCH_WARMUP,
BENCH_CLIENTS, BENCH_WAREHOUSES; BENCH_DRILL_HOST_DOWN=1:pgtune takes the host down in that slot)
"""
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import time

CONFIGS = ("stock", "pgtune", "ours")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
SECONDS = int(os.environ.get("BENCH_SECONDS", "45"))
WARMUP = int(os.environ.get("BENCH_WARMUP", "10"))
CLIENTS = int(os.environ.get("BENCH_CLIENTS", "8"))
WAREHOUSES = int(os.environ.get("BENCH_WAREHOUSES", "4"))
# Off by default: slots ("ROUND:CONFIG", comma-separated) in which the server's host is taken down on purpose.
DRILL_HOST_DOWN = [slot for slot in os.environ.get("BENCH_DRILL_HOST_DOWN", "").split(",") if slot]
SERVICE = "postgresql@17-main"
CONF_DIR = "/etc/postgresql/17/main"
DATA_DIR = "/var/lib/postgresql/17/main"
ARCHIVE_DIR = "/var/lib/postgresql/wal_archive"
SHOWN = ("shared_buffers", "effective_cache_size", "work_mem", "max_wal_size", "checkpoint_timeout",
         "wal_compression", "archive_mode", "max_connections", "random_page_cost", "bgwriter_lru_maxpages")
EVICT = ("import os, sys\n"
         "n = 0\n"
         "for top in sys.argv[1:]:\n"
         "    for root, _, files in os.walk(top):\n"
         "        for name in files:\n"
         "            fd = os.open(os.path.join(root, name), os.O_RDONLY)\n"
         "            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)\n"
         "            os.close(fd)\n"
         "            n += 1\n"
         "print(n)\n")


def sh(container, command, check=True, user=None):
    args = ["podman", "exec"] + (["--user", user] if user else []) + [container, "sh", "-c", command]
    proc = subprocess.run(args, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if check and proc.returncode != 0:
        raise RuntimeError("%s: %s failed (%d): %s" % (container, command[:120], proc.returncode,
                                                       (proc.stderr or proc.stdout).strip()[-800:]))
    return proc


def psql(server, sql, db="postgres"):
    return sh(server, "psql -XAtq -d %s -c \"%s\"" % (db, sql.replace('"', '\\"')), user="postgres").stdout.strip()


def cgroup_file(container, name):
    full_id = subprocess.run(["podman", "inspect", "--format", "{{.Id}}", container], text=True,
                             stdout=subprocess.PIPE, check=True).stdout.strip()
    found = glob.glob("/sys/fs/cgroup/memory/**/*%s*/%s" % (full_id, name), recursive=True)
    return found[0] if found else None


def cgroup_memory(container):
    path = cgroup_file(container, "memory.stat")
    if not path:
        return {}
    stat = dict(line.split() for line in open(path, encoding="utf-8"))
    return {k: int(stat[k]) // (1024 * 1024) for k in ("cache", "rss", "shmem", "hierarchical_memory_limit")
            if k in stat}


def restart(server, config):
    sh(server, "systemctl stop %s && cp %s/bench/%s.conf %s/conf.d/50-dbops.conf && rm -f %s/*"
       % (SERVICE, CONF_DIR, config, CONF_DIR, ARCHIVE_DIR))
    before = cgroup_memory(server)
    files = sh(server, "python3 -c '%s' %s %s" % (EVICT.replace("'", "'\\''"), DATA_DIR, ARCHIVE_DIR)).stdout.strip()
    after = cgroup_memory(server)
    sh(server, "systemctl start %s && for i in $(seq 60); do pg_isready -q && exit 0; sleep 1; done; exit 1" % SERVICE)
    settings = psql(server, "SELECT string_agg(name || '=' || current_setting(name), ' ' ORDER BY name) "
                            "FROM pg_settings WHERE name IN (%s)" % ", ".join("'%s'" % s for s in SHOWN))
    started = time.monotonic()
    psql(server, "SELECT sum(pg_prewarm(c.oid)) FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace "
                 "AND c.relkind IN ('r', 'i')", db="bench")
    return {"evicted_files": int(files), "cache_mb_before": before.get("cache"), "cache_mb_after": after.get("cache"),
            "settings": settings, "prewarm_s": round(time.monotonic() - started, 1)}


def counters(server):
    row = psql(server, "SELECT num_timed, num_requested, pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint "
                       "FROM pg_stat_checkpointer")
    timed, requested, lsn = (int(x) for x in row.split("|"))
    return timed, requested, lsn


def pgbench(client, server_ip, workload, seconds):
    base = ("PGPASSFILE=/root/.pgpass /usr/lib/postgresql/17/bin/pgbench -h %s -U bench -n -M prepared -c %d -j 2 -T %d "
            % (server_ip, CLIENTS, seconds))
    if workload == "tpcb":
        command = base + "bench"
    else:
        command = base + ("--max-tries=10 -D warehouses=%d -f /root/tpcc/new_order.sql@45 -f /root/tpcc/payment.sql@43 "
                          "-f /root/tpcc/order_status.sql@12 bench" % WAREHOUSES)
    proc = sh(client, command, check=False)
    match = re.search(r"tps = ([\d.]+) \(without initial connection time\)", proc.stdout)
    if proc.returncode != 0 or not match:
        return None, (proc.stderr or proc.stdout).strip()[-400:]
    failed = re.search(r"number of failed transactions: (\d+)", proc.stdout)
    latency = re.search(r"latency average = ([\d.]+) ms", proc.stdout)
    return float(match.group(1)), "latency %s ms, failed %s" % (latency.group(1) if latency else "?",
                                                               failed.group(1) if failed else "0")


def measure(server, client, server_ip, workload):
    pgbench(client, server_ip, workload, WARMUP)
    timed0, requested0, lsn0 = counters(server)
    tps, detail = pgbench(client, server_ip, workload, SECONDS)
    if tps is None:
        raise RuntimeError("pgbench %s failed: %s" % (workload, detail))
    timed1, requested1, lsn1 = counters(server)
    return {"tps": tps, "detail": detail, "checkpoints": (timed1 - timed0) + (requested1 - requested0),
            "wal_mb": round((lsn1 - lsn0) / 1048576.0)}


def container_state(container):
    """podman's State of a container ({} when podman cannot say): Running, OOMKilled, ExitCode, Status."""
    proc = subprocess.run(["podman", "container", "inspect", "--format", "{{json .State}}", container], text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        return json.loads(proc.stdout) if proc.returncode == 0 else {}
    except ValueError:
        return {}


def oom_kills(container):
    """The memory cgroup's oom_kill count read from the controller (None when the cgroup is gone or unreadable)."""
    try:
        path = cgroup_file(container, "memory.oom_control")
        if path:
            with open(path, encoding="utf-8") as handle:
                return int(next(line.split()[1] for line in handle if line.startswith("oom_kill ")))
    except (OSError, StopIteration, ValueError, subprocess.CalledProcessError):
        pass
    return None


def host_up_again():
    """Start the benchmark hosts again with the lab tool (podman start, then wait for systemd), from the
    repository's root, as run.sh brought them up."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    subprocess.run([sys.executable, os.path.join(root, "lab", "labctl.py"), "--topology",
                    os.path.join(root, "bench", "postgres_tuning", "topology.yml"), "up"], cwd=root, check=True,
                   stdout=subprocess.DEVNULL)


def run_slot(server, client, server_ip, round_no, config):
    """One configuration in one round. A configuration killed for memory is a result, not the end of the run:
    {"killed": "host down"} when the server's host went down (podman refuses exec sessions on a container that
    stopped: it is started again, and PostgreSQL in it), {"killed": "postgres"} when the memory cgroup killed in
    the server during the turn, {"failed": ...} otherwise; the evidence is kept with it."""
    result = {"round": round_no, "config": config}
    before = oom_kills(server)
    try:
        result.update(restart(server, config))
        if "%d:%s" % (round_no, config) in DRILL_HOST_DOWN:
            # As the memory cgroup does when it picks PID 1: checks the recovery below without waiting for a
            # configuration to take the host down by itself.
            subprocess.run(["podman", "kill", "--signal", "KILL", server], check=True, stdout=subprocess.DEVNULL)
        for workload in ("tpcb", "tpcc"):
            result[workload] = measure(server, client, server_ip, workload)
        return result
    except (RuntimeError, subprocess.CalledProcessError, ValueError) as error:
        result["error"] = str(error)[-400:]
    state = container_state(server)
    after = oom_kills(server)
    result["oom_kills"] = after - before if before is not None and after is not None else None
    if not state.get("Running"):
        result["killed"] = "host down"
        result["host"] = {"oom_killed": state.get("OOMKilled"), "exit_code": state.get("ExitCode"),
                          "status": state.get("Status", "unknown")}
        host_up_again()
        # Back on the stock configuration: the one in place may be what took the host down.
        sh(server, "cp %s/bench/stock.conf %s/conf.d/50-dbops.conf && systemctl restart %s && for i in $(seq 60); "
           "do pg_isready -q && exit 0; sleep 1; done; exit 1" % (CONF_DIR, CONF_DIR, SERVICE))
    elif result["oom_kills"]:
        result["killed"] = "postgres"
    else:
        result["failed"] = True
    return result


def outcome(row):
    return "killed for memory (host down)" if row.get("killed") == "host down" else \
        "killed for memory" if row.get("killed") else "failed" if row.get("failed") else "ran"


def tps(row, workload):
    return row[workload]["tps"] if outcome(row) == "ran" else None


def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return "n/a"
    return "%.0f-%.0f" % (min(values), max(values))


def summary(rows, rounds):
    """The table: per workload each configuration's median tps and spread over the rounds it ran in, the median
    of the per-round ratios where both ran, and every turn a configuration was killed for memory or failed."""
    lines = ["%-6s %-8s %14s %14s %14s" % ("", "", *CONFIGS)]
    killed = {c: sorted({r["round"] for r in rows if r["config"] == c and r.get("killed")}) for c in CONFIGS}
    for workload in ("tpcb", "tpcc"):
        by = {c: [tps(r, workload) for r in rows if r["config"] == c] for c in CONFIGS}
        medians = {c: statistics.median([v for v in by[c] if v is not None]) if any(v is not None for v in by[c])
                   else None for c in CONFIGS}
        lines.append("%-6s %-8s %14s %14s %14s" % (workload, "median", *("%.0f" % medians[c] if medians[c] else "n/a"
                                                                      for c in CONFIGS)))
        lines.append("%-6s %-8s %14s %14s %14s" % ("", "min-max", *(spread(by[c]) for c in CONFIGS)))
        if any(killed.values()):
            lines.append("%-6s %-8s %14s %14s %14s" % ("", "killed", *("in %d of %d" % (len(killed[c]), rounds)
                                                                      for c in CONFIGS)))
        for num, den in (("ours", "stock"), ("pgtune", "stock"), ("ours", "pgtune")):
            ratios = []
            for round_no in range(1, rounds + 1):
                a = [tps(r, workload) for r in rows if r["round"] == round_no and r["config"] == num]
                b = [tps(r, workload) for r in rows if r["round"] == round_no and r["config"] == den]
                if a and b and a[0] and b[0]:
                    ratios.append(a[0] / b[0])
            if ratios:
                lines.append("       %-13s median %.2fx  per round %s" % (
                    "%s/%s" % (num, den), statistics.median(ratios), " ".join("%.2f" % x for x in ratios)))
    if any(killed.values()):
        lines.append("")
        lines.append("Killed for memory (left out of the medians; the ratios come from the rounds that ran): "
                     + "; ".join("%s in %d of %d rounds" % (c, len(killed[c]), rounds) for c in CONFIGS if killed[c]))
    for row in rows:
        what = outcome(row)
        if what == "ran":
            continue
        count = row.get("oom_kills")
        evidence = "cgroup oom_kill count: %s" % (count if count is not None else "unreadable (the host went down)")
        if row.get("host"):
            evidence = "podman: OOMKilled=%s, exit code %s, status %s; %s" % (
                row["host"]["oom_killed"], row["host"]["exit_code"], row["host"]["status"], evidence)
        lines.append("  round %d %s: %s%s; %s; %s" % (
            row["round"], row["config"], what,
            ": the benchmark host went down and was started again" if row.get("killed") == "host down" else "",
            evidence, " ".join(row.get("error", "").split())[-200:]))
    return lines


def main(server, client, server_ip):
    started = time.time()
    rows = []
    print("rounds %d, %d s measured after %d s warm-up per workload, %d clients, TPC-C-like %d warehouses"
          % (ROUNDS, SECONDS, WARMUP, CLIENTS, WAREHOUSES), flush=True)
    print("database size: %s" % psql(server, "SELECT pg_size_pretty(pg_database_size('bench'))"), flush=True)
    for round_no in range(ROUNDS):
        order = CONFIGS[round_no % 3:] + CONFIGS[:round_no % 3]
        for config in order:
            result = run_slot(server, client, server_ip, round_no + 1, config)
            rows.append(result)
            if outcome(result) != "ran":
                print("round %d %-6s %s: %s" % (result["round"], config, outcome(result), result.get("error", "")),
                      flush=True)
                continue
            print("round %d %-6s tpcb %8s tps (%s; %d checkpoints, %d MB WAL)  tpcc %8s tps (%s; %d checkpoints, "
                  "%d MB WAL)  [evicted %d files: cgroup cache %s -> %s MB; prewarm %.1f s]"
                  % (result["round"], config, result["tpcb"]["tps"], result["tpcb"]["detail"],
                     result["tpcb"]["checkpoints"], result["tpcb"]["wal_mb"], result["tpcc"]["tps"],
                     result["tpcc"]["detail"], result["tpcc"]["checkpoints"], result["tpcc"]["wal_mb"],
                     result["evicted_files"], result["cache_mb_before"], result["cache_mb_after"],
                     result["prewarm_s"]), flush=True)
            if round_no == 0:
                print("    settings: %s" % result["settings"], flush=True)
    limit = cgroup_file(server, "memory.max_usage_in_bytes")
    failcnt = cgroup_file(server, "memory.failcnt")
    print("\nserver cgroup: peak usage %s MB (limit 2048 MB: the page cache was reclaimed), failed charges %s" % (
        int(open(limit).read()) // 1048576 if limit else "?", open(failcnt).read().strip() if failcnt else "?"))
    print("\n" + "\n".join(summary(rows, ROUNDS)))
    print("\ntotal %.1f min" % ((time.time() - started) / 60))
    with open(os.environ.get("BENCH_JSON", "/tmp/bench-postgres.json"), "w", encoding="utf-8") as out:
        json.dump(rows, out, indent=1)


if __name__ == "__main__":
    main(*sys.argv[1:4])
