#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: mysql_secure_baseline
short_description: Remove the insecure defaults of a MySQL, Percona Server or MariaDB server and check root's login
version_added: 0.1.0
description:
  - Does what C(mysql_secure_installation) does, declaratively and idempotently.
  - Drops anonymous accounts (empty user name) and root accounts whose host is not local (anything but
    C(localhost), C(127.0.0.1) and C(::1)).
  - Drops the C(test) database and deletes the rows of C(mysql.db) that grant on C(test) or C(test\_%) (any
    user, including rows left without an account, which match every user name), then flushes privileges.
  - With I(root_socket_only), checks that C(root@localhost) can log in only through the socket (C(auth_socket)
    on MySQL and Percona Server, C(unix_socket) on MariaDB, where a password method marked C(invalid) beside
    it is accepted). The module does not change root's authentication; it reports it, and fails only with
    I(enforce).
  - Refuses to drop the account it is connected as.
options:
  root_socket_only:
    description: Check that C(root@localhost) authenticates by the socket only.
    type: bool
    default: true
  enforce:
    description:
      - Fail, before changing anything, when I(root_socket_only) finds that root can log in otherwise.
        Without it the finding is returned in C(root_socket) and as a warning.
    type: bool
    default: false
extends_documentation_fragment:
  - dbops.clusters.mysql_login
attributes:
  check_mode:
    support: full
    description: Reads the server and returns what it would remove and the statements, without running them.
  diff_mode:
    support: none
    description: C(removed) lists what is (or would be) removed.
requirements:
  - PyMySQL
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Secure the fresh server; root must use the socket
  dbops.clusters.mysql_secure_baseline:
    enforce: true
"""

RETURN = r"""
removed:
  description: What was (or would be) removed, each with C(kind), C(name) and C(reason).
  returned: always
  type: list
  elements: dict
  sample: [{kind: anonymous_account, name: "''@localhost", reason: "anonymous accounts let anyone log in"}]
queries:
  description: Statements run (or that would run in check mode), with placeholders.
  returned: always
  type: list
  elements: str
  sample: ["DROP USER %s@%s", "DROP DATABASE `test`"]
flavor:
  description: C(mariadb) or C(mysql) (MySQL and Percona Server), from the server's version.
  returned: always
  type: str
  sample: mysql
root_socket:
  description:
    - The authentication of C(root@localhost) (null when I(root_socket_only) is false); C(socket_only) says
      whether it logs in by the socket only, C(methods) lists its plugins, C(message) explains.
  returned: always
  type: dict
  sample: {account: root@localhost, expected_plugin: auth_socket, methods: [auth_socket], socket_only: true,
           message: "root@localhost authenticates by auth_socket only"}
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_connection import (
    HAS_PYMYSQL, LOGIN_ARGUMENT_SPEC, PYMYSQL_IMPORT_ERROR, ConnectionError_, Session, connect, pymysql)
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_privileges import (
    auth_methods, database_sql, is_local_host, socket_only)

TEST_GRANT_DBS = ("test", "test\\_%")


def account_name(user, host):
    return "'%s'@%s" % (user, host) if not user else "%s@%s" % (user, host)


def test_grant_reason(row, accounts):
    who = "any user name" if not row["User"] else row["User"]
    what = ("the test database" if row["Db"] == "test"
            else "every database whose name starts with test_, which anyone so granted may create")
    orphan = "" if (row["User"], row["Host"]) in accounts else " (a row left without its account)"
    return "gives %s from %s access to %s%s" % (who, row["Host"], what, orphan)


def root_socket_status(session, mariadb):
    expected = "unix_socket" if mariadb else "auth_socket"
    status = dict(account="root@localhost", expected_plugin=expected, methods=[], socket_only=False)
    exists = session.value("SELECT COUNT(*) FROM mysql.user WHERE User = 'root' AND Host = 'localhost'")
    if not exists:
        status["message"] = "root@localhost does not exist"
        return status
    row = session.fetch("SHOW CREATE USER %s@%s", ("root", "localhost"))[0]
    methods = auth_methods(list(row.values())[0])
    status["methods"] = [plugin for plugin, dummy in methods]
    status["socket_only"] = socket_only(methods, expected)
    if status["socket_only"]:
        status["message"] = "root@localhost authenticates by %s only" % expected
    else:
        status["message"] = ("root@localhost authenticates by %s, not by %s only: make it "
                             "IDENTIFIED %s %s so that only the operating system's root logs in as root"
                             % (" or ".join(status["methods"]) or "nothing", expected,
                                "VIA" if mariadb else "WITH", expected))
    return status


def main():
    argument_spec = dict(
        root_socket_only=dict(type="bool", default=True),
        enforce=dict(type="bool", default=False),
    )
    argument_spec.update(LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    if not HAS_PYMYSQL:
        module.fail_json(msg=missing_required_lib("PyMySQL"), exception=str(PYMYSQL_IMPORT_ERROR))
    try:
        session = Session(connect(module.params), check_mode=module.check_mode)
    except ConnectionError_ as err:
        module.fail_json(msg=str(err))

    removed = []
    result = dict(removed=removed, root_socket=None, flavor=None)
    try:
        mariadb = "mariadb" in session.value("SELECT VERSION()").lower()
        result["flavor"] = "mariadb" if mariadb else "mysql"
        if module.params["root_socket_only"]:
            result["root_socket"] = root_socket_status(session, mariadb)
            if not result["root_socket"]["socket_only"]:
                if module.params["enforce"]:
                    module.fail_json(msg=result["root_socket"]["message"], queries=session.queries, **result)
                module.warn(result["root_socket"]["message"])

        me = session.value("SELECT CURRENT_USER()") or ""
        me_user, dummy, me_host = me.rpartition("@")
        drop = []
        for row in session.fetch("SELECT User, Host FROM mysql.user WHERE User = '' ORDER BY Host"):
            drop.append((row["User"], row["Host"], "anonymous_account",
                         "anonymous accounts let anyone log in without an account of their own"))
        for row in session.fetch("SELECT User, Host FROM mysql.user WHERE User = 'root' ORDER BY Host"):
            if not is_local_host(row["Host"]):
                drop.append((row["User"], row["Host"], "remote_root",
                             "root may log in only from the database host itself (host %s is not local)" % row["Host"]))
        for user, host, dummy, dummy in drop:
            if (user, host) == (me_user, me_host):
                module.fail_json(msg="refusing to drop %s: this module is connected as that account; connect as "
                                 "root over the socket instead" % account_name(user, host),
                                 queries=session.queries, **result)
        dropped = set()
        for user, host, kind, reason in drop:
            session.execute("DROP USER %s@%s", (user, host))
            dropped.add((user, host))
            removed.append(dict(kind=kind, name=account_name(user, host), reason=reason))

        if session.value("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'test'"):
            session.execute(database_sql("drop", "test"))
            removed.append(dict(kind="test_database", name="test",
                                reason="a database for testing only, which old installs granted to every account"))

        grants = session.fetch("SELECT User, Host, Db FROM mysql.db WHERE Db IN (%s, %s) ORDER BY Db, User, Host",
                               TEST_GRANT_DBS)
        deleted = False
        session_accounts = set((row["User"], row["Host"]) for row in session.fetch("SELECT User, Host FROM mysql.user"))
        for row in grants:
            if (row["User"], row["Host"]) in dropped:
                continue  # DROP USER removed the account's grants with it
            session.execute("DELETE FROM mysql.db WHERE Db = %s AND User = %s AND Host = %s",
                            (row["Db"], row["User"], row["Host"]))
            deleted = True
            removed.append(dict(kind="test_grant", name="%s on %s" % (account_name(row["User"], row["Host"]), row["Db"]),
                                reason=test_grant_reason(row, session_accounts)))
        if deleted:
            session.execute("FLUSH PRIVILEGES")
    except pymysql.err.MySQLError as err:
        module.fail_json(msg="MySQL error: %s" % (err,), queries=session.queries, **result)
    session.close()
    module.exit_json(changed=bool(removed), queries=session.queries, **result)


if __name__ == "__main__":
    main()
