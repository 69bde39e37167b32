# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: postgres_role_input_errors
short_description: Refusals of the postgres_tuned role's inputs, each naming its variable
version_added: 0.1.0
description:
  - Checks ports, counts and durations by type and range, listen addresses and the member address, client access
    networks (a prefix longer than the address is refused), roles (a password for each, known attributes) and
    databases, and returns one sentence per problem (never a password). Empty when all is well.
positional: _input
options:
  _input:
    description: The role's variables without their postgres_tuned_ prefix.
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
    errors: "{{ {'port': postgres_tuned_port} | dbops.clusters.postgres_role_input_errors }}"
"""

RETURN = r"""
_value:
  description: One sentence per problem.
  type: list
  elements: str
"""

from ansible_collections.dbops.clusters.plugins.module_utils.postgres_inputs import role_errors


class FilterModule(object):
    def filters(self):
        return {"postgres_role_input_errors": role_errors}
