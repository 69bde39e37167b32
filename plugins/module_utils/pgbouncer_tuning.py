# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PgBouncer's pool settings for one PostgreSQL member, each with its reason: the pooler's half of the tuning.

Pure functions, no I/O. recommend(facts, overrides) returns the settings the role writes into pgbouncer.ini's
[pgbouncer] section, in the shape of the PostgreSQL engine's (value, reason, source), and raises
PoolerInputError naming the input when the server cannot take the pools (more server connections than its
max_connections leaves, an unknown or out-of-range override).

The sizes follow from two facts: in transaction pooling a server connection is busy only while a transaction
runs, so a pool of about two connections per CPU keeps the server's CPUs busy without queueing inside
PostgreSQL (more connections only add context switches and lock contention; the clients wait in PgBouncer
instead, which costs nothing); and every pool together must fit in what max_connections leaves after the
superuser slots and the connections that do not go through the pooler (Patroni's, monitoring, a DBA's session,
pg_rewind).
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

POOL_MODES = ("session", "transaction", "statement")
MIN_POOL_SIZE = 5             # below this a burst of short transactions queues behind one slow one
POOL_SIZE_PER_CPU = 2
DIRECT_CONNECTIONS = 10       # Patroni (2-3), monitoring, a DBA's psql, pg_rewind: not through the pooler
RESERVE_POOL_SIZE = 2
RESERVE_POOL_TIMEOUT_S = 3
SERVER_LOGIN_RETRY_S = 1
MAX_PREPARED_STATEMENTS = 200

POOL_MODE_REASONS = {
    "transaction": "transaction pooling: a client holds a server connection only for a transaction, so many "
                   "clients share few backends; session state (SET, advisory locks, LISTEN, WITH HOLD cursors) "
                   "does not survive between transactions, use session mode for clients that need it",
    "session": "session pooling: a client keeps its server connection until it disconnects (every feature works, "
               "the pool saves only connection set-up)",
    "statement": "statement pooling: a server connection per statement; multi-statement transactions are refused",
}

# The overrides a user may set, each with its type and range (PgBouncer refuses other values at start).
OVERRIDES = {
    "default_pool_size": (int, 1, 10000),
    "min_pool_size": (int, 0, 10000),
    "reserve_pool_size": (int, 0, 10000),
    "reserve_pool_timeout": (int, 0, 3600),
    "max_db_connections": (int, 0, 100000),
    "max_user_connections": (int, 0, 100000),
    "max_prepared_statements": (int, 0, 100000),
    "server_login_retry": (int, 1, 3600),
    "server_idle_timeout": (int, 0, 86400),
    "server_lifetime": (int, 0, 86400),
    "query_wait_timeout": (int, 0, 86400),
    "client_idle_timeout": (int, 0, 86400),
    "idle_transaction_timeout": (int, 0, 86400),
    "ignore_startup_parameters": (str, None, None),
}


class PoolerInputError(ValueError):
    """An input the pooler cannot run with; the message names it."""


def _int(value, name, low, high):
    if isinstance(value, bool):
        raise PoolerInputError("%s=%r must be a whole number" % (name, value))
    try:
        number = int(str(value).strip())
    except ValueError:
        raise PoolerInputError("%s=%r must be a whole number" % (name, value))
    if number < low or (high is not None and number > high):
        raise PoolerInputError("%s=%d must be between %d and %s" % (name, number, low, high))
    return number


def _setting(value, reason, source="derived"):
    return {"value": str(value), "reason": reason, "source": source}


def recommend(facts, overrides=None):
    """facts: max_connections and superuser_reserved_connections (the server's), cpus, pools (the number of
    database and user pairs clients use), pool_mode, max_client_conn. overrides: setting name -> value."""
    overrides = overrides or {}
    if not isinstance(overrides, dict):
        raise PoolerInputError("postgres_tuned_pgbouncer_overrides must be a dict of setting name to value")
    max_connections = _int(facts.get("max_connections"), "max_connections", 1, None)
    reserved = _int(facts.get("superuser_reserved_connections", 3), "superuser_reserved_connections", 0, None)
    cpus = _int(facts.get("cpus"), "cpus", 1, None)
    pools = _int(facts.get("pools", 1), "pools", 1, None)
    max_client_conn = _int(facts.get("max_client_conn"), "postgres_tuned_pgbouncer_max_client_conn", 1, 100000)
    mode = facts.get("pool_mode")
    if mode not in POOL_MODES:
        raise PoolerInputError("postgres_tuned_pgbouncer_pool_mode=%r must be one of %s"
                               % (mode, ", ".join(POOL_MODES)))

    budget = max_connections - reserved - DIRECT_CONNECTIONS
    per_pool = budget // pools if budget > 0 else 0
    if per_pool < 1:
        raise PoolerInputError(
            "max_connections=%d leaves %d server connections for PgBouncer's %d pool%s (after %d superuser slots "
            "and %d for Patroni, monitoring and direct sessions): raise postgres_tuned_max_connections"
            % (max_connections, max(budget, 0), pools, "" if pools == 1 else "s", reserved, DIRECT_CONNECTIONS))
    budget_text = ("max_connections %d less %d superuser slots and %d for connections outside the pooler "
                   "(Patroni, monitoring, a DBA's session) leaves %d, shared by %d pool%s (a database and user "
                   "pair each)" % (max_connections, reserved, DIRECT_CONNECTIONS, budget, pools,
                                   "" if pools == 1 else "s"))

    settings = {}
    settings["pool_mode"] = _setting(mode, POOL_MODE_REASONS[mode], "input")
    wanted = max(MIN_POOL_SIZE, POOL_SIZE_PER_CPU * cpus)
    wanted_rule = "%d per CPU x %d CPUs (at least %d)" % (POOL_SIZE_PER_CPU, cpus, MIN_POOL_SIZE)
    if wanted <= per_pool:
        settings["default_pool_size"] = _setting(wanted, "%s: enough server connections to keep the CPUs busy, few "
                                                 "enough that clients queue in PgBouncer rather than contend inside "
                                                 "PostgreSQL" % wanted_rule)
    else:
        settings["default_pool_size"] = _setting(per_pool, "%d: %s; %s would be %d" % (
            per_pool, budget_text, wanted_rule, wanted))
    reserve = min(RESERVE_POOL_SIZE, max(per_pool - int(settings["default_pool_size"]["value"]), 0))
    settings["reserve_pool_size"] = _setting(
        reserve, "%d more server connections for a pool whose clients waited %d s (a burst), within the share of "
                 "each pool" % (reserve, RESERVE_POOL_TIMEOUT_S))
    settings["reserve_pool_timeout"] = _setting(RESERVE_POOL_TIMEOUT_S, "seconds a client waits before the "
                                                "reserve connections open")
    settings["max_db_connections"] = _setting(budget, "at most %s: %s" % (budget, budget_text))
    settings["max_client_conn"] = _setting(
        max_client_conn, "clients PgBouncer accepts (postgres_tuned_pgbouncer_max_client_conn); each costs a file "
                         "descriptor, not a server connection")
    settings["server_login_retry"] = _setting(
        SERVER_LOGIN_RETRY_S, "after PostgreSQL restarts (a crash restarted by Patroni, a planned restart) the "
                              "pooler logs in again within a second, not PgBouncer's default 15 s: the write gap "
                              "stays the server's own")
    if mode != "session":
        settings["max_prepared_statements"] = _setting(
            MAX_PREPARED_STATEMENTS, "protocol-level prepared statements (JDBC, psycopg 3, pgx) kept per server "
                                     "connection in %s pooling; 0 would break those drivers" % mode)
    settings["ignore_startup_parameters"] = _setting(
        "extra_float_digits", "JDBC drivers send it at connect; PgBouncer would refuse the connection")

    for name, value in sorted(overrides.items()):
        if name not in OVERRIDES:
            raise PoolerInputError("postgres_tuned_pgbouncer_overrides: %r is not a setting the role lets you "
                                   "override (known: %s)" % (name, ", ".join(sorted(OVERRIDES))))
        kind, low, high = OVERRIDES[name]
        label = "postgres_tuned_pgbouncer_overrides.%s" % name
        if kind is int:
            value = _int(value, label, low, high)
        elif not isinstance(value, str) or "\n" in value:
            raise PoolerInputError("%s=%r must be one line of text" % (label, value))
        settings[name] = _setting(value, "set in postgres_tuned_pgbouncer_overrides", "override")

    size = int(settings["default_pool_size"]["value"]) + int(settings["reserve_pool_size"]["value"])
    if size * pools > budget:
        raise PoolerInputError(
            "postgres_tuned_pgbouncer_overrides: default_pool_size + reserve_pool_size = %d per pool x %d pools "
            "exceeds the %d server connections this member has for the pooler (%s)"
            % (size, pools, budget, budget_text))
    return settings
