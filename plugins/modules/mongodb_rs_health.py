#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: mongodb_rs_health
short_description: Wait until a MongoDB replica set is healthy (the gate of rolling operations)
version_added: 0.1.0
description:
  - Polls C(replSetGetStatus) on the member it connects to every I(interval) seconds until all of these
    hold, or fails after I(timeout) seconds naming each unmet condition.
  - Every member is PRIMARY, SECONDARY or ARBITER; exactly one is PRIMARY; every secondary's last applied
    operation is within I(max_lag_seconds) of the primary's (a delayed member's within its
    C(secondaryDelaySecs) plus I(max_lag_seconds), read from the config); the set has I(expected_members) members when
    given; the primary reports its config committed (C(replSetGetConfig) with C(commitmentStatus)) when
    I(require_config_committed).
options:
  expected_members:
    description: Number of members the config must have.
    type: int
  max_lag_seconds:
    description: Largest accepted replication lag of a secondary, in seconds.
    type: float
    default: 10
  require_config_committed:
    description: Also require the current config to be committed on a majority.
    type: bool
    default: true
  timeout:
    description: Seconds to wait (0 looks once).
    type: int
    default: 300
  caught_up:
    description:
      - Also wait until the member this module connects to is PRIMARY or SECONDARY and has applied the
        primary's last operation as of the first poll that saw a primary. A member restarting is SECONDARY
        before it has caught up; this is the gate after a restart, before the next member goes down.
    type: bool
    default: false
extends_documentation_fragment:
  - dbops.clusters.mongodb_login
  - dbops.clusters.gate
requirements:
  - pymongo
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Gate - the set is whole and caught up before the next member restarts
  dbops.clusters.mongodb_rs_health:
    expected_members: "{{ groups['mongodb'] | length }}"
    max_lag_seconds: 10
    timeout: 600
    login_user: clusterAdmin
    login_password: "{{ mongodb_admin_password }}"
"""

RETURN = r"""
ok:
  description: Whether every condition held at the last poll.
  returned: always
  type: bool
unmet:
  description: The conditions that did not hold at the last poll, one sentence each.
  returned: always
  type: list
  elements: str
members:
  description: C(name) and C(state) of each member at the last poll.
  returned: always
  type: list
  elements: dict
primary:
  description: The primary at the last poll, or null.
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
from ansible_collections.dbops.clusters.plugins.module_utils import mongodb_rs_plan as plan
from ansible_collections.dbops.clusters.plugins.module_utils.mongodb_common import (
    HAS_PYMONGO, LOGIN_ARGUMENT_SPEC, PYMONGO_IMPORT_ERROR, MongoLoginError, OperationFailure, PyMongoError,
    connect, is_refused)


def look(params, target):
    """((members, primary), unmet) from one poll; target is a one-item list holding the primary's optime from the
    first poll that saw one (set here), for caught_up."""
    try:
        status = connect(params).admin.command("replSetGetStatus")
    except OperationFailure as err:
        if is_refused(err):
            raise gate.Refused("the server refused the login or the command: %s" % err)
        return ([], None), ["replSetGetStatus failed: %s" % err]
    except MongoLoginError as err:
        raise gate.Refused(str(err))
    except PyMongoError as err:
        return ([], None), ["cannot reach %s:%s: %s" % (params["login_host"], params["login_port"], err)]
    try:
        # The config says which members are delayed (secondaryDelaySecs): their lag is judged against it.
        config_members = connect(params).admin.command("replSetGetConfig")["config"].get("members", [])
    except (PyMongoError, MongoLoginError):
        config_members = None
    members = [dict(name=m["name"], state=m.get("stateStr")) for m in status.get("members", [])]
    primary = ([m["name"] for m in status.get("members", []) if m.get("stateStr") == "PRIMARY"] or [None])[0]
    committed = None
    if params["require_config_committed"] and primary:
        try:
            committed = bool(connect(params, host=primary).admin.command(
                "replSetGetConfig", commitmentStatus=True).get("commitmentStatus"))
        except (PyMongoError, MongoLoginError) as err:
            return (members, primary), [
                "cannot ask the primary %s whether its config is committed: %s" % (primary, err)]
    unmet = plan.health_problems(status, params["max_lag_seconds"], params["expected_members"],
                                 committed, config_members)
    if params["caught_up"]:
        if target[0] is None:
            target[0] = plan.primary_optime(status)
        problem = "no primary seen yet" if target[0] is None else plan.caught_up_problem(
            status, target[0], config_members, params["max_lag_seconds"])
        if problem:
            unmet.append(problem)
    return (members, primary), unmet


def main():
    argument_spec = dict(
        expected_members=dict(type="int"),
        max_lag_seconds=dict(type="float", default=10),
        require_config_committed=dict(type="bool", default=True),
        timeout=dict(type="int", default=300),
        caught_up=dict(type="bool", default=False),
    )
    argument_spec.update(gate.GATE_ARGUMENT_SPEC)
    argument_spec.update(LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    if not HAS_PYMONGO:
        module.fail_json(msg=missing_required_lib("pymongo"), exception=str(PYMONGO_IMPORT_ERROR))
    params = module.params
    if params["expected_members"] is not None and params["expected_members"] < 1:
        module.fail_json(msg="expected_members must be at least 1")
    target = [None]
    outcome = gate.module_wait(module, lambda: look(params, target))
    members, primary = outcome["seen"] or ([], None)
    gate.finish(module, outcome, "the replica set", dict(members=members, primary=primary))


if __name__ == "__main__":
    main()
