# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: pg_haproxy_input_errors
short_description: Refusals of the pg_haproxy role's inputs, each naming its variable
version_added: 0.1.0
description:
  - Checks the member group, the ports (numbers from 1 to 65535, the client ports distinct), the TLS flag and the
    health check's timing, and returns one sentence per problem. Empty when all is well.
positional: _input
options:
  _input:
    description: The role's variables without their pg_haproxy_ prefix, and C(members), the group's hosts.
    type: dict
    required: true
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Refuse bad input
  ansible.builtin.assert:
    that: errors | length == 0
  vars:
    errors: "{{ {'write_port': pg_haproxy_write_port} | dbops.clusters.pg_haproxy_input_errors }}"
"""

RETURN = r"""
_value:
  description: One sentence per problem.
  type: list
  elements: str
"""

from ansible_collections.dbops.clusters.plugins.module_utils.postgres_inputs import int_errors

PREFIX = "pg_haproxy_"


def input_errors(inputs):
    errors = []
    if not inputs.get("members"):
        errors.append("pg_haproxy_postgres_group=%r names no inventory host" % inputs.get("postgres_group"))
    for name in ("postgres_port", "pgbouncer_port", "patroni_rest_port", "write_port", "read_port"):
        errors += int_errors(name, inputs.get(name), 1, 65535, prefix=PREFIX)
    if str(inputs.get("write_port")) == str(inputs.get("read_port")):
        errors.append("pg_haproxy_write_port and pg_haproxy_read_port must differ")
    for name in ("tls", "pgbouncer"):
        if str(inputs.get(name)).lower() not in ("true", "false"):
            errors.append("pg_haproxy_%s=%r must be true or false" % (name, inputs.get(name)))
    errors += int_errors("check_interval_ms", inputs.get("check_interval_ms"), 100, 60000, prefix=PREFIX)
    for name in ("check_fall", "check_rise"):
        errors += int_errors(name, inputs.get(name), 1, 100, prefix=PREFIX)
    errors += int_errors("maxconn", inputs.get("maxconn"), 1, prefix=PREFIX)
    return errors


class FilterModule(object):
    def filters(self):
        return {"pg_haproxy_input_errors": input_errors}
