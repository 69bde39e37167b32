# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: mongodb_running_member_errors
short_description: What a running MongoDB member cannot take from a converge, naming the procedure
version_added: 0.1.0
description:
  - Compares what a running member has (its replSetName, its keyfile's checksum, its installed package version)
    with what the run asks for (module_utils/mongodb_inputs.py running_member_errors) and returns one sentence
    per refused change, each naming the variable and the procedure that can make it. Empty when all is well.
positional: _input, desired
options:
  _input:
    description: What the member has - host, set_name, keyfile_checksum, package_version.
    type: dict
    required: true
  desired:
    description: What the run asks for - set_name, keyfile_checksum, package_version, package_file.
    type: dict
    required: true
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Refuse what a running member cannot take
  ansible.builtin.assert:
    that: errors | length == 0
    fail_msg: "{{ errors }}"
  vars:
    errors: "{{ {'set_name': 'rs0'} | dbops.clusters.mongodb_running_member_errors({'set_name': 'rs1'}) }}"
"""

RETURN = r"""
_value:
  description: One sentence per refused change.
  type: list
  elements: str
"""

from ansible.errors import AnsibleFilterError
from ansible_collections.dbops.clusters.plugins.module_utils import mongodb_inputs


def mongodb_running_member_errors(current, desired):
    if not isinstance(current, dict) or not isinstance(desired, dict):
        raise AnsibleFilterError("mongodb_running_member_errors expects two dicts (what the member has, what is asked)")
    return mongodb_inputs.running_member_errors(current, desired)


class FilterModule(object):
    def filters(self):
        return {"mongodb_running_member_errors": mongodb_running_member_errors}
