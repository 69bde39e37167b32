#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: mysql_backup
short_description: One step of a MySQL physical backup (the clone plugin's local clone) or of a restore, on this server
version_added: 0.1.0
description:
  - C(read) reads what a backup or a restore decides on (changes nothing) - C(gtid_executed), C(gtid_mode), the
    binary logs, the schemas that are not the server's own, whether it replicates or has replicas, and, with
    I(restore_force) given, why it may not receive a restore (C(restore_refusal)).
  - C(clone) copies the running server into I(dest) with C(CLONE LOCAL DATA DIRECTORY) - a consistent, ready-to-start
    data directory (InnoDB pages and redo applied by the server itself; no prepare step), taken under a backup lock
    that blocks DDL but not commits. Installs the clone plugin first when it is missing on a writable server (the
    percona_server role loads it at start everywhere; a read-only replica refuses INSTALL PLUGIN). I(dest) must not
    exist; its parent must be writable by the server's user.
  - C(forget_replication) stops and removes any replication channel a restored server inherited from the copied
    replica (a clone carries the channel's settings), so the restored server never fetches transactions past a
    restore target by itself.
  - MySQL and Percona Server 8.0.17 and later (the clone plugin); MariaDB is refused.
options:
  step:
    description: The step to run on this server.
    type: str
    choices: [read, clone, forget_replication]
    default: read
  dest:
    description: Data directory the clone creates (C(clone)); an absolute path that does not exist yet.
    type: path
  restore_force:
    description:
      - With C(read), also decide whether this server may receive a restore. A server holding schemas of its own
        may only with I(restore_force=true); a server with replicas never; one that replicates only with
        I(restore_as_replica=true).
    type: bool
  restore_as_replica:
    description: With I(restore_force), the restore re-seeds this server as a replica (it may replicate now).
    type: bool
    default: false
  restore_resuming:
    description:
      - With I(restore_force), an earlier restore onto this server stopped half way. The server may be down or hold
        a partial copy, and only replicas following it refuse the restore.
    type: bool
    default: false
extends_documentation_fragment:
  - dbops.clusters.mysql_login
attributes:
  check_mode:
    support: full
    description: C(read) runs as usual; C(clone) and C(forget_replication) say what they would do and change nothing.
  diff_mode:
    support: none
    description: The statements are returned in I(queries) instead.
requirements:
  - PyMySQL
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Clone the replica into a staging directory
  dbops.clusters.mysql_backup:
    step: clone
    dest: /var/lib/mysql-backup-stage/20261130T120000Z
  register: clone

- name: Decide whether this host may receive a restore
  dbops.clusters.mysql_backup:
    step: read
    restore_force: false
  register: target
"""

RETURN = r"""
state:
  description:
    - The server before the step. C(running) (false, and nothing else, when no server socket exists), C(server_uuid),
      C(gtid_mode), C(gtid_executed), C(read_only), C(binary_logs) (C(name), C(size) each, oldest first),
      C(databases) (schemas other than mysql, sys, information_schema and performance_schema), C(replicating)
      (a replication channel is configured), C(replicas) (UUIDs of connected replicas), C(clone_plugin) (its
      status, or C(absent)).
  returned: always
  type: dict
restore_refusal:
  description: With I(restore_force) given, why this server may not receive a restore; empty when it may.
  returned: when I(restore_force) is given
  type: str
clone:
  description:
    - For C(clone) - C(dest), C(gtid_executed_before) and C(gtid_executed_after) (the copy's position lies between
      them), C(seconds), C(plugin_installed), and C(status) (performance_schema.clone_status's state and error).
  returned: when I(step=clone)
  type: dict
gtid_executed:
  description: C(gtid_executed) after the step.
  returned: always
  type: str
queries:
  description: The statements run (or, in check mode, that would run).
  returned: always
  type: list
  elements: str
reason:
  description: What the step did, or would do, and why.
  returned: always
  type: str
"""

import os

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.dbops.clusters.plugins.module_utils.group_replication import gtid_set_text
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_backup import clone_local, restore_refusal
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_connection import (
    HAS_PYMYSQL, LOGIN_ARGUMENT_SPEC, PYMYSQL_IMPORT_ERROR, SOCKET_CANDIDATES, ConnectionError_, Session, connect,
    pymysql)
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_errors import describe

_SYSTEM_SCHEMAS = ("mysql", "sys", "information_schema", "performance_schema")


def read_state(session):
    variables = session.variables(["server_uuid", "gtid_mode", "gtid_executed", "read_only", "version_comment"])
    if "mariadb" in str(variables.get("version_comment", "")).lower():
        raise ValueError("MariaDB has no clone plugin: back up MariaDB with mariadb-backup")
    logs = [{"name": row["Log_name"], "size": int(row["File_size"])} for row in session.fetch("SHOW BINARY LOGS")]
    schemata = session.fetch("SELECT schema_name AS name FROM information_schema.schemata")
    databases = sorted(row["name"] for row in schemata if row["name"] not in _SYSTEM_SCHEMAS)
    plugin = session.value("SELECT plugin_status FROM information_schema.plugins WHERE plugin_name = 'clone'")
    return {"running": True, "server_uuid": variables.get("server_uuid"), "gtid_mode": variables.get("gtid_mode"),
            "gtid_executed": gtid_set_text(variables.get("gtid_executed")),
            "read_only": str(variables.get("read_only")).upper() in ("1", "ON"),
            "binary_logs": logs, "databases": databases,
            "replicating": bool(session.fetch("SHOW REPLICA STATUS")),
            "replicas": sorted(row.get("Replica_UUID") or "" for row in session.fetch("SHOW REPLICAS")),
            "clone_plugin": plugin or "absent"}


def clone(module, session, state):
    dest = module.params["dest"]
    if not dest or not os.path.isabs(dest):
        module.fail_json(msg="step=clone needs dest, an absolute path", state=state)
    if os.path.exists(dest):
        module.fail_json(msg="%s exists: a clone creates its directory (remove it, or choose another)" % dest,
                         state=state)
    if not os.path.isdir(os.path.dirname(dest.rstrip("/"))):
        module.fail_json(msg="the parent of %s does not exist" % dest, state=state)
    installed = state["clone_plugin"] == "absent"
    if installed and state["read_only"]:
        module.fail_json(msg="the clone plugin is not loaded, and this server is read-only (a replica refuses INSTALL "
                             "PLUGIN): converge it with the percona_server role, which loads the plugin at start "
                             "(the restart it records rolls one server at a time)", state=state)
    if installed:
        session.execute("INSTALL PLUGIN clone SONAME 'mysql_clone.so'")
    elif state["clone_plugin"] != "ACTIVE":
        module.fail_json(msg="the clone plugin is %s, not ACTIVE" % state["clone_plugin"], state=state)
    result = {"dest": dest, "plugin_installed": installed, "gtid_executed_before": state["gtid_executed"]}
    if module.check_mode:
        return result
    result.update(clone_local(session, dest))
    return result


def main():
    argument_spec = dict(step=dict(type="str", choices=["read", "clone", "forget_replication"], default="read"),
                         dest=dict(type="path"), restore_force=dict(type="bool"),
                         restore_as_replica=dict(type="bool", default=False),
                         restore_resuming=dict(type="bool", default=False))
    argument_spec.update(LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    params = module.params
    if params["step"] == "read" and not params.get("login_host") and not any(
            os.path.exists(p) for p in ([params["login_unix_socket"]] if params.get("login_unix_socket")
                                        else SOCKET_CANDIDATES)):
        result = {"changed": False, "state": {"running": False}, "gtid_executed": "", "queries": [],
                  "reason": "no server socket on this host: no server runs"}
        if params["restore_force"] is not None:
            result["restore_refusal"] = restore_refusal({"running": False}, resuming=params["restore_resuming"])
        module.exit_json(**result)
    if not HAS_PYMYSQL:
        module.fail_json(msg=missing_required_lib("PyMySQL"), exception=str(PYMYSQL_IMPORT_ERROR))
    try:
        session = Session(connect(params), check_mode=module.check_mode)
    except ConnectionError_ as err:
        module.fail_json(msg=str(err))
    result = {"changed": False}
    try:
        state = read_state(session)
        result["state"] = state
        if params["step"] == "read":
            result["reason"] = "read only"
            if params["restore_force"] is not None:
                result["restore_refusal"] = restore_refusal(state, params["restore_force"],
                                                            params["restore_as_replica"], params["restore_resuming"])
        elif params["step"] == "clone":
            result["clone"] = clone(module, session, state)
            result["changed"] = True
            result["reason"] = "%s a consistent copy into %s (CLONE LOCAL)" % (
                "would clone" if module.check_mode else "cloned", params["dest"])
        elif state["replicating"]:
            session.execute("STOP REPLICA")
            session.execute("RESET REPLICA ALL")
            result["changed"] = True
            result["reason"] = "removed the replication channel the copy carried (it would fetch past the target)"
        else:
            result["reason"] = "no replication channel configured"
        result["gtid_executed"] = gtid_set_text(session.value("SELECT @@GLOBAL.gtid_executed"))
    except ValueError as err:
        module.fail_json(msg=str(err), **result)
    except pymysql.err.MySQLError as err:
        module.fail_json(msg="%s failed: %s" % (params["step"], describe(err)), queries=session.queries, **result)
    finally:
        session.close()
    result["queries"] = session.queries
    module.exit_json(**result)


if __name__ == "__main__":
    main()
