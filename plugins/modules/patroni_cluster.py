#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: patroni_cluster
short_description: Read a Patroni cluster's members and leader, and gate on its health
version_added: 0.1.0
description:
  - Reads C(GET /cluster) from the first member whose REST API answers, and reports the leader and each member's
    role, state, lag, timeline and pending restart, as Patroni sees them (who leads comes from Patroni, never from
    the inventory).
  - With O(timeout) above 0 it is a health gate, waiting until the cluster has exactly one running leader, every
    member of O(expect_members), every replica streaming at most O(max_lag_bytes) behind, Patroni not paused,
    and the leader O(expect_leader) when given. At the timeout it fails with the reasons it last saw.
options:
  expect_members:
    description: Member names (Patroni's C(name), the inventory name in this collection) that must be present.
    type: list
    elements: str
    default: []
  max_lag_bytes:
    description: Largest replica lag accepted, in bytes of WAL.
    type: int
    default: 16777216
  expect_leader:
    description: When given, the gate also waits until this member holds the leader key.
    type: str
  leave_out:
    description:
      - Replicas the gate does not judge (neither their state, their lag, nor their presence), such as the broken
        member a reinit is about to rebuild. The leader is never left out; naming it is an unmet condition.
    type: list
    elements: str
    default: []
  timeout:
    description:
      - Seconds to wait for a healthy cluster. 0 reads once and never fails on health (it fails only when no
        member's REST API answers).
    type: int
    default: 0
extends_documentation_fragment:
  - dbops.clusters.patroni_api
  - dbops.clusters.gate
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Gate - one leader, every member streaming
  dbops.clusters.patroni_cluster:
    api_urls: [https://pg1:8008, https://pg2:8008, https://pg3:8008]
    ca_file: /etc/postgresql/17/main/ca.crt
    expect_members: [pg1, pg2, pg3]
    timeout: 120
  register: cluster

- name: Say who leads
  ansible.builtin.debug:
    msg: "{{ cluster.leader }}"
"""

RETURN = r"""
ok:
  description: Whether every condition held at the last reading.
  returned: always
  type: bool
unmet:
  description: The conditions that did not hold at the last reading, one sentence each (empty when ok).
  returned: always
  type: list
  elements: str
checks:
  description: Number of readings.
  returned: always
  type: int
leader:
  description: The member holding the leader key, or null.
  returned: always
  type: str
members:
  description: One entry per member with name, role, state, host, lag, timeline, pending_restart and api_url.
  returned: always
  type: list
  elements: dict
paused:
  description: Whether Patroni is in maintenance mode.
  returned: always
  type: bool
waited_seconds:
  description: Seconds from the first reading to the last.
  returned: always
  type: float
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dbops.clusters.plugins.module_utils import gate
from ansible_collections.dbops.clusters.plugins.module_utils.patroni_api import (
    API_SPEC,
    PatroniApi,
    PatroniError,
    cluster_verdict,
    leader_of,
    summary,
)


def look(api, params):
    """(the cluster as /cluster answered, or None when no member answered; unmet) from one reading."""
    try:
        cluster = api.cluster()
    except PatroniError as e:
        return None, ['no member answered: %s' % e]
    dummy, unmet = cluster_verdict(cluster, params['expect_members'], params['max_lag_bytes'],
                                   leave_out=params['leave_out'])
    expected, leader = params['expect_leader'], leader_of(cluster)
    if expected and leader != expected:
        unmet.append('the leader is %s, %s expected' % (leader, expected))
    return cluster, unmet


def main():
    spec = dict(
        expect_members=dict(type='list', elements='str', default=[]),
        max_lag_bytes=dict(type='int', default=16777216),
        expect_leader=dict(type='str'),
        leave_out=dict(type='list', elements='str', default=[]),
        timeout=dict(type='int', default=0),
    )
    spec.update(gate.GATE_ARGUMENT_SPEC)
    spec.update(API_SPEC)
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    params = module.params
    if params['max_lag_bytes'] < 0:
        module.fail_json(msg='max_lag_bytes must be 0 or more')
    api = PatroniApi(params['api_urls'], params['ca_file'], params['username'], params['password'],
                     params['request_timeout'])
    reading = params['timeout'] == 0
    outcome = gate.module_wait(module, lambda: look(api, params), once=reading)
    if reading and outcome['seen'] is None:
        module.fail_json(msg='no Patroni REST API answered: %s' % '; '.join(outcome['unmet']), ok=False,
                         unmet=outcome['unmet'], checks=outcome['checks'], waited_seconds=outcome['waited_seconds'])
    gate.finish(module, outcome, 'the Patroni cluster', summary(outcome['seen'] or {}), fail_on_unmet=not reading)


if __name__ == '__main__':
    main()
