# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Checks of the MySQL roles' inputs, run on the controller before the first change.

Each check returns sentences that name the variable and the value at fault (never a password), so a role can
refuse bad input in one visible message before it installs, writes or restarts anything. Pure functions, unit
tested in tests/unit/test_mysql_inputs.py.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.dbops.clusters.plugins.module_utils import mysql_removed_options
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_flavors import FLAVORS, FlavorError
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_privileges import (
    DATABASE_LEVEL, MARIADB_ALIASES, MYSQL_STATIC_GLOBAL, PrivilegeError, key_kind, parse_priv_key,
    parse_priv_list, validate_account, validate_identifier)
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_tuning import plan_version
from ansible_collections.dbops.clusters.plugins.module_utils.rolling import rolling_order

MAX_SERVER_ID = 4294967295
# User-name length: 32 characters on MySQL 5.7.8+ and Percona Server, 80 on MariaDB 10.6+.
MAX_USER_LENGTH = {"mysql": 32, "mariadb": 80}

# Dynamic global privileges of MySQL 8.0-9.x and Percona Server (MySQL manual, "Privileges Provided by MySQL",
# plus Percona's and the enterprise plugins' ones a user may grant for a plugin installed later).
MYSQL_DYNAMIC = frozenset([
    "ALLOW_NONEXISTENT_DEFINER", "APPLICATION_PASSWORD_ADMIN", "AUDIT_ABORT_EXEMPT", "AUDIT_ADMIN",
    "AUTHENTICATION_POLICY_ADMIN", "BACKUP_ADMIN", "BINLOG_ADMIN", "BINLOG_ENCRYPTION_ADMIN", "CLONE_ADMIN",
    "CONNECTION_ADMIN", "ENCRYPTION_KEY_ADMIN", "FIREWALL_ADMIN", "FIREWALL_EXEMPT", "FIREWALL_USER",
    "FLUSH_OPTIMIZER_COSTS", "FLUSH_PRIVILEGES", "FLUSH_STATUS", "FLUSH_TABLES", "FLUSH_USER_RESOURCES",
    "GROUP_REPLICATION_ADMIN", "GROUP_REPLICATION_STREAM", "INNODB_REDO_LOG_ARCHIVE", "INNODB_REDO_LOG_ENABLE",
    "MASKING_DICTIONARIES_ADMIN", "NDB_STORED_USER", "OPTIMIZE_LOCAL_TABLE", "PASSWORDLESS_USER_ADMIN",
    "PERSIST_RO_VARIABLES_ADMIN", "REPLICATION_APPLIER", "REPLICATION_SLAVE_ADMIN", "RESOURCE_GROUP_ADMIN",
    "RESOURCE_GROUP_USER", "ROLE_ADMIN", "SENSITIVE_VARIABLES_OBSERVER", "SERVICE_CONNECTION_ADMIN",
    "SESSION_VARIABLES_ADMIN", "SET_ANY_DEFINER", "SET_USER_ID", "SHOW_ROUTINE", "SKIP_QUERY_REWRITE",
    "SYSTEM_USER", "SYSTEM_VARIABLES_ADMIN", "TABLE_ENCRYPTION_ADMIN", "TELEMETRY_LOG_ADMIN",
    "TP_CONNECTION_ADMIN", "TRANSACTION_GTID_TAG", "VERSION_TOKEN_ADMIN", "XA_RECOVER_ADMIN",
    "BACKUP_LOCK_ADMIN", "BINLOG_COMPRESSION_ADMIN"])
# MariaDB 10.5+ privileges beyond MySQL's static ones (MariaDB KB, "GRANT").
MARIADB_EXTRA = frozenset([
    "BINLOG ADMIN", "BINLOG MONITOR", "BINLOG REPLAY", "CONNECTION ADMIN", "DELETE HISTORY", "FEDERATED ADMIN",
    "READ_ONLY ADMIN", "REPLICATION MASTER ADMIN", "REPLICATION SLAVE ADMIN", "SET USER", "SLAVE MONITOR",
    "SHOW CREATE ROUTINE"] + list(MARIADB_ALIASES))


def known_privileges(family):
    """Privilege names (upper case, single spaces) a server of `family` accepts at the global level."""
    if family == "mariadb":
        return (MYSQL_STATIC_GLOBAL - {"CREATE ROLE", "DROP ROLE"}) | MARIADB_EXTRA
    return MYSQL_STATIC_GLOBAL | MYSQL_DYNAMIC


def privilege_errors(variable, privileges, family):
    """Sentences naming each privilege or level in `privileges` ({'db.table': 'PRIV,PRIV'}) that cannot work."""
    errors = []
    if privileges is None:
        return errors
    if not isinstance(privileges, dict):
        return ["%s: privileges must be a dict of 'db.table': 'PRIV,PRIV', got %r" % (variable, privileges)]
    known = known_privileges(family)
    for key, text in privileges.items():
        try:
            level_key = parse_priv_key(key)
            level = parse_priv_list(text)
        except PrivilegeError as err:
            errors.append("%s: %s" % (variable, err))
            continue
        unknown = sorted(name for name in level.privs if name not in known)
        if unknown:
            errors.append("%s: %s on %s: no such privilege on %s" % (
                variable, ", ".join(unknown), key, "MariaDB" if family == "mariadb" else "MySQL/Percona Server"))
            continue
        if key_kind(level_key) != "global":
            misplaced = sorted(name for name in level.privs if name not in DATABASE_LEVEL)
            if misplaced:
                errors.append("%s: %s on %s: global privileges can only be granted on '*.*'"
                              % (variable, ", ".join(misplaced), key))
    return errors


def int_errors(variable, value, low, high):
    """A sentence when `value` is not a whole number within low..high, else []."""
    if isinstance(value, bool) or not re.match(r"^-?\d+$", str(value).strip()):
        return ["%s=%r: must be a whole number from %d to %d" % (variable, value, low, high)]
    number = int(str(value).strip())
    if not low <= number <= high:
        return ["%s=%d: must be from %d to %d" % (variable, number, low, high)]
    return []


def schema_errors(variable, name):
    """MySQL schema names: at most 64 characters; the roles accept letters, digits, _ $ - (no quoting games)."""
    try:
        validate_identifier(name, "schema")
    except PrivilegeError as err:
        return ["%s: %s" % (variable, err)]
    return []


def account_errors(variable, name, host, family):
    errors = []
    try:
        validate_account(name, host)
    except PrivilegeError as err:
        return ["%s: %s" % (variable, err)]
    limit = MAX_USER_LENGTH.get(family, 32)
    if len(name) > limit:
        errors.append("%s: user name %r is longer than %d characters, the limit of this flavor"
                      % (variable, name, limit))
    return errors


def server_id_for(address, explicit=0):
    """The server_id a host gets: the explicit one when > 0, else 256 * third octet + fourth octet of its IPv4."""
    if explicit and int(explicit) > 0:
        return int(explicit)
    octets = str(address).split(".")
    if len(octets) != 4 or not all(part.isdigit() for part in octets):
        raise ValueError("cannot derive a server_id from %r: set percona_server_server_id" % (address,))
    server_id = int(octets[2]) * 256 + int(octets[3])
    if server_id == 0:
        raise ValueError("address %s derives server_id 0, which MySQL refuses for replication: "
                         "set percona_server_server_id" % address)
    return server_id


def topology_errors(me, hosts):
    """Sentences about this host's replication topology, from the inventory.

    me: this host's inventory name; hosts: {inventory name: {"source": name or "", "server_id": int or None}}
    for every inventory host (server_id None when it cannot be known on the controller). Checks that the
    source is another inventory host, that following sources never loops back, and that no two servers of
    this host's replication topology (source, replicas, their replicas) share a server_id.
    """
    errors = []
    source = (hosts.get(me) or {}).get("source") or ""
    if source:
        if source == me:
            errors.append("percona_server_source=%s: a server cannot replicate from itself" % source)
        elif source not in hosts:
            errors.append("percona_server_source=%s: not a host of the inventory (the source must be an inventory "
                          "host, so its address and server_id are known)" % source)
        else:
            seen, current = [me], source
            while current and current in hosts:
                if current in seen:
                    errors.append("percona_server_source=%s: the chain %s loops back"
                                  % (source, " -> ".join(seen + [current])))
                    break
                seen.append(current)
                current = hosts[current].get("source") or ""
    # The topology: hosts linked to this one by source relationships, in either direction.
    members, frontier = set([me]), [me]
    while frontier:
        name = frontier.pop()
        linked = [hosts[name].get("source")] if name in hosts else []
        linked += [other for other, info in hosts.items() if info.get("source") == name]
        for other in linked:
            if other and other in hosts and other not in members:
                members.add(other)
                frontier.append(other)
    errors += server_id_clashes(dict((name, hosts[name].get("server_id")) for name in members),
                                "in one replication topology; replicas skip each other's events", only=me)
    return errors


def server_id_clashes(server_ids, why, only=None):
    """Sentences naming servers that share a server_id: server_ids {inventory name: id, or None when not known
    on the controller}; `why` says what the clash breaks; `only`: report only the clash of this host."""
    by_id = {}
    for name in sorted(server_ids):
        if server_ids[name] is not None:
            by_id.setdefault(server_ids[name], []).append(name)
    return ["percona_server_server_id: %s share server_id %d %s: set percona_server_server_id per host"
            % (", ".join(names), server_id, why)
            for server_id, names in sorted(by_id.items())
            if len(names) > 1 and (only is None or only in names)]


# Settings percona_server's base settings own (templates/base_settings.yml.j2), with the variable that sets
# each: an override of one of them would be replaced by the role's value without a word (and a server_id
# given there would escape the check that no two servers of a topology share one).
OWNED_SETTINGS = {
    "server_id": "percona_server_server_id",
    "port": "percona_server_port",
    "bind_address": "percona_server_bind_address",
    "binlog_expire_logs_seconds": "percona_server_binlog_expire_seconds",
    "read_only": "percona_server_source (a replica is read-only)",
    "super_read_only": "percona_server_source (a replica is read-only)",
}


def removed_option_errors(overrides, prefix, flavor, version):
    """The overrides the flavor's release series removed (mysql_removed_options), one sentence each naming the
    release and the replacement. Renames with the same meaning are not refused: the plan translates them."""
    if flavor not in FLAVORS or not isinstance(overrides, dict):
        return []
    try:
        planned = plan_version(version or FLAVORS[flavor]["default_series"])
    except FlavorError as err:
        return ["%sversion=%r: %s" % (prefix, version, err)]
    return mysql_removed_options.refusals(overrides, flavor, planned, "%soverrides.%%s" % prefix)


def override_errors(overrides, prefix="percona_server_", flavor=None, version=None):
    """Overrides must be a dict of name: scalar; names and values are checked further by the tuning engine.
    With the flavor (and its release series) an override that series removed is refused here, before any change."""
    if not isinstance(overrides, dict):
        return ["%soverrides must be a dict of setting: value, got %r" % (prefix, overrides)]
    errors = removed_option_errors(overrides, prefix, flavor, version) if flavor else []
    for name, value in overrides.items():
        owner = OWNED_SETTINGS.get(str(name).strip().lower().replace("-", "_"))
        if prefix == "percona_server_" and owner:
            errors.append("%soverrides.%s: the role sets it from %s; set that instead" % (prefix, name, owner))
        elif value is None or isinstance(value, (dict, list)):
            errors.append("%soverrides.%s: must be a single value, got %r" % (prefix, name, value))
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
            errors.append("%soverrides.%s=%s: negative values are refused" % (prefix, name, value))
        elif re.match(r"^\s*-\d", str(value)):
            errors.append("%soverrides.%s=%s: negative values are refused" % (prefix, name, value))
    return errors


# The numbers a MySQL-family role takes: (variable without its prefix, lowest, highest).
NUMBER_RANGES = (
    ("port", 1, 65535),
    ("server_id", 0, MAX_SERVER_ID),
    ("binlog_expire_seconds", 0, MAX_SERVER_ID),
    ("rto_minutes", 1, 1440),
    ("redo_mb_per_hour", 0, 10 ** 7),
    ("redo_sample_seconds", 0, 3600),
    ("restart_max_lag_seconds", 0, 86400),
    ("restart_gate_timeout", 1, 86400),
    ("switchover_timeout", 1, 3600),
    ("switchover_drain_timeout", 0, 3600),
    # group_replication's, with the ranges the server accepts for the variables they set (MySQL manual,
    # "Group Replication System Variables"), and its gates'.
    ("member_weight", 0, 100),
    ("member_expel_timeout", 0, 3600),
    ("autorejoin_tries", 0, 2016),
    ("unreachable_majority_timeout", 0, 31536000),
    ("flow_control_threshold", 0, 2147483647),
    ("clone_threshold", 1, 9223372036854775807),
    ("transaction_size_limit", 0, 2147483647),
    ("auto_increment_increment", 0, 65535),
    ("gate_timeout", 1, 86400),
    ("gate_max_queue", 0, 2147483647),
    # the cluster roles' drain of a member on the proxies in front (pxc_galera, group_replication)
    ("drain_timeout", 0, 3600),
)


def file_name_errors(inputs, prefix):
    """The option file and the pending-restart file live in the server's include directory, which mysqld reads
    for *.cnf files: the option file must be one, the pending-restart file must not (mysqld would read it)."""
    errors = []
    for key, wants_cnf in (("config_file", True), ("restart_pending_file", False)):
        name = inputs.get(key)
        if name is None:
            continue
        if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
            errors.append("%s%s=%r: must be a file name (no directory, not hidden)" % (prefix, key, name))
        elif wants_cnf and not name.endswith(".cnf"):
            errors.append("%s%s=%r: must end in .cnf, or the server never reads it" % (prefix, key, name))
        elif not wants_cnf and name.endswith((".cnf", ".ini")):
            errors.append("%s%s=%r: must not end in .cnf or .ini: the server would read it as options"
                          % (prefix, key, name))
    return errors


def proxies_errors(label, proxies, inventory, members):
    """A list of ProxySQL hosts: inventory names, none of them a member of the cluster it fronts."""
    if not isinstance(proxies, list) or not all(isinstance(name, str) and name for name in proxies):
        return ["%s=%r: must be a list of inventory host names (the ProxySQL hosts in front)" % (label, proxies)]
    errors = []
    unknown = [name for name in proxies if name not in inventory]
    if unknown:
        errors.append("%s names %s, not hosts of the inventory: list the ProxySQL hosts in front of the cluster "
                      "(or [] for none)" % (label, ", ".join(unknown)))
    members = [name for name in proxies if name in members]
    if members:
        errors.append("%s names %s, a member of the cluster itself: list the ProxySQL hosts in front of it"
                      % (label, ", ".join(members)))
    return errors


def role_errors(inputs, prefix="percona_server_"):
    """Every refusal of a MySQL-family role's inputs: a dict of its variables without the role's prefix.

    percona_server and the cluster roles layered on it (pxc_galera, group_replication) share these checks;
    `prefix` names the variables in the messages. Only the keys present are checked; with `flavor` (and
    `version`, the release series, empty for the flavor's default) the overrides that series removed are refused.
    """
    family = inputs.get("family", "mysql")
    errors = []
    for key, low, high in NUMBER_RANGES:
        if key in inputs:
            errors += int_errors(prefix + key, inputs[key], low, high)
    # server_id 0 derives it from the address: that address must allow it.
    if "address" in inputs and "server_id" in inputs and str(inputs["server_id"]).strip() == "0":
        try:
            server_id_for(inputs["address"], 0)
        except ValueError as err:
            errors.append("%saddress=%r: %s" % (prefix, inputs["address"], err))
    errors += file_name_errors(inputs, prefix)
    # -e key=value gives strings: the words Ansible's bool filter reads as true or false are accepted too
    for key in ("restart_hand_over",):
        value = inputs.get(key, True)
        if not isinstance(value, bool) and str(value).lower() not in ("true", "false", "yes", "no"):
            errors.append("%s%s=%r: must be true or false" % (prefix, key, value))
    errors += override_errors(inputs.get("overrides") or {}, prefix, inputs.get("flavor"), inputs.get("version"))
    for index, database in enumerate(inputs.get("databases") or []):
        errors += schema_errors("%sdatabases[%d].name" % (prefix, index), (database or {}).get("name"))
    for index, user in enumerate(inputs.get("users") or []):
        user = user or {}
        label = "%susers[%d] (%s@%s)" % (prefix, index, user.get("name"), user.get("host", "%"))
        errors += account_errors(label, user.get("name"), user.get("host", "%"), family)
        errors += privilege_errors(label, user.get("privileges"), family)
        if user.get("state", "present") != "absent" and not user.get("password"):
            errors.append("%s: has no password (no default password)" % label)
    # The proxies that drain a member before a planned stop: inventory hosts (inputs["inventory"], every host
    # name of the inventory), not the cluster's own members.
    if "proxies" in inputs:
        errors += proxies_errors(prefix + "proxies", inputs["proxies"], inputs.get("inventory") or (),
                                 inputs.get("members") or ())
    # The account replicas (percona_server) or joining members (group_replication) connect with.
    for key in ("replication_user", "recovery_user"):
        if inputs.get(key) is not None:
            errors += account_errors(prefix + key, inputs[key], "%", family)
    return errors


def restart_order(names, sources):
    """`names` ordered for a rolling restart: replicas before their source, the deepest first, roots last
    (rolling.rolling_order, the order of every engine's rolling operations).

    sources: {inventory name: its source or ""} from the inventory. Ties keep the inventory order of `names`.
    """
    return rolling_order(names, sources=sources)
