# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: rolling_order
short_description: Order members for a rolling restart or upgrade - the member taking the writes last
version_added: 0.1.0
description:
  - The order every rolling operation of this collection uses (C(module_utils/rolling.py)). The members that
    serve no writes go first, in the given order, and I(last) (the primary, the writer) after them.
  - I(last) comes from the servers (each role's plan), never from the inventory's order. When it is not among
    the members, the order is the given one.
positional: _input, last
options:
  _input:
    description: Inventory names of the members to take, in the order that breaks ties.
    type: list
    elements: str
    required: true
  last:
    description: The member that takes the writes, or an empty value when none does.
    type: str
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Restart order, the primary last
  ansible.builtin.debug:
    msg: "{{ ['db1', 'db2', 'db3'] | dbops.clusters.rolling_order('db1') }}"   # ['db2', 'db3', 'db1']
"""

RETURN = r"""
_value:
  description: The names, the member taking the writes last.
  type: list
  elements: str
"""

from ansible_collections.dbops.clusters.plugins.module_utils.rolling import rolling_order as _rolling_order


def rolling_order(members, last=None):
    return _rolling_order([str(name) for name in members], str(last) if last else None)


class FilterModule(object):
    def filters(self):
        return {"rolling_order": rolling_order}
