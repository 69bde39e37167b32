#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: proxysql_drain
short_description: Drain one backend of a ProxySQL proxy before a planned stop, and put it back after
version_added: 0.1.0
description:
  - I(state=drained) gives every row of the backend in C(mysql_servers) weight 0 and loads the servers to runtime.
    The proxy opens no new connection to it, and its Galera monitor makes the heaviest other member the writer.
    The module then waits until no connection of the proxy's pool to the backend is in use
    (C(stats_mysql_connection_pool.ConnUsed)), at most I(drain_timeout) seconds, and says how many were still
    in use. Sessions ProxySQL cannot move (in a transaction, after a statement that disables multiplexing) finish
    first or are the ones still in use at the timeout.
  - Rows the proxy's monitors placed in the runtime (the writer of a Group Replication group in its writer
    hostgroup) are kept through each load; they are put in C(mysql_servers) for it and taken out after, so the
    load cuts no connection in use on them (ProxySQL would run the statement in flight again, and one that had
    committed would run twice). Not in the hostgroups of C(mysql_galera_hostgroups), whose monitor places the
    members again in the load itself.
  - A status of C(OFFLINE_SOFT) would not hold, since ProxySQL 2.7's Galera monitor puts a healthy member back
    C(ONLINE) at its next check.
  - I(state=online) puts back the weights saved in C(disk.mysql_servers) (what the proxysql role declared and
    saved) and waits until the runtime has the backend C(ONLINE) in a hostgroup. Nothing is saved to disk in
    either state, so a proxy that restarts meanwhile comes back with the declared weights.
  - Before it puts the weights back, I(state=online) waits (at most I(drain_timeout) seconds and 10 at least,
    then fails with the backend still drained) until this proxy's monitor has pinged the backend successfully.
    Put back earlier, a backend just restarted is still judged by the pings that failed while it was down, and
    ProxySQL's next ping round shuns it and kills every connection to it, the ones in use too; ProxySQL then runs
    each statement in flight again on another server, so one that had committed runs twice.
  - Before it puts the weights back, I(state=online) closes the idle connections of the proxy's pool to the
    backend in the hostgroups where it is drained (one load with its rows C(OFFLINE_HARD), then the put-back,
    which sets the saved status again). They were opened before the drain and, after a restart, are dead;
    ProxySQL hands a pooled connection to a new transaction without checking it, and the transaction fails with
    2013. Not when a connection there is still in use (it outlived the drain, so the backend was not restarted
    since and its idle connections are alive).
  - Refused, before any change, for a backend that is not in C(mysql_servers) and for a drain that would leave a
    hostgroup of the backend, declared or in the runtime, without another server of weight above 0 (the writer of
    an async or Group Replication topology, which its monitor alone put in the writer hostgroup), unless
    I(hand_over).
extends_documentation_fragment:
  - dbops.clusters.proxysql_login
attributes:
  check_mode:
    support: full
    description: Can run in check_mode and return changed status prediction without modifying target.
    details: Reads the tables and returns the statements it would run; waits for nothing.
  diff_mode:
    support: full
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    details: The backend's weights before and after.
options:
  hostname:
    description: The backend's address as C(mysql_servers) names it.
    type: str
    required: true
  port:
    description: The backend's port.
    type: int
    default: 3306
  state:
    description: C(drained) before the backend stops, C(online) once it serves again.
    type: str
    choices: [drained, online]
    default: drained
  drain_timeout:
    description: Seconds to wait for the backend's connections to end (C(drained)), or for a successful ping of it
      by the monitor (10 at least) and then for it to be C(ONLINE) again (C(online)).
    type: int
    default: 30
  hand_over:
    description:
      - With I(state=drained), accept draining the only server of a runtime hostgroup, the writer a monitor
        alone placed, because the caller moves the writer role right after (a Group Replication primary switch).
      - Until the monitor places the new writer, the proxy holds that hostgroup's new sessions (up to
        C(mysql-connect_timeout_server_max), 10 s by default) instead of sending them to a server about to turn
        read-only. A hostgroup declared in C(mysql_servers) with no other server is still refused.
    type: bool
    default: false
  shared_only:
    description:
      - With I(state=drained), drain the backend only from the hostgroups other servers of weight above 0 also
        serve; a hostgroup it serves alone (declared, or placed by a monitor in the runtime, as an async source in
        the writer hostgroup) keeps it at its weight. Its reads move to the other servers while its writes go on
        until it stops. For the restart of a writer that keeps its role, where emptying its hostgroup would hold
        the writes in the proxy through the whole restart and its gates, not only while it is down.
      - Mutually exclusive with I(hand_over).
    type: bool
    default: false
  skip_unknown:
    description:
      - Leave a backend this proxy does not route to (no row of C(mysql_servers)) alone, C(changed=false) and the
        reason saying so, instead of refusing it. For callers that restart a server the proxies may not know
        yet (a server new to the topology, restarted by its first converge before the proxies are converged).
    type: bool
    default: false
requirements:
  - PyMySQL on the host the module runs on
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Drain g1 on this proxy
  dbops.clusters.proxysql_drain:
    login_config_file: /root/.proxysql-admin.cnf
    hostname: 10.0.0.11
    state: drained
"""

RETURN = r"""
changed:
  description: Whether the backend's weights changed.
  returned: always
  type: bool
reason:
  description: What was done and why, in words.
  returned: always
  type: str
queries:
  description: The statements run (or planned, in check mode), C(LOAD MYSQL SERVERS TO RUNTIME) and the rows the
    monitors placed kept through it included.
  returned: always
  type: list
  elements: str
in_use:
  description: Connections of the proxy's pool to the backend still in use when the module returned.
  returned: when state is drained, outside check mode
  type: int
drained:
  description: Whether no connection to the backend was in use before I(drain_timeout).
  returned: when state is drained, outside check mode
  type: bool
waited_s:
  description: Seconds waited for the drain or for the backend to be ONLINE.
  returned: outside check mode
  type: float
loaded_at:
  description: When the new weights were loaded (seconds since the epoch, the proxy host's clock), to read the
    proxy's monitor logs against.
  returned: when weights changed, outside check mode
  type: float
ping_waited_s:
  description: Seconds waited, before the weights went back, for the monitor to ping the backend successfully.
  returned: when state is online and weights were put back, outside check mode
  type: float
idle_before:
  description: Idle connections of the proxy's pool to the backend, in the hostgroups where it was drained, before
    the put-back.
  returned: when state is online and weights were put back
  type: int
idle_closed:
  description: How many of them the put-back closed first.
  returned: when state is online and idle connections were closed, outside check mode
  type: int
"""

import time

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.dbops.clusters.plugins.module_utils.mysql_connection import (
    HAS_PYMYSQL, PYMYSQL_IMPORT_ERROR, ConnectionError_)
from ansible_collections.dbops.clusters.plugins.module_utils.proxysql_admin import (
    LOGIN_SPEC, PING_LOG_SQL, DrainError, admin_connection, answered_since, drain_plan, fetch_rows,
    idle_reset_statements, known_backend, load_keeping_placements, proxy_placed_rows)

try:
    import pymysql
except ImportError:  # pragma: no cover - reported through HAS_PYMYSQL
    pymysql = None

POLL_S = 0.2
PING_WAIT_MIN_S = 10
IDLE_CLOSE_WAIT_S = 5


def value(connection, sql, args):
    with connection.cursor() as cursor:
        cursor.execute(sql, args)
        row = cursor.fetchone()
    return row[0] if row else None


def wait_for_a_ping(module, connection, hostname, port, result):
    """Before a backend's weights go back: until this proxy's monitor pinged it successfully after now
    (answered_since says why), at most drain_timeout seconds; then fails, the backend left drained."""
    started = time.time()
    since_us = int(started * 1000000)   # the module runs on the proxy's host: the monitor's clock
    # a drain timeout of 0 (no wait for sessions) still leaves time for a ping round or two
    timeout = max(module.params["drain_timeout"], PING_WAIT_MIN_S)
    while True:
        with connection.cursor(pymysql.cursors.DictCursor) as cursor:
            cursor.execute(PING_LOG_SQL, (hostname, port))
            rows = cursor.fetchall()
        if answered_since(rows, since_us):
            return round(time.time() - started, 2)
        if time.time() - started >= timeout:
            module.fail_json(msg="%s:%s was not put back: this proxy's monitor has not pinged it successfully in %d s "
                                 "(latest ping: %s); put back before that, the failed pings of its downtime would "
                                 "make the monitor shun it and cut the connections in use on it"
                                 % (hostname, port, timeout,
                                    (rows[0]["ping_error"] or "an answer before the wait") if rows else "none"),
                             **result)
        time.sleep(POLL_S)


def drained_hostgroups(runtime_rows, hostname, port):
    """The runtime hostgroups where the backend has weight 0, declared or placed by a monitor (a Galera member's
    reader row): no new connection went to it there since the drain."""
    return sorted(set(int(row["hostgroup_id"]) for row in runtime_rows if row["hostname"] == hostname
                      and str(row["port"]) == str(port) and str(row["weight"]) == "0"))


def pool_counts(connection, hostname, port, hostgroups):
    """(connections in use, idle connections) of the proxy's pool to the backend in these hostgroups (every
    hostgroup when the list is empty)."""
    sql = ("SELECT COALESCE(SUM(ConnUsed), 0), COALESCE(SUM(ConnFree), 0) FROM stats_mysql_connection_pool "
           "WHERE srv_host=%s AND srv_port=%s")
    if hostgroups:
        sql += " AND hostgroup IN (%s)" % ", ".join(["%s"] * len(hostgroups))
    with connection.cursor() as cursor:
        cursor.execute(sql, tuple([hostname, port] + list(hostgroups)))
        used, free = cursor.fetchone()
    return int(used), int(free)


def idle_reset(connection, runtime_rows, hostname, port, result):
    """The hostgroups where the put-back first closes the idle connections of the proxy's pool to the backend
    (idle_reset_statements says why): only where it has some and none in use. A connection still in use there
    outlived the drain's wait, so the backend was not restarted since (a restart would have cut it): its idle
    connections are alive and stay. Empty: no reset."""
    hostgroups = drained_hostgroups(runtime_rows, hostname, port)
    used, free = pool_counts(connection, hostname, port, hostgroups) if hostgroups else (0, 0)
    result["idle_before"] = free
    if free and used:
        result["reason"] += ("; %d connection(s) of the pool still in use on it, so it was not restarted since the "
                             "drain: its %d idle one(s) are kept" % (used, free))
    return hostgroups if free and not used else []


def close_idle_connections(connection, reset, hostgroups, hostname, port, result):
    """Runs the reset load and waits (at most IDLE_CLOSE_WAIT_S) until the pool has no idle connection to the
    backend left; says how many it closed."""
    with connection.cursor() as cursor:
        for sql, args in reset:
            cursor.execute(sql, args or None)
    started = time.time()
    dummy, free = pool_counts(connection, hostname, port, hostgroups)
    while free and time.time() - started < IDLE_CLOSE_WAIT_S:
        time.sleep(POLL_S)
        dummy, free = pool_counts(connection, hostname, port, hostgroups)
    result["idle_closed"] = result["idle_before"] - free
    result["reason"] += "; %d idle connection(s) opened before the drain closed first%s" % (
        result["idle_closed"], " (%d still open after %d s)" % (free, IDLE_CLOSE_WAIT_S) if free else "")


def weights(rows, hostname, port):
    return dict(("hostgroup %s" % row["hostgroup_id"], row["weight"]) for row in rows
                if row["hostname"] == hostname and str(row["port"]) == str(port))


def main():
    module = AnsibleModule(argument_spec=dict(
        LOGIN_SPEC,
        hostname=dict(type="str", required=True),
        port=dict(type="int", default=3306),
        state=dict(type="str", choices=["drained", "online"], default="drained"),
        drain_timeout=dict(type="int", default=30),
        hand_over=dict(type="bool", default=False),
        shared_only=dict(type="bool", default=False),
        skip_unknown=dict(type="bool", default=False),
    ), supports_check_mode=True)
    if not HAS_PYMYSQL:
        module.fail_json(msg=missing_required_lib("PyMySQL"), exception=PYMYSQL_IMPORT_ERROR)
    params = module.params
    hostname, port, state = params["hostname"], params["port"], params["state"]
    if params["hand_over"] and params["shared_only"]:
        module.fail_json(msg="hand_over and shared_only: choose one (leave a hostgroup it serves alone empty, or "
                             "keep it there)")
    if params["drain_timeout"] < 0:
        module.fail_json(msg="drain_timeout=%s: must be 0 or more seconds" % params["drain_timeout"])
    result = dict(changed=False, reason="", queries=[])
    try:
        connection, dummy = admin_connection(params)
    except ConnectionError_ as err:
        module.fail_json(msg=str(err), **result)
    try:
        memory = fetch_rows(connection, "mysql_servers")
        disk = fetch_rows(connection, "disk.mysql_servers")
        runtime = fetch_rows(connection, "runtime_mysql_servers")
        if params["skip_unknown"] and not known_backend(memory, hostname, port):
            result["reason"] = "%s:%s is not a backend of this proxy (no row of mysql_servers): nothing to do" % (
                hostname, port)
            module.exit_json(**result)
        statements, result["reason"] = drain_plan(state, hostname, port, memory, disk, runtime, params["hand_over"],
                                                  params["shared_only"])
        # The rows ProxySQL's monitors placed (the writer of a Group Replication group) stay through the load:
        # without them in mysql_servers the load would cut the connections in use on them (placed_rows says why).
        placed = proxy_placed_rows(connection, memory, runtime, hostname, params["port"],
                                   keep_own=state == "drained") if statements else []
    except DrainError as err:
        module.fail_json(msg=str(err), **result)
    except pymysql.err.MySQLError as err:
        module.fail_json(msg="reading ProxySQL's mysql_servers failed: %s" % err, **result)
    columns = list(memory[0]) if memory else []
    sequence = load_keeping_placements(placed, columns, statements) if statements else []
    reset, reset_hostgroups = [], []
    if state == "online" and statements:
        try:
            reset_hostgroups = idle_reset(connection, runtime, hostname, port, result)
        except pymysql.err.MySQLError as err:
            module.fail_json(msg="reading ProxySQL's connection pool failed: %s" % err, **result)
        if reset_hostgroups:
            reset = load_keeping_placements(placed, columns, idle_reset_statements(statements, hostname, port))
    result["queries"] = [sql % tuple(repr(arg) for arg in args) for sql, args in reset + sequence]
    if statements:
        result["changed"] = True
        before = weights(memory, hostname, port)
        after = dict(before, **dict(("hostgroup %s" % args[2], str(args[0])) for sql, args in statements
                                    if state == "online"))
        if state == "drained":
            # one statement per hostgroup (shared_only), or one for every row
            shared = set("hostgroup %s" % args[0] for sql, args in statements if len(args) == 3)
            after = dict((key, "0" if not shared or key in shared else value) for key, value in before.items())
        result["diff"] = {"before": before, "after": after}
    if module.check_mode:
        module.exit_json(**result)
    try:
        if state == "online" and sequence:
            result["ping_waited_s"] = wait_for_a_ping(module, connection, hostname, port, result)
        if reset:
            close_idle_connections(connection, reset, reset_hostgroups, hostname, port, result)
        result["loaded_at"] = round(time.time(), 6)
        with connection.cursor() as cursor:
            for sql, args in sequence:
                cursor.execute(sql, args or None)
        started = time.time()
        if state == "drained":
            # Only the drained hostgroups' connections (shared_only: one statement each): a hostgroup that keeps
            # the backend goes on using it.
            shared = [int(args[0]) for sql, args in statements if len(args) == 3]
            in_use = pool_counts(connection, hostname, port, shared)[0]
            while in_use and time.time() - started < params["drain_timeout"]:
                time.sleep(POLL_S)
                in_use = pool_counts(connection, hostname, port, shared)[0]
            result.update(in_use=in_use, drained=in_use == 0, waited_s=round(time.time() - started, 2))
            result["reason"] += "; %s" % ("no connection in use after %.1f s" % result["waited_s"] if not in_use else
                                          "%d connection(s) still in use after %d s: they end when it stops"
                                          % (in_use, params["drain_timeout"]))
        else:
            sql = "SELECT COUNT(*) FROM runtime_mysql_servers WHERE hostname=%s AND port=%s AND status='ONLINE'"
            while not int(value(connection, sql, (hostname, port))):
                if time.time() - started >= params["drain_timeout"]:
                    module.fail_json(msg="%s:%s is not ONLINE in any hostgroup of the runtime %d s after its weights "
                                         "were put back (ProxySQL's monitor keeps it out: is it serving?)"
                                         % (hostname, port, params["drain_timeout"]), **result)
                time.sleep(POLL_S)
            result["waited_s"] = round(time.time() - started, 2)
            result["reason"] += "; pinged by the monitor after %.1f s, ONLINE in the runtime after %.1f s" % (
                result["ping_waited_s"], result["waited_s"])
    except pymysql.err.MySQLError as err:
        module.fail_json(msg="ProxySQL's admin interface failed: %s" % err, **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
