# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ProxySQL's admin interface for the collection's ProxySQL modules: one login policy, one argument spec.

admin_connection tries the credentials file first, then the inventory's password and address (see
proxysql_config.login_attempts for why); while no address accepts a connection at all (ProxySQL starting, or
moving its admin interface) it keeps trying for wait_timeout seconds; a refused login is final.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

from ansible_collections.dbops.clusters.plugins.module_utils import proxysql_config as planner
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_connection import (
    ConnectionError_, option_file_login)
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_errors import is_access_denied

try:
    import pymysql
except ImportError:  # pragma: no cover - the modules report it through mysql_connection.HAS_PYMYSQL
    pymysql = None


# The login options of every ProxySQL module (doc fragment dbops.clusters.proxysql_login).
LOGIN_SPEC = dict(
    login_host=dict(type="str", default="127.0.0.1"),
    login_port=dict(type="int", default=6032),
    login_user=dict(type="str"),
    login_password=dict(type="str", no_log=True),
    login_config_file=dict(type="path"),
    login_fallback_password=dict(type="str", no_log=True),
    login_fallback_host=dict(type="str"),
    login_fallback_port=dict(type="int"),
    wait_timeout=dict(type="int", default=0),
    connect_timeout=dict(type="int", default=10),
)


def admin_connection(params):
    """(connection, which login was accepted: planner.login_attempts' label).

    Keeps trying for wait_timeout seconds while ProxySQL refuses every address (not started yet, or moving
    its admin interface); a refused login is final. The first error is reported: it names the credentials
    the caller meant.
    """
    given = {"host": params["login_host"], "port": params["login_port"],
             "connect_timeout": params["connect_timeout"], "autocommit": True}
    if params.get("login_config_file"):
        # ProxySQL's admin interface listens on TCP only: a socket in the file is not for it
        given.update((key, value) for key, value in option_file_login(params["login_config_file"]).items()
                     if key != "unix_socket")
    if params.get("login_user"):
        given["user"] = params["login_user"]
    if params.get("login_password") is not None:
        given["password"] = params["login_password"]
    if not given.get("user"):
        raise ConnectionError_("no admin user: set login_user or a user in login_config_file")
    attempts = planner.login_attempts(given, {"password": params.get("login_fallback_password"),
                                              "host": params.get("login_fallback_host"),
                                              "port": params.get("login_fallback_port")})
    deadline = time.time() + (params.get("wait_timeout") or 0)
    while True:
        errors = []
        for label, kwargs in attempts:
            try:
                return pymysql.connect(**kwargs), label
            except pymysql.err.MySQLError as err:
                errors.append((kwargs, err))
        refused_login = any(is_access_denied(err) for dummy, err in errors)
        if refused_login or time.time() >= deadline:
            break
        time.sleep(0.5)
    kwargs, err = errors[0]
    tried = ", ".join(sorted(set("%s:%s" % (kw["host"], kw["port"]) for kw, dummy in errors)))
    raise ConnectionError_("cannot connect to ProxySQL admin at %s:%s as %s: %s (tried %s)"
                           % (kwargs["host"], kwargs["port"], kwargs["user"], err, tried))


def fetch_rows(connection, table):
    with connection.cursor(pymysql.cursors.DictCursor) as cursor:
        cursor.execute("SELECT * FROM %s" % table)  # table names are the modules' constants, never input
        return [dict((column, planner.as_text(value)) for column, value in row.items())
                for row in cursor.fetchall()]


# ---------------------------------------------------------------------------------------- monitor placements

def placed_rows(memory_rows, runtime_rows, hostname=None, port=None, keep_own=True, galera_hostgroups=()):
    """Rows of runtime_mysql_servers that mysql_servers lacks: servers ProxySQL's monitors placed (a Group
    Replication or async writer in its writer hostgroup). LOAD MYSQL SERVERS TO RUNTIME rebuilds the runtime from
    mysql_servers: such a row is removed at once (OFFLINE_HARD), the connections in use on it are cut, and ProxySQL
    retries the statement that was running on another server, so a statement that had committed runs twice (seen:
    an INSERT through the VIP failed with a duplicate key during a Group Replication rolling restart). The caller
    puts these rows in mysql_servers for the load and takes them out after (load_keeping_placements).
    hostname/port name a backend whose own placed rows are left out unless keep_own (a backend put back gets them
    from its monitor again, with its restored weight). Only backends mysql_servers still has: one removed from the
    configuration leaves the runtime with the load. Not the rows of galera_hostgroups (galera_monitor_hostgroups):
    a Galera cluster's members are all declared in its writer hostgroup, and ProxySQL's Galera monitor places them
    again (backup writers, readers) in the load itself, so a kept row would only pin a placement the monitor then
    moves. Pure; rows as text."""
    galera_hostgroups = set(str(hostgroup) for hostgroup in galera_hostgroups)
    declared = set((str(row["hostgroup_id"]), row["hostname"], str(row["port"])) for row in memory_rows)
    backends = set((row["hostname"], str(row["port"])) for row in memory_rows)
    placed = []
    for row in runtime_rows:
        if (str(row["hostgroup_id"]), row["hostname"], str(row["port"])) in declared:
            continue
        if (row["hostname"], str(row["port"])) not in backends or str(row["hostgroup_id"]) in galera_hostgroups:
            continue
        if not keep_own and row["hostname"] == hostname and str(row["port"]) == str(port):
            continue
        placed.append(dict(row, status="ONLINE"))   # SHUNNED is the monitor's judgement, not a setting
    return placed


def galera_monitor_hostgroups(galera_rows):
    """The hostgroups ProxySQL's Galera monitor manages: each mysql_galera_hostgroups row's writer, backup writer,
    reader and offline hostgroups."""
    return set(str(row[column]) for row in galera_rows for column in (
        "writer_hostgroup", "backup_writer_hostgroup", "reader_hostgroup", "offline_hostgroup"))


def proxy_placed_rows(connection, memory_rows, runtime_rows, hostname=None, port=None, keep_own=True):
    """placed_rows on a live proxy, its Galera hostgroups read from runtime_mysql_galera_hostgroups."""
    return placed_rows(memory_rows, runtime_rows, hostname, port, keep_own,
                       galera_monitor_hostgroups(fetch_rows(connection, "runtime_mysql_galera_hostgroups")))


LOAD_SERVERS = "LOAD MYSQL SERVERS TO RUNTIME"


def load_keeping_placements(placed, columns, changes=()):
    """[(sql, args)]: LOAD MYSQL SERVERS TO RUNTIME with the placed rows (placed_rows) in mysql_servers for the
    load alone: inserted before it and deleted right after, so the runtime keeps them and neither mysql_servers
    nor a later SAVE MYSQL SERVERS TO DISK does. changes (a drain's statements) run after the inserts, so they
    apply to the placed rows too: a drained Group Replication primary's writer row goes to weight 0 with its
    declared rows, and its new transactions wait in the proxy for the next primary instead of reaching a server
    about to turn read-only. columns: mysql_servers' columns. The one way both modules load."""
    before, after = [], []
    for row in placed:
        names = [column for column in columns if column in row]
        sql = "INSERT INTO mysql_servers (%s) VALUES (%s)" % (", ".join(names), ", ".join(["%s"] * len(names)))
        before.append((sql, tuple(row[column] for column in names)))
        after.append(("DELETE FROM mysql_servers WHERE hostgroup_id=%s AND hostname=%s AND port=%s",
                      (int(row["hostgroup_id"]), row["hostname"], int(row["port"]))))
    return before + list(changes) + [(LOAD_SERVERS, ())] + after


# ------------------------------------------------------------------------------------------------ put back

# The proxy's own pings of a backend, newest first (ProxySQL's monitor schema; ping_error NULL: it answered).
PING_LOG_SQL = ("SELECT time_start_us, ping_error FROM monitor.mysql_server_ping_log WHERE hostname=%s AND port=%s "
                "ORDER BY time_start_us DESC LIMIT 1")


def answered_since(ping_rows, since_us):
    """Whether the proxy's monitor pinged the backend successfully at or after since_us (microseconds, the
    monitor's clock): ping_rows are mysql_server_ping_log rows, newest first. A backend put back before that
    ping is still judged by the pings that failed while it was down: once mysql-monitor_ping_max_failures of them
    are the newest, the next ping round shuns it and kills every connection to it, the ones in use too, and
    ProxySQL runs each statement in flight again elsewhere, so an INSERT that had committed runs twice (seen: a
    planned rolling restart's put-back made the member the writer in the same second as that round). Pure."""
    if not ping_rows:
        return False
    newest = ping_rows[0]
    return int(newest["time_start_us"]) >= int(since_us) and newest.get("ping_error") in (None, "")


# ------------------------------------------------------------------------------------------------ drain

class DrainError(Exception):
    """The backend cannot be drained or put back as asked (not a backend here, no other server to serve)."""


def known_backend(memory_rows, hostname, port):
    """Whether mysql_servers (memory_rows) has a row of hostname:port. Pure."""
    return any(row["hostname"] == hostname and str(row["port"]) == str(port) for row in memory_rows)


def drain_plan(state, hostname, port, memory_rows, disk_rows, runtime_rows=(), hand_over=False,
               shared_only=False):
    """What proxysql_drain does on one proxy: [(sql, args)] to run before LOAD MYSQL SERVERS TO RUNTIME (empty:
    nothing to change), and why. Pure; rows are mysql_servers rows as text ({hostgroup_id, hostname, port,
    weight, status}), memory_rows the whole memory table, disk_rows the whole disk table (the declared
    configuration), runtime_rows runtime_mysql_servers (where the monitors have put each server).

    drained: weight 0 on every row of the backend. ProxySQL opens no new connection to a server of weight 0,
      and its Galera monitor makes the heaviest other member the writer; a status of OFFLINE_SOFT would not do:
      the Galera monitor puts a healthy member back ONLINE at its next check. Refused when a hostgroup of the
      backend, declared or in the runtime, has no other server of weight above 0 (its traffic would have
      nowhere to go: the writer of an async or Group Replication topology, which a monitor alone put there),
      unless hand_over: the caller moves the writer role right after (a Group Replication primary switch), so a
      runtime hostgroup left with no server of weight above 0 only holds its new sessions in the proxy (up to
      mysql-connect_timeout_server_max) until the monitor places the new writer; a declared hostgroup still
      refuses, since no monitor fills it. With shared_only, a hostgroup the backend serves alone (declared or in
      the runtime: an async source in the writer hostgroup) keeps it, and only its rows in the hostgroups it
      shares go to weight 0: its reads move to the others while its writes go on until it stops.
    online: the weights of the disk table (what the proxysql role saved) back on the backend's rows.
    """
    port = str(port)
    mine = [row for row in memory_rows if row["hostname"] == hostname and str(row["port"]) == port]
    if not known_backend(memory_rows, hostname, port):
        raise DrainError("%s:%s is not a backend of this proxy (no row of mysql_servers)" % (hostname, port))
    if state == "drained":
        alone = set()           # hostgroups it serves alone: kept (shared_only), else a hand-over or a refusal
        for hostgroup in sorted(set(str(row["hostgroup_id"]) for row in mine), key=int):
            others = [row for row in memory_rows if str(row["hostgroup_id"]) == hostgroup
                      and (row["hostname"], str(row["port"])) != (hostname, port) and str(row["weight"]) != "0"]
            if not others and shared_only:
                alone.add(hostgroup)
            elif not others:
                raise DrainError("%s:%s is the only server of hostgroup %s with a weight above 0: drained, that "
                                 "hostgroup's traffic would have nowhere to go (switch its role to another server "
                                 "first)" % (hostname, port, hostgroup))
        serving = sorted(set(str(row["hostgroup_id"]) for row in runtime_rows if row["hostname"] == hostname
                             and str(row["port"]) == port and row.get("status") == "ONLINE"), key=int)
        held = []
        for hostgroup in serving:
            others = [row for row in runtime_rows if str(row["hostgroup_id"]) == hostgroup
                      and (row["hostname"], str(row["port"])) != (hostname, port)
                      and str(row["weight"]) != "0" and row.get("status") != "OFFLINE_HARD"]
            if others:
                continue
            if shared_only:
                alone.add(hostgroup)
            elif hand_over:
                held.append(hostgroup)
            else:
                raise DrainError("%s:%s is the only server of runtime hostgroup %s: drained, that hostgroup's "
                                 "traffic would have nowhere to go (switch its role to another server first)"
                                 % (hostname, port, hostgroup))
        drained = [row for row in mine if str(row["hostgroup_id"]) not in alone]
        if all(str(row["weight"]) == "0" for row in drained):
            return [], "%s:%s has weight 0 already%s: no new connection goes to it there" % (
                hostname, port, " in every hostgroup it shares" if alone else "")
        reason = "weight 0 on %s of %s:%s (was %s): no new connection" % (
            "its rows in the hostgroups it shares" if alone else "every row", hostname, port, ", ".join(
                "%s in hostgroup %s" % (row["weight"], row["hostgroup_id"]) for row in drained))
        if alone:
            reason += ("; hostgroup %s, which it serves alone, keeps it until it stops (shared_only)"
                       % ", ".join(sorted(alone, key=int)))
            return ([("UPDATE mysql_servers SET weight=0 WHERE hostgroup_id=%s AND hostname=%s AND port=%s",
                      (int(row["hostgroup_id"]), hostname, int(port))) for row in drained], reason)
        if held:
            reason += ("; hand-over: hostgroup %s keeps its new sessions waiting in the proxy until the monitor "
                       "places the next writer" % ", ".join(held))
        else:
            reason += ", the other servers of its hostgroups take its new work"
        return ([("UPDATE mysql_servers SET weight=0 WHERE hostname=%s AND port=%s", (hostname, int(port)))],
                reason)
    saved = dict((str(row["hostgroup_id"]), (str(row["weight"]), row.get("status", "ONLINE"))) for row in disk_rows
                 if row["hostname"] == hostname and str(row["port"]) == port)
    missing = sorted(str(row["hostgroup_id"]) for row in mine if str(row["hostgroup_id"]) not in saved)
    if missing:
        raise DrainError("%s:%s has no saved row for hostgroup %s in disk.mysql_servers: the weight to put back "
                         "is unknown (run the proxysql role, which saves its rows)"
                         % (hostname, port, ", ".join(missing)))
    # The saved status too: a run stopped between idle_reset_statements' load and this one left OFFLINE_HARD.
    statements = []
    for row in mine:
        weight, status = saved[str(row["hostgroup_id"])]
        if (str(row["weight"]), row.get("status", "ONLINE")) != (weight, status):
            statements.append((PUT_BACK_SQL, (int(weight), status, int(row["hostgroup_id"]), hostname, int(port))))
    if not statements:
        return [], "%s:%s has its saved weights" % (hostname, port)
    return statements, "the saved weights back on %s:%s (%s)" % (hostname, port, ", ".join(
        "%s in hostgroup %s" % (saved[str(row["hostgroup_id"])][0], row["hostgroup_id"]) for row in mine))


PUT_BACK_SQL = "UPDATE mysql_servers SET weight=%s, status=%s WHERE hostgroup_id=%s AND hostname=%s AND port=%s"


def idle_reset_statements(put_back_statements, hostname, port):
    """[(sql, args)] that close the proxy's idle connections to a drained backend before drain_plan's put-back
    (its statements): its rows there OFFLINE_HARD for one load, which makes ProxySQL drop the backend's free
    connections at once. Those were opened before the drain; after a restart they are dead, and ProxySQL hands a
    pooled connection to a new transaction without checking it first (it pings idle ones only every
    mysql-ping_interval_server_msec): the transaction fails with 2013, which ProxySQL cannot run again elsewhere
    once it is open. The put-back's own statements set the saved status again. Pure."""
    return [("UPDATE mysql_servers SET status='OFFLINE_HARD' WHERE hostgroup_id=%s AND hostname=%s AND port=%s",
             (args[2], hostname, int(port))) for dummy, args in put_back_statements]
