#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: etcd_auth
short_description: etcd users, their roles and key-prefix permissions, the root user, and authentication on
version_added: 0.1.0
description:
  - Makes etcd's role-based access control hold the given users, each with a role of its own name holding
    exactly one permission, C(READWRITE) on every key under its I(prefix); the C(root) user with the C(root)
    role; then enables authentication (C(/v3/auth/enable)) when I(enable) is true.
  - Every request goes through etcd's v3 JSON gateway over HTTPS with the client certificate; passwords travel in
    request bodies, never on a command line. With authentication on, the module logs in as C(root) with
    O(login_password).
  - A user's password is checked by logging in as that user, which etcd allows only with authentication on;
    while it is off, an existing user's password is set again (reported as a change) when I(enable) is true, so
    the run that turns authentication on leaves every password as given, and later runs change nothing.
  - Users and roles that are not listed are left alone. Extra permissions on a listed user's role are revoked.
options:
  users:
    description: The users, C({name, password, prefix}); the role of the same name gets READWRITE on the prefix.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: User name (also its role's name); not C(root).
        type: str
        required: true
      password:
        description: The user's password.
        type: str
        required: true
      prefix:
        description: Key prefix the user reads and writes (C(/service/)).
        type: str
        required: true
  enable:
    description: Turn authentication on (it needs the root user, which the module makes first).
    type: bool
    default: true
extends_documentation_fragment:
  - dbops.clusters.etcd_login
attributes:
  check_mode:
    support: full
    description: Reads the users, roles and authentication state and returns the actions it would take.
  diff_mode:
    support: none
    description: The actions are listed in I(actions).
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Patroni's user on /service/, authentication on
  dbops.clusters.etcd_auth:
    endpoints: [https://10.0.0.11:2379]
    login_user: root
    login_password: "{{ etcd_root_password }}"
    users:
      - {name: patroni, password: "{{ patroni_etcd_password }}", prefix: /service/}
"""

RETURN = r"""
actions:
  description: What was done (or would be in check mode), one line each; passwords never appear.
  returned: always
  type: list
  elements: str
auth_enabled:
  description: Whether authentication is on after the run (would be, in check mode).
  returned: always
  type: bool
endpoint:
  description: The member the requests went to.
  returned: always
  type: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dbops.clusters.plugins.module_utils.etcd import (
    LOGIN_ARGUMENT_SPEC, Client, EtcdError, ask_any, b64, describe_permission, is_auth_failed, is_not_found,
    make_client, normalize_permissions, role_permission_plan)


class Auth(object):
    def __init__(self, module, endpoint):
        self.module = module
        self.client = make_client(dict(module.params, login_user=None, login_password=None), endpoint)
        self.endpoint = endpoint
        self.actions = []

    def read(self, path, body):
        return self.client.call(path, body)

    def change(self, action, path, body):
        self.actions.append(action)
        if not self.module.check_mode:
            self.client.call(path, body)

    def password_ok(self, name, password):
        params = self.module.params
        probe = Client(self.endpoint, params["ca_cert"], params["client_cert"], params["client_key"],
                       timeout=params["connect_timeout"], user=name, password=password)
        try:
            probe.authenticate()
            return True
        except EtcdError as err:
            if is_auth_failed(err):
                return False
            raise


def main():
    spec = dict(LOGIN_ARGUMENT_SPEC)
    spec.update(users=dict(type="list", elements="dict", default=[], options=dict(
        name=dict(type="str", required=True), password=dict(type="str", required=True, no_log=True),
        prefix=dict(type="str", required=True))), enable=dict(type="bool", default=True))
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    params = module.params
    if (params["login_user"] or "root") != "root" or not params["login_password"]:
        module.fail_json(msg="etcd_auth logs in as root: login_user must be root (or unset) and login_password root's "
                             "password")
    names = [u["name"] for u in params["users"]]
    bad = [n for n in names if n == "root" or not n or names.count(n) > 1]
    bad += ["%s (prefix %r)" % (u["name"], u["prefix"]) for u in params["users"] if not u["prefix"]]
    if bad:
        module.fail_json(msg="users must have distinct names other than root and a non-empty prefix: %s"
                         % ", ".join(sorted(set(bad))))
    try:
        try:
            status, endpoint = ask_any(dict(params, login_user=None), params["endpoints"], "/v3/auth/status", {})
        except EtcdError as err:
            if err.status is None:
                raise
            # a server that wants a login for the status has authentication on
            status, endpoint = ask_any(dict(params, login_user="root"), params["endpoints"], "/v3/auth/status", {})
    except EtcdError as err:
        module.fail_json(msg="could not read whether authentication is on: %s" % err)
    auth = Auth(module, endpoint)
    enabled = bool(status.get("enabled"))
    try:
        if enabled:
            auth.client.user, auth.client.password = "root", params["login_password"]
            try:
                auth.client.authenticate()
            except EtcdError as err:
                if is_auth_failed(err):
                    module.fail_json(msg="authentication is on and root's login failed: the root password given "
                                         "is not root's (change it in etcd first, or give the one it has)")
                raise
        users = set(auth.read("/v3/auth/user/list", {}).get("users") or [])
        roles = set(auth.read("/v3/auth/role/list", {}).get("roles") or [])
        # root: the user and its role; the password is checked once authentication is on.
        if "root" not in users:
            auth.change("add user root", "/v3/auth/user/add",
                        {"name": "root", "password": params["login_password"], "options": {"no_password": False}})
            user_roles = []
        else:
            user_roles = auth.read("/v3/auth/user/get", {"name": "root"}).get("roles") or []
            if not enabled and params["enable"]:
                auth.change("set root's password (not checkable while authentication is off)",
                            "/v3/auth/user/changepw", {"name": "root", "password": params["login_password"]})
        if "root" not in user_roles:
            auth.change("grant role root to user root", "/v3/auth/user/grant", {"user": "root", "role": "root"})
        for user in params["users"]:
            name, prefix = user["name"], user["prefix"]
            current = []
            if name not in roles:
                auth.change("add role %s" % name, "/v3/auth/role/add", {"name": name})
            else:
                current = normalize_permissions(auth.read("/v3/auth/role/get", {"role": name}).get("perm"))
            revoke, grant = role_permission_plan(current, prefix)
            for perm in revoke:
                auth.change("revoke %s from role %s" % (describe_permission(perm), name), "/v3/auth/role/revoke",
                            {"role": name, "key": b64(perm["key"]), "range_end": b64(perm["range_end"])})
            for perm in grant:
                auth.change("grant %s to role %s" % (describe_permission(perm), name), "/v3/auth/role/grant",
                            {"name": name, "perm": {"permType": perm["type"], "key": b64(perm["key"]),
                                                    "range_end": b64(perm["range_end"])}})
            if name not in users:
                auth.change("add user %s" % name, "/v3/auth/user/add",
                            {"name": name, "password": user["password"], "options": {"no_password": False}})
                user_roles = []
            else:
                user_roles = auth.read("/v3/auth/user/get", {"name": name}).get("roles") or []
                if enabled:
                    if not auth.password_ok(name, user["password"]):
                        auth.change("change %s's password" % name, "/v3/auth/user/changepw",
                                    {"name": name, "password": user["password"]})
                elif params["enable"]:
                    auth.change("set %s's password (not checkable while authentication is off)" % name,
                                "/v3/auth/user/changepw", {"name": name, "password": user["password"]})
            if name not in user_roles:
                auth.change("grant role %s to user %s" % (name, name), "/v3/auth/user/grant",
                            {"user": name, "role": name})
        if params["enable"] and not enabled:
            auth.change("enable authentication", "/v3/auth/enable", {})
        elif not params["enable"] and enabled:
            auth.change("disable authentication", "/v3/auth/disable", {})
    except EtcdError as err:
        if is_not_found(err):
            module.fail_json(msg="%s (after: %s)" % (err, "; ".join(auth.actions) or "nothing"))
        module.fail_json(msg="%s (done before it: %s)" % (err, "; ".join(auth.actions) or "nothing"),
                         actions=auth.actions)
    module.exit_json(changed=bool(auth.actions), actions=auth.actions, auth_enabled=params["enable"],
                     endpoint=endpoint)


if __name__ == "__main__":
    main()
