# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: mysql_role_input_errors
short_description: Refusals of a MySQL-family role's inputs, each naming its variable
version_added: 0.1.0
description:
  - Checks ports, counts and durations by type and range, override values, schema and account names,
    privilege names and levels, and returns one sentence per problem (never a password). Empty when all is well.
positional: _input
options:
  _input:
    description: The role's variables without their prefix, plus C(family) (mysql or mariadb).
    type: dict
    required: true
  prefix:
    description:
      - The prefix of the role's variables, used in the messages (percona_server and the cluster roles layered on
        it share these checks).
    type: str
    default: percona_server_
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Refuse bad input before any change
  ansible.builtin.assert:
    that: errors | length == 0
    fail_msg: "{{ errors }}"
  vars:
    errors: "{{ {'port': percona_server_port, 'family': 'mysql'} | dbops.clusters.mysql_role_input_errors }}"
"""

RETURN = r"""
_value:
  description: One sentence per refused input.
  type: list
  elements: str
"""

from ansible.errors import AnsibleFilterError
from ansible_collections.dbops.clusters.plugins.module_utils import mysql_inputs


def mysql_role_input_errors(inputs, prefix="percona_server_"):
    if not isinstance(inputs, dict):
        raise AnsibleFilterError("mysql_role_input_errors expects a dict of the role's inputs")
    return mysql_inputs.role_errors(inputs, prefix)


class FilterModule(object):
    def filters(self):
        return {"mysql_role_input_errors": mysql_role_input_errors}
