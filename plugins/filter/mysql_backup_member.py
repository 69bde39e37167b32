# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: mysql_backup_member
short_description: Which server of an asynchronous MySQL topology a clone backup copies, or why none may be copied now
version_added: 0.1.0
description:
  - From every member's replication state (C(mysql_switchover step=state)'s C(state)), returns C(member), C(source)
    (the live source, read from the servers), C(reason) and C(refusal) (one sentence, empty when the backup may run).
  - A replica that runs both replication threads within I(max_lag) seconds, the last such one in the group's order;
    the source only when it has no replica or when I(requested) names it.
positional: _input, members, requested, max_lag
options:
  _input:
    description: Member name to its C(mysql_switchover) C(state).
    type: dict
    required: true
  members:
    description: The members, in the inventory group's order.
    type: list
    elements: str
    required: true
  requested:
    description: An operator's choice; empty lets the filter choose.
    type: str
    default: ""
  max_lag:
    description: Seconds a replica may lag and still be copied.
    type: int
    default: 60
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Choose the server to copy
  ansible.builtin.set_fact:
    choice: "{{ states | dbops.clusters.mysql_backup_member(groups['mysql'], '', 60) }}"
"""

RETURN = r"""
_value:
  description: C(member), C(source) and C(reason) (empty when refused) and C(refusal) (empty when the backup may run).
  type: dict
"""

from ansible_collections.dbops.clusters.plugins.module_utils import mysql_backup


def mysql_backup_member(states, members, requested="", max_lag=60):
    try:
        return dict(mysql_backup.backup_member(dict(states), list(members), requested or "", int(max_lag)),
                    refusal="")
    except mysql_backup.BackupRefused as err:
        return {"member": "", "source": "", "reason": "", "refusal": str(err)}


class FilterModule(object):
    def filters(self):
        return {"mysql_backup_member": mysql_backup_member}
