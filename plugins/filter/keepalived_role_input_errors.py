# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: keepalived_role_input_errors
short_description: Refusals of the keepalived role's inputs, each naming its variable
version_added: 0.1.0
description:
  - Checks VIP addresses and prefixes, router ids, priorities, advert and check intervals, the SQL check's
    login and query, and the peers' addresses, before C(keepalived -t) would stop them with its own parse
    error; returns one sentence per problem (never a password). Empty when all is well.
positional: _input
options:
  _input:
    description: >-
      The role's variables without their C(keepalived_) prefix, plus C(peers) (how many hosts the group has)
      and C(peer_addresses) (each peer's unicast address).
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
    errors: "{{ {'vips': keepalived_vips, 'peers': 2} | dbops.clusters.keepalived_role_input_errors }}"
"""

RETURN = r"""
_value:
  description: One sentence per refused input.
  type: list
  elements: str
"""

from ansible.errors import AnsibleFilterError
from ansible_collections.dbops.clusters.plugins.module_utils import keepalived_inputs


def keepalived_role_input_errors(inputs):
    if not isinstance(inputs, dict):
        raise AnsibleFilterError("keepalived_role_input_errors expects a dict of the role's inputs")
    return keepalived_inputs.role_errors(inputs)


class FilterModule(object):
    def filters(self):
        return {"keepalived_role_input_errors": keepalived_role_input_errors}
