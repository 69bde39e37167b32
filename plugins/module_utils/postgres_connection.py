# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Connections to PostgreSQL through psycopg2, shared by the collection's PostgreSQL modules.

By default a module runs on the database host and connects through the Unix socket as the postgres role,
authenticated by peer (the role maps root to postgres in pg_ident.conf), so there is no password to leak. Over
TCP the password comes from a no_log argument or from a 0600 passfile, never from a command line.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

try:
    import psycopg2
    HAS_PSYCOPG2 = True
    PSYCOPG2_IMPORT_ERROR = None
except ImportError as import_error:  # pragma: no cover - reported through missing_required_lib
    psycopg2 = None
    HAS_PSYCOPG2 = False
    PSYCOPG2_IMPORT_ERROR = import_error

LOGIN_ARGUMENT_SPEC = dict(
    login_unix_socket=dict(type="path", default="/var/run/postgresql"),
    login_host=dict(type="str"),
    login_port=dict(type="int", default=5432),
    login_user=dict(type="str", default="postgres"),
    login_password=dict(type="str", no_log=True),
    login_db=dict(type="str", default="postgres"),
    connect_timeout=dict(type="int", default=10),
)


# SQLSTATEs of a server that answered and refused: a missing privilege (42501), a refused authorization
# (28000, 28P01) where the driver reports one. libpq reports a login refused at connection time without its
# SQLSTATE, so such an error cannot be told from a server still starting: gates poll it again.
REFUSED_SQLSTATES = ("28000", "28P01", "42501")


def is_refused(err):
    """The server answered and refused (waiting will not change it)."""
    return getattr(err, "pgcode", None) in REFUSED_SQLSTATES


def connect(params, host=None):
    """An autocommit psycopg2 connection from the module's login parameters (host overrides login_host)."""
    kwargs = dict(dbname=params["login_db"], user=params["login_user"], port=params["login_port"],
                  connect_timeout=params["connect_timeout"], application_name="dbops.clusters")
    kwargs["host"] = host or params.get("login_host") or params["login_unix_socket"]
    if params.get("login_password"):
        kwargs["password"] = params["login_password"]
    connection = psycopg2.connect(**kwargs)
    connection.autocommit = True
    return connection


def query(connection, sql, args=None):
    """Rows of a query as a list of tuples."""
    with connection.cursor() as cursor:
        cursor.execute(sql, args)
        if cursor.description is None:
            return []
        return cursor.fetchall()


def catalogue(connection, names=None):
    """{name: pg_settings row as a dict} for the names (all when None)."""
    sql = ("SELECT name, setting, unit, vartype, min_val, max_val, enumvals, context, pending_restart "
           "FROM pg_settings")
    rows = query(connection, sql + (" WHERE name = ANY(%s)" if names else ""), (list(names),) if names else None)
    columns = ("name", "setting", "unit", "vartype", "min_val", "max_val", "enumvals", "context", "pending_restart")
    return dict((row[0], dict(zip(columns, row))) for row in rows)
