# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Declarative ProxySQL admin tables: pure planning functions (unit tested) used by the proxysql_config module.

A declaration is {table: [row, ...]}. Each row names its key columns (the table's primary key in ProxySQL's
admin schema) and any other columns it wants to pin; columns it does not name keep whatever the server has.
The planner compares the declaration with the rows of the admin (memory) tables, and returns the INSERT /
UPDATE / DELETE statements of the difference plus the LOAD ... TO RUNTIME / SAVE ... TO DISK commands of the
modules whose tables changed, nothing else. Everything is compared as text, because ProxySQL's admin
interface returns every value as a string.

Passwords: ProxySQL keeps a clear password in mysql_users until someone runs SAVE MYSQL USERS FROM RUNTIME
(or LOAD/SAVE with admin-hash_passwords), after which the memory table holds the hash. A clear declared
password therefore equals a stored value that is either the same text or its mysql_native_password hash
('*' + upper hex SHA1(SHA1(pw))) or its caching_sha2_password hash ('$A$005$' + salt + SHA-256 crypt).
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import binascii
import collections

from ansible_collections.dbops.clusters.plugins.module_utils.mysql_privileges import password_matches

# table: (key columns, the admin module whose LOAD/SAVE commands publish it)
TABLES = {
    "mysql_servers": (("hostgroup_id", "hostname", "port"), "MYSQL SERVERS"),
    "mysql_users": (("username", "backend"), "MYSQL USERS"),
    "mysql_query_rules": (("rule_id",), "MYSQL QUERY RULES"),
    "mysql_replication_hostgroups": (("writer_hostgroup",), "MYSQL SERVERS"),
    "mysql_galera_hostgroups": (("writer_hostgroup",), "MYSQL SERVERS"),
    "mysql_group_replication_hostgroups": (("writer_hostgroup",), "MYSQL SERVERS"),
    "mysql_hostgroup_attributes": (("hostgroup_id",), "MYSQL SERVERS"),
    "global_variables": (("variable_name",), None),  # MYSQL or ADMIN VARIABLES, by the name's prefix
    "proxysql_servers": (("hostname", "port"), "PROXYSQL SERVERS"),
    "scheduler": (("id",), "SCHEDULER"),
}

# Key columns a row may leave out, with ProxySQL's own default.
KEY_DEFAULTS = {
    "mysql_servers": {"port": "3306"},
    "mysql_users": {"backend": "1"},
    "proxysql_servers": {"port": "6032"},
}

# Tables whose unmanaged rows must never be deleted (ProxySQL needs every variable).
NEVER_PRUNE = ("global_variables",)

SECRET_COLUMNS = {"mysql_users": ("password",), "global_variables": ()}
SECRET_VARIABLES = ("admin-admin_credentials", "admin-cluster_password", "mysql-monitor_password",
                    "admin-stats_credentials")


class PlanError(Exception):
    """The declaration cannot be planned (unknown table, missing key column, pruning a table that must stay)."""


def as_text(value):
    """ProxySQL's admin interface speaks text: compare every value the way it would print it."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def row_key(table, row):
    """The tuple of key column values of a row, with ProxySQL's defaults for omitted key columns."""
    keys = TABLES[table][0]
    defaults = KEY_DEFAULTS.get(table, {})
    values = []
    for column in keys:
        if column in row and row[column] is not None:
            values.append(as_text(row[column]))
        elif column in defaults:
            values.append(defaults[column])
        else:
            raise PlanError("a row of %s has no %s (its key is %s): %r"
                            % (table, column, ", ".join(keys), redact(table, row)))
    return tuple(values)


def load_module(table, row):
    """The admin module name used in LOAD/SAVE for this row (global variables: by the variable's prefix)."""
    module = TABLES[table][1]
    if module:
        return module
    name = as_text(row.get("variable_name", ""))
    if name.startswith("mysql-"):
        return "MYSQL VARIABLES"
    if name.startswith("admin-"):
        return "ADMIN VARIABLES"
    raise PlanError("global_variables: %r is neither a mysql- nor an admin- variable "
                    "(the module only publishes those two)" % name)


def hashed_password_matches(stored, clear):
    """True when the stored mysql_users.password is the clear password itself or one of its hashes."""
    if stored is None or clear is None:
        return stored == clear
    if stored == clear:
        return True
    if stored.startswith("*") and len(stored) == 41:
        return bool(password_matches("mysql_native_password", stored, clear))
    if stored.startswith("$A$"):
        return bool(password_matches("caching_sha2_password", stored, clear))
    # ProxySQL may show a caching_sha2 hash hex-encoded, because the salt holds bytes that are not text.
    try:
        raw = binascii.unhexlify(stored)
    except (binascii.Error, TypeError, ValueError):
        return False
    if raw.startswith(b"$A$"):
        return bool(password_matches("caching_sha2_password", raw, clear))
    return False


def value_matches(table, column, stored, desired):
    stored, desired = as_text(stored), as_text(desired)
    if table == "mysql_users" and column == "password":
        if desired is not None and (desired.startswith("*") and len(desired) == 41 or desired.startswith("$A$")):
            return stored == desired            # the declaration itself is a hash: compare as text
        return hashed_password_matches(stored, desired)
    return stored == desired


def is_secret(table, column, row):
    if column in SECRET_COLUMNS.get(table, ()):
        return True
    return table == "global_variables" and column == "variable_value" and \
        as_text(row.get("variable_name")) in SECRET_VARIABLES


def redact(table, row):
    """A copy of a row that can be logged and returned: secret columns become '********'."""
    return dict((column, "********" if is_secret(table, column, row) and value not in (None, "") else value)
                for column, value in row.items())


def index_rows(table, rows):
    indexed = {}
    for row in rows:
        key = row_key(table, row)
        if key in indexed:
            raise PlanError("%s is declared twice with key %s" % (table, ", ".join(
                "%s=%s" % pair for pair in zip(TABLES[table][0], key))))
        indexed[key] = row
    return indexed


def plan_table(table, desired_rows, current_rows, prune=False):
    """Changes of one table: {'insert': [row], 'update': [(key, {col: (old, new)}, row)], 'delete': [row]}.

    current_rows are the rows of the admin (memory) table as dicts of text.
    """
    if table not in TABLES:
        raise PlanError("unknown table %r: the module manages %s" % (table, ", ".join(sorted(TABLES))))
    if prune and table in NEVER_PRUNE:
        raise PlanError("%s cannot be pruned: ProxySQL needs every variable" % table)
    desired = index_rows(table, desired_rows)
    current = dict((row_key(table, row), row) for row in current_rows)
    changes = {"insert": [], "update": [], "delete": []}
    for key, row in desired.items():
        if key not in current:
            if table == "global_variables":
                raise PlanError("global_variables: %s does not exist on this ProxySQL" % key[0])
            changes["insert"].append(row)
            continue
        differing = {}
        for column, value in row.items():
            if column in TABLES[table][0]:
                continue
            if column not in current[key]:
                raise PlanError("%s has no column %r (columns: %s)"
                                % (table, column, ", ".join(sorted(current[key]))))
            if not value_matches(table, column, current[key][column], value):
                differing[column] = (as_text(current[key][column]), as_text(value))
        if differing:
            changes["update"].append((key, differing, row))
    if prune:
        changes["delete"] = [row for key, row in current.items() if key not in desired]
    return changes


def _where(table, key):
    columns = TABLES[table][0]
    return " AND ".join("%s=%%s" % column for column in columns), list(key)


def statements(table, changes):
    """[(sql with placeholders, args)] applying one table's changes to the admin memory table."""
    result = []
    for row in changes["delete"]:
        where, args = _where(table, row_key(table, row))
        result.append(("DELETE FROM %s WHERE %s" % (table, where), args))
    for key, differing, row in changes["update"]:
        where, args = _where(table, key)
        columns = sorted(differing)
        sets = ", ".join("%s=%%s" % column for column in columns)
        result.append(("UPDATE %s SET %s WHERE %s" % (table, sets, where),
                       [as_text(row[column]) for column in columns] + args))
    for row in changes["insert"]:
        full = dict(row)
        for column, default in KEY_DEFAULTS.get(table, {}).items():
            full.setdefault(column, default)
        columns = sorted(full)
        statement = "INSERT INTO %s (%s) VALUES (%s)" % (table, ", ".join(columns), ", ".join(["%s"] * len(columns)))
        result.append((statement, [as_text(full[column]) for column in columns]))
    return result


def changed_modules(table, changes):
    """Admin modules (MYSQL SERVERS, MYSQL VARIABLES ...) that a table's changes require to publish."""
    rows = changes["insert"] + changes["delete"] + [row for dummy, dummy2, row in changes["update"]]
    return set(load_module(table, row) for row in rows)


def publish_commands(modules, save=True):
    """LOAD ... TO RUNTIME (and SAVE ... TO DISK) for each changed admin module, in a stable order."""
    order = ["MYSQL VARIABLES", "ADMIN VARIABLES", "MYSQL SERVERS", "MYSQL USERS", "MYSQL QUERY RULES",
             "PROXYSQL SERVERS", "SCHEDULER"]
    commands = []
    for module in sorted(modules, key=order.index):
        commands.append("LOAD %s TO RUNTIME" % module)
        if save:
            commands.append("SAVE %s TO DISK" % module)
    return commands


def unpublished_modules(declaration, current_tables, saved_tables):
    """Admin modules whose memory rows differ from what is saved on disk, for the declared tables.

    A run that failed half-way (or a hand edit never loaded) leaves memory ahead of runtime and disk; the
    declared rows then match memory and nothing would ever publish them. Comparing memory with the disk
    copy finds them. Global variables are compared only for the declared names.
    """
    modules = set()
    for table in declaration:
        if table not in saved_tables:
            continue
        memory, disk = current_tables.get(table, []), saved_tables[table]
        if table == "global_variables":
            names = set(as_text(row["variable_name"]) for row in declaration[table] or [])
            memory = [row for row in memory if as_text(row.get("variable_name")) in names]
            disk = [row for row in disk if as_text(row.get("variable_name")) in names]
        if _canonical(memory) != _canonical(disk):
            for row in memory + disk:
                modules.add(load_module(table, row))
    return modules


def _canonical(rows):
    """Rows as a multiset, order-free. Counted, never sorted: a NULL column (None) beside text in another row
    cannot be ordered, and NULL must stay different from ''."""
    return collections.Counter(tuple(sorted((column, as_text(value)) for column, value in row.items()))
                               for row in rows)


def plan(declaration, current_tables, prune_tables=(), save=True, saved_tables=None):
    """The whole plan: {'changes': {table: changes}, 'statements': [...], 'publish': [...], 'diff': {...}}.

    declaration: {table: [row]}; current_tables: {table: [current row]} for every declared table;
    prune_tables: tables whose undeclared rows are deleted; saved_tables: the disk copies of the declared
    tables, to publish memory rows that an earlier run left unpublished.
    """
    for table in prune_tables:
        if table not in declaration:
            raise PlanError("prune names %s, which is not declared (declare it, even as an empty list)" % table)
    all_changes, sql, modules = {}, [], set()
    before, after = {}, {}
    for table in sorted(declaration):
        changes = plan_table(table, declaration[table] or [], current_tables.get(table, []),
                             prune=table in prune_tables)
        if not any(changes.values()):
            continue
        all_changes[table] = changes
        sql.extend(statements(table, changes))
        modules |= changed_modules(table, changes)
        before[table] = describe_changes(table, changes, side="before")
        after[table] = describe_changes(table, changes, side="after")
    unpublished = unpublished_modules(declaration, current_tables, saved_tables or {}) - modules
    modules |= unpublished
    return {"changes": all_changes, "statements": sql, "publish": publish_commands(modules, save),
            "modules": sorted(modules), "unpublished": sorted(unpublished),
            "diff": {"before": before, "after": after}}


def describe_changes(table, changes, side):
    """Lines for --diff: one per changed row, secrets redacted."""
    lines = []
    keys = TABLES[table][0]
    for row in changes["delete"]:
        if side == "before":
            lines.append(redact(table, row))
    for row in changes["insert"]:
        if side == "after":
            lines.append(redact(table, row))
    for key, differing, row in changes["update"]:
        entry = dict(zip(keys, key))
        for column, (old, new) in differing.items():
            value = old if side == "before" else new
            entry[column] = "********" if is_secret(table, column, row) else value
        lines.append(entry)
    return lines


def login_attempts(given, fallback):
    """The logins to try, in order: [(label, {user, password, host, port})], without repeats.

    given: what the credentials file (and the login_* options) say; fallback: the inventory's password and
    address, which the role has declared and may already have applied. A role rewrites its credentials file
    only after ProxySQL has taken a change, so a run that stopped in between leaves the file with the old
    password or the old address: the file is tried first (it names what ProxySQL had), then the inventory's
    password, then the inventory's address with each password. No setting of the file is ever the only way in.
    """
    attempts, seen = [], set()
    passwords = [("", given.get("password"))]
    if fallback.get("password") is not None:
        passwords.append(("password", fallback["password"]))
    addresses = [("", given.get("host"), given.get("port"))]
    if fallback.get("host") or fallback.get("port"):
        addresses.append(("address", fallback.get("host") or given.get("host"),
                          fallback.get("port") or given.get("port")))
    for address_label, host, port in addresses:
        for password_label, password in passwords:
            key = (host, int(port), password)
            if key in seen:
                continue
            seen.add(key)
            parts = [part for part in (address_label, password_label) if part]
            label = "fallback " + " and ".join(parts) if parts else "given"
            attempts.append((label, dict(given, host=host, port=int(port), password=password)))
    return attempts


def summary(result):
    """Counts per table for the module's return value: {table: {'insert': n, 'update': n, 'delete': n}}."""
    return dict((table, dict((kind, len(rows)) for kind, rows in changes.items()))
                for table, changes in result["changes"].items())
