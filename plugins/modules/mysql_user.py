#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: mysql_user
short_description: Declare a MySQL, Percona Server or MariaDB account, its privileges and whether it must use TLS
version_added: 0.1.0
description:
  - Creates, updates or drops one account C(name@host) and changes only what differs from the declaration,
    so a second run reports no change.
  - Privileges are compared with what the server holds, read from C(information_schema) (C(USER_PRIVILEGES),
    C(SCHEMA_PRIVILEGES), C(TABLE_PRIVILEGES)). C(ALL) is compared with the privileges that C(ALL) grants at
    that level on this server (from C(SHOW PRIVILEGES)), so it is idempotent on MySQL 8.0+, whose global
    C(ALL) is expanded into static and dynamic privileges, and on MariaDB. MariaDB's alias names (for example
    C(REPLICATION CLIENT), stored as C(BINLOG MONITOR)) are compared under the stored name.
  - Column-level and routine-level privileges, roles and proxy grants are not managed (and not revoked).
  - The password is always sent as a query parameter and never returned; the returned C(queries) show
    placeholders only.
  - With I(update_password=always) the password is changed only when it differs. Hashes of
    caching_sha2_password are salted, so the module first logs in as the account with the declared password
    and runs C(SELECT CURRENT_USER()). It logs in over the Unix socket (client host C(localhost)); an
    account with C(REQUIRE SSL) is tried over TCP with TLS instead, on 127.0.0.1 (or on I(login_host) when
    I(login_ca) is set), because the socket does not satisfy C(REQUIRE SSL).
  - A test login that succeeds as that very account proves the password unchanged. A socket login refused
    with C(Access denied) proves it different only when the login cannot have been matched to another
    account (the account is C(name@localhost), or no other C(name) or anonymous account matches
    C(localhost)); the module then runs C(ALTER USER ... IDENTIFIED WITH <current plugin> BY) once.
  - When the test login proves nothing (for example C(repl@10.0.0.%), which no local login reaches), the
    stored authentication string is checked locally, for C(mysql_native_password) (SHA1 of SHA1) and
    C(caching_sha2_password) (SHA-256 crypt recomputed with the stored salt and rounds). If neither tells,
    the password is left alone with a warning. A refused test login counts as a failed login for accounts
    with C(FAILED_LOGIN_ATTEMPTS).
options:
  name:
    description: User name of the account.
    type: str
    required: true
    aliases: [user]
  host:
    description: Host part of the account; C(%) for any host, or a pattern with C(%) and C(_).
    type: str
    default: '%'
  password:
    description:
      - Password of the account. Required to create an account, unless I(plugin) is C(auth_socket) or
        C(unix_socket).
    type: str
  update_password:
    description:
      - C(on_create) sets the password only when the account is created.
      - C(always) also changes it on an existing account when it differs (see the description for how the
        module tells without comparing salted hashes).
    type: str
    choices: [on_create, always]
    default: on_create
  retain_current_password:
    description:
      - With I(update_password=always), a changed password keeps the current one valid as a secondary password
        (C(ALTER USER ... RETAIN CURRENT PASSWORD), MySQL 8.0.14 and later). MariaDB has no dual passwords, so there
        the current stored password becomes a second authentication method of the account's plugin
        (C(IDENTIFIED VIA plugin USING PASSWORD(new) OR plugin USING 'current'), MariaDB 10.4 and later), which
        the server tries when the first refuses. Clients holding the old password (another server's replication
        channel, a proxy's monitor) keep logging in until each has the new one; then discard the old one with
        I(discard_old_password).
    type: bool
    default: false
  discard_old_password:
    description:
      - Discard the secondary password an earlier I(retain_current_password) kept (C(ALTER USER ... DISCARD OLD
        PASSWORD); on MariaDB the account is left with its first method alone), once every client logs in with
        the new one. Nothing is done when the account holds none.
    type: bool
    default: false
  plugin:
    description:
      - Authentication plugin, for example C(caching_sha2_password), C(mysql_native_password), C(ed25519)
        (MariaDB), C(auth_socket) (MySQL) or C(unix_socket) (MariaDB). When omitted the server's default is
        used on creation and the plugin of an existing account is kept.
      - Changing the plugin of an existing account needs I(password), unless the new plugin is a socket plugin.
    type: str
  privileges:
    description:
      - Privileges by level, C('db.table') to a comma-separated string (or list) of privileges, C(ALL), or
        C(USAGE). Levels are C('*.*'), C('db.*') and C('db.table'); database names in grants may use the
        C(%) and C(_) wildcards (escape C(_) as C(\_) to mean a literal underscore).
      - Add C(GRANT) (or C(GRANT OPTION)) to the list to grant WITH GRANT OPTION at that level.
      - When omitted, privileges are not managed at all. An empty dict with I(append_privs=false) revokes
        every database, table and global privilege of the account.
    type: dict
  append_privs:
    description:
      - C(false) makes I(privileges) the complete list, revoking privileges and grant options not declared.
      - C(true) only adds the declared privileges.
    type: bool
    default: false
  tls_required:
    description:
      - C(true) makes the account C(REQUIRE SSL), C(false) C(REQUIRE NONE); omitted leaves it as it is.
      - Compared with C(mysql.user.ssl_type); a stricter requirement set elsewhere (C(X509), C(SUBJECT)...)
        counts as TLS required and is kept.
    type: bool
  state:
    description: C(present) creates or updates the account, C(absent) drops it.
    type: str
    choices: [present, absent]
    default: present
extends_documentation_fragment:
  - dbops.clusters.mysql_login
attributes:
  check_mode:
    support: full
    description: Reads the server and returns the statements it would run, without running them.
  diff_mode:
    support: full
    description: Returns the account's plugin, TLS requirement and privileges before and after (never the password).
requirements:
  - PyMySQL
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Application account, read-write on its database, over TLS only
  dbops.clusters.mysql_user:
    name: app
    host: "10.89.%"
    password: "{{ vault_app_password }}"
    plugin: caching_sha2_password
    privileges:
      "app.*": ALL
      "*.*": PROCESS
    tls_required: true

- name: Rotate the monitoring password (changed only when it differs)
  dbops.clusters.mysql_user:
    name: monitor
    host: localhost
    password: "{{ vault_monitor_password }}"
    update_password: always
    privileges:
      "*.*": PROCESS,REPLICATION CLIENT,SELECT

- name: Rotate a replication password without breaking the replicas that still hold the old one
  dbops.clusters.mysql_user:
    name: repl
    password: "{{ vault_repl_password }}"
    update_password: always
    retain_current_password: true

- name: Once every replica uses the new password, discard the old one
  dbops.clusters.mysql_user:
    name: repl
    discard_old_password: true

- name: Drop an account
  dbops.clusters.mysql_user:
    name: olduser
    host: "%"
    state: absent
"""

RETURN = r"""
user:
  description: User name of the account.
  returned: always
  type: str
  sample: app
host:
  description: Host part of the account.
  returned: always
  type: str
  sample: "%"
queries:
  description: Statements run (or that would run in check mode), with placeholders; never a password.
  returned: always
  type: list
  elements: str
  sample: ["CREATE USER %s@%s IDENTIFIED WITH caching_sha2_password BY %s REQUIRE SSL",
           "GRANT ALL PRIVILEGES ON `app`.* TO %s@%s"]
changes:
  description: What changed (or would change), one flag each.
  returned: always
  type: dict
  contains:
    created:
      description: The account was created.
      type: bool
    password:
      description: The password was set on an existing account.
      type: bool
    old_password_discarded:
      description: The secondary password kept by an earlier rotation was discarded.
      type: bool
    plugin:
      description: The authentication plugin was changed.
      type: bool
    privileges:
      description: Privileges were granted or revoked.
      type: bool
    tls:
      description: The TLS requirement was changed.
      type: bool
    removed:
      description: The account was dropped.
      type: bool
  sample: {created: false, password: false, old_password_discarded: false, plugin: false, privileges: true,
           tls: false, removed: false}
password_check:
  description: How the password of an existing account was judged with I(update_password=always), or why it was not.
  returned: always
  type: str
  sample: "test login over the socket succeeded as app@localhost: password unchanged"
privilege_changes:
  description: Each grant or revoke, as C(action), C(on) (the level) and C(privileges).
  returned: always
  type: list
  elements: dict
  sample: [{action: revoke, "on": "app.*", privileges: [DELETE]}]
privileges:
  description: The account's privileges after the change (predicted in check mode), C(ALL) where a level holds all.
  returned: when state is present
  type: dict
  sample: {"app.*": "ALL", "*.*": "PROCESS"}
"""

import ssl

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_connection import (
    HAS_PYMYSQL, LOGIN_ARGUMENT_SPEC, PYMYSQL_IMPORT_ERROR, ConnectionError_, Session, connect, connection_kwargs,
    pymysql)
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_errors import is_access_denied
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_privileges import (
    SOCKET_PLUGINS, PrivilegeError, action_sql, create_user_sql, current_privileges, describe_current,
    describe_desired, diff_privileges, discard_old_sql, grantee, host_matches, identified_sql, normalize_privileges,
    password_matches, resolve_names, rotation_sql, server_privileges, socket_login_target, tls_satisfied,
    validate_account, validate_name, PLUGIN_RE)


def read_account(session, user, host):
    rows = session.fetch("SELECT plugin, ssl_type, HEX(authentication_string) AS auth FROM mysql.user "
                         "WHERE User = %s AND Host = %s", (user, host))
    return rows[0] if rows else None


def holds_old_password(session, user, host, mariadb):
    """Whether the account keeps a secondary password: MySQL's dual passwords (mysql.user.User_attributes), or on
    MariaDB more than one authentication method (mysql.global_priv's auth_or list)."""
    if mariadb:
        methods = session.value("SELECT JSON_LENGTH(Priv, '$.auth_or') FROM mysql.global_priv "
                                "WHERE User = %s AND Host = %s", (user, host))
        return int(methods or 0) > 1
    held = session.value("SELECT JSON_CONTAINS_PATH(User_attributes, 'one', '$.additional_password') "
                         "FROM mysql.user WHERE User = %s AND Host = %s", (user, host))
    return held in (1, "1")


def stored_string(account):
    """The account's stored authentication string (its first method on MariaDB), as the server keeps it."""
    return bytes.fromhex(account["auth"]).decode("ascii") if account.get("auth") else ""


def read_privileges(session, user, host):
    who = grantee(user, host)
    return current_privileges(
        session.fetch("SELECT PRIVILEGE_TYPE, IS_GRANTABLE FROM information_schema.USER_PRIVILEGES "
                      "WHERE GRANTEE = %s", (who,)),
        session.fetch("SELECT TABLE_SCHEMA, PRIVILEGE_TYPE, IS_GRANTABLE FROM information_schema.SCHEMA_PRIVILEGES "
                      "WHERE GRANTEE = %s", (who,)),
        session.fetch("SELECT TABLE_SCHEMA, TABLE_NAME, PRIVILEGE_TYPE, IS_GRANTABLE "
                      "FROM information_schema.TABLE_PRIVILEGES WHERE GRANTEE = %s", (who,)))


def test_login(params, user, host, password, tls):
    """Log in as the account: (outcome, where, detail), outcome one of matched, other, refused, expired, error.

    Over the socket the client host is localhost. An account that requires TLS is tried over TCP with TLS
    instead (the socket is not TLS): on 127.0.0.1 when the module uses the socket, else on I(login_host) when
    I(login_ca) verifies it; otherwise it is not tried (outcome None).
    """
    kwargs = connection_kwargs(params)
    kwargs.update(user=user, password=password)
    over_socket = not kwargs.get("host")
    if over_socket and not any(host_matches(host, client) for client in ("localhost", "127.0.0.1")):
        return None, "the socket", "a local login cannot reach %s@%s" % (user, host)
    if tls:
        if over_socket:
            kwargs.pop("unix_socket", None)
            kwargs.update(host="127.0.0.1", port=params.get("login_port") or 3306)
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE  # the local server itself: nothing between to impersonate it
            kwargs["ssl"] = context
        elif not kwargs.get("ssl"):
            return None, "TCP to %s" % kwargs.get("host"), "the account requires TLS and login_ca is not set"
    where = ("the socket" if over_socket and not tls else "TCP%s to %s:%s"
             % (" with TLS" if tls else "", kwargs.get("host"), kwargs.get("port")))
    try:
        connection = pymysql.connect(**kwargs)
    except pymysql.err.MySQLError as err:
        return ("refused" if is_access_denied(err) else "error"), where, str(err)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT CURRENT_USER()")
            matched = cursor.fetchone()[0]
    except pymysql.err.MySQLError as err:  # an expired password logs in, then refuses queries
        return "expired", where, str(err)
    finally:
        try:
            connection.close()
        except Exception:  # pylint: disable=broad-except
            pass
    if matched == "%s@%s" % (user, host):
        return "matched", where, matched
    return "other", where, matched


def check_password(session, params, user, host, account):
    """(matches, how): matches is True, False, or None when neither a test login nor the stored hash can tell."""
    ssl_type = (account.get("ssl_type") or "").upper()
    if ssl_type in ("X509", "SPECIFIED"):
        how = "no test login: the account requires a client certificate"
    else:
        tls = ssl_type not in ("", "NONE")
        outcome, where, detail = test_login(params, user, host, params["password"], tls)
        if outcome == "matched":
            return True, "test login over %s succeeded as %s: password unchanged" % (where, detail)
        conclusive = False
        if outcome in ("refused", "expired") and where == "the socket":
            accounts = [(row["User"], row["Host"]) for row in session.fetch("SELECT User, Host FROM mysql.user")]
            conclusive = socket_login_target(accounts, user, host)
        if conclusive and outcome == "expired":
            return True, "test login over the socket succeeded (password expired): password unchanged"
        if conclusive:
            return False, "test login over the socket as %s@%s was refused: password differs" % (user, host)
        if outcome is None:
            how = "no test login (%s)" % detail
        elif outcome == "other":
            how = "test login over %s authenticated as %s, another account" % (where, detail)
        elif outcome == "refused":
            how = "test login over %s was refused, but it may have been matched to another account" % where
        else:
            how = "test login over %s failed: %s" % (where, detail)
    stored = bytes.fromhex(account["auth"]) if account.get("auth") else None
    local = password_matches(account.get("plugin"), stored, params["password"])
    if local is None:
        return None, "%s; the stored %s string cannot be checked locally" % (how, account.get("plugin"))
    return local, "%s; the stored %s hash %s" % (how, account.get("plugin"),
                                                 "matches: password unchanged" if local else "differs")


def main():
    argument_spec = dict(
        name=dict(type="str", required=True, aliases=["user"]),
        host=dict(type="str", default="%"),
        password=dict(type="str", no_log=True),
        update_password=dict(type="str", choices=["on_create", "always"], default="on_create", no_log=False),
        retain_current_password=dict(type="bool", default=False),
        discard_old_password=dict(type="bool", default=False),
        plugin=dict(type="str"),
        privileges=dict(type="dict"),
        append_privs=dict(type="bool", default=False),
        tls_required=dict(type="bool"),
        state=dict(type="str", choices=["present", "absent"], default="present"),
    )
    argument_spec.update(LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    if not HAS_PYMYSQL:
        module.fail_json(msg=missing_required_lib("PyMySQL"), exception=str(PYMYSQL_IMPORT_ERROR))
    params = module.params
    user, host, plugin = params["name"], params["host"], params["plugin"]
    changes = dict(created=False, password=False, old_password_discarded=False, plugin=False, privileges=False,
                   tls=False, removed=False)
    result = dict(user=user, host=host, changes=changes, password_check="not checked", privilege_changes=[])
    try:
        validate_account(user, host)
        if plugin:
            validate_name(plugin, "plugin", PLUGIN_RE)
        wanted_raw = normalize_privileges(params["privileges"]) if params["privileges"] is not None else None
    except PrivilegeError as err:
        module.fail_json(msg=str(err), **result)
    try:
        session = Session(connect(params), check_mode=module.check_mode)
    except ConnectionError_ as err:
        module.fail_json(msg=str(err), **result)

    try:
        version = session.value("SELECT VERSION()")
        mariadb = "mariadb" in version.lower()
        account = read_account(session, user, host)
        before = dict(exists=account is not None)
        after = dict(exists=params["state"] == "present")
        args = (user, host)

        if params["state"] == "absent":
            if account:
                session.execute("DROP USER %s@%s", args)
                changes["removed"] = True
            session.close()
            module.exit_json(changed=changes["removed"], queries=session.queries,
                             diff=dict(before=before, after=after), **result)

        known = server_privileges(session.fetch("SHOW PRIVILEGES"))
        wanted = None
        if wanted_raw is not None:
            try:
                wanted = dict((key, resolve_names(level, key, known, mariadb)) for key, level in wanted_raw.items())
            except PrivilegeError as err:
                module.fail_json(msg=str(err), queries=session.queries, **result)
            for key, level in wanted.items():
                if level.grant and not level.privs:
                    module.fail_json(msg="%s: GRANT OPTION needs at least one privilege at that level" % key,
                                     queries=session.queries, **result)

        if account is None:
            if params["password"] is None and plugin not in SOCKET_PLUGINS:
                module.fail_json(msg="password is required to create %s@%s (or plugin: auth_socket/unix_socket)"
                                 % (user, host), queries=session.queries, **result)
            with_password = params["password"] is not None and plugin not in SOCKET_PLUGINS
            session.execute(create_user_sql(plugin, with_password, params["tls_required"], mariadb),
                            args + ((params["password"],) if with_password else ()))
            changes["created"] = True
            result["password_check"] = "set on creation"
            current = {}
            after.update(plugin=plugin or "(server default)", tls_required=bool(params["tls_required"]))
        else:
            before.update(plugin=account["plugin"], tls_required=tls_satisfied(account["ssl_type"], True))
            after.update(plugin=account["plugin"], tls_required=before["tls_required"])
            if plugin and plugin != account["plugin"]:
                socket_plugin = plugin in SOCKET_PLUGINS
                if not socket_plugin and params["password"] is None:
                    module.fail_json(msg="changing the plugin of %s@%s from %s to %s needs password"
                                     % (user, host, account["plugin"], plugin), queries=session.queries, **result)
                session.execute("ALTER USER %s@%s" + identified_sql(plugin, not socket_plugin, mariadb),
                                args + (() if socket_plugin else (params["password"],)))
                changes["plugin"] = True
                changes["password"] = not socket_plugin
                result["password_check"] = "set with the new plugin %s" % plugin
                after["plugin"] = plugin
            elif params["password"] is not None and params["update_password"] == "always":
                if account["plugin"] in SOCKET_PLUGINS:
                    result["password_check"] = "not checked: %s@%s authenticates by %s" % (user, host, account["plugin"])
                else:
                    matches, how = check_password(session, params, user, host, account)
                    result["password_check"] = how
                    if matches is False:
                        retain = params["retain_current_password"]
                        session.execute("ALTER USER %s@%s" + rotation_sql(account["plugin"], mariadb, retain),
                                        args + (params["password"],)
                                        + ((stored_string(account),) if retain and mariadb else ()))
                        changes["password"] = True
                    elif matches is None:
                        module.warn("could not verify the password of %s@%s, left unchanged: %s" % (user, host, how))
            if (params["discard_old_password"] and not changes["password"]
                    and holds_old_password(session, user, host, mariadb)):
                session.execute("ALTER USER %s@%s" + discard_old_sql(account["plugin"], mariadb),
                                args + ((stored_string(account),) if mariadb else ()))
                changes["old_password_discarded"] = True
            if params["tls_required"] is not None and not tls_satisfied(account["ssl_type"], params["tls_required"]):
                session.execute("ALTER USER %%s@%%s REQUIRE %s" % ("SSL" if params["tls_required"] else "NONE"), args)
                changes["tls"] = True
                after["tls_required"] = params["tls_required"]
            current = read_privileges(session, user, host)

        if wanted is not None:
            before["privileges"] = describe_current(current, known)
            actions = diff_privileges(wanted, current, params["append_privs"], mysql_dynamic_grant_option=not mariadb)
            for action in actions:
                session.execute(action_sql(action), args)
                result["privilege_changes"].append(dict(action=action[0], on=action[1], privileges=action[2]))
            changes["privileges"] = bool(actions)

        if module.check_mode:
            if wanted is not None:
                predicted = dict(describe_current(current, known))
                if not params["append_privs"]:
                    predicted = {}
                predicted.update(describe_desired(wanted))
                result["privileges"] = dict((k, v) for k, v in predicted.items() if v != "USAGE")
            else:
                result["privileges"] = describe_current(current, known)
        else:
            result["privileges"] = describe_current(read_privileges(session, user, host), known)
        if wanted is not None:
            after["privileges"] = result["privileges"]
    except pymysql.err.MySQLError as err:
        module.fail_json(msg="MySQL error: %s" % (err,), queries=session.queries, **result)
    session.close()
    module.exit_json(changed=any(changes.values()), queries=session.queries,
                     diff=dict(before=before, after=after), **result)


if __name__ == "__main__":
    main()
