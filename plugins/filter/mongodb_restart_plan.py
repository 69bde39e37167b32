# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: mongodb_restart_plan
short_description: The rolling restart order of a MongoDB replica set, or why it is refused
version_added: 0.1.0
description:
  - From a C(dbops.clusters.mongodb_rs_state) result (its C(members) and C(config)), the order of a rolling
    restart from C(restart_plan) in C(module_utils/mongodb_rs_plan.py) - secondaries first, the primary last after a
    step-down.
  - A primary that cannot hand over (a one-member set; every other member an arbiter, hidden, delayed,
    priority 0, non-voting or not SECONDARY) makes the plan refused (C(error) set, C(order) empty) unless
    I(allow_downtime), when it is restarted in place (C(primary_in_place)).
positional: _input, allow_downtime, set_name
options:
  _input:
    description: A C(mongodb_rs_state) result.
    type: dict
    required: true
  allow_downtime:
    description: Restart a primary that cannot hand over in place instead of refusing.
    type: bool
    default: false
  set_name:
    description: The set's name, for the message.
    type: str
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Plan the restart
  ansible.builtin.set_fact:
    restart_plan: "{{ mongodb_rs_state | dbops.clusters.mongodb_restart_plan(false, 'rs0') }}"
"""

RETURN = r"""
_value:
  description: C(order) (list of C(host), C(stepdown), C(in_place)), C(primary), C(primary_in_place), C(error).
  type: dict
"""

from ansible.errors import AnsibleFilterError
from ansible_collections.dbops.clusters.plugins.module_utils import mongodb_rs_plan


def mongodb_restart_plan(state, allow_downtime=False, set_name=None):
    if not isinstance(state, dict) or "members" not in state or "config" not in state:
        raise AnsibleFilterError("mongodb_restart_plan needs a mongodb_rs_state result of an initiated member")
    status = [{"name": m.get("name"), "stateStr": m.get("state")} for m in state["members"]]
    return mongodb_rs_plan.restart_plan(status, state["config"].get("members"), bool(allow_downtime),
                                        set_name or state.get("set_name"))


class FilterModule(object):
    def filters(self):
        return {"mongodb_restart_plan": mongodb_restart_plan}
