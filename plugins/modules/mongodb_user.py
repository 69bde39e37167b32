#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: mongodb_user
short_description: Create a MongoDB user, the first one through the localhost exception, or rotate its password
version_added: 0.1.0
description:
  - Creates I(name) in I(database) with SCRAM-SHA-256 and I(roles) when it does not exist. An existing user keeps
    its password with I(update_password=on_create); with I(update_password=always) it gets I(password) when that
    password does not log it in (C(updateUser), logged in with the login options, which hold the current one).
  - A rotation of the login user itself (the credentials file still holds the old password) that an earlier run
    already made on the server is recognised. When the login is refused but I(password) logs I(name) in, nothing
    is changed, so a run stopped between the server's change and the credentials files' rewrite resumes.
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
  update_password:
    description:
      - C(on_create) sets the password only when the user is created; C(always) also gives an existing user
        I(password) when it does not log the user in (a rotation). Roles of an existing user are never changed.
    type: str
    choices: [on_create, always]
    default: on_create
extends_documentation_fragment:
  - dbops.clusters.mongodb_login
attributes:
  check_mode:
    support: full
    description: Reports whether the user would be created or get the new password.
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

- name: Rotate the administrator's password, logged in with the current one (the credentials file)
  dbops.clusters.mongodb_user:
    name: admin
    password: "{{ mongodb_admin_new_password }}"
    update_password: always
    replica_set: rs0
    login_credentials_file: /etc/dbops/mongodb-admin.yml
"""

RETURN = r"""
localhost_exception:
  description: Whether the user was created through the localhost exception.
  returned: always
  type: bool
password_changed:
  description: Whether an existing user got I(password) (or would, in check mode).
  returned: always
  type: bool
decision:
  description: What was done and why.
  returned: always
  type: str
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.dbops.clusters.plugins.module_utils.mongodb_common import (
    AUTH_FAILED, HAS_PYMONGO, LOGIN_ARGUMENT_SPEC, PYMONGO_IMPORT_ERROR, UNAUTHORIZED, MongoLoginError,
    OperationFailure, PyMongoError, connect, error_code, without_login)


def user_exists(client, name, database):
    info = client[database].command("usersInfo", name)
    return bool(info.get("users"))


def logs_in(params, name, password, database):
    """Whether name/password is accepted (a login of its own, with the connection settings of params)."""
    as_user = dict(params, login_user=name, login_password=password, login_database=database)
    client = connect(as_user)
    try:
        client[database].command("ping")
        return True
    except OperationFailure as err:
        if error_code(err) == AUTH_FAILED:
            return False
        raise
    finally:
        client.close()


def main():
    argument_spec = dict(
        name=dict(type="str", required=True),
        password=dict(type="str", required=True, no_log=True),
        database=dict(type="str", default="admin"),
        roles=dict(type="list", elements="raw", default=[]),
        update_password=dict(type="str", choices=["on_create", "always"], default="on_create", no_log=False),
    )
    argument_spec.update(LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    if not HAS_PYMONGO:
        module.fail_json(msg=missing_required_lib("pymongo"), exception=str(PYMONGO_IMPORT_ERROR))
    params = module.params
    name, database, password = params["name"], params["database"], params["password"]
    rotate = params["update_password"] == "always"
    result = dict(localhost_exception=False, password_changed=False)
    try:
        client = connect(params)
        try:
            exists = user_exists(client, name, database)
        except OperationFailure as err:
            if error_code(err) != AUTH_FAILED:
                raise
            if rotate and logs_in(params, name, password, database):
                # The login (the old password) is refused and the new one works: an earlier run rotated it.
                module.exit_json(changed=False, decision="%s@%s logs in with the given password already (the login "
                                 "options' password is refused: an earlier run changed it)" % (name, database),
                                 **result)
            # No user can log in yet: the localhost exception is the way to create the first one.
            client = connect(without_login(params))
            exists, result["localhost_exception"] = False, True
        if exists:
            if not rotate:
                module.exit_json(changed=False, decision="%s@%s exists; left as it is" % (name, database), **result)
            if logs_in(params, name, password, database):
                module.exit_json(changed=False, decision="%s@%s exists and logs in with the given password"
                                 % (name, database), **result)
            result["password_changed"] = True
            if module.check_mode:
                module.exit_json(changed=True, decision="would give %s@%s the new password" % (name, database),
                                 **result)
            client[database].command("updateUser", name, pwd=password)
            module.exit_json(changed=True, decision="gave %s@%s the new password (the given one did not log it in)"
                             % (name, database), **result)
        if module.check_mode:
            module.exit_json(changed=True, decision="would create %s@%s" % (name, database), **result)
        client[database].command("createUser", name, pwd=password, roles=params["roles"],
                                 mechanisms=["SCRAM-SHA-256"])
    except (OperationFailure, PyMongoError, MongoLoginError) as err:
        if rotate and result["localhost_exception"] and error_code(err) == UNAUTHORIZED:
            module.fail_json(msg="%s@%s: the login options are refused and so is the given password; users exist, so "
                             "the localhost exception is closed (give the login options a password the server has): "
                             "%s" % (name, database, err), **result)
        module.fail_json(msg="%s %s@%s failed: %s" % ("updating" if result["password_changed"] else "creating",
                                                      name, database, err), **result)
    module.exit_json(changed=True, decision="created %s@%s%s" % (
        name, database, " through the localhost exception" if result["localhost_exception"] else ""), **result)


if __name__ == "__main__":
    main()
