# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: galera_upgrade_plan
short_description: Plan a rolling package upgrade of a Galera cluster from what every member reported
version_added: 0.1.0
description:
  - The planning step of C(playbooks/rolling_upgrade_galera.yml). From each member's wsrep status, client
    connections and package versions (read from the servers), returns the refusals (a member outside the play,
    an unhealthy or incomplete cluster, more than one cluster state UUID, a target the package source does not
    have, a downgrade), each member's step (C(upgrade) or C(skip) when already on the target) and the order -
    the members without client connections first, the member taking the writes last.
positional: _input, states, packages, in_play, group
options:
  _input:
    description: The cluster's members (the inventory group).
    type: list
    elements: str
    required: true
  states:
    description: Per member, C(wsrep) (galera_state's), C(reason), C(client_connections) and C(packages)
      (apt_package_versions' result).
    type: dict
    required: true
  packages:
    description: The flavor's Galera packages; the state transfer's tools among them (socat, rsync) are left
      alone, the rest (server, client, backup, provider) is what the upgrade replaces.
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
    default: galera
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Plan
  ansible.builtin.set_fact:
    plan: "{{ groups['galera'] | dbops.clusters.galera_upgrade_plan(states, ['galera-4'], ansible_play_hosts) }}"
"""

RETURN = r"""
_value:
  description: C(refusals), C(order), C(steps), C(changes), C(writer), C(why), C(cluster_state_uuid).
  type: dict
"""

from ansible_collections.dbops.clusters.plugins.module_utils import galera_upgrade


def galera_upgrade_plan(members, states, packages, in_play, group="galera"):
    return galera_upgrade.plan_upgrade(list(members), dict(states), galera_upgrade.upgrade_packages(packages),
                                       list(in_play), group)


class FilterModule(object):
    def filters(self):
        return {"galera_upgrade_plan": galera_upgrade_plan}
