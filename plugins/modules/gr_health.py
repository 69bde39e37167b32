#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: gr_health
short_description: Wait until a Group Replication group is complete, has one primary and short queues
version_added: 0.1.0
description:
  - The health gate of Group Replication changes and rolling restarts. Polls the member it runs on every
    I(interval) seconds until all of these hold, or fails after I(timeout) seconds naming each unmet
    condition and returning the view it saw.
  - The member is ONLINE; every expected member is ONLINE in its view; in single-primary mode exactly one
    member is PRIMARY and it is one of the expected members (in multi-primary mode every member is PRIMARY),
    so a gate that leaves a killed primary out waits for the new one; no member's applier or certifier queue holds
    more than I(max_queue) transactions (a member that is far behind would serve stale reads, and moving the
    primary to it would wait for it to catch up).
  - Connection errors while waiting (the server restarting) are retried until the timeout.
options:
  expected_members:
    description: Inventory name to the address the member reports (C(report_host)) or its server_uuid.
    type: dict
    required: true
  single_primary:
    description: Whether the group runs in single-primary mode.
    type: bool
    default: true
  max_queue:
    description: Largest applier or certifier queue accepted on any member.
    type: int
    default: 100
  timeout:
    description: Seconds to wait (0 looks once).
    type: int
    default: 300
extends_documentation_fragment:
  - dbops.clusters.mysql_login
  - dbops.clusters.gate
requirements:
  - PyMySQL
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Wait until the group has all three members ONLINE and one primary
  dbops.clusters.gr_health:
    expected_members: {gr1: 10.0.0.11, gr2: 10.0.0.12, gr3: 10.0.0.13}
    timeout: 600
"""

RETURN = r"""
ok:
  description: Whether every condition held at the last poll.
  returned: always
  type: bool
unmet:
  description: Conditions that did not hold at the last poll, one sentence each.
  returned: always
  type: list
  elements: str
view:
  description: The members the polled member saw, with state and role.
  returned: always
  type: list
  elements: dict
stats:
  description: Each member's applier and certifier queue at the last poll.
  returned: always
  type: list
  elements: dict
primary:
  description: The reported host of the primary in single-primary mode, or null.
  returned: always
  type: str
waited_seconds:
  description: Seconds from the first poll to the last.
  returned: always
  type: float
checks:
  description: Number of polls.
  returned: always
  type: int
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.dbops.clusters.plugins.module_utils import gate
from ansible_collections.dbops.clusters.plugins.module_utils import group_replication as gr
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_connection import (
    HAS_PYMYSQL, LOGIN_ARGUMENT_SPEC, PYMYSQL_IMPORT_ERROR, Session, gate_connect)


def look(params):
    """One poll: (state or None, unmet)."""
    try:
        session = Session(gate_connect(params), check_mode=True)
        try:
            state = gr.read_state(session)
        finally:
            session.close()
    except gate.Refused:
        raise
    except Exception as err:  # pylint: disable=broad-except  # a restarting server is polled again
        return None, ["the member does not answer: %s" % err]
    unmet = []
    if state["member_state"] != gr.ONLINE:
        unmet.append("the polled member is %s, not ONLINE" % state["member_state"])
    unmet.extend(gr.health(state["view"], params["expected_members"], params["single_primary"],
                           state["stats"], params["max_queue"]))
    return state, unmet


def main():
    argument_spec = dict(
        expected_members=dict(type="dict", required=True),
        single_primary=dict(type="bool", default=True),
        max_queue=dict(type="int", default=100),
        timeout=dict(type="int", default=300),
    )
    argument_spec.update(gate.GATE_ARGUMENT_SPEC)
    argument_spec.update(LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    if not HAS_PYMYSQL:
        module.fail_json(msg=missing_required_lib("PyMySQL"), exception=PYMYSQL_IMPORT_ERROR)
    params = module.params
    outcome = gate.module_wait(module, lambda: look(params))
    state = outcome["seen"] or {"view": [], "stats": []}
    primaries = [m["host"] for m in state["view"] if m["role"] == "PRIMARY" and m["state"] == gr.ONLINE]
    gate.finish(module, outcome, "the group", dict(
        view=state["view"], stats=state["stats"],
        primary=primaries[0] if len(primaries) == 1 and params["single_primary"] else None))


if __name__ == "__main__":
    main()
