# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: gr_tls_mode_refusal
short_description: Refuse a new TLS mode for group communication while members run in the group
version_added: 0.1.0
description:
  - Reads each member's C(group_replication_state_before) (registered from M(dbops.clusters.gr_member_state)
    before the role writes anything) and returns a sentence naming the members whose group communication runs
    (ONLINE or RECOVERING) with another C(group_replication_ssl_mode), and the procedure for the change; an empty
    string when there is none.
  - Members with different modes cannot talk to each other, so restarting them one at a time into the new mode
    would split the group.
positional: _input, hostvars, ssl_mode
options:
  _input:
    description: Inventory names of the group's members.
    type: list
    elements: str
    required: true
  hostvars:
    description: C(hostvars).
    type: dict
    required: true
  ssl_mode:
    description: The group_replication_ssl_mode the role would write.
    type: str
    required: true
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Refuse a new TLS mode for a running group
  ansible.builtin.assert:
    that: refusal | length == 0
    fail_msg: "{{ refusal }}"
  vars:
    refusal: "{{ group_replication_members | dbops.clusters.gr_tls_mode_refusal(hostvars, 'VERIFY_IDENTITY') }}"
"""

RETURN = r"""
_value:
  description: The refusal, or an empty string.
  type: str
"""

from ansible_collections.dbops.clusters.plugins.module_utils import group_replication


def gr_tls_mode_refusal(members, hostvars, ssl_mode):
    running = group_replication.reported_states(members, hostvars)
    modes = dict((member, state.get("ssl_mode") or "DISABLED") for member, state in running.items()
                 if state.get("member_state") in ("ONLINE", "RECOVERING"))
    return group_replication.tls_mode_refusal(modes, ssl_mode) or ""


class FilterModule(object):
    def filters(self):
        return {"gr_tls_mode_refusal": gr_tls_mode_refusal}
