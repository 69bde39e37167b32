# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: postgres_upgrade_plan
short_description: What each PostgreSQL member needs to reach a new major, or why the upgrade must not start
version_added: 0.1.0
description:
  - Takes the results of M(dbops.clusters.postgres_member_state) run for every member of the group (a looped
    task's C(results), each with C(item) naming the member), the target major and the output of
    C(apt-cache policy postgresql-TARGET) on each member.
  - "Refuses, before any change: a target that is not a whole major, a cluster without exactly one primary or
    with a member that does not answer, a downgrade, a skipped major, a replica on another major than the primary
    before the primary is upgraded, and a target apt cannot install."
  - The primary on the source major is upgraded (C(upgrade_primary)); each replica not yet streaming on the target
    is copied again from the upgraded primary (C(rebuild_replica)); a member already on the target is C(done).
positional: _input, target, apt_policy
options:
  _input:
    description:
      - The registered C(results) of the state task looped over the members (each with C(item) naming the
        member), or a dict of member name to that member's registered state.
    type: raw
    required: true
  target:
    description: The major to reach (pg_upgrade_target).
    type: raw
    required: true
  apt_policy:
    description: Member name to the output of C(apt-cache policy postgresql-TARGET) there (or one output for all).
    type: raw
    default: ""
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Decide the upgrade
  ansible.builtin.set_fact:
    upgrade: "{{ member_states.results | dbops.clusters.postgres_upgrade_plan(pg_upgrade_target, policy.stdout) }}"
"""

RETURN = r"""
_value:
  description: C(error) (empty when decided), C(primary), C(source), C(target), C(actions) (member to action),
    C(reason), C(candidate) (the version apt installs, per member when given per member), C(source_only_options)
    (column options of the source build the target refuses) and C(strip_options_sql) (the query that removes them
    from the user's columns, empty when there are none).
  type: dict
"""

from ansible_collections.dbops.clusters.plugins.module_utils.postgres_upgrade import (
    apt_candidate, plan, source_only_options, strip_options_sql)


def postgres_upgrade_plan(results, target, apt_policy=""):
    members = dict(results) if isinstance(results, dict) else dict((result["item"], result) for result in results)
    if isinstance(apt_policy, dict):
        candidate = dict((host, apt_candidate(text)) for host, text in apt_policy.items())
    else:
        candidate = apt_candidate(apt_policy)
    decided = plan(members, target, candidate)
    decided["candidate"] = candidate
    decided["source_only_options"] = list(source_only_options(decided["source"])) if decided["source"] else []
    decided["strip_options_sql"] = strip_options_sql(decided["source_only_options"])
    return decided


class FilterModule(object):
    def filters(self):
        return {"postgres_upgrade_plan": postgres_upgrade_plan}
