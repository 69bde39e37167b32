# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The PostgreSQL tuning engine: postgresql.conf settings derived from the host's facts, each with its reason.

Pure functions, no I/O. recommend(facts, overrides, unsafe_rules) returns, for every setting it emits, the value
exactly as it goes into postgresql.conf, a one-sentence reason naming the rule and the numbers, its source
(derived, rule or override) and whether PostgreSQL needs a restart to change it.

The rules follow Percona's published PostgreSQL tuning for sysbench-tpcc on a 256 GB, 56-CPU server (the
reference machine in tests/unit/test_postgres_tuning.py):
- shared_buffers: about 75% of RAM when the hot data fits in memory (PostgreSQL then serves it from its own
  cache instead of caching it twice), a quarter of RAM when it does not (the OS cache holds the rest); never so
  much that connections, maintenance and the OS are left without memory;
- work_mem bounded so that max_connections x operations per query (x parallel workers) cannot over-commit what
  shared_buffers, maintenance and the OS leave;
- WAL and checkpoints from the write rate and the recovery time objective: checkpoints spaced by time (up to an
  hour, as that tuning ran), max_wal_size large enough that WAL volume does not force them earlier, and small
  enough that crash recovery replays it within the RTO;
- six rules every configuration keeps (ACID, point-in-time recovery, WAL usable by replicas, crash recovery,
  frequent checkpoints, autovacuum): an override that breaks one is refused unless the user names the rule
  in unsafe_rules, and the result then says which rule it breaks.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import re

from ansible_collections.dbops.clusters.plugins.module_utils.postgres_settings import render

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB

PROFILES = ("oltp", "olap", "mixed")
DISK_TYPES = ("hdd", "ssd", "nvme")
MIN_MEMORY_MB = 256
MIN_VERSION = 13                 # oldest major the engine plans for (wal_keep_size, reloadable primary_conninfo)

SHARED_BUFFERS_FIT_SHARE = 0.75  # 75% of RAM when the hot data fits
SHARED_BUFFERS_SPILL_SHARE = 0.25  # a smaller share when it does not; the OS cache does the rest
FIT_HEADROOM = 1.2               # the hot data plus 20% (indexes grow, visibility map, FSM) must fit the 75%
OS_RESERVE_SHARE = 0.05          # kernel, page tables, the postmaster's other processes
OS_RESERVE_MIN_MB = 128
MIN_WORK_MEM_KB = 1024           # below 1MB sorts spill to disk for almost any query; refuse to plan that low
MAX_WORK_MEM_KB = 2 * 1024 * 1024
HUGE_PAGE_MB = 2
HUGE_PAGES_PAY_MB = 2048         # below 2 GB of shared memory the page-table saving is too small to matter
CHECKPOINT_COMPLETION = 0.9      # spread each checkpoint over 90% of the interval
MAX_CHECKPOINT_MIN = 60          # checkpoint_timeout at most 1h
MIN_CHECKPOINT_MIN = 5           # PostgreSQL's default; more often costs full-page images for little gain
MIN_WAL_FLOOR_MB = 1024          # max_wal_size never below PostgreSQL's default 1GB

# Crash-recovery replay speed assumed per disk type (MB of WAL per second); recovery is mostly single-threaded
# random reads of the pages the WAL touches, so the disk decides. The user can declare a measured one.
REPLAY_MB_PER_S = {"hdd": 10, "ssd": 50, "nvme": 100}
RANDOM_PAGE_COST = {"hdd": ("4", "spinning disk: a random read costs about 4 sequential ones (the default)"),
                    "ssd": ("1.1", "SSD: random reads cost about as much as sequential ones (1.0 to 1.1 is usual)"),
                    "nvme": ("1.1", "NVMe: random reads cost about as much as sequential ones (1.0 to 1.1 is usual)")}
IO_CONCURRENCY = {"hdd": (2, "one spindle serves a couple of prefetches at a time"),
                  "ssd": (200, "an SSD serves hundreds of concurrent reads"),
                  "nvme": (256, "NVMe queues are deep")}
VACUUM_COST_LIMIT = {"hdd": 400, "ssd": 2000, "nvme": 4000}

PROFILE_CONNECTIONS = {"oltp": 100, "mixed": 80, "olap": 40}
PROFILE_OPS_PER_QUERY = {"oltp": 2, "mixed": 3, "olap": 4}
PROFILE_SCALE_FACTOR = {"oltp": "0.05", "mixed": "0.1", "olap": "0.2"}

# The six rules and the settings that keep each; a predicate per setting says whether a value keeps it.
RULES = {
    "acid": "ACID: a committed transaction survives a crash (fsync on, synchronous_commit not off)",
    "pitr": "point-in-time recovery: every WAL segment is archived (archive_mode on with an archive command)",
    "replica_wal": "WAL usable by replicas (wal_level replica or logical)",
    "crash_recovery": "crash recovery: torn pages are repaired from full-page images (full_page_writes on)",
    "checkpoints": "checkpoints frequent enough that crash recovery fits the recovery time objective",
    "autovacuum": "autovacuum on (and the statistics it needs, track_counts)",
}

# Settings that need a server restart (context postmaster) among those the engine emits or checks.
RESTART_SETTINGS = frozenset((
    "shared_buffers", "max_connections", "huge_pages", "max_worker_processes", "wal_level", "archive_mode",
    "max_wal_senders", "max_replication_slots", "wal_buffers", "autovacuum_max_workers", "listen_addresses",
    "port", "shared_preload_libraries", "track_commit_timestamp",
    "wal_log_hints",
))

_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)?$")
_SIZE_RE = re.compile(r"^\s*(\d+)\s*(B|kB|MB|GB|TB)?\s*$")
_TIME_RE = re.compile(r"^\s*(\d+)\s*(us|ms|s|min|h|d)?\s*$")
_SIZE_UNITS = {"B": 1, "kB": KIB, "MB": MIB, "GB": GIB, "TB": 1024 * GIB}
_TIME_UNITS_MS = {"us": 0.001, "ms": 1, "s": 1000, "min": 60000, "h": 3600000, "d": 86400000}
_BOOL_TRUE = ("on", "true", "yes", "1")
_BOOL_FALSE = ("off", "false", "no", "0")


class TuningInputError(ValueError):
    """A fact or an override the engine cannot use; `variable` names the input or override at fault."""

    def __init__(self, variable, message):
        self.variable = variable
        if variable not in message:
            message = "%s: %s" % (variable, message)
        super(TuningInputError, self).__init__(message)


# ---------------------------------------------------------------------------------------------------------------
# Units as PostgreSQL writes them (1kB = 1024 bytes)


def parse_size(text, variable="size", default_unit="B"):
    """'128MB', '1GB', '8kB', 4096 -> bytes. A bare number is in default_unit (B, kB or MB)."""
    if isinstance(text, bool):
        raise TuningInputError(variable, "%s: %r is not a size" % (variable, text))
    match = _SIZE_RE.match(str(text))
    if not match:
        raise TuningInputError(variable, "%s: %r is not a size such as 64kB, 128MB or 2GB" % (variable, text))
    return int(match.group(1)) * _SIZE_UNITS[match.group(2) or default_unit]


def parse_time_ms(text, variable="time", default_unit="ms"):
    """'15min', '1h', '200ms', 30 -> milliseconds. A bare number is in default_unit."""
    if isinstance(text, bool):
        raise TuningInputError(variable, "%s: %r is not a duration" % (variable, text))
    match = _TIME_RE.match(str(text))
    if not match:
        raise TuningInputError(variable, "%s: %r is not a duration such as 200ms, 30s, 15min or 1h" % (variable, text))
    return int(match.group(1)) * _TIME_UNITS_MS[match.group(2) or default_unit]


def format_size(size):
    """Bytes -> PostgreSQL's shortest exact spelling: 2147483648 -> '2GB', 8192 -> '8kB'."""
    size = int(size)
    for unit, suffix in ((1024 * GIB, "TB"), (GIB, "GB"), (MIB, "MB"), (KIB, "kB")):
        if size and size % unit == 0:
            return "%d%s" % (size // unit, suffix)
    return "%dB" % size


def format_mb(megabytes):
    return format_size(int(megabytes) * MIB)


def format_minutes(minutes):
    minutes = int(minutes)
    if minutes % 60 == 0:
        return "%dh" % (minutes // 60)
    return "%dmin" % minutes


def parse_bool(text, variable):
    value = str(text).strip().lower()
    if isinstance(text, bool):
        return text
    if value in _BOOL_TRUE:
        return True
    if value in _BOOL_FALSE:
        return False
    raise TuningInputError(variable, "%s: %r is not a boolean (on/off)" % (variable, text))


# ---------------------------------------------------------------------------------------------------------------
# Facts


def _int_fact(facts, name, minimum, default=None):
    value = facts.get(name)
    if value is None or value == "":
        if default is not None:
            return default
        raise TuningInputError(name, "%s is required" % name)
    if isinstance(value, bool):
        raise TuningInputError(name, "%s must be an integer, got %r" % (name, value))
    try:
        number = int(str(value).strip())
    except ValueError:
        raise TuningInputError(name, "%s must be an integer, got %r" % (name, value))
    if number < minimum:
        raise TuningInputError(name, "%s must be at least %d, got %d" % (name, minimum, number))
    return number


def _choice_fact(facts, name, choices, default):
    value = facts.get(name) or default
    if value not in choices:
        raise TuningInputError(name, "%s must be one of %s, got %r" % (name, ", ".join(choices), value))
    return value


def read_facts(facts):
    """Validate and complete the facts; every error names the input at fault."""
    out = {
        "memory_mb": _int_fact(facts, "memory_mb", MIN_MEMORY_MB),
        "cpus": _int_fact(facts, "cpus", 1),
        "profile": _choice_fact(facts, "profile", PROFILES, "oltp"),
        "version": _int_fact(facts, "version", MIN_VERSION, default=17),
        "rto_minutes": _int_fact(facts, "rto_minutes", 1, default=5),
        "hot_data_mb": _int_fact(facts, "hot_data_mb", 0, default=0) or None,
        "wal_mb_per_hour": _int_fact(facts, "wal_mb_per_hour", 0, default=0) or None,
        "replay_mb_per_s": _int_fact(facts, "replay_mb_per_s", 0, default=0) or None,
        "huge_pages_total": _int_fact(facts, "huge_pages_total", 0, default=0),
    }
    disk = facts.get("disk_type") or "unknown"
    if disk not in DISK_TYPES + ("unknown",):
        raise TuningInputError("disk_type", "disk_type must be one of hdd, ssd, nvme, unknown, got %r" % disk)
    out["disk_type"] = disk
    out["disk"] = "ssd" if disk == "unknown" else disk
    out["max_connections"] = _int_fact(facts, "max_connections", 5,
                                       default=PROFILE_CONNECTIONS[out["profile"]])
    return out


# ---------------------------------------------------------------------------------------------------------------
# The rules


def _setting(value, reason, source="derived"):
    return {"value": value, "reason": reason, "source": source}


def _os_reserve_mb(ram):
    """Memory left to the operating system and its cache, never given to PostgreSQL's own allocations."""
    return max(OS_RESERVE_MIN_MB, int(ram * OS_RESERVE_SHARE))


def memory_override_error(name, value, memory_mb):
    """Why an override of shared memory cannot run on a host with memory_mb, or None.

    PostgreSQL allocates shared_buffers in one piece when it starts: more than the host can give makes the server
    refuse to start (or be killed for memory under load), on every member the file reaches."""
    if name != "shared_buffers":
        return None
    text = str(value).strip()
    size = parse_size(text, name, "kB") * (8 if re.match(r"^\d+$", text) else 1)
    usable = memory_mb - _os_reserve_mb(memory_mb)
    if size > usable * MIB:
        return ("shared_buffers=%s is more than the %d MB this host can give PostgreSQL (%d MB of memory less %d MB "
                "for the OS): the server allocates it at start and would not start"
                % (text, usable, memory_mb, memory_mb - usable))
    return None


def _memory(f, settings, warnings):
    ram = f["memory_mb"]
    cpus = f["cpus"]
    profile = f["profile"]
    connections = f["max_connections"]
    os_reserve = _os_reserve_mb(ram)

    # maintenance: one manual operation (index build, VACUUM) plus each autovacuum worker
    maintenance = int(min(2048, max(64, ram // 16)))
    av_workers = int(min(10, max(3, cpus // 2)))
    av_work_mem = int(min(maintenance, max(16, ram // 64)))
    maintenance_total = maintenance + av_workers * av_work_mem

    parallel_per_gather = {"oltp": min(2, cpus // 2), "mixed": max(1, cpus // 4) if cpus >= 4 else cpus // 2,
                           "olap": max(1, cpus // 2)}[profile]
    ops = PROFILE_OPS_PER_QUERY[profile] * (1 + parallel_per_gather)
    min_connection_budget = connections * ops * MIN_WORK_MEM_KB // 1024

    ceiling = ram - os_reserve - maintenance_total - min_connection_budget
    if ceiling < 32:
        raise TuningInputError(
            "max_connections",
            "max_connections=%d x %d operations x 1MB work_mem + %d MB maintenance + %d MB OS reserve leave "
            "nothing for shared_buffers in %d MB: lower max_connections or give the server more memory"
            % (connections, ops, maintenance_total, os_reserve, ram))

    hot = f["hot_data_mb"]
    fit_share_mb = int(ram * SHARED_BUFFERS_FIT_SHARE)
    if hot is not None and hot * FIT_HEADROOM <= min(fit_share_mb, ceiling):
        shared = min(fit_share_mb, ceiling)
        why = ("hot data %d MB (+20%% = %d MB) fits in memory: %d%% of %d MB RAM so PostgreSQL serves it from its "
               "own cache instead of caching it twice" % (hot, hot * FIT_HEADROOM, 75, ram))
        fits = True
    else:
        shared = min(int(ram * SHARED_BUFFERS_SPILL_SHARE), ceiling)
        if hot is None:
            why = ("hot data size unknown (declare it): 25%% of %d MB RAM, the OS cache holds the rest; with the "
                   "hot data declared and fitting, 75%%" % ram)
            warnings.append("hot_data_mb not declared: shared_buffers is 25% of RAM; declare the hot data size "
                            "to get 75% when it fits in memory")
        else:
            why = ("hot data %d MB does not fit in 75%% of %d MB RAM: 25%%, leaving the rest to the OS cache "
                   "rather than caching pages twice" % (hot, ram))
        fits = False
    if shared == ceiling:
        why += "; capped at %d MB so connections, maintenance and the OS keep their memory" % ceiling
    shared = max(32, shared)
    settings["shared_buffers"] = _setting(format_mb(shared), why)

    cache = int(ram * 0.75) if not fits else max(shared, ram - os_reserve - maintenance_total // 2)
    if fits:
        cache_why = ("the planner may assume shared_buffers plus what the OS caches beside it: %d MB RAM minus the "
                     "OS reserve and half the maintenance memory" % ram)
    else:
        cache_why = "the planner may assume 75%% of %d MB RAM caches data (shared_buffers plus the OS cache)" % ram
    settings["effective_cache_size"] = _setting(format_mb(cache), cache_why)

    left_mb = ram - shared - os_reserve - maintenance_total
    work_mem_kb = int(left_mb * 1024 // (connections * ops))
    work_mem_kb = max(MIN_WORK_MEM_KB, min(MAX_WORK_MEM_KB, work_mem_kb))
    settings["work_mem"] = _setting(
        format_size(work_mem_kb * KIB),
        "(%d MB RAM - %d shared_buffers - %d maintenance - %d OS) / (%d connections x %d operations per query, "
        "%d x (1 + %d parallel workers)): the worst case cannot over-commit memory"
        % (ram, shared, maintenance_total, os_reserve, connections, ops, PROFILE_OPS_PER_QUERY[profile],
           parallel_per_gather))
    settings["maintenance_work_mem"] = _setting(
        format_mb(maintenance), "RAM/16 between 64MB and 2GB: faster index builds and VACUUM (2GB from 32GB of "
                                "RAM up); counted before work_mem")
    settings["autovacuum_work_mem"] = _setting(
        format_mb(av_work_mem), "RAM/64 per autovacuum worker (at most maintenance_work_mem): %d workers x %d MB "
                                "are counted in the memory budget" % (av_workers, av_work_mem))
    settings["max_connections"] = _setting(
        str(connections), "%s profile: %d connections (use a pooler for more); work_mem is bounded by it"
        % (profile, connections))
    settings["autovacuum_max_workers"] = _setting(
        str(av_workers), "CPUs/2 between 3 and 10: %d CPUs" % cpus)
    settings["wal_buffers"] = _setting("16MB", "one WAL segment: the auto value's ceiling, set explicitly")

    needed_pages = int(math.ceil((shared * 1.05 + 64) / HUGE_PAGE_MB))
    if shared < HUGE_PAGES_PAY_MB:
        settings["huge_pages"] = _setting(
            "try", "shared_buffers %d MB is below %d MB: huge pages save little; used if the kernel has them"
            % (shared, HUGE_PAGES_PAY_MB))
    elif f["huge_pages_total"] >= needed_pages:
        settings["huge_pages"] = _setting(
            "on", "shared_buffers %d MB: huge pages cut page-table memory and TLB misses; the host has %d reserved "
                  "(%d needed)" % (shared, f["huge_pages_total"], needed_pages))
    else:
        settings["huge_pages"] = _setting(
            "try", "shared_buffers %d MB would gain from huge pages, but the host reserves %d of the %d needed: "
                   "set vm.nr_hugepages=%d" % (shared, f["huge_pages_total"], needed_pages, needed_pages))
        warnings.append("huge pages would pay for %d MB of shared_buffers: reserve vm.nr_hugepages=%d"
                        % (shared, needed_pages))
    return {"parallel_per_gather": parallel_per_gather, "fits": fits, "shared_mb": shared}


def _wal(f, settings, warnings):
    disk = f["disk"]
    replay = f["replay_mb_per_s"] or REPLAY_MB_PER_S[disk]
    recovery_cap_mb = f["rto_minutes"] * 60 * replay
    rate = f["wal_mb_per_hour"]
    if rate:
        per_min = rate / 60.0
        # largest interval whose WAL (x (1 + completion target), the distance max_wal_size bounds) replays in the RTO
        by_rto = recovery_cap_mb / (1 + CHECKPOINT_COMPLETION) / per_min
        minutes = int(max(MIN_CHECKPOINT_MIN, min(MAX_CHECKPOINT_MIN, by_rto)))
        if by_rto < MIN_CHECKPOINT_MIN:
            raise TuningInputError(
                "rto_minutes",
                "rto_minutes=%d: %d MB/h of WAL replayed at %d MB/s cannot recover within %d minutes even with a "
                "checkpoint every %d minutes; raise rto_minutes or declare a faster replay_mb_per_s"
                % (f["rto_minutes"], rate, replay, f["rto_minutes"], MIN_CHECKPOINT_MIN))
        wal_mb = int(per_min * minutes * (1 + CHECKPOINT_COMPLETION))
        wal_mb = max(MIN_WAL_FLOOR_MB, min(recovery_cap_mb, wal_mb))
        timeout_why = ("%d MB/h of WAL: the longest interval up to 1h whose WAL replays within the %d-minute "
                       "RTO at %d MB/s" % (rate, f["rto_minutes"], replay))
        size_why = ("%d minutes x %d MB/min x (1 + %.1f completion target): checkpoints come from the timeout, not "
                    "from WAL volume; at most the %d MB the RTO allows"
                    % (minutes, per_min, CHECKPOINT_COMPLETION, recovery_cap_mb))
    else:
        minutes = 15
        wal_mb = max(MIN_WAL_FLOOR_MB, min(recovery_cap_mb, {"oltp": 4096, "mixed": 4096, "olap": 8192}[f["profile"]]))
        timeout_why = "WAL write rate unknown (declare wal_mb_per_hour): 15 minutes"
        size_why = ("WAL write rate unknown: %s profile default, at most the %d MB that replay in the %d-minute RTO at "
                    "%d MB/s" % (f["profile"], recovery_cap_mb, f["rto_minutes"], replay))
        warnings.append("wal_mb_per_hour not declared: checkpoint_timeout 15min and a profile-sized max_wal_size")
    settings["checkpoint_timeout"] = _setting(format_minutes(minutes), timeout_why)
    settings["max_wal_size"] = _setting(format_mb(wal_mb), size_why)
    settings["max_slot_wal_keep_size"] = _setting(
        format_mb(4 * wal_mb), "4 x max_wal_size: a replica that falls further behind loses its slot (and is "
                               "rebuilt) instead of filling the primary's disk with retained WAL")
    settings["min_wal_size"] = _setting(
        format_mb(max(80, wal_mb // 4)), "a quarter of max_wal_size kept recycled so bursts do not create segments")
    settings["checkpoint_completion_target"] = _setting(
        str(CHECKPOINT_COMPLETION), "spread checkpoint writes over 90% of the interval")
    settings["wal_compression"] = _setting(
        "lz4" if f["version"] >= 15 else "on",
        "full-page images compressed: 42%% less WAL and 21%% more TPS measured on a write-heavy TPC-C load; %s"
        % ("lz4 costs far less CPU than pglz (PostgreSQL 15+)" if f["version"] >= 15 else "pglz before PostgreSQL 15"))
    settings["log_checkpoints"] = _setting("on", "see whether checkpoints come from the timeout or from WAL volume")
    return {"recovery_cap_mb": recovery_cap_mb, "checkpoint_minutes": minutes}


def _io_and_cpu(f, settings, mem):
    disk = f["disk"]
    why = "" if f["disk_type"] != "unknown" else " (disk type unknown: assumed SSD)"
    settings["random_page_cost"] = _setting(RANDOM_PAGE_COST[disk][0], RANDOM_PAGE_COST[disk][1] + why)
    settings["effective_io_concurrency"] = _setting(str(IO_CONCURRENCY[disk][0]), IO_CONCURRENCY[disk][1] + why)
    if f["profile"] == "olap":
        settings["bgwriter_lru_maxpages"] = _setting("400", "olap: moderate background writing")
        settings["bgwriter_lru_multiplier"] = _setting("4.0", "olap: moderate background writing")
    else:
        settings["bgwriter_lru_maxpages"] = _setting(
            "1000", "%s: the background writer cleans buffers ahead of backends" % f["profile"])
        settings["bgwriter_lru_multiplier"] = _setting("10.0", "%s: write ahead of demand" % f["profile"])
    cpus = f["cpus"]
    settings["max_worker_processes"] = _setting(
        str(max(8, cpus + 4)), "%d CPUs + 4 for background workers, at least the default 8" % cpus)
    settings["max_parallel_workers"] = _setting(str(cpus), "one parallel worker per CPU (%d)" % cpus)
    settings["max_parallel_workers_per_gather"] = _setting(
        str(mem["parallel_per_gather"]),
        {"oltp": "oltp: short queries gain little from parallelism; at most 2",
         "mixed": "mixed: a quarter of the CPUs per query", "olap": "olap: half the CPUs per query"}[f["profile"]])
    settings["max_parallel_maintenance_workers"] = _setting(
        str(max(1, min(4, cpus // 2))), "half the CPUs up to 4 for parallel index builds")
    settings["autovacuum_vacuum_scale_factor"] = _setting(
        PROFILE_SCALE_FACTOR[f["profile"]],
        "%s: vacuum when this share of a table is dead (the default 0.2 lets large tables bloat)" % f["profile"])
    settings["autovacuum_analyze_scale_factor"] = _setting(
        str(float(PROFILE_SCALE_FACTOR[f["profile"]]) / 2), "analyze twice as often as vacuum")
    settings["autovacuum_vacuum_cost_limit"] = _setting(
        str(VACUUM_COST_LIMIT[disk]), "%s: autovacuum may do this much I/O per round before it sleeps%s"
        % (disk, why))


def _safety(f, settings, archive_command):
    settings["wal_level"] = _setting("replica", "rule replica_wal: WAL usable by streaming replicas and PITR", "rule")
    settings["archive_mode"] = _setting("on", "rule pitr: every WAL segment is archived", "rule")
    settings["archive_command"] = _setting(
        archive_command, "rule pitr: each completed WAL segment goes through this command; PostgreSQL keeps the "
                         "segment and retries until it succeeds, and pg_stat_archiver reports failures", "rule")
    settings["archive_timeout"] = _setting(
        "1min", "a segment holding any commit is closed and archived within a minute, so a restore from the archive "
                "after every server is lost lacks at most the last minute of commits (a quiet server switches nothing)")
    settings["fsync"] = _setting("on", "rule acid and crash_recovery", "rule")
    settings["synchronous_commit"] = _setting("on", "rule acid: COMMIT returns after the WAL is on disk", "rule")
    settings["full_page_writes"] = _setting("on", "rule crash_recovery: torn pages are repaired from WAL", "rule")
    settings["autovacuum"] = _setting("on", "rule autovacuum", "rule")
    settings["track_counts"] = _setting("on", "rule autovacuum: autovacuum needs the statistics", "rule")
    settings["max_wal_senders"] = _setting("10", "rule replica_wal: replicas and pg_basebackup connect", "rule")
    settings["max_replication_slots"] = _setting("10", "one slot per replica keeps the WAL it still needs", "rule")
    settings["hot_standby"] = _setting("on", "replicas answer read-only queries", "rule")
    settings["wal_log_hints"] = _setting(
        "on", "pg_rewind needs it or data checksums (the role enables both): a failed-over primary can follow "
              "the new one", "rule")


def rule_breaks(name, value, checkpoint_limits):
    """The rule an override of `name` to `value` breaks, or None. checkpoint_limits: (max timeout min, max WAL MB)."""
    text = str(value).strip().lower()
    if name == "fsync" and not parse_bool(value, name):
        return "acid"
    if name == "synchronous_commit" and text == "off":
        return "acid"
    if name == "full_page_writes" and not parse_bool(value, name):
        return "crash_recovery"
    if name == "wal_level" and text not in ("replica", "logical"):
        return "replica_wal"
    if name == "archive_mode" and text not in ("on", "always"):
        return "pitr"
    if name == "archive_command" and not text:
        return "pitr"
    if name in ("autovacuum", "track_counts") and not parse_bool(value, name):
        return "autovacuum"
    if name == "checkpoint_timeout" and parse_time_ms(value, name, "s") > checkpoint_limits[0] * 60000:
        return "checkpoints"
    if name == "max_wal_size" and parse_size(value, name, "MB") > checkpoint_limits[1] * MIB:
        return "checkpoints"
    return None


# Types and bounds of the settings the engine emits, checked before anything is written (PostgreSQL's own
# pg_settings check in postgres_config covers every other name on a running server).
_KNOWN = {
    "shared_buffers": ("size", 128 * KIB, None), "effective_cache_size": ("size", 8 * KIB, None),
    "work_mem": ("size", 64 * KIB, MAX_WORK_MEM_KB * KIB), "maintenance_work_mem": ("size", MIB, None),
    "autovacuum_work_mem": ("size_or_minus1", MIB, None), "wal_buffers": ("size_or_minus1", 32 * KIB, None),
    "max_wal_size": ("size", 2 * MIB, None), "min_wal_size": ("size", 2 * MIB, None),
    "checkpoint_timeout": ("time", 30000, 86400000), "checkpoint_completion_target": ("real", 0, 1),
    "random_page_cost": ("real", 0, 1.79e308), "effective_io_concurrency": ("int", 0, 1000),
    "bgwriter_lru_maxpages": ("int", 0, 1073741823), "bgwriter_lru_multiplier": ("real", 0, 10),
    "max_connections": ("int", 1, 262143), "autovacuum_max_workers": ("int", 1, 262143),
    "max_worker_processes": ("int", 0, 262143), "max_parallel_workers": ("int", 0, 1024),
    "max_parallel_workers_per_gather": ("int", 0, 1024), "max_parallel_maintenance_workers": ("int", 0, 1024),
    "autovacuum_vacuum_scale_factor": ("real", 0, 100), "autovacuum_analyze_scale_factor": ("real", 0, 100),
    "autovacuum_vacuum_cost_limit": ("int", -1, 10000), "max_wal_senders": ("int", 0, 262143),
    "max_replication_slots": ("int", 0, 262143), "max_slot_wal_keep_size": ("size_or_minus1", MIB, None),
    "huge_pages": ("enum", ("off", "on", "try"), None),
    "wal_compression": ("enum", ("off", "on", "pglz", "lz4", "zstd"), None),
    "wal_level": ("enum", ("minimal", "replica", "logical"), None),
    "archive_mode": ("enum", ("off", "on", "always"), None),
    "synchronous_commit": ("enum", ("local", "remote_write", "remote_apply", "on", "off"), None),
    "fsync": ("bool", None, None), "full_page_writes": ("bool", None, None), "autovacuum": ("bool", None, None),
    "track_counts": ("bool", None, None), "hot_standby": ("bool", None, None), "wal_log_hints": ("bool", None, None),
    "log_checkpoints": ("bool", None, None), "archive_command": ("string", None, None),
    "archive_timeout": ("time", 0, 1073741823000),
}


_BLOCK_UNIT = frozenset(("shared_buffers", "effective_cache_size", "wal_buffers"))


def check_known(name, value):
    """Refuse a value PostgreSQL would reject for a setting the engine knows; returns the value as written."""
    kind, low, high = _KNOWN[name]
    text = str(value).strip()
    if kind in ("size", "size_or_minus1"):
        if kind == "size_or_minus1" and text == "-1":
            return text
        number = parse_size(text, name, "MB" if name in ("max_wal_size", "min_wal_size", "max_slot_wal_keep_size")
                            else "kB")
        if name in _BLOCK_UNIT and re.match(r"^\d+$", text):
            number *= 8      # a bare number counts 8kB blocks for these

        if number < low or (high is not None and number > high):
            raise TuningInputError(name, "%s=%s is outside PostgreSQL's range (%s to %s)"
                                   % (name, text, format_size(low), format_size(high) if high else "no limit"))
        return format_size(number) if re.match(r"^\d+$", text) else text
    if kind == "time":
        number = parse_time_ms(text, name, "s")
        if number < low or number > high:
            raise TuningInputError(name, "%s=%s is outside PostgreSQL's range (%ds to %ds)"
                                   % (name, text, low // 1000, high // 1000))
        return text
    if kind in ("int", "real"):
        try:
            number = int(text) if kind == "int" else float(text)
        except ValueError:
            wanted = "an integer" if kind == "int" else "a number"
            raise TuningInputError(name, "%s=%r is not %s" % (name, value, wanted))
        if number < low or number > high:
            raise TuningInputError(name, "%s=%s is outside PostgreSQL's range (%s to %s)" % (name, text, low, high))
        return text
    if kind == "enum":
        if text.lower() not in low:
            raise TuningInputError(name, "%s=%r is not one of %s" % (name, value, ", ".join(low)))
        return text.lower()
    if kind == "bool":
        return "on" if parse_bool(value, name) else "off"
    return text


def recommend(facts, overrides=None, unsafe_rules=None, archive_command=None):
    """Settings for the facts; overrides win (their reason records the derived value); rules need unsafe_rules."""
    f = read_facts(facts)
    overrides = dict(overrides or {})
    unsafe_rules = list(unsafe_rules or [])
    for rule in unsafe_rules:
        if rule not in RULES:
            raise TuningInputError("unsafe_rules", "unsafe_rules: %r is not a rule (%s)" % (rule, ", ".join(RULES)))
    if not archive_command:
        raise TuningInputError("archive_command", "archive_command is required (rule pitr)")
    if "max_connections" in overrides:
        # the memory budget must plan for the connections that will really be allowed
        f["max_connections"] = _int_fact({"max_connections": check_known("max_connections",
                                                                         overrides["max_connections"])},
                                         "max_connections", 5)
    warnings = []
    settings = {}
    mem = _memory(f, settings, warnings)
    wal = _wal(f, settings, warnings)
    _io_and_cpu(f, settings, mem)
    _safety(f, settings, archive_command)

    limits = (max(MAX_CHECKPOINT_MIN, wal["checkpoint_minutes"]), wal["recovery_cap_mb"])
    broken = {}
    for name in sorted(overrides):
        value = overrides[name]
        if not isinstance(name, str) or not _NAME_RE.match(name):
            raise TuningInputError(str(name), "override %r is not a PostgreSQL setting name" % (name,))
        if value is None or isinstance(value, (dict, list)):
            raise TuningInputError(name, "override %s=%r must be a scalar value" % (name, value))
        if isinstance(value, bool):
            value = "on" if value else "off"
        value = check_known(name, value) if name in _KNOWN else str(value)
        problem = memory_override_error(name, value, f["memory_mb"])
        if problem:
            raise TuningInputError(name, "override " + problem)
        rule = rule_breaks(name, value, limits)
        if rule and rule not in unsafe_rules:
            raise TuningInputError(
                name, "override %s=%s breaks rule %s (%s); add %s to unsafe_rules to accept that"
                % (name, value, rule, RULES[rule], rule))
        previous = settings.get(name)
        reason = "override by user"
        if previous:
            reason += "; the engine would set %s (%s)" % (previous["value"], previous["reason"])
        if rule:
            reason += "; UNSAFE: breaks rule %s (%s)" % (rule, RULES[rule])
            broken[rule] = broken.get(rule, []) + [name]
        settings[name] = _setting(value, reason, "override")
    for name, setting in settings.items():
        setting["restart"] = name in RESTART_SETTINGS
    for rule, names in sorted(broken.items()):
        warnings.append("UNSAFE: %s breaks rule %s: %s" % (", ".join(names), rule, RULES[rule]))
    inputs = dict(f)
    inputs["recovery_cap_mb"] = wal["recovery_cap_mb"]
    inputs["hot_data_fits"] = mem["fits"]
    return {"settings": settings, "inputs": inputs, "warnings": warnings, "broken_rules": broken}


def render_conf(result, header=""):
    """The settings as a conf.d file: each preceded by '# <reason>', sorted by name."""
    return render(result["settings"], header)


# A replica pauses its recovery (and will not start after PostgreSQL 14's check) when one of these is lower than on
# its primary: with settings derived per host (CPUs, memory), a smaller replica would stop replaying.
STANDBY_MINIMUMS = ("max_connections", "max_worker_processes", "max_wal_senders", "max_prepared_transactions",
                    "max_locks_per_transaction")


def standby_floor(own, members):
    """The settings of `own` to raise so that no member is below another on STANDBY_MINIMUMS.

    own: this member's {name: {value, reason, ...}}; members: {member: the same} for every member of the group
    whose plan is known. Returns {name: setting} for the names raised, the reason naming the member it follows."""
    raised = {}
    for name in STANDBY_MINIMUMS:
        mine = own.get(name)
        if mine is None:
            continue
        highest, source = int(mine["value"]), None
        for member in sorted(members):
            theirs = members[member].get(name)
            if theirs is not None and int(theirs["value"]) > highest:
                highest, source = int(theirs["value"]), member
        if source is not None:
            setting = dict(mine)
            setting["value"] = str(highest)
            setting["reason"] = ("%s on %s, the highest in the group (this host alone would use %s: %s); a replica "
                                 "with less than its primary pauses recovery"
                                 % (highest, source, mine["value"], mine["reason"]))
            raised[name] = setting
    return raised
