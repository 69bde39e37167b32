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
      - Fail at once when this server has no replication configured. When false, such a server passes at once
        with C(configured=false) (for example a replica whose replication is set up later in the same run).
    type: bool
    default: true
extends_documentation_fragment:
  - dbops.clusters.mysql_login
  - dbops.clusters.gate
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
ok:
  description: Whether both threads ran and the lag was within the limit at the last poll (or, with
    O(require_configured=false), no replication is configured).
  returned: always
  type: bool
unmet:
  description: What did not hold at the last poll (threads, lag, last errors), one sentence each.
  returned: always
  type: list
  elements: str
checks:
  description: Number of polls.
  returned: always
  type: int
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
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.dbops.clusters.plugins.module_utils import gate
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_connection import (
    HAS_PYMYSQL, LOGIN_ARGUMENT_SPEC, PYMYSQL_IMPORT_ERROR, ConnectionError_, Session, gate_connect, pymysql)
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_errors import describe, is_access_denied
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_flavors import replication_terms

NOT_SEEN = dict(configured=None, io_running=None, sql_running=None, lag_seconds=None)


def first(status, *names):
    for name in names:
        if name in status:
            return status[name]
    return None


def judge(status, max_lag):
    """(what was seen, unmet) from one SHOW REPLICA STATUS row."""
    io = first(status, "Replica_IO_Running", "Slave_IO_Running")
    sql = first(status, "Replica_SQL_Running", "Slave_SQL_Running")
    raw_lag = first(status, "Seconds_Behind_Source", "Seconds_Behind_Master")
    lag = int(raw_lag) if raw_lag not in (None, "") else None
    seen = dict(configured=True, io_running=io, sql_running=sql, lag_seconds=lag)
    if io != "Yes" or sql != "Yes":
        errors = "; ".join(e for e in (first(status, "Last_IO_Error"), first(status, "Last_SQL_Error")) if e)
        return seen, ["I/O thread %s, SQL thread %s%s" % (io, sql, (": " + errors) if errors else "")]
    if lag is None or lag > max_lag:
        return seen, ["lag %s s, limit %d s" % (lag, max_lag)]
    return seen, []


def look(params):
    """One poll: (what was seen, unmet)."""
    try:
        session = Session(gate_connect(params))
        try:
            version = session.value("SELECT VERSION()")
            terms = replication_terms("mariadb" if "mariadb" in version.lower() else "mysql", version)
            rows = session.fetch(terms["status"])
        finally:
            session.close()
    except ConnectionError_ as err:
        return NOT_SEEN, ["the server does not answer yet: %s" % err]
    except pymysql.err.MySQLError as err:
        if is_access_denied(err):
            raise gate.Refused("reading the replica's state: %s" % describe(err))
        return NOT_SEEN, ["reading the replica's state failed: %s" % describe(err)]
    if not rows:
        if params["require_configured"]:
            raise gate.Refused("no replication configured on this server")
        return dict(NOT_SEEN, configured=False), []
    return judge(rows[0], params["max_lag_seconds"])


def main():
    argument_spec = dict(
        max_lag_seconds=dict(type="int", default=60),
        timeout=dict(type="int", default=300),
        require_configured=dict(type="bool", default=True),
    )
    argument_spec.update(gate.GATE_ARGUMENT_SPEC)
    argument_spec.update(LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    if not HAS_PYMYSQL:
        module.fail_json(msg=missing_required_lib("PyMySQL"), exception=str(PYMYSQL_IMPORT_ERROR))
    params = module.params
    if params["max_lag_seconds"] < 0:
        module.fail_json(msg="max_lag_seconds must not be negative")
    outcome = gate.module_wait(module, lambda: look(params))
    gate.finish(module, outcome, "the replica", dict(outcome["seen"] or NOT_SEEN))


if __name__ == "__main__":
    main()
