# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: galera_backup_member
short_description: Which Galera member a physical backup copies, or why none may be copied now
version_added: 0.1.0
description:
  - From every member's wsrep status (C(galera_state)'s C(wsrep)), returns C(member) (the member to desync and copy) and
    C(refusal) (one sentence, empty when the backup may run).
  - Refuses unless every member is Synced in one Primary component of all members. Never chooses a member in
    I(avoid) (the writer's and the proxies'); the I(requested) one when given, else the last one in the group's
    order that is not avoided.
positional: _input, members, avoid, requested
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
  description: C(member) (empty when refused) and C(refusal) (empty when the backup may run).
  type: dict
"""

from ansible_collections.dbops.clusters.plugins.module_utils import galera_backup


def galera_backup_member(states, members, avoid=None, requested=""):
    try:
        return {"member": galera_backup.backup_member(dict(states), list(members), list(avoid or []),
                                                      requested or ""), "refusal": ""}
    except galera_backup.BackupRefused as err:
        return {"member": "", "refusal": str(err)}


class FilterModule(object):
    def filters(self):
        return {"galera_backup_member": galera_backup_member}
