#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: patroni_member
short_description: Ask Patroni to restart a member, switch the leader over, or rebuild a replica
version_added: 0.1.0
description:
  - Acts only through Patroni's REST API, so Patroni stays the one that decides and records who leads.
  - O(action=restart) restarts PostgreSQL on O(member) (C(POST /restart) on that member), by default only when
    Patroni reports a pending restart for it, and waits until it runs again (a replica streams again, the leader
    leads again).
  - O(action=switchover) moves the leader key to O(member) (C(POST /switchover)), or to the replica Patroni
    picks when O(member) is not given, and waits until the new leader runs. Nothing is done when O(member)
    already leads.
  - O(action=reinit) rebuilds the replica O(member) from the leader (C(POST /reinitialize)); Patroni refuses it on the
    leader, and so does this module.
  - It does not gate the whole cluster; run M(dbops.clusters.patroni_cluster) before and after.
options:
  action:
    description: What to ask Patroni for.
    type: str
    choices: [restart, switchover, reinit]
    required: true
  member:
    description: The member to restart or rebuild, or the switchover's candidate.
    type: str
  only_pending:
    description: With O(action=restart), restart only when Patroni reports C(pending_restart) for the member.
    type: bool
    default: true
  timeout:
    description: Seconds to wait for the member (or the new leader) to run again.
    type: int
    default: 120
extends_documentation_fragment:
  - dbops.clusters.patroni_api
attributes:
  check_mode:
    support: full
    description: Reads the cluster and reports what it would ask Patroni for, without asking.
  diff_mode:
    support: none
    description: Nothing to diff.
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Restart pg2 for the settings that need it
  dbops.clusters.patroni_member:
    api_urls: [https://pg1:8008, https://pg2:8008, https://pg3:8008]
    ca_file: /etc/postgresql/17/main/ca.crt
    username: patroni
    password: "{{ patroni_rest_password }}"
    action: restart
    member: pg2
  no_log: false

- name: Move the leader to pg3
  dbops.clusters.patroni_member:
    api_urls: [https://pg1:8008]
    ca_file: /etc/postgresql/17/main/ca.crt
    username: patroni
    password: "{{ patroni_rest_password }}"
    action: switchover
    member: pg3
"""

RETURN = r"""
leader:
  description: The leader after the action.
  returned: always
  type: str
previous_leader:
  description: The leader before the action.
  returned: always
  type: str
reason:
  description: Why the module acted or did not.
  returned: always
  type: str
waited:
  description: Seconds waited for the member to run again.
  returned: always
  type: float
pending_restart:
  description:
    - Whether Patroni still reports a pending restart for O(member) afterwards. A replica keeps one after its
      restart when a shared setting was lowered, until the leader restarted with the lower value.
  returned: when O(member) is given and not in check mode
  type: bool
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dbops.clusters.plugins.module_utils import gate
from ansible_collections.dbops.clusters.plugins.module_utils.patroni_api import (
    API_SPEC,
    REPLICA_OK_STATES,
    PatroniApi,
    PatroniError,
    leader_of,
)


def members_of(cluster):
    return dict((m.get('name'), m) for m in cluster.get('members', []))


def base_url(member):
    """The REST base URL Patroni publishes for a member (its api_url ends in /patroni)."""
    url = member.get('api_url') or ''
    return url[:-len('/patroni')] if url.endswith('/patroni') else url.rstrip('/')


def wait_until(api, module, done, what, timeout):
    """Read the cluster every half second until done(cluster) holds; the last cluster read and seconds waited.
    Fails the module at the timeout, naming what it waited for."""
    def poll():
        try:
            cluster = api.cluster()
            return cluster, [] if done(cluster) else [what]
        except PatroniError as e:
            return None, ['no member answered: %s' % e]
    outcome = gate.wait(poll, timeout, 0.5)
    if not outcome['ok']:
        module.fail_json(msg='Patroni did not reach the expected state within %s s: %s' % (
            timeout, '; '.join(outcome['unmet'])), cluster=outcome['seen'], waited=outcome['waited_seconds'])
    return outcome['seen'], outcome['waited_seconds']


def postmaster_start(api, member):
    """When the member's PostgreSQL started, as its own REST API says now (the cluster view can lag a loop)."""
    dummy, answer = api.call(base_url(member) + '/patroni')
    return answer.get('postmaster_start_time') if isinstance(answer, dict) else None


def rebuilt(api, name, started_before):
    """The replica streams again from a PostgreSQL started after the reinit was asked for: a reinit of a replica
    that streamed before is not done while the old server still answers (Patroni rebuilds it asynchronously)."""
    def done(cluster):
        member = members_of(cluster).get(name) or {}
        if member.get('state') not in REPLICA_OK_STATES:
            return False
        started = postmaster_start(api, member)
        return bool(started) and started != started_before
    return done


def runs_again(name, was_leader):
    """The member runs again: the leader still leading, a replica streaming. A replica may still report a pending
    restart: a shared setting lowered (max_connections, max_locks_per_transaction, ...) cannot go below the
    leader's value on a replica, so Patroni keeps the old one until the leader restarted with the new one."""
    def done(cluster):
        member = members_of(cluster).get(name) or {}
        if was_leader:
            return leader_of(cluster) == name and member.get('state') == 'running'
        return member.get('state') in REPLICA_OK_STATES
    return done


def post(module, api, url, body):
    status, answer = api.call(url, method='POST', body=body, timeout=module.params['timeout'])
    if status not in (200, 202):
        module.fail_json(msg='POST %s refused: HTTP %s %s' % (url, status, answer))
    return answer


def main():
    spec = dict(
        action=dict(type='str', required=True, choices=['restart', 'switchover', 'reinit']),
        member=dict(type='str'),
        only_pending=dict(type='bool', default=True),
        timeout=dict(type='int', default=120),
    )
    spec.update(API_SPEC)
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True,
                           required_if=[('action', 'restart', ['member']), ('action', 'reinit', ['member'])])
    params = module.params
    api = PatroniApi(params['api_urls'], params['ca_file'], params['username'], params['password'],
                     params['request_timeout'])
    try:
        cluster = api.cluster()
    except PatroniError as e:
        module.fail_json(msg='no Patroni REST API answered: %s' % e)
    members, leader, name = members_of(cluster), leader_of(cluster), params['member']
    result = dict(changed=False, previous_leader=leader, leader=leader, waited=0.0)
    if name and name not in members:
        module.fail_json(msg='%s is not a member of the Patroni cluster (members: %s)'
                         % (name, ', '.join(sorted(members))), **result)
    action = params['action']
    try:
        if action == 'restart':
            member = members[name]
            if params['only_pending'] and not member.get('pending_restart'):
                module.exit_json(reason='Patroni reports no pending restart for %s' % name, **result)
            result.update(changed=True, reason='%s restarted %s' % (
                name, 'for its pending restart' if member.get('pending_restart') else 'on request'))
            if not module.check_mode:
                post(module, api, base_url(member) + '/restart', {})
                cluster, result['waited'] = wait_until(api, module, runs_again(name, name == leader),
                                                       '%s to run again' % name, params['timeout'])
        elif action == 'switchover':
            if not leader:
                module.fail_json(msg='the cluster has no leader to switch over from (a failover is Patroni\'s '
                                     'own job)', **result)
            if name == leader:
                module.exit_json(reason='%s already leads' % name, **result)
            result.update(changed=True, reason='leader moved from %s to %s' % (leader, name or 'a replica'))
            if not module.check_mode:
                body = {'leader': leader}
                if name:
                    body['candidate'] = name
                post(module, api, base_url(members[leader]) + '/switchover', body)
                cluster, result['waited'] = wait_until(
                    api, module, lambda c: leader_of(c) not in (None, leader) and (not name or leader_of(c) == name)
                    and members_of(c)[leader_of(c)].get('state') == 'running',
                    'a new leader %s running' % (name or 'other than %s' % leader), params['timeout'])
        else:
            if name == leader:
                module.fail_json(msg='%s leads: only a replica is rebuilt from the leader' % name, **result)
            result.update(changed=True, reason='%s rebuilt from the leader %s' % (name, leader))
            if not module.check_mode:
                started_before = postmaster_start(api, members[name])
                post(module, api, base_url(members[name]) + '/reinitialize', {'force': True})
                cluster, result['waited'] = wait_until(api, module, rebuilt(api, name, started_before),
                                                       '%s rebuilt and streaming' % name, params['timeout'])
    except PatroniError as e:
        module.fail_json(msg=str(e), **result)
    result['leader'] = leader_of(cluster) if not module.check_mode else (
        name if action == 'switchover' else leader)
    if name and not module.check_mode:
        result['pending_restart'] = bool((members_of(cluster).get(name) or {}).get('pending_restart'))
    module.exit_json(**result)


if __name__ == '__main__':
    main()
