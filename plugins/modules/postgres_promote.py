#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: postgres_promote
short_description: Promote a PostgreSQL replica once it has replayed everything it must have
version_added: 0.1.0
description:
  - Waits until the replica has replayed all the WAL it received and, when O(replayed_past) is given, WAL past
    that position (in a switchover, the start of the old primary's shutdown checkpoint, read with
    pg_controldata after a clean stop). Then promotes it with C(pg_promote) and waits for the promotion.
  - Fails at the timeout, without promoting, with the positions it saw; a server already primary is left alone.
  - Used by pg_switchover.yml and pg_failover.yml; the caller chooses which replica (the most advanced one).
options:
  replayed_past:
    description: WAL position (C(X/Y)) the replica must have replayed beyond before it is promoted.
    type: str
  timeout:
    description: Seconds to wait for the replay before giving up without promoting.
    type: int
    default: 60
  promote_timeout:
    description: Seconds C(pg_promote) waits for the promotion to complete.
    type: int
    default: 60
requirements: [psycopg2]
extends_documentation_fragment:
  - dbops.clusters.postgres_login
attributes:
  check_mode:
    support: full
    description: Waits and reports the same, and predicts the promotion without doing it.
  diff_mode:
    support: none
    description: Nothing to diff.
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Promote the target once it replayed the old primary's shutdown checkpoint
  dbops.clusters.postgres_promote:
    replayed_past: "{{ old_primary_checkpoint_lsn }}"
    timeout: 60
"""

RETURN = r"""
decision:
  description: C(promoted), C(would promote) (check mode) or C(already primary).
  returned: always
  type: str
reason:
  description: Why, with the positions the decision was made on.
  returned: always
  type: str
state:
  description: Positions last seen (received_lsn, replayed_lsn) and whether the server is in recovery.
  returned: always
  type: dict
timeline:
  description: The server's timeline after the promotion.
  returned: when promoted
  type: int
waited:
  description: Seconds waited for the replay.
  returned: always
  type: float
"""

import time

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.dbops.clusters.plugins.module_utils import postgres_connection as pgc
from ansible_collections.dbops.clusters.plugins.module_utils.postgres_replication import promotion_verdict

STATE_SQL = ("SELECT pg_is_in_recovery(), pg_last_wal_receive_lsn()::text, "
             "COALESCE(pg_last_wal_replay_lsn(), pg_current_wal_lsn())::text")


def observe(connection):
    in_recovery, received, replayed = pgc.query(connection, STATE_SQL)[0]
    return dict(in_recovery=in_recovery, received_lsn=received, replayed_lsn=replayed)


def main():
    spec = dict(
        replayed_past=dict(type="str"),
        timeout=dict(type="int", default=60),
        promote_timeout=dict(type="int", default=60),
    )
    spec.update(pgc.LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    if not pgc.HAS_PSYCOPG2:
        module.fail_json(msg=missing_required_lib("psycopg2"), exception=str(pgc.PSYCOPG2_IMPORT_ERROR))
    params = module.params
    started = time.time()
    connection = pgc.connect(params)
    try:
        while True:
            state = observe(connection)
            try:
                problem = promotion_verdict(state, params["replayed_past"])
            except ValueError as err:
                module.fail_json(msg="replayed_past: %s" % err, state=state)
            waited = round(time.time() - started, 1)
            if problem is None:
                break
            if waited >= params["timeout"]:
                module.fail_json(msg="not promoted: after %s s %s" % (waited, problem), state=state, waited=waited,
                                 decision="not promoted", reason=problem)
            time.sleep(0.1)
        if not state["in_recovery"]:
            module.exit_json(changed=False, decision="already primary", state=state, waited=waited,
                             reason="the server is not in recovery")
        reason = "replayed everything received (%s)%s" % (
            state["replayed_lsn"], ", past %s" % params["replayed_past"] if params["replayed_past"] else "")
        if module.check_mode:
            module.exit_json(changed=True, decision="would promote", reason=reason, state=state, waited=waited)
        promoted = pgc.query(connection, "SELECT pg_promote(true, %s)", (params["promote_timeout"],))[0][0]
        if not promoted:
            module.fail_json(msg="pg_promote did not complete within %d s" % params["promote_timeout"], state=state,
                             decision="promotion pending", reason=reason)
        # the timeline is the first 8 hex digits of the current WAL file's name (pg_control lags until a checkpoint)
        timeline = pgc.query(connection, "SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))"
                                         "::bit(32)::int")[0][0]
        module.exit_json(changed=True, decision="promoted", reason=reason, state=state, waited=waited,
                         timeline=timeline)
    finally:
        connection.close()


if __name__ == "__main__":
    main()
