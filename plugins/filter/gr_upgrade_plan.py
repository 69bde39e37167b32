# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: gr_upgrade_plan
short_description: Plan a rolling package upgrade of a Group Replication group from what every member reported
version_added: 0.1.0
description:
  - The planning step of C(playbooks/rolling_upgrade_gr.yml) (logic in C(module_utils/gr_upgrade.py)). From each
    member's Group Replication state and package versions (read from the servers), returns the refusals (a member
    outside the play, a member not ONLINE or a group not complete, a target the package source does not have, a
    downgrade, a version jump MySQL does not support in place), each member's step (C(upgrade), or C(skip) when
    already on the target), the order (the secondaries first, the PRIMARY last) and how the primary role moves
    (a planned switch when the server version stays, else the upgraded members elect after a clean stop).
positional: _input, states, packages, in_play, group, addresses
options:
  _input:
    description: The group's members (the inventory group).
    type: list
    elements: str
    required: true
  states:
    description: Per member, C(state) (gr_member_state's), C(error) and C(packages) (apt_package_versions' result).
    type: dict
    required: true
  packages:
    description: The packages the upgrade replaces, the one holding the server first.
    type: list
    elements: str
    required: true
  in_play:
    description: The play's hosts.
    type: list
    elements: str
    required: true
  group:
    description: The inventory group's name, for the messages.
    type: str
    default: group_replication
  addresses:
    description: Each member's address as the group's view reports it (C(group_replication_addresses)), how a
      member outside the play is found in the view.
    type: dict
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Plan
  ansible.builtin.set_fact:
    plan: "{{ groups['gr'] | dbops.clusters.gr_upgrade_plan(states, ['mysql-server-core'], ansible_play_hosts, 'gr') }}"
"""

RETURN = r"""
_value:
  description: C(refusals), C(order), C(steps), C(changes), C(primary), C(why), C(handover), C(versions),
    C(target_version).
  type: dict
"""

from ansible_collections.dbops.clusters.plugins.module_utils import gr_upgrade


def gr_upgrade_plan(members, states, packages, in_play, group="group_replication", addresses=None):
    return gr_upgrade.plan_upgrade([str(name) for name in members], dict(states), [str(name) for name in packages],
                                   [str(name) for name in in_play], str(group),
                                   addresses=dict((str(key), str(value)) for key, value in (addresses or {}).items()))


class FilterModule(object):
    def filters(self):
        return {"gr_upgrade_plan": gr_upgrade_plan}
