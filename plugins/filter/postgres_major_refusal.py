# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: postgres_major_refusal
short_description: Why postgres_tuned must not run on a member whose running major is not postgres_tuned_version
version_added: 0.1.0
description:
  - Takes what M(dbops.clusters.postgres_member_state) read on the member. A running server of another major than
    the role's input is refused, naming playbooks/pg_upgrade_major.yml (the role never changes a running server's
    major). A member that does not answer, or runs the same major, gives an empty string.
positional: _input, version, member
options:
  _input:
    description: The registered result of M(dbops.clusters.postgres_member_state) on the member.
    type: dict
    required: true
  version:
    description: The major the role was given (postgres_tuned_version).
    type: int
    required: true
  member:
    description: The member's inventory name, for the message; default the result's C(item) (a looped task).
    type: str
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Refuse a change of major
  ansible.builtin.assert:
    that: refusal | length == 0
    fail_msg: "{{ refusal }}"
  vars:
    refusal: "{{ member_state | dbops.clusters.postgres_major_refusal(postgres_tuned_version, inventory_hostname) }}"
"""

RETURN = r"""
_value:
  description: Why not, naming the upgrade playbook; empty when the role may run.
  type: str
"""

from ansible_collections.dbops.clusters.plugins.module_utils.postgres_upgrade import role_major_refusal


def postgres_major_refusal(state, version, member=None):
    return role_major_refusal(state, version, member or state.get("item", "this member"))


class FilterModule(object):
    def filters(self):
        return {"postgres_major_refusal": postgres_major_refusal}
