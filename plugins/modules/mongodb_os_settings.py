#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: mongodb_os_settings
short_description: Apply and report MongoDB's documented operating-system settings on a host
version_added: 0.1.0
description:
  - Reads the current transparent huge pages settings, the sysctls MongoDB's production notes and operations
    checklist recommend, and the readahead of the block device behind I(path); applies each one that differs
    where the kernel lets this host write it, and reports every one with its current and desired value, what was
    done, the reason and the manual page (C(module_utils/mongodb_os.py) holds the rules per release).
  - THP follows the release - MongoDB 8.0 (new TCMalloc, per-CPU caches) enabled=always, defrag=defer+madvise,
    khugepaged max_ptes_none=0 and vm.overcommit_memory=1; 7.0 and earlier, and 8.0 on ppc64le/s390x (legacy
    TCMalloc), enabled=never and defrag=never.
  - A file on a read-only file system (a container's /sys or /proc/sys) is reported C(read-only), not settable
    here; with I(enforce) that fails the task after everything settable was applied.
  - Computes the service limits a unit can really get (C(limits)) - a systemd without CAP_SYS_RESOURCE cannot
    raise a hard limit above its own and quietly gives the closest value - and, with I(service), compares
    the running service's C(/proc/PID/limits) with them.
  - Returns what the role persists - C(sysctl_persist) for sysctl.d (never lowering a larger kernel default),
    C(thp) and C(readahead_kb) for the boot unit, C(limits) and C(environment) for the service drop-in.
options:
  release:
    description: The MongoDB release mongod runs (C(7.0), C(8.0)); the THP rule depends on it.
    type: str
    required: true
  architecture:
    description: The CPU architecture (C(ansible_architecture)); 8.0 keeps the legacy TCMalloc on ppc64le and s390x.
    type: str
    default: x86_64
  path:
    description: The dbPath, whose block device gets the readahead.
    type: path
  thp_enabled:
    description: Overrides the release's C(transparent_hugepage/enabled).
    type: str
    choices: [always, madvise, never]
  thp_defrag:
    description: Overrides the release's C(transparent_hugepage/defrag).
    type: str
    choices: [always, defer, defer+madvise, madvise, never]
  sysctl:
    description: Overrides by sysctl name - a number replaces the documented value, null leaves that sysctl alone.
    type: dict
    default: {}
  readahead_sectors:
    description: Readahead in 512-byte sectors; the checklist says 8 to 32 for WiredTiger unless testing shows
      a gain with more. 0 leaves it alone.
    type: int
    default: 32
  limits:
    description: Overrides of the service limits by systemd name (C(LimitNOFILE) ...), a number or C(infinity).
    type: dict
    default: {}
  service:
    description: A running service (C(mongod), C(mongos)) whose process limits must equal C(limits).
    type: str
  enforce:
    description: Fail when a setting cannot be set on this host (read-only, not permitted, a capped limit).
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: Reports what it would write, and what it could not (a read-only file system is seen without writing).
  diff_mode:
    support: none
    description: The C(settings) list carries each current and desired value.
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: MongoDB's OS settings for 8.0
  dbops.clusters.mongodb_os_settings:
    release: "8.0"
    architecture: "{{ ansible_architecture }}"
    path: /var/lib/mongodb
    enforce: true
  register: os_settings
"""

RETURN = r"""
settings:
  description: One entry per setting - C(name), C(path), C(current), C(desired), C(status) (ok, changed, would
    change, read-only, not permitted, absent, not applicable, failed), C(reason), C(source).
  returned: always
  type: list
  elements: dict
not_settable:
  description: The settings this host did not let us set, one sentence each.
  returned: always
  type: list
  elements: str
limits:
  description: The service limits to write, by systemd name, each with C(value), C(desired), C(capped), C(reason).
  returned: always
  type: dict
service_limits:
  description: With I(service) - its main PID and the differences from C(limits) (empty when equal).
  returned: when service is given
  type: dict
environment:
  description: Environment for the service (GLIBC_TUNABLES for 8.0's per-CPU caches).
  returned: always
  type: dict
sysctl_persist:
  description: The sysctl values to keep in sysctl.d.
  returned: always
  type: dict
thp:
  description: The THP values the boot unit writes (C(enabled), C(defrag), C(max_ptes_none)).
  returned: always
  type: dict
readahead_kb:
  description: The readahead the boot unit sets, in KiB (null when not applicable).
  returned: always
  type: int
numa_nodes:
  description: NUMA nodes seen; above 1 the production notes want mongod under C(numactl --interleave=all).
  returned: always
  type: int
"""

import errno
import glob
import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dbops.clusters.plugins.module_utils import mongodb_os as rules

NOT_WRITABLE = {errno.EROFS: "read-only", errno.EACCES: "not permitted", errno.EPERM: "not permitted"}


def read(path):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except (IOError, OSError):
        return None


def settle(module, item, current, write_value):
    """Judge one file against its desired value; write it when it differs and we may. Fills item."""
    path, desired = item["path"], item["desired"]
    item["current"] = current
    if current is None:
        item["status"] = "absent"
        return
    if rules.satisfied(current, desired, item.get("compare", "exact")):
        item["status"] = "ok"
        return
    if module.check_mode:
        item["status"] = "would change" if os.access(path, os.W_OK) else "read-only"
        return
    try:
        with open(path, "w") as handle:
            handle.write("%s\n" % write_value)
    except (IOError, OSError) as err:
        item["status"] = NOT_WRITABLE.get(err.errno, "failed")
        item["error"] = str(err)
        return
    after = read(path)
    after = rules.selected(after) if item.get("choice") else after
    item["status"] = "changed" if rules.satisfied(after, desired, item.get("compare", "exact")) else "failed"
    item["after"] = after


def thp_settings(module, wanted):
    out = []
    for name, key, value in (("THP enabled", "enabled", wanted["enabled"]),
                             ("THP defrag", "defrag", wanted["defrag"]),
                             ("THP khugepaged max_ptes_none", "khugepaged/max_ptes_none", wanted["max_ptes_none"])):
        if value is None:
            continue
        item = dict(name=name, path="%s/%s" % (rules.THP_DIR, key), desired=str(value), reason=wanted["reason"],
                    source=wanted["source"], choice=key != "khugepaged/max_ptes_none")
        raw = read(item["path"])
        current = rules.selected(raw) if item["choice"] and raw is not None else raw
        settle(module, item, current, value)
        out.append(item)
    return out


def sysctl_settings(module, wanted):
    out, persist = [], {}
    for rule in wanted:
        item = dict(name=rule["name"], path=rules.sysctl_path(rule["name"]), desired=rule["value"],
                    compare=rule["compare"], reason=rule["reason"], source=rule["source"])
        current = read(item["path"])
        settle(module, item, current, rule["value"])
        persist[rule["name"]] = rules.persisted_value(current, rule["value"], rule["compare"])
        out.append(item)
    return out, persist


def readahead_setting(module, path, sectors, source, reason):
    """(item, kb): the readahead of the block device behind path."""
    item = dict(name="readahead of %s's block device" % path, path=None, desired=rules.sectors_to_kb(sectors),
                reason="%s (%d sectors = %d KiB)" % (reason, sectors, rules.sectors_to_kb(sectors)), source=source)
    try:
        device = os.stat(path).st_dev
    except OSError as err:
        item.update(status="not applicable", current=None, error="cannot stat %s: %s" % (path, err))
        return item, None
    major, minor = os.major(device), os.minor(device)
    entry = "/sys/dev/block/%d:%d" % (major, minor)
    if major == 0 or not os.path.exists(entry):
        item.update(status="not applicable", current=None,
                    error="%s is on a file system without a block device (device %d:%d: overlay, tmpfs, a "
                          "container's root)" % (path, major, minor))
        return item, None
    item["path"] = rules.readahead_queue(entry, os.path.exists(entry + "/partition")) + "/read_ahead_kb"
    settle(module, item, read(item["path"]), item["desired"])
    return item, item["desired"]


def service_limits(module, service, expected):
    pid = module.run_command(["systemctl", "show", "--property", "MainPID", "--value", service])[1].strip()
    if not pid.isdigit() or pid == "0":
        return {"pid": None, "problems": ["%s is not running" % service]}
    observed = rules.parse_proc_limits(read("/proc/%s/limits" % pid))
    return {"pid": int(pid), "problems": rules.limit_problems(expected, observed),
            "observed": dict((k, list(v)) for k, v in observed.items())}


def main():
    module = AnsibleModule(
        argument_spec=dict(
            release=dict(type="str", required=True),
            architecture=dict(type="str", default="x86_64"),
            path=dict(type="path"),
            thp_enabled=dict(type="str", choices=["always", "madvise", "never"]),
            thp_defrag=dict(type="str", choices=["always", "defer", "defer+madvise", "madvise", "never"]),
            sysctl=dict(type="dict", default={}),
            readahead_sectors=dict(type="int", default=32),
            limits=dict(type="dict", default={}),
            service=dict(type="str"),
            enforce=dict(type="bool", default=False),
        ),
        supports_check_mode=True)
    params = module.params
    try:
        wanted = rules.recommended(params["release"], params["architecture"])
        for name, value in params["limits"].items():
            if name not in rules.PROC_LIMIT_NAMES:
                raise rules.OsSettingsError("limits: unknown limit %s (one of %s)" % (
                    name, ", ".join(sorted(rules.PROC_LIMIT_NAMES))))
            rules.limit_number(value)
    except rules.OsSettingsError as err:
        module.fail_json(msg=str(err))
    if params["readahead_sectors"] < 0:
        module.fail_json(msg="readahead_sectors must be 0 (leave alone) or more")
    thp = dict(wanted["thp"])
    for key in ("enabled", "defrag"):
        if params["thp_" + key]:
            thp[key] = params["thp_" + key]
            thp["reason"] = "set by the inventory (the release's rule: %s)" % wanted["thp"]["reason"]
    sysctls = []
    for rule in wanted["sysctl"]:
        if rule["name"] in params["sysctl"]:
            if params["sysctl"][rule["name"]] is None:
                continue
            rule = dict(rule, value=int(params["sysctl"][rule["name"]]), reason="set by the inventory")
        sysctls.append(rule)

    settings = thp_settings(module, thp)
    sysctl_items, persist = sysctl_settings(module, sysctls)
    settings += sysctl_items
    readahead_kb = None
    if params["path"] and params["readahead_sectors"]:
        item, readahead_kb = readahead_setting(module, params["path"], params["readahead_sectors"],
                                               wanted["readahead_sectors"]["source"],
                                               wanted["readahead_sectors"]["reason"])
        settings.append(item)

    desired_limits = dict((name, rule["value"]) for name, rule in wanted["limits"].items())
    desired_limits.update(params["limits"])
    pid1_limits = rules.parse_proc_limits(read("/proc/1/limits"))
    can_raise = rules.has_capability(read("/proc/1/status"), rules.CAP_SYS_RESOURCE)
    limits = rules.effective_limits(desired_limits, pid1_limits, can_raise)

    not_settable = ["%s (%s): %s, not settable here; wanted %s, is %s" % (
        s["name"], s["path"], s["status"], s["desired"], s["current"]) for s in settings
        if s["status"] in ("read-only", "not permitted")]
    not_settable += ["%s: %s" % (name, item["reason"]) for name, item in sorted(limits.items()) if item["capped"]]
    failed = ["%s (%s): %s" % (s["name"], s["path"], s.get("error") or "the value read back differs")
              for s in settings if s["status"] == "failed"]
    numa_nodes = len(glob.glob("/sys/devices/system/node/node[0-9]*"))
    result = dict(changed=any(s["status"] in ("changed", "would change") for s in settings), settings=settings,
                  not_settable=not_settable, limits=limits,
                  environment=dict((k, v["value"]) for k, v in wanted["environment"].items()),
                  sysctl_persist=persist, readahead_kb=readahead_kb, numa_nodes=numa_nodes,
                  thp=dict((k, thp[k]) for k in ("enabled", "defrag", "max_ptes_none")))
    if numa_nodes > 1:
        module.warn("%d NUMA nodes: the production notes want mongod started under numactl --interleave=all "
                    "(vm.zone_reclaim_mode=0 is applied here); %s" % (numa_nodes, rules.NOTES))
    if params["service"]:
        result["service_limits"] = service_limits(module, params["service"],
                                                  dict((k, v["value"]) for k, v in limits.items()))
    if failed:
        module.fail_json(msg="could not apply: %s" % "; ".join(failed), **result)
    if params["service"] and result["service_limits"]["problems"] and not module.check_mode:
        module.fail_json(msg="%s does not run with the limits of its drop-in: %s" % (
            params["service"], "; ".join(result["service_limits"]["problems"])), **result)
    if not params["enforce"]:
        for line in not_settable:
            module.warn("not settable here: %s" % line)
    if params["enforce"] and not_settable:
        module.fail_json(msg="MongoDB's OS settings cannot all be set on this host (enforce is on): %s"
                         % "; ".join(not_settable), **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
