#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: postgres_archive_check
short_description: Fail when PostgreSQL's WAL archiving is failing, prove it works on a server that never archived
version_added: 0.1.0
description:
  - Reads C(pg_stat_archiver). Archiving is failing when the last failure is newer than the last success; the
    module then fails, naming the segment and the failure time.
  - On a server that has never archived a segment, switches to a new WAL segment (C(pg_switch_wal())) and waits
    until the segment it closed is archived or the archiver reports a failure; that switch is the only change.
options:
  timeout:
    description: Seconds to wait for the first segment to be archived.
    type: int
    default: 60
requirements: [psycopg2]
extends_documentation_fragment:
  - dbops.clusters.postgres_login
attributes:
  check_mode:
    support: full
    description: Reports the archiver's state; never switches WAL.
  diff_mode:
    support: none
    description: Nothing to diff.
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Fail when the archive does not take WAL
  dbops.clusters.postgres_archive_check:
    timeout: 60
"""

RETURN = r"""
archiver:
  description: The pg_stat_archiver row the decision was taken on.
  returned: always
  type: dict
decision:
  description: What the module concluded and why.
  returned: always
  type: str
"""

import time

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.dbops.clusters.plugins.module_utils import postgres_connection as pgc

COLUMNS = ("archived_count", "last_archived_wal", "last_archived_time", "failed_count", "last_failed_wal",
           "last_failed_time")


def archiver_state(connection):
    row = pgc.query(connection, "SELECT %s FROM pg_stat_archiver" % ", ".join(COLUMNS))[0]
    return dict(zip(COLUMNS, row))


def failing(state):
    """Archiving fails when a failure is newer than the last success (PostgreSQL retries the same segment)."""
    return state["last_failed_time"] is not None and (
        state["last_archived_time"] is None or state["last_failed_time"] > state["last_archived_time"])


def printable(state):
    return dict((key, str(value) if value is not None else None) for key, value in state.items())


def main():
    spec = dict(timeout=dict(type="int", default=60))
    spec.update(pgc.LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    if not pgc.HAS_PSYCOPG2:
        module.fail_json(msg=missing_required_lib("psycopg2"), exception=str(pgc.PSYCOPG2_IMPORT_ERROR))
    connection = pgc.connect(module.params)
    state = archiver_state(connection)
    if failing(state):
        module.fail_json(msg="WAL archiving is failing: segment %s failed at %s (last success: %s); check "
                             "archive_command and the archive's space and permissions"
                             % (state["last_failed_wal"], state["last_failed_time"], state["last_archived_time"]),
                         archiver=printable(state), decision="failing")
    if state["archived_count"] > 0 or module.check_mode:
        module.exit_json(changed=False, archiver=printable(state),
                         decision="archiving works: %d segments archived, last %s"
                         % (state["archived_count"], state["last_archived_wal"]))
    closed = pgc.query(connection, "SELECT pg_walfile_name(pg_switch_wal())")[0][0]
    deadline = time.time() + module.params["timeout"]
    while time.time() < deadline:
        state = archiver_state(connection)
        if failing(state):
            module.fail_json(msg="WAL archiving fails: segment %s could not be archived (archive_command failed at "
                                 "%s)" % (state["last_failed_wal"], state["last_failed_time"]),
                             archiver=printable(state), decision="failing")
        if state["last_archived_wal"] and state["last_archived_wal"] >= closed:
            module.exit_json(changed=True, archiver=printable(state),
                             decision="switched WAL and segment %s was archived" % closed)
        time.sleep(0.5)
    module.fail_json(msg="segment %s was not archived within %d s" % (closed, module.params["timeout"]),
                     archiver=printable(state), decision="timeout")


if __name__ == "__main__":
    main()
