# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: mysql_live_topology_conflicts
short_description: Where the running MySQL servers contradict the inventory's replication topology
version_added: 0.1.0
description:
  - Compares each host's C(percona_server_source) in the inventory with what its server does now, as a
    switchover leaves it - a declared source that replicates, a declared replica that has replicas and no
    source, a replica following another inventory host than the declared one - and names each mismatch.
  - Servers not installed or not running yet (a first converge) are not compared.
positional: _input, hostvars, inventory_hosts, state_variable
options:
  _input:
    description: Unused (pass the inventory host list); the filter reads C(hostvars).
    type: raw
    required: true
  hostvars:
    description: C(hostvars).
    type: dict
    required: true
  inventory_hosts:
    description: The inventory hosts whose topology is compared, normally C(groups['all']).
    type: list
    elements: str
    required: true
  state_variable:
    description: The registered result of C(dbops.clusters.mysql_switchover step=state) on each host.
    type: str
    required: true
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Refuse a converge on a topology a switchover changed
  ansible.builtin.assert:
    that: conflicts | length == 0
  vars:
    conflicts: "{{ groups['all'] | dbops.clusters.mysql_live_topology_conflicts(hostvars, groups['all'],
                   'percona_server_live') }}"
"""

RETURN = r"""
_value:
  description: Sentences, one per mismatch; empty when the live servers agree with the inventory.
  type: list
  elements: str
"""

from ansible_collections.dbops.clusters.plugins.module_utils import mysql_switchover


def _get(hostvars, host, name):
    try:
        return hostvars[host][name]
    except Exception:  # pylint: disable=broad-except  # not set for this host
        return None


def mysql_live_topology_conflicts(dummy, hostvars, inventory_hosts, state_variable):
    declared, states, addresses = {}, {}, {}
    for host in inventory_hosts:
        declared[host] = str(_get(hostvars, host, "percona_server_source") or "")
        addresses[host] = str(_get(hostvars, host, "percona_server_address") or "")
        result = _get(hostvars, host, state_variable)
        state = (result or {}).get("state") or {}
        # a server that could not be read (running, but without the driver the roles install) is not compared
        if state.get("running") and state.get("read", True):
            states[host] = result["state"]
    return mysql_switchover.converge_conflicts(declared, states, addresses)


class FilterModule(object):
    def filters(self):
        return {"mysql_live_topology_conflicts": mysql_live_topology_conflicts}
