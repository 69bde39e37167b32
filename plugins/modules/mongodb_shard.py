#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: mongodb_shard
short_description: Add a shard replica set to a sharded MongoDB cluster through a mongos
version_added: 0.1.0
description:
  - Connects to a mongos, reads C(listShards) and runs C(addShard) with the seed list
    C(replica_set/host:port,...) when no shard of that replica set is registered
    (U(https://www.mongodb.com/docs/manual/reference/command/addShard/)).
  - A shard already registered under the same name is left alone; one registered under another name, or a name
    taken by another replica set, fails naming both, because renaming a shard is not an addShard.
  - Removing shards (C(removeShard), which drains chunks) is not done by this module.
options:
  name:
    description: The shard's name (C(addShard)'s C(name)); defaults to I(set_name).
    type: str
  set_name:
    description: The shard replica set's name (its C(replication.replSetName)).
    type: str
    required: true
  members:
    description: Seed list of the shard's members as C(host:port); one reachable member is enough.
    type: list
    elements: str
    required: true
extends_documentation_fragment:
  - dbops.clusters.mongodb_login
attributes:
  check_mode:
    support: full
    description: Reports whether the shard would be added.
  diff_mode:
    support: none
    description: Nothing is written that a diff could show.
requirements:
  - pymongo
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Register shard1 in the cluster
  dbops.clusters.mongodb_shard:
    set_name: shard1
    members: [10.0.0.21:27018, 10.0.0.22:27018, 10.0.0.23:27018]
    login_host: localhost
    login_credentials_file: /etc/dbops/mongodb-admin.yml
  run_once: true
"""

RETURN = r"""
decision:
  description: C(add) or C(none).
  returned: always
  type: str
reason:
  description: Why.
  returned: always
  type: str
shards:
  description: The shards registered after the run (C(_id) and C(host)).
  returned: always
  type: list
  elements: dict
commands:
  description: Commands sent (the seed list, no credentials).
  returned: always
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.dbops.clusters.plugins.module_utils.mongodb_common import (
    HAS_PYMONGO, LOGIN_ARGUMENT_SPEC, PYMONGO_IMPORT_ERROR, MongoLoginError, OperationFailure, PyMongoError,
    connect)


def shard_decision(shards, name, replica_set):
    """('add' | 'none', reason) from listShards' shards; ValueError when the name or the set is taken otherwise."""
    for shard in shards:
        set_name = shard["host"].partition("/")[0]
        if set_name == replica_set:
            if shard["_id"] != name:
                raise ValueError("replica set %s is already shard %s, not %s" % (replica_set, shard["_id"], name))
            return "none", "shard %s (replica set %s) is registered" % (name, replica_set)
        if shard["_id"] == name:
            raise ValueError("shard name %s is taken by replica set %s" % (name, set_name))
    return "add", "no shard of replica set %s is registered" % replica_set


def main():
    argument_spec = dict(name=dict(type="str"), set_name=dict(type="str", required=True),
                         members=dict(type="list", elements="str", required=True))
    argument_spec.update(LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    if not HAS_PYMONGO:
        module.fail_json(msg=missing_required_lib("pymongo"), exception=str(PYMONGO_IMPORT_ERROR))
    params = module.params
    if not params["members"] or any(":" not in m for m in params["members"]):
        module.fail_json(msg="members must list the shard's members as host:port, got %r" % params["members"])
    name = params["name"] or params["set_name"]
    seed = "%s/%s" % (params["set_name"], ",".join(params["members"]))
    result = dict(changed=False, commands=[])
    try:
        client = connect(params)
        if client.admin.command("hello").get("msg") != "isdbgrid":
            module.fail_json(msg="%s:%s is not a mongos (hello has no msg: isdbgrid)"
                             % (params["login_host"], params["login_port"]), **result)
        shards = client.admin.command("listShards")["shards"]
        try:
            decision, reason = shard_decision(shards, name, params["set_name"])
        except ValueError as err:
            module.fail_json(msg=str(err), shards=[dict(_id=s["_id"], host=s["host"]) for s in shards], **result)
        result.update(decision=decision, reason=reason)
        if decision == "add":
            result["changed"] = True
            result["commands"].append("addShard %s name=%s" % (seed, name))
            if not module.check_mode:
                client.admin.command("addShard", seed, name=name)
                shards = client.admin.command("listShards")["shards"]
        result["shards"] = [dict(_id=s["_id"], host=s["host"]) for s in shards]
    except (OperationFailure, PyMongoError, MongoLoginError) as err:
        module.fail_json(msg="adding shard %s failed: %s" % (name, err), **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
