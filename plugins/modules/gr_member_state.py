#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: gr_member_state
short_description: Read a Group Replication member's state, role, transactions and group
version_added: 0.1.0
description:
  - Reads one MySQL server through PyMySQL and reports its Group Replication state, role, C(GTID_EXECUTED),
    the transactions its applier channel received but has not applied yet, the group it belongs to and the
    view it sees, and whether that group is the one the inventory names.
  - A server that does not answer is reported with C(running=false), never as a failure, so that the plan
    (M(dbops.clusters.gr_plan)) can tell a stopped member from a healthy one.
options:
  expected_group_name:
    description: The group name (a UUID) the inventory gives this group; compared with the server's.
    type: str
extends_documentation_fragment:
  - dbops.clusters.mysql_login
attributes:
  check_mode:
    support: full
    description: Reads only; the same in check mode.
  diff_mode:
    support: none
    description: Reads only.
requirements:
  - PyMySQL
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Read this member's Group Replication state
  dbops.clusters.gr_member_state:
    expected_group_name: "{{ group_replication_group_name }}"
  register: gr_state
"""

RETURN = r"""
state:
  description:
    - The member state; C(running) false and little else when the server did not answer.
    - Keys C(server_uuid), C(server_id), C(member_state) (ONLINE, RECOVERING, OFFLINE, ERROR, UNREACHABLE),
      C(member_role) (PRIMARY, SECONDARY or empty), C(group_name), C(gtid_executed), C(gtid_received),
      C(single_primary_mode), C(member_weight), C(view) (members this one sees), C(stats) (queues),
      C(plugin_active), C(clone_plugin_active), C(offline_mode), C(super_read_only), C(recovery_user),
      C(clone) (the last clone into this server from performance_schema.clone_status, with C(state),
      C(begin_time), C(end_time), C(source), C(error_no); null when none ran).
  returned: always
  type: dict
in_expected_group:
  description: Whether the member is ONLINE in the group named by I(expected_group_name).
  returned: always
  type: bool
missing_prerequisites:
  description: Server settings Group Replication needs and this server lacks, one sentence each.
  returned: always
  type: list
  elements: str
error:
  description: Why the server could not be read, or null.
  returned: always
  type: str
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.dbops.clusters.plugins.module_utils import group_replication as gr
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_connection import (
    HAS_PYMYSQL, LOGIN_ARGUMENT_SPEC, PYMYSQL_IMPORT_ERROR, ConnectionError_, Session, connect)


def main():
    argument_spec = dict(expected_group_name=dict(type="str"))
    argument_spec.update(LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    if not HAS_PYMYSQL:
        module.fail_json(msg=missing_required_lib("PyMySQL"), exception=PYMYSQL_IMPORT_ERROR)
    expected = (module.params["expected_group_name"] or "").lower()
    try:
        session = Session(connect(module.params), check_mode=True)
    except ConnectionError_ as err:
        module.exit_json(changed=False, state={"reachable": True, "running": False}, in_expected_group=False,
                         missing_prerequisites=[], error=str(err))
    try:
        state = gr.read_state(session)
    finally:
        session.close()
    in_group = (state["member_state"] == gr.ONLINE and bool(expected)
                and state["group_name"].lower() == expected)
    module.exit_json(changed=False, state=state, in_expected_group=in_group,
                     missing_prerequisites=gr.prerequisites(state), error=None)


if __name__ == "__main__":
    main()
