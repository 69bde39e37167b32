# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: postgres_primary
short_description: Which PostgreSQL member is the primary, decided from what the servers report
version_added: 0.1.0
description:
  - Takes the results of M(dbops.clusters.postgres_member_state) run for every member of the group (a looped
    task's C(results)) and names the primary, the reason, or why the role must not choose.
  - "The servers decide: a member running as a primary that holds data (tables or databases of the user's, or
    streaming replicas) is the primary whatever the inventory's order says; two such members are refused. The
    inventory's choice (postgres_tuned_primary) is used only when no member holds data as a primary."
  - A stopped member of the primary's cluster without standby.signal (a failover's old primary) is refused, since
    started it would be a second primary.
positional: _input, inventory_primary, reseed
options:
  _input:
    description: The registered C(results) of the state task, one per member, each with C(item) naming it.
    type: list
    elements: dict
    required: true
  inventory_primary:
    description: The member the inventory names (postgres_tuned_primary).
    type: str
    required: true
  reseed:
    description: Member name to true for members the user allows to be copied again although they hold data.
    type: dict
    default: {}
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Decide the primary
  ansible.builtin.set_fact:
    topology: "{{ member_states.results | dbops.clusters.postgres_primary(postgres_tuned_primary) }}"
"""

RETURN = r"""
_value:
  description: C(primary) (null when refused), C(reason), C(error) (empty when decided), C(stopped_primaries).
  type: dict
"""

from ansible_collections.dbops.clusters.plugins.module_utils.postgres_replication import choose_primary


def postgres_primary(results, inventory_primary, reseed=None):
    states = dict((result["item"], result) for result in results)
    return choose_primary(states, inventory_primary, reseed or {})


class FilterModule(object):
    def filters(self):
        return {"postgres_primary": postgres_primary}
