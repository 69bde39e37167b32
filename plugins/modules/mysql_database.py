#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: mysql_database
short_description: Declare a MySQL, Percona Server or MariaDB database and its default character set and collation
version_added: 0.1.0
description:
  - Creates or drops one database, and alters its default character set and collation when they differ from
    C(information_schema.SCHEMATA), so a second run reports no change.
  - The database name is validated (letters, digits, C(_), C($), C(-); at most 64 characters) and quoted
    with backticks; the character set and collation must exist on the server.
  - Never drops the system schemas (C(mysql), C(information_schema), C(performance_schema), C(sys)).
  - Altering the defaults changes what new tables get; existing tables keep their own character set.
options:
  name:
    description: Name of the database.
    type: str
    required: true
    aliases: [db]
  state:
    description: C(present) creates the database or aligns its defaults, C(absent) drops it with its tables.
    type: str
    choices: [present, absent]
    default: present
  encoding:
    description: Default character set. C(utf8) means C(utf8mb3), as on the server.
    type: str
    default: utf8mb4
  collation:
    description:
      - Default collation; it must belong to I(encoding). When omitted, the collation of an existing database
        is kept as long as the character set matches, and a new database gets the server's default for
        I(encoding).
    type: str
extends_documentation_fragment:
  - dbops.clusters.mysql_login
attributes:
  check_mode:
    support: full
    description: Reads the server and returns the statements it would run, without running them.
  diff_mode:
    support: full
    description: Returns whether the database exists and its character set and collation, before and after.
requirements:
  - PyMySQL
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Application database
  dbops.clusters.mysql_database:
    name: app
    encoding: utf8mb4
    collation: utf8mb4_0900_ai_ci

- name: Drop the scratch database
  dbops.clusters.mysql_database:
    name: scratch
    state: absent
"""

RETURN = r"""
name:
  description: Name of the database.
  returned: always
  type: str
  sample: app
decision:
  description: C(create), C(alter), C(drop) or C(none).
  returned: always
  type: str
  sample: alter
reason:
  description: Why the decision was taken.
  returned: always
  type: str
  sample: "character set latin1 differs from utf8mb4"
queries:
  description: Statements run (or that would run in check mode).
  returned: always
  type: list
  elements: str
  sample: ["ALTER DATABASE `app` CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci"]
encoding:
  description: Default character set after the change (predicted in check mode); null when the database is absent.
  returned: always
  type: str
  sample: utf8mb4
collation:
  description: Default collation after the change (predicted in check mode); null when absent or not predictable.
  returned: always
  type: str
  sample: utf8mb4_0900_ai_ci
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_connection import (
    HAS_PYMYSQL, LOGIN_ARGUMENT_SPEC, PYMYSQL_IMPORT_ERROR, ConnectionError_, Session, connect, pymysql)
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_privileges import (
    SYSTEM_SCHEMAS, PrivilegeError, database_sql, quote_identifier, validate_name)


def read_schema(session, name):
    rows = session.fetch("SELECT DEFAULT_CHARACTER_SET_NAME AS charset, DEFAULT_COLLATION_NAME AS collation "
                         "FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = %s", (name,))
    return rows[0] if rows else None


def resolve_charset(session, encoding, collation):
    """(encoding as the server names it, its default collation); ValueError for an unknown or mismatched name."""
    default = session.value("SELECT DEFAULT_COLLATE_NAME FROM information_schema.CHARACTER_SETS "
                            "WHERE CHARACTER_SET_NAME = %s", (encoding,))
    if default is None and encoding.lower() == "utf8":
        encoding = "utf8mb3"
        default = session.value("SELECT DEFAULT_COLLATE_NAME FROM information_schema.CHARACTER_SETS "
                                "WHERE CHARACTER_SET_NAME = %s", (encoding,))
    if default is None:
        raise ValueError("character set %s is not known to the server" % encoding)
    if collation:
        owner = session.value("SELECT CHARACTER_SET_NAME FROM information_schema.COLLATIONS "
                              "WHERE COLLATION_NAME = %s", (collation,))
        if owner is None:
            raise ValueError("collation %s is not known to the server" % collation)
        if owner.lower() != encoding.lower():
            raise ValueError("collation %s belongs to character set %s, not %s" % (collation, owner, encoding))
    return encoding, default


def main():
    argument_spec = dict(
        name=dict(type="str", required=True, aliases=["db"]),
        state=dict(type="str", choices=["present", "absent"], default="present"),
        encoding=dict(type="str", default="utf8mb4"),
        collation=dict(type="str"),
    )
    argument_spec.update(LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    if not HAS_PYMYSQL:
        module.fail_json(msg=missing_required_lib("PyMySQL"), exception=str(PYMYSQL_IMPORT_ERROR))
    params = module.params
    name, encoding, collation = params["name"], params["encoding"], params["collation"]
    result = dict(name=name, decision="none", reason="", encoding=None, collation=None)
    try:
        quote_identifier(name, "database")
        validate_name(encoding, "character set")
        if collation:
            validate_name(collation, "collation")
    except PrivilegeError as err:
        module.fail_json(msg=str(err), **result)
    if params["state"] == "absent" and name.lower() in SYSTEM_SCHEMAS:
        module.fail_json(msg="refusing to drop the system schema %s" % name, **result)
    try:
        session = Session(connect(params), check_mode=module.check_mode)
    except ConnectionError_ as err:
        module.fail_json(msg=str(err), **result)

    try:
        current = read_schema(session, name)
        before = dict(exists=current is not None)
        if current:
            before.update(encoding=current["charset"], collation=current["collation"])
        if params["state"] == "absent":
            if current:
                session.execute(database_sql("drop", name))
                result.update(decision="drop", reason="the database exists")
            else:
                result.update(reason="the database does not exist")
            after = dict(exists=False)
        else:
            try:
                encoding, default_collation = resolve_charset(session, encoding, collation)
            except ValueError as err:
                module.fail_json(msg=str(err), queries=session.queries, **result)
            if current is None:
                session.execute(database_sql("create", name, encoding, collation))
                result.update(decision="create", reason="the database does not exist",
                              encoding=encoding, collation=collation or default_collation)
            else:
                reasons = []
                if current["charset"].lower() != encoding.lower():
                    reasons.append("character set %s differs from %s" % (current["charset"], encoding))
                if collation and current["collation"].lower() != collation.lower():
                    reasons.append("collation %s differs from %s" % (current["collation"], collation))
                if reasons:
                    session.execute(database_sql("alter", name, encoding, collation))
                    result.update(decision="alter", reason="; ".join(reasons), encoding=encoding,
                                  collation=collation or default_collation)
                else:
                    result.update(reason="character set %s and collation %s as requested"
                                  % (current["charset"], current["collation"]),
                                  encoding=current["charset"], collation=current["collation"])
            if result["decision"] != "none" and not module.check_mode:
                now = read_schema(session, name)
                result.update(encoding=now["charset"], collation=now["collation"])
            after = dict(exists=True, encoding=result["encoding"], collation=result["collation"])
    except pymysql.err.MySQLError as err:
        module.fail_json(msg="MySQL error: %s" % (err,), queries=session.queries, **result)
    session.close()
    module.exit_json(changed=result["decision"] != "none", queries=session.queries,
                     diff=dict(before=before, after=after), **result)


if __name__ == "__main__":
    main()
