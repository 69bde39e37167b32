# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: role_input_errors
short_description: Refusals of a role's inputs, each naming its variable
version_added: 0.1.0
description:
  - Every role checks all of its inputs before its first change, by type, range and meaning, with the rules of
    its engine's C(module_utils/<engine>_inputs.py) (unit tested there); this filter hands the role's inputs to
    them and returns one sentence per problem, each naming its variable (never a password). Empty when all is well.
  - C(etcd) - the member count, addresses, ports, data directory, timeouts, quota, compaction, root password, users.
  - C(keepalived) - VIP addresses and prefixes, router ids, priorities, intervals, the SQL check's login and query,
    the peers' addresses (before C(keepalived -t) would stop them with its own parse error).
  - C(mongodb) - ports, names, the keyfile, cache size, members' votes and priorities, settings, bind addresses.
  - C(mysql) - the MySQL family's shared rules (ports, overrides against what the server accepts, names,
    privileges, passwords), for the role whose variables start with I(prefix).
  - C(postgres) - postgres_tuned's inputs (overrides, listen addresses, access rules, users, archiving).
  - C(proxysql) - ports, threads, limits, intervals, hostgroups, query rules, users, admin interfaces.
positional: _input, engine, prefix
options:
  _input:
    description: >-
      The role's variables without their prefix (C(mysql) - with it), plus what the engine's rules read beside them
      (for example C(members), the group's host names).
    type: dict
    required: true
  engine:
    description: Whose rules.
    type: str
    required: true
    choices: [etcd, keepalived, mongodb, mysql, postgres, proxysql]
  prefix:
    description: For C(mysql) and C(mongodb), the role's variable prefix (default that engine's main role's).
    type: str
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Refuse bad input before any change
  ansible.builtin.assert:
    that: errors | length == 0
    fail_msg: "{{ errors | join('; ') }}"
  vars:
    errors: "{{ {'members': groups['etcd'], 'client_port': 2379} | dbops.clusters.role_input_errors('etcd') }}"
"""

RETURN = r"""
_value:
  description: One sentence per refused input.
  type: list
  elements: str
"""

from ansible.errors import AnsibleFilterError
from ansible_collections.dbops.clusters.plugins.module_utils import (
    etcd_inputs, keepalived_inputs, mongodb_inputs, mysql_inputs, postgres_inputs, proxysql_inputs)

RULES = {"etcd": etcd_inputs, "keepalived": keepalived_inputs, "mongodb": mongodb_inputs, "mysql": mysql_inputs,
         "postgres": postgres_inputs, "proxysql": proxysql_inputs}


def role_input_errors(inputs, engine, prefix=None):
    if engine not in RULES:
        raise AnsibleFilterError("role_input_errors: engine %r is none of %s" % (engine, ", ".join(sorted(RULES))))
    if not isinstance(inputs, dict):
        raise AnsibleFilterError("role_input_errors expects a dict of the role's inputs")
    if prefix is None:
        return RULES[engine].role_errors(inputs)
    return RULES[engine].role_errors(inputs, prefix)


class FilterModule(object):
    def filters(self):
        return {"role_input_errors": role_input_errors}
