# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: etcd_role_input_errors
short_description: Refusals of the etcd role's inputs, each naming its variable
version_added: 0.1.0
description:
  - Checks the member count (odd, 3 to 9, or one with etcd_single_member_lab), the members' addresses, ports,
    the data directory, heartbeat and election timeout, quota, compaction, the root password's presence and
    the users, before anything changes; returns one sentence per problem (never a password). Empty when all is
    well.
positional: _input
options:
  _input:
    description: >-
      The role's variables without their C(etcd_) prefix, plus C(members) (the group's host names) and
      C(addresses) (each member's etcd_address).
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
    errors: "{{ {'members': groups['etcd'], 'client_port': 2379} | dbops.clusters.etcd_role_input_errors }}"
"""

RETURN = r"""
_value:
  description: One sentence per refused input.
  type: list
  elements: str
"""

from ansible.errors import AnsibleFilterError
from ansible_collections.dbops.clusters.plugins.module_utils import etcd_inputs


def etcd_role_input_errors(inputs):
    if not isinstance(inputs, dict):
        raise AnsibleFilterError("etcd_role_input_errors expects a dict of the role's inputs")
    return etcd_inputs.role_errors(inputs)


class FilterModule(object):
    def filters(self):
        return {"etcd_role_input_errors": etcd_role_input_errors}
