#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: gr_plan
short_description: Decide from every member's state how a Group Replication group reaches its desired state
version_added: 0.1.0
description:
  - Takes the state of every member of the inventory group (from M(dbops.clusters.gr_member_state)) and
    decides what each must do. It talks to no server; run it once, on the controller.
  - A new group is bootstrapped only when no member is ONLINE anywhere the inventory can reach and every
    member was asked. If any member is ONLINE in the group, the others join it (or, in ERROR, are recovered
    with STOP and START GROUP_REPLICATION); a member holding transactions the group lacks is refused with
    the set shown.
  - After a complete outage the group restarts from the member whose C(GTID_EXECUTED) plus received
    transactions contain every other member's. When no member's set contains the others (divergence) it
    refuses with every set shown, unless I(force_member) names the member to keep.
  - It also plans the switch between single- and multi-primary mode and moving the primary role.
options:
  states:
    description:
      - Inventory host to its C(state) from M(dbops.clusters.gr_member_state), or the whole result registered
        from that module, or null when the host did not report.
      - A member whose report holds no state (unreachable, failed, skipped, or no report at all) is planned as
        a member that could not be read, with the reason, never bootstrapped past unless I(ignore_unreachable).
    type: dict
    required: true
  members:
    description: The inventory group's hosts, in inventory order (the tie-breaker).
    type: list
    elements: str
    required: true
  group_name:
    description: The group's name (a UUID).
    type: str
    required: true
  single_primary:
    description: Whether the group should run in single-primary mode.
    type: bool
    default: true
  primary:
    description: The member that should be primary in single-primary mode (and bootstraps a new group);
      empty to let the group elect one.
    type: str
    default: ""
  force_member:
    description: After a complete outage, bootstrap this member even when the others' sets are not contained
      in its own. Members holding transactions it lacks are then refused.
    type: str
    default: ""
  ignore_unreachable:
    description: Bootstrap even though some members could not be asked (they may be ONLINE elsewhere or hold
      newer transactions). Only after checking them by hand.
    type: bool
    default: false
attributes:
  check_mode:
    support: full
    description: Pure decision; the same in check mode.
  diff_mode:
    support: none
    description: Changes nothing.
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Decide which member bootstraps and which join
  dbops.clusters.gr_plan:
    states: "{{ dict(groups['gr'] | zip(groups['gr']
                | map('extract', hostvars, ['gr_state', 'state'], default=None))) }}"
    members: "{{ groups['gr'] }}"
    group_name: "{{ group_replication_group_name }}"
  delegate_to: localhost
  run_once: true
  register: gr_plan
"""

RETURN = r"""
decision:
  description: C(none), C(converge) (join, recover, mode or primary changes), C(bootstrap) (new group),
    C(reboot) (complete outage) or C(refuse).
  returned: always
  type: str
reason:
  description: Why, with the GTID sets where they decided.
  returned: always
  type: str
bootstrap_member:
  description: The member that starts the group, or null.
  returned: always
  type: str
join_order:
  description: Members to join or recover, one at a time, in this order.
  returned: always
  type: list
  elements: str
actions:
  description: Per member, C(action) (none, bootstrap, join, recover, start, wait, skip, refuse) and C(reason).
  returned: always
  type: dict
mode_change:
  description: C(single_primary), C(multi_primary) or null.
  returned: always
  type: str
primary_change:
  description: The member to make primary, or null.
  returned: always
  type: str
refused:
  description: Refusals, one sentence each.
  returned: always
  type: list
  elements: str
unread:
  description: Members whose state could not be read, with the reason.
  returned: always
  type: dict
gtid_sets:
  description: Each answering member's transactions (executed and received) the decision compared.
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dbops.clusters.plugins.module_utils import group_replication as gr


def main():
    module = AnsibleModule(
        argument_spec=dict(
            states=dict(type="dict", required=True),
            members=dict(type="list", elements="str", required=True),
            group_name=dict(type="str", required=True),
            single_primary=dict(type="bool", default=True),
            primary=dict(type="str", default=""),
            force_member=dict(type="str", default=""),
            ignore_unreachable=dict(type="bool", default=False),
        ),
        supports_check_mode=True,
    )
    params = module.params
    if not gr.UUID_RE.match((params["group_name"] or "").lower()):
        module.fail_json(msg="group_name=%r is not a UUID" % params["group_name"])
    states, unread = {}, {}
    for host, report in params["states"].items():
        states[host], why = gr.state_from_report(report)
        if why:
            unread[host] = why
    try:
        result = gr.plan(states, params["members"], params["group_name"], single_primary=params["single_primary"],
                         primary=params["primary"] or None, force_member=params["force_member"] or None,
                         ignore_unreachable=params["ignore_unreachable"], unread=unread)
    except (ValueError, gr.GtidError) as err:
        module.fail_json(msg=str(err))
    module.exit_json(changed=False, unread=unread, **result)


if __name__ == "__main__":
    main()
