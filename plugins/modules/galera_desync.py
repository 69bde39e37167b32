#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: galera_desync
short_description: Desync a Galera member around a backup, and wait until it is Synced again afterwards
version_added: 0.1.0
description:
  - I(desynced=true) sets C(wsrep_desync=ON). The member keeps applying write-sets but no longer sends flow
    control, so the I/O of a backup on it never slows the cluster's commits (the field's practice before a
    backup). It then reports C(Donor/Desynced).
  - I(desynced=false) sets C(wsrep_desync=OFF) and waits up to I(timeout) seconds until
    C(wsrep_local_state_comment) is C(Synced) again (the member has applied what queued while it was desynced).
  - Changes nothing when the variable already has the wanted value (and, for I(desynced=false), the member is
    Synced).
options:
  desynced:
    description: The wanted value of C(wsrep_desync).
    type: bool
    required: true
  timeout:
    description: Seconds to wait for C(Synced) after I(desynced=false).
    type: int
    default: 300
extends_documentation_fragment:
  - dbops.clusters.mysql_login
attributes:
  check_mode:
    support: full
    description: Reads the variable and says whether it would change it; never sets it, never waits.
  diff_mode:
    support: none
    description: Reports the value before and after in I(before) and I(after).
requirements:
  - PyMySQL
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Keep the member out of flow control while it is copied
  dbops.clusters.galera_desync:
    desynced: true
"""

RETURN = r"""
before:
  description: C(wsrep_desync) before (C(ON) or C(OFF)).
  returned: always
  type: str
after:
  description: C(wsrep_desync) after (the wanted value in check mode).
  returned: always
  type: str
state:
  description: The last C(wsrep_local_state_comment) seen.
  returned: always
  type: str
waited_seconds:
  description: Seconds spent waiting for C(Synced).
  returned: always
  type: float
"""

import time

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_connection import (
    HAS_PYMYSQL, LOGIN_ARGUMENT_SPEC, PYMYSQL_IMPORT_ERROR, ConnectionError_, Session, connect)


def read(session):
    desync = str(session.variables(["wsrep_desync"]).get("wsrep_desync", "")).upper()
    rows = session.fetch("SHOW GLOBAL STATUS LIKE 'wsrep_local_state_comment'")
    return desync, (rows[0]["Value"] if rows else None)


def main():
    argument_spec = dict(desynced=dict(type="bool", required=True), timeout=dict(type="int", default=300))
    argument_spec.update(LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    if not HAS_PYMYSQL:
        module.fail_json(msg=missing_required_lib("PyMySQL"), exception=str(PYMYSQL_IMPORT_ERROR))
    if module.params["timeout"] < 0:
        module.fail_json(msg="timeout must be 0 or more seconds")
    wanted = "ON" if module.params["desynced"] else "OFF"
    try:
        session = Session(connect(module.params), check_mode=module.check_mode)
    except ConnectionError_ as err:
        module.fail_json(msg=str(err))
    try:
        before, state = read(session)
        if before not in ("ON", "OFF"):
            module.fail_json(msg="the server has no wsrep_desync variable: it is not a Galera member")
        changed = before != wanted
        if changed:
            session.execute("SET GLOBAL wsrep_desync = %s" % wanted)
        start = time.time()
        if wanted == "OFF" and not module.check_mode:
            deadline = start + module.params["timeout"]
            while True:
                dummy, state = read(session)
                if state == "Synced" or time.time() >= deadline:
                    break
                time.sleep(0.5)
            if state != "Synced":
                module.fail_json(msg="wsrep_desync is OFF but the member is %s, not Synced, after %ss" % (
                    state, module.params["timeout"]), changed=changed, before=before, after=wanted, state=state,
                    waited_seconds=round(time.time() - start, 1))
        after = wanted if module.check_mode else read(session)[0]
        module.exit_json(changed=changed, before=before, after=after, state=state,
                         waited_seconds=round(time.time() - start, 1))
    finally:
        session.close()


if __name__ == "__main__":
    main()
