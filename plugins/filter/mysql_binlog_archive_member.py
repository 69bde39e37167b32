# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: mysql_binlog_archive_member
short_description: Which server of an asynchronous MySQL topology the binary-log archive streams from
version_added: 0.1.0
description:
  - From every member's replication state (C(mysql_switchover step=state)'s C(state)), returns C(member), C(source)
    (the live source, read from the servers), C(reason) and C(refusal) (one sentence, empty when it may run).
  - The live source, unless I(requested) names another running member.
positional: _input, members, requested
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
    description: An operator's choice; empty follows the live source.
    type: str
    default: ""
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Choose the server the archive streams from
  ansible.builtin.set_fact:
    followed: "{{ states | dbops.clusters.mysql_binlog_archive_member(groups['mysql']) }}"
"""

RETURN = r"""
_value:
  description: C(member), C(source) and C(reason) (empty when refused) and C(refusal) (empty when it may run).
  type: dict
"""

from ansible_collections.dbops.clusters.plugins.module_utils import mysql_backup


def mysql_binlog_archive_member(states, members, requested=""):
    try:
        return dict(mysql_backup.archive_member(dict(states), list(members), requested or ""), refusal="")
    except mysql_backup.BackupRefused as err:
        return {"member": "", "source": "", "reason": "", "refusal": str(err)}


class FilterModule(object):
    def filters(self):
        return {"mysql_binlog_archive_member": mysql_binlog_archive_member}
