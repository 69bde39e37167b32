#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: mongodb_user
short_description: Create a MongoDB user, the first one through the localhost exception
version_added: 0.1.0
description:
  - Creates I(name) in I(database) with SCRAM-SHA-256 and I(roles) when it does not exist; an existing user
    is left as it is (its password is not compared or reset).
  - It logs in with the login options; when that login is refused because no user exists yet, it connects
    without credentials and creates the user through the localhost exception, which only a client on the
    server's own host has (U(https://www.mongodb.com/docs/manual/core/localhost-exception/)). Run it on the
    primary with I(login_host=localhost).
options:
  name:
    description: User name.
    type: str
    required: true
  password:
    description: The user's password; never on a command line.
    type: str
    required: true
  database:
    description: Database the user is defined in.
    type: str
    default: admin
  roles:
    description: Built-in or custom roles, as role names (in I(database)) or C({role, db}) dicts.
    type: list
    elements: raw
    default: []
extends_documentation_fragment:
  - dbops.clusters.mongodb_login
attributes:
  check_mode:
    support: full
    description: Reports whether the user would be created.
  diff_mode:
    support: none
    description: Nothing to diff.
requirements:
  - pymongo
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: The first administrator, over the localhost exception on the primary
  dbops.clusters.mongodb_user:
    name: admin
    password: "{{ mongodb_admin_password }}"
    roles: [root]
    login_user: admin
    login_password: "{{ mongodb_admin_password }}"
"""

RETURN = r"""
localhost_exception:
  description: Whether the user was created through the localhost exception.
  returned: always
  type: bool
decision:
  description: What was done and why.
  returned: always
  type: str
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.dbops.clusters.plugins.module_utils.mongodb_common import (
    AUTH_FAILED, HAS_PYMONGO, LOGIN_ARGUMENT_SPEC, PYMONGO_IMPORT_ERROR, MongoLoginError, OperationFailure,
    PyMongoError, connect, error_code, without_login)


def user_exists(client, name, database):
    info = client[database].command("usersInfo", name)
    return bool(info.get("users"))


def main():
    argument_spec = dict(
        name=dict(type="str", required=True),
        password=dict(type="str", required=True, no_log=True),
        database=dict(type="str", default="admin"),
        roles=dict(type="list", elements="raw", default=[]),
    )
    argument_spec.update(LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    if not HAS_PYMONGO:
        module.fail_json(msg=missing_required_lib("pymongo"), exception=str(PYMONGO_IMPORT_ERROR))
    params = module.params
    name, database = params["name"], params["database"]
    localhost_exception = False
    try:
        client = connect(params)
        try:
            exists = user_exists(client, name, database)
        except OperationFailure as err:
            if error_code(err) != AUTH_FAILED:
                raise
            # No user can log in yet: the localhost exception is the way to create the first one.
            client = connect(without_login(params))
            exists, localhost_exception = False, True
        if exists:
            module.exit_json(changed=False, localhost_exception=False,
                             decision="%s@%s exists; left as it is" % (name, database))
        if module.check_mode:
            module.exit_json(changed=True, localhost_exception=localhost_exception,
                             decision="would create %s@%s" % (name, database))
        client[database].command("createUser", name, pwd=params["password"], roles=params["roles"],
                                 mechanisms=["SCRAM-SHA-256"])
    except (OperationFailure, PyMongoError, MongoLoginError) as err:
        module.fail_json(msg="creating %s@%s failed: %s" % (name, database, err))
    module.exit_json(changed=True, localhost_exception=localhost_exception,
                     decision="created %s@%s%s" % (name, database,
                                                   " through the localhost exception" if localhost_exception else ""))


if __name__ == "__main__":
    main()
