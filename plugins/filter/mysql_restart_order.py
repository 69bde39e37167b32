# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: mysql_restart_order
short_description: Order MySQL servers for a rolling restart - replicas first, their source last
version_added: 0.1.0
description:
  - Sorts the given inventory names so that every replica comes before its source (the deepest replicas of a
    chain first), reading each host's C(percona_server_source) from the inventory, not from the play.
positional: _input, hostvars, inventory_hosts
options:
  _input:
    description: Inventory names of the servers to restart.
    type: list
    elements: str
    required: true
  hostvars:
    description: C(hostvars).
    type: dict
    required: true
  inventory_hosts:
    description: Inventory hosts whose C(percona_server_source) define the topology, normally C(groups['all']).
    type: list
    elements: str
    required: true
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Show the restart order
  ansible.builtin.debug:
    msg: "{{ ['src', 'rep1'] | dbops.clusters.mysql_restart_order(hostvars, groups['all']) }}"
"""

RETURN = r"""
_value:
  description: The names, replicas before their sources.
  type: list
  elements: str
"""

from ansible_collections.dbops.clusters.plugins.module_utils import mysql_inputs


def _source(hostvars, host):
    try:
        return str(hostvars[host]["percona_server_source"] or "")
    except Exception:  # pylint: disable=broad-except  # not set for this host: it has no source
        return ""


def mysql_restart_order(names, hostvars, inventory_hosts):
    sources = dict((host, _source(hostvars, host)) for host in inventory_hosts)
    return mysql_inputs.restart_order(list(names), sources)


class FilterModule(object):
    def filters(self):
        return {"mysql_restart_order": mysql_restart_order}
