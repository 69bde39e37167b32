# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: galera_backup_member
short_description: Which Galera member a physical backup copies, full or incremental, or why none may be copied now
version_added: 0.1.0
description:
  - From every member's wsrep status (C(galera_state)'s C(wsrep)), returns C(member) (the member to desync and copy),
    C(level), and C(refusal) (one sentence, empty when the backup may run).
  - Refuses unless every member is Synced in one Primary component of all members. Never chooses a member in
    I(avoid) (the writer's and the proxies'); for a full backup the I(requested) one when given, else the last one
    in the group's order that is not avoided.
  - An incremental backup copies the pages changed since I(base), so it is taken from I(base)'s member, and only
    while that member's data directory is still the one I(base) copied (I(lineage), its marker's text now);
    otherwise I(level=incremental) is refused naming why, and I(level=auto) takes a full backup and says why.
positional: _input, members, avoid, requested, level, base, base_refusal, lineage
options:
  _input:
    description: Member name to its C(galera_state) C(wsrep) (null for a member that does not run).
    type: dict
    required: true
  members:
    description: The members, in the inventory group's order.
    type: list
    elements: str
    required: true
  avoid:
    description: Members the writer or the proxies use.
    type: list
    elements: str
    default: []
  requested:
    description: An operator's choice; empty lets the filter choose.
    type: str
    default: ""
  level:
    description: C(full), C(incremental) or C(auto).
    type: str
    default: full
  base:
    description:
      - The repository's newest complete backup (C(mysql_backup_repository) C(step=base)'s C(base), with its
        C(checkpoints)), for an incremental.
    type: dict
  base_refusal:
    description: Why the repository has no backup an incremental can be taken against (its C(refusal)).
    type: str
    default: ""
  lineage:
    description: The text of the lineage marker in I(base)'s member's data directory now (empty when it has none).
    type: str
    default: ""
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Choose the member to copy
  ansible.builtin.set_fact:
    choice: "{{ states | dbops.clusters.galera_backup_member(groups['galera'], ['g1']) }}"
"""

RETURN = r"""
_value:
  description:
    - C(member) (empty when refused), C(refusal) (empty when the backup may run), C(level) (C(full) or
      C(incremental)), C(base) and C(base_path) (an incremental's base), C(from_lsn) (the LSN an incremental copies
      the pages changed since) and C(reason).
  type: dict
"""

from ansible_collections.dbops.clusters.plugins.module_utils import galera_backup


def galera_backup_member(states, members, avoid=None, requested="", level="full", base=None, base_refusal="",
                         lineage=""):
    try:
        return dict(galera_backup.backup_plan(dict(states), list(members), list(avoid or []), requested or "",
                                              level or "full", base or None, base_refusal or "", lineage or ""),
                    refusal="")
    except galera_backup.BackupRefused as err:
        return {"member": "", "refusal": str(err), "level": level, "base": "", "base_path": "", "from_lsn": None,
                "reason": ""}


class FilterModule(object):
    def filters(self):
        return {"galera_backup_member": galera_backup_member}
