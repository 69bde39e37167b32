#!/usr/bin/env python3
"""pgtune's published formulas, implemented here from their description (not pgtune's code), for the benchmark's
second configuration. Source: PGTune by Alexey Vasiliev, https://pgtune.leopard.in.ua, whose rules are public in
the le0pard/pgtune repository (src/features/configuration/configurationSlice.js):

  max_connections            the user's number (defaults: web 200, oltp 300, dw 40, desktop 20, mixed 100)
  shared_buffers             RAM/4 (desktop RAM/16)
  effective_cache_size       RAM*3/4 (desktop RAM/4)
  maintenance_work_mem       RAM/16 (dw RAM/8), at most 2GB
  checkpoint_completion_target 0.9
  wal_buffers                3% of shared_buffers, at most 16MB (rounded up to 16MB above 14MB), at least 32kB
  default_statistics_target  100 (dw 500)
  random_page_cost           hdd 4, ssd/san 1.1
  effective_io_concurrency   hdd 2, ssd 200, san 300 (Linux)
  work_mem                   (RAM - shared_buffers) / ((max_connections + max_worker_processes) * 3),
                             halved for dw and mixed, /6 for desktop, at least 64kB; max_worker_processes is the
                             CPU count when parallel settings are emitted, else PostgreSQL's default 8
  min_wal_size/max_wal_size  web 1GB/4GB, oltp 2GB/8GB, dw 4GB/16GB, desktop 100MB/2GB, mixed 1GB/4GB
  huge_pages                 try from 32GB of RAM, else off
  parallel settings          only from 4 CPUs: max_worker_processes = CPUs, per gather ceil(CPUs/2) (at most 4
                             except dw), max_parallel_workers = CPUs, maintenance workers ceil(CPUs/2) at most 4

Usage: pgtune.py MEMORY_MB CPUS CONNECTIONS [oltp|web|dw|mixed|desktop] [ssd|hdd|san]  -> JSON {setting: value}
"""
import json
import math
import sys


def kb(value_kb):
    """kB -> PostgreSQL's spelling, as pgtune prints it (GB, MB or kB when exact)."""
    value_kb = int(value_kb)
    if value_kb % (1024 * 1024) == 0:
        return "%dGB" % (value_kb // (1024 * 1024))
    if value_kb % 1024 == 0:
        return "%dMB" % (value_kb // 1024)
    return "%dkB" % value_kb


def pgtune(memory_mb, cpus, connections=None, db_type="oltp", disk="ssd"):
    ram_kb = memory_mb * 1024
    connections = connections or {"web": 200, "oltp": 300, "dw": 40, "desktop": 20, "mixed": 100}[db_type]
    shared = ram_kb // 16 if db_type == "desktop" else ram_kb // 4
    cache = ram_kb // 4 if db_type == "desktop" else ram_kb * 3 // 4
    maintenance = min(ram_kb // 8 if db_type == "dw" else ram_kb // 16, 2 * 1024 * 1024)
    wal_buffers = min(3 * shared // 100, 16 * 1024)
    if 14 * 1024 < wal_buffers < 16 * 1024:
        wal_buffers = 16 * 1024
    wal_buffers = max(32, wal_buffers)
    parallel = {}
    if cpus >= 4:
        per_gather = math.ceil(cpus / 2)
        if db_type != "dw":
            per_gather = min(per_gather, 4)
        parallel = {"max_worker_processes": str(cpus), "max_parallel_workers_per_gather": str(per_gather),
                    "max_parallel_workers": str(cpus),
                    "max_parallel_maintenance_workers": str(min(4, math.ceil(cpus / 2)))}
    workers = cpus if parallel else 8
    work_mem = (ram_kb - shared) / ((connections + workers) * 3)
    work_mem = int({"dw": work_mem / 2, "mixed": work_mem / 2, "desktop": work_mem / 6}.get(db_type, work_mem))
    wal_sizes = {"web": (1024, 4096), "oltp": (2048, 8192), "dw": (4096, 16384), "desktop": (100, 2048),
                 "mixed": (1024, 4096)}[db_type]
    settings = {
        "max_connections": str(connections),
        "shared_buffers": kb(shared),
        "effective_cache_size": kb(cache),
        "maintenance_work_mem": kb(maintenance),
        "checkpoint_completion_target": "0.9",
        "wal_buffers": kb(wal_buffers),
        "default_statistics_target": "500" if db_type == "dw" else "100",
        "random_page_cost": "4" if disk == "hdd" else "1.1",
        "effective_io_concurrency": {"hdd": "2", "ssd": "200", "san": "300"}[disk],
        "work_mem": kb(max(64, work_mem)),
        "huge_pages": "try" if ram_kb >= 32 * 1024 * 1024 else "off",
        "min_wal_size": kb(wal_sizes[0] * 1024),
        "max_wal_size": kb(wal_sizes[1] * 1024),
    }
    settings.update(parallel)
    if db_type == "desktop":
        settings.update({"wal_level": "minimal", "max_wal_senders": "0"})
    return settings


if __name__ == "__main__":
    args = sys.argv[1:]
    print(json.dumps(pgtune(int(args[0]), int(args[1]), int(args[2]) if len(args) > 2 else None,
                            *args[3:5]), sort_keys=True))
