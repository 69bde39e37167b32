# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Chains of physical backups (mariadb-backup, Percona XtraBackup): a full backup and the incremental backups taken
after it, each holding only the InnoDB pages changed since the piece before it, as pure functions.

  full F  <--base--  incremental I1  <--base--  incremental I2        (one chain; restoring I2 applies F, I1, I2)
  to_lsn=a           from_lsn=a, to_lsn=b       from_lsn=b, to_lsn=c

A backup directory's description (dbops-backup.json) says its type ("full" when absent: every backup taken before
incrementals existed, every clone backup), and for an incremental the name of its base, the piece it was taken
against. InnoDB LSNs belong to one server's data directory, so a piece's member and lineage (the data directory it
was copied from) are its base's.

- parse_checkpoints: the tool's checkpoints file (backup_type, from_lsn, to_lsn, last_lsn).
- with_checkpoints: a repository's backups, each complete one with its checkpoints file read.
- chain: the pieces a restore of one backup applies, full first; ChainBroken when a link is missing or does not join.
- chains: the repository's complete chains, newest first.
- next_base: the piece a new incremental is taken against (the newest complete backup) and its chain.
- expired: what a retention of N chains removes (never a piece a kept chain needs).
- apply_steps: the commands that assemble a chain on a copy (the stored pieces are never written to).
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

FULL = "full"
INCREMENTAL = "incremental"
# The checkpoints file of a full backup that is ready to restore, and to which incrementals can be applied:
# mariadb-backup --prepare writes log-applied; XtraBackup writes log-applied after --prepare --apply-log-only and
# full-prepared after a complete --prepare (then no incremental can be applied any more).
PREPARED_TYPES = ("full-prepared", "log-applied")
_CHECKPOINT_LINE = re.compile(r"^\s*([a-z_]+)\s*=\s*(\S+)\s*$")


class ChainBroken(Exception):
    """A chain cannot be restored, or extended: the message says which link and why."""


def kind(backup):
    """A backup's type: its description's, full when it has none (older backups, clone backups)."""
    return backup.get("type") or FULL


def parse_checkpoints(text):
    """The checkpoints file mariadb-backup and XtraBackup write beside a copy -> {backup_type, from_lsn, to_lsn,
    last_lsn} (LSNs as ints). ChainBroken when it says no type or no LSNs."""
    values = {}
    for line in (text or "").splitlines():
        match = _CHECKPOINT_LINE.match(line)
        if match:
            values[match.group(1)] = match.group(2)
    try:
        return {"backup_type": values["backup_type"], "from_lsn": int(values["from_lsn"]),
                "to_lsn": int(values["to_lsn"]), "last_lsn": int(values.get("last_lsn", values["to_lsn"]))}
    except (KeyError, ValueError):
        raise ChainBroken("the checkpoints file says no backup_type and LSNs (%r)" % (text or "").strip()[:200])


def with_checkpoints(backups, name):
    """The backups, each complete one with its checkpoints file (name) read: an unreadable one says so in
    backup_type, so a chain through it is refused rather than applied blind."""
    result = []
    for backup in backups:
        if backup.get("complete") or backup.get("bare"):
            try:
                with open(os.path.join(backup["path"], name)) as handle:
                    checkpoints = parse_checkpoints(handle.read())
            except (IOError, OSError, ChainBroken) as err:
                checkpoints = {"backup_type": "unreadable (%s)" % err, "from_lsn": -1, "to_lsn": -1, "last_lsn": -1}
            backup = dict(backup, checkpoints=checkpoints)
        result.append(backup)
    return result


def _named(backups):
    """The backups, each with its name (its directory's, when the caller gave only paths)."""
    return [b if b.get("name") else dict(b, name=os.path.basename(b["path"].rstrip("/"))) for b in backups]


def chain(backups, name):
    """The pieces a restore of backup `name` applies, oldest first: its full backup, then each incremental in the
    order they were taken. backups: read_backups' list (descriptions with name, path, complete; a piece's
    checkpoints under "checkpoints" when the caller read them).

    ChainBroken, naming the link, when a piece is missing or incomplete, an incremental's base belongs to another
    member or data directory, or (with checkpoints) an incremental does not start at its base's LSN: applying it
    would silently leave out the pages changed in between."""
    pieces = dict((b["name"], b) for b in _named(backups))
    if name not in pieces:
        raise ChainBroken("%s is not a backup in the repository (%s)" % (
            name, ", ".join(sorted(pieces)) or "empty"))
    ordered, seen, piece = [], set(), pieces[name]
    while True:
        if not piece.get("complete"):
            raise ChainBroken("%s is not a complete backup (its description does not say complete)%s" % (
                piece["name"], "" if piece["name"] == name else ", and %s is built on it" % name))
        ordered.append(piece)
        seen.add(piece["name"])
        if kind(piece) == FULL:
            break
        if kind(piece) != INCREMENTAL:
            raise ChainBroken("%s has an unknown type %r" % (piece["name"], kind(piece)))
        base_name = piece.get("base")
        if not base_name or base_name in seen:
            raise ChainBroken("%s is an incremental backup whose description names %s as its base" % (
                piece["name"], "no backup" if not base_name else "a backup of its own chain (%s)" % base_name))
        base = pieces.get(base_name)
        if base is None:
            raise ChainBroken("%s is an incremental backup on %s, which is not in the repository any more: the "
                              "pages changed before %s are nowhere" % (piece["name"], base_name, piece["name"]))
        for field in ("member", "lineage"):
            if piece.get(field) != base.get(field):
                raise ChainBroken("%s was copied from %s %s, its base %s from %s: InnoDB LSNs belong to one data "
                                  "directory" % (piece["name"], field, piece.get(field), base_name, base.get(field)))
        if "checkpoints" in piece and "checkpoints" in base:
            if piece["checkpoints"]["backup_type"] != INCREMENTAL:
                raise ChainBroken("%s is described as incremental, its checkpoints file says %s" % (
                    piece["name"], piece["checkpoints"]["backup_type"]))
            if piece["checkpoints"]["from_lsn"] != base["checkpoints"]["to_lsn"]:
                raise ChainBroken("%s starts at LSN %d, its base %s ends at LSN %d: they do not join" % (
                    piece["name"], piece["checkpoints"]["from_lsn"], base_name, base["checkpoints"]["to_lsn"]))
        piece = base
    ordered.reverse()
    full = ordered[0]
    if "checkpoints" in full and full["checkpoints"]["backup_type"] not in PREPARED_TYPES:
        raise ChainBroken("%s, the full backup of the chain, is not prepared (backup_type %s, wanted %s)" % (
            full["name"], full["checkpoints"]["backup_type"], " or ".join(PREPARED_TYPES)))
    return ordered


def chains(backups):
    """The repository's complete chains, newest first (by their full backup's start): each {full, pieces, started},
    pieces oldest first. A chain's pieces are every complete backup whose chain() leads to that full backup; an
    incremental whose chain is broken belongs to none."""
    backups, grouped = _named(backups), {}
    for backup in backups:
        if not backup.get("complete"):
            continue
        try:
            pieces = chain(backups, backup["name"])
        except ChainBroken:
            continue
        entry = grouped.setdefault(pieces[0]["name"], {"full": pieces[0], "pieces": {}})
        for piece in pieces:
            entry["pieces"][piece["name"]] = piece
    result = []
    for entry in grouped.values():
        result.append({"full": entry["full"], "started": entry["full"]["started"],
                       "pieces": sorted(entry["pieces"].values(), key=lambda b: b["started"])})
    return sorted(result, key=lambda c: c["started"], reverse=True)


def next_base(backups):
    """{base, chain}: the piece a new incremental is taken against - the repository's newest complete backup, with
    the chain a restore of it would apply. ChainBroken when there is none, or its chain cannot be restored (an
    incremental on it could not be either)."""
    complete = sorted((b for b in backups if b.get("complete")), key=lambda b: b["started"], reverse=True)
    if not complete:
        raise ChainBroken("the repository holds no complete backup to take an incremental against")
    newest = complete[0]
    try:
        pieces = chain(backups, newest["name"])
    except ChainBroken as err:
        raise ChainBroken("the newest complete backup, %s, cannot be restored: %s" % (newest["name"], err))
    return {"base": newest, "chain": pieces}


def expired(backups, keep):
    """(paths to remove, the oldest kept chain's start or None) for a retention of `keep` complete chains.

    The newest `keep` chains stay whole, their full backup and every incremental on it. Every piece of an older
    chain goes, even one taken after the oldest kept chain began, so no incremental is ever left without its base.
    Incomplete copies and incrementals whose chain is broken go once they are older than the oldest kept chain.
    Nothing goes while fewer than `keep` complete chains exist. A repository of full backups only (every clone
    backup) has one chain per backup: the newest `keep` backups stay.
    """
    if keep < 1:
        raise ValueError("a retention of %s backups cannot hold one full backup: 1 or more" % keep)
    grouped = chains(backups)
    if len(grouped) < keep:
        return [], None
    kept = set(piece["path"] for entry in grouped[:keep] for piece in entry["pieces"])
    dropped = set(piece["path"] for entry in grouped[keep:] for piece in entry["pieces"])
    oldest_kept = grouped[keep - 1]["started"]
    remove = [b["path"] for b in backups
              if b["path"] not in kept and (b["path"] in dropped or b["started"] < oldest_kept)]
    return sorted(remove), oldest_kept


def staging_refusal(staging, repository, backups):
    """Why a restore may not assemble a chain in staging (empty when it may): its first step removes the directory,
    so it must be neither the repository nor a directory above it, nor a backup (any of backups: the repository's),
    inside one or above one, nor the repository's latest link. Inside the repository under another name (its
    default, <repository>/.restore) it may: the repository's readers pass over dot-names."""
    staging = os.path.normpath(staging or "")
    if not os.path.isabs(staging) or staging == "/":
        return "the staging directory %r must be an absolute path below /" % staging
    repository = os.path.normpath(repository)
    if staging in (repository, os.path.join(repository, "latest")) or repository.startswith(staging + "/"):
        return "the staging directory %s would replace the repository %s: it is emptied before each restore" % (
            staging, repository)
    for backup in backups:
        kept = os.path.normpath(backup["path"])
        if staging == kept or kept.startswith(staging + "/") or staging.startswith(kept + "/"):
            return ("the staging directory %s would replace or lie inside the backup %s: it is emptied before each "
                    "restore" % (staging, kept))
    return ""


def apply_steps(pieces, staging, prepare, keep_open=None):
    """The commands that assemble a chain for a restore, on a copy: [] for a full backup alone (it is restored as it
    is stored). Otherwise the full backup is copied to <staging>/data, and each incremental in turn is copied to
    <staging>/incremental, applied with `prepare --target-dir=... --incremental-dir=...` and removed: the tools
    move and rewrite files of both directories while they apply one, and the stored pieces must stay restorable.

    prepare: the tool's prepare command (["mariadb-backup", "--prepare"]); keep_open: the options that leave the
    copy open for the next incremental, given to every incremental but the last (XtraBackup's --apply-log-only;
    mariadb-backup needs none)."""
    if len(pieces) < 2:
        return []
    data, incremental = os.path.join(staging, "data"), os.path.join(staging, "incremental")
    steps = [["rm", "-rf", "--", staging], ["mkdir", "-p", "-m", "0700", "--", staging],
             ["cp", "-a", "--reflink=auto", "--", pieces[0]["path"], data]]
    last = len(pieces) - 1
    for index, piece in enumerate(pieces[1:], start=1):
        steps.append(["cp", "-a", "--reflink=auto", "--", piece["path"], incremental])
        steps.append(list(prepare) + (list(keep_open or []) if index < last else [])
                     + ["--target-dir=%s" % data, "--incremental-dir=%s" % incremental])
        steps.append(["rm", "-rf", "--", incremental])
    return steps
