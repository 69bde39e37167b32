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
  - Connection errors while waiting (a member restarting) are retried until the timeout.
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
  interval:
    description: Seconds between polls.
    type: float
    default: 2
extends_documentation_fragment:
  - dbops.clusters.mongodb_login
attributes:
  check_mode:
    support: full
    description:
      - Looks once and reports what it saw in I(ok) and I(unmet); never fails for an unhealthy set in check
        mode.
  diff_mode:
    support: none
    description: Reports state only.
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

import time

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.dbops.clusters.plugins.module_utils import mongodb_rs_plan as plan
from ansible_collections.dbops.clusters.plugins.module_utils.mongodb_common import (
    HAS_PYMONGO, LOGIN_ARGUMENT_SPEC, PYMONGO_IMPORT_ERROR, MongoLoginError, OperationFailure, PyMongoError,
    connect, error_code)

AUTH_FAILED = (13, 18)


def look(module, target):
    """(members, primary, unmet) from one poll; target is a one-item list holding the primary's optime
    from the first poll that saw one (set here), for caught_up."""
    params = module.params
    try:
        status = connect(params).admin.command("replSetGetStatus")
    except OperationFailure as err:
        if error_code(err) in AUTH_FAILED:
            module.fail_json(msg="the server refused the login or the command: %s" % err, ok=False, unmet=[str(err)],
                             members=[], primary=None, waited_seconds=0, checks=1)
        return [], None, ["replSetGetStatus failed: %s" % err]
    except (PyMongoError, MongoLoginError) as err:
        return [], None, ["cannot reach %s:%s: %s" % (params["login_host"], params["login_port"], err)]
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
            return members, primary, ["cannot ask the primary %s whether its config is committed: %s" % (primary, err)]
    unmet = plan.health_problems(status, module.params["max_lag_seconds"], module.params["expected_members"],
                                 committed, config_members)
    if params["caught_up"]:
        if target[0] is None:
            target[0] = plan.primary_optime(status)
        problem = "no primary seen yet" if target[0] is None else plan.caught_up_problem(
            status, target[0], config_members, module.params["max_lag_seconds"])
        if problem:
            unmet.append(problem)
    return members, primary, unmet


def main():
    argument_spec = dict(
        expected_members=dict(type="int"),
        max_lag_seconds=dict(type="float", default=10),
        require_config_committed=dict(type="bool", default=True),
        timeout=dict(type="int", default=300),
        interval=dict(type="float", default=2),
        caught_up=dict(type="bool", default=False),
    )
    argument_spec.update(LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    if not HAS_PYMONGO:
        module.fail_json(msg=missing_required_lib("pymongo"), exception=str(PYMONGO_IMPORT_ERROR))
    if module.params["expected_members"] is not None and module.params["expected_members"] < 1:
        module.fail_json(msg="expected_members must be at least 1")
    interval = max(module.params["interval"], 0.1)
    start = time.time()
    deadline = start + max(module.params["timeout"], 0)
    checks = 0
    target = [None]
    while True:
        checks += 1
        members, primary, unmet = look(module, target)
        now = time.time()
        if not unmet or module.check_mode or now >= deadline:
            break
        time.sleep(min(interval, deadline - now))
    result = dict(changed=False, ok=not unmet, unmet=unmet, members=members, primary=primary, checks=checks,
                  waited_seconds=round(time.time() - start, 1))
    if unmet and not module.check_mode:
        module.fail_json(msg="the replica set is not healthy after %ss (%d checks): %s" % (
            result["waited_seconds"], checks, "; ".join(unmet)), **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
