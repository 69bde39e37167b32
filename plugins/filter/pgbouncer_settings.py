# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: pgbouncer_settings
short_description: PgBouncer's pool settings for a PostgreSQL member, each with its reason
version_added: 0.1.0
description:
  - Sizes PgBouncer's pools from the member's CPUs and what the server's max_connections leaves for the pooler,
    and applies the user's overrides after checking each against the server.
  - Returns C(settings) (name to value, reason and source) and C(error), one sentence naming the input when the
    server cannot take the pools (empty when all is well).
positional: _input
options:
  _input:
    description:
      - The facts - max_connections and superuser_reserved_connections of the server, cpus, pools (the number of
        database and user pairs clients use), pool_mode, max_client_conn.
    type: dict
    required: true
  overrides:
    description: PgBouncer setting name to value.
    type: dict
    default: {}
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Plan the pooler
  ansible.builtin.set_fact:
    pooler: "{{ {'max_connections': 100, 'cpus': 2, 'pools': 1, 'pool_mode': 'transaction',
                 'max_client_conn': 1000} | dbops.clusters.pgbouncer_settings({}) }}"
"""

RETURN = r"""
_value:
  description: C(settings) and C(error).
  type: dict
"""

from ansible_collections.dbops.clusters.plugins.module_utils.pgbouncer_tuning import PoolerInputError, recommend


def pgbouncer_settings(facts, overrides=None):
    try:
        return {"settings": recommend(facts, overrides), "error": ""}
    except PoolerInputError as error:
        return {"settings": {}, "error": str(error)}


class FilterModule(object):
    def filters(self):
        return {"pgbouncer_settings": pgbouncer_settings}
