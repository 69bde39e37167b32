#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: mongodb_upgrade_plan
short_description: Read a sharded MongoDB cluster and plan its rolling binary upgrade
version_added: 0.1.0
description:
  - Asks every config server, shard member and mongos for its binary version (C(buildInfo)), each replica set
    for its members' states (C(replSetGetStatus)) and featureCompatibilityVersion, and returns the steps of
    the rolling upgrade to I(target) from the plan in C(module_utils/mongodb_rs_plan.py) (C(plan_upgrade)), one
    major release at a time in the manual's order
    (U(https://www.mongodb.com/docs/manual/release-notes/8.0-upgrade-sharded-cluster/)).
  - The current release is the oldest binary found, so a run that stopped half way plans the rest again;
    members already on a step's release are skipped by the playbook.
  - Fails with the list of problems when the cluster is not healthy (a member unreachable or not PRIMARY,
    SECONDARY or ARBITER, not exactly one primary per replica set, lag over I(max_lag_seconds)), when the
    replica sets disagree on featureCompatibilityVersion, or when the plan is refused (a downgrade, FCV not at
    the running release).
  - Reads only; never changes anything.
options:
  config_servers:
    description: The config server replica set's members as C(host:port).
    type: list
    elements: str
    required: true
  shards:
    description: Each shard replica set, as C(name) and C(members) (C(host:port) list).
    type: list
    elements: dict
    required: true
  routers:
    description: The mongos routers as C(host:port).
    type: list
    elements: str
    required: true
  target:
    description: The release to reach (for example C(8.0)).
    type: str
    required: true
  raise_fcv:
    description: Whether the plan ends by setting featureCompatibilityVersion to I(target); an intermediate
      release's FCV is always raised, the next step needs it.
    type: bool
    default: false
  max_lag_seconds:
    description: Largest replication lag accepted.
    type: int
    default: 10
  allow_downtime:
    description:
      - What to do with a replica set whose primary cannot hand over (a one-member set, or every other member
        an arbiter, hidden, delayed, priority 0, non-voting or not SECONDARY), so that C(replSetStepDown) would
        fail. When false, the plan is refused naming the set and the downtime. When true, that primary is
        upgraded in place, without a step-down (its step has C(in_place)); the set has no primary until it is
        back and elected again.
    type: bool
    default: false
extends_documentation_fragment:
  - dbops.clusters.mongodb_login
attributes:
  check_mode:
    support: full
    description: Reads only, in check mode as well.
  diff_mode:
    support: none
    description: Nothing is written that a diff could show.
requirements:
  - pymongo
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Plan the upgrade to 8.0
  dbops.clusters.mongodb_upgrade_plan:
    config_servers: [10.0.0.11:27019, 10.0.0.12:27019, 10.0.0.13:27019]
    shards:
      - {name: shard1, members: [10.0.0.21:27018, 10.0.0.22:27018, 10.0.0.23:27018]}
    routers: [10.0.0.31:27017]
    target: "8.0"
    login_credentials_file: /etc/dbops/mongodb-admin.yml
  register: plan
"""

RETURN = r"""
current:
  description: The oldest release any binary runs.
  returned: success
  type: str
path:
  description: Releases to pass through, in order.
  returned: success
  type: list
  elements: str
fcv:
  description: The cluster's featureCompatibilityVersion.
  returned: success
  type: str
binaries:
  description: Server version of every member and router, by C(host:port).
  returned: always
  type: dict
steps:
  description: The plan (action C(balancer_stop), C(stepdown), C(upgrade), C(balancer_start), C(fcv); with
    C(replica_set), C(host) and C(release); C(in_place) on the upgrade of a primary that cannot hand over, when
    I(allow_downtime)).
  returned: success
  type: list
  elements: dict
problems:
  description: Why the cluster is not ready, one sentence each.
  returned: always
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.dbops.clusters.plugins.module_utils import mongodb_rs_plan as plan
from ansible_collections.dbops.clusters.plugins.module_utils.mongodb_common import (
    HAS_PYMONGO, LOGIN_ARGUMENT_SPEC, PYMONGO_IMPORT_ERROR, MongoLoginError, OperationFailure, PyMongoError,
    connect)


def short(err):
    """The first sentence of a pymongo error (without its topology description)."""
    return str(err).split(" (configured timeouts", maxsplit=1)[0].split(", Timeout:", maxsplit=1)[0]


def read_replica_set(params, name, members, binaries, problems, max_lag):
    """(replSetGetStatus members with their config's electability fields, fcv) of one replica set, filling
    binaries and problems."""
    status, fcv, config = None, None, None
    for host in members:
        try:
            client = connect(params, host=host)
            binaries[host] = client.admin.command("buildInfo")["version"]
            if status is None:
                status = client.admin.command("replSetGetStatus")
                config = client.admin.command("replSetGetConfig")["config"]
                fcv = client.admin.command("getParameter", 1, featureCompatibilityVersion=1)[
                    "featureCompatibilityVersion"]["version"]
        except (PyMongoError, MongoLoginError) as err:
            problems.append("replica set %s: %s does not answer (%s)" % (name, host, short(err)))
    if status is None:
        problems.append("replica set %s: no member answered" % name)
        return [], None
    for problem in plan.health_problems(status, max_lag, expected_members=len(members)):
        problems.append("replica set %s: %s" % (name, problem))
    configured = sorted(m["name"] for m in status["members"])
    if configured != sorted(members):
        problems.append("replica set %s has members %s, the inventory %s" % (name, ", ".join(configured),
                                                                             ", ".join(sorted(members))))
    members = plan.merge_config([dict(name=m["name"], stateStr=m["stateStr"]) for m in status["members"]],
                                config.get("members"))
    return members, fcv


def main():
    argument_spec = dict(config_servers=dict(type="list", elements="str", required=True),
                         shards=dict(type="list", elements="dict", required=True),
                         routers=dict(type="list", elements="str", required=True),
                         target=dict(type="str", required=True),
                         raise_fcv=dict(type="bool", default=False),
                         max_lag_seconds=dict(type="int", default=10),
                         allow_downtime=dict(type="bool", default=False))
    argument_spec.update(LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    if not HAS_PYMONGO:
        module.fail_json(msg=missing_required_lib("pymongo"), exception=str(PYMONGO_IMPORT_ERROR))
    params = module.params
    if params["target"] not in plan.RELEASES:
        module.fail_json(msg="target must be one of %s, got %r" % (", ".join(plan.RELEASES), params["target"]))
    for index, shard in enumerate(params["shards"]):
        if not shard.get("name") or not shard.get("members"):
            module.fail_json(msg="shards[%d] needs a name and members" % index)
    if not params["config_servers"] or not params["routers"]:
        module.fail_json(msg="config_servers and routers must not be empty")
    binaries, problems, fcvs = {}, [], {}
    config_members, fcvs["config"] = read_replica_set(params, "config", params["config_servers"], binaries,
                                                      problems, params["max_lag_seconds"])
    shards = {}
    for shard in params["shards"]:
        shards[shard["name"]], fcvs[shard["name"]] = read_replica_set(
            params, shard["name"], list(shard["members"]), binaries, problems, params["max_lag_seconds"])
    for host in params["routers"]:
        try:
            client = connect(params, host=host)
            binaries[host] = client.admin.command("buildInfo")["version"]
        except (PyMongoError, MongoLoginError, OperationFailure) as err:
            problems.append("mongos %s does not answer (%s)" % (host, short(err)))
    result = dict(changed=False, binaries=binaries, problems=problems)
    if len(set(v for v in fcvs.values() if v)) > 1:
        problems.append("the replica sets disagree on featureCompatibilityVersion: %s"
                        % ", ".join("%s %s" % item for item in sorted(fcvs.items())))
    unknown = sorted(h for h, v in binaries.items() if plan.release_of(v) not in plan.RELEASES)
    if unknown:
        problems.append("unknown releases: %s" % ", ".join("%s %s" % (h, binaries[h]) for h in unknown))
    if problems:
        module.fail_json(msg="the cluster is not ready for a rolling upgrade: %s" % "; ".join(problems), **result)
    current = min((plan.release_of(v) for v in binaries.values()), key=plan.RELEASES.index)
    fcv = fcvs["config"]
    try:
        steps = plan.plan_upgrade(config_members, shards, params["routers"], current, params["target"], fcv,
                                  params["raise_fcv"], params["allow_downtime"])
        path = plan.upgrade_path(current, params["target"])
    except plan.PlanError as err:
        module.fail_json(msg="no upgrade plan: %s" % err, **result)
    result.update(current=current, path=path, fcv=fcv, steps=steps)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
