#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: postgres_member_state
short_description: Read what a PostgreSQL member is (primary, replica, stopped, empty) from its server and files
version_added: 0.1.0
description:
  - Reads, without changing anything, what the role needs to decide who the primary is from the servers rather
    than from the inventory's order, and whether a member may be emptied to become a replica.
  - "On a running server: whether it is in recovery, how many databases and tables of the user's it holds
    (databases other than postgres and the templates, and tables, views and sequences outside the system schemas
    of the postgres database), how many replicas stream from it, its system identifier and WAL position."
  - "On a stopped one (or a host without the server or its driver yet): whether its data directory holds a
    cluster, whether it is marked as a standby (standby.signal), and its system identifier read from pg_control."
  - Never fails because the server is down; C(running) is then false and C(error) says why.
options:
  data_dir:
    description: The cluster's data directory.
    type: path
    required: true
requirements: [psycopg2 (only to read a running server)]
extends_documentation_fragment:
  - dbops.clusters.postgres_login
attributes:
  check_mode:
    support: full
    description: Reads only; the same in check mode.
  diff_mode:
    support: none
    description: Writes nothing.
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Read every member's state
  dbops.clusters.postgres_member_state:
    data_dir: /var/lib/postgresql/17/main
  delegate_to: "{{ item }}"
  loop: "{{ groups['postgres'] }}"
  run_once: true
  register: member_states
"""

RETURN = r"""
running:
  description: Whether the server answered.
  returned: always
  type: bool
error:
  description: Why the server did not answer (empty when it did).
  returned: always
  type: str
in_recovery:
  description: Whether the server is a replica (null when it did not answer).
  returned: always
  type: bool
has_data:
  description: Whether the data directory holds a cluster (PG_VERSION).
  returned: always
  type: bool
standby_signal:
  description: Whether the data directory is marked to start as a standby.
  returned: always
  type: bool
seeding:
  description:
    - Whether the postgres_tuned role's copy into this data directory began and has not streamed yet (its marker
      C(<data_dir>.dbops-seeding) is there) - what the directory holds is an unfinished copy, not a server's data.
  returned: always
  type: bool
user_objects:
  description: Databases and tables of the user's (null when the server did not answer).
  returned: always
  type: int
streaming_replicas:
  description: Replicas streaming from this server (null when it did not answer).
  returned: always
  type: int
system_identifier:
  description: The cluster's system identifier (the same on a primary and its copies), or null.
  returned: always
  type: str
data_checksums:
  description: Whether the cluster has data checksums (C(on) or C(off)), or null when the server did not answer.
  returned: always
  type: str
position:
  description: The WAL position written (primary) or replayed (replica), in bytes, or null.
  returned: always
  type: int
major:
  description:
    - The major version the server runs (from server_version_num), or, when it does not answer, the one its data
      directory was created by (PG_VERSION); null when neither is known. The upgrade playbook and the role's refusal
      to change a running server's major read it.
  returned: always
  type: int
server_version:
  description: The server's version string (C(17.6 (Debian 17.6-1))), or null when it did not answer.
  returned: always
  type: str
postmaster_alive:
  description:
    - Whether the process postmaster.pid names is alive. A server that does not answer while its postmaster lives is
      in crash recovery or starting, and will take writes once it is done; a failover must not run beside it.
  returned: always
  type: bool
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dbops.clusters.plugins.module_utils import postgres_connection as pgc
from ansible_collections.dbops.clusters.plugins.module_utils.postgres_replication import (
    SEEDING_MARKER_SUFFIX, read_system_identifier)
from ansible_collections.dbops.clusters.plugins.module_utils.postgres_upgrade import major_of

STATE_SQL = """
SELECT pg_is_in_recovery(),
       (SELECT count(*) FROM pg_database WHERE datname NOT IN ('postgres', 'template0', 'template1'))
       + (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
            AND n.nspname NOT IN ('pg_catalog', 'information_schema')
            AND n.nspname NOT LIKE 'pg\\_toast%%' AND n.nspname NOT LIKE 'pg\\_temp%%'),
       (SELECT count(*) FROM pg_stat_replication),
       (SELECT system_identifier::text FROM pg_control_system()),
       pg_wal_lsn_diff(CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END,
                       '0/0')::bigint,
       current_setting('data_checksums'),
       current_setting('server_version_num'),
       current_setting('server_version')
"""


def postmaster_alive(data_dir):
    """Whether the PID on postmaster.pid's first line is a live postgres process (a stale file names a dead one)."""
    try:
        with open(os.path.join(data_dir, "postmaster.pid")) as handle:
            pid = int(handle.readline().strip())
        with open("/proc/%d/comm" % pid) as handle:
            return handle.read().strip() in ("postgres", "postmaster")
    except (IOError, OSError, ValueError):
        return False


def read_pg_version(data_dir):
    """The major that created the data directory (PG_VERSION), or None."""
    try:
        with open(os.path.join(data_dir, "PG_VERSION")) as handle:
            return major_of(handle.read().strip())
    except (IOError, OSError):
        return None


def read_files(data_dir):
    return dict(
        has_data=os.path.exists(os.path.join(data_dir, "PG_VERSION")),
        major=read_pg_version(data_dir),
        standby_signal=os.path.exists(os.path.join(data_dir, "standby.signal")),
        seeding=os.path.exists(data_dir.rstrip("/") + SEEDING_MARKER_SUFFIX),
        system_identifier=read_system_identifier(os.path.join(data_dir, "global", "pg_control")),
        postmaster_alive=postmaster_alive(data_dir),
    )


def read_server(params):
    """The running server's answers, or the reason it gave none."""
    if not pgc.HAS_PSYCOPG2:
        return dict(running=False, error="psycopg2 is not installed (no server set up here yet)")
    try:
        connection = pgc.connect(params)
    except pgc.psycopg2.Error as err:
        return dict(running=False, error=str(err).strip().splitlines()[0] if str(err).strip() else "no answer")
    try:
        (in_recovery, user_objects, replicas, identifier, position, checksums, version_num,
         version) = pgc.query(connection, STATE_SQL)[0]
    finally:
        connection.close()
    return dict(running=True, error="", in_recovery=in_recovery, user_objects=int(user_objects),
                streaming_replicas=int(replicas), system_identifier=identifier,
                position=None if position is None else int(position), data_checksums=checksums,
                major=major_of(version_num), server_version=version)


def main():
    spec = dict(data_dir=dict(type="path", required=True))
    spec.update(pgc.LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    state = dict(in_recovery=None, user_objects=None, streaming_replicas=None, position=None, data_checksums=None,
                 server_version=None)
    state.update(read_files(module.params["data_dir"]))
    state.update(read_server(module.params))
    module.exit_json(changed=False, **state)


if __name__ == "__main__":
    main()
