# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""MySQL and MariaDB error numbers the collection acts on, and how to tell them apart.

One place for the numbers, so a module decides "server down" or "access denied" by the error number the server
or the client library gave, never by matching message text. Numbers are the same on MySQL, Percona Server and
MariaDB (server errors: mysqld_error.h / ER_*; client errors: errmsg.h / CR_*).
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

ER_DBACCESS_DENIED = 1044            # Access denied for user to database
ER_ACCESS_DENIED = 1045              # Access denied for user (using password: ...)
ER_BAD_DB = 1049                     # Unknown database
ER_PARSE_ERROR = 1064                # SQL syntax error
ER_HOST_NOT_PRIVILEGED = 1130        # Host is not allowed to connect
ER_NONEXISTING_GRANT = 1141
ER_NO_SUCH_TABLE = 1146
ER_UNKNOWN_SYSTEM_VARIABLE = 1193
ER_SPECIFIC_ACCESS_DENIED = 1227     # needs a privilege (SUPER, SYSTEM_VARIABLES_ADMIN, ...)
ER_WRONG_VALUE_FOR_VAR = 1231
ER_WRONG_TYPE_FOR_VAR = 1232
ER_INCORRECT_GLOBAL_LOCAL_VAR = 1238  # read-only variable, or session-only
ER_OPTION_PREVENTS_STATEMENT = 1290  # read_only / super_read_only
ER_REPLICA_THREAD_RUNNING = 3021     # STOP REPLICA first (MySQL: ER_SLAVE_CHANNEL_MUST_STOP)
ER_ACCESS_DENIED_NO_PASSWORD = 1698  # auth_socket / unix_socket refused the OS user
CR_SOCKET_ERROR = 2002               # cannot connect through the Unix socket
CR_CONN_HOST_ERROR = 2003            # cannot connect to host (PyMySQL reports socket failures with it too)
CR_UNKNOWN_HOST = 2005
CR_SERVER_GONE = 2006
CR_SERVER_LOST = 2013

NAMES = {
    ER_DBACCESS_DENIED: "ER_DBACCESS_DENIED", ER_ACCESS_DENIED: "ER_ACCESS_DENIED", ER_BAD_DB: "ER_BAD_DB",
    ER_PARSE_ERROR: "ER_PARSE_ERROR", ER_HOST_NOT_PRIVILEGED: "ER_HOST_NOT_PRIVILEGED",
    ER_NONEXISTING_GRANT: "ER_NONEXISTING_GRANT", ER_UNKNOWN_SYSTEM_VARIABLE: "ER_UNKNOWN_SYSTEM_VARIABLE",
    ER_SPECIFIC_ACCESS_DENIED: "ER_SPECIFIC_ACCESS_DENIED", ER_WRONG_VALUE_FOR_VAR: "ER_WRONG_VALUE_FOR_VAR",
    ER_WRONG_TYPE_FOR_VAR: "ER_WRONG_TYPE_FOR_VAR", ER_INCORRECT_GLOBAL_LOCAL_VAR: "ER_INCORRECT_GLOBAL_LOCAL_VAR",
    ER_OPTION_PREVENTS_STATEMENT: "ER_OPTION_PREVENTS_STATEMENT", ER_REPLICA_THREAD_RUNNING: "ER_REPLICA_THREAD_RUNNING",
    ER_ACCESS_DENIED_NO_PASSWORD: "ER_ACCESS_DENIED_NO_PASSWORD", CR_SOCKET_ERROR: "CR_SOCKET_ERROR",
    CR_CONN_HOST_ERROR: "CR_CONN_HOST_ERROR", CR_UNKNOWN_HOST: "CR_UNKNOWN_HOST", CR_SERVER_GONE: "CR_SERVER_GONE",
    CR_SERVER_LOST: "CR_SERVER_LOST",
}

# The server is not there (not started, crashed, wrong socket or port): nothing answered the login.
UNREACHABLE = (CR_SOCKET_ERROR, CR_CONN_HOST_ERROR, CR_UNKNOWN_HOST, CR_SERVER_GONE, CR_SERVER_LOST)
# The server answered and refused: running, but these credentials cannot do it.
DENIED = (ER_DBACCESS_DENIED, ER_ACCESS_DENIED, ER_HOST_NOT_PRIVILEGED, ER_SPECIFIC_ACCESS_DENIED,
          ER_ACCESS_DENIED_NO_PASSWORD)


def error_code(error):
    """The MySQL error number of an exception (PyMySQL puts it in args[0]), or None."""
    code = getattr(error, "code", None)
    if isinstance(code, int):
        return code
    args = getattr(error, "args", ())
    if args and isinstance(args[0], int):
        return args[0]
    return None


def is_unreachable(error):
    return error_code(error) in UNREACHABLE


def is_access_denied(error):
    return error_code(error) in DENIED


def describe(error):
    """'ER_ACCESS_DENIED (1045): Access denied for user ...', or the text of an error without a number."""
    code = error_code(error)
    args = getattr(error, "args", ())
    text = args[1] if len(args) > 1 and code is not None else str(error)
    if code is None:
        return text
    return "%s (%d): %s" % (NAMES.get(code, "error"), code, text)
