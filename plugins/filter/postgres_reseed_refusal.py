# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: postgres_reseed_refusal
short_description: Why a PostgreSQL member must not be emptied to become a replica, or an empty string
version_added: 0.1.0
description:
  - Takes what M(dbops.clusters.postgres_member_state) read on the member just before it would be emptied for
    C(pg_basebackup). A member holding no cluster, or running as a replica, may be; one that is not running (its
    contents cannot be seen), or runs as a primary holding databases, tables or streaming replicas of its own, is
    refused unless the user allows it for that host (C(postgres_tuned_reseed)).
positional: _input, member, forced
options:
  _input:
    description: The registered result of M(dbops.clusters.postgres_member_state) on the member.
    type: dict
    required: true
  member:
    description: The member's inventory name, for the message.
    type: str
    required: true
  forced:
    description: Whether the user allows this member to be copied again although it holds data.
    type: bool
    default: false
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Refuse to empty a member that holds data
  ansible.builtin.assert:
    that: refusal | length == 0
    fail_msg: "{{ refusal }}"
  vars:
    refusal: "{{ member_state | dbops.clusters.postgres_reseed_refusal(inventory_hostname) }}"
"""

RETURN = r"""
_value:
  description: Why not, naming postgres_tuned_reseed; empty when the member may be emptied.
  type: str
"""

from ansible_collections.dbops.clusters.plugins.module_utils.postgres_replication import reseed_refusal


def postgres_reseed_refusal(state, member, forced=False):
    return reseed_refusal(member, state, forced) or ""


class FilterModule(object):
    def filters(self):
        return {"postgres_reseed_refusal": postgres_reseed_refusal}
