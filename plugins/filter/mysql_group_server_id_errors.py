# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: mysql_group_server_id_errors
short_description: Refusals of members of one inventory group that would share a server_id
version_added: 0.1.0
description:
  - For each member, the server_id it will run with, from C(group_replication_server_id_declared) when it
    published one (the value the play gives the role, which C(hostvars) does not show), else its inventory
    C(percona_server_server_id), derived from its address when 0. Returns one sentence per shared server_id.
  - Membership is the inventory group given, never the play's hosts, so C(--limit) cannot hide a clash. A
    member whose address is not known on the controller is not compared.
positional: _input, hostvars, addresses
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
  addresses:
    description: Each member's address, by inventory name.
    type: dict
    required: true
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Refuse two members with one server_id
  ansible.builtin.assert:
    that: errors | length == 0
    fail_msg: "{{ errors }}"
  vars:
    errors: "{{ group_replication_members | dbops.clusters.mysql_group_server_id_errors(hostvars, addresses) }}"
"""

RETURN = r"""
_value:
  description: One sentence per server_id shared by several members.
  type: list
  elements: str
"""

from ansible_collections.dbops.clusters.plugins.module_utils import mysql_inputs


def mysql_group_server_id_errors(members, hostvars, addresses):
    """Sentences naming members of one inventory group that would run with the same server_id.

    Each member's percona_server_server_id is the one it published (group_replication_server_id_declared, the
    value the play gives the role) or its inventory variable; its address is addresses[member]."""
    server_ids = {}
    for member in members:
        try:
            published = hostvars[member].get("group_replication_server_id_declared")
            explicit = published if published is not None else hostvars[member].get("percona_server_server_id", 0)
            server_ids[member] = mysql_inputs.server_id_for(addresses.get(member) or "", explicit or 0)
        except Exception:  # pylint: disable=broad-except  # not known on the controller: not compared
            server_ids[member] = None
    return mysql_inputs.server_id_clashes(
        server_ids, "in one group; Group Replication and its recovery channel need one per member")


class FilterModule(object):
    def filters(self):
        return {"mysql_group_server_id_errors": mysql_group_server_id_errors}
