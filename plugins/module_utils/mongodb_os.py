# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The vendor's operating-system settings for mongod, as pure functions: what MongoDB documents for a release
and an architecture, how to read the kernel's files, how to judge a current value against the desired one, and
which resource limits a service can really get on this host. No I/O here; mongodb_os_settings does it.

Sources (MongoDB manual):
- TCMALLOC_80: 8.0's TCMalloc uses per-CPU caches; enable THP before mongod starts (enabled=always,
  defrag=defer+madvise, khugepaged/max_ptes_none=0, vm.overcommit_memory=1 in the documented unit), except on
  the architectures that keep the legacy TCMalloc (ppc64le, s390x), which disable THP; per-CPU caches need
  glibc's rseq left to TCMalloc (GLIBC_TUNABLES=glibc.pthread.rseq=0).
- THP_70: 7.0 and earlier: disable THP (enabled=never; defrag=never as the older unit did).
- ULIMIT: -f, -t, -v, -m unlimited; -n 64000; -u 64000; MongoDB's packaged mongod.service sets LimitFSIZE,
  LimitCPU, LimitAS, LimitMEMLOCK to infinity, LimitNOFILE and LimitNPROC to 64000, TasksMax=infinity.
- CHECKLIST: readahead 8 to 32 sectors for WiredTiger; fs.file-max 98000, kernel.pid_max 64000,
  kernel.threads-max 64000, vm.max_map_count 102400 as a starting point for large systems; swappiness;
  NUMA: vm.zone_reclaim_mode=0 and mongod under numactl --interleave=all.
- NOTES: swap and vm.swappiness (1 or 0), TCP keepalive of 120 s, NUMA.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

TCMALLOC_80 = "https://www.mongodb.com/docs/v8.0/administration/tcmalloc-performance/"
THP_70 = "https://www.mongodb.com/docs/v7.0/tutorial/transparent-huge-pages/"
ULIMIT = "https://www.mongodb.com/docs/manual/reference/ulimit/"
CHECKLIST = "https://www.mongodb.com/docs/manual/administration/production-checklist-operations/"
NOTES = "https://www.mongodb.com/docs/manual/administration/production-notes/"

LEGACY_TCMALLOC_ARCHITECTURES = ("ppc64le", "s390x")
THP_DIR = "/sys/kernel/mm/transparent_hugepage"
INFINITY = "infinity"

# systemd resource limit -> the line of /proc/PID/limits it sets
PROC_LIMIT_NAMES = {
    "LimitCPU": "Max cpu time",
    "LimitFSIZE": "Max file size",
    "LimitAS": "Max address space",
    "LimitMEMLOCK": "Max locked memory",
    "LimitNOFILE": "Max open files",
    "LimitNPROC": "Max processes",
}
CAP_SYS_RESOURCE = 24


class OsSettingsError(Exception):
    """An input the rules cannot judge (an unknown release, a malformed limit)."""


def release_of(version):
    """'8.0' from '8.0.4', '1:8.0.4-1', 'mongodb-double_8.0.0_all.deb' or '8.0'; None when none is found."""
    text = str(version or "")
    if ":" in text:
        text = text.split(":", 1)[1]
    for part in text.replace("_", " ").replace("-", " ").split():
        pieces = part.split(".")
        if len(pieces) >= 2 and pieces[0].isdigit() and pieces[1].isdigit():
            return "%s.%s" % (pieces[0], pieces[1])
    return None


def uses_new_tcmalloc(release, architecture):
    major = int(release.split(".")[0])
    return major >= 8 and architecture not in LEGACY_TCMALLOC_ARCHITECTURES


def recommended(release, architecture):
    """The documented settings for mongod of `release` on `architecture` (ansible_architecture), each with its
    reason and source: {"thp": {...}, "sysctl": [...], "limits": {...}, "environment": {...},
    "readahead_sectors": {...}}."""
    if release_of(release) != release:
        raise OsSettingsError("release must look like 7.0 or 8.0, got %r" % (release,))
    if uses_new_tcmalloc(release, architecture):
        thp = {"enabled": "always", "defrag": "defer+madvise", "max_ptes_none": 0, "source": TCMALLOC_80,
               "reason": "MongoDB %s's TCMalloc uses per-CPU caches: THP enabled before mongod starts" % release}
        environment = {"GLIBC_TUNABLES": {"value": "glibc.pthread.rseq=0", "source": TCMALLOC_80,
                                          "reason": "per-CPU caches need rseq, which glibc 2.35+ registers for itself otherwise"}}
        extra = [{"name": "vm.overcommit_memory", "value": 1, "compare": "exact", "source": TCMALLOC_80,
                  "reason": "set by the manual's enable-THP unit for %s" % release}]
    else:
        why = ("MongoDB %s (7.0 and earlier) performs better without THP" % release if not release.startswith("8")
               else "MongoDB %s keeps the legacy TCMalloc on %s: disable THP" % (release, architecture))
        thp = {"enabled": "never", "defrag": "never", "max_ptes_none": None,
               "source": THP_70 if not release.startswith("8") else TCMALLOC_80, "reason": why}
        environment = {}
        extra = []
    sysctl = extra + [
        {"name": "vm.swappiness", "value": 1, "compare": "exact", "source": NOTES,
         "reason": "swapping kept to a minimum (the notes accept 1 or 0)"},
        {"name": "vm.zone_reclaim_mode", "value": 0, "compare": "exact", "source": NOTES,
         "reason": "NUMA: zone reclaim off"},
        {"name": "vm.max_map_count", "value": 102400, "compare": "min", "source": CHECKLIST,
         "reason": "memory map areas per process, starting point for large systems"},
        {"name": "fs.file-max", "value": 98000, "compare": "min", "source": CHECKLIST,
         "reason": "file handles, starting point for large systems"},
        {"name": "kernel.pid_max", "value": 64000, "compare": "min", "source": CHECKLIST,
         "reason": "kernel pid limit, starting point for large systems"},
        {"name": "kernel.threads-max", "value": 64000, "compare": "min", "source": CHECKLIST,
         "reason": "threads, starting point for large systems"},
        {"name": "net.ipv4.tcp_keepalive_time", "value": 120, "compare": "max", "source": NOTES,
         "reason": "keepalive of 120 s or less between replica set members and clients"},
    ]
    limits = {"LimitFSIZE": INFINITY, "LimitCPU": INFINITY, "LimitAS": INFINITY, "LimitMEMLOCK": INFINITY,
              "LimitNOFILE": 64000, "LimitNPROC": 64000}
    return {"thp": thp, "sysctl": sysctl, "environment": environment,
            "limits": dict((name, {"value": value, "source": ULIMIT}) for name, value in limits.items()),
            "readahead_sectors": {"value": 32, "source": CHECKLIST,
                                  "reason": "WiredTiger: readahead between 8 and 32 sectors"}}


def selected(text):
    """The active choice of a THP file: 'always [madvise] never' -> 'madvise'; a plain value as it is."""
    text = (text or "").strip()
    if "[" in text and "]" in text:
        return text[text.index("[") + 1:text.index("]")]
    return text


def satisfied(current, desired, compare="exact"):
    """Whether a current value meets the desired one: exact, min (at least) or max (at most)."""
    if compare == "exact":
        return str(current).strip() == str(desired).strip()
    try:
        current, desired = int(str(current).strip()), int(desired)
    except ValueError:
        return False
    return current >= desired if compare == "min" else current <= desired


def persisted_value(current, desired, compare):
    """The value to keep in sysctl.d: the desired one, or the current one when it already satisfies a min/max
    rule (never lowering a larger kernel default such as fs.file-max)."""
    if compare != "exact" and current is not None and satisfied(current, desired, compare):
        return int(str(current).strip())
    return desired


def sysctl_path(name):
    return "/proc/sys/" + name.replace(".", "/")


def limit_number(value):
    """An int, or None for infinity/unlimited."""
    text = str(value).strip().lower()
    if text in (INFINITY, "unlimited"):
        return None
    if not text.isdigit():
        raise OsSettingsError("a limit must be a number or infinity, got %r" % (value,))
    return int(text)


def parse_proc_limits(text):
    """/proc/PID/limits as {systemd name: (soft, hard)} with None for unlimited."""
    found = {}
    by_label = dict((label, name) for name, label in PROC_LIMIT_NAMES.items())
    for line in (text or "").splitlines():
        for label, name in by_label.items():
            if line.startswith(label):
                fields = line[len(label):].split()
                found[name] = (limit_number(fields[0]), limit_number(fields[1]))
    return found


def has_capability(status_text, bit):
    """Whether the CapEff line of /proc/PID/status has capability `bit`."""
    for line in (status_text or "").splitlines():
        if line.startswith("CapEff:"):
            return bool(int(line.split()[1], 16) >> bit & 1)
    return False


def effective_limits(desired, pid1_limits, pid1_can_raise):
    """The limits a unit of this systemd can really get: {name: {"value", "desired", "capped", "reason"}}.

    systemd sets a service's limits with setrlimit() as PID 1; without CAP_SYS_RESOURCE (a container's systemd)
    it cannot raise a hard limit above its own and quietly gives the closest value it can (setrlimit_closest),
    so a drop-in asking for more would say what the process does not get. A desired value above PID 1's hard
    limit there is capped to it, so the drop-in states the truth, and the cap is reported."""
    out = {}
    for name, wanted in sorted(desired.items()):
        want = limit_number(wanted)
        hard = (pid1_limits.get(name) or (None, None))[1]
        if pid1_can_raise or hard is None or (want is not None and want <= hard):
            out[name] = {"value": wanted, "desired": wanted, "capped": False, "reason": "as documented"}
            continue
        out[name] = {"value": hard, "desired": wanted, "capped": True,
                     "reason": "capped to %s, the hard limit of PID 1 here: systemd without CAP_SYS_RESOURCE (a "
                               "container) cannot raise it and would quietly give that instead of %s"
                               % (hard, wanted)}
    return out


def limit_problems(expected, observed):
    """Differences between the limits a process should have ({name: value}) and /proc/PID/limits'."""
    problems = []
    for name, value in sorted(expected.items()):
        want = limit_number(value)
        if name not in observed:
            problems.append("%s: not in /proc/PID/limits" % name)
            continue
        soft, hard = observed[name]
        if soft != want or hard != want:
            problems.append("%s: the process has %s/%s (soft/hard), expected %s" % (
                name, INFINITY if soft is None else soft, INFINITY if hard is None else hard, value))
    return problems


def readahead_queue(sys_dev_block_entry, is_partition):
    """The queue directory whose read_ahead_kb governs a device: a partition shares its disk's."""
    return sys_dev_block_entry + ("/.." if is_partition else "") + "/queue"


def sectors_to_kb(sectors):
    """blockdev --setra counts 512-byte sectors; read_ahead_kb counts KiB."""
    return int(sectors) // 2
