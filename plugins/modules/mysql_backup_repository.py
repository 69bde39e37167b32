#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: mysql_backup_repository
short_description: The MySQL backups and archived binary logs on a backup host - list, retention, what a restore replays
version_added: 0.1.0
description:
  - Runs on the backup host. I(path) holds one directory per backup (each with its C(dbops-backup.json)) and
    C(binlog/<server>/), the binary logs the archive service streamed from each server it followed.
  - C(list) returns the backups (newest first) and the archived logs, changes nothing.
  - C(prune) keeps the newest I(keep) complete backups and every archived log a restore from the oldest of them
    needs, and removes the rest (older backups, incomplete copies older than the oldest kept one, logs last
    written before it started).
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
    choices: [list, prune, replay, status]
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
    type: str
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
  description: The backups, newest first - C(path), C(name), C(started), C(finished), C(member), C(complete).
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
    - For C(status) - C(ok) (the newest complete backup is at most I(max_age) seconds old), C(age_seconds),
      C(newest) (its name), C(last_attempt) (the scheduled backups' last outcome - C(name), C(member), C(outcome),
      C(message)) and C(reason).
  returned: when I(step=status)
  type: dict
reason:
  description: What the step did and why.
  returned: always
  type: str
"""

import os
import shutil
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_backup import (
    BackupRefused, backup_for_target, expired, read_archives, read_backups, read_status, replay_arguments,
    replay_files, repository_status)


def main():
    module = AnsibleModule(argument_spec=dict(
        path=dict(type="path", required=True), step=dict(type="str", choices=["list", "prune", "replay", "status"],
                                                         default="list"),
        keep=dict(type="int", default=7), backup=dict(type="str"), target_time=dict(type="str", default=""),
        target_gtid_set=dict(type="str", default=""), max_age=dict(type="int", default=93600)),
        supports_check_mode=True)
    path, step = module.params["path"], module.params["step"]
    if not os.path.isdir(path):
        module.fail_json(msg="%s does not exist on the backup host: no backup was taken there" % path)
    backups, archives = read_backups(path), read_archives(path)
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
            result["reason"] = ("keeps %d complete backups and the binary logs from the oldest one on; %s %d "
                                "backup(s) and %d log(s)" % (module.params["keep"], verb, len(old_backups),
                                                             len(old_logs)))
        elif step == "replay":
            result["stop_arguments"] = replay_arguments(module.params["target_time"], module.params["target_gtid_set"])
            choice = backup_for_target(backups, module.params["backup"] or "latest", module.params["target_time"],
                                       module.params["target_gtid_set"])
            result["backup"] = choice["backup"]
            result["replay"] = replay_files(archives, choice["backup"]["started"])
            result["reason"] = "%s; %d archived log(s) from the one holding its position on" % (
                choice["reason"], len(result["replay"]))
        elif step == "status":
            result["status"] = repository_status(backups, read_status(path).get("last_attempt"), time.time(),
                                                 module.params["max_age"])
            result["reason"] = result["status"]["reason"]
        else:
            result["reason"] = "%d backup(s), %d archived log(s)" % (
                len(backups), sum(len(files) for files in archives.values()))
    except BackupRefused as err:
        module.fail_json(msg=str(err), **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
