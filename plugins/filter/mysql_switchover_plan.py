# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: mysql_switchover_plan
short_description: Decide a planned switchover of an asynchronous GTID source from every member's live state
version_added: 0.1.0
description:
  - Finds the current source from the servers (the writable member that replicates from nobody), checks that
    every other member replicates from it, healthy, within the lag bound and without errant GTIDs, and picks
    the replica to promote (the one asked for, or the most caught-up healthy one, saying why).
  - A switchover that stopped after its promotion is finished (phase C(resume)) instead of started again.
positional: _input, target, max_lag
options:
  _input:
    description: "C({member: state}) with each state as C(dbops.clusters.mysql_switchover step=state) returns it."
    type: dict
    required: true
  target:
    description: The member to promote; empty chooses the most caught-up healthy replica.
    type: str
    default: ""
  max_lag:
    description: Largest replication lag, in seconds, a replica may have.
    type: int
    default: 60
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Decide
  ansible.builtin.set_fact:
    plan: "{{ states | dbops.clusters.mysql_switchover_plan('rep1', 10) }}"
"""

RETURN = r"""
_value:
  description:
    - C(source), C(target), C(reason), C(phase) (C(switchover), C(resume) or C(done)), C(fence), C(promote),
      C(repoint), C(steps) and C(errors) (sentences; the switchover must not start unless empty).
  type: dict
"""

from ansible_collections.dbops.clusters.plugins.module_utils import mysql_switchover


def mysql_switchover_plan(states, target="", max_lag=60):
    return mysql_switchover.plan(dict(states), str(target or ""), int(max_lag))


class FilterModule(object):
    def filters(self):
        return {"mysql_switchover_plan": mysql_switchover_plan}
