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
  timeout:
    description: Seconds to wait for a healthy cluster; 0 reads once and never fails on health.
    type: int
    default: 0
extends_documentation_fragment:
  - dbops.clusters.patroni_api
attributes:
  check_mode:
    support: full
    description: Only reads; behaves the same in check mode.
  diff_mode:
    support: none
    description: Nothing to diff.
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
healthy:
  description: Whether the last reading passed the gate.
  returned: always
  type: bool
reasons:
  description: Why the last reading did not pass (empty when healthy).
  returned: always
  type: list
  elements: str
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
waited:
  description: Seconds waited.
  returned: always
  type: float
"""

import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dbops.clusters.plugins.module_utils.patroni_api import (
    API_SPEC,
    PatroniApi,
    PatroniError,
    cluster_verdict,
    leader_of,
    summary,
)


def verdict(cluster, params):
    healthy, reasons = cluster_verdict(cluster, params['expect_members'], params['max_lag_bytes'])
    expected, leader = params['expect_leader'], leader_of(cluster)
    if expected and leader != expected:
        reasons.append('the leader is %s, %s expected' % (leader, expected))
    return not reasons, reasons


def main():
    spec = dict(
        expect_members=dict(type='list', elements='str', default=[]),
        max_lag_bytes=dict(type='int', default=16777216),
        expect_leader=dict(type='str'),
        timeout=dict(type='int', default=0),
    )
    spec.update(API_SPEC)
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    params = module.params
    if params['timeout'] < 0 or params['max_lag_bytes'] < 0:
        module.fail_json(msg='timeout and max_lag_bytes must be 0 or more')
    api = PatroniApi(params['api_urls'], params['ca_file'], params['username'], params['password'],
                     params['request_timeout'])
    started = time.time()
    while True:
        cluster, error = None, None
        try:
            cluster = api.cluster()
            healthy, reasons = verdict(cluster, params)
        except PatroniError as e:
            error = str(e)
            healthy, reasons = False, ['no member answered: %s' % error]
        waited = round(time.time() - started, 1)
        if healthy or waited >= params['timeout']:
            break
        time.sleep(0.5)
    if cluster is None and params['timeout'] == 0:
        module.fail_json(msg='no Patroni REST API answered: %s' % error, waited=waited)
    result = dict(changed=False, healthy=healthy, reasons=reasons, waited=waited,
                  **summary(cluster or {}))
    if params['timeout'] > 0 and not healthy:
        module.fail_json(msg='Patroni health gate timed out after %s s: %s' % (waited, '; '.join(reasons)),
                         **result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
