#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: mysql_switchover
short_description: One step of a planned switchover of an asynchronous GTID source, on this server
version_added: 0.1.0
description:
  - The steps playbooks/mysql_switchover.yml runs on each server, in this order. C(state) reads this server's
    replication state (changes nothing). C(fence) makes the old source read-only (C(read_only) and
    C(super_read_only) ON, persisted) so no new write is acknowledged, and returns its final C(gtid_executed).
    C(catch_up) waits until this server executed I(gtid_set). C(promote) refuses unless this server executed
    I(gtid_set), then stops and removes its replication and makes it writable, last. C(unfence) makes a fenced
    source writable again (the way back when the target did not catch up).
  - The read-only settings are changed with C(SET PERSIST), so a restart keeps each server in its new role.
  - MySQL and Percona Server only (GTID auto-positioning); MariaDB is refused.
  - The decision which server is the source and which replica to promote is taken from all servers' states by
    the C(mysql_switchover_plan) filter, not here.
options:
  step:
    description: The step to run on this server.
    type: str
    choices: [state, fence, catch_up, promote, unfence]
    default: state
  gtid_set:
    description: The old source's C(gtid_executed) after C(fence); required by C(catch_up) and C(promote).
    type: str
  timeout:
    description: Seconds C(catch_up) waits.
    type: int
    default: 60
extends_documentation_fragment:
  - dbops.clusters.mysql_login
attributes:
  check_mode:
    support: full
    description: Reads as in a normal run and returns the statements it would run; C(catch_up) does not wait.
  diff_mode:
    support: none
    description: The statements are returned instead.
requirements:
  - PyMySQL
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Read this server's replication state
  dbops.clusters.mysql_switchover:
    step: state
  register: state

- name: Wait until the target executed the fenced source's transactions
  dbops.clusters.mysql_switchover:
    step: catch_up
    gtid_set: "{{ fenced.gtid_executed }}"
    timeout: 60
"""

RETURN = r"""
state:
  description:
    - This server's replication state before the step (C(running), C(server_uuid), C(read_only),
      C(super_read_only), C(gtid_executed), C(replica) or null, C(replicas) (UUIDs of replicas connected to it)).
    - C(running) is false, and nothing else is read, when no server socket exists on the host.
    - C(read) is false, and nothing else is read, when a server runs but PyMySQL is not installed (step C(state)
      only; the MySQL-family roles install it with the server, so such a server was not set up by them).
  returned: always
  type: dict
gtid_executed:
  description: C(gtid_executed) after the step (for C(fence), the set every replica must execute).
  returned: always
  type: str
decision:
  description: What the step did (or would do in check mode), or C(none).
  returned: always
  type: str
reason:
  description: Why.
  returned: always
  type: str
queries:
  description: Statements run (or that would run in check mode).
  returned: always
  type: list
  elements: str
"""

import os

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.dbops.clusters.plugins.module_utils.group_replication import (
    format_gtid_set, gtid_set_text, subtract)
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_connection import (
    HAS_PYMYSQL, LOGIN_ARGUMENT_SPEC, PYMYSQL_IMPORT_ERROR, SOCKET_CANDIDATES, ConnectionError_, Session, connect,
    pymysql)
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_errors import describe
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_flavors import replication_terms
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_switchover import read_state


def set_read_only(session, on):
    # Source read-only: super_read_only implies read_only. Writable: super_read_only OFF before read_only OFF
    # (the server refuses read_only OFF while super_read_only is ON only through the same implication).
    if on:
        session.execute("SET PERSIST read_only = ON")
        session.execute("SET PERSIST super_read_only = ON")
    else:
        session.execute("SET PERSIST super_read_only = OFF")
        session.execute("SET PERSIST read_only = OFF")


def run_step(session, params, terms):
    """(decision, reason, state before) of one step."""
    state = read_state(session, terms)
    step = params["step"]
    if step == "state":
        return "none", "read only", state
    if step == "fence":
        if state["read_only"] and state["super_read_only"]:
            return "none", "already read-only", state
        set_read_only(session, True)
        return "fence", "no new write may be acknowledged here before a replica takes over", state
    if step == "unfence":
        if state["replica"]:
            raise ValueError("refusing to make a replica writable (it replicates from %s)"
                             % state["replica"]["source_host"])
        if not state["read_only"] and not state["super_read_only"]:
            return "none", "already writable", state
        set_read_only(session, False)
        return "unfence", "the switchover did not happen: the source takes writes again", state
    missing = subtract(params["gtid_set"], state["gtid_executed"])
    if step == "catch_up":
        if not missing:
            return "none", "already executed %s" % params["gtid_set"], state
        if session.check_mode:
            return "wait", "would wait until %s are executed" % format_gtid_set(missing), state
        timed_out = session.value("SELECT WAIT_FOR_EXECUTED_GTID_SET(%s, %s)", (params["gtid_set"],
                                                                                params["timeout"]))
        if str(timed_out) != "0":
            after = session.value("SELECT @@GLOBAL.gtid_executed")
            raise ValueError("not caught up after %d s: %s still missing" % (
                params["timeout"], format_gtid_set(subtract(params["gtid_set"], gtid_set_text(after)))))
        return "wait", "executed %s" % format_gtid_set(missing), state
    # promote
    if missing and not session.check_mode:
        raise ValueError("refusing to promote: %s of the old source are not executed here"
                         % format_gtid_set(missing))
    if not state["replica"] and not state["read_only"] and not state["super_read_only"]:
        return "none", "already a writable server without a source", state
    if state["replica"]:
        session.execute(terms["stop"])
        session.execute(terms["reset"])
    set_read_only(session, False)
    return "promote", "executed every transaction of the old source: replication removed, writable last", state


def main():
    argument_spec = dict(
        step=dict(type="str", choices=["state", "fence", "catch_up", "promote", "unfence"], default="state"),
        gtid_set=dict(type="str"),
        timeout=dict(type="int", default=60),
    )
    argument_spec.update(LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True,
                           required_if=[("step", "catch_up", ("gtid_set",)), ("step", "promote", ("gtid_set",))])
    params = module.params
    if params["timeout"] < 0:
        module.fail_json(msg="timeout must not be negative, got %d" % params["timeout"])
    result = dict(changed=False, state={"running": False}, gtid_executed="", decision="none", reason="",
                  queries=[])
    if params["step"] == "state" and not params.get("login_host") and not any(
            os.path.exists(p) for p in ([params["login_unix_socket"]] if params.get("login_unix_socket")
                                        else SOCKET_CANDIDATES)):
        result["reason"] = "no MySQL server socket on this host (not installed or not running)"
        module.exit_json(**result)
    if not HAS_PYMYSQL and params["step"] == "state":
        # The MySQL-family roles install PyMySQL with the server: a server running without it (installed by
        # hand) is not in a topology this collection built, so there is no switchover of ours to protect.
        result.update(state={"running": True, "read": False},
                      reason="a server runs here but PyMySQL is not installed (the role never ran here): not read")
        module.exit_json(**result)
    if not HAS_PYMYSQL:
        module.fail_json(msg=missing_required_lib("PyMySQL"), exception=str(PYMYSQL_IMPORT_ERROR))
    try:
        session = Session(connect(params), check_mode=module.check_mode)
    except ConnectionError_ as err:
        module.fail_json(msg=str(err), **result)
    try:
        version = session.value("SELECT VERSION()")
        if "mariadb" in version.lower():
            module.fail_json(msg="MariaDB %s: this switchover uses MySQL GTID auto-positioning" % version, **result)
        terms = replication_terms("mysql", version)
        try:
            decision, reason, state = run_step(session, params, terms)
        except ValueError as err:
            result["queries"] = session.queries
            module.fail_json(msg="%s: %s" % (params["step"], err), **result)
        result.update(state=state, decision=decision, reason=reason, queries=session.queries,
                      changed=decision not in ("none", "wait") or bool(session.queries),
                      gtid_executed=gtid_set_text(session.value("SELECT @@GLOBAL.gtid_executed")))
    except pymysql.err.MySQLError as err:
        result["queries"] = session.queries
        module.fail_json(msg="%s: %s" % (params["step"], describe(err)), **result)
    finally:
        session.close()
    module.exit_json(**result)


if __name__ == "__main__":
    main()
