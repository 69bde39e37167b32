# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: postgres_standby_floor
short_description: Raise a member's settings that a replica must hold at least at its primary's value
version_added: 0.1.0
description:
  - "A replica pauses recovery when its max_connections, max_worker_processes, max_wal_senders,
    max_prepared_transactions or max_locks_per_transaction is lower than its primary's. Settings derived per
    host (CPUs, memory) differ between members of different sizes; this returns the settings of this member to
    raise to the highest value in the group, each with a reason naming the member it follows."
positional: _input, members
options:
  _input:
    description: This member's settings (name to a dict with value and reason).
    type: dict
    required: true
  members:
    description: Member name to its settings, for every member whose plan is known.
    type: dict
    required: true
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Raise the settings a replica needs at its primary's value
  ansible.builtin.set_fact:
    settings: "{{ settings | combine(settings | dbops.clusters.postgres_standby_floor(all_plans)) }}"
"""

RETURN = r"""
_value:
  description: The settings raised (name to a dict with value and reason); empty when none is.
  type: dict
"""

from ansible_collections.dbops.clusters.plugins.module_utils.postgres_tuning import standby_floor


class FilterModule(object):
    def filters(self):
        return {"postgres_standby_floor": standby_floor}
