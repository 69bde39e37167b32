#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: etcd_health
short_description: Wait until every etcd member is healthy and the members agree on one leader
version_added: 0.1.0
description:
  - The health gate of the etcd role, its rolling restart and member replacement. Polls every I(interval)
    seconds until all of these hold, or fails after I(timeout) seconds naming each unmet condition.
  - The member list answers (C(/v3/cluster/member/list) through any endpoint); every listed member has started
    and votes (no learner); with I(expect_members), the members' names are exactly those.
  - Every listed member answers on its client URL (C(/v3/maintenance/status)), its C(/health) is true (a
    linearizable read, so it needs a quorum behind it) and it reports no error (alarm); all of them report the
    same leader, and that leader is a listed member.
  - Asks the endpoints given and every client URL the member list names, so a member missing from I(endpoints)
    is still checked.
options:
  expect_members:
    description: Names the member list must hold, exactly; not checked when omitted.
    type: list
    elements: str
  timeout:
    description: Seconds to wait for the conditions (0 looks once).
    type: int
    default: 120
extends_documentation_fragment:
  - dbops.clusters.etcd_login
  - dbops.clusters.gate
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Gate, every member of the group healthy with one leader
  dbops.clusters.etcd_health:
    endpoints: "{{ groups['etcd'] | map('extract', hostvars, 'etcd_client_url') | list }}"
    expect_members: "{{ groups['etcd'] }}"
    timeout: 120
"""

RETURN = r"""
ok:
  description: Whether every condition held at the last poll.
  returned: always
  type: bool
leader:
  description: Name of the leader all members agree on, or an empty string.
  returned: always
  type: str
members:
  description: The member list (id, name, peer_urls, client_urls, learner, started).
  returned: always
  type: list
  elements: dict
status:
  description: Per member name (or id), what its client URL answered (health, reason, leader, raft_term, version).
  returned: always
  type: dict
unmet:
  description: Why the cluster did not pass at the last poll, one sentence each (empty when ok).
  returned: always
  type: list
  elements: str
waited_seconds:
  description: Seconds from the first poll to the last.
  returned: always
  type: float
checks:
  description: Number of polls.
  returned: always
  type: int
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dbops.clusters.plugins.module_utils import gate
from ansible_collections.dbops.clusters.plugins.module_utils.etcd import (
    LOGIN_ARGUMENT_SPEC, EtcdError, health_verdict, survey)


def look(params):
    """((leader, members, status), unmet) from one poll. A member that does not answer is an unmet condition;
    an EtcdError out of the survey (TLS files it cannot use, a refused login) stops the gate."""
    try:
        members, statuses, seen = survey(params)
    except EtcdError as err:
        raise gate.Refused(str(err))
    verdict = health_verdict(members, statuses, params.get("expect_members"))
    if not members:
        verdict["reasons"] += [s["reason"] for s in seen if s["endpoint"] == "member list"]
    by_id = dict((m["id"], m["name"] or m["id"]) for m in members)
    status = {}
    for member_id, seen in statuses.items():
        status[by_id.get(member_id, member_id)] = {
            "health": seen.get("health"), "reason": seen.get("reason", ""), "endpoint": seen.get("endpoint", ""),
            "leader": by_id.get(seen.get("leader", ""), seen.get("leader", "")),
            "raft_term": seen.get("raft_term", 0), "version": seen.get("version", "")}
    return (verdict["leader"], members, status), verdict["reasons"]


def main():
    spec = dict(LOGIN_ARGUMENT_SPEC)
    spec.update(expect_members=dict(type="list", elements="str"), timeout=dict(type="int", default=120))
    spec.update(gate.GATE_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    params = module.params
    outcome = gate.module_wait(module, lambda: look(params))
    leader, members, status = outcome["seen"] or ("", [], {})
    gate.finish(module, outcome, "etcd", dict(leader=leader, members=members, status=status))


if __name__ == "__main__":
    main()
