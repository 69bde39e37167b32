# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: mysql_upgrade_plan
short_description: Plan a rolling package upgrade of an async MySQL source and its replicas
version_added: 0.1.0
description:
  - The planning step of C(playbooks/rolling_upgrade_mysql.yml) (logic in C(module_utils/mysql_upgrade.py)). From
    each server's replication state and package versions (read from the servers), returns the refusals (a server
    outside the play or not running, a live topology that contradicts the inventory, broken replication, a target
    the package source does not have, a downgrade, a version jump MySQL does not support in place), each server's
    step (C(upgrade), or C(skip) when already on the target) and the order (the deepest replicas first, the
    source last).
positional: _input, states, packages, in_play, declared, group
options:
  _input:
    description: The topology's servers (the inventory group).
    type: list
    elements: str
    required: true
  states:
    description: Per server, C(state) (mysql_switchover's, step state) and C(packages) (apt_package_versions' result).
    type: dict
    required: true
  packages:
    description: The packages the upgrade replaces, the one holding mysqld first.
    type: list
    elements: str
    required: true
  in_play:
    description: The play's hosts.
    type: list
    elements: str
    required: true
  declared:
    description: Each server's C(percona_server_source) from the inventory, empty for the source.
    type: dict
    required: true
  group:
    description: The inventory group's name, for the messages.
    type: str
    default: mysql
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Plan
  ansible.builtin.set_fact:
    plan: >-
      {{ groups['mysql'] | dbops.clusters.mysql_upgrade_plan(states, ['mysql-server-core'], ansible_play_hosts,
                                                             {'src': '', 'rep1': 'src'}, 'mysql') }}
"""

RETURN = r"""
_value:
  description: C(refusals), C(order), C(steps), C(changes), C(source), C(why), C(versions), C(target_version).
  type: dict
"""

from ansible_collections.dbops.clusters.plugins.module_utils import mysql_upgrade


def mysql_upgrade_plan(members, states, packages, in_play, declared, group="mysql"):
    return mysql_upgrade.plan_upgrade([str(name) for name in members], dict(states),
                                      [str(name) for name in packages], [str(name) for name in in_play],
                                      dict((str(key), str(value or "")) for key, value in dict(declared).items()),
                                      str(group))


class FilterModule(object):
    def filters(self):
        return {"mysql_upgrade_plan": mysql_upgrade_plan}
