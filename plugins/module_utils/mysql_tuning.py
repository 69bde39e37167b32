# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The MySQL/InnoDB tuning engine: my.cnf settings derived from the host's facts, each with its reason.

Pure functions, no I/O: recommend(facts, overrides) returns, for every setting it emits, the value exactly as it
goes into my.cnf, a one-sentence reason naming the rule and the numbers, whether it came from a rule or from the
user, and whether the server can change it at runtime (SET GLOBAL) on that flavor and version.

The rules follow Percona's published MySQL tuning and benchmark results:
- buffer pool from RAM (MySQL's own innodb_dedicated_server split: half up to 4 GiB, three quarters above),
  rounded down to whole chunks (128 MiB x instances) as InnoDB sizes it;
- redo log sized for a log cycle of an hour of writes, capped by the recovery time objective at about
  5 minutes of crash recovery per GB of redo;
- I/O capacity from the disk type, durability from a named profile, and explicit values where MySQL and
  MariaDB defaults differ.

Only variables that exist on the flavor and version are emitted: an unknown variable stops mysqld at startup.
Supported: percona and mysql from 5.7.9 (first 5.7 GA), mariadb from 10.6 (the oldest LTS still maintained).
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import re
from fractions import Fraction

from ansible_collections.dbops.clusters.plugins.module_utils import mysql_removed_options
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_flavors import FLAVORS, FlavorError, parse_version

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB

CHUNK = 128 * MIB              # innodb_buffer_pool_chunk_size default: the pool is sized in whole chunks
MAX_INSTANCES = 64             # innodb_buffer_pool_instances maximum
MIN_MEMORY_MB = 512            # below this a 128 MiB pool leaves nothing for connections
RECOVERY_MIN_PER_GB = 5        # about 5 minutes of crash recovery per GB of redo
MIN_CYCLE_MIN = 15             # a log cycle shorter than 15 minutes forces furious flushing
TARGET_CYCLE_MIN = 60          # ideally one hour
REDO_FLOOR = 256 * MIB         # sensible minimum on tiny hosts (MySQL's default is 100M)
REDO_DEFAULT_MAX = 8 * GIB     # 8 GB sufficed for a TPC-C load on a 64 GB pool
REDO_CEILING = 128 * GIB       # innodb_redo_log_capacity maximum in MySQL 8.0
PER_CONNECTION = 4 * MIB       # per-connection budget: thread stack, net, sort/join/read buffers
MAX_CONNECTIONS_CAP = 10000
TEMPTABLE_SHARE = 16           # TempTable's RAM at most 1/16 of the declared memory (128M of 2 GiB)

MIN_VERSION = {"mysql": (5, 7, 9), "mariadb": (10, 6, 0)}
# A version given as a series ("8.0", "8.4") plans for that series' current releases, which the package
# repositories install: "8.0" is Percona Server 8.0.4x, not 8.0.0 (before innodb_redo_log_capacity, 8.0.30).
SERIES_CURRENT = 9999
DISK_TYPES = ("hdd", "ssd", "nvme")
WORKLOADS = ("oltp", "read_mostly", "write_heavy")
DURABILITY = ("durable", "relaxed", "ephemeral")

# innodb_io_capacity / innodb_io_capacity_max by disk type, with the source of the numbers.
IO_CAPACITY = {
    "hdd": (200, 400, "a single spinning disk sustains about 200 random IOPS"),
    "ssd": (2000, 4000, "Percona's SSD OLTP configuration uses 2000/4000"),
    "nvme": (10000, 20000, "MySQL 8.4's default is 10000; 20000 as a ceiling suits NVMe"),
}
# Workload knobs: connections per CPU, redo size as a fraction of the pool when no write rate is declared.
WORKLOAD_CONNECTIONS_PER_CPU = {"oltp": 50, "read_mostly": 100, "write_heavy": 25}
WORKLOAD_REDO_DIVISOR = {"oltp": 8, "read_mostly": 16, "write_heavy": 4}

# Variables that can be changed with SET GLOBAL; anything not named here or in _dynamic() is static.
_ALWAYS_DYNAMIC = frozenset((
    "innodb_buffer_pool_size", "innodb_redo_log_capacity", "innodb_io_capacity", "innodb_io_capacity_max",
    "innodb_flush_neighbors", "innodb_thread_concurrency", "innodb_flush_log_at_trx_commit", "sync_binlog",
    "max_connections", "table_open_cache", "table_definition_cache", "thread_cache_size", "binlog_format",
    "max_allowed_packet", "sort_buffer_size", "lock_wait_timeout", "group_concat_max_len", "key_buffer_size",
    "innodb_max_undo_log_size", "temptable_max_ram",
))
# Dynamic on MariaDB (10.5+ thread pool rework) but read-only on MySQL.
_MARIADB_DYNAMIC = frozenset(("innodb_read_io_threads", "innodb_write_io_threads", "innodb_purge_threads"))

# How an override's value is read and written: size -> "512M", int -> "200", bool -> ON/OFF, or an enum.
_SIZE_VARS = frozenset((
    "innodb_buffer_pool_size", "innodb_redo_log_capacity", "innodb_log_file_size", "max_allowed_packet",
    "sort_buffer_size", "key_buffer_size", "innodb_max_undo_log_size", "temptable_max_ram",
))
_INT_VARS = {   # name: (minimum, maximum)
    "innodb_buffer_pool_instances": (1, 64), "innodb_log_files_in_group": (2, 100),
    "innodb_io_capacity": (100, 2 ** 64 - 1), "innodb_io_capacity_max": (100, 2 ** 64 - 1),
    "innodb_flush_neighbors": (0, 2), "innodb_thread_concurrency": (0, 1000),
    "innodb_read_io_threads": (1, 64), "innodb_write_io_threads": (1, 64), "innodb_purge_threads": (1, 32),
    "innodb_page_cleaners": (1, 64), "max_connections": (1, 100000), "thread_cache_size": (0, 16384),
    "table_open_cache": (1, 524288), "table_definition_cache": (400, 524288),
    "table_open_cache_instances": (1, 64), "open_files_limit": (0, 2 ** 32 - 1),
    "innodb_flush_log_at_trx_commit": (0, 2), "sync_binlog": (0, 2 ** 32 - 1),
    "lock_wait_timeout": (1, 31536000), "group_concat_max_len": (4, 2 ** 64 - 1),
}
_BOOL_VARS = frozenset(("performance_schema",))
_ENUM_VARS = {
    "binlog_format": ("ROW", "MIXED", "STATEMENT"),
    "innodb_flush_method": ("fsync", "O_DSYNC", "littlesync", "nosync", "O_DIRECT", "O_DIRECT_NO_FSYNC"),
}
_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmg]?)(?:i?b)?\s*$", re.IGNORECASE)
_SIZE_UNITS = {"": 1, "k": KIB, "m": MIB, "g": GIB}


class TuningInputError(ValueError):
    """A fact or an override the engine cannot use; `variable` names the input or override at fault."""

    def __init__(self, variable, message):
        self.variable = variable
        if variable not in message:
            message = "%s: %s" % (variable, message)
        super(TuningInputError, self).__init__(message)


def parse_size(text, variable="size"):
    """'512M', '2G', '1.5G', '1048576', 1048576 -> bytes; K/M/G are powers of 1024 as in my.cnf."""
    if isinstance(text, bool):
        raise TuningInputError(variable, "%s: %r is not a size" % (variable, text))
    if isinstance(text, int):
        number, unit = Fraction(text), ""
    elif isinstance(text, float):
        if math.isnan(text) or math.isinf(text):
            raise TuningInputError(variable, "%s: %r is not a size" % (variable, text))
        number, unit = Fraction(text), ""
    else:
        match = _SIZE_RE.match(str(text))
        if not match:
            raise TuningInputError(variable, "%s: %r is not a size such as 512M, 2G or 1048576" % (variable, text))
        number, unit = Fraction(match.group(1)), match.group(2).lower()
    value = number * _SIZE_UNITS[unit]
    if value < 0:
        raise TuningInputError(variable, "%s: %r is negative" % (variable, text))
    if value.denominator != 1:
        raise TuningInputError(variable, "%s: %r is not a whole number of bytes" % (variable, text))
    return int(value)


def redo_rate_mb_per_hour(bytes_written, seconds):
    """Redo MB (MiB) per hour from bytes written over a sample of `seconds`, rounded up; 0 when idle."""
    if seconds <= 0:
        raise ValueError("a redo sample needs a positive duration, got %r" % seconds)
    return int(math.ceil(bytes_written * 3600.0 / seconds / MIB))


def format_size(size):
    """Bytes -> the shortest exact my.cnf spelling: 2147483648 -> '2G', 1610612736 -> '1536M', 1000 -> '1000'."""
    size = int(size)
    if size < 0:
        raise ValueError("format_size: %d is negative" % size)
    if size == 0:
        return "0"
    for unit, suffix in ((GIB, "G"), (MIB, "M"), (KIB, "K")):
        if size % unit == 0:
            return "%d%s" % (size // unit, suffix)
    return str(size)


def _mib(size):
    """Bytes -> a readable size for reasons (exact when whole, else one decimal in the best unit)."""
    if size % MIB == 0 or size < MIB:
        return format_size(size)
    if size >= GIB:
        return "%.1fG" % (size / GIB)
    return "%.1fM" % (size / MIB)


def _num(value):
    """12288.0 -> '12288', 7.5 -> '7.5'."""
    if float(value).is_integer():
        return "%d" % value
    return ("%.2f" % value).rstrip("0").rstrip(".")


# ---------------------------------------------------------------------------------------------------------------
# Facts


def _int_fact(facts, name, minimum):
    value = facts.get(name)
    if value is None:
        raise TuningInputError(name, "%s is required" % name)
    if isinstance(value, bool):
        raise TuningInputError(name, "%s must be a positive integer, got %r" % (name, value))
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or value < 1:
        raise TuningInputError(name, "%s must be a positive integer, got %r" % (name, value))
    if value < minimum:
        raise TuningInputError(name, "%s must be at least %d, got %d" % (name, minimum, value))
    return value


def _number_fact(facts, name, default=None):
    value = facts.get(name, default)
    if value is None:
        return None
    if isinstance(value, bool):
        raise TuningInputError(name, "%s must be a positive number, got %r" % (name, value))
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise TuningInputError(name, "%s must be a positive number, got %r" % (name, value))
    if math.isnan(number) or math.isinf(number) or number <= 0:
        raise TuningInputError(name, "%s must be a positive number, got %r" % (name, value))
    return int(number) if number.is_integer() else number


def _choice_fact(facts, name, choices, default):
    value = facts.get(name)
    if value is None:
        return default
    if not isinstance(value, str) or value.strip().lower() not in choices:
        raise TuningInputError(name, "%s must be one of %s, got %r" % (name, ", ".join(choices), value))
    return value.strip().lower()


def normalize_facts(facts):
    """Validate the facts and fill in the defaults; the result is what recommend() reports as `inputs`."""
    if not isinstance(facts, dict):
        raise TuningInputError("facts", "facts must be a dict, got %r" % (facts,))
    flavor_name = facts.get("flavor") or "percona"
    if isinstance(flavor_name, str):
        flavor_name = flavor_name.strip().lower()
    if flavor_name not in FLAVORS:
        raise TuningInputError("flavor", "flavor must be one of %s, got %r" % (", ".join(sorted(FLAVORS)), flavor_name))
    family = FLAVORS[flavor_name]["family"]
    version_text = facts.get("version") or FLAVORS[flavor_name]["default_series"]
    try:
        version = plan_version(version_text)
    except FlavorError as err:
        raise TuningInputError("version", "version: %s" % err)
    if version < MIN_VERSION[family]:
        oldest = ".".join(str(part) for part in MIN_VERSION[family])
        raise TuningInputError("version", "version %s of %s is older than the oldest supported, %s"
                               % (version_text, flavor_name, oldest))

    disk = facts.get("disk_type")
    if isinstance(disk, str) and disk.strip().lower() in ("", "unknown"):
        disk = None
    if disk is not None:
        disk = _choice_fact(facts, "disk_type", DISK_TYPES, None)
    dedicated = facts.get("dedicated", True)
    if dedicated is None:
        dedicated = True
    if not isinstance(dedicated, bool):
        raise TuningInputError("dedicated", "dedicated must be true or false, got %r" % (dedicated,))

    rto = _number_fact(facts, "rto_minutes", 15)
    return {
        "memory_mb": _int_fact(facts, "memory_mb", MIN_MEMORY_MB),
        "cpus": _int_fact(facts, "cpus", 1),
        "disk_type": disk,
        "disk_type_assumed": disk or "ssd",
        "redo_mb_per_hour": _number_fact(facts, "redo_mb_per_hour"),
        "rto_minutes": rto,
        "max_redo_mb": int(rto * 1024 // RECOVERY_MIN_PER_GB),
        "workload": _choice_fact(facts, "workload", WORKLOADS, "oltp"),
        "dedicated": dedicated,
        "flavor": flavor_name,
        "family": family,
        "version": ".".join(str(part) for part in version[:2 if version[2] == SERIES_CURRENT else 3]),
        "durability": _choice_fact(facts, "durability", DURABILITY, "durable"),
    }


def plan_version(text):
    """The version tuple a plan is made for: '8.4.3' -> (8, 4, 3); a series '8.4' -> its current releases."""
    version = parse_version(text)
    if len(str(text).split("-", 1)[0].strip().split(".")) == 2:
        version = version[:2] + (SERIES_CURRENT,)
    return version


# ---------------------------------------------------------------------------------------------------------------
# Which variables exist, and which are dynamic


def invalid_variable_reason(name, family, version, flavor=None):
    """Why `name` must not appear in my.cnf for this family (and flavor) and version, or None when it may.

    For the MySQL family the options removed by a release come from mysql_removed_options (a rename there with
    the same meaning is not refused but translated by the plan: see _Plan)."""
    if family == "mysql":
        found = mysql_removed_options.decision(name, "", flavor or "mysql", version)
        if found and found["action"] == "refuse":
            return found["reason"]
        if name == "innodb_redo_log_capacity" and version < (8, 0, 30):
            return "innodb_redo_log_capacity exists from MySQL 8.0.30; use innodb_log_file_size"
        if name in ("innodb_log_file_size", "innodb_log_files_in_group") and version >= (8, 0, 30):
            return ("%s is deprecated since MySQL 8.0.30 (ignored beside innodb_redo_log_capacity) and absent "
                    "from MySQL 9.7; use innodb_redo_log_capacity" % name)
        if name == "innodb_buffer_pool_size_max":
            return "innodb_buffer_pool_size_max is MariaDB-only"
        return None
    if name in ("innodb_buffer_pool_instances", "innodb_page_cleaners", "innodb_thread_concurrency",
                "innodb_log_files_in_group", "innodb_commit_concurrency", "innodb_concurrency_tickets",
                "innodb_thread_sleep_delay"):
        return "%s was removed in MariaDB 10.6 (at most a no-op kept for old my.cnf files)" % name
    if name in ("innodb_file_format", "innodb_large_prefix"):
        return "%s was removed in MariaDB 10.3" % name
    if name in ("innodb_redo_log_capacity", "innodb_dedicated_server", "innodb_log_writer_threads",
                "temptable_max_ram"):
        return "%s is MySQL-only; MariaDB does not know it" % name
    return None


def is_dynamic(name, family, version):
    """True when SET GLOBAL can change `name` at runtime on this family and version (static otherwise)."""
    if name in _ALWAYS_DYNAMIC:
        return True
    if family == "mariadb":
        if name in _MARIADB_DYNAMIC:
            return True
        if name == "innodb_log_file_size":
            return version >= (10, 9, 0)
    return False


# ---------------------------------------------------------------------------------------------------------------
# Overrides


def _normalize_override_name(name):
    if not isinstance(name, str):
        raise TuningInputError(str(name), "override names must be strings, got %r" % (name,))
    norm = name.strip().lower().replace("-", "_")
    if not _NAME_RE.match(norm):
        raise TuningInputError(name, "%r is not a server variable name" % (name,))
    return norm


def _parse_override(name, value):
    """(my.cnf text, parsed value) of an override, or TuningInputError naming it."""
    if value is None or isinstance(value, (dict, list, tuple, set)):
        raise TuningInputError(name, "override %s must be a scalar value, got %r" % (name, value))
    if name in _SIZE_VARS or name.endswith("_size") or name.endswith("_capacity"):
        size = parse_size(value, name)
        return format_size(size), size
    if name in _INT_VARS:
        text = str(value).strip()
        if isinstance(value, bool) or not re.match(r"^\d+$", text):
            raise TuningInputError(name, "override %s must be a whole number, got %r" % (name, value))
        number = int(text)
        low, high = _INT_VARS[name]
        if not low <= number <= high:
            raise TuningInputError(name, "override %s=%d is outside %d..%d" % (name, number, low, high))
        return str(number), number
    if name in _BOOL_VARS:
        text = str(value).strip().lower()
        if value is True or text in ("on", "true", "yes", "1"):
            return "ON", True
        if value is False or text in ("off", "false", "no", "0"):
            return "OFF", False
        raise TuningInputError(name, "override %s must be ON or OFF, got %r" % (name, value))
    if name in _ENUM_VARS:
        for choice in _ENUM_VARS[name]:
            if str(value).strip().lower() == choice.lower():
                return choice, choice
        raise TuningInputError(name, "override %s must be one of %s, got %r" % (
            name, ", ".join(_ENUM_VARS[name]), value))
    if isinstance(value, bool):
        return ("ON" if value else "OFF"), value
    text = str(value)
    if "\n" in text or "\r" in text or not text.strip():
        raise TuningInputError(name, "override %s must be one non-empty line, got %r" % (name, value))
    return text.strip(), text.strip()


class _Plan:
    """Collects settings in order; an override replaces a derived value and later rules see the override."""

    def __init__(self, inputs, overrides):
        self.inputs = inputs
        self.family = inputs["family"]
        self.version = plan_version(inputs["version"])
        self.settings = {}
        self.warnings = []
        self.omitted = {}
        self.overrides = {}
        self.translated = {}    # new name: (the override's name as given, why)
        for raw_name, value in (overrides or {}).items():
            name = _normalize_override_name(raw_name)
            invalid = invalid_variable_reason(name, self.family, self.version, inputs["flavor"])
            if not invalid and self.family == "mysql":
                found = mysql_removed_options.decision(name, value, inputs["flavor"], self.version)
                if found and found["action"] == "refuse":
                    invalid = found["reason"]
                elif found:
                    self.translated[found["to"]] = (name, found["reason"])
                    self.warnings.append("override %s is written as %s: %s" % (name, found["to"], found["reason"]))
                    name = found["to"]
            if invalid:
                raise TuningInputError(name, "override %s is not valid for %s %s: %s" % (
                    name, inputs["flavor"], inputs["version"], invalid))
            if name in self.overrides:
                raise TuningInputError(name, "override %s is given twice (as %r and another spelling)"
                                       % (name, raw_name))
            self.overrides[name] = _parse_override(name, value)

    def _override_reason(self, name):
        if name in self.translated:
            given, why = self.translated[name]
            return "override by user as %s (%s)" % (given, why)
        return "override by user"

    def overridden(self, name):
        """The parsed override value of `name`, or None."""
        entry = self.overrides.get(name)
        return entry[1] if entry else None

    def add(self, name, text, parsed, reason):
        """Record a derived setting (or the user's override of it); return the value later rules should use."""
        if name in self.overrides:
            over_text, over_parsed = self.overrides.pop(name)
            self.settings[name] = {
                "value": over_text, "source": "override", "dynamic": is_dynamic(name, self.family, self.version),
                "section": "mysqld",
                "reason": "%s; derived value was %s (%s)" % (self._override_reason(name), text, reason.rstrip(".")),
            }
            return over_parsed
        self.settings[name] = {"value": text, "source": "derived", "reason": reason,
                               "dynamic": is_dynamic(name, self.family, self.version), "section": "mysqld"}
        return parsed

    def skip(self, name, reason):
        self.omitted[name] = reason

    def add_remaining_overrides(self):
        """Overrides of variables no rule derives: passed through as given (static unless known dynamic)."""
        for name in list(self.overrides):
            text, dummy = self.overrides.pop(name)
            self.settings[name] = {
                "value": text, "source": "override", "section": "mysqld",
                "dynamic": is_dynamic(name, self.family, self.version),
                "reason": "%s; no rule derives %s for %s %s, so it is passed through as given" % (
                    self._override_reason(name), name, self.inputs["flavor"], self.inputs["version"]),
            }


# ---------------------------------------------------------------------------------------------------------------
# Rules


def _buffer_pool(plan):
    """innodb_buffer_pool_size and (MySQL family) innodb_buffer_pool_instances; returns the pool in bytes."""
    inputs = plan.inputs
    memory = inputs["memory_mb"] * MIB
    ratio, why = (0.5, "50% at or below 4 GiB") if inputs["memory_mb"] <= 4096 else (0.75, "75% above 4 GiB")
    raw = int(memory * ratio)
    share = "dedicated host"
    if not inputs["dedicated"]:
        raw //= 2
        share = "shared host, half of the dedicated share"
    mysql_family = plan.family == "mysql"

    override = plan.overridden("innodb_buffer_pool_size")
    if override is not None:
        if override > memory:
            raise TuningInputError("innodb_buffer_pool_size", "override innodb_buffer_pool_size=%s is larger than "
                                   "the host's memory_mb=%d" % (format_size(override), inputs["memory_mb"]))
        if override < 5 * MIB:
            raise TuningInputError("innodb_buffer_pool_size", "override innodb_buffer_pool_size=%s is below "
                                   "InnoDB's minimum of 5M" % format_size(override))

    sizing_base = override if override is not None else raw
    if sizing_base < GIB:
        instances = 1
        inst_reason = ("1 instance because the %s pool is below 1 GiB (InnoDB ignores more)" % _mib(sizing_base))
    else:
        instances = max(1, min(MAX_INSTANCES, inputs["cpus"], sizing_base // GIB))
        inst_reason = ("one instance per GiB of the %s pool and per CPU (%d), at most %d: %d instances reduce "
                       "contention on the pool's mutexes" % (_mib(sizing_base), inputs["cpus"], MAX_INSTANCES,
                                                             instances))
    unit_instances = plan.overridden("innodb_buffer_pool_instances") if mysql_family else None
    unit_instances = unit_instances or (instances if mysql_family else 1)
    unit = CHUNK * unit_instances
    pool = max(CHUNK, raw // unit * unit)
    if mysql_family:
        rounding = "rounded down to a multiple of 128M chunks x %d instances (%s) as InnoDB sizes the pool" % (
            unit_instances, format_size(unit))
    else:
        rounding = "rounded down to a multiple of 128M"
    reason = ("%s with %d MiB RAM: %s (MySQL's innodb_dedicated_server split, leaving the rest to the OS and "
              "per-connection memory) = %s, %s" % (share, inputs["memory_mb"], why if inputs["dedicated"] else
                                                   why + " then halved", _mib(raw), rounding))
    effective = plan.add("innodb_buffer_pool_size", format_size(pool), pool, reason)
    if override is not None and mysql_family and effective % unit:
        plan.warnings.append("innodb_buffer_pool_size=%s is not a multiple of 128M x %d instances: InnoDB rounds it "
                             "up to the next multiple of %s" % (format_size(effective), unit_instances,
                                                                format_size(unit)))

    if mysql_family:
        plan.add("innodb_buffer_pool_instances", str(instances), instances, inst_reason)
    else:
        plan.skip("innodb_buffer_pool_instances", "MariaDB 10.6+ has a single buffer pool; the variable was removed")
    return effective


def _redo(plan, pool):
    """The redo log size by log cycle time and RTO, under the variable name the flavor and version use."""
    inputs = plan.inputs
    rate = inputs["redo_mb_per_hour"]
    rto = inputs["rto_minutes"]
    cap = inputs["max_redo_mb"] * MIB
    cap_text = "RTO %s min allows at most %s of redo at ~%d min of crash recovery per GB" % (
        _num(rto), _mib(cap), RECOVERY_MIN_PER_GB)
    if cap < 8 * MIB:
        raise TuningInputError("rto_minutes", "rto_minutes=%s allows less than 8M of redo, below InnoDB's minimum"
                               % _num(rto))
    if rate is not None:
        min_needed = int(rate * MIB * MIN_CYCLE_MIN / 60)
        if min_needed > cap:
            raise TuningInputError("rto_minutes", (
                "rto_minutes=%s cannot be met: it allows at most %s of redo (about %d minutes of crash recovery per GB), "
                "but %d minutes of writes at %s MB/hour already need %s; raise rto_minutes to at least %d or lower "
                "the write rate") % (_num(rto), _mib(cap), RECOVERY_MIN_PER_GB, MIN_CYCLE_MIN, _num(rate),
                                     _mib(min_needed), -(-min_needed * RECOVERY_MIN_PER_GB // GIB) or 1))
        wanted = _round_up(int(rate * MIB * TARGET_CYCLE_MIN / 60), 64 * MIB)
        size = max(wanted, REDO_FLOOR)
        if size > cap:
            size = cap // MIB * MIB
            cycle = size / (rate * MIB) * 60
            reason = ("one log cycle should hold an hour of writes (%s MB/hour = %s), but the %s: capped at %s, "
                      "a log cycle of %s min" % (_num(rate), _mib(wanted), cap_text, _mib(size), _num(round(cycle, 1))))
        else:
            cycle = size / (rate * MIB) * 60
            floor_note = " (raised to the %s floor)" % _mib(REDO_FLOOR) if wanted < REDO_FLOOR else ""
            reason = ("a log cycle of at least an hour of writes: %s MB/hour x 1 h = %s%s, a log cycle of %s min, "
                      "within the %s" % (_num(rate), _mib(wanted), floor_note, _num(round(cycle, 1)), cap_text))
    else:
        divisor = WORKLOAD_REDO_DIVISOR[inputs["workload"]]
        base = _round_up(pool // divisor, 64 * MIB)
        size = min(max(base, REDO_FLOOR), REDO_DEFAULT_MAX)
        capped = ""
        if size > cap:
            size = cap // MIB * MIB
            capped = ", capped because the %s" % cap_text
        reason = ("no redo_mb_per_hour declared: 1/%d of the %s buffer pool (%s workload) kept within %s-%s%s; "
                  "declare redo_mb_per_hour to size it by log cycle time (at least 15 min, ideally 1 h)" % (
                      divisor, _mib(pool), inputs["workload"], _mib(REDO_FLOOR), _mib(REDO_DEFAULT_MAX), capped))
        plan.warnings.append("redo log sized from the buffer pool: declare redo_mb_per_hour (the measured redo write "
                             "rate) so the redo log is sized for a log cycle of at least 15 minutes, ideally an hour")
    if size > REDO_CEILING:
        size = REDO_CEILING
        reason += "; limited to %s, the largest innodb_redo_log_capacity MySQL 8.0 accepts" % _mib(REDO_CEILING)

    if plan.family == "mysql" and plan.version >= (8, 0, 30):
        variable = "innodb_redo_log_capacity"
        effective = plan.add(variable, format_size(size), size, reason)
        plan.skip("innodb_log_file_size", "deprecated since MySQL 8.0.30 and absent from 9.7: "
                                          "innodb_redo_log_capacity sizes the redo log")
        plan.skip("innodb_log_files_in_group", "deprecated since MySQL 8.0.30 and absent from 9.7")
    elif plan.family == "mysql":
        variable = "innodb_log_file_size"
        files = 2
        per_file = _round_up(size // files, MIB)
        effective = plan.add("innodb_log_file_size", format_size(per_file), per_file,
                             "total redo %s split over %d files (MySQL before 8.0.30 sizes the redo log per file): %s"
                             % (_mib(size), files, reason))
        files_eff = plan.add("innodb_log_files_in_group", str(files), files,
                             "the redo log is innodb_log_file_size x innodb_log_files_in_group; %d files, "
                             "InnoDB's default, so only the file size carries the rule" % files)
        effective *= files_eff
    else:
        variable = "innodb_log_file_size"
        effective = plan.add(variable, format_size(size), size,
                             "MariaDB 10.5+ keeps the redo log in one file: %s" % reason)
        plan.skip("innodb_log_files_in_group", "removed in MariaDB 10.6: the redo log is one file")
    if effective > cap and plan.settings[variable]["source"] == "override":
        plan.warnings.append("the redo log override (%s in total) exceeds the %s: crash recovery may take about "
                             "%d min" % (_mib(effective), cap_text, effective * RECOVERY_MIN_PER_GB // GIB))
    return effective


def _round_up(value, unit):
    return -(-value // unit) * unit


def _durability(plan):
    profile = plan.inputs["durability"]
    if profile == "durable":
        plan.add("innodb_flush_log_at_trx_commit", "1", 1,
                 "durable profile: write and fsync the redo log at every commit so no acknowledged transaction is "
                 "lost on an OS crash or power failure")
        plan.add("sync_binlog", "1", 1,
                 "durable profile: fsync the binary log at every commit so replicas never hold transactions the "
                 "source lost; measured at about 30% of 5.7's throughput on plain SSD, little on "
                 "storage with a protected write cache")
    elif profile == "relaxed":
        plan.add("innodb_flush_log_at_trx_commit", "2", 2,
                 "relaxed profile: write the redo log at commit but fsync it once a second, so an OS crash or power "
                 "failure can lose up to ~1 s of acknowledged transactions (a mysqld crash alone loses none)")
        plan.add("sync_binlog", "1000", 1000,
                 "relaxed profile: fsync the binary log every 1000 commits, so after a power failure the binlog may "
                 "lag InnoDB and replicas may need rebuilding; sync_binlog=100 already regained most of the "
                 "~30% that sync_binlog=1 costs")
    else:
        plan.add("innodb_flush_log_at_trx_commit", "0", 0,
                 "ephemeral profile, for disposable or benchmark data only: the redo log is written and flushed "
                 "about once a second, so even a mysqld crash can lose ~1 s of transactions")
        plan.add("sync_binlog", "0", 0,
                 "ephemeral profile, for disposable or benchmark data only: the OS decides when the binary log "
                 "reaches disk")
        plan.warnings.append("durability=ephemeral: committed transactions can be lost on any crash; use it only for "
                             "data you can recreate")


def _io(plan):
    inputs = plan.inputs
    disk = inputs["disk_type_assumed"]
    capacity, capacity_max, source = IO_CAPACITY[disk]
    if inputs["disk_type"] is None:
        disk_text = "disk type unknown, assumed ssd (declare disk_type)"
        plan.warnings.append("disk_type unknown: I/O settings assume an SSD; declare disk_type (hdd, ssd or nvme)")
    else:
        disk_text = "%s disk" % disk

    if plan.family == "mysql":
        plan.add("innodb_flush_method", "O_DIRECT", "O_DIRECT",
                 "O_DIRECT keeps data pages out of the OS page cache (no double buffering) and still fsyncs; not "
                 "O_DIRECT_NO_FSYNC, which skips fsync after writes and is only safe where the "
                 "filesystem's metadata and the device cache survive power loss")
    else:
        plan.skip("innodb_flush_method", "deprecated in MariaDB 11.0 and already O_DIRECT by default since 10.6")
        plan.warnings.append("innodb_flush_method is left unset on MariaDB: it is deprecated there (replaced by "
                             "innodb_data_file_buffering and friends) and its default since 10.6 is already O_DIRECT")

    io_cap = plan.add("innodb_io_capacity", str(capacity), capacity,
                      "%s: %d background flush IOPS (%s)" % (disk_text, capacity, source))
    cap_max = max(capacity_max, 2 * io_cap)
    note = "" if cap_max == capacity_max else ", raised to twice innodb_io_capacity=%d" % io_cap
    cap_max = plan.add("innodb_io_capacity_max", str(cap_max), cap_max,
                       "%s: up to %d IOPS when flushing falls behind (%s)%s" % (disk_text, capacity_max, source, note))
    if cap_max < io_cap:
        raise TuningInputError("innodb_io_capacity_max", "innodb_io_capacity_max=%d is below innodb_io_capacity=%d"
                               % (cap_max, io_cap))
    if disk == "hdd":
        plan.add("innodb_flush_neighbors", "1", 1,
                 "%s: flush neighbouring dirty pages of an extent together, which saves seeks on spinning disks"
                 % disk_text)
    else:
        plan.add("innodb_flush_neighbors", "0", 0,
                 "%s: no seek to save, so flushing neighbouring pages only adds writes"
                 % disk_text)


def _threads(plan, instances):
    inputs = plan.inputs
    cpus = inputs["cpus"]
    workload = inputs["workload"]
    if plan.family == "mysql":
        plan.add("innodb_thread_concurrency", "0", 0,
                 "0 lets InnoDB schedule threads itself without an admission queue; a fixed limit "
                 "only pays off when it matches the hardware threads exactly")
    else:
        plan.skip("innodb_thread_concurrency", "removed in MariaDB 10.6")
    read = max(4, min(16, cpus // 2))
    plan.add("innodb_read_io_threads", str(read), read,
             "half the %d CPUs, within 4-16: with native AIO a few threads complete all reads" % cpus)
    if workload == "write_heavy":
        write, why = read, "as many as read threads for a write-heavy workload"
    else:
        write, why = max(4, min(16, cpus // 4)), "a quarter of the %d CPUs, within 4-16" % cpus
    plan.add("innodb_write_io_threads", str(write), write, why + ", for page flushing")
    if workload == "write_heavy":
        purge, why = max(2, min(8, cpus // 2)), "half the %d CPUs within 2-8 for a write-heavy workload" % cpus
    elif workload == "read_mostly":
        purge, why = (1 if cpus <= 4 else 2), "1-2 for a read-mostly workload that leaves little undo"
    else:
        purge, why = max(1, min(4, cpus // 4)), "a quarter of the %d CPUs within 1-4" % cpus
    plan.add("innodb_purge_threads", str(purge), purge, why + ", so history purge keeps up")
    if plan.family == "mysql":
        cleaners = max(1, min(instances, cpus, 16))
        plan.add("innodb_page_cleaners", str(cleaners), cleaners,
                 "one per buffer pool instance (%d), at most one per CPU (%d) and 16"
                 % (instances, cpus))
    else:
        plan.skip("innodb_page_cleaners", "removed in MariaDB 10.6 (one page cleaner thread)")


def _connections(plan, pool):
    inputs = plan.inputs
    memory = inputs["memory_mb"] * MIB
    cpus = inputs["cpus"]
    per_cpu = WORKLOAD_CONNECTIONS_PER_CPU[inputs["workload"]]
    target = min(MAX_CONNECTIONS_CAP, max(151, cpus * per_cpu))
    if inputs["dedicated"]:
        reserve = max(256 * MIB, min(4 * GIB, memory // 20))
        budget = max(0, memory - pool - reserve)
        budget_text = "(%s RAM - %s buffer pool - %s for the OS and server overhead)" % (
            _mib(memory), _mib(pool), _mib(reserve))
    else:
        budget = max(0, memory // 2 - pool)
        budget_text = "(half of %s RAM on a shared host - %s buffer pool)" % (_mib(memory), _mib(pool))
    by_memory = budget // PER_CONNECTION
    value = max(20, min(target, by_memory))
    reason = ("the smaller of the %s target max(151, %d CPUs x %d) = %d and the memory budget %s / %s per "
              "connection = %d" % (inputs["workload"], cpus, per_cpu, target, budget_text, _mib(PER_CONNECTION),
                                   by_memory))
    if by_memory < 20:
        reason += ", but at least 20"
        plan.warnings.append("memory is tight: after the buffer pool only %s is left for connections (%d at %s each); "
                             "max_connections is held at 20" % (_mib(budget), by_memory, _mib(PER_CONNECTION)))
    connections = plan.add("max_connections", str(value), value, reason)
    if connections * PER_CONNECTION > budget and plan.settings["max_connections"]["source"] == "override":
        plan.warnings.append("max_connections=%d at %s each needs %s, more than the %s left after the buffer pool"
                             % (connections, _mib(PER_CONNECTION), _mib(connections * PER_CONNECTION), _mib(budget)))

    cached = max(8, min(100, connections // 4))
    plan.add("thread_cache_size", str(cached), cached,
             "a quarter of max_connections=%d within 8-100, so reconnect bursts reuse threads (MySQL autosizes "
             "8 + max_connections/100, MariaDB min(256, max_connections))" % connections)
    tables = max(2000, min(8000, connections * 4))
    per_instance = " per cache instance on MariaDB" if plan.family == "mariadb" else ""
    tables = plan.add("table_open_cache", str(tables), tables,
                      "4 open tables per connection (%d x 4) within 2000-8000%s"
                      % (connections, per_instance))
    definitions = min(2000, 400 + tables // 2)
    plan.add("table_definition_cache", str(definitions), definitions,
             "MySQL's own sizing 400 + table_open_cache/2 = %d, at most 2000, pinned so both flavors agree "
             "(MariaDB defaults to 400)" % (400 + tables // 2))
    if plan.family == "mysql":
        cache_instances = min(16, cpus)
        why = ("min(16, %d CPUs): the table cache split into one partition per CPU, at most MySQL's default 16, "
               "reduces LOCK_open contention" % cpus)
    else:
        cache_instances = min(8, cpus)
        why = ("min(8, %d CPUs): at most one table cache instance per CPU and MariaDB's default 8; MariaDB adds "
               "instances only under contention" % cpus)
    cache_instances = plan.add("table_open_cache_instances", str(cache_instances), cache_instances, why)
    if plan.family == "mysql":
        needed = max(10 + connections + 2 * tables, 5 * connections)
        formula = "MySQL's need max(10 + max_connections + 2 x table_open_cache, 5 x max_connections)"
    else:
        needed = 2 * tables * cache_instances + connections + 33
        formula = ("MariaDB's need 2 x table_open_cache x table_open_cache_instances + max_connections + 33 "
                   "(it lowers the cache instances when the limit is smaller)")
    # Not emitted: the server derives the limit itself and never goes below the descriptors its service
    # already grants (measured on MySQL 9.7: asked for 5000 under LimitNOFILE=10000, it ran with 10000), so a
    # configured value would only ever disagree with the running one. What matters is that the service allows
    # the need.
    plan.skip("open_files_limit",
              "%s = %d: the server derives it; the service's LimitNOFILE must allow it" % (formula, needed))
    if needed > SERVICE_NOFILE[plan.family]:
        plan.warnings.append(
            "open files needed: %d, more than the %d descriptors the packaged service allows: raise LimitNOFILE "
            "in a systemd drop-in" % (needed, SERVICE_NOFILE[plan.family]))


# File descriptors the distributions' units grant the server (LimitNOFILE in mysql.service, mariadb.service).
SERVICE_NOFILE = {"mysql": 10000, "mariadb": 32768}


def _pinned_defaults(plan):
    """Explicit values where MySQL and MariaDB defaults differ, so both flavors behave alike."""
    if plan.family == "mariadb" or plan.version < (8, 0, 34):
        plan.add("binlog_format", "ROW", "ROW",
                 "row-based binary logging is deterministic for replication and Galera; MariaDB defaults to MIXED "
                 "(MySQL 5.7.7+ to ROW)")
    else:
        plan.skip("binlog_format", "deprecated since MySQL 8.0.34, where ROW is the default and the only future")
    plan.add("max_allowed_packet", "64M", 64 * MIB,
             "64M, MySQL 8.0's default, pinned because MariaDB defaults to 16M and MySQL 5.7 to 4M, so large rows "
             "replicate between any of them")
    plan.add("sort_buffer_size", "256K", 256 * KIB,
             "256K (MySQL's default) instead of MariaDB's 2M: it is allocated per sort, and the per-connection budget "
             "assumes it")
    plan.add("lock_wait_timeout", "86400", 86400,
             "one day (MariaDB's default) instead of MySQL's one year, so a DDL stuck on a metadata lock fails "
             "instead of queueing sessions behind it for good")
    plan.add("group_concat_max_len", str(MIB), MIB,
             "1M (MariaDB's default) instead of MySQL's 1K, which silently truncates GROUP_CONCAT lists such as "
             "lists of row ids")
    plan.add("key_buffer_size", "8M", 8 * MIB,
             "8M (MySQL's default) instead of MariaDB's 128M: the MyISAM key cache is idle on an InnoDB server")
    plan.add("innodb_max_undo_log_size", "1G", GIB,
             "1G (MySQL's default) instead of MariaDB's 10M, the size at which an undo tablespace is truncated")
    plan.add("performance_schema", "ON", True,
             "ON with its default instruments (MariaDB defaults to OFF): its default overhead is "
             "small, the costly waits instruments stay off by default")


def _temptable(plan):
    """temptable_max_ram from the declared memory (MySQL 8.0+): the server's own default follows the machine."""
    if plan.family != "mysql":
        plan.skip("temptable_max_ram", "MySQL-only; MariaDB's in-memory temporary tables are bounded per table "
                                       "by tmp_memory_table_size")
        return
    if plan.version < (8, 0, 0):
        plan.skip("temptable_max_ram", "the TempTable engine exists from MySQL 8.0")
        return
    memory = plan.inputs["memory_mb"] * MIB
    server_rule = min(4 * GIB, max(GIB, memory * 3 // 100 // MIB * MIB))
    share = memory // TEMPTABLE_SHARE // MIB * MIB
    size = min(server_rule, share)
    plan.add("temptable_max_ram", format_size(size), size,
             "1/%d of %s RAM = %s, at most MySQL 8.4's own rule for that memory (3%%, within 1G-4G) = %s: the "
             "server's default (1G in 8.0, 3%% of the machine's RAM within 1G-4G from 8.4) ignores a container's "
             "limit, and 1G of TempTable beside a 1G buffer pool got mysqld OOM-killed at 2 GiB (sysbench prewarm's "
             "8 parallel derived tables)" % (TEMPTABLE_SHARE, _mib(memory), _mib(share), _mib(server_rule)))


def recommend(facts, overrides=None):
    """Derive the [mysqld] settings for `facts` (see normalize_facts); `overrides` {name: value} win."""
    inputs = normalize_facts(facts)
    if overrides is not None and not isinstance(overrides, dict):
        raise TuningInputError("overrides", "overrides must be a dict of variable: value, got %r" % (overrides,))
    plan = _Plan(inputs, overrides)
    if not inputs["dedicated"]:
        plan.warnings.append("dedicated=false: the buffer pool is half the dedicated size and connections get "
                             "half the RAM; the rest is left to the host's other services")
    pool = _buffer_pool(plan)
    instances = 1
    if "innodb_buffer_pool_instances" in plan.settings:
        instances = int(plan.settings["innodb_buffer_pool_instances"]["value"])
    _redo(plan, pool)
    _durability(plan)
    _io(plan)
    _threads(plan, instances)
    _connections(plan, pool)
    _pinned_defaults(plan)
    _temptable(plan)
    plan.add_remaining_overrides()
    return {"settings": plan.settings, "inputs": inputs, "warnings": plan.warnings, "omitted": plan.omitted,
            "translated": dict((given, new) for new, (given, dummy) in plan.translated.items())}


# ---------------------------------------------------------------------------------------------------------------
# Rendering


def _one_line(text):
    return " ".join(str(text).split())


def _cnf_value(value):
    text = str(value)
    if "#" in text or ";" in text or text != text.strip() or " " in text:
        return '"%s"' % text.replace("\\", "\\\\").replace('"', '\\"')
    return text


def render_mycnf(result):
    """The settings as my.cnf text: a header, then each section with a '# reason' line before every setting."""
    inputs = result.get("inputs", {})
    lines = ["# Rendered by dbops.clusters mysql_tuning for %s %s: %s MiB RAM, %s CPUs, disk %s, workload %s, "
             "durability %s." % (inputs.get("flavor"), inputs.get("version"), inputs.get("memory_mb"),
                                 inputs.get("cpus"), inputs.get("disk_type") or "unknown (assumed ssd)",
                                 inputs.get("workload"), inputs.get("durability"))]
    for warning in result.get("warnings", []):
        lines.append("# warning: %s" % _one_line(warning))
    sections = []
    for setting in result["settings"].values():
        if setting.get("section", "mysqld") not in sections:
            sections.append(setting.get("section", "mysqld"))
    for section in sections:
        lines.append("")
        lines.append("[%s]" % section)
        for name, setting in result["settings"].items():
            if setting.get("section", "mysqld") != section:
                continue
            lines.append("# %s" % _one_line(setting["reason"]))
            lines.append("%s = %s" % (name, _cnf_value(setting["value"])))
    return "\n".join(lines) + "\n"
