# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Connections to mongod/mongos through pymongo, shared by the collection's MongoDB modules.

Credentials come from module arguments marked no_log or from a 0600 credentials file, never from a
command line. A module talks to one member directly (directConnection) unless it is given a replica set
name, in which case pymongo discovers the primary from the member it reaches.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat
import time

try:
    import pymongo
    from pymongo.errors import OperationFailure, PyMongoError  # pylint: disable=unused-import  # for the modules
    HAS_PYMONGO = True
    PYMONGO_IMPORT_ERROR = None
except ImportError as import_error:  # pragma: no cover - reported by the module through missing_required_lib
    pymongo = None

    class PyMongoError(Exception):  # stand-ins so that except clauses still parse without pymongo
        pass

    class OperationFailure(PyMongoError):
        pass

    HAS_PYMONGO = False
    PYMONGO_IMPORT_ERROR = import_error

LOGIN_ARGUMENT_SPEC = dict(
    login_host=dict(type="str", default="localhost"),
    login_port=dict(type="int", default=27017),
    login_user=dict(type="str"),
    login_password=dict(type="str", no_log=True),
    login_database=dict(type="str", default="admin"),
    login_credentials_file=dict(type="path"),
    replica_set=dict(type="str"),
    tls=dict(type="bool"),
    tls_ca_file=dict(type="path"),
    tls_certificate_key_file=dict(type="path"),
    tls_allow_invalid_hostnames=dict(type="bool", default=False),
    connect_timeout=dict(type="int", default=10),
)


class MongoLoginError(Exception):
    """Bad login settings (for example a credentials file readable by others)."""


def read_credentials_file(path):
    """user, password and the TLS settings (tls, tls_ca_file, tls_certificate_key_file) from a file of
    `key: value` lines, refusing one readable by group or others."""
    mode = os.stat(path).st_mode
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise MongoLoginError("%s is readable by group or others (mode %o): credential files must be 0600"
                              % (path, stat.S_IMODE(mode)))
    found = {}
    with open(path) as handle:
        for raw in handle:
            line = raw.strip()
            if not line or line.startswith("#") or ":" not in line:
                continue
            key, value = (part.strip() for part in line.split(":", 1))
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            if key in ("user", "password", "tls_ca_file", "tls_certificate_key_file"):
                found[key] = value
            elif key == "tls":
                found[key] = value.lower() in ("true", "yes", "1")
    return found


def client_kwargs(params, host=None):
    """pymongo.MongoClient keyword arguments from the login_* parameters."""
    user, password = params.get("login_user"), params.get("login_password")
    found = {}
    if params.get("login_credentials_file"):
        found = read_credentials_file(params["login_credentials_file"])
        if not params.get("login_anonymous"):      # without_login: the file's TLS settings, not its user
            user = user or found.get("user")
            password = password or found.get("password")
    # TLS: the module's arguments, else the credentials file's (the role writes them there when net.tls is on).
    tls = params.get("tls") if params.get("tls") is not None else found.get("tls", False)
    tls_ca_file = params.get("tls_ca_file") or found.get("tls_ca_file")
    tls_key_file = params.get("tls_certificate_key_file") or found.get("tls_certificate_key_file")
    timeout_ms = int(params.get("connect_timeout") or 10) * 1000
    kwargs = dict(host=host or params.get("login_host") or "localhost", port=params.get("login_port") or 27017,
                  serverSelectionTimeoutMS=timeout_ms, connectTimeoutMS=timeout_ms, socketTimeoutMS=None,
                  retryWrites=False, appname="dbops.clusters")
    if params.get("replica_set") and not host:
        kwargs["replicaSet"] = params["replica_set"]
    else:
        kwargs["directConnection"] = True
    if user:
        kwargs.update(username=user, password=password or "", authSource=params.get("login_database") or "admin")
    if tls:
        kwargs["tls"] = True
        if tls_ca_file:
            kwargs["tlsCAFile"] = tls_ca_file
        if tls_key_file:
            kwargs["tlsCertificateKeyFile"] = tls_key_file
        if params.get("tls_allow_invalid_hostnames"):
            kwargs["tlsAllowInvalidHostnames"] = True
    return kwargs


def without_login(params):
    """The same connection settings with no user: for the localhost exception, before any user exists. The
    credentials file still says how to connect (TLS: a server under requireTLS refuses a plaintext client)."""
    return dict(params, login_user=None, login_password=None, login_anonymous=True)


def connect(params, host=None):
    """A MongoClient; `host` ("name:port") overrides login_host/login_port and connects to that member only."""
    kwargs = client_kwargs(params, host=None if host is None else host.rsplit(":", 1)[0])
    if host is not None:
        kwargs["port"] = int(host.rsplit(":", 1)[1])
    return pymongo.MongoClient(**kwargs)


UNAUTHORIZED = 13           # logged in (or not at all) without the privilege the command needs
AUTH_FAILED = 18            # the login itself was refused


def error_code(err):
    return getattr(err, "code", None)


def is_refused(err):
    """The server answered and refused: a wrong login or a missing privilege (waiting will not change it)."""
    return error_code(err) in (UNAUTHORIZED, AUTH_FAILED)


def wait_for(predicate, timeout, interval=0.2):
    """Call predicate until it returns a true value or timeout seconds pass; returns (value, seconds)."""
    start = time.time()
    while True:
        value = predicate()
        if value or time.time() - start >= timeout:
            return value, round(time.time() - start, 1)
        time.sleep(interval)


def hello(client):
    return client.admin.command("hello")


def find_primary(params, client=None, timeout=0.0, exclude=None):
    """(primary host, client connected directly to it) as seen from login_host, waiting up to timeout
    seconds for one (other than `exclude`) to be known; (None, None) when there is none."""
    def look():
        try:
            seen = hello(client or connect(params))
        except PyMongoError:
            return None
        host = seen.get("primary")
        if host and host != exclude:
            return host
        return None
    host, _waited = wait_for(look, timeout)
    if not host:
        return None, None
    return host, connect(params, host=host)


def get_config(client):
    config = client.admin.command("replSetGetConfig")["config"]
    return dict((key, value) for key, value in config.items() if key != "term")


def config_settled(client):
    """True when the primary's config is committed and no member is still newlyAdded."""
    reply = client.admin.command("replSetGetConfig", commitmentStatus=True)
    members = reply["config"].get("members", [])
    return bool(reply.get("commitmentStatus")) and not any(m.get("newlyAdded") for m in members)


def plain(value):
    """BSON values made JSON-friendly for module results (datetimes and ObjectIds as strings)."""
    if isinstance(value, dict):
        return dict((key, plain(item)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)
