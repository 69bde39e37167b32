#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: mongodb_rs_state
short_description: Report the replica-set state one MongoDB member sees
version_added: 0.1.0
description:
  - Connects to one member and returns what it reports, changing nothing; C(hello), C(buildInfo),
    C(replSetGetStatus), C(replSetGetConfig) and the featureCompatibilityVersion.
  - A member that has no replica set config yet is reported with I(initiated=false), not as an error.
extends_documentation_fragment:
  - dbops.clusters.mongodb_login
attributes:
  check_mode:
    support: full
    description: Reads only; the same in check mode.
  diff_mode:
    support: none
    description: Reports state only.
requirements:
  - pymongo
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: See what this member reports
  dbops.clusters.mongodb_rs_state:
    login_user: clusterAdmin
    login_password: "{{ mongodb_admin_password }}"
  register: rs
"""

RETURN = r"""
initiated:
  description: Whether the member has a replica set config.
  returned: always
  type: bool
set_name:
  description: Replica set name the member runs with.
  returned: always
  type: str
me:
  description: The member's own host:port in the config.
  returned: when initiated
  type: str
is_primary:
  description: Whether this member is the writable primary.
  returned: always
  type: bool
primary:
  description: The primary this member knows, or null.
  returned: always
  type: str
version:
  description: Server version (buildInfo).
  returned: always
  type: str
fcv:
  description: featureCompatibilityVersion, or null before initiation.
  returned: always
  type: str
config:
  description: The replica set config (replSetGetConfig), without server-managed fields changed.
  returned: when initiated
  type: dict
members:
  description: From replSetGetStatus, one entry per member with C(name), C(state), C(health), C(optime_date),
    C(config_version).
  returned: when initiated
  type: list
  elements: dict
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.dbops.clusters.plugins.module_utils.mongodb_common import (
    HAS_PYMONGO, LOGIN_ARGUMENT_SPEC, PYMONGO_IMPORT_ERROR, MongoLoginError, OperationFailure, PyMongoError,
    connect, hello, plain)


def main():
    module = AnsibleModule(argument_spec=dict(LOGIN_ARGUMENT_SPEC), supports_check_mode=True)
    if not HAS_PYMONGO:
        module.fail_json(msg=missing_required_lib("pymongo"), exception=str(PYMONGO_IMPORT_ERROR))
    try:
        client = connect(module.params)
        seen = hello(client)
        version = client.admin.command("buildInfo")["version"]
        result = dict(changed=False, initiated="setVersion" in seen, set_name=seen.get("setName"),
                      is_primary=bool(seen.get("isWritablePrimary")), primary=seen.get("primary"), version=version,
                      fcv=None)
        if result["initiated"]:
            result["me"] = seen.get("me")
            fcv = client.admin.command("getParameter", 1, featureCompatibilityVersion=1)
            result["fcv"] = fcv["featureCompatibilityVersion"]["version"]
            result["config"] = plain(client.admin.command("replSetGetConfig")["config"])
            status = client.admin.command("replSetGetStatus")
            result["members"] = [dict(name=m["name"], state=m["stateStr"], health=m.get("health"),
                                      optime_date=plain(m.get("optimeDate")), config_version=m.get("configVersion"))
                                 for m in status["members"]]
    except (OperationFailure, PyMongoError, MongoLoginError) as err:
        module.fail_json(msg="cannot read the state of %s:%s: %s" % (module.params["login_host"],
                                                                     module.params["login_port"], err))
    module.exit_json(**result)


if __name__ == "__main__":
    main()
