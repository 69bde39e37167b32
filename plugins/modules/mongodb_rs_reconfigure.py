#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: mongodb_rs_reconfigure
short_description: Bring a MongoDB replica set to a desired member list, one safe reconfig at a time
version_added: 0.1.0
description:
  - Compares the primary's config with I(members) and applies the difference as a series of
    C(replSetReconfig) steps that each add or remove at most one voting member, waiting before each step
    until the previous config is committed on a majority and no member is still C(newlyAdded)
    (U(https://www.mongodb.com/docs/manual/reference/command/replSetReconfig/)). So a set grows from 3 to 5
    members, or shrinks from 5 to 3, in one run.
  - Attribute changes (priority, votes, hidden, tags, delay) that keep the set of voting members go in the
    first step; voting members are then added and removed alternately, an addition first.
  - When the desired config would make the current primary unelectable or remove it, the module first
    steps it down (C(replSetStepDown)), waits for a new primary, and plans again against it.
  - The steps are planned again from the server's config before each one, so a run that stopped half-way
    resumes where it stopped.
options:
  members:
    description: The desired members. Hosts already in the config keep their C(_id); new hosts get free ones.
    type: list
    elements: dict
    required: true
    suboptions:
      host:
        description: host:port as the members reach each other.
        type: str
        required: true
      priority:
        description: Election priority. Default 1, or 0 when hidden, non-voting or an arbiter.
        type: float
      votes:
        description: 1 or 0.
        type: int
        default: 1
      hidden:
        description: Hidden from clients; needs priority 0.
        type: bool
        default: false
      arbiter_only:
        description: An arbiter.
        type: bool
        default: false
      tags:
        description: Replica set tags.
        type: dict
      secondary_delay_secs:
        description: Delay of a delayed member; needs priority 0.
        type: int
        default: 0
  settings:
    description: Keys of the config's C(settings) document to set (others are kept).
    type: dict
  wait_timeout:
    description: Seconds to wait for each config to be committed (and for a new primary after a step-down).
    type: int
    default: 300
  step_down_secs:
    description: C(replSetStepDown) period when the primary has to step down.
    type: int
    default: 60
  secondary_catch_up_period_secs:
    description: How long the primary waits for a secondary to catch up before stepping down.
    type: int
    default: 10
extends_documentation_fragment:
  - dbops.clusters.mongodb_login
attributes:
  check_mode:
    support: full
    description: Returns the planned steps in I(plan) and changes nothing.
  diff_mode:
    support: full
    description: The member list before and after.
requirements:
  - pymongo
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Grow the set to five members (one voting member per step), the first preferred as primary
  dbops.clusters.mongodb_rs_reconfigure:
    members:
      - {host: "db1:27017", priority: 2}
      - {host: "db2:27017"}
      - {host: "db3:27017"}
      - {host: "db4:27017", tags: {dc: "b"}}
      - {host: "backup1:27017", hidden: true, priority: 0}
    login_user: clusterAdmin
    login_password: "{{ mongodb_admin_password }}"
  run_once: true
"""

RETURN = r"""
plan:
  description: The steps planned from the config the module found (in check mode, what it would do).
  returned: always
  type: list
  elements: str
steps:
  description: The steps done, in order (C(reconfig to version N - summary) or C(step down HOST)).
  returned: always
  type: list
  elements: str
config:
  description: The config after the run (before it in check mode).
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.dbops.clusters.plugins.module_utils import mongodb_rs_plan as plan
from ansible_collections.dbops.clusters.plugins.module_utils.mongodb_common import (
    HAS_PYMONGO, LOGIN_ARGUMENT_SPEC, PYMONGO_IMPORT_ERROR, MongoLoginError, OperationFailure, PyMongoError,
    config_settled, find_primary, get_config, plain, wait_for)


def settings_change(current, wanted):
    if not wanted:
        return None
    merged = dict(current.get("settings") or {})
    merged.update(wanted)
    return merged if merged != (current.get("settings") or {}) else None


def member_hosts(config):
    return ["%s (priority %s, votes %s%s)" % (m["host"], m.get("priority", 1), m.get("votes", 1),
                                              ", hidden" if m.get("hidden") else "") for m in config["members"]]


def main():
    argument_spec = dict(
        members=dict(type="list", elements="dict", required=True, options=plan.MEMBER_SPEC),
        settings=dict(type="dict"),
        wait_timeout=dict(type="int", default=300),
        step_down_secs=dict(type="int", default=60),
        secondary_catch_up_period_secs=dict(type="int", default=10),
    )
    argument_spec.update(LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    if not HAS_PYMONGO:
        module.fail_json(msg=missing_required_lib("pymongo"), exception=str(PYMONGO_IMPORT_ERROR))
    params = module.params
    desired = plan.members_from_params(params["members"])
    try:
        plan.validate_members(desired)
    except plan.PlanError as err:
        module.fail_json(msg=str(err))
    timeout = params["wait_timeout"]
    done, first_plan, before = [], None, None
    try:
        primary, client = find_primary(params, timeout=timeout)
        if not primary:
            module.fail_json(msg="no primary is known to %s:%s within %ss"
                             % (params["login_host"], params["login_port"], timeout))
        for _round in range(2 * plan.MAX_MEMBERS):
            settled, waited = wait_for(lambda: config_settled(client), timeout)
            if not settled:
                module.fail_json(msg="the config of %s is not committed (or a member is still newlyAdded) after "
                                 "%ss; steps done: %s" % (primary, waited, done), steps=done)
            current = get_config(client)
            before = before or current
            steps = plan.plan_reconfig(current["members"], desired, primary=primary)
            new_settings = settings_change(current, params["settings"])
            if new_settings is not None and not any("members" in s for s in steps):
                steps.append({"members": current["members"], "summary": "update settings"})
            if first_plan is None:
                first_plan = [s["summary"] for s in steps]
            if not steps or module.check_mode:
                break
            step = steps[0]
            if "stepdown" in step:
                client.admin.command("replSetStepDown", params["step_down_secs"],
                                     secondaryCatchUpPeriodSecs=params["secondary_catch_up_period_secs"])
                done.append("step down %s" % primary)
                old = primary
                primary, client = find_primary(params, timeout=timeout, exclude=old)
                if not primary:
                    module.fail_json(msg="no new primary within %ss after %s stepped down" % (timeout, old),
                                     steps=done)
                continue
            config = dict(current, members=step["members"], version=current["version"] + 1)
            if new_settings is not None:
                config["settings"] = new_settings
            client.admin.command("replSetReconfig", config, maxTimeMS=timeout * 1000)
            done.append("reconfig to version %d - %s" % (config["version"], step["summary"]))
        else:
            module.fail_json(msg="the reconfiguration did not converge", steps=done)
        final = get_config(client)
    except plan.PlanError as err:
        module.fail_json(msg=str(err), steps=done)
    except (OperationFailure, PyMongoError, MongoLoginError) as err:
        module.fail_json(msg="reconfiguration failed after steps %s: %s" % (done, err), steps=done)
    changed = bool(done) or (module.check_mode and bool(first_plan))
    result = dict(changed=changed, plan=first_plan or [], steps=done, config=plain(final))
    if module._diff:
        result["diff"] = dict(before="\n".join(member_hosts(before)) + "\n",
                              after="\n".join(member_hosts(final)) + "\n")
    module.exit_json(**result)


if __name__ == "__main__":
    main()
