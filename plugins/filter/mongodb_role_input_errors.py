# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: mongodb_role_input_errors
short_description: Refusals of the mongodb_rs role's inputs, each naming its variable
version_added: 0.1.0
description:
  - Checks the port, the replica set name, net.bindIp, the replica set config's settings document, the member
    fields, the WiredTiger cache size and the gate's numbers by type, range and meaning (module_utils/mongodb_inputs.py
    role_errors), and returns one sentence per problem. Empty when all is well.
positional: _input
options:
  _input:
    description: The role's variables without their prefix (any of port, set_name, bind_ip, settings, member,
      members, cache_size_gb, gate_timeout, max_lag_seconds).
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
    errors: >-
      {{ {'port': mongodb_rs_port, 'set_name': mongodb_rs_set_name} | dbops.clusters.mongodb_role_input_errors }}
"""

RETURN = r"""
_value:
  description: One sentence per refused input.
  type: list
  elements: str
"""

from ansible.errors import AnsibleFilterError
from ansible_collections.dbops.clusters.plugins.module_utils import mongodb_inputs


def mongodb_role_input_errors(inputs):
    if not isinstance(inputs, dict):
        raise AnsibleFilterError("mongodb_role_input_errors expects a dict of the role's inputs")
    return mongodb_inputs.role_errors(inputs)


class FilterModule(object):
    def filters(self):
        return {"mongodb_role_input_errors": mongodb_role_input_errors}
