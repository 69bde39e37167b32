#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: mongodb_rs_stepdown
short_description: Step a MongoDB primary down once a secondary has caught up, and wait for the new primary
version_added: 0.1.0
description:
  - When the member it connects to is the primary, runs C(replSetStepDown); the server waits up to
    I(secondary_catch_up_period_secs) for an electable secondary to catch up and refuses otherwise
    (U(https://www.mongodb.com/docs/manual/reference/command/replSetStepDown/)). The module then waits until
    another member is primary.
  - A member that is not primary is left alone (I(changed=false)).
  - I(force=true) steps down even when no secondary caught up, which can lose the writes the secondaries did
    not get; it is off by default.
options:
  step_down_secs:
    description: Seconds the member will not stand for election.
    type: int
    default: 60
  secondary_catch_up_period_secs:
    description: Seconds the primary waits for an electable secondary to catch up.
    type: int
    default: 10
  force:
    description: Step down even if no electable secondary is caught up.
    type: bool
    default: false
  wait_timeout:
    description: Seconds to wait for a new primary.
    type: int
    default: 120
extends_documentation_fragment:
  - dbops.clusters.mongodb_login
attributes:
  check_mode:
    support: full
    description: Reports whether the member is primary and which electable secondaries look caught up.
  diff_mode:
    support: none
    description: Nothing to diff.
requirements:
  - pymongo
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Hand the primary role over before restarting this member
  dbops.clusters.mongodb_rs_stepdown:
    login_user: clusterAdmin
    login_password: "{{ mongodb_admin_password }}"
"""

RETURN = r"""
was_primary:
  description: Whether the member was primary.
  returned: always
  type: bool
new_primary:
  description: The primary after the step-down (the current primary when nothing was done).
  returned: always
  type: str
caught_up:
  description: Electable secondaries whose last applied operation equals the primary's, as seen before.
  returned: always
  type: list
  elements: str
decision:
  description: What was done and why.
  returned: always
  type: str
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.dbops.clusters.plugins.module_utils import mongodb_rs_plan as plan
from ansible_collections.dbops.clusters.plugins.module_utils.mongodb_common import (
    HAS_PYMONGO, LOGIN_ARGUMENT_SPEC, PYMONGO_IMPORT_ERROR, MongoLoginError, OperationFailure, PyMongoError,
    connect, error_code, find_primary, hello)


def caught_up_secondaries(client):
    status = client.admin.command("replSetGetStatus")
    config = client.admin.command("replSetGetConfig")["config"]
    electable = set(m["host"] for m in config["members"] if plan.electable(plan.normalize_member(m)))
    primary = [m for m in status["members"] if m.get("stateStr") == "PRIMARY"]
    if not primary:
        return []
    return sorted(m["name"] for m in status["members"] if m.get("stateStr") == "SECONDARY"
                  and m["name"] in electable and m.get("optime") == primary[0].get("optime"))


def main():
    argument_spec = dict(
        step_down_secs=dict(type="int", default=60),
        secondary_catch_up_period_secs=dict(type="int", default=10),
        force=dict(type="bool", default=False),
        wait_timeout=dict(type="int", default=120),
    )
    argument_spec.update(LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    if not HAS_PYMONGO:
        module.fail_json(msg=missing_required_lib("pymongo"), exception=str(PYMONGO_IMPORT_ERROR))
    params = module.params
    if params["secondary_catch_up_period_secs"] >= params["step_down_secs"]:
        module.fail_json(msg="secondary_catch_up_period_secs must be shorter than step_down_secs")
    try:
        client = connect(params)
        seen = hello(client)
        me = seen.get("me")
        if not seen.get("isWritablePrimary"):
            module.exit_json(changed=False, was_primary=False, new_primary=seen.get("primary"), caught_up=[],
                             decision="%s is not primary: nothing to do" % me)
        caught_up = caught_up_secondaries(client)
        if module.check_mode:
            module.exit_json(changed=True, was_primary=True, new_primary=None, caught_up=caught_up,
                             decision="would step down %s; caught-up electable secondaries now: %s"
                             % (me, ", ".join(caught_up) or "none"))
        try:
            client.admin.command("replSetStepDown", params["step_down_secs"],
                                 secondaryCatchUpPeriodSecs=params["secondary_catch_up_period_secs"],
                                 force=params["force"])
        except OperationFailure as err:
            if error_code(err) == 262:
                module.fail_json(msg="%s did not step down: no electable secondary caught up within %ss (%s)"
                                 % (me, params["secondary_catch_up_period_secs"], err), caught_up=caught_up,
                                 was_primary=True)
            raise
        new_primary, _client = find_primary(params, client=connect(params), timeout=params["wait_timeout"],
                                            exclude=me)
        if not new_primary:
            module.fail_json(msg="%s stepped down but no other member became primary within %ss"
                             % (me, params["wait_timeout"]), was_primary=True, caught_up=caught_up)
    except (OperationFailure, PyMongoError, MongoLoginError) as err:
        module.fail_json(msg="step-down of %s:%s failed: %s" % (params["login_host"], params["login_port"], err))
    module.exit_json(changed=True, was_primary=True, new_primary=new_primary, caught_up=caught_up,
                     decision="stepped down %s; %s is primary" % (me, new_primary))


if __name__ == "__main__":
    main()
