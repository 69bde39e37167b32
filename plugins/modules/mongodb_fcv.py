#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: mongodb_fcv
short_description: Read or set a MongoDB replica set's featureCompatibilityVersion
version_added: 0.1.0
description:
  - Reads the featureCompatibilityVersion (FCV) on the primary and, when I(version) is given and differs,
    sets it with C(setFeatureCompatibilityVersion) and C(confirm=true), majority-acknowledged
    (U(https://www.mongodb.com/docs/manual/reference/command/setFeatureCompatibilityVersion/)).
  - Before setting it, checks that every member's binary can run the target FCV (its own release or the
    one before) and fails naming the member that cannot; a member left on an older binary would otherwise
    stop when the new FCV replicates to it.
  - Moving FCV is the user's decision; rolling upgrades leave it where it is.
  - Connected to a mongos (a sharded cluster, where the manual says to run the command), the module cannot
    read FCV; with I(version) it runs C(setFeatureCompatibilityVersion) there (the config server primary sets
    every shard, then the config servers), reports C(changed) and C(before) null, and checks no binaries.
    Read each replica set's FCV (and check its binaries) with the module on a member of that set.
options:
  version:
    description: The FCV wanted (for example C(8.0)). Omit to read it only.
    type: str
  check_binaries:
    description: Check every member's binary version before setting FCV.
    type: bool
    default: true
extends_documentation_fragment:
  - dbops.clusters.mongodb_login
attributes:
  check_mode:
    support: full
    description: Reports the current FCV and what it would set, after the binary check.
  diff_mode:
    support: full
    description: The FCV before and after.
requirements:
  - pymongo
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Raise FCV to 8.0 once every member runs 8.0 and the set is healthy
  dbops.clusters.mongodb_fcv:
    version: "8.0"
    login_user: clusterAdmin
    login_password: "{{ mongodb_admin_password }}"
  run_once: true
"""

RETURN = r"""
before:
  description: FCV found.
  returned: always
  type: str
fcv:
  description: FCV after the run (the planned one in check mode).
  returned: always
  type: str
router:
  description: Whether the module ran against a mongos.
  returned: when connected to a mongos
  type: bool
binaries:
  description: Server version of each member, when checked.
  returned: when version differs and check_binaries
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.dbops.clusters.plugins.module_utils import mongodb_rs_plan as plan
from ansible_collections.dbops.clusters.plugins.module_utils.mongodb_common import (
    HAS_PYMONGO, LOGIN_ARGUMENT_SPEC, PYMONGO_IMPORT_ERROR, MongoLoginError, OperationFailure, PyMongoError,
    connect, find_primary)


def read_fcv(client):
    return client.admin.command("getParameter", 1, featureCompatibilityVersion=1)["featureCompatibilityVersion"]["version"]


def main():
    argument_spec = dict(version=dict(type="str"), check_binaries=dict(type="bool", default=True))
    argument_spec.update(LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    if not HAS_PYMONGO:
        module.fail_json(msg=missing_required_lib("pymongo"), exception=str(PYMONGO_IMPORT_ERROR))
    params = module.params
    target = params["version"]
    if target is not None and target not in plan.RELEASES:
        module.fail_json(msg="version must be one of %s, got %r" % (", ".join(plan.RELEASES), target))
    result = dict(changed=False)
    try:
        router = connect(params)
        if router.admin.command("hello").get("msg") == "isdbgrid":
            result.update(before=None, fcv=None, router=True)
            if target is None:
                module.exit_json(**result)
            result.update(changed=True, fcv=target)
            if not module.check_mode:
                router.admin.command("setFeatureCompatibilityVersion", target, confirm=True)
            module.exit_json(**result)
        primary, client = find_primary(params, timeout=params["connect_timeout"])
        if not primary:
            module.fail_json(msg="no primary is known to %s:%s" % (params["login_host"], params["login_port"]))
        before = read_fcv(client)
        result.update(before=before, fcv=before)
        if target is None or target == before:
            module.exit_json(**result)
        if params["check_binaries"]:
            binaries = {}
            for member in client.admin.command("replSetGetConfig")["config"]["members"]:
                if member.get("arbiterOnly"):
                    continue
                try:
                    version = connect(params, host=member["host"]).admin.command("buildInfo")["version"]
                except (PyMongoError, MongoLoginError) as err:
                    module.fail_json(msg="cannot check the binary of %s before setting FCV %s: %s"
                                     % (member["host"], target, err), **result)
                binaries[member["host"]] = version
                release = ".".join(version.split(".")[:2])
                if release not in plan.RELEASES or not plan.fcv_allows_binary(target, release):
                    module.fail_json(msg="%s runs %s, which cannot run featureCompatibilityVersion %s; upgrade its "
                                     "binary first" % (member["host"], version, target), binaries=binaries, **result)
            result["binaries"] = binaries
        result.update(changed=True, fcv=target)
        if module._diff:
            result["diff"] = dict(before="featureCompatibilityVersion: %s\n" % before,
                                  after="featureCompatibilityVersion: %s\n" % target)
        if module.check_mode:
            module.exit_json(**result)
        client.admin.command("setFeatureCompatibilityVersion", target, confirm=True,
                             writeConcern={"w": "majority"})
        result["fcv"] = read_fcv(client)
    except (OperationFailure, PyMongoError, MongoLoginError) as err:
        module.fail_json(msg="featureCompatibilityVersion change failed: %s" % err, **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
