# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Checks of the proxysql role's inputs, run on the controller before the first change.

Each check returns sentences that name the variable and the value at fault (never a password). The ranges are
ProxySQL 2.x's own (lib/MySQL_Thread.cpp: a value outside them is stored in global_variables and then ignored
at LOAD ... TO RUNTIME without an error to the client) and its admin schema's CHECK constraints (hostgroup
tables). Pure functions, unit tested in tests/unit/test_proxysql_inputs.py.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import re

from ansible_collections.dbops.clusters.plugins.module_utils.mysql_inputs import int_errors

MAX_HOSTGROUP = 2 ** 31 - 1      # hostgroup ids are SQLite INT columns read into C ints
WEEK_MS = 7 * 24 * 3600 * 1000

# (variable without its prefix, lowest, highest): ProxySQL's ranges, or the role's where it derives more than
# one variable from one input (monitor_interval_ms also gives the connect interval, ten times it).
NUMBER_RANGES = (
    ("admin_port", 1, 65535),
    ("mysql_port", 1, 65535),
    ("backend_port", 1, 65535),
    ("threads", 1, 255),                          # set_variable("threads"): 0 < n < 256
    ("max_connections", 1, 1000 * 1000),
    ("restart_sec", 0, 3600),
    ("monitor_interval_ms", 100, WEEK_MS // 10),  # ping interval 100 ms..7 days; connect interval x10
    ("healthcheck_interval_ms", 100, WEEK_MS),    # read_only and GR checks: 100 ms (Galera's 50) .. 7 days
    ("healthcheck_timeout_ms", 100, 600 * 1000),
    ("healthcheck_max_timeout_count", 1, 10),     # Galera and GR checks take 1..10
    ("monitor_connect_timeout_ms", 100, 600 * 1000),
    ("writer_is_also_reader", 0, 2),
    ("max_writers", 1, 1000 * 1000),
    ("shard_rule_id_base", 1, MAX_HOSTGROUP),
    ("query_retries_on_failure", 0, 1000),         # ProxySQL's range for both
    ("read_query_retries", 0, 1000),
)

# global_variables the role derives from its own inputs: set through proxysql_global_variables they would
# override the role's value on the server while the role (its credentials file, its wait for the admin port,
# proxysql.cnf) goes on using its own. Each names the input to use instead.
DERIVED_VARIABLES = {
    "admin-admin_credentials": "proxysql_admin_user/proxysql_admin_password",
    "admin-mysql_ifaces": "proxysql_admin_address/proxysql_admin_port",
    "admin-cluster_username": "proxysql_cluster_user",
    "admin-cluster_password": "proxysql_cluster_password",
    "mysql-interfaces": "proxysql_mysql_address/proxysql_mysql_port",
    "mysql-threads": "proxysql_threads",
    "mysql-max_connections": "proxysql_max_connections",
    "mysql-monitor_username": "proxysql_monitor_user",
    "mysql-monitor_password": "proxysql_monitor_password",
    "mysql-monitor_connect_interval": "proxysql_monitor_interval_ms",
    "mysql-monitor_ping_interval": "proxysql_monitor_interval_ms",
    "mysql-monitor_read_only_interval": "proxysql_healthcheck_interval_ms",
    "mysql-monitor_galera_healthcheck_interval": "proxysql_healthcheck_interval_ms",
    "mysql-monitor_groupreplication_healthcheck_interval": "proxysql_healthcheck_interval_ms",
    "mysql-monitor_galera_healthcheck_timeout": "proxysql_healthcheck_timeout_ms",
    "mysql-monitor_groupreplication_healthcheck_timeout": "proxysql_healthcheck_timeout_ms",
    "mysql-monitor_read_only_timeout": "proxysql_healthcheck_timeout_ms",
    "mysql-monitor_galera_healthcheck_max_timeout_count": "proxysql_healthcheck_max_timeout_count",
    "mysql-monitor_groupreplication_healthcheck_max_timeout_count": "proxysql_healthcheck_max_timeout_count",
    "mysql-monitor_read_only_max_timeout_count": "proxysql_healthcheck_max_timeout_count",
    "mysql-monitor_connect_timeout": "proxysql_monitor_connect_timeout_ms",
    "mysql-monitor_writer_is_also_reader": "proxysql_writer_is_also_reader",
    "mysql-query_retries_on_failure": "proxysql_query_retries_on_failure",
}
# Admin listeners that bind every address of the host whatever admin-mysql_ifaces says: the web UI and the
# REST API (each on its own port, with the admin or stats credentials).
EVERY_ADDRESS_LISTENERS = ("admin-web_enabled", "admin-restapi_enabled")

# Columns of mysql_query_rules that ProxySQL compiles as regular expressions.
REGEX_COLUMNS = ("match_digest", "match_pattern")
RE2_FLAGS = "imsU"                 # RE2's (?flags): no x, a, L or u
RE2_MAX_REPEAT = 1000              # RE2 refuses {n} and {n,m} above 1000
ROLE_RULE_IDS = (100, 110)         # the read/write split's rules (templates/tables.yml.j2)


def is_int(value):
    return not isinstance(value, bool) and re.match(r"^-?\d+$", str(value).strip()) is not None


def address_errors(variable, value):
    """An interface address: an IPv4 or IPv6 address (0.0.0.0 or :: for every address)."""
    try:
        ipaddress.ip_address(str(value))
    except ValueError:
        return ["%s=%r: must be an IP address (0.0.0.0 for every address)" % (variable, value)]
    return []


def listens_on_same_socket(address_a, address_b):
    """Two listeners on one port collide when their addresses are equal or either is a wildcard."""
    try:
        a, b = ipaddress.ip_address(str(address_a)), ipaddress.ip_address(str(address_b))
    except ValueError:
        return False
    return a == b or a.is_unspecified or b.is_unspecified


def re2_errors(pattern, engine=2):
    """Why ProxySQL cannot compile `pattern` as a query-rule regex, or None when it can.

    ProxySQL compiles match_digest and match_pattern with RE2 (mysql-query_processor_regex=2, its default) in
    quiet mode: a pattern RE2 refuses is accepted into mysql_query_rules and the rule then never matches. No
    RE2 binding is available on the controller, so the pattern is compiled with Python's `re` (same syntax for
    what both accept) and the constructs RE2 leaves out, which `re` accepts, are refused by a scan:
    backreferences, lookarounds, atomic groups, conditionals, comments, possessive quantifiers, \\Z and \\G,
    the flags x/a/L/u, and repeat counts above 1000. With engine 1 (PCRE) only the compilation is checked.
    RE2 syntax that `re` lacks (\\z, \\pN, (?U)) is refused too: a safe miss, said in the role's docs.
    """
    try:
        re.compile(pattern)
    except re.error as err:
        return "does not compile (%s)" % err
    except TypeError:
        return "must be text"
    if engine != 2:
        return None
    i, n, in_class, after_quantifier = 0, len(pattern), False, False
    while i < n:
        char = pattern[i]
        if char == "\\":
            following = pattern[i + 1:i + 2]
            if not in_class and following and following in "123456789":
                return "uses a backreference (\\%s), which RE2 does not support" % following
            if not in_class and following in ("Z", "G"):
                return "uses \\%s, which RE2 does not support (use \\z or $)" % following
            i, after_quantifier = i + 2, False
            continue
        if in_class:
            in_class = char != "]"
            i += 1
            continue
        if char == "[":
            in_class, after_quantifier = True, False
            i += 1
            if pattern[i:i + 1] == "^":
                i += 1
            if pattern[i:i + 1] == "]":   # a ']' first in a class is a literal
                i += 1
            continue
        if char == "(" and pattern[i + 1:i + 2] == "?":
            rest = pattern[i + 2:]
            for prefix, what in (("=", "a lookahead"), ("!", "a negative lookahead"), ("<=", "a lookbehind"),
                                 ("<!", "a negative lookbehind"), (">", "an atomic group"),
                                 ("P=", "a named backreference"), ("(", "a conditional"), ("#", "a comment group")):
                if rest.startswith(prefix):
                    return "uses %s (?%s...), which RE2 does not support" % (what, prefix)
            flags = re.match(r"^([A-Za-z-]*)[:)]", rest)
            if flags and any(flag not in RE2_FLAGS + "-" for flag in flags.group(1)):
                return "uses the flag(s) (?%s), RE2 knows only %s" % (flags.group(1), RE2_FLAGS)
            i, after_quantifier = i + 2, False
            continue
        counts = re.match(r"^\{(\d+)(?:,(\d*))?\}", pattern[i:]) if char == "{" else None
        if counts and any(int(count) > RE2_MAX_REPEAT for count in counts.groups() if count):
            return "repeats more than %d times (%s), which RE2 refuses" % (RE2_MAX_REPEAT, counts.group(0))
        if char == "+" and after_quantifier:
            return "uses a possessive quantifier (%s+), which RE2 does not support" % pattern[:i][-8:]
        if counts:
            i, after_quantifier = i + len(counts.group(0)), True
            continue
        # a '?' after a quantifier makes it lazy (RE2 has those): it ends the quantifier
        after_quantifier = char in "*+?" and not (char == "?" and after_quantifier)
        i += 1
    return None


def hostgroup_errors(hostgroups, topology):
    """proxysql_hostgroups: whole numbers, distinct, within the CHECK constraints of ProxySQL's hostgroup tables
    (writer, backup writer, offline >= 0, reader > 0, all four different in mysql_galera_hostgroups and
    mysql_group_replication_hostgroups, writer and reader different in mysql_replication_hostgroups)."""
    names = ("writer", "backup_writer", "reader", "offline")
    if not isinstance(hostgroups, dict):
        return ["proxysql_hostgroups must be a dict with %s, got %r" % (", ".join(names), hostgroups)]
    errors = []
    for name in names:
        if name not in hostgroups:
            errors.append("proxysql_hostgroups.%s is missing" % name)
        else:
            errors += int_errors("proxysql_hostgroups.%s" % name, hostgroups[name], 1 if name == "reader" else 0,
                                 MAX_HOSTGROUP)
    unknown = sorted(set(hostgroups) - set(names))
    if unknown:
        errors.append("proxysql_hostgroups: unknown key(s) %s (known: %s)" % (", ".join(unknown), ", ".join(names)))
    if errors:
        return errors
    used = names if topology in ("galera", "group_replication") else ("writer", "reader")
    by_id = {}
    for name in used:
        by_id.setdefault(int(hostgroups[name]), []).append(name)
    for number, sharing in sorted(by_id.items()):
        if len(sharing) > 1:
            errors.append("proxysql_hostgroups: %s share hostgroup id %d; each role of a backend needs its own "
                          "hostgroup" % (" and ".join(sharing), number))
    return errors


def user_errors(users):
    errors, seen = [], {}
    if not isinstance(users, list):
        return ["proxysql_users must be a list of mysql_users rows, got %r" % (users,)]
    for index, user in enumerate(users):
        label = "proxysql_users[%d]" % index
        if not isinstance(user, dict):
            errors.append("%s must be a dict with username and password" % label)
            continue
        name = user.get("username")
        if not isinstance(name, str) or not name.strip():
            errors.append("%s: username is required" % label)
            continue
        label = "%s (%s)" % (label, name)
        if user.get("password") is None or str(user["password"]) == "":
            errors.append("%s: has no password; ProxySQL would accept the user without one and the backend "
                          "refuse it" % label)
        if "default_hostgroup" in user:
            errors += int_errors(label + ".default_hostgroup", user["default_hostgroup"], 0, MAX_HOSTGROUP)
        backend = str(user.get("backend", 1))
        key = (name, backend)
        if key in seen:
            errors.append("%s: declared twice (also proxysql_users[%d])" % (label, seen[key]))
        seen[key] = index
    return errors


def query_rule_errors(rules, engine, reserved_ids):
    """proxysql_extra_query_rules: a rule_id each, distinct from each other and from the role's rules, regexes
    that ProxySQL's engine compiles, whole-number hostgroups."""
    errors, seen = [], {}
    if not isinstance(rules, list):
        return ["proxysql_extra_query_rules must be a list of mysql_query_rules rows, got %r" % (rules,)]
    for index, rule in enumerate(rules):
        label = "proxysql_extra_query_rules[%d]" % index
        if not isinstance(rule, dict):
            errors.append("%s must be a dict (a mysql_query_rules row)" % label)
            continue
        if "rule_id" not in rule or int_errors("", rule["rule_id"], 1, MAX_HOSTGROUP):
            errors.append("%s: rule_id must be a whole number from 1 to %d, got %r"
                          % (label, MAX_HOSTGROUP, rule.get("rule_id")))
            continue
        rule_id = int(str(rule["rule_id"]).strip())
        label = "%s (rule_id %d)" % (label, rule_id)
        if rule_id in reserved_ids:
            errors.append("%s: rule_id %d is the role's own %s" % (label, rule_id, reserved_ids[rule_id]))
        elif rule_id in seen:
            errors.append("%s: rule_id %d is declared twice (also proxysql_extra_query_rules[%d])"
                          % (label, rule_id, seen[rule_id]))
        seen[rule_id] = index
        for column in REGEX_COLUMNS:
            if rule.get(column) is not None:
                problem = re2_errors(rule[column], engine)
                if problem:
                    errors.append("%s.%s=%r: %s" % (label, column, rule[column], problem))
        for column in ("destination_hostgroup", "flagIN", "flagOUT"):
            if rule.get(column) is not None:
                errors += int_errors("%s.%s" % (label, column), rule[column], 0, MAX_HOSTGROUP)
    return errors


def shard_errors(shards):
    errors = []
    if not isinstance(shards, list):
        return ["proxysql_shard_tables must be a list of {table, hostgroup}, got %r" % (shards,)]
    for index, shard in enumerate(shards):
        label = "proxysql_shard_tables[%d]" % index
        if not isinstance(shard, dict):
            errors.append("%s must be a dict {table, hostgroup}" % label)
            continue
        # the table goes into a \b...\b pattern: a name with regex characters would change what it matches
        if not re.match(r"^[A-Za-z0-9_$]{1,64}$", str(shard.get("table", ""))):
            errors.append("%s.table=%r: must be a table name (letters, digits, _ and $, up to 64)"
                          % (label, shard.get("table")))
        errors += int_errors(label + ".hostgroup", shard.get("hostgroup"), 0, MAX_HOSTGROUP)
    return errors


def server_errors(servers):
    errors = []
    if not isinstance(servers, list):
        return ["proxysql_extra_servers must be a list of mysql_servers rows, got %r" % (servers,)]
    for index, server in enumerate(servers):
        label = "proxysql_extra_servers[%d]" % index
        if not isinstance(server, dict):
            errors.append("%s must be a dict (a mysql_servers row)" % label)
            continue
        errors += int_errors(label + ".hostgroup_id", server.get("hostgroup_id"), 0, MAX_HOSTGROUP)
        if not str(server.get("hostname") or "").strip():
            errors.append("%s: hostname is required" % label)
        if "port" in server:
            errors += int_errors(label + ".port", server["port"], 1, 65535)
    return errors


def global_variable_errors(variables):
    errors = []
    if not isinstance(variables, dict):
        return ["proxysql_global_variables must be a dict of name: value, got %r" % (variables,)]
    for name, value in sorted(variables.items()):
        label = "proxysql_global_variables.%s" % name
        if not re.match(r"^(mysql|admin)-[a-z0-9_]+$", str(name)):
            errors.append("%s: not a ProxySQL variable name (mysql-... or admin-..., lower case)" % label)
        elif name in DERIVED_VARIABLES:
            errors.append("%s: set by the role from %s; set that instead (the role also logs in, waits and "
                          "writes proxysql.cnf with it)" % (label, DERIVED_VARIABLES[name]))
        elif name in EVERY_ADDRESS_LISTENERS and str(value).strip().lower() in ("true", "1"):
            errors.append("%s=%s: opens an admin listener on every address of the host, whatever "
                          "proxysql_admin_address says" % (label, value))
        elif value is None or isinstance(value, (dict, list)):
            errors.append("%s: must be a single value" % label)
        elif name == "mysql-query_processor_regex":
            errors += int_errors(label, value, 1, 2)
    return errors


def listener_errors(inputs):
    """Admin, client and cluster listeners: addresses, and no two on one socket."""
    errors = []
    for key in ("admin_address", "mysql_address"):
        if key in inputs:
            errors += address_errors("proxysql_" + key, inputs[key])
    wanted = ("admin_address", "mysql_address", "admin_port", "mysql_port")
    if errors or not all(key in inputs for key in wanted) or \
            not all(is_int(inputs[key]) for key in ("admin_port", "mysql_port")):
        return errors
    if int(inputs["admin_port"]) == int(inputs["mysql_port"]) and \
            listens_on_same_socket(inputs["admin_address"], inputs["mysql_address"]):
        errors.append("proxysql_admin_port=%s is also proxysql_mysql_port on %s and %s: the admin and client "
                      "interfaces need different ports"
                      % (inputs["admin_port"], inputs["admin_address"], inputs["mysql_address"]))
    if inputs.get("cluster_enabled"):
        # the peers connect to this proxy's cluster address on proxysql_admin_port (its proxysql_servers row)
        admin = ipaddress.ip_address(str(inputs["admin_address"]))
        cluster = str(inputs.get("cluster_address", ""))
        if admin.is_loopback:
            errors.append("proxysql_admin_address=%s: ProxySQL Cluster peers cannot reach a loopback admin "
                          "interface" % admin)
        elif not admin.is_unspecified and address_errors("", cluster) == [] and \
                ipaddress.ip_address(cluster) != admin:
            errors.append("proxysql_cluster_address=%s: the peers connect there on proxysql_admin_port=%s, but "
                          "the admin interface listens on proxysql_admin_address=%s only"
                          % (cluster, inputs["admin_port"], admin))
    return errors


def role_errors(inputs):
    """Every refusal of the proxysql role's inputs: a dict of its variables without the proxysql_ prefix.

    Only the keys present are checked. `cluster_address` is this proxy's address for its ProxySQL Cluster peers
    (proxysql_cluster_address, else its inventory address).
    """
    errors = []
    for key, low, high in NUMBER_RANGES:
        if key in inputs:
            errors += int_errors("proxysql_" + key, inputs[key], low, high)
    errors += listener_errors(inputs)
    errors += hostgroup_errors(inputs.get("hostgroups", {}), inputs.get("topology", "galera")) \
        if "hostgroups" in inputs else []
    errors += user_errors(inputs.get("users") or [])
    variables = inputs.get("global_variables") or {}
    errors += global_variable_errors(variables)
    engine = int(variables["mysql-query_processor_regex"]) \
        if is_int(variables.get("mysql-query_processor_regex")) else 2
    reserved = {}
    if inputs.get("read_write_split", True):
        reserved.update((rule_id, "read/write split rule (proxysql_read_write_split)") for rule_id in ROLE_RULE_IDS)
    if is_int(inputs.get("shard_rule_id_base", 1000)):
        base = int(inputs.get("shard_rule_id_base", 1000))
        reserved.update((base + index, "sharding rule (proxysql_shard_tables[%d])" % index)
                        for index in range(len(inputs.get("shard_tables") or [])))
    errors += query_rule_errors(inputs.get("extra_query_rules") or [], engine, reserved)
    errors += shard_errors(inputs.get("shard_tables") or [])
    errors += server_errors(inputs.get("extra_servers") or [])
    return errors
