#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: proxysql_config
short_description: Declare the rows of ProxySQL's admin tables and publish only what changed
version_added: 0.1.0
description:
  - Compares declared rows of C(mysql_servers), C(mysql_users), C(mysql_query_rules),
    C(mysql_replication_hostgroups), C(mysql_galera_hostgroups), C(mysql_group_replication_hostgroups),
    C(mysql_hostgroup_attributes), C(global_variables), C(proxysql_servers) and C(scheduler) with ProxySQL's
    admin (memory) tables, applies only the difference, then runs C(LOAD ... TO RUNTIME) and
    C(SAVE ... TO DISK) for the admin modules whose tables changed, and for no other.
  - A row names its key columns (the table's primary key) and the columns it pins; columns it leaves out
    keep the server's value. Keys are C(hostgroup_id, hostname, port) for C(mysql_servers),
    C(username, backend) for C(mysql_users), C(rule_id) for C(mysql_query_rules), C(writer_hostgroup) for the
    three hostgroup tables, C(hostgroup_id) for C(mysql_hostgroup_attributes), C(hostname, port) for
    C(proxysql_servers), C(id) for C(scheduler).
  - A clear password in C(mysql_users) is compared with what ProxySQL stores, which is the clear text or,
    after C(SAVE MYSQL USERS FROM RUNTIME), its hash (C(mysql_native_password) C(*SHA1(SHA1())) or a
    C(caching_sha2_password) SHA-256 crypt); so a second run reports no change. Passwords are sent as query
    parameters and never returned; C(queries) shows placeholders only.
  - Users are judged on C(mysql_users), never on C(runtime_mysql_users), which holds each user twice
    (frontend and backend rows).
  - C(LOAD MYSQL SERVERS TO RUNTIME) keeps the rows the proxy's monitors placed in the runtime for servers still
    declared (the writer of a Group Replication group in its writer hostgroup); they are put in C(mysql_servers)
    for the load and taken out before C(SAVE MYSQL SERVERS TO DISK), so the load cuts no connection in use on
    them. Not in the hostgroups of C(mysql_galera_hostgroups), whose monitor places the members again in the load
    itself.
  - With I(prune), rows of the named tables that are not declared are deleted. C(global_variables) can
    never be pruned.
  - With I(save_to_disk), the memory tables are also compared with their disk copies (C(disk.<table>)), and
    rows an earlier run or a hand edit left in memory without loading and saving them are published too,
    so a run that failed half-way is completed by the next one.
attributes:
  check_mode:
    support: full
    description: Can run in check_mode and return changed status prediction without modifying target.
    details: Reads the tables and returns the statements it would run, without running them.
  diff_mode:
    support: full
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    details: Before/after of each changed row, passwords redacted.
extends_documentation_fragment:
  - dbops.clusters.proxysql_login
options:
  mysql_servers:
    description: Rows of C(mysql_servers).
    type: list
    elements: dict
  mysql_users:
    description: Rows of C(mysql_users); C(password) may be clear text or a hash.
    type: list
    elements: dict
  mysql_query_rules:
    description: Rows of C(mysql_query_rules).
    type: list
    elements: dict
  mysql_replication_hostgroups:
    description: Rows of C(mysql_replication_hostgroups) (async source/replicas told apart by C(read_only)).
    type: list
    elements: dict
  mysql_galera_hostgroups:
    description: Rows of C(mysql_galera_hostgroups).
    type: list
    elements: dict
  mysql_group_replication_hostgroups:
    description: Rows of C(mysql_group_replication_hostgroups).
    type: list
    elements: dict
  mysql_hostgroup_attributes:
    description: Rows of C(mysql_hostgroup_attributes).
    type: list
    elements: dict
  global_variables:
    description: "Variables to pin, C({name: value}); names start with C(mysql-) or C(admin-)."
    type: dict
  proxysql_servers:
    description: Rows of C(proxysql_servers) (ProxySQL Cluster peers).
    type: list
    elements: dict
  scheduler:
    description: Rows of C(scheduler).
    type: list
    elements: dict
  prune:
    description: Tables whose rows that are not declared are deleted.
    type: list
    elements: str
    default: []
  save_to_disk:
    description: Run C(SAVE ... TO DISK) after C(LOAD ... TO RUNTIME) for each changed admin module.
    type: bool
    default: true
requirements:
  - PyMySQL (python3-pymysql on Debian)
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: A weighted single writer with ordered fallbacks and a read/write split
  dbops.clusters.proxysql_config:
    login_config_file: /root/.proxysql-admin.cnf
    mysql_servers:
      - {hostgroup_id: 10, hostname: 10.0.0.11, weight: 1000000000}
      - {hostgroup_id: 10, hostname: 10.0.0.12, weight: 1000000}
      - {hostgroup_id: 20, hostname: 10.0.0.12, weight: 1000}
    mysql_users:
      - {username: app, password: "{{ app_password }}", default_hostgroup: 10, transaction_persistent: 1}
    mysql_query_rules:
      - {rule_id: 100, active: 1, match_digest: '^SELECT .* FOR (UPDATE|SHARE)', destination_hostgroup: 10, apply: 1}
      - {rule_id: 110, active: 1, match_digest: '^SELECT ', destination_hostgroup: 20, apply: 1}
    global_variables:
      mysql-monitor_username: monitor
      mysql-monitor_password: "{{ monitor_password }}"
    prune: [mysql_servers, mysql_query_rules]
"""

RETURN = r"""
queries:
  description: Statements run (or, in check mode, that would run), with placeholders instead of values.
  returned: always
  type: list
  elements: str
publish:
  description: LOAD/SAVE commands run for the changed admin modules.
  returned: always
  type: list
  elements: str
changes:
  description: Rows inserted, updated and deleted per table.
  returned: always
  type: dict
  sample: {mysql_servers: {insert: 1, update: 0, delete: 2}}
decision:
  description: C(unchanged) or C(applied) (C(planned) in check mode).
  returned: always
  type: str
reason:
  description: Why, in words.
  returned: always
  type: str
login:
  description: >-
    C(given) when the credentials given were accepted; C(fallback password), C(fallback address) or
    C(fallback address and password) when a fallback was.
  returned: when connected
  type: str
"""

import traceback

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.dbops.clusters.plugins.module_utils import proxysql_config as planner
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_connection import (
    HAS_PYMYSQL, PYMYSQL_IMPORT_ERROR, ConnectionError_)
from ansible_collections.dbops.clusters.plugins.module_utils.proxysql_admin import (
    LOAD_SERVERS, LOGIN_SPEC, admin_connection, fetch_rows, load_keeping_placements, proxy_placed_rows)

try:
    import pymysql
except ImportError:  # pragma: no cover - reported through HAS_PYMYSQL
    pymysql = None

ROW_TABLES = [table for table in planner.TABLES if table != "global_variables"]


def main():
    argument_spec = dict(
        LOGIN_SPEC,
        global_variables=dict(type="dict"),
        prune=dict(type="list", elements="str", default=[]),
        save_to_disk=dict(type="bool", default=True),
    )
    for table in ROW_TABLES:
        argument_spec[table] = dict(type="list", elements="dict")
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    if not HAS_PYMYSQL:
        module.fail_json(msg=missing_required_lib("PyMySQL"), exception=PYMYSQL_IMPORT_ERROR)

    declaration = {}
    for table in ROW_TABLES:
        if module.params[table] is not None:
            declaration[table] = module.params[table]
    for user in declaration.get("mysql_users", []):
        if user.get("password"):
            module.no_log_values.add(str(user["password"]))
    if module.params["global_variables"] is not None:
        declaration["global_variables"] = [
            {"variable_name": name, "variable_value": value}
            for name, value in sorted(module.params["global_variables"].items())]
        for name, value in module.params["global_variables"].items():
            if name in planner.SECRET_VARIABLES and value:
                module.no_log_values.add(str(value))

    result = dict(changed=False, queries=[], publish=[], changes={}, decision="unchanged", reason="")
    try:
        connection, result["login"] = admin_connection(module.params)
    except ConnectionError_ as err:
        module.fail_json(msg=str(err), **result)
    try:
        current = dict((table, fetch_rows(connection, table)) for table in declaration)
        saved = dict((table, fetch_rows(connection, "disk." + table)) for table in declaration) \
            if module.params["save_to_disk"] else {}
        the_plan = planner.plan(declaration, current, prune_tables=module.params["prune"],
                                save=module.params["save_to_disk"], saved_tables=saved)
    except planner.PlanError as err:
        module.fail_json(msg=str(err), **result)
    except pymysql.err.MySQLError as err:
        module.fail_json(msg="reading ProxySQL's admin tables failed: %s" % err, **result)

    result["queries"] = [sql for sql, dummy in the_plan["statements"]]
    result["publish"] = the_plan["publish"]
    result["changes"] = planner.summary(the_plan)
    if not the_plan["publish"]:
        result["reason"] = "every declared row already matches the admin tables, and memory matches disk"
        module.exit_json(**result)
    result["changed"] = True
    result["diff"] = the_plan["diff"]
    result["reason"] = "%d statement(s) on %s; publishing %s" % (
        len(the_plan["statements"]), ", ".join(sorted(the_plan["changes"])) or "no table",
        ", ".join(the_plan["modules"]))
    if the_plan["unpublished"]:
        result["reason"] += " (memory differed from disk for %s: left unpublished earlier)" % (
            ", ".join(the_plan["unpublished"]))
    if module.check_mode:
        result["decision"] = "planned"
        module.exit_json(**result)
    try:
        with connection.cursor() as cursor:
            for sql, args in the_plan["statements"]:
                cursor.execute(sql, args)
            for command in the_plan["publish"]:
                if command != LOAD_SERVERS:
                    cursor.execute(command)
                    continue
                # The rows the proxy's monitors placed (a Group Replication writer) stay through the load: without
                # them in mysql_servers it would cut the connections in use on them (placed_rows says why). They
                # leave mysql_servers before SAVE MYSQL SERVERS TO DISK.
                memory = fetch_rows(connection, "mysql_servers")
                placed = proxy_placed_rows(connection, memory, fetch_rows(connection, "runtime_mysql_servers"))
                for sql, args in load_keeping_placements(placed, list(memory[0]) if memory else []):
                    cursor.execute(sql, args or None)
                    if sql != LOAD_SERVERS:
                        result["queries"].append(sql)
    except pymysql.err.MySQLError as err:
        module.fail_json(msg="applying the change failed: %s" % err, exception=traceback.format_exc(), **result)
    finally:
        connection.close()
    result["decision"] = "applied"
    module.exit_json(**result)


if __name__ == "__main__":
    main()
