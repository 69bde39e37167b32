# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: mysql_server_id
short_description: The server_id of a MySQL server, explicit or derived from its IPv4 address
version_added: 0.1.0
description:
  - Returns I(explicit) when it is above 0, else 256 times the third octet plus the fourth octet of the address.
    Refuses an address that is not IPv4 or that derives 0.
positional: _input, explicit
options:
  _input:
    description: IPv4 address of the server.
    type: str
    required: true
  explicit:
    description: The configured server_id; 0 derives it.
    type: int
    default: 0
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Show the server_id
  ansible.builtin.debug:
    msg: "{{ percona_server_address | dbops.clusters.mysql_server_id(percona_server_server_id) }}"
"""

RETURN = r"""
_value:
  description: The server_id.
  type: int
"""

from ansible.errors import AnsibleFilterError
from ansible_collections.dbops.clusters.plugins.module_utils import mysql_inputs


def mysql_server_id(address, explicit=0):
    try:
        return mysql_inputs.server_id_for(address, explicit)
    except ValueError as err:
        raise AnsibleFilterError(str(err))


class FilterModule(object):
    def filters(self):
        return {"mysql_server_id": mysql_server_id}
