#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: postgres_replica_health
short_description: Wait until PostgreSQL replicas stream and their replay lag is under a threshold
version_added: 0.1.0
description:
  - On a replica (a server in recovery), waits until its WAL receiver is C(streaming) and its replay is at most
    O(max_lag_bytes) behind what it received.
  - On a primary, waits until every replica named in O(replicas) (their C(application_name)) is C(streaming) in
    C(pg_stat_replication) with its replay position at most O(max_lag_bytes) behind the primary's current WAL.
  - Fails at the timeout with the state it last saw, so a rolling playbook stops there. A server that does not
    answer, or refuses the login, is polled again until then (libpq reports a refused login without a SQLSTATE
    to tell it from a server still starting); a query refused for a missing privilege fails at once.
options:
  replicas:
    description: On a primary, the application names that must stream. Ignored on a replica.
    type: list
    elements: str
    default: []
  max_lag_bytes:
    description: Largest replay lag accepted, in bytes of WAL.
    type: int
    default: 16777216
  timeout:
    description: Seconds to wait.
    type: int
    default: 120
  expect:
    description: The role the server must have; C(any) accepts both.
    type: str
    choices: [any, primary, replica]
    default: any
requirements: [psycopg2]
extends_documentation_fragment:
  - dbops.clusters.postgres_login
  - dbops.clusters.gate
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Gate on this replica
  dbops.clusters.postgres_replica_health:
    max_lag_bytes: 1048576
    timeout: 120

- name: Gate on the primary for both replicas
  dbops.clusters.postgres_replica_health:
    replicas: [pg2, pg3]
    expect: primary
"""

RETURN = r"""
ok:
  description: Whether every condition held at the last poll.
  returned: always
  type: bool
unmet:
  description: The conditions that did not hold at the last poll, one sentence each.
  returned: always
  type: list
  elements: str
checks:
  description: Number of polls.
  returned: always
  type: int
in_recovery:
  description: Whether the server is a replica.
  returned: always
  type: bool
state:
  description: What the gate saw last (receiver status and lag on a replica, one row per replica on a primary).
  returned: always
  type: dict
waited_seconds:
  description: Seconds from the first poll to the last.
  returned: always
  type: float
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.dbops.clusters.plugins.module_utils import gate
from ansible_collections.dbops.clusters.plugins.module_utils import postgres_connection as pgc
from ansible_collections.dbops.clusters.plugins.module_utils.postgres_replication import (
    primary_verdict,
    replica_verdict,
)

REPLICA_SQL = ("SELECT (SELECT status FROM pg_stat_wal_receiver), "
               "pg_wal_lsn_diff(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn())::bigint, "
               "pg_last_wal_receive_lsn()::text, pg_last_wal_replay_lsn()::text")
PRIMARY_SQL = ("SELECT application_name, state, pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::bigint "
               "FROM pg_stat_replication")


def observe(connection):
    in_recovery = pgc.query(connection, "SELECT pg_is_in_recovery()")[0][0]
    if in_recovery:
        status, lag, received, replayed = pgc.query(connection, REPLICA_SQL)[0]
        return True, dict(receiver=status, lag_bytes=lag, received_lsn=received, replayed_lsn=replayed)
    rows = pgc.query(connection, PRIMARY_SQL)
    return False, dict((name, dict(state=state, lag_bytes=lag)) for name, state, lag in rows)


def look(params):
    """((in_recovery, state), unmet) from one poll."""
    try:
        connection = pgc.connect(params)
        try:
            in_recovery, state = observe(connection)
        finally:
            connection.close()
    except pgc.psycopg2.Error as err:
        if pgc.is_refused(err):
            raise gate.Refused(str(err).strip())
        return (None, {}), ["cannot query the server: %s" % str(err).strip()]
    if params["expect"] == "primary" and in_recovery:
        problem = "the server is a replica, a primary was expected"
    elif params["expect"] == "replica" and not in_recovery:
        problem = "the server is a primary, a replica was expected"
    elif in_recovery:
        problem = replica_verdict(state, params["max_lag_bytes"])
    else:
        problem = primary_verdict(state, params["replicas"], params["max_lag_bytes"])
    return (in_recovery, state), [problem] if problem else []


def main():
    spec = dict(
        replicas=dict(type="list", elements="str", default=[]),
        max_lag_bytes=dict(type="int", default=16777216),
        timeout=dict(type="int", default=120),
        expect=dict(type="str", choices=["any", "primary", "replica"], default="any"),
    )
    spec.update(gate.GATE_ARGUMENT_SPEC)
    spec.update(pgc.LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    if not pgc.HAS_PSYCOPG2:
        module.fail_json(msg=missing_required_lib("psycopg2"), exception=str(pgc.PSYCOPG2_IMPORT_ERROR))
    params = module.params
    outcome = gate.module_wait(module, lambda: look(params))
    in_recovery, state = outcome["seen"] or (None, {})
    gate.finish(module, outcome, "the replication", dict(in_recovery=in_recovery, state=state))


if __name__ == "__main__":
    main()
