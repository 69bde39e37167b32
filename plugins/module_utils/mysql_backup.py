# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Physical backups of an asynchronous MySQL source and its replicas, binary-log archiving and point-in-time
restores, as pure functions.

- backup_member: which server a backup copies (a replica that replicates, never a guess from the inventory).
- expired: which backups and archived binary logs a retention of N full backups lets go.
- replay_files: the archived binary logs a restore replays after a backup, in order.
- replay_arguments: mysqlbinlog's stop options for a restore target (a UTC time or a GTID set).
- backup_for_target: the backup a restore to a target starts from (the newest one that holds nothing past it).
- read_backups, read_archives: a cluster's repository on the backup host, as the functions above take it.
- scheduled_turn, receiver_answer, repository_status: the scheduled backups' decisions (the agent
  roles/percona_server/files/dbops_mysql_backup.py runs them on the members and the backup host).
- restore_refusal: why a host may not receive a restore.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import calendar
import json
import os
import re
import time
from datetime import datetime

from ansible_collections.dbops.clusters.plugins.module_utils import backup_chain
from ansible_collections.dbops.clusters.plugins.module_utils.group_replication import (
    GtidError, contains, format_gtid_set, gtid_set_text, parse_gtid_set)
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_switchover import live_source

_TIME = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$")
_BINLOG = re.compile(r"^(?P<base>.+)\.(?P<number>[0-9]{6,})$")
# A binary log's modification time (the backup host's clock) is compared with a backup's start (the controller's):
# a log counts as older than a backup only when it is older by this much, so clocks apart by less never drop one.
CLOCK_MARGIN = 300
# What a backup directory holds beside the copy: who was copied, the copy's GTID positions, when, and whether the
# whole copy landed (complete).
DESCRIPTION = "dbops-backup.json"
# The scheduled backups' last attempt and last good one, kept by the backup host's receiver beside the backups.
STATUS = "dbops-backup-status.json"
# How many of the newest scheduled turns the receiver keeps in STATUS (its "turns"), for the status to name.
TURNS_KEPT = 10


class BackupRefused(Exception):
    """The backup or the restore will not run: the message says why."""


def replica_healthy(replica, max_lag):
    """A replica (read_state's "replica") that runs both threads within max_lag seconds: one a backup may copy."""
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
    healthy = [name for name in replicas if replica_healthy(running[name]["replica"], max_lag)]
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

    backups: [{path, name, started, complete}, with type and base for the pieces of an incremental chain];
    archives: {member: [{path, mtime}]}. The newest `keep` complete chains stay (backup_chain.expired: a full backup
    is a chain of its own until incrementals are taken on it), with every binary log a restore from the oldest of
    them needs: a log last written before that backup started (by CLOCK_MARGIN) holds only transactions the backup
    already has. Incomplete backups older than the oldest kept one go too; nothing goes while fewer than `keep`
    complete chains exist.
    """
    if keep < 1:
        raise BackupRefused("a retention of %s backups cannot hold one full backup: 1 or more" % keep)
    remove, oldest_kept = backup_chain.expired(backups, keep)
    if oldest_kept is None:
        return [], []
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


def _target_epoch(target_time):
    return calendar.timegm(datetime.strptime(target_time, "%Y-%m-%d %H:%M:%S").timetuple())


def _past_target(backup, target_time, target_gtid_set):
    """Why the backup may hold a transaction past the target (empty when it holds none)."""
    if target_time:
        if backup["finished"] > _target_epoch(target_time):
            finished = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(backup["finished"]))
            return "it finished at %s, after the target" % finished
    elif target_gtid_set:
        after = backup.get("gtid_executed_after")
        if after is None:
            return "its description has no GTID position"
        if not contains(parse_gtid_set(target_gtid_set), parse_gtid_set(after)):
            return "its position %s holds transactions outside the target set" % after
    return ""


def backup_for_target(backups, requested="latest", target_time="", target_gtid_set=""):
    """{backup, reason}: the backup a restore starts from (backups: read_backups' list, newest first).

    A restore replays the archived logs forward from a backup; it cannot take back what the backup already holds.
    So with a target (replay_arguments' checks first), only a complete backup that holds nothing past it will do:
    one that finished by the target time (its copy's position lies before its end), or whose position lies inside
    the target GTID set. requested "latest" takes the newest such backup; a backup named explicitly is refused
    when it is incomplete or passes the target (BackupRefused, naming the ones that would do).
    """
    replay_arguments(target_time, target_gtid_set)
    complete = [b for b in backups if b.get("complete")]
    usable = [b for b in complete if not _past_target(b, target_time, target_gtid_set)]
    target = ("target %s" % (target_time or target_gtid_set)) if (target_time or target_gtid_set) else ""
    if requested in ("", "latest"):
        if usable:
            return {"backup": usable[0],
                    "reason": "%s is the newest complete backup%s" % (
                        usable[0]["name"], " that holds nothing past the " + target if target else "")}
        if not complete:
            raise BackupRefused("no complete backup in the repository (%s)"
                                % (", ".join(b["name"] for b in backups) or "empty"))
        oldest = complete[-1]
        raise BackupRefused("no complete backup holds only transactions before the %s: the oldest, %s: %s"
                            % (target, oldest["name"], _past_target(oldest, target_time, target_gtid_set)))
    chosen = [b for b in backups if b["name"] == requested]
    if not chosen:
        raise BackupRefused("%s is not a backup (%s)" % (requested, ", ".join(b["name"] for b in backups) or "none"))
    if not chosen[0].get("complete"):
        raise BackupRefused("%s is not a complete backup (its %s does not say complete)"
                            % (chosen[0]["path"], DESCRIPTION))
    past = _past_target(chosen[0], target_time, target_gtid_set)
    if past:
        raise BackupRefused("%s cannot reach the %s: %s, and a restore cannot take back what a backup holds (%s)"
                            % (requested, target, past, ", ".join(b["name"] for b in usable) and
                               "these backups can: " + ", ".join(b["name"] for b in usable) or "no backup can"))
    return {"backup": chosen[0], "reason": "%s, named by the restore" % requested}


def read_backups(path):
    """The backups in a cluster's repository directory, newest first: each one's description with path, name,
    started, finished (the description's, else the time it was written) and complete."""
    backups = []
    for name in sorted(os.listdir(path)):
        directory = os.path.join(path, name)
        # dot-names: a restore's staging copy (never a backup) and the receiver's lock and status files
        if name in ("binlog", "latest") or name.startswith(".") or os.path.islink(directory) \
                or not os.path.isdir(directory):
            continue
        description, written = {}, os.stat(directory).st_mtime
        if os.path.isfile(os.path.join(directory, DESCRIPTION)):
            with open(os.path.join(directory, DESCRIPTION)) as handle:
                description = json.load(handle)
            written = os.stat(os.path.join(directory, DESCRIPTION)).st_mtime
        started = float(description.get("started", written))
        backups.append(dict(description, path=directory, name=name, started=started,
                            finished=float(description.get("finished", written)),
                            complete=bool(description.get("complete"))))
    return sorted(backups, key=lambda b: b["started"], reverse=True)


def read_status(path):
    """The receiver's record in a cluster's repository ({} before the first scheduled backup)."""
    try:
        with open(os.path.join(path, STATUS)) as handle:
            return json.load(handle)
    except (IOError, OSError, ValueError):
        return {}


def read_archives(path):
    """The archived binary logs in a cluster's repository (its binlog/<member>/ directories): member to
    [{name, path, size, mtime}], oldest first."""
    root = os.path.join(path, "binlog")
    archives = {}
    if os.path.isdir(root):
        for member in sorted(os.listdir(root)):
            directory = os.path.join(root, member)
            if not os.path.isdir(directory):
                continue
            files = []
            for name in os.listdir(directory):
                if is_binlog_name(name):
                    info = os.stat(os.path.join(directory, name))
                    files.append({"name": name, "path": os.path.join(directory, name), "size": info.st_size,
                                  "mtime": info.st_mtime})
            archives[member] = sorted(files, key=lambda f: f["mtime"])
    return archives


def clone_local(session, dest):
    """CLONE LOCAL DATA DIRECTORY into dest on a server whose clone plugin is active (session: a
    module_utils.mysql_connection Session): {seconds, gtid_executed_before, gtid_executed_after, status}. The copy's
    position lies between the two GTID sets; status is performance_schema.clone_status's state and error."""
    before = gtid_set_text(session.value("SELECT @@GLOBAL.gtid_executed"))
    started = time.time()
    session.execute("CLONE LOCAL DATA DIRECTORY = %s", (dest,))
    rows = session.fetch("SELECT state, error_no, error_message FROM performance_schema.clone_status "
                         "ORDER BY id DESC LIMIT 1")
    return {"seconds": round(time.time() - started, 2), "gtid_executed_before": before,
            "gtid_executed_after": gtid_set_text(session.value("SELECT @@GLOBAL.gtid_executed")),
            "status": dict((key.lower(), value) for key, value in rows[0].items()) if rows else {}}


def scheduled_turn(state, lone, max_lag):
    """(take, why) for a member whose backup timer fired, from its own read_state: the member copies itself when
    it is a replica that replicates within max_lag seconds, or the cluster's only server (lone). The source of a
    cluster with replicas never takes it (the clone's backup lock blocks its DDL); the replicas' timers fire one
    after another, so the first one able to copy does, and the others find its backup fresh (receiver_answer)."""
    replica = state.get("replica")
    if replica:
        if replica_healthy(replica, max_lag):
            return True, "replicates from %s within %s s (lag %s s)" % (
                replica.get("source_host"), max_lag, replica.get("lag"))
        return False, "its replication is not healthy (IO %s, SQL %s, lag %s s, max %s s): a stale copy is no " \
                      "backup" % (replica.get("io_running"), replica.get("sql_running"), replica.get("lag"), max_lag)
    if lone:
        return True, "the cluster's only server"
    if state.get("replicas"):
        return False, "it serves as the source of %d replica(s): a replica is copied" % len(state["replicas"])
    return False, "it replicates from no one and no replica follows it, in a cluster of several servers"


def receiver_answer(backups, now, fresh_within, receiving=""):
    """{go, reason} of the backup host to a member that offers a scheduled backup: no while another backup of
    the cluster is being received (receiving names its member), or while a complete backup finished in the last
    fresh_within seconds (an earlier member's turn of the same schedule already took it)."""
    if receiving:
        return {"go": False, "reason": "a backup from %s is being received" % receiving}
    fresh = [b for b in backups if b.get("complete") and now - b["finished"] <= fresh_within]
    if fresh:
        return {"go": False, "reason": "%s (of %s) finished %d s ago, within this turn's %d s" % (
            fresh[0]["name"], fresh[0].get("member"), now - fresh[0]["finished"], fresh_within)}
    return {"go": True, "reason": "no complete backup in the last %d s" % fresh_within}


def turn_text(attempt):
    """One scheduled turn as the receiver recorded it, in words: its backup, member, the level its timer asked for
    and the one taken (and why, when they differ), the chain a restore of it applies, and how it ended."""
    level, turn = attempt.get("level") or "full", attempt.get("turn") or attempt.get("level") or "full"
    text = "%s (of %s, %s turn): %s" % (attempt.get("name"), attempt.get("member"), turn, level)
    if attempt.get("base"):
        text += " on %s" % attempt["base"]
    if level != turn and attempt.get("reason"):
        text += " (%s)" % attempt["reason"]
    if attempt.get("chain"):
        text += "; chain %s" % " + ".join(attempt["chain"])
    return "%s; %s%s" % (text, attempt.get("outcome", "in progress"),
                         "" if attempt.get("outcome") in (None, "complete") else ": %s" % attempt.get("message", ""))


def repository_status(backups, last_attempt, now, max_age, turns=None):
    """{ok, age_seconds, newest, type, chain, last_attempt, reason}: whether a cluster's backups are current - its
    newest complete backup finished at most max_age seconds ago. type: that backup's (full or incremental); chain:
    the backups a restore of it applies, full first (backup_chain.chain), empty when its chain is broken, which
    the reason then says. last_attempt: the scheduled backups' last outcome as the receiver recorded it ({} when
    none); turns: the receiver's newest turns, newest first, each in words (turn_text)."""
    complete = [b for b in backups if b.get("complete")]
    newest = complete[0] if complete else None
    age = int(now - newest["finished"]) if newest else None
    pieces, broken = [], ""
    if newest:
        try:
            pieces = [piece["name"] for piece in backup_chain.chain(backups, newest["name"])]
        except backup_chain.ChainBroken as err:
            broken = str(err)
    ok = newest is not None and age <= max_age and not broken
    if newest is None:
        reason = "no complete backup"
    else:
        what = ""
        if backup_chain.kind(newest) == backup_chain.INCREMENTAL:
            what = ", incremental: a restore applies %s" % (" + ".join(pieces) if pieces else "nothing")
        reason = "%s (of %s%s) finished %d s ago, %s the %d s allowed" % (
            newest["name"], newest.get("member"), what, age, "within" if age <= max_age else "past", max_age)
        if broken:
            reason += "; its chain is broken: %s" % broken
    if last_attempt and last_attempt.get("outcome") != "complete":
        reason += "; the last scheduled backup (%s, from %s) %s: %s" % (
            last_attempt.get("name"), last_attempt.get("member"), last_attempt.get("outcome"),
            last_attempt.get("message", ""))
    return {"ok": ok, "age_seconds": age, "newest": newest and newest["name"],
            "type": newest and backup_chain.kind(newest), "chain": pieces, "last_attempt": last_attempt or {},
            "turns": [turn_text(turn) for turn in turns or []], "reason": reason}


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
