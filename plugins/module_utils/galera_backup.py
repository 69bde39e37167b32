# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Physical backups of a Galera cluster and the rebuild of one member from them, as pure functions.

- backup_member: which member a backup copies. Never one the writer or the proxies use (avoid), only a
  Synced member of a complete Primary component: the copy desyncs it, and a cluster that is already short of
  a member must not lose another's capacity to a backup.
- backup_plan: a full or an incremental backup, of which member, against which base: an incremental copies only
  the pages changed since the newest complete backup, so it is taken from that backup's member and data directory
  (InnoDB LSNs are one data directory's), or not at all.
- lineage_text / lineage_matches: the marker that tells a member's data directory apart from the one it holds
  after a state transfer or a restore (both replace every file, the marker included).
- scheduled_turn: whether a member whose backup timer fired copies itself now (from its own wsrep status).
- scheduled_level: what a scheduled turn the backup host accepted copies: the full timer's turns a full backup, the
  incremental timer's turns an incremental on the newest chain under backup_plan's auto rules, else a full backup.
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


# The backup levels of playbooks/galera_backup.yml (pxc_galera_backup_level): auto takes an incremental when one can
# be taken and a full backup otherwise, saying why.
LEVELS = ("full", "incremental", "auto")
# In each member's data directory: "<member> <random uuid>", written before its first backup and recorded with each
# backup of it. mariadb-backup and XtraBackup copy only the server's own files, so a state transfer (whose joiner
# script empties the data directory first) or a restore leaves a data directory without it: its pages then carry
# another directory's LSNs, and an incremental against an older backup of this member would silently miss pages.
LINEAGE_FILE = "dbops-backup-lineage"


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


def lineage_text(member, token):
    """The marker a member's data directory gets before its first backup."""
    return "%s %s" % (member, token)


def lineage_matches(marker, recorded):
    """Whether a data directory's marker (its file's text; empty when there is none) is the one a backup recorded."""
    return bool((marker or "").strip()) and (marker or "").strip() == (recorded or "").strip()


def _incremental_obstacle(members, avoid, requested, base, base_refusal, lineage, turn=False):
    """Why no incremental can be taken against base now (empty when one can). turn: requested is the member whose
    scheduled turn it is (not an operator's pxc_galera_backup_member)."""
    if base_refusal or not base:
        return base_refusal or "no complete backup to take an incremental against"
    name, member = base.get("name"), base.get("member")
    if member not in members:
        return "its base %s was copied from %s, which is not a member any more" % (name, member)
    if member in avoid:
        return ("its base %s was copied from %s, which the writer or the proxies use now (pxc_galera_backup_avoid)"
                % (name, member))
    if requested and requested != member:
        return ("%s, but its base %s was copied from %s: InnoDB LSNs belong to one member's data directory" % (
            ("the turn is %s's" if turn else "pxc_galera_backup_member=%s") % requested, name, member))
    if not base.get("lineage") or (base.get("checkpoints") or {}).get("to_lsn") is None:
        return "its base %s records no data-directory lineage or LSN (taken before incremental backups)" % name
    if not lineage_matches(lineage, base["lineage"]):
        return ("%s's data directory is not the one %s copied (its %s %s): it was replaced since, by a state transfer "
                "or a restore, and its pages carry other LSNs" % (
                    member, name, LINEAGE_FILE, "is missing" if not (lineage or "").strip()
                    else "says %r, the backup recorded %r" % (lineage.strip(), base["lineage"])))
    return ""


def backup_plan(states, members, avoid=None, requested="", level="full", base=None, base_refusal="", lineage=""):
    """{member, level, base, base_path, from_lsn, reason}: what playbooks/galera_backup.yml copies.

    level full: a full backup of backup_member's choice. incremental: only the pages changed since base (the
    repository's newest complete backup, backup_chain.next_base, with its checkpoints; base_refusal says why there is
    none), copied from base's member, whose data directory must still be the one base copied (lineage: the text of
    its LINEAGE_FILE now); refused (BackupRefused) naming why not, never taken from another member. auto: that
    incremental when it can be taken, else a full backup of backup_member's choice, and the reason says why.
    A backup of any level is refused while the cluster is not complete and Synced (backup_member).
    """
    if level not in LEVELS:
        raise BackupRefused("pxc_galera_backup_level=%s: one of %s" % (level, ", ".join(LEVELS)))
    members, avoid = list(members), list(avoid or [])
    full = {"level": "full", "base": "", "base_path": "", "from_lsn": None}
    if level == "full":
        return dict(full, member=backup_member(states, members, avoid, requested), reason="a full backup")
    why = _incremental_obstacle(members, avoid, requested, base, base_refusal, lineage)
    if not why:
        member = backup_member(states, members, avoid, base["member"])
        return {"level": "incremental", "member": member, "base": base["name"], "base_path": base.get("path", ""),
                "from_lsn": base["checkpoints"]["to_lsn"],
                "reason": "an incremental backup: the pages of %s changed since %s (LSN %d), the repository's newest "
                          "complete backup, copied from %s like it" % (member, base["name"],
                                                                       base["checkpoints"]["to_lsn"], member)}
    if level == "incremental":
        raise BackupRefused("no incremental backup: %s; take a full backup (pxc_galera_backup_level=full, or auto to "
                            "take one whenever no incremental can be taken)" % why)
    return dict(full, member=backup_member(states, members, avoid, requested),
                reason="a full backup, as no incremental can be taken: %s" % why)


def scheduled_turn(summary, expected_size):
    """(take, why) for a member whose scheduled backup turn came (galera.wsrep_summary of its own status): it
    copies itself, desynced, only when it is Synced in a Primary component of all expected_size members, the
    condition backup_member puts on the whole cluster, as far as one member can see it. The members the writer
    and the proxies use have no turn at all (pxc_galera's backup_schedule.yml gives them no timer)."""
    problems = health_problems(summary, expected_size)
    if problems:
        return False, "%s: a backup desyncs a member only while the cluster is whole" % "; ".join(problems)
    return True, "Synced in a Primary component of %d" % expected_size


# The levels of the scheduled turns: each member has a timer for full backups (pxc_galera_backup_schedule), and may
# have one for incrementals (pxc_galera_backup_schedule_incremental); the agent names its timer's level in its offer.
SCHEDULED_LEVELS = ("full", "incremental")


def scheduled_level(turn, member, members, lineage="", base=None, base_refusal=""):
    """{level, base, base_path, from_lsn, reason}: what the scheduled turn of member copies, once the backup host
    accepted its offer (mysql_backup.receiver_answer). turn: the level of the member's timer. A full turn copies a
    full backup, the start of a new chain. An incremental turn follows backup_plan's auto rules with member as the
    one asked for: an incremental against base (the repository's newest complete backup, backup_chain.next_base,
    with its checkpoints; base_refusal says why there is none) only when member copied base and its data directory
    still carries base's lineage (lineage: the text of its LINEAGE_FILE now, empty when there is none); otherwise
    a full backup, and the reason says why. BackupRefused for a turn of another level."""
    if turn not in SCHEDULED_LEVELS:
        raise BackupRefused("a scheduled turn of level %r: one of %s" % (turn, ", ".join(SCHEDULED_LEVELS)))
    full = {"level": "full", "base": "", "base_path": "", "from_lsn": None}
    if turn == "full":
        return dict(full, reason="a full backup, the schedule's full turn (a new chain)")
    why = _incremental_obstacle(list(members), [], member, base, base_refusal, lineage, turn=True)
    if why:
        return dict(full, reason="a full backup, as no incremental can be taken: %s" % why)
    return {"level": "incremental", "base": base["name"], "base_path": base.get("path", ""),
            "from_lsn": base["checkpoints"]["to_lsn"],
            "reason": "an incremental backup: the pages of %s changed since %s (LSN %d), the repository's newest "
                      "complete backup, copied from %s like it" % (member, base["name"],
                                                                   base["checkpoints"]["to_lsn"], member)}


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
