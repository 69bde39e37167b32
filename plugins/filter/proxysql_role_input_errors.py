# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: proxysql_role_input_errors
short_description: Refusals of the proxysql role's inputs, each naming its variable
version_added: 0.1.0
description:
  - Checks ports, counts and intervals against ProxySQL's own ranges, listener addresses and collisions,
    hostgroup ids, users, query-rule regexes (as RE2 compiles them) and global variables, and returns one
    sentence per problem (never a password). Empty when all is well.
positional: _input
options:
  _input:
    description: The role's variables without their C(proxysql_) prefix, plus C(cluster_address).
    type: dict
    required: true
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Refuse bad input before any change
  ansible.builtin.assert:
    that: errors | length == 0
    fail_msg: "{{ errors }}"
  vars:
    errors: "{{ {'mysql_port': proxysql_mysql_port} | dbops.clusters.proxysql_role_input_errors }}"
"""

RETURN = r"""
_value:
  description: One sentence per refused input.
  type: list
  elements: str
"""

from ansible.errors import AnsibleFilterError
from ansible_collections.dbops.clusters.plugins.module_utils import proxysql_inputs


def proxysql_role_input_errors(inputs):
    if not isinstance(inputs, dict):
        raise AnsibleFilterError("proxysql_role_input_errors expects a dict of the role's inputs")
    return proxysql_inputs.role_errors(inputs)


class FilterModule(object):
    def filters(self):
        return {"proxysql_role_input_errors": proxysql_role_input_errors}
