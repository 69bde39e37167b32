#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: galera_health
short_description: Wait until a Galera node is Synced in a Primary component of the expected size
version_added: 0.1.0
description:
  - The health gate of rolling restarts, upgrades and recovery. Polls the node every I(interval) seconds until
    all of these hold, or fails after I(timeout) seconds naming each unmet condition and the value seen.
  - The node answers queries (C(SELECT 1)); C(wsrep_local_state_comment) is C(Synced);
    C(wsrep_cluster_status) is C(Primary); C(wsrep_ready) is C(ON); C(wsrep_cluster_size) equals
    I(expected_size).
  - Connection errors while waiting (the server restarting, a joiner receiving a state transfer) are retried
    until the timeout. A refused login is not retried; it fails at once.
  - It records each phase the node goes through (not answering, receiving a state transfer, C(Joiner),
    C(Joined), C(Donor/Desynced), C(Synced)) with the second it was first seen, in I(progress), and names them
    in its failure message, so a long SST shows how far it got.
  - With I(service), a unit that is C(failed) or C(inactive) while the server does not answer fails the gate
    at once (a joiner whose state transfer failed exits), with the unit's last log lines, instead of waiting
    for the whole I(timeout).
options:
  expected_size:
    description: Number of nodes the Primary component must have.
    type: int
    required: true
  timeout:
    description: Seconds to wait for the conditions (0 looks once).
    type: int
    default: 300
  service:
    description:
      - The server's systemd unit; when given, its state is watched (see above).
    type: str
  datadir:
    description: The data directory, where a joiner's state transfer leaves its in-progress marker.
    type: path
    default: /var/lib/mysql
extends_documentation_fragment:
  - dbops.clusters.mysql_login
  - dbops.clusters.gate
requirements:
  - PyMySQL
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Wait until the restarted node is back in the cluster before the next one
  dbops.clusters.galera_health:
    expected_size: "{{ groups['galera'] | length }}"
    timeout: 600
"""

RETURN = r"""
ok:
  description: Whether every condition held at the last poll.
  returned: always
  type: bool
state:
  description: The last C(wsrep_local_state_comment) seen (C(Synced), C(Joined), C(Donor/Desynced) ...), or null.
  returned: always
  type: str
cluster_status:
  description: The last C(wsrep_cluster_status) seen (C(Primary), C(non-Primary), C(Disconnected)), or null.
  returned: always
  type: str
cluster_size:
  description: The last C(wsrep_cluster_size) seen, or null.
  returned: always
  type: int
ready:
  description: The last C(wsrep_ready) seen (C(ON) or C(OFF)), or null.
  returned: always
  type: str
waited_seconds:
  description: Seconds spent from the first poll to the last.
  returned: always
  type: float
checks:
  description: Number of polls.
  returned: always
  type: int
unmet:
  description: The conditions that did not hold at the last poll, one sentence each.
  returned: always
  type: list
  elements: str
progress:
  description: Each phase seen, in order, with the second (from the first poll) it was first seen.
  returned: always
  type: list
  elements: dict
  sample: [{seconds: 0.0, phase: "not answering, receiving a state transfer (SST)"},
           {seconds: 41.2, phase: "Joined, Primary of 3"}, {seconds: 43.3, phase: "Synced, Primary of 3"}]
"""

import os
import time

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.dbops.clusters.plugins.module_utils import galera, gate
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_connection import (
    HAS_PYMYSQL, LOGIN_ARGUMENT_SPEC, PYMYSQL_IMPORT_ERROR, ConnectionError_, Session, gate_connect)


def look(params, check_mode):
    """(wsrep summary or None, answers SELECT 1, error text or None) from one fresh connection."""
    try:
        session = Session(gate_connect(params), check_mode=check_mode)
    except ConnectionError_ as err:
        return None, False, str(err)
    try:
        try:
            status = galera.read_wsrep_status(session)
        except Exception as err:  # pylint: disable=broad-except  # the server going away mid-poll: retry
            return None, False, "SHOW GLOBAL STATUS failed: %s" % err
        summary = galera.wsrep_summary(status)
        try:
            answers = session.value("SELECT 1") in (1, "1")
            error = None if answers else "SELECT 1 returned no row"
        except Exception as err:  # pylint: disable=broad-except  # e.g. 1047 WSREP has not yet prepared node
            answers, error = False, str(err)
        return summary, answers, error
    finally:
        session.close()


SST_MARKERS = ("sst_in_progress", ".sst")   # MariaDB's wsrep_sst_common; PXC's xtrabackup-v2 work directory
UNIT_DOWN = ("failed", "inactive")
UNIT_DOWN_POLLS = 3                       # an async start may not have begun at the first poll


def phase(summary, error, datadir):
    """One short sentence on where the node is: what the gate reports as progress."""
    if summary is not None:
        return "%s, %s of %s" % (summary.get("local_state_comment"), summary.get("cluster_status"),
                                 summary.get("cluster_size"))
    if any(os.path.exists(os.path.join(datadir, marker)) for marker in SST_MARKERS):
        return "not answering, receiving a state transfer (SST)"
    return "not answering (%s)" % (error or "no wsrep status")


def unit_state(module, service):
    rc, out, dummy = module.run_command(["systemctl", "is-active", service])
    return (out or "").strip() or ("unknown (exit %s)" % rc)


def unit_log(module, service):
    rc, out, dummy = module.run_command(["journalctl", "-u", service, "-n", "15", "--no-pager", "-o", "cat"])
    return [line for line in (out or "").splitlines() if line.strip()] if rc == 0 else []


class NodeWatch:
    """One poll of the node, remembering the phases it went through and how long its unit has been down."""

    def __init__(self, module):
        self.module = module
        self.started = time.time()
        self.progress = []
        self.down_polls = 0
        self.unit = None

    def poll(self):
        params = self.module.params
        summary, answers, error = look(params, self.module.check_mode)
        unmet = galera.health_problems(summary, params["expected_size"], answers, error)
        seen = phase(summary, error, params["datadir"])
        if not self.progress or self.progress[-1]["phase"] != seen:
            self.progress.append({"seconds": round(time.time() - self.started, 1), "phase": seen})
        if unmet and summary is None and params["service"] and not self.module.check_mode:
            self.unit = unit_state(self.module, params["service"])
            self.down_polls = self.down_polls + 1 if self.unit in UNIT_DOWN else 0
        return summary, unmet

    def unit_down(self, dummy_seen, dummy_unmet):
        if self.down_polls >= UNIT_DOWN_POLLS:
            return "%s is %s" % (self.module.params["service"], self.unit)
        return None

    def path(self):
        return " -> ".join("%s at %ss" % (step["phase"], step["seconds"]) for step in self.progress)


def main():
    argument_spec = dict(
        expected_size=dict(type="int", required=True),
        timeout=dict(type="int", default=300),
        service=dict(type="str"),
        datadir=dict(type="path", default="/var/lib/mysql"),
    )
    argument_spec.update(gate.GATE_ARGUMENT_SPEC)
    argument_spec.update(LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    if not HAS_PYMYSQL:
        module.fail_json(msg=missing_required_lib("PyMySQL"), exception=str(PYMYSQL_IMPORT_ERROR))
    params = module.params
    if params["expected_size"] < 1:
        module.fail_json(msg="expected_size must be at least 1")
    watch = NodeWatch(module)
    outcome = gate.module_wait(module, watch.poll, give_up=watch.unit_down)
    summary = outcome["seen"] or {}
    fields = dict(progress=watch.progress, state=summary.get("local_state_comment"),
                  cluster_status=summary.get("cluster_status"), cluster_size=summary.get("cluster_size"),
                  ready=summary.get("ready"))
    if outcome["gave_up"]:
        fields["unit_log"] = unit_log(module, params["service"])
    gate.finish(module, outcome, "the node", fields, detail="It went: %s" % watch.path())


if __name__ == "__main__":
    main()
