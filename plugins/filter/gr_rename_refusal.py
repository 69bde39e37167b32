# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: gr_rename_refusal
short_description: Refuse a new Group Replication group name while members run under another
version_added: 0.1.0
description:
  - Reads each member's C(group_replication_state_before) (registered from M(dbops.clusters.gr_member_state)
    before the role writes anything) and returns a sentence naming the members whose server runs with another
    group name, and the procedure for a rename; an empty string when there is none.
  - A member that did not report, or runs without Group Replication loaded, is not compared.
positional: _input, hostvars, group_name
options:
  _input:
    description: Inventory names of the group's members.
    type: list
    elements: str
    required: true
  hostvars:
    description: C(hostvars).
    type: dict
    required: true
  group_name:
    description: The group name the role would write.
    type: str
    required: true
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Refuse a new name for a running group
  ansible.builtin.assert:
    that: refusal | length == 0
    fail_msg: "{{ refusal }}"
  vars:
    refusal: "{{ group_replication_members | dbops.clusters.gr_rename_refusal(hostvars, group_name) }}"
"""

RETURN = r"""
_value:
  description: The refusal, or an empty string.
  type: str
"""

from ansible_collections.dbops.clusters.plugins.module_utils import group_replication


def gr_rename_refusal(members, hostvars, group_name):
    running = group_replication.reported_states(members, hostvars)
    names = dict((member, state.get("group_name") or "") for member, state in running.items())
    return group_replication.rename_refusal(names, group_name) or ""


class FilterModule(object):
    def filters(self):
        return {"gr_rename_refusal": gr_rename_refusal}
