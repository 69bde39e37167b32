#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: mysql_replica
short_description: Make this server a GTID-positioned asynchronous replica of a source, and wait until it replicates
version_added: 0.1.0
description:
  - Compares the replica's current source configuration with the requested one and, only when they differ,
    stops replication, points it at the source with GTID auto-positioning and starts it again.
  - Uses C(CHANGE REPLICATION SOURCE TO) and C(START REPLICA) on MySQL and Percona Server 8.0.23 and later,
    C(CHANGE MASTER TO) on older servers and on MariaDB (with C(MASTER_USE_GTID=slave_pos)).
  - Waits until both replication threads run and returns what C(SHOW REPLICA STATUS) said; fails with the
    server's last I/O or SQL error when replication does not start.
  - A statement the server refuses fails the task with the statement (placeholders only), the error name and
    number, and the statements run before it.
options:
  source_host:
    description: Address of the source. Required with I(state=running).
    type: str
  source_port:
    description: Port of the source.
    type: int
    default: 3306
  source_user:
    description: Replication account on the source. Required with I(state=running).
    type: str
  source_password:
    description: Password of I(source_user), sent as a query parameter and never returned.
    type: str
  password_update:
    description:
      - C(on_change) sends the password when the replica is (re)configured, and on MySQL and Percona Server when
        the channel holds another one (a rotation; read from C(mysql.slave_master_info), never returned). Use it
        only when the source's account already has I(source_password), or the channel would lose its login.
      - C(on_configure) sends it only when the replica is (re)configured for another reason (the source's account
        may still have the old password, for example when the source is outside the play).
      - C(always) reconfigures on every run (not idempotent; use it once to rotate the password on MariaDB, which
        keeps the channel's password in a file).
    type: str
    choices: [on_change, on_configure, always]
    default: on_change
  ssl:
    description:
      - Require TLS for the replication connection. When false, TLS is not required (MySQL 8.0 and later may
        still negotiate it) and its state is not compared.
    type: bool
    default: false
  ssl_ca:
    description: CA file the replica verifies the source's certificate with (implies I(ssl)).
    type: path
  ssl_verify_server_cert:
    description:
      - With TLS, check that the source's certificate names I(source_host) (C(SOURCE_SSL_VERIFY_SERVER_CERT)),
        so a replica cannot be pointed at an impostor holding any certificate of the same CA. The source's
        certificate must carry I(source_host) as a subject alternative name.
      - Ignored without I(ssl) or I(ssl_ca).
    type: bool
    default: true
  get_source_public_key:
    description:
      - Ask the source for its RSA key, which caching_sha2_password needs without TLS. Ignored on MariaDB.
    type: bool
    default: true
  connect_retry:
    description: Seconds between reconnection attempts.
    type: int
    default: 10
  state:
    description: C(running) configures and starts replication; C(stopped) stops it; C(absent) removes it.
    type: str
    choices: [running, stopped, absent]
    default: running
  wait_timeout:
    description: Seconds to wait until both replication threads run (0 does not wait).
    type: int
    default: 60
extends_documentation_fragment:
  - dbops.clusters.mysql_login
attributes:
  check_mode:
    support: full
    description: Returns the decision and the statements it would run.
  diff_mode:
    support: none
    description: The decision and statements are returned instead.
requirements:
  - PyMySQL
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Replicate from the source
  dbops.clusters.mysql_replica:
    source_host: 10.89.100.21
    source_user: repl
    source_password: "{{ vault_repl_password }}"
"""

RETURN = r"""
decision:
  description: C(configure), C(start), C(stop), C(remove) or C(none).
  returned: always
  type: str
reason:
  description: Why the decision was taken.
  returned: always
  type: str
queries:
  description: Statements run (or that would run in check mode), with placeholders for values.
  returned: always
  type: list
  elements: str
status:
  description: Selected fields of SHOW REPLICA STATUS after the change (names as the server gives them).
  returned: always
  type: dict
"""

import time

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_connection import (
    HAS_PYMYSQL, LOGIN_ARGUMENT_SPEC, PYMYSQL_IMPORT_ERROR, ConnectionError_, Session, connect, pymysql)
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_errors import describe, error_code
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_flavors import (
    replication_terms, stored_source_credentials)

STATUS_FIELDS = ("Source_Host", "Master_Host", "Source_Port", "Master_Port", "Source_User", "Master_User",
                 "Replica_IO_Running", "Slave_IO_Running", "Replica_SQL_Running", "Slave_SQL_Running",
                 "Auto_Position", "Using_Gtid", "Source_SSL_Allowed", "Master_SSL_Allowed", "Source_SSL_CA_File",
                 "Master_SSL_CA_File", "Source_SSL_Verify_Server_Cert", "Master_SSL_Verify_Server_Cert", "Connect_Retry", "Last_IO_Error", "Last_SQL_Error",
                 "Seconds_Behind_Source", "Seconds_Behind_Master", "Retrieved_Gtid_Set", "Executed_Gtid_Set",
                 "Gtid_IO_Pos")


def field(status, *names):
    """The first of several names a status field has (Source_* on MySQL 8.0.22+, Master_* before and on MariaDB)."""
    for name in names:
        if name in status:
            return status[name]
    return None


def read_status(session, terms):
    rows = session.fetch(terms["status"])
    return rows[0] if rows else None


def configured_differs(status, params, mariadb):
    """Sentences naming what differs between the replica's source configuration and the request."""
    wanted = {
        "host": (field(status, "Source_Host", "Master_Host"), params["source_host"]),
        "port": (str(field(status, "Source_Port", "Master_Port")), str(params["source_port"])),
        "user": (field(status, "Source_User", "Master_User"), params["source_user"]),
        "connect_retry": (str(field(status, "Connect_Retry")), str(params["connect_retry"])),
    }
    if mariadb:
        wanted["gtid"] = (str(field(status, "Using_Gtid")).lower(), "slave_pos")
    else:
        wanted["gtid"] = (str(field(status, "Auto_Position")), "1")
    if params["ssl"] or params["ssl_ca"]:
        # Only a request for TLS is enforced: MySQL 8.0+ may use TLS on its own where it was not asked for.
        wanted["ssl"] = (field(status, "Source_SSL_Allowed", "Master_SSL_Allowed"), "Yes")
    if params["ssl_ca"]:
        wanted["ssl_ca"] = (field(status, "Source_SSL_CA_File", "Master_SSL_CA_File"), params["ssl_ca"])
    if (params["ssl"] or params["ssl_ca"]) and params["ssl_verify_server_cert"]:
        wanted["ssl_verify_server_cert"] = (
            field(status, "Source_SSL_Verify_Server_Cert", "Master_SSL_Verify_Server_Cert"), "Yes")
    return ["%s is %s, wanted %s" % (key, have, want) for key, (have, want) in sorted(wanted.items()) if have != want]


def change_statement(terms, params, mariadb):
    parts = ["%s = %%s" % terms["host"], "%s = %%s" % terms["port"], "%s = %%s" % terms["user"],
             "%s = %%s" % terms["password"], terms["auto_position"], "%s = %%s" % terms["retry"]]
    args = [params["source_host"], params["source_port"], params["source_user"], params["source_password"],
            params["connect_retry"]]
    if params["ssl"] or params["ssl_ca"]:
        parts.append("%s = 1" % terms["ssl"])
        if params["ssl_ca"]:
            parts.append("%s = %%s" % terms["ssl_ca"])
            args.append(params["ssl_ca"])
        if params["ssl_verify_server_cert"]:
            parts.append("%s = 1" % terms["verify_cert"])
    elif params["get_source_public_key"] and terms["public_key"] and not mariadb:
        parts.append(terms["public_key"])
    return "%s %s" % (terms["change"], ", ".join(parts)), args


def running(status):
    return (field(status, "Replica_IO_Running", "Slave_IO_Running") == "Yes"
            and field(status, "Replica_SQL_Running", "Slave_SQL_Running") == "Yes")


def decide_and_apply(session, params):
    """Compare, decide and run the statements; returns (decision, reason, terms, status before)."""
    version = session.value("SELECT VERSION()")
    mariadb = "mariadb" in version.lower()
    terms = replication_terms("mariadb" if mariadb else "mysql", version)
    status = read_status(session, terms)

    if params["state"] == "absent":
        decision, reason = ("remove", "replication is configured") if status else ("none", "no replication configured")
        if status:
            session.execute(terms["stop"])
            session.execute(terms["reset"])
    elif params["state"] == "stopped":
        decision, reason = ("stop", "replication threads run") if status and running(status) else (
            "none", "replication is not running")
        if decision == "stop":
            session.execute(terms["stop"])
    else:
        differences = configured_differs(status, params, mariadb) if status else ["no source configured"]
        if params["password_update"] == "always":
            differences.append("password_update=always")
        elif params["password_update"] == "on_change" and status and not differences and not mariadb:
            # A rotated password: the channel keeps the one it was given for its restarts (MariaDB keeps it in a
            # file the module does not read: password_update=always there, once).
            stored = stored_source_credentials(session)
            if stored is not None and stored[1] != params["source_password"]:
                differences.append("the channel holds another password for %s (a rotation)" % stored[0])
        if differences:
            decision, reason = "configure", "; ".join(differences)
            if status:
                session.execute(terms["stop"])
            statement, args = change_statement(terms, params, mariadb)
            session.execute(statement, args)
            session.execute(terms["start"])
        elif not running(status):
            decision, reason = "start", "configured as requested but not running"
            session.execute(terms["start"])
        else:
            decision = "none"
            reason = "replicating from %s:%s as requested" % (params["source_host"], params["source_port"])

    return decision, reason, terms, status


def main():
    argument_spec = dict(
        source_host=dict(type="str"),
        source_port=dict(type="int", default=3306),
        source_user=dict(type="str"),
        source_password=dict(type="str", no_log=True),
        password_update=dict(type="str", choices=["on_change", "on_configure", "always"], default="on_change",
                             no_log=False),
        ssl=dict(type="bool", default=False),
        ssl_ca=dict(type="path"),
        ssl_verify_server_cert=dict(type="bool", default=True),
        get_source_public_key=dict(type="bool", default=True),
        connect_retry=dict(type="int", default=10),
        state=dict(type="str", choices=["running", "stopped", "absent"], default="running"),
        wait_timeout=dict(type="int", default=60),
    )
    argument_spec.update(LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True,
                           required_if=[("state", "running", ("source_host", "source_user", "source_password"))])
    if not HAS_PYMYSQL:
        module.fail_json(msg=missing_required_lib("PyMySQL"), exception=str(PYMYSQL_IMPORT_ERROR))
    params = module.params
    try:
        session = Session(connect(params), check_mode=module.check_mode)
    except ConnectionError_ as err:
        module.fail_json(msg=str(err))

    try:
        decision, reason, terms, status = decide_and_apply(session, params)
    except pymysql.err.MySQLError as err:
        failed = session.queries[-1] if session.queries else "reading the replica's state"
        module.fail_json(msg="%s failed: %s" % (failed, describe(err)), error_code=error_code(err),
                         queries=session.queries)

    if params["state"] == "running" and decision != "none" and not module.check_mode and params["wait_timeout"]:
        deadline = time.time() + params["wait_timeout"]
        status = read_status(session, terms)
        while not running(status) and time.time() < deadline:
            time.sleep(1)
            status = read_status(session, terms)
        if not running(status):
            module.fail_json(msg="replication did not start within %ss: IO error: %s; SQL error: %s"
                             % (params["wait_timeout"], field(status, "Last_IO_Error"), field(status, "Last_SQL_Error")),
                             decision=decision, reason=reason, queries=session.queries)
    elif not module.check_mode:
        status = read_status(session, terms)

    session.close()
    module.exit_json(changed=decision != "none", decision=decision, reason=reason, queries=session.queries,
                     status=dict((k, v) for k, v in (status or {}).items() if k in STATUS_FIELDS))


if __name__ == "__main__":
    main()
