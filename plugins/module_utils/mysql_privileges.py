# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure helpers of the MySQL account and database modules: identifiers, privileges, grant diffs, password hashes.

Nothing here talks to a server, so all of it is unit tested (tests/unit/test_mysql_modules.py). The modules
read the server's state (information_schema, SHOW PRIVILEGES, mysql.user), hand it to these functions and
run the statements they build through mysql_connection.Session.

Statements carry the account as two placeholders (``%s@%s``) and are run with (user, host) as arguments;
PyMySQL substitutes arguments with Python's % operator, so a literal ``%`` in the statement text (a
wildcard in a database name) is written ``%%``.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import re

# ---------------------------------------------------------------------------------------------- identifiers

IDENTIFIER_RE = re.compile(r"^[A-Za-z0-9_$-]+$")
# Database names in grants may carry the LIKE wildcards % and _ and the backslash that escapes them.
GRANT_DB_RE = re.compile(r"^[A-Za-z0-9_$%\\-]+$")
CHARSET_RE = re.compile(r"^[A-Za-z0-9_]+$")
PLUGIN_RE = re.compile(r"^[A-Za-z0-9_]+$")
ACCOUNT_FORBIDDEN = ("'", '"', "`", "\\", "\x00", "\n", "\r")
SYSTEM_SCHEMAS = ("mysql", "information_schema", "performance_schema", "sys")
SOCKET_PLUGINS = ("auth_socket", "unix_socket")


class PrivilegeError(ValueError):
    """A name, privilege string or account that cannot be used safely."""


def validate_identifier(name, what="database", wildcards=False):
    """The name if it is a plain identifier (letters, digits, _ $ -; at most 64 characters), else PrivilegeError.

    With wildcards (database names in grants), % and the backslash that escapes _ and % are allowed too.
    Backticks and quotes are never allowed, so quoting cannot be broken out of.
    """
    if not isinstance(name, str) or not name:
        raise PrivilegeError("%s name must be a non-empty string" % what)
    if len(name) > 64:
        raise PrivilegeError("%s name %r is longer than 64 characters" % (what, name))
    pattern = GRANT_DB_RE if wildcards else IDENTIFIER_RE
    if not pattern.match(name):
        allowed = "letters, digits, _ $ - % \\" if wildcards else "letters, digits, _ $ -"
        raise PrivilegeError("%s name %r may contain only %s" % (what, name, allowed))
    return name


def quote_identifier(name, what="database", wildcards=False):
    """`name`, after validate_identifier."""
    return "`%s`" % validate_identifier(name, what, wildcards)


def escape_percent(text):
    """Text placed in a statement that is run with arguments: PyMySQL's % substitution needs %% for a literal %."""
    return text.replace("%", "%%")


def validate_name(value, what, pattern=CHARSET_RE):
    """A character set, collation or plugin name: letters, digits and underscores only."""
    if not isinstance(value, str) or not pattern.match(value):
        raise PrivilegeError("%s %r may contain only letters, digits and underscores" % (what, value))
    return value


def validate_account(user, host):
    """(user, host) if neither holds a quote, backtick, backslash or control character; lengths as MySQL allows."""
    if not isinstance(user, str) or not user:
        raise PrivilegeError("user name must be a non-empty string")
    if len(user) > 80:
        raise PrivilegeError("user name %r is longer than 80 characters" % user)
    if not isinstance(host, str) or not host:
        raise PrivilegeError("host must be a non-empty string ('%' for any host)")
    if len(host) > 255:
        raise PrivilegeError("host %r is longer than 255 characters" % host)
    for value, what in ((user, "user name"), (host, "host")):
        bad = [ch for ch in ACCOUNT_FORBIDDEN if ch in value]
        if bad or value != value.strip():
            raise PrivilegeError("%s %r contains a quote, backtick, backslash, control character or edge space"
                                 % (what, value))
    return user, host


def grantee(user, host):
    """The GRANTEE string of information_schema's privilege tables: 'user'@'host'."""
    return "'%s'@'%s'" % (user, host)


def is_local_host(host):
    """True for the hosts a root account may keep: localhost, 127.0.0.1, ::1."""
    return host.lower() in ("localhost", "127.0.0.1", "::1")


def database_sql(action, name, encoding=None, collation=None):
    """CREATE / ALTER / DROP DATABASE for a validated name; charset and collation are validated names, unquoted."""
    target = quote_identifier(name, "database")
    if action == "drop":
        return "DROP DATABASE %s" % target
    if action not in ("create", "alter"):
        raise PrivilegeError("unknown database action %r" % action)
    sql = "%s DATABASE %s CHARACTER SET %s" % (action.upper(), target, validate_name(encoding, "character set"))
    if collation:
        sql += " COLLATE %s" % validate_name(collation, "collation")
    return sql


# ----------------------------------------------------------------------------------------------- privileges

GLOBAL = "*.*"
# Privileges that an ALL at database or table level stands for, when the server knows them (SHOW PRIVILEGES):
# MySQL 8.0-9.x grant 18 at database level and 12 at table level; MariaDB adds DELETE HISTORY (both levels)
# and, from 11.3, SHOW CREATE ROUTINE (database level). Measured on MySQL 9.7 and MariaDB 11.8.
DATABASE_LEVEL = frozenset([
    "SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "REFERENCES", "INDEX", "ALTER",
    "CREATE TEMPORARY TABLES", "LOCK TABLES", "EXECUTE", "CREATE VIEW", "SHOW VIEW", "CREATE ROUTINE",
    "ALTER ROUTINE", "EVENT", "TRIGGER", "DELETE HISTORY", "SHOW CREATE ROUTINE"])
TABLE_LEVEL = frozenset([
    "SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "REFERENCES", "INDEX", "ALTER", "CREATE VIEW",
    "SHOW VIEW", "TRIGGER", "DELETE HISTORY"])
# Static global privileges of MySQL (columns of mysql.user). Any other global privilege there is dynamic, and
# MySQL keeps a grant option per dynamic privilege: REVOKE GRANT OPTION ON *.* leaves theirs in place.
MYSQL_STATIC_GLOBAL = frozenset([
    "SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "RELOAD", "SHUTDOWN", "PROCESS", "FILE",
    "REFERENCES", "INDEX", "ALTER", "SHOW DATABASES", "SUPER", "CREATE TEMPORARY TABLES", "LOCK TABLES",
    "EXECUTE", "REPLICATION SLAVE", "REPLICATION CLIENT", "CREATE VIEW", "SHOW VIEW", "CREATE ROUTINE",
    "ALTER ROUTINE", "CREATE USER", "EVENT", "TRIGGER", "CREATE TABLESPACE", "CREATE ROLE", "DROP ROLE"])
# Names MariaDB accepts but stores under another name (10.5+): compare with the stored one.
MARIADB_ALIASES = {
    "REPLICATION CLIENT": "BINLOG MONITOR",
    "REPLICA MONITOR": "SLAVE MONITOR",
    "REPLICATION REPLICA": "REPLICATION SLAVE",
}
PSEUDO = frozenset(["USAGE", "GRANT OPTION", "PROXY"])


class Level(object):
    """Privileges wanted at one level: a set of names or everything (all_), and whether WITH GRANT OPTION."""

    __slots__ = ("privs", "all_", "grant")

    def __init__(self, privs=(), all_=False, grant=False):
        self.privs = frozenset(privs)
        self.all_ = all_
        self.grant = grant

    def __eq__(self, other):
        return (isinstance(other, Level) and (self.privs, self.all_, self.grant)
                == (other.privs, other.all_, other.grant))

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash((self.privs, self.all_, self.grant))

    def __repr__(self):
        return "Level(%r, all_=%r, grant=%r)" % (sorted(self.privs), self.all_, self.grant)


def _strip_backticks(part):
    part = part.strip()
    if len(part) >= 2 and part[0] == part[-1] == "`":
        return part[1:-1]
    return part


def parse_priv_key(key):
    """'*.*', 'db.*', 'db.table' (optionally `quoted`) -> the normalised key, validating both names."""
    if not isinstance(key, str) or "." not in key:
        raise PrivilegeError("privilege key %r must look like '*.*', 'db.*' or 'db.table'" % (key,))
    db_part, table_part = key.strip().split(".", 1)
    db_name, table_name = _strip_backticks(db_part), _strip_backticks(table_part)
    if db_name == "*":
        if table_name != "*":
            raise PrivilegeError("privilege key %r: a table needs a database ('db.table')" % key)
        return GLOBAL
    validate_identifier(db_name, "database", wildcards=True)
    if table_name != "*":
        validate_identifier(table_name, "table")
    return "%s.%s" % (db_name, table_name)


def key_kind(key):
    """'global', 'database' or 'table' for a normalised key."""
    if key == GLOBAL:
        return "global"
    return "database" if key.endswith(".*") else "table"


def parse_priv_list(text):
    """'SELECT, insert ,GRANT' / 'ALL' / 'ALL PRIVILEGES,GRANT OPTION' / 'USAGE' -> Level.

    Names are upper-cased and inner whitespace collapsed. GRANT or GRANT OPTION sets the grant flag. Column
    privileges (SELECT (col)) are refused: this module manages database, table and global levels only.
    """
    if isinstance(text, (list, tuple)):
        items = list(text)
    elif isinstance(text, str):
        items = text.split(",")
    else:
        raise PrivilegeError("privileges must be a comma-separated string or a list, not %r" % (text,))
    privs, all_, grant = set(), False, False
    for item in items:
        if not isinstance(item, str):
            raise PrivilegeError("privilege %r is not a string" % (item,))
        name = " ".join(item.upper().split())
        if not name:
            continue
        if "(" in name or ")" in name:
            raise PrivilegeError("column privileges (%s) are not managed by this module" % item.strip())
        if not re.match(r"^[A-Z_ ]+$", name):
            raise PrivilegeError("privilege %r may contain only letters, underscores and spaces" % item.strip())
        if name in ("ALL", "ALL PRIVILEGES"):
            all_ = True
        elif name in ("GRANT", "GRANT OPTION"):
            grant = True
        elif name == "USAGE":
            continue
        else:
            privs.add(name)
    if all_ and privs:
        raise PrivilegeError("ALL cannot be combined with other privileges (%s)" % ", ".join(sorted(privs)))
    return Level(privs, all_, grant)


def normalize_privileges(privileges):
    """{key: 'PRIV,PRIV'} from the module's argument -> {normalised key: Level}; keys naming one level merge."""
    result = {}
    for key, text in (privileges or {}).items():
        norm = parse_priv_key(key)
        level = parse_priv_list(text)
        if norm in result:
            raise PrivilegeError("privilege keys %r name the same level twice" % key)
        result[norm] = level
    return result


def server_privileges(show_privileges_rows):
    """Upper-case privilege names from SHOW PRIVILEGES rows (dicts with 'Privilege'), without USAGE/GRANT OPTION/PROXY."""
    names = set()
    for row in show_privileges_rows:
        name = " ".join(str(row.get("Privilege", "")).upper().split())
        if name and name not in PSEUDO:
            names.add(name)
    return frozenset(names)


def all_privileges(kind, known):
    """The privileges an ALL grants at a level of this server: every known one globally, else the level's ones."""
    if kind == "global":
        return frozenset(known)
    return frozenset((DATABASE_LEVEL if kind == "database" else TABLE_LEVEL) & frozenset(known))


def resolve_names(level, key, known, mariadb=False):
    """The Level with MariaDB aliases replaced and ALL expanded; PrivilegeError for a name the level cannot hold."""
    kind = key_kind(key)
    allowed = all_privileges(kind, known)
    if level.all_:
        return Level(allowed, True, level.grant)
    privs = set()
    for name in level.privs:
        if mariadb and name not in known and MARIADB_ALIASES.get(name) in known:
            name = MARIADB_ALIASES[name]
        if name not in known:
            raise PrivilegeError("%s: unknown privilege %s (the server knows: %s)"
                                 % (key, name, ", ".join(sorted(known))))
        if name not in allowed:
            raise PrivilegeError("%s: privilege %s cannot be granted at %s level" % (key, name, kind))
        privs.add(name)
    return Level(privs, False, level.grant)


def current_privileges(user_rows, schema_rows, table_rows):
    """{key: {PRIVILEGE: grantable}} from information_schema rows of one grantee.

    user_rows: USER_PRIVILEGES (PRIVILEGE_TYPE, IS_GRANTABLE); schema_rows: SCHEMA_PRIVILEGES (+ TABLE_SCHEMA);
    table_rows: TABLE_PRIVILEGES (+ TABLE_SCHEMA, TABLE_NAME). A privilege listed twice (MySQL does so for a
    dynamic privilege after REVOKE GRANT OPTION) is grantable when any row says so. USAGE is left out, but a
    grant option held with USAGE alone is kept as {'USAGE': True}.
    """
    current = {}

    def add(key, row):
        name = " ".join(str(row["PRIVILEGE_TYPE"]).upper().split())
        grantable = str(row.get("IS_GRANTABLE", "NO")).upper() == "YES"
        if name == "USAGE" and not grantable:
            return
        level = current.setdefault(key, {})
        level[name] = level.get(name, False) or grantable

    for row in user_rows:
        add(GLOBAL, row)
    for row in schema_rows:
        add("%s.*" % row["TABLE_SCHEMA"], row)
    for row in table_rows:
        add("%s.%s" % (row["TABLE_SCHEMA"], row["TABLE_NAME"]), row)
    return dict((k, v) for k, v in current.items() if v)


def describe_current(current, known=None):
    """{key: 'PRIV,PRIV[,GRANT]'} of current_privileges, 'ALL' where a level holds everything ALL would grant."""
    result = {}
    for key, privs in current.items():
        names = set(privs) - set(["USAGE"])
        grant = any(privs.values())
        if known is not None and names and names == all_privileges(key_kind(key), known):
            text = ["ALL"]
        else:
            text = sorted(names) or ["USAGE"]
        if grant:
            text.append("GRANT")
        result[key] = ",".join(text)
    return result


def describe_desired(desired):
    """{key: 'PRIV,PRIV[,GRANT]'} of resolved Levels, the same shape as describe_current."""
    result = {}
    for key, level in desired.items():
        text = ["ALL"] if level.all_ else (sorted(level.privs) or ["USAGE"])
        if level.grant:
            text.append("GRANT")
        result[key] = ",".join(text)
    return result


def diff_privileges(desired, current, append=False, mysql_dynamic_grant_option=True):
    """Actions that turn current (current_privileges) into desired ({key: resolved Level}).

    Returns a list of (action, key, privileges) with action one of:
      'revoke'              REVOKE privileges ON key
      'revoke_grant_option' REVOKE GRANT OPTION ON key
      'grant'               GRANT privileges ON key           (privileges 'ALL' for ALL PRIVILEGES)
      'grant_with_option'   GRANT privileges ON key WITH GRANT OPTION
    Revokes come first. With append, nothing is revoked: levels and privileges not asked for stay.
    On MySQL a dynamic global privilege keeps its own grant option, so taking the option away revokes it and
    grants it again, around REVOKE GRANT OPTION, which then covers only the static privileges
    (mysql_dynamic_grant_option; false for MariaDB, whose grant option covers every global privilege).
    """
    revokes, grants = [], []
    for key in sorted(set(desired) | set(current)):
        want = desired.get(key)
        have = current.get(key, {})
        have_names = set(have) - set(["USAGE"])
        if want is None:
            if append or not have:
                continue
            if have_names:
                revokes.append(("revoke", key, sorted(have_names)))
            if any(grantable for name, grantable in have.items()
                   if key != GLOBAL or not mysql_dynamic_grant_option or name in MYSQL_STATIC_GLOBAL or name == "USAGE"):
                revokes.append(("revoke_grant_option", key, []))
            continue
        extra = have_names - set(want.privs)
        if extra and not append:
            revokes.append(("revoke", key, sorted(extra)))
        regrant = []
        if not want.grant and any(have.values()) and not append:
            static_option = True
            if key == GLOBAL and mysql_dynamic_grant_option:
                # MySQL 9.7: REVOKE GRANT OPTION ON *.* while a dynamic privilege holds its own grant option
                # leaves the privilege cache and mysql.global_grants disagreeing. Revoke those privileges
                # first, then the static grant option, then grant them again without it.
                regrant = sorted(name for name, grantable in have.items()
                                 if grantable and name in want.privs and name not in MYSQL_STATIC_GLOBAL
                                 and name != "USAGE")
                if regrant:
                    revokes.append(("revoke", key, regrant))
                static_option = any(grantable for name, grantable in have.items()
                                    if name in MYSQL_STATIC_GLOBAL or name == "USAGE")
            if static_option:
                revokes.append(("revoke_grant_option", key, []))
        missing = set(want.privs) - have_names
        if want.grant:
            missing |= set(name for name in want.privs if not have.get(name))
        missing |= set(regrant)
        if not missing:
            continue
        names = "ALL" if want.all_ and missing == set(want.privs) else sorted(missing)
        grants.append(("grant_with_option" if want.grant else "grant", key, names))
    return revokes + grants


def level_sql(key):
    """The ON clause target of a key, quoted and with % doubled for PyMySQL: *.*, `db`.*, `db`.`table`."""
    if key == GLOBAL:
        return GLOBAL
    db_name, table_name = key.split(".", 1)
    db_sql = escape_percent(quote_identifier(db_name, "database", wildcards=True))
    if table_name == "*":
        return "%s.*" % db_sql
    return "%s.%s" % (db_sql, escape_percent(quote_identifier(table_name, "table")))


def action_sql(action):
    """One statement for an action of diff_privileges, with %s@%s for the account (run with (user, host))."""
    kind, key, names = action
    target = level_sql(key)
    if kind == "revoke_grant_option":
        return "REVOKE GRANT OPTION ON %s FROM %%s@%%s" % target
    privs = "ALL PRIVILEGES" if names == "ALL" else ", ".join(names)
    if kind == "revoke":
        return "REVOKE %s ON %s FROM %%s@%%s" % (privs, target)
    if kind == "grant":
        return "GRANT %s ON %s TO %%s@%%s" % (privs, target)
    if kind == "grant_with_option":
        return "GRANT %s ON %s TO %%s@%%s WITH GRANT OPTION" % (privs, target)
    raise PrivilegeError("unknown action %r" % kind)


# ------------------------------------------------------------------------------------------------- accounts

def create_user_sql(plugin=None, with_password=True, tls_required=None, mariadb=False):
    """CREATE USER with placeholders: (user, host[, password]) are its arguments."""
    sql = "CREATE USER %s@%s"
    sql += identified_sql(plugin, with_password, mariadb)
    if tls_required:
        sql += " REQUIRE SSL"
    return sql


def identified_sql(plugin=None, with_password=True, mariadb=False):
    """' IDENTIFIED ...' for CREATE/ALTER USER; the password, when used, is the last placeholder."""
    if plugin:
        validate_name(plugin, "plugin", PLUGIN_RE)
    if not plugin:
        return " IDENTIFIED BY %s" if with_password else ""
    if mariadb:
        return " IDENTIFIED VIA %s USING PASSWORD(%%s)" % plugin if with_password else " IDENTIFIED VIA %s" % plugin
    return " IDENTIFIED WITH %s BY %%s" % plugin if with_password else " IDENTIFIED WITH %s" % plugin


def rotation_sql(plugin, mariadb=False, retain=False):
    """' IDENTIFIED ...' for an ALTER USER that sets a new password on an account authenticated by plugin. retain
    keeps the current password valid beside it: MySQL's RETAIN CURRENT PASSWORD (8.0.14 and later); MariaDB has no
    dual passwords, but an account may authenticate by several methods tried in turn (IDENTIFIED VIA ... OR ...),
    so the current stored string becomes a second method of the same plugin. Placeholders: the new password, then
    on MariaDB with retain the stored string."""
    if not retain:
        return identified_sql(plugin, True, mariadb)
    if mariadb:
        validate_name(plugin, "plugin", PLUGIN_RE)
        return " IDENTIFIED VIA %s USING PASSWORD(%%s) OR %s USING %%s" % (plugin, plugin)
    return identified_sql(plugin, True, mariadb) + " RETAIN CURRENT PASSWORD"


def discard_old_sql(plugin, mariadb=False):
    """What follows ALTER USER to drop the password rotation_sql kept: DISCARD OLD PASSWORD, or on MariaDB the
    account's first method alone. Placeholder on MariaDB: that method's stored string."""
    if mariadb:
        validate_name(plugin, "plugin", PLUGIN_RE)
        return " IDENTIFIED VIA %s USING %%s" % plugin
    return " DISCARD OLD PASSWORD"


def tls_satisfied(ssl_type, tls_required):
    """Whether mysql.user.ssl_type meets tls_required: any REQUIRE (SSL, X509, SUBJECT...) counts as TLS required."""
    requires = (ssl_type or "").upper() not in ("", "NONE")
    return requires == bool(tls_required)


def host_matches(pattern, client_host):
    """MySQL's host matching of an account pattern (% and _ wildcards, case-insensitive) against a client host."""
    regex = "".join(".*" if ch == "%" else "." if ch == "_" else re.escape(ch) for ch in pattern)
    return re.match("^%s$" % regex, client_host, re.IGNORECASE) is not None


def socket_login_target(accounts, user, host):
    """Whether a socket login as user surely authenticates against account user@host.

    accounts: (user, host) pairs of mysql.user. A socket client is 'localhost'. The server takes the most
    specific matching host first, and for one host the named user before the anonymous one. Answered True only
    when user@host is the sole candidate or is user@localhost (nothing is more specific); otherwise the result
    of a failed login would prove nothing.
    """
    if not host_matches(host, "localhost"):
        return False
    if host.lower() == "localhost":
        return True
    candidates = [(u, h) for u, h in accounts if u in (user, "") and host_matches(h, "localhost")]
    return candidates == [(user, host)]


# -------------------------------------------------------------------------------------------- password hashes

CRYPT_ALPHABET = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
# Byte order of the SHA-256 crypt encoding (Drepper's specification).
_SHA256_CRYPT_ORDER = ((0, 10, 20), (21, 1, 11), (12, 22, 2), (3, 13, 23), (24, 4, 14), (15, 25, 5),
                       (6, 16, 26), (27, 7, 17), (18, 28, 8), (9, 19, 29))


def _to_bytes(value):
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


def native_password_hash(password):
    """mysql_native_password's stored form: '*' + upper hex SHA1(SHA1(password))."""
    return "*" + hashlib.sha1(hashlib.sha1(_to_bytes(password)).digest()).hexdigest().upper()


def _crypt_b64(b2, b1, b0, count):
    word = (b2 << 16) | (b1 << 8) | b0
    out = []
    for dummy in range(count):
        out.append(CRYPT_ALPHABET[word & 0x3F])
        word >>= 6
    return "".join(out)


def sha256_crypt(password, salt, rounds=5000):
    """The 43-character digest of SHA-256 crypt (Drepper), which caching_sha2_password stores.

    MySQL stores '$A$' + rounds/1000 as three hex digits + '$' + a 20-byte salt + this digest of the password.
    """
    key, salt = _to_bytes(password), _to_bytes(salt)
    alt = hashlib.sha256(key + salt + key).digest()
    ctx = hashlib.sha256(key + salt)
    length = len(key)
    while length > 32:
        ctx.update(alt)
        length -= 32
    ctx.update(alt[:length])
    length = len(key)
    while length:
        ctx.update(alt if length & 1 else key)
        length >>= 1
    digest = ctx.digest()
    dp = hashlib.sha256(key * len(key)).digest()
    p_bytes = (dp * (len(key) // 32 + 1))[:len(key)]
    ds = hashlib.sha256(salt * (16 + bytearray(digest)[0])).digest()
    s_bytes = (ds * (len(salt) // 32 + 1))[:len(salt)]
    for count in range(rounds):
        ctx = hashlib.sha256(p_bytes if count & 1 else digest)
        if count % 3:
            ctx.update(s_bytes)
        if count % 7:
            ctx.update(p_bytes)
        ctx.update(digest if count & 1 else p_bytes)
        digest = ctx.digest()
    c = bytearray(digest)
    out = "".join(_crypt_b64(c[a], c[b], c[d], 4) for a, b, d in _SHA256_CRYPT_ORDER)
    return out + _crypt_b64(0, c[31], c[30], 3)


def password_matches(plugin, stored, password):
    """True/False when the stored authentication string of plugin can be checked locally, else None.

    stored is the raw authentication_string (bytes). mysql_native_password: compare SHA1(SHA1()).
    caching_sha2_password: recompute SHA-256 crypt with the stored salt and rounds.
    """
    if stored is None:
        return None
    raw = _to_bytes(stored)
    if plugin == "mysql_native_password":
        if not raw.startswith(b"*") or len(raw) != 41:
            return None
        return raw.decode("ascii").upper() == native_password_hash(password)
    if plugin == "caching_sha2_password":
        if len(raw) != 70 or not raw.startswith(b"$A$") or raw[6:7] != b"$":
            return None
        try:
            rounds = int(raw[3:6].decode("ascii"), 16) * 1000
        except ValueError:
            return None
        return sha256_crypt(password, raw[7:27], rounds) == raw[27:].decode("ascii", "replace")
    return None


# ------------------------------------------------------------------------------------ authentication methods

def auth_methods(show_create_user):
    """[(plugin, authentication string or None)] from the text of SHOW CREATE USER, MySQL or MariaDB.

    MySQL: IDENTIFIED WITH 'auth_socket' [AS '...'] (and AND IDENTIFIED WITH for further factors).
    MariaDB: IDENTIFIED VIA mysql_native_password USING 'invalid' OR unix_socket, or IDENTIFIED BY PASSWORD
    '*hash'; a MariaDB account shown without IDENTIFIED has an empty password: [('mysql_native_password', '')].
    """
    text = show_create_user or ""
    methods = []
    for match in re.finditer(r"IDENTIFIED\s+WITH\s+'?([A-Za-z0-9_]+)'?(?:\s+AS\s+'((?:[^'\\]|\\.)*)')?", text):
        methods.append((match.group(1).lower(), match.group(2)))
    via = re.search(r"IDENTIFIED\s+VIA\s+(.*)$", text, re.S)
    if via:
        for match in re.finditer(r"(?:^|\s+OR\s+)([A-Za-z0-9_]+)(?:\s+USING\s+'((?:[^'\\]|\\.)*)')?",
                                 via.group(1)):
            methods.append((match.group(1).lower(), match.group(2)))
    if not methods:
        match = re.search(r"IDENTIFIED\s+BY\s+PASSWORD\s+'([^']*)'", text)
        methods.append(("mysql_native_password", match.group(1) if match else ""))
    return methods


def socket_only(methods, socket_plugin):
    """Whether an account can log in only through socket_plugin: it is one of its methods and every other
    method is unusable (MariaDB marks a password method that no password can pass with the string 'invalid')."""
    if not any(plugin == socket_plugin for plugin, dummy in methods):
        return False
    return all(plugin == socket_plugin or (auth or "").lower() == "invalid" for plugin, auth in methods)
