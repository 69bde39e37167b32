# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Refusals of the postgres_tuned role's inputs, by type, range and meaning, before anything is written.

Pure functions: each returns one sentence per problem, naming the variable (never a password). What only the
server can judge (an override's value against pg_settings, a library's presence) is checked by postgres_config
on the host; what only the tuning engine can judge (memory against the host's size) by postgres_tuning."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import re

PREFIX = "postgres_tuned_"
# A host name as resolvers accept it (RFC 1123 labels), for listen_addresses and the member address.
_HOSTNAME_RE = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                          r"(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$")
# Role and database names the role writes into pg_hba.conf and passes to the server: plain identifiers, so no
# quoting question arises in either place.
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_$-]{0,62}$")
_BOOL_TEXTS = ("true", "false", "yes", "no", "on", "off", "1", "0")
ROLE_ATTRIBUTES = frozenset(("SUPERUSER", "CREATEDB", "CREATEROLE", "INHERIT", "REPLICATION", "BYPASSRLS",
                             "NOSUPERUSER", "NOCREATEDB", "NOCREATEROLE", "NOINHERIT", "NOREPLICATION",
                             "NOBYPASSRLS"))


def _integer(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.match(r"^-?[0-9]+$", value.strip()):
        return int(value)
    return None


def int_errors(name, value, low, high=None, meaning="", prefix=PREFIX):
    """Why value is not an integer in [low, high], naming the variable prefix + name; empty when it is."""
    number = _integer(value)
    if number is None:
        return ["%s%s=%r must be an integer%s" % (prefix, name, value, meaning)]
    if number < low or (high is not None and number > high):
        span = "from %d to %d" % (low, high) if high is not None else "%d or more" % low
        return ["%s%s=%d must be %s%s" % (prefix, name, number, span, meaning)]
    return []


def address_error(text):
    """None when text is an IP address or a host name, else why not."""
    try:
        ipaddress.ip_address(text)
        return None
    except ValueError:
        pass
    if _HOSTNAME_RE.match(text) and not re.match(r"^[0-9.]+$", text):
        return None
    return "%r is neither an IP address nor a host name" % text


def listen_errors(value):
    name = PREFIX + "listen_addresses"
    if not isinstance(value, str) or not value.strip():
        return ["%s=%r must be a comma-separated list of addresses, host names or '*'" % (name, value)]
    errors = []
    for entry in (part.strip() for part in value.split(",")):
        if entry in ("*", "localhost"):
            continue
        problem = address_error(entry)
        if problem:
            errors.append("%s: %s (the server would not start: it listens on each entry)" % (name, problem))
    return errors


def network_error(text):
    """None when text is an address with a prefix (10.0.0.0/24, fd00::/64) pg_hba.conf accepts, else why not."""
    if not isinstance(text, str) or "/" not in text:
        return "%r is not in CIDR form (such as 10.0.0.0/24)" % (text,)
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError as err:
        return "%r is not a network: %s" % (text, err)
    return None


def access_errors(entries):
    name = PREFIX + "access"
    if not isinstance(entries, list):
        return ["%s must be a list of {database, user, address, tls}" % name]
    errors = []
    for index, entry in enumerate(entries):
        where = "%s[%d]" % (name, index)
        if not isinstance(entry, dict):
            errors.append("%s must be a dict with database, user and address" % where)
            continue
        unknown = sorted(set(entry) - set(("database", "user", "address", "tls")))
        if unknown:
            errors.append("%s: unknown keys %s (database, user, address, tls)" % (where, ", ".join(unknown)))
        for key in ("database", "user"):
            value = entry.get(key)
            if not isinstance(value, str) or not (value == "all" or _NAME_RE.match(value)):
                errors.append("%s.%s=%r must be 'all' or a plain name" % (where, key, value))
        problem = network_error(entry.get("address"))
        if problem:
            errors.append("%s.address: %s" % (where, problem))
        if "tls" in entry and not isinstance(entry["tls"], bool):
            errors.append("%s.tls must be true or false" % where)
    return errors


def user_errors(users):
    name = PREFIX + "users"
    if not isinstance(users, list):
        return ["%s must be a list of {name, password, attributes, state}" % name]
    errors = []
    seen = set()
    for index, user in enumerate(users):
        where = "%s[%d]" % (name, index)
        if not isinstance(user, dict):
            errors.append("%s must be a dict with name and password" % where)
            continue
        login = user.get("name")
        if not isinstance(login, str) or not _NAME_RE.match(login):
            errors.append("%s.name=%r must be a plain role name" % (where, login))
        elif login in seen:
            errors.append("%s: the role %s is listed twice" % (where, login))
        seen.add(login)
        state = user.get("state", "present")
        if state not in ("present", "absent"):
            errors.append("%s.state=%r must be present or absent" % (where, state))
        elif state == "present" and not (isinstance(user.get("password"), str) and user["password"]):
            errors.append("%s (%s) has no password (no default password)" % (where, login))
        attributes = user.get("attributes", [])
        if not isinstance(attributes, list):
            errors.append("%s.attributes must be a list such as [CREATEDB]" % where)
        else:
            bad = [attribute for attribute in attributes if str(attribute).upper() not in ROLE_ATTRIBUTES]
            if bad:
                errors.append("%s.attributes: %s not role attributes (%s)" % (
                    where, ", ".join(map(str, bad)), ", ".join(sorted(ROLE_ATTRIBUTES))))
    return errors


def database_errors(databases, users):
    name = PREFIX + "databases"
    if not isinstance(databases, list):
        return ["%s must be a list of {name, owner}" % name]
    errors = []
    for index, database in enumerate(databases):
        where = "%s[%d]" % (name, index)
        if not isinstance(database, dict) or not isinstance(database.get("name"), str) \
                or not _NAME_RE.match(database["name"]):
            errors.append("%s needs a plain database name" % where)
            continue
        owner = database.get("owner", "postgres")
        if not isinstance(owner, str) or not _NAME_RE.match(owner):
            errors.append("%s.owner=%r must be a plain role name" % (where, owner))
    return errors


def role_errors(inputs):
    """Every refusal of the role's inputs. inputs: the role's variables without the postgres_tuned_ prefix."""
    errors = []
    errors += int_errors("port", inputs.get("port"), 1, 65535)
    errors += listen_errors(inputs.get("listen_addresses"))
    address = inputs.get("address")
    if not isinstance(address, str) or address_error(address):
        errors.append("%saddress=%r must be the IP address or host name the other members reach this server on"
                      % (PREFIX, address))
    errors += int_errors("max_connections", inputs.get("max_connections"), 0, 262143, " (0: derived)")
    errors += int_errors("rto_minutes", inputs.get("rto_minutes"), 1, 1440)
    errors += int_errors("hot_data_mb", inputs.get("hot_data_mb"), 0, meaning=" (0: unknown)")
    errors += int_errors("wal_mb_per_hour", inputs.get("wal_mb_per_hour"), 0, meaning=" (0: unknown)")
    errors += int_errors("synchronous_standbys", inputs.get("synchronous_standbys"), 0)
    errors += int_errors("max_lag_bytes", inputs.get("max_lag_bytes"), 0)
    errors += int_errors("restart_gate_timeout", inputs.get("restart_gate_timeout"), 1, 86400)
    for flag in ("tls", "tls_new_ca", "archive_check", "reseed"):
        if not (isinstance(inputs.get(flag), bool) or str(inputs.get(flag)).lower() in _BOOL_TEXTS):
            errors.append("%s%s=%r must be true or false" % (PREFIX, flag, inputs.get(flag)))
    if not isinstance(inputs.get("overrides"), dict):
        errors.append("%soverrides must be a dict of setting name to value" % PREFIX)
    if not isinstance(inputs.get("archive_command"), str):
        errors.append("%sarchive_command must be a string (empty: the role's own)" % PREFIX)
    replication_user = inputs.get("replication_user")
    if not isinstance(replication_user, str) or not _NAME_RE.match(replication_user):
        errors.append("%sreplication_user=%r must be a plain role name" % (PREFIX, replication_user))
    errors += access_errors(inputs.get("access"))
    errors += user_errors(inputs.get("users"))
    errors += database_errors(inputs.get("databases"), inputs.get("users"))
    if "replica_seed" in inputs:
        errors += replica_seed_errors(inputs)
    if "ha" in inputs:
        errors += patroni_errors(inputs)
    if "pgbouncer" in inputs:
        errors += pgbouncer_errors(inputs)
    return errors


def replica_seed_errors(inputs):
    """Where a new replica's copy comes from: the primary (pg_basebackup) or the pgBackRest repository."""
    seed = inputs.get("replica_seed")
    if seed not in ("primary", "repository"):
        return ["%sreplica_seed=%r must be primary (pg_basebackup from the primary) or repository (a pgBackRest "
                "standby restore)" % (PREFIX, seed)]
    if seed == "repository" and not inputs.get("pgbackrest_stanza"):
        return ["%sreplica_seed=repository needs %spgbackrest_stanza: the stanza the replica is restored from"
                % (PREFIX, PREFIX)]
    if seed == "repository" and inputs.get("ha") == "patroni":
        return ["%sreplica_seed=repository is for postgres_tuned_ha=manual: Patroni copies its replicas itself"
                % PREFIX]
    return []


def pgbouncer_errors(inputs):
    """Refusals of the pooler's inputs (the pool sizes are checked against the server by pgbouncer_tuning)."""
    if not (isinstance(inputs.get("pgbouncer"), bool) or str(inputs.get("pgbouncer")).lower() in _BOOL_TEXTS):
        return ["%spgbouncer=%r must be true or false" % (PREFIX, inputs.get("pgbouncer"))]
    if str(inputs.get("pgbouncer")).lower() not in ("true", "yes", "on", "1"):
        return []
    errors = int_errors("pgbouncer_port", inputs.get("pgbouncer_port"), 1, 65535)
    port = _integer(inputs.get("pgbouncer_port"))
    for other in ("port",) + (("patroni_rest_port",) if inputs.get("ha") == "patroni" else ()):
        if port is not None and port == _integer(inputs.get(other)):
            errors.append("%spgbouncer_port and %s%s must differ (both %d)" % (PREFIX, PREFIX, other, port))
    if inputs.get("pgbouncer_pool_mode") not in ("session", "transaction", "statement"):
        errors.append("%spgbouncer_pool_mode=%r must be session, transaction or statement"
                      % (PREFIX, inputs.get("pgbouncer_pool_mode")))
    errors += int_errors("pgbouncer_max_client_conn", inputs.get("pgbouncer_max_client_conn"), 1, 100000)
    if not isinstance(inputs.get("pgbouncer_overrides"), dict):
        errors.append("%spgbouncer_overrides must be a dict of PgBouncer setting name to value" % PREFIX)
    return errors


def patroni_errors(inputs):
    """Refusals of the high-availability inputs (only the mode itself in manual mode)."""
    mode = inputs.get("ha")
    if mode not in ("patroni", "manual"):
        return ["%sha=%r must be patroni or manual" % (PREFIX, mode)]
    if mode != "patroni":
        return []
    errors = []
    for name in ("patroni_etcd_password", "patroni_rest_password"):
        if not isinstance(inputs.get(name), str) or not inputs.get(name):
            errors.append("%s%s is required with %sha=patroni (no default password)" % (PREFIX, name, PREFIX))
    for name in ("patroni_etcd_user", "patroni_rest_user"):
        if not isinstance(inputs.get(name), str) or not _NAME_RE.match(inputs.get(name) or ""):
            errors.append("%s%s=%r must be a plain user name" % (PREFIX, name, inputs.get(name)))
    for name in ("patroni_scope",):
        if not isinstance(inputs.get(name), str) or not _NAME_RE.match(inputs.get(name) or ""):
            errors.append("%s%s=%r must be a plain name (letters, digits, _ and -)" % (PREFIX, name, inputs.get(name)))
    namespace = inputs.get("patroni_namespace")
    if not isinstance(namespace, str) or not re.match(r"^/([A-Za-z0-9_.-]+/)*$", namespace):
        errors.append("%spatroni_namespace=%r must be a key prefix such as /service/" % (PREFIX, namespace))
    errors += int_errors("patroni_rest_port", inputs.get("patroni_rest_port"), 1, 65535)
    if _integer(inputs.get("patroni_rest_port")) == _integer(inputs.get("port")):
        errors.append("%spatroni_rest_port and %sport must differ" % (PREFIX, PREFIX))
    timing = [int_errors("patroni_ttl", inputs.get("patroni_ttl"), 20, 3600, " (Patroni's minimum is 20)"),
              int_errors("patroni_loop_wait", inputs.get("patroni_loop_wait"), 1, 600),
              int_errors("patroni_retry_timeout", inputs.get("patroni_retry_timeout"), 3, 600)]
    errors += sum(timing, [])
    if not any(timing):
        names = ("patroni_ttl", "patroni_loop_wait", "patroni_retry_timeout")
        ttl, loop, retry = (_integer(inputs.get(name)) for name in names)
        if loop + 2 * retry > ttl:
            errors.append("%spatroni_loop_wait + 2 * %spatroni_retry_timeout (%d) must not exceed %spatroni_ttl "
                          "(%d): a leader would lose its key before it noticed etcd was unreachable"
                          % (PREFIX, PREFIX, loop + 2 * retry, PREFIX, ttl))
    errors += int_errors("patroni_maximum_lag_on_failover", inputs.get("patroni_maximum_lag_on_failover"), 0)
    if inputs.get("patroni_watchdog") not in ("off", "automatic", "required"):
        errors.append("%spatroni_watchdog=%r must be off, automatic or required"
                      % (PREFIX, inputs.get("patroni_watchdog")))
    etcd_hosts = inputs.get("patroni_etcd_hosts")
    if not etcd_hosts:
        errors.append("%spatroni_etcd_group=%r names no inventory host: Patroni needs the etcd members"
                      % (PREFIX, inputs.get("patroni_etcd_group")))
    return errors
