# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: galera_writer
short_description: The Galera member taking the writes, from the client sessions each member reported
version_added: 0.1.0
description:
  - Every Galera member can write; the clients (or the proxies in front) use one. It is the member with the most
    client sessions (C(galera_state)'s C(client_connections)), ties to the later name; none when no member has a
    client session. Rolling restarts and upgrades take it last (C(rolling_order)), so the clients' writer moves
    once, not at every step.
positional: _input
options:
  _input:
    description:
      - Client sessions per member (member name to C(client_connections)); a member that does not run counts as
        none.
    type: dict
    required: true
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Name the writer
  ansible.builtin.debug:
    msg: "{{ {'g1': 2, 'g2': 14, 'g3': 2} | dbops.clusters.galera_writer }}"   # g2
"""

RETURN = r"""
_value:
  description: The member's name, or an empty string when no member has a client session.
  type: str
"""

from ansible_collections.dbops.clusters.plugins.module_utils import galera_upgrade


def galera_writer(connections):
    connections = dict(connections or {})
    return galera_upgrade.writer_of(sorted(connections), connections) or ""


class FilterModule(object):
    def filters(self):
        return {"galera_writer": galera_writer}
