# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Physical backups of a Galera cluster and the rebuild of one member from them, as pure functions.

- backup_member: which member a backup copies. Never one the writer or the proxies use (avoid), only a
  Synced member of a complete Primary component: the copy desyncs it, and a cluster that is already short of
  a member must not lose another's capacity to a backup.
- scheduled_turn: whether a member whose backup timer fired copies itself now (from its own wsrep status).
- restore_refusal: why one member may not be rebuilt now (it is the last Synced member, or taking it out
  would leave no majority of the members).
- cluster_restore_refusal: why the whole cluster may not be restored from a backup now (a Primary component
  runs, and the operator did not say to restore over it).
- parse_galera_info / grastate_text: the position mariadb-backup keeps with the copy (mariadb_backup_galera_info,
  "uuid:seqno", then MariaDB 11's wsrep GTID domain after a space, or older releases' ",domain-server-seqno") and the grastate.dat that
  makes the rebuilt member ask its donor for the write-sets after that position (IST) instead of a full SST.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.dbops.clusters.plugins.module_utils.galera import health_problems

_GALERA_INFO = re.compile(r"^\s*([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})"
                          r":(-?\d+)(?:[ ,](\S+))?\s*$")


class BackupRefused(Exception):
    """The backup or the rebuild will not run: the message says why."""


def _synced(state):
    return (state or {}).get("local_state_comment") == "Synced" and (state or {}).get("cluster_status") == "Primary"


def backup_member(states, members, avoid=None, requested=""):
    """The member to copy, from every member's wsrep status (galera_state's wsrep: local_state_comment,
    cluster_status, cluster_size; None for a member that does not run).

    Refuses (BackupRefused) unless every member is Synced in one Primary component of all members, so the
    desynced copy never runs while the cluster is already short of a member. Among the members not in avoid
    (those the writer and the proxies send traffic to), the requested one, else the last in the group's order
    (the proxies' order puts the preferred writer first).
    """
    avoid = list(avoid or [])
    members = list(members)
    unknown = [name for name in avoid + ([requested] if requested else []) if name not in members]
    if unknown:
        raise BackupRefused("%s not among the members (%s)" % (", ".join(unknown), ", ".join(members)))
    problems = []
    for name in members:
        state = states.get(name)
        if not _synced(state) or (state or {}).get("cluster_size") != len(members):
            problems.append("%s is %s" % (name, "not running" if not state else "%s, %s of %s" % (
                state.get("local_state_comment"), state.get("cluster_status"), state.get("cluster_size"))))
    if problems:
        raise BackupRefused("the cluster is not complete and Synced (%s; wanted Synced, Primary of %d): a backup "
                            "desyncs one member, so it runs only when every member is there" %
                            ("; ".join(problems), len(members)))
    if requested:
        if requested in avoid:
            raise BackupRefused("%s is used by the writer or the proxies (pxc_galera_backup_avoid): back up "
                                "another member" % requested)
        return requested
    candidates = [name for name in members if name not in avoid]
    if not candidates:
        raise BackupRefused("every member is in pxc_galera_backup_avoid: no member may be desynced for a backup")
    return candidates[-1]


def scheduled_turn(summary, expected_size):
    """(take, why) for a member whose scheduled backup turn came (galera.wsrep_summary of its own status): it
    copies itself, desynced, only when it is Synced in a Primary component of all expected_size members, the
    condition backup_member puts on the whole cluster, as far as one member can see it. The members the writer
    and the proxies use have no turn at all (pxc_galera's backup_schedule.yml gives them no timer)."""
    problems = health_problems(summary, expected_size)
    if problems:
        return False, "%s: a backup desyncs a member only while the cluster is whole" % "; ".join(problems)
    return True, "Synced in a Primary component of %d" % expected_size


def restore_refusal(states, members, target):
    """Why target may not be rebuilt now (empty string when it may).

    The others must keep a Primary component of a majority of the members without target, and at least one
    of them must be Synced (a donor for the write-sets the backup lacks).
    """
    members = list(members)
    if target not in members:
        return "%s is not a member (%s)" % (target, ", ".join(members))
    others = [name for name in members if name != target]
    synced = [name for name in others if _synced(states.get(name))]
    if not synced:
        return ("%s is the last Synced member (no other member is Synced in a Primary component): rebuilding it "
                "would stop the cluster; recover the cluster first (playbooks/galera_recover.yml)" % target)
    size = max(states[name].get("cluster_size") or 0 for name in synced)
    target_in = _synced(states.get(target)) or (states.get(target) or {}).get("cluster_status") == "Primary"
    remaining = size - 1 if target_in else size
    if remaining * 2 <= len(members):
        return ("taking %s out would leave %d of %d members in the Primary component, not a majority: quorum "
                "would be lost; bring the other members back first" % (target, remaining, len(members)))
    return ""


def cluster_restore_refusal(states, members, force=False):
    """Why the whole cluster may not be restored from a backup now (empty string when it may).

    Every member's data is replaced. While a Primary component runs, that discards data clients may still be
    writing: only with force (the operator restores over a logical disaster, a dropped table). Without one (a
    total loss, every member down or out of a Primary component) it may run.
    """
    primary = [name for name in members if (states.get(name) or {}).get("cluster_status") == "Primary"]
    if primary and not force:
        verb = "runs" if len(primary) == 1 else "run"
        return ("%s %s in a Primary component: restoring the whole cluster replaces the data clients may be "
                "writing; set pxc_galera_restore_force=true to restore over it (a logical disaster), or rebuild "
                "one member with playbooks/galera_restore_member.yml" % (", ".join(primary), verb))
    return ""


def parse_galera_info(text):
    """mariadb_backup_galera_info text -> {uuid, seqno, gtid}; BackupRefused when it holds no position."""
    match = _GALERA_INFO.match((text or "").strip().splitlines()[0] if (text or "").strip() else "")
    if not match or int(match.group(2)) < 0:
        raise BackupRefused("the backup's mariadb_backup_galera_info holds no Galera position (%r): it was not taken "
                            "from a Synced member with --galera-info" % (text or "").strip()[:120])
    return {"uuid": match.group(1).lower(), "seqno": int(match.group(2)), "gtid": match.group(3) or ""}


def grastate_text(position):
    """The grastate.dat of a member restored at position: it asks for IST from position's seqno on."""
    return ("# GALERA saved state\nversion: 2.1\nuuid:    %s\nseqno:   %d\nsafe_to_bootstrap: 0\n"
            % (position["uuid"], position["seqno"]))
