# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Is a pgBackRest stanza backed up? One verdict from `pgbackrest info --output=json` and the systemd units of its
scheduled backups, so that a backup that stopped happening is noticed before a restore needs it.

Pure Python, unit tested in tests/unit/test_pgbackrest_status.py.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

BACKUP_TYPES = ("full", "diff", "incr")


def unit_state(name, properties):
    """What a scheduled unit's systemd properties say: for a service its last run's result and end; for a timer its
    last and next start. Empty timestamps mean never (systemd's own words are kept: 'n/a' and '' both mean none)."""
    properties = properties or {}

    def stamp(key):
        value = (properties.get(key) or "").strip()
        return "" if value in ("", "n/a", "0") else value
    if name.endswith(".timer"):
        return {"enabled": properties.get("UnitFileState") == "enabled",
                "active": properties.get("ActiveState") == "active",
                "last_start": stamp("LastTriggerUSec"), "next_start": stamp("NextElapseUSecRealtime")}
    return {"result": properties.get("Result") or "unknown", "active": properties.get("ActiveState") or "unknown",
            "ran": bool(stamp("ExecMainExitTimestamp") or stamp("ExecMainStartTimestamp")),
            "ended": stamp("ExecMainExitTimestamp"), "exit_status": properties.get("ExecMainStatus")}


def summarize(info, now, units, max_age_hours, stanza):
    """The stanza's backup status, and every problem in one sentence each.

    info: the parsed output of `pgbackrest --stanza=S --output=json info` (a list of one stanza).
    now: seconds since the epoch on the repository host.
    units: {unit name: its systemd properties} for each scheduled service and timer.
    """
    found = next((s for s in info or [] if s.get("name") == stanza), None)
    if found is None:
        return {"stanza": stanza, "state": "not found", "backups": 0, "newest": None, "by_type": {}, "units": {},
                "problems": ["stanza %s is not in the repository (run the pgbackrest role)" % stanza]}
    backups = sorted(found.get("backup") or [], key=lambda b: (b.get("timestamp") or {}).get("stop") or 0)
    problems = []
    status = found.get("status") or {}
    if status.get("code") not in (0, 2):          # 2: no backup yet, reported below in plainer words
        problems.append("stanza %s: %s (code %s)" % (stanza, status.get("message"), status.get("code")))

    def described(backup):
        stop = backup["timestamp"]["stop"]
        return {"label": backup.get("label"), "type": backup.get("type"), "stopped_epoch": stop,
                "age_hours": round((now - stop) / 3600.0, 1), "error": bool(backup.get("error"))}
    by_type = {}
    for kind in BACKUP_TYPES:
        of_kind = [b for b in backups if b.get("type") == kind]
        if of_kind:
            by_type[kind] = described(of_kind[-1])
    newest = described(backups[-1]) if backups else None
    if newest is None:
        problems.append("no backup in stanza %s" % stanza)
    elif newest["age_hours"] > max_age_hours:
        problems.append("the newest backup of stanza %s (%s, %s) is %s h old, more than "
                        "pgbackrest_max_backup_age_hours=%s" % (stanza, newest["label"], newest["type"],
                                                                newest["age_hours"], max_age_hours))
    if newest is not None and newest["error"]:
        problems.append("the newest backup %s has page checksum errors (pgbackrest info --set=%s)"
                        % (newest["label"], newest["label"]))
    states = dict((name, unit_state(name, properties)) for name, properties in sorted((units or {}).items()))
    for name, state in states.items():
        if name.endswith(".timer"):
            if not (state["enabled"] and state["active"]):
                problems.append("%s is not enabled and active: no backup will start from it" % name)
        elif state["ran"] and state["result"] != "success":
            problems.append("%s: its last run failed (%s, exit status %s; journalctl -u %s)"
                            % (name, state["result"], state["exit_status"], name))
    return {"stanza": stanza, "state": status.get("message"), "backups": len(backups), "newest": newest,
            "by_type": by_type, "units": states, "problems": problems}
