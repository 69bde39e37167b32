# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Connections to MySQL-family servers through PyMySQL, shared by every MySQL module of the collection.

By default a module runs on the database host and connects as root through the Unix socket (root is
authenticated by the socket, so no password exists to leak). A password, when used, comes from a module
argument marked no_log or from a 0600 option file, never from a command line. Queries are recorded with
their placeholders, so the returned `queries` never carry a secret.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat

from ansible_collections.dbops.clusters.plugins.module_utils.gate import Refused
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_errors import describe, error_code, is_access_denied
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_option_file import parse_groups

try:
    import pymysql
    HAS_PYMYSQL = True
    PYMYSQL_IMPORT_ERROR = None
except ImportError as import_error:  # pragma: no cover - reported by the module through missing_required_lib
    pymysql = None
    HAS_PYMYSQL = False
    PYMYSQL_IMPORT_ERROR = import_error

SOCKET_CANDIDATES = ("/run/mysqld/mysqld.sock", "/var/run/mysqld/mysqld.sock", "/var/lib/mysql/mysql.sock",
                     "/tmp/mysql.sock")

LOGIN_ARGUMENT_SPEC = dict(
    login_unix_socket=dict(type="path"),
    login_host=dict(type="str"),
    login_port=dict(type="int", default=3306),
    login_user=dict(type="str", default="root"),
    login_password=dict(type="str", no_log=True),
    login_config_file=dict(type="path"),
    login_ca=dict(type="path"),
    connect_timeout=dict(type="int", default=10),
)


class ConnectionError_(Exception):  # a distinct name: the builtin ConnectionError means something else
    """The server could not be reached or refused the login; `code` is the MySQL error number, if any."""

    def __init__(self, message, code=None):
        super(ConnectionError_, self).__init__(message)
        self.code = code


def read_option_file(path):
    """[client] user/password/socket/host/port from a MySQL option file, refusing one readable by others; values
    are read as the client library reads them (quotes, escapes, '#' comments: mysql_option_file)."""
    mode = os.stat(path).st_mode
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ConnectionError_("%s is readable by group or others (mode %o): credential files must be 0600"
                               % (path, stat.S_IMODE(mode)))
    with open(path) as handle:
        return parse_groups(handle.read(), ("client", "mysql"))


def option_file_login(path):
    """PyMySQL keyword arguments an option file's [client] group gives: user, password, host, port, unix_socket."""
    options = read_option_file(path)
    kwargs = dict((key, options[key]) for key in ("user", "password", "host") if key in options)
    if "port" in options:
        kwargs["port"] = int(options["port"])
    if "socket" in options:
        kwargs["unix_socket"] = options["socket"]
    return kwargs


def connection_kwargs(params):
    """PyMySQL keyword arguments from the module's login_* parameters."""
    kwargs = {"user": params.get("login_user") or "root", "connect_timeout": params.get("connect_timeout") or 10,
              "autocommit": True, "charset": "utf8mb4"}
    if params.get("login_config_file"):
        kwargs.update(option_file_login(params["login_config_file"]))
    if params.get("login_password") is not None:
        kwargs["password"] = params["login_password"]
    if params.get("login_host"):
        kwargs["host"] = params["login_host"]
        kwargs["port"] = params.get("login_port") or 3306
        if params.get("login_ca"):
            kwargs["ssl"] = {"ca": params["login_ca"]}
        elif params.get("login_tls"):
            # encrypted without a CA to verify the server with (ssl-mode=REQUIRED)
            kwargs["ssl"] = {"check_hostname": False}
    elif "host" not in kwargs:
        socket_path = params.get("login_unix_socket") or kwargs.get("unix_socket")
        if not socket_path:
            socket_path = next((p for p in SOCKET_CANDIDATES if os.path.exists(p)), SOCKET_CANDIDATES[0])
        kwargs["unix_socket"] = socket_path
    return kwargs


def connect(params):
    """An autocommit PyMySQL connection, or ConnectionError_ saying where it tried."""
    kwargs = connection_kwargs(params)
    where = kwargs.get("unix_socket") or "%s:%s" % (kwargs.get("host"), kwargs.get("port"))
    try:
        return pymysql.connect(**kwargs)
    except pymysql.err.MySQLError as err:
        raise ConnectionError_("cannot connect to MySQL at %s as %s: %s" % (where, kwargs["user"], describe(err)),
                               code=error_code(err))


def gate_connect(params):
    """A connection for one poll of a health gate, the policy every MySQL-family gate follows: a server that answered
    and refused the login raises gate.Refused (waiting will not change it), one that does not answer raises
    ConnectionError_ (a restarting server: the gate polls again)."""
    try:
        return connect(params)
    except ConnectionError_ as err:
        if is_access_denied(err):
            raise Refused(str(err))
        raise


class Session:
    """Runs queries on one connection and remembers them (with placeholders, never with their arguments)."""

    def __init__(self, connection, check_mode=False):
        self.connection = connection
        self.check_mode = check_mode
        self.queries = []

    def fetch(self, query, args=None):
        """Rows of a read-only query as dicts; reads run in check mode too."""
        with self.connection.cursor(pymysql.cursors.DictCursor) as cursor:
            cursor.execute(query, args)
            return cursor.fetchall()

    def value(self, query, args=None):
        rows = self.fetch(query, args)
        return list(rows[0].values())[0] if rows else None

    def execute(self, query, args=None):
        """Run a statement that changes the server, or only record it in check mode."""
        self.queries.append(query)
        if self.check_mode:
            return 0
        with self.connection.cursor() as cursor:
            return cursor.execute(query, args)

    def variables(self, names):
        """{name: value} of global variables that exist on this server, for the given names."""
        if not names:
            return {}
        placeholders = ", ".join(["%s"] * len(names))
        # SHOW works on MySQL and MariaDB alike (their variable tables live in different schemas).
        rows = self.fetch("SHOW GLOBAL VARIABLES WHERE Variable_name IN (%s)" % placeholders, list(names))
        return dict((row["Variable_name"].lower(), row["Value"]) for row in rows)

    def close(self):
        try:
            self.connection.close()
        except Exception:  # pylint: disable=broad-except  # closing a dead connection must not mask the result
            pass
