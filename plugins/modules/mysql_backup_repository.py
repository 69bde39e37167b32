#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: mysql_backup_repository
short_description: The MySQL-family backups and archived binary logs on a backup host - list, retention, chains, what a restore replays
version_added: 0.1.0
description:
  - Runs on the backup host. I(path) holds one directory per backup (each with its C(dbops-backup.json)) and
    C(binlog/<server>/), the binary logs the archive service streamed from each server it followed.
  - C(list) returns the backups (newest first) and the archived logs, changes nothing.
  - C(prune) keeps the newest I(keep) complete backups and every archived log a restore from the oldest of them
    needs, and removes the rest (older backups, incomplete copies older than the oldest kept one, logs last
    written before it started). A full backup and the incremental backups taken on it (a chain) count as one and
    stay or go together, so no incremental is ever left without its base.
  - C(base) returns the backup a new incremental backup is taken against - the newest complete one - with its
    checkpoints (I(checkpoints)) and the chain a restore of it applies; C(refusal) says why there is none.
  - C(chain) returns the backups a restore of I(backup) applies, its full backup first, each incremental's link
    checked (complete, same member and data directory, its C(from_lsn) the C(to_lsn) of the piece before, the full
    backup prepared), the text of I(position_file) in the newest piece, and with I(staging) the commands that
    assemble the chain on a copy there (the stored backups are never written to). C(refusal) says why it cannot
    be restored. Changes nothing.
  - C(status) judges whether the backups are current - the newest complete backup finished at most I(max_age)
    seconds ago - and returns the scheduled backups' last attempt as the receiver recorded it (changes nothing).
  - C(replay) returns the archived logs a restore from I(backup) replays, in order (every log from the one that
    holds the backup's position on, server after server in the order the archive followed them).
options:
  path:
    description: The backup directory of one cluster on this host.
    type: path
    required: true
  step:
    description: What to do.
    type: str
    choices: [list, prune, replay, status, base, chain]
    default: list
  keep:
    description: Complete backups C(prune) keeps (1 or more).
    type: int
    default: 7
  backup:
    description:
      - For C(replay), the backup directory the restore starts from, or C(latest) - the newest complete backup that
        holds nothing past the target (finished by I(target_time), or its position inside I(target_gtid_set)).
      - A named backup that is incomplete or holds transactions past the target is refused (a replay only adds).
      - For C(chain), the backup to restore - a directory (absolute, or a name in I(path)), C(latest) by default;
        its chain's pieces are read from the directory that holds it.
    type: str
  checkpoints:
    description:
      - For C(base) and C(chain), the name of the file in which the backup tool keeps each backup's type and LSNs
        (C(mariadb_backup_checkpoints), C(xtrabackup_checkpoints)).
    type: str
    default: mariadb_backup_checkpoints
  position_file:
    description: For C(chain), a file of the newest piece whose text is returned (the Galera position).
    type: str
  staging:
    description:
      - For C(chain), the directory a restore of more than one piece assembles the chain in (C(steps)); it is
        created anew by the first step.
    type: path
  prepare:
    description: For C(chain) with I(staging), the tool's prepare command, for example C([mariadb-backup, --prepare]).
    type: list
    elements: str
    default: [mariadb-backup, --prepare]
  keep_open:
    description:
      - For C(chain) with I(staging), options given to every incremental but the last, so that the next one can
        still be applied (XtraBackup's C(--apply-log-only); mariadb-backup needs none).
    type: list
    elements: str
    default: []
  target_time:
    description:
      - For C(replay), the restore target as C(YYYY-MM-DD HH:MM:SS) in UTC - every transaction that began before it is
        replayed, none from it on (the binary log keeps whole seconds).
    type: str
    default: ""
  target_gtid_set:
    description: For C(replay), the restore target as a GTID set - only the set's transactions are replayed.
    type: str
    default: ""
  max_age:
    description: For C(status), the seconds the newest complete backup may be old.
    type: int
    default: 93600
attributes:
  check_mode:
    support: full
    description: C(prune) returns what it would remove and removes nothing.
  diff_mode:
    support: none
    description: The removed paths are returned instead.
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Keep seven full backups and the binary logs they need
  dbops.clusters.mysql_backup_repository:
    path: /var/backups/mysql/mysql
    step: prune
    keep: 7
"""

RETURN = r"""
backups:
  description:
    - The backups, newest first - C(path), C(name), C(started), C(finished), C(member), C(complete), and what
      their description says (C(type), C(base), C(from_lsn), C(to_lsn), C(bytes) ...).
  returned: always
  type: list
  elements: dict
archives:
  description: Server name to its archived logs (C(name), C(path), C(size), C(mtime)), oldest first.
  returned: always
  type: dict
removed:
  description: Paths C(prune) removed (or would remove in check mode).
  returned: always
  type: list
  elements: str
backup:
  description: For C(replay), the chosen backup's description (its C(dbops-backup.json) and C(path)).
  returned: when I(step=replay)
  type: dict
replay:
  description: For C(replay), the archived logs to replay, in order.
  returned: when I(step=replay)
  type: list
  elements: str
stop_arguments:
  description: For C(replay), mysqlbinlog's options that stop the replay at the target (none - everything archived).
  returned: when I(step=replay)
  type: list
  elements: str
status:
  description:
    - For C(status) - C(ok) (the newest complete backup is at most I(max_age) seconds old, and its chain can be
      restored), C(age_seconds), C(newest) (its name), C(type) (C(full) or C(incremental)), C(chain) (the backups
      a restore of it applies, full first), C(last_attempt) (the scheduled backups' last outcome - C(name),
      C(member), C(outcome), C(message), and for a Galera turn C(level), C(turn), C(base), C(chain), C(reason)),
      C(turns) (the newest scheduled turns in words, newest first - each one's level and chain) and C(reason).
  returned: when I(step=status)
  type: dict
base:
  description: For C(base), the backup a new incremental is taken against, with its C(checkpoints); null when none.
  returned: when I(step=base)
  type: dict
chain:
  description:
    - For C(base) and C(chain), the backups a restore applies, full first - each one's description with C(path) and
      C(checkpoints).
  returned: when I(step=base) or I(step=chain)
  type: list
  elements: dict
position:
  description: For C(chain), the text of I(position_file) in the newest piece (empty without I(position_file)).
  returned: when I(step=chain)
  type: str
steps:
  description:
    - For C(chain) with I(staging), the commands that assemble the chain on a copy, in order (none for a full
      backup alone, restored as it is stored).
  returned: when I(step=chain)
  type: list
  elements: list
stream_from:
  description: For C(chain), the directory a restore copies to the server - C(<staging>/data), or the full backup.
  returned: when I(step=chain)
  type: str
refusal:
  description: For C(base) and C(chain), why there is no base, or why the chain cannot be restored (empty when it can).
  returned: when I(step=base) or I(step=chain)
  type: str
reason:
  description: What the step did and why.
  returned: always
  type: str
"""

import os
import shutil
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dbops.clusters.plugins.module_utils import backup_chain
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_backup import (
    DESCRIPTION, BackupRefused, backup_for_target, expired, read_archives, read_backups, read_status,
    replay_arguments, replay_files, repository_status)


def with_checkpoints(backups, name):
    """The backups, each complete one with its checkpoints file read (backup_chain.with_checkpoints)."""
    return backup_chain.with_checkpoints(backups, name)


def restore_chain(params):
    """step=chain: {chain, position, steps, stream_from, refusal, reason} for a restore of params' backup."""
    requested = params["backup"] or "latest"
    directory = os.path.realpath(requested if os.path.isabs(requested) else os.path.join(params["path"], requested))
    empty = {"chain": [], "position": "", "steps": [], "stream_from": ""}
    if not os.path.isdir(directory):
        return dict(empty, refusal="%s is not a backup directory on the backup host" % requested,
                    reason="nothing to restore")
    name, repository = os.path.basename(directory), os.path.dirname(directory)
    backups = read_backups(repository)
    if not os.path.isfile(os.path.join(directory, DESCRIPTION)):
        # a copy without the collection's description (moved by hand, or taken before descriptions): a full backup
        # alone, restorable when its checkpoints say it was prepared
        backups = [b if b["name"] != name else dict(b, bare=True, complete=True) for b in backups]
    backups = with_checkpoints(backups, params["checkpoints"])
    try:
        pieces = backup_chain.chain(backups, name)
        position = ""
        if params["position_file"]:
            with open(os.path.join(pieces[-1]["path"], params["position_file"])) as handle:
                position = handle.read()
    except backup_chain.ChainBroken as err:
        return dict(empty, refusal="%s cannot be restored: %s" % (name, err), reason="nothing to restore")
    except (IOError, OSError) as err:
        missing = "%s holds no %s: %s" % (pieces[-1]["name"], params["position_file"], err)
        return dict(empty, chain=pieces, refusal=missing, reason="nothing to restore")
    unsafe = backup_chain.staging_refusal(params["staging"], repository, backups) if params["staging"] else ""
    if unsafe and len(pieces) > 1:
        return dict(empty, chain=pieces, refusal=unsafe, reason="nothing to restore")
    steps = backup_chain.apply_steps(pieces, params["staging"], params["prepare"], params["keep_open"]) \
        if params["staging"] else []
    stream_from = os.path.join(params["staging"], "data") if steps else pieces[0]["path"]
    return {"chain": pieces, "position": position, "steps": steps, "stream_from": stream_from, "refusal": "",
            "reason": "%s: %s" % (name, "a full backup, restored as it is stored" if len(pieces) == 1 else
                                  "the full backup %s and %d incremental(s) applied in order on a copy (%s)" % (
                                      pieces[0]["name"], len(pieces) - 1,
                                      " + ".join(p["name"] for p in pieces)))}


def main():
    module = AnsibleModule(argument_spec=dict(
        path=dict(type="path", required=True),
        step=dict(type="str", choices=["list", "prune", "replay", "status", "base", "chain"], default="list"),
        keep=dict(type="int", default=7), backup=dict(type="str"), target_time=dict(type="str", default=""),
        target_gtid_set=dict(type="str", default=""), max_age=dict(type="int", default=93600),
        checkpoints=dict(type="str", default="mariadb_backup_checkpoints"), position_file=dict(type="str"),
        staging=dict(type="path"), prepare=dict(type="list", elements="str", default=["mariadb-backup", "--prepare"]),
        keep_open=dict(type="list", elements="str", default=[])),
        supports_check_mode=True)
    path, step = module.params["path"], module.params["step"]
    if not os.path.isdir(path) and step == "base":
        module.exit_json(changed=False, backups=[], archives={}, removed=[], base=None, chain=[],
                         refusal="no backup was taken in %s yet" % path, reason="no backup was taken in %s yet" % path)
    if not os.path.isdir(path) and step != "chain":     # a chain may be restored from a directory elsewhere
        module.fail_json(msg="%s does not exist on the backup host: no backup was taken there" % path)
    backups, archives = (read_backups(path), read_archives(path)) if os.path.isdir(path) else ([], {})
    result = {"changed": False, "backups": backups, "archives": archives, "removed": []}
    try:
        if step == "prune":
            old_backups, old_logs = expired(backups, archives, module.params["keep"])
            result["removed"] = old_backups + old_logs
            result["changed"] = bool(result["removed"])
            if not module.check_mode:
                for directory in old_backups:
                    shutil.rmtree(directory)
                for log in old_logs:
                    os.remove(log)
            verb = "would remove" if module.check_mode else "removed"
            result["reason"] = ("keeps %d complete backups (a full backup with its incrementals counts as one) and "
                                "the binary logs from the oldest one on; %s %d backup(s) and %d log(s)" % (
                                    module.params["keep"], verb, len(old_backups), len(old_logs)))
        elif step == "replay":
            result["stop_arguments"] = replay_arguments(module.params["target_time"], module.params["target_gtid_set"])
            choice = backup_for_target(backups, module.params["backup"] or "latest", module.params["target_time"],
                                       module.params["target_gtid_set"])
            result["backup"] = choice["backup"]
            result["replay"] = replay_files(archives, choice["backup"]["started"])
            result["reason"] = "%s; %d archived log(s) from the one holding its position on" % (
                choice["reason"], len(result["replay"]))
        elif step == "base":
            result.update(base=None, chain=[], refusal="")
            try:
                found = backup_chain.next_base(with_checkpoints(backups, module.params["checkpoints"]))
                result.update(base=found["base"], chain=found["chain"])
                result["reason"] = "%s (of %s) is the newest complete backup; a restore of it applies %s" % (
                    found["base"]["name"], found["base"].get("member"), " + ".join(p["name"] for p in found["chain"]))
            except backup_chain.ChainBroken as err:
                result["refusal"] = result["reason"] = str(err)
        elif step == "chain":
            result.update(restore_chain(module.params))
        elif step == "status":
            recorded = read_status(path)
            result["status"] = repository_status(backups, recorded.get("last_attempt"), time.time(),
                                                 module.params["max_age"], recorded.get("turns"))
            result["reason"] = result["status"]["reason"]
        else:
            result["reason"] = "%d backup(s), %d archived log(s)" % (
                len(backups), sum(len(files) for files in archives.values()))
    except BackupRefused as err:
        module.fail_json(msg=str(err), **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
