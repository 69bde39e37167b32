#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: mysql_replica_health
short_description: Wait until this MySQL replica replicates, both threads running and its lag under a limit
version_added: 0.1.0
description:
  - A health gate for rolling operations. Reads C(SHOW REPLICA STATUS) (C(SHOW SLAVE STATUS) on older servers
    and MariaDB before 10.5.1) until the I/O and SQL threads both run and C(Seconds_Behind_Source) is at most
    I(max_lag_seconds), or fails when I(timeout) passes, with the state it saw last (threads, lag, last errors).
  - A server that does not answer yet (restarting) is retried until the timeout.
  - Changes nothing.
options:
  max_lag_seconds:
    description: Largest replication lag, in seconds, that counts as healthy.
    type: int
    default: 60
  timeout:
    description: Seconds to wait before failing.
    type: int
    default: 300
  require_configured:
    description:
      - Fail when this server has no replication configured. When false, such a server passes at once with
        C(configured=false) (for example a replica whose replication is set up later in the same run).
    type: bool
    default: true
extends_documentation_fragment:
  - dbops.clusters.mysql_login
attributes:
  check_mode:
    support: full
    description: Reads and waits exactly as in a normal run; it never changes anything.
  diff_mode:
    support: none
    description: Nothing is changed.
requirements:
  - PyMySQL
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Gate - the restarted replica replicates again and is less than 30 s behind
  dbops.clusters.mysql_replica_health:
    max_lag_seconds: 30
    timeout: 600
"""

RETURN = r"""
healthy:
  description: Whether both threads ran and the lag was within the limit (false only with a not configured replica).
  returned: always
  type: bool
configured:
  description: Whether replication is configured on this server.
  returned: always
  type: bool
io_running:
  description: Replica_IO_Running as last seen.
  returned: always
  type: str
sql_running:
  description: Replica_SQL_Running as last seen.
  returned: always
  type: str
lag_seconds:
  description: Seconds_Behind_Source as last seen (null when the I/O thread is not connected).
  returned: always
  type: int
waited_seconds:
  description: How long the gate waited.
  returned: always
  type: float
reason:
  description: Why the gate passed or failed.
  returned: always
  type: str
"""

import time

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_connection import (
    HAS_PYMYSQL, LOGIN_ARGUMENT_SPEC, PYMYSQL_IMPORT_ERROR, ConnectionError_, Session, connect, pymysql)
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_errors import describe, is_unreachable
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_flavors import replication_terms


def first(status, *names):
    for name in names:
        if name in status:
            return status[name]
    return None


def judge(status, max_lag):
    """(healthy, io, sql, lag, reason) from one SHOW REPLICA STATUS row."""
    io = first(status, "Replica_IO_Running", "Slave_IO_Running")
    sql = first(status, "Replica_SQL_Running", "Slave_SQL_Running")
    raw_lag = first(status, "Seconds_Behind_Source", "Seconds_Behind_Master")
    lag = int(raw_lag) if raw_lag not in (None, "") else None
    if io != "Yes" or sql != "Yes":
        errors = "; ".join(e for e in (first(status, "Last_IO_Error"), first(status, "Last_SQL_Error")) if e)
        return False, io, sql, lag, "I/O thread %s, SQL thread %s%s" % (io, sql, (": " + errors) if errors else "")
    if lag is None or lag > max_lag:
        return False, io, sql, lag, "lag %s s, limit %d s" % (lag, max_lag)
    return True, io, sql, lag, "both threads run, lag %d s within %d s" % (lag, max_lag)


def main():
    argument_spec = dict(
        max_lag_seconds=dict(type="int", default=60),
        timeout=dict(type="int", default=300),
        require_configured=dict(type="bool", default=True),
    )
    argument_spec.update(LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    if not HAS_PYMYSQL:
        module.fail_json(msg=missing_required_lib("PyMySQL"), exception=str(PYMYSQL_IMPORT_ERROR))
    if module.params["max_lag_seconds"] < 0 or module.params["timeout"] < 0:
        module.fail_json(msg="max_lag_seconds and timeout must not be negative")

    started = time.time()
    deadline = started + module.params["timeout"]
    result = dict(changed=False, healthy=False, configured=None, io_running=None, sql_running=None,
                  lag_seconds=None, reason="not checked yet")
    while True:
        try:
            session = Session(connect(module.params))
            try:
                version = session.value("SELECT VERSION()")
                terms = replication_terms("mariadb" if "mariadb" in version.lower() else "mysql", version)
                rows = session.fetch(terms["status"])
            finally:
                session.close()
            if not rows:
                result.update(configured=False, reason="no replication configured on this server")
                if not module.params["require_configured"]:
                    result["waited_seconds"] = round(time.time() - started, 1)
                    module.exit_json(**result)
                module.fail_json(**result)
            healthy, io, sql, lag, reason = judge(rows[0], module.params["max_lag_seconds"])
            result.update(configured=True, healthy=healthy, io_running=io, sql_running=sql, lag_seconds=lag,
                          reason=reason)
            if healthy:
                break
        except ConnectionError_ as err:
            if not is_unreachable(err):
                module.fail_json(msg=str(err), **result)
            result["reason"] = "server not answering yet: %s" % err
        except pymysql.err.MySQLError as err:
            module.fail_json(msg="reading the replica's state failed: %s" % describe(err), **result)
        if time.time() >= deadline:
            result["waited_seconds"] = round(time.time() - started, 1)
            module.fail_json(msg="replica not healthy after %d s: %s" % (module.params["timeout"], result["reason"]),
                             **result)
        time.sleep(1)
    result["waited_seconds"] = round(time.time() - started, 1)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
