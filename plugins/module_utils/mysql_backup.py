# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Physical backups of an asynchronous MySQL source and its replicas, binary-log archiving and point-in-time
restores, as pure functions.

- backup_member: which server a backup copies (a replica that replicates, never a guess from the inventory).
- expired: which backups and archived binary logs a retention of N full backups lets go.
- replay_files: the archived binary logs a restore replays after a backup, in order.
- replay_arguments: mysqlbinlog's stop options for a restore target (a UTC time or a GTID set).
- restore_refusal: why a host may not receive a restore.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
from datetime import datetime

from ansible_collections.dbops.clusters.plugins.module_utils.group_replication import (
    GtidError, format_gtid_set, parse_gtid_set)
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_switchover import live_source

_TIME = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$")
_BINLOG = re.compile(r"^(?P<base>.+)\.(?P<number>[0-9]{6,})$")
# A binary log's modification time (the backup host's clock) is compared with a backup's start (the controller's):
# a log counts as older than a backup only when it is older by this much, so clocks apart by less never drop one.
CLOCK_MARGIN = 300


class BackupRefused(Exception):
    """The backup or the restore will not run: the message says why."""


def _healthy(replica, max_lag):
    return (replica.get("io_running") == "Yes" and replica.get("sql_running") == "Yes"
            and replica.get("lag") is not None and replica["lag"] <= max_lag)


def backup_member(states, members, requested="", max_lag=60):
    """{member, source, reason}: the server a clone backup copies, from every member's replication state
    (mysql_switchover step=state; running false for a server that does not run).

    A replica that runs both replication threads within max_lag seconds, the last such one in the group's order
    (a clone takes a backup lock that blocks DDL while it copies: not on the server the application writes to).
    The source only when it has no replica at all, or when requested by name. Refuses (BackupRefused) when the
    live source cannot be told or the requested server cannot be copied now.
    """
    members = list(members)
    if requested and requested not in members:
        raise BackupRefused("percona_server_backup_member=%s is not a member (%s)" % (requested, ", ".join(members)))
    running = dict((name, states[name]) for name in members if (states.get(name) or {}).get("running"))
    if not running:
        raise BackupRefused("no member runs a server (%s)" % ", ".join(members))
    source, error = live_source(running)
    if error:
        raise BackupRefused("the live source cannot be told: %s" % error)
    replicas = [name for name in members if name in running and running[name].get("replica")]
    healthy = [name for name in replicas if _healthy(running[name]["replica"], max_lag)]
    if requested == source:
        return {"member": source, "source": source,
                "reason": "%s is the source, copied because percona_server_backup_member names it (a clone blocks "
                          "DDL on it while it copies)" % source}
    if requested:
        if requested not in healthy:
            replica = (running.get(requested) or {}).get("replica") or {}
            raise BackupRefused(
                "%s cannot be copied now: %s" % (requested, "it does not run" if requested not in running else
                                                 "IO %s, SQL %s, lag %s s (max %s s)" % (
                                                     replica.get("io_running"), replica.get("sql_running"),
                                                     replica.get("lag"), max_lag)))
        return {"member": requested, "source": source,
                "reason": "%s replicates from %s within %s s, named by percona_server_backup_member"
                          % (requested, source, max_lag)}
    if healthy:
        return {"member": healthy[-1], "source": source,
                "reason": "%s is the last replica in the group's order that replicates within %s s (the source "
                          "%s keeps serving writes and DDL)" % (healthy[-1], max_lag, source)}
    if len(members) == 1:
        return {"member": source, "source": source, "reason": "%s is the only server" % source}
    raise BackupRefused("no replica of %s replicates within %s s (%s): a copy of a replica that does not follow its "
                        "source is stale; repair replication, or name the source with percona_server_backup_member"
                        % (source, max_lag, ", ".join(sorted(set(members) - {source})) or "none runs"))


def archive_member(states, members, requested=""):
    """{member, source, reason}: the server whose binary logs the archive streams - the live source unless
    requested names another running member (every member logs what it applies: log_replica_updates). Refuses
    (BackupRefused) when the live source cannot be told."""
    members = list(members)
    if requested and requested not in members:
        raise BackupRefused("percona_server_binlog_archive_member=%s is not a member (%s)"
                            % (requested, ", ".join(members)))
    running = dict((name, states[name]) for name in members if (states.get(name) or {}).get("running"))
    source, error = live_source(running) if running else (None, "no member runs a server")
    if error:
        raise BackupRefused("the live source cannot be told: %s" % error)
    if requested and requested != source:
        if requested not in running:
            raise BackupRefused("%s does not run" % requested)
        return {"member": requested, "source": source,
                "reason": "%s named by percona_server_binlog_archive_member (a replica: the archive lags by its "
                          "replication lag)" % requested}
    return {"member": source, "source": source, "reason": "%s is the live source (the lowest RPO)" % source}


def _binlog_key(name):
    match = _BINLOG.match(name)
    return (match.group("base"), int(match.group("number"))) if match else (name, -1)


def is_binlog_name(name):
    return bool(_BINLOG.match(name))


def expired(backups, archives, keep):
    """(backup paths to remove, archived binary-log paths to remove) for a retention of `keep` complete backups.

    backups: [{path, started, complete}]; archives: {member: [{path, mtime}]}. The newest `keep` complete backups
    stay, with every binary log a restore from the oldest of them needs: a log last written before that backup
    started (by CLOCK_MARGIN) holds only transactions the backup already has. Incomplete backups older than the
    oldest kept one go too; nothing goes while fewer than `keep` complete backups exist.
    """
    if keep < 1:
        raise BackupRefused("a retention of %s backups cannot hold one full backup: 1 or more" % keep)
    complete = sorted((b for b in backups if b.get("complete")), key=lambda b: b["started"], reverse=True)
    if len(complete) < keep:
        return [], []
    oldest_kept = complete[keep - 1]["started"]
    remove = sorted(b["path"] for b in backups if b["started"] < oldest_kept)
    logs = sorted(f["path"] for files in archives.values() for f in files if f["mtime"] < oldest_kept - CLOCK_MARGIN)
    return remove, logs


def replay_files(archives, backup_started):
    """The archived binary logs a restore from a backup that started at backup_started replays, in order.

    archives: {member: [{name, path, mtime}]} (one directory per server the archive followed). Members in the order
    the archive began following them (their oldest file first), each one's files in sequence, from the newest log
    last written CLOCK_MARGIN before the backup started on (the ones before it hold nothing the backup lacks).
    Replaying a transaction the backup already holds, or one a later member's log repeats, is skipped by the
    server (GTID auto-skip).
    """
    def first_mtime(member):
        return min(f["mtime"] for f in archives[member])

    ordered = []
    for member in sorted((m for m in archives if archives[m]), key=first_mtime):
        files = sorted(archives[member], key=lambda f: _binlog_key(f["name"]))
        start = 0
        for index, item in enumerate(files):
            if item["mtime"] < backup_started - CLOCK_MARGIN:
                start = index
        ordered.extend(f["path"] for f in files[start:])
    return ordered


def replay_arguments(target_time="", target_gtid_set=""):
    """mysqlbinlog's options that stop a replay at the target: --stop-datetime (UTC, whole seconds: the binary
    log's own resolution; every transaction that began before it is applied) or --include-gtids (only the set's
    transactions). Neither: everything archived is applied."""
    if target_time and target_gtid_set:
        raise BackupRefused("give percona_server_restore_time or percona_server_restore_gtid_set, not both")
    if target_time:
        if not _TIME.match(target_time):
            raise BackupRefused("percona_server_restore_time=%s: 'YYYY-MM-DD HH:MM:SS' in UTC" % target_time)
        try:
            datetime.strptime(target_time, "%Y-%m-%d %H:%M:%S")
        except ValueError:
            raise BackupRefused("percona_server_restore_time=%s is not a date and time" % target_time)
        return ["--stop-datetime=%s" % target_time]
    if target_gtid_set:
        try:
            gtids = parse_gtid_set(target_gtid_set)
        except GtidError as err:
            raise BackupRefused("percona_server_restore_gtid_set=%s is not a GTID set (uuid:1-100[,uuid:...]): %s"
                                % (target_gtid_set, err))
        if not gtids:
            raise BackupRefused("percona_server_restore_gtid_set=%s is not a GTID set (uuid:1-100[,uuid:...])"
                                % target_gtid_set)
        return ["--include-gtids=%s" % format_gtid_set(gtids)]
    return []


def restore_refusal(state, force=False, as_replica=False, resuming=False):
    """Why a host may not receive a restore (empty when it may), from mysql_backup step=read's state.

    Never a server that replicas follow (it serves as a source); one that replicates only when it is re-seeded as
    a replica (as_replica); one holding schemas of its own only with force. The server must run with gtid_mode ON:
    the replay, and a replica's auto-positioning, rely on GTIDs to skip what the backup already holds.

    resuming: an earlier restore onto this host stopped half way (its marker is there). The server may then be
    down, or run on a partial copy of a backup with the channel that copy carried: the restore starts again over
    it; only replicas following it still refuse it.
    """
    if state.get("running") and state.get("replicas"):
        return ("%d replica(s) replicate from the target: it serves as a source; restore onto another host"
                % len(state["replicas"]))
    if resuming:
        return ""
    if not state.get("running"):
        return ("no MySQL server runs on the target: converge it with the percona_server role first (it must run "
                "with the cluster's settings and gtid_mode ON)")
    if state.get("replicating") and not as_replica:
        return "the target replicates from another server: restore onto a standalone server"
    if str(state.get("gtid_mode", "")).upper() != "ON":
        return "gtid_mode is %s on the target: the replay needs ON" % state.get("gtid_mode")
    if state.get("databases") and not force:
        return ("the target holds schemas of its own (%s): its data directory would be replaced; set "
                "percona_server_restore_force=true to replace it (the old directory's contents are moved aside)"
                % ", ".join(state["databases"]))
    return ""
