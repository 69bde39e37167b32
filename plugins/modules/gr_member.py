#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: gr_member
short_description: Carry out one step of a Group Replication plan on a member (bootstrap, join, recover, primary, mode)
version_added: 0.1.0
description:
  - Runs on a member and performs the action M(dbops.clusters.gr_plan) chose for it, through PyMySQL.
  - C(bootstrap) starts a new group on this member (C(group_replication_bootstrap_group) is set only for
    that start and always reset). C(join) starts Group Replication so the member joins the running group;
    distributed recovery then copies the missing transactions from a donor's binary logs, or clones the
    donor when its binary logs no longer hold them or the gap exceeds C(group_replication_clone_threshold).
    C(recover) is for a member in ERROR; C(START GROUP_REPLICATION) alone fails there with error 3093, so
    it stops Group Replication first.
  - Before any start the recovery channel's credentials are set with C(CHANGE REPLICATION SOURCE TO ...
    FOR CHANNEL 'group_replication_recovery') over the connection, so the password is stored by the server
    for restarts and never appears on a command line or in the returned queries.
  - After a start it waits until the member is ONLINE and switches C(offline_mode) off, which
    C(group_replication_exit_state_action=OFFLINE_MODE) left on when the member last left the group in error.
  - C(set_primary), C(multi_primary) and C(single_primary) run the group's own functions on an ONLINE member.
  - C(credentials) stores I(recovery_user) and I(recovery_password) for the recovery channel when they differ from
    what the server holds, whatever the member's state, and starts nothing. After a rotation of the recovery
    account's password, a member that restarts later then recovers with the new one.
  - A member already in the requested state is left alone (C(changed=false)).
options:
  action:
    description: The step to carry out.
    type: str
    required: true
    choices: [bootstrap, join, recover, set_primary, multi_primary, single_primary, credentials]
  recovery_user:
    description: Account distributed recovery (and clone) logs in as on the donor. Required to start.
    type: str
  recovery_password:
    description: Its password.
    type: str
  primary_uuid:
    description: server_uuid of the member to make primary (C(set_primary), optional for C(single_primary)).
    type: str
  timeout:
    description: Seconds to wait for the member to be ONLINE (or the primary to move).
    type: int
    default: 600
  interval:
    description: Seconds between polls.
    type: float
    default: 1
extends_documentation_fragment:
  - dbops.clusters.mysql_login
attributes:
  check_mode:
    support: full
    description: Returns the statements it would run (C(queries)) and C(changed) without running them.
  diff_mode:
    support: none
    description: Changes server state, not files.
requirements:
  - PyMySQL
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Join the running group
  dbops.clusters.gr_member:
    action: join
    recovery_user: gr_recovery
    recovery_password: "{{ group_replication_recovery_password }}"
  no_log: false

- name: Move the primary role to gr2
  dbops.clusters.gr_member:
    action: set_primary
    primary_uuid: "{{ hostvars['gr2'].gr_state.state.server_uuid }}"
"""

RETURN = r"""
action:
  description: The action requested.
  returned: always
  type: str
queries:
  description: Statements run (or that would run in check mode), with placeholders for values.
  returned: always
  type: list
  elements: str
reason:
  description: What was done and why, or why nothing was needed.
  returned: always
  type: str
member_state:
  description: The member's state after the action.
  returned: always
  type: str
member_role:
  description: The member's role after the action.
  returned: always
  type: str
waited_seconds:
  description: Seconds spent waiting for the member or the primary.
  returned: always
  type: float
"""

import time

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.dbops.clusters.plugins.module_utils import group_replication as gr
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_connection import (
    HAS_PYMYSQL, LOGIN_ARGUMENT_SPEC, PYMYSQL_IMPORT_ERROR, ConnectionError_, Session, connect)
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_flavors import stored_source_credentials

START_ACTIONS = ("bootstrap", "join", "recover")


def open_session(module):
    try:
        return Session(connect(module.params), check_mode=module.check_mode)
    except ConnectionError_ as err:
        module.fail_json(msg="cannot reach the member: %s" % err, queries=[])


def wait_for(module, predicate, what):
    """Poll fresh connections until predicate(state) holds; a server restarting (after a clone) is retried."""
    started = time.time()
    deadline = started + module.params["timeout"]
    last, error = None, None
    while True:
        try:
            session = Session(connect(module.params), check_mode=True)
            try:
                last = gr.read_state(session)
            finally:
                session.close()
            error = None
            if predicate(last):
                return last, round(time.time() - started, 1)
        except Exception as err:  # pylint: disable=broad-except  # the server restarting during a clone
            error = str(err)
        if time.time() >= deadline:
            module.fail_json(msg="timed out after %ss waiting for %s; last seen: state %s, role %s%s"
                             % (module.params["timeout"], what, (last or {}).get("member_state"),
                                (last or {}).get("member_role"), "; error: %s" % error if error else ""),
                             member_state=(last or {}).get("member_state"), view=(last or {}).get("view"),
                             waited_seconds=round(time.time() - started, 1))
        time.sleep(module.params["interval"])


def main():
    argument_spec = dict(
        action=dict(type="str", required=True,
                    choices=["bootstrap", "join", "recover", "set_primary", "multi_primary", "single_primary",
                             "credentials"]),
        recovery_user=dict(type="str"),
        recovery_password=dict(type="str", no_log=True),
        primary_uuid=dict(type="str"),
        timeout=dict(type="int", default=600),
        interval=dict(type="float", default=1),
    )
    argument_spec.update(LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True,
                           required_if=[("action", "bootstrap", ("recovery_user", "recovery_password")),
                                        ("action", "join", ("recovery_user", "recovery_password")),
                                        ("action", "recover", ("recovery_user", "recovery_password")),
                                        ("action", "credentials", ("recovery_user", "recovery_password")),
                                        ("action", "set_primary", ("primary_uuid",))])
    if not HAS_PYMYSQL:
        module.fail_json(msg=missing_required_lib("PyMySQL"), exception=PYMYSQL_IMPORT_ERROR)
    action = module.params["action"]
    session = open_session(module)
    result = {"action": action, "queries": session.queries, "waited_seconds": 0.0}
    try:
        state = gr.read_state(session)
        missing = gr.prerequisites(state)
        if missing:
            module.fail_json(msg="this server cannot run Group Replication: %s" % "; ".join(missing), **result)
        if action == "credentials":
            credentials(module, session, result)
            result.update(member_state=state["member_state"], member_role=state["member_role"])
        elif action in START_ACTIONS:
            start(module, session, state, result)
        else:
            topology(module, session, state, result)
    finally:
        session.close()
    module.exit_json(**result)


def start(module, session, state, result):
    action = module.params["action"]
    if state["member_state"] in (gr.ONLINE, "RECOVERING"):
        result.update(changed=False, member_state=state["member_state"], member_role=state["member_role"],
                      reason="already %s in group %s: nothing to start" % (state["member_state"], state["group_name"]))
        if state["member_state"] == gr.ONLINE and state["offline_mode"]:
            session.execute("SET GLOBAL offline_mode = OFF")
            result.update(changed=True, reason=result["reason"] + "; offline_mode switched off (left on by the "
                          "exit state action the last time the member failed)")
        return
    why = None
    for attempt in (1, 2, 3):
        try:
            why = start_once(module, session, state)
            break
        except Exception as err:  # pylint: disable=broad-except  # e.g. a boot-time join still in progress
            if module.check_mode or attempt == 3:
                module.fail_json(msg="%s failed: %s" % (action, err), **result)
            time.sleep(5)
            state = gr.read_state(session)
            if state["member_state"] in (gr.ONLINE, "RECOVERING") and action != "bootstrap":
                why = "joined by itself (group_replication_start_on_boot) while this module started it"
                break
    result.update(changed=True, reason=why)
    if module.check_mode:
        result.update(member_state=state["member_state"], member_role=state["member_role"])
        return
    final, waited = wait_for(module, lambda s: s["member_state"] == gr.ONLINE, "the member to be ONLINE")
    result["waited_seconds"] = waited
    if final["offline_mode"]:
        again = Session(connect(module.params))
        try:
            again.execute("SET GLOBAL offline_mode = OFF")
            session.queries.extend(again.queries)
        finally:
            again.close()
        result["reason"] += "; offline_mode switched off (left on by the exit state action)"
    result.update(member_state=final["member_state"], member_role=final["member_role"])


def set_credentials(module, session):
    """Store the recovery channel's credentials (sent as parameters: never in a log or in the queries returned)."""
    session.execute("CHANGE REPLICATION SOURCE TO SOURCE_USER = %s, SOURCE_PASSWORD = %s "
                    "FOR CHANNEL 'group_replication_recovery'",
                    [module.params["recovery_user"], module.params["recovery_password"]])


def credentials(module, session, result):
    """The recovery channel's stored user and password made the declared ones, when they differ. They are compared
    in the server's replication metadata (mysql.slave_master_info), which keeps them for the channel's restarts."""
    stored = stored_source_credentials(session, "group_replication_recovery")
    wanted = (module.params["recovery_user"], module.params["recovery_password"])
    if stored == wanted:
        result.update(changed=False, reason="the recovery channel already holds these credentials")
        return
    set_credentials(module, session)
    result.update(changed=True, reason="the recovery channel's credentials were %s" % (
        "set" if not stored else "changed (user %s -> %s)" % (stored[0], wanted[0])
        if stored[0] != wanted[0] else "changed (a new password)"))


def start_once(module, session, state):
    """STOP (when Group Replication is not cleanly OFFLINE), credentials, START; returns why."""
    action = module.params["action"]
    if state["member_state"] != "OFFLINE" or action == "recover":
        session.execute("STOP GROUP_REPLICATION")
    set_credentials(module, session)
    if action == "bootstrap":
        session.execute("SET GLOBAL group_replication_bootstrap_group = ON")
        try:
            session.execute("START GROUP_REPLICATION")
        finally:
            session.execute("SET GLOBAL group_replication_bootstrap_group = OFF")
        return "was %s: started a new group on this member" % state["member_state"]
    session.execute("START GROUP_REPLICATION")
    if state["member_state"] == "ERROR":
        return "was ERROR: stopped and started Group Replication (START alone fails with error 3093)"
    return ("was %s: joined the running group (distributed recovery: binary logs, or clone when the donors "
            "lack them)" % state["member_state"])


def done_predicate(action, target):
    """How to see that a topology change took effect."""
    def multi(state):
        return not state["single_primary_mode"]

    def primary_is_target(state):
        return [m["member_id"] for m in state["view"] if m["role"] == "PRIMARY"] == [target]

    def single(state):
        return state["single_primary_mode"]

    if action == "multi_primary":
        return multi
    return primary_is_target if target else single


def topology(module, session, state, result):
    action = module.params["action"]
    if state["member_state"] != gr.ONLINE:
        module.fail_json(msg="%s needs an ONLINE member; this one is %s" % (action, state["member_state"]), **result)
    target = (module.params["primary_uuid"] or "").lower()
    ids = [m["member_id"] for m in state["view"]]
    if target and target not in ids:
        module.fail_json(msg="primary_uuid %s is not in the group's view (%s)" % (target, ", ".join(ids)), **result)
    primaries = [m["member_id"] for m in state["view"] if m["role"] == "PRIMARY"]
    if action == "set_primary":
        if not state["single_primary_mode"]:
            module.fail_json(msg="set_primary needs single-primary mode; the group is multi-primary", **result)
        if primaries == [target]:
            result.update(changed=False, reason="%s is already the primary" % target)
        else:
            session.execute("SELECT group_replication_set_as_primary(%s)", [target])
            result.update(changed=True, reason="moved the primary role from %s to %s" % (", ".join(primaries), target))
    elif action == "multi_primary":
        if not state["single_primary_mode"]:
            result.update(changed=False, reason="the group is already multi-primary")
        else:
            session.execute("SELECT group_replication_switch_to_multi_primary_mode()")
            result.update(changed=True, reason="switched the group to multi-primary mode")
    else:
        if state["single_primary_mode"]:
            result.update(changed=False, reason="the group is already single-primary")
        elif target:
            session.execute("SELECT group_replication_switch_to_single_primary_mode(%s)", [target])
            result.update(changed=True, reason="switched the group to single-primary mode with %s as primary" % target)
        else:
            session.execute("SELECT group_replication_switch_to_single_primary_mode()")
            result.update(changed=True, reason="switched the group to single-primary mode (the group elects)")
    if result["changed"] and not module.check_mode:
        predicate = done_predicate(action, target)
        final, waited = wait_for(module, predicate, "the group to apply %s" % action)
        result.update(waited_seconds=waited, member_state=final["member_state"], member_role=final["member_role"])
    else:
        result.update(member_state=state["member_state"], member_role=state["member_role"])


if __name__ == "__main__":
    main()
