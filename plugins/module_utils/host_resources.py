# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a database server on this host may use: memory, CPUs and the kind of disk under its data.

Pure functions over the text of /proc and /sys files, so every rule is unit tested without a host.
A container sees the host's whole RAM and CPU count in /proc; the cgroup limits are what bind, and a
declared limit (from the inventory) wins over both. Each answer carries the source it came from.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

# cgroup v1 reports "no limit" as a huge page-aligned number rather than "max".
_CGROUP_V1_UNLIMITED = 1 << 60


def meminfo_total_mb(meminfo_text):
    """MemTotal from /proc/meminfo, in MiB."""
    for line in meminfo_text.splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024
    raise ValueError("no MemTotal line in /proc/meminfo")


def cgroup_memory_limit_mb(v2_max_text=None, v1_limit_text=None):
    """The cgroup memory limit in MiB, or None when unlimited or unknown (v2 memory.max, v1 limit_in_bytes)."""
    if v2_max_text is not None:
        value = v2_max_text.strip()
        if value and value != "max":
            return int(value) // (1024 * 1024)
        return None
    if v1_limit_text is not None:
        value = int(v1_limit_text.strip())
        if value < _CGROUP_V1_UNLIMITED:
            return value // (1024 * 1024)
    return None


def cgroup_cpu_limit(v2_cpu_max_text=None, v1_quota_text=None, v1_period_text=None):
    """CPUs allowed by the cgroup CPU quota (may be fractional), or None when there is no quota."""
    if v2_cpu_max_text is not None:
        quota, dummy, period = v2_cpu_max_text.strip().partition(" ")
        if quota == "max":
            return None
        return int(quota) / int(period or 100000)
    if v1_quota_text is not None and v1_period_text is not None:
        quota = int(v1_quota_text.strip())
        if quota <= 0:
            return None
        return quota / int(v1_period_text.strip())
    return None


def effective_memory(meminfo_mb, cgroup_mb=None, declared_mb=None):
    """(MiB, source, reason) a server on this host may plan for."""
    if declared_mb is not None:
        if declared_mb <= 0:
            raise ValueError("memory_limit_mb must be a positive number of MiB, got %r" % declared_mb)
        return declared_mb, "declared", "declared limit %d MiB (host has %d MiB)" % (declared_mb, meminfo_mb)
    if cgroup_mb is not None and cgroup_mb < meminfo_mb:
        return cgroup_mb, "cgroup", "cgroup memory limit %d MiB is below the host's %d MiB" % (cgroup_mb, meminfo_mb)
    return meminfo_mb, "meminfo", "no limit below the host's MemTotal of %d MiB" % meminfo_mb


def effective_cpus(online_cpus, cgroup_cpus=None, declared_cpus=None):
    """(CPUs as an int >= 1, source, reason)."""
    if declared_cpus is not None:
        if declared_cpus < 1:
            raise ValueError("cpu_limit must be at least 1, got %r" % declared_cpus)
        return declared_cpus, "declared", "declared limit %d CPUs (host has %d)" % (declared_cpus, online_cpus)
    if cgroup_cpus is not None and cgroup_cpus < online_cpus:
        cpus = max(1, int(cgroup_cpus))
        return cpus, "cgroup", "cgroup CPU quota %.2f CPUs (host has %d)" % (cgroup_cpus, online_cpus)
    return online_cpus, "affinity", "%d CPUs available to this process" % online_cpus


def mount_device(mountinfo_text, path):
    """(major:minor, mount point, fstype) of the longest mount point containing path, per /proc/self/mountinfo."""
    best = None
    for line in mountinfo_text.splitlines():
        fields = line.split()
        if len(fields) < 10 or "-" not in fields:
            continue
        mount_point = fields[4].replace("\\040", " ")
        fstype = fields[fields.index("-") + 1]
        inside = path == mount_point or path.startswith(mount_point.rstrip("/") + "/")
        if inside and (best is None or len(mount_point) >= len(best[1])):
            best = (fields[2], mount_point, fstype)
    if best is None:
        raise ValueError("no mount contains %s" % path)
    return best


def disk_kind(device, rotational_text, mount_point, fstype):
    """(rotational: True/False/None, reason) for a data directory's block device."""
    major = device.split(":")[0]
    if major == "0":
        return None, ("%s is on %s (%s), not a block device: the disk type is unknown; declare it "
                      "(disk_type) for the tuning engine" % (mount_point, fstype, device))
    if rotational_text is None:
        return None, "no queue/rotational for device %s: the disk type is unknown" % device
    rotational = rotational_text.strip() == "1"
    return rotational, "device %s under %s reports rotational=%d" % (device, mount_point, int(rotational))


def _read(path):
    try:
        with open(path) as handle:
            return handle.read()
    except (IOError, OSError):
        return None


def rotational_file_text(device, sys_root="/sys"):
    """queue/rotational of a block device, looking at the parent disk for a partition."""
    base = os.path.join(sys_root, "dev", "block", device)
    text = _read(os.path.join(base, "queue", "rotational"))
    if text is None:
        text = _read(os.path.join(base, "..", "queue", "rotational"))
    return text


def gather(path="/var/lib", declared_memory_mb=None, declared_cpus=None, proc_root="/proc", sys_root="/sys"):
    """Read this host and return the resources a database server may use, each with its reason."""
    memory_mb, memory_source, memory_reason = effective_memory(
        meminfo_total_mb(_read(os.path.join(proc_root, "meminfo")) or ""),
        cgroup_memory_limit_mb(_read(os.path.join(sys_root, "fs/cgroup/memory.max")),
                               _read(os.path.join(sys_root, "fs/cgroup/memory/memory.limit_in_bytes"))),
        declared_memory_mb)
    online = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    cpus, cpus_source, cpus_reason = effective_cpus(
        online,
        cgroup_cpu_limit(_read(os.path.join(sys_root, "fs/cgroup/cpu.max")),
                         _read(os.path.join(sys_root, "fs/cgroup/cpu/cpu.cfs_quota_us")),
                         _read(os.path.join(sys_root, "fs/cgroup/cpu/cpu.cfs_period_us"))),
        declared_cpus)
    existing = path
    while not os.path.exists(existing) and existing not in ("/", ""):
        existing = os.path.dirname(existing)
    device, mount_point, fstype = mount_device(_read(os.path.join(proc_root, "self/mountinfo")) or "", existing)
    rotational, disk_reason = disk_kind(device, rotational_file_text(device, sys_root), mount_point, fstype)
    return {
        "memory_mb": memory_mb, "memory_source": memory_source,
        "cpus": cpus, "cpus_source": cpus_source,
        "disk": {"path": path, "device": device, "mount_point": mount_point, "fstype": fstype,
                 "rotational": rotational},
        "reasons": {"memory_mb": memory_reason, "cpus": cpus_reason, "disk": disk_reason},
    }
