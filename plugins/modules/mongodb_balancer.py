#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: mongodb_balancer
short_description: Stop, start or read the balancer of a sharded MongoDB cluster
version_added: 0.1.0
description:
  - Connects to a mongos and runs C(balancerStatus), then C(balancerStop) or C(balancerStart) when the mode
    differs from I(state) (U(https://www.mongodb.com/docs/manual/reference/command/balancerStop/)).
    C(balancerStop) waits for a balancing round in progress to finish, up to I(timeout) seconds.
  - The balancer stays off during a rolling upgrade of a sharded cluster; the upgrade playbook starts it
    again even when a step fails.
options:
  state:
    description: C(stopped), C(started), or C(status) to read only.
    type: str
    choices: [started, stopped, status]
    default: status
  timeout:
    description: Seconds C(balancerStop) may wait for a running round to end.
    type: int
    default: 600
extends_documentation_fragment:
  - dbops.clusters.mongodb_login
attributes:
  check_mode:
    support: full
    description: Reports the mode found and whether it would change.
  diff_mode:
    support: full
    description: The mode before and after.
requirements:
  - pymongo
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Stop the balancer before the upgrade
  dbops.clusters.mongodb_balancer:
    state: stopped
    login_host: "{{ groups['mongos'][0] }}"
    login_user: clusterAdmin
    login_password: "{{ mongodb_admin_password }}"
  run_once: true
"""

RETURN = r"""
before:
  description: Balancer mode found (C(full) or C(off)).
  returned: always
  type: str
mode:
  description: Balancer mode after the run (the planned one in check mode).
  returned: always
  type: str
in_balancer_round:
  description: Whether a balancing round was running at the last status.
  returned: always
  type: bool
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.dbops.clusters.plugins.module_utils.mongodb_common import (
    HAS_PYMONGO, LOGIN_ARGUMENT_SPEC, PYMONGO_IMPORT_ERROR, MongoLoginError, OperationFailure, PyMongoError,
    connect)

WANTED_MODE = {"started": "full", "stopped": "off"}


def main():
    argument_spec = dict(state=dict(type="str", choices=["started", "stopped", "status"], default="status"),
                         timeout=dict(type="int", default=600))
    argument_spec.update(LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    if not HAS_PYMONGO:
        module.fail_json(msg=missing_required_lib("pymongo"), exception=str(PYMONGO_IMPORT_ERROR))
    params = module.params
    result = dict(changed=False)
    try:
        client = connect(params)
        status = client.admin.command("balancerStatus")
        before = status["mode"]
        result.update(before=before, mode=before, in_balancer_round=bool(status.get("inBalancerRound")))
        wanted = WANTED_MODE.get(params["state"])
        if wanted is None or wanted == before:
            module.exit_json(**result)
        result.update(changed=True, mode=wanted)
        if module._diff:
            result["diff"] = dict(before="balancer: %s\n" % before, after="balancer: %s\n" % wanted)
        if module.check_mode:
            module.exit_json(**result)
        if wanted == "off":
            client.admin.command("balancerStop", maxTimeMS=params["timeout"] * 1000)
        else:
            client.admin.command("balancerStart", maxTimeMS=params["timeout"] * 1000)
        status = client.admin.command("balancerStatus")
        result.update(mode=status["mode"], in_balancer_round=bool(status.get("inBalancerRound")))
        if status["mode"] != wanted:
            module.fail_json(msg="the balancer reports mode %s after the change to %s" % (status["mode"], wanted),
                             **result)
    except (OperationFailure, PyMongoError, MongoLoginError) as err:
        module.fail_json(msg="balancer %s failed: %s" % (params["state"], err), **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
