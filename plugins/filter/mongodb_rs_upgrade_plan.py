# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: mongodb_rs_upgrade_plan
short_description: The rolling binary upgrade of a plain MongoDB replica set, or why it is refused
version_added: 0.1.0
description:
  - From the C(dbops.clusters.mongodb_rs_state) result of every member of the inventory group, the plan of
    C(set_upgrade_plan) in C(module_utils/mongodb_rs_plan.py) - secondaries (hidden, delayed and priority 0
    ones included) first, the primary last after a step-down, members already on I(target) skipped, one major
    release per run, featureCompatibilityVersion raised only when I(raise_fcv).
  - The set's view (states, config, FCV) is the primary's; each member's version is its own C(buildInfo).
positional: _input, target, raise_fcv, allow_downtime, set_name
options:
  _input:
    description: The C(mongodb_rs_state) results of every member of the inventory group.
    type: list
    elements: dict
    required: true
  target:
    description: The release to reach, for example C(8.0).
    type: str
    required: true
  raise_fcv:
    description: End by setting featureCompatibilityVersion to I(target).
    type: bool
    default: false
  allow_downtime:
    description: Upgrade a primary that cannot hand over in place instead of refusing.
    type: bool
    default: false
  set_name:
    description: The set's name, for the messages.
    type: str
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Plan the upgrade
  ansible.builtin.set_fact:
    upgrade_plan: >-
      {{ groups['mongodb'] | map('extract', hostvars, 'mongodb_rs_state') | list
         | dbops.clusters.mongodb_rs_upgrade_plan('8.0', false, false, 'rs0') }}
"""

RETURN = r"""
_value:
  description: C(current), C(target), C(fcv), C(order) (C(host), C(stepdown), C(in_place), C(skip)), C(steps)
    (C(action), C(host), C(reason)), C(raise_fcv), C(error) (the refusal, or null).
  type: dict
"""

from ansible.errors import AnsibleFilterError
from ansible_collections.dbops.clusters.plugins.module_utils import mongodb_rs_plan


def mongodb_rs_upgrade_plan(states, target, raise_fcv=False, allow_downtime=False, set_name=None):
    if not isinstance(states, list) or not all(isinstance(s, dict) and s.get("me") for s in states):
        raise AnsibleFilterError("mongodb_rs_upgrade_plan needs a mongodb_rs_state result of every member")
    primaries = [s for s in states if s.get("is_primary")]
    if len(primaries) != 1:
        return {"error": "%d members of the inventory group say they are PRIMARY (%s), expected exactly 1" % (
            len(primaries), ", ".join(s["me"] for s in primaries) or "none"), "order": [], "steps": [],
            "raise_fcv": False}
    view = primaries[0]
    status = [{"name": m.get("name"), "stateStr": m.get("state")} for m in view.get("members") or []]
    versions = dict((s["me"], s.get("version")) for s in states)
    return mongodb_rs_plan.set_upgrade_plan(status, (view.get("config") or {}).get("members"), versions,
                                            view.get("fcv"), str(target), bool(raise_fcv), bool(allow_downtime),
                                            set_name or view.get("set_name"), [s["me"] for s in states])


class FilterModule(object):
    def filters(self):
        return {"mongodb_rs_upgrade_plan": mongodb_rs_upgrade_plan}
