# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Patroni's REST API: one client for the patroni_* modules, and the pure decisions they take on its answers.

Patroni owns who is the leader; these helpers only read its view (``GET /cluster``, ``GET /config``) and ask it to
act (``PATCH /config``, ``POST /restart``, ``POST /switchover``), so a playbook never fights it over the primary.
The decisions (is the cluster healthy enough for a gate, which dynamic settings differ) are pure functions, unit
tested without a server.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json
import socket
import ssl
from urllib.error import HTTPError, URLError

from ansible.module_utils.urls import ConnectionError as UrlsConnectionError
from ansible.module_utils.urls import SSLValidationError, open_url

# The options every patroni_* module takes to reach the REST API (the patroni_api doc fragment documents them).
API_SPEC = dict(
    api_urls=dict(type='list', elements='str', required=True),
    ca_file=dict(type='path'),
    username=dict(type='str'),
    password=dict(type='str', no_log=True),
    request_timeout=dict(type='float', default=5.0),
)

# Member states in which a replica applies its leader's WAL (Patroni 4: "streaming"; older: "running").
REPLICA_OK_STATES = ('streaming', 'running')
LEADER_ROLES = ('leader', 'master', 'primary', 'standby_leader')


class PatroniError(Exception):
    """A REST call that did not answer, or answered with an error status."""


class PatroniApi(object):
    """Calls against a list of members' REST endpoints (https://host:8008): reads take the first that answers."""

    def __init__(self, api_urls, ca_file=None, username=None, password=None, request_timeout=5.0):
        self.api_urls = [u.rstrip('/') for u in api_urls]
        self.timeout = request_timeout
        self.auth = None
        if username and password:
            token = base64.b64encode(('%s:%s' % (username, password)).encode('utf-8')).decode('ascii')
            self.auth = 'Basic ' + token
        # The server's certificate is verified against the collection's CA, its name against the URL's host.
        self.ca_file = ca_file or None

    def call(self, url, method='GET', body=None, timeout=None):
        """One request to one URL: (status, parsed JSON or text). HTTP error statuses are answers too. Patroni
        answers a restart or a switchover once it is done: give those their own, longer timeout."""
        data = json.dumps(body).encode('utf-8') if body is not None else None
        headers = {'Accept': 'application/json'}
        if data is not None:
            headers['Content-Type'] = 'application/json'
        if self.auth and method != 'GET':
            headers['Authorization'] = self.auth
        try:
            # no proxy, no netrc: this is cluster traffic; the certificate is checked when the URL is https
            response = open_url(url, data=data, headers=headers, method=method, timeout=timeout or self.timeout,
                                validate_certs=True, ca_path=self.ca_file, use_proxy=False, use_netrc=False)
            status, text = response.status, response.read().decode('utf-8', 'replace')
        except HTTPError as e:
            status, text = e.code, e.read().decode('utf-8', 'replace')
        except (URLError, UrlsConnectionError, SSLValidationError, socket.timeout, ssl.SSLError, OSError,
                ValueError) as e:
            raise PatroniError('%s %s: %s' % (method, url, getattr(e, 'reason', e)))
        try:
            return status, json.loads(text)
        except ValueError:
            return status, text.strip()

    def read(self, path):
        """GET path from the first member that answers 200; PatroniError naming every failure otherwise."""
        errors = []
        for base in self.api_urls:
            try:
                status, answer = self.call(base + path)
            except PatroniError as e:
                errors.append(str(e))
                continue
            if status == 200:
                return answer
            errors.append('GET %s%s: HTTP %s %s' % (base, path, status, answer))
        raise PatroniError('; '.join(errors) or 'no api_urls')

    def cluster(self):
        return self.read('/cluster')

    def dynamic_config(self):
        return self.read('/config')


def member_lag(member):
    """A replica's lag in bytes as Patroni reports it; None when unknown (not streaming, or no position yet)."""
    lag = member.get('lag', member.get('receive_lag'))
    return lag if isinstance(lag, int) else None


def leader_of(cluster):
    """The name of the member holding the leader key, or None."""
    for member in cluster.get('members', []):
        if member.get('role') in LEADER_ROLES:
            return member.get('name')
    return None


def cluster_verdict(cluster, expect_members=None, max_lag_bytes=None, require_leader=True, leave_out=()):
    """Whether a cluster passes a gate, and why not: (healthy, reasons).

    Healthy means one leader that runs, every expected member present, every replica streaming with a known lag
    at most max_lag_bytes, and Patroni not paused (a paused cluster does not fail over). Replicas in leave_out
    are not judged (the broken member a reinit is about to rebuild); a leader is always judged.
    """
    reasons = []
    members = {m.get('name'): m for m in cluster.get('members', [])}
    leaders = [n for n, m in members.items() if m.get('role') in LEADER_ROLES]
    if require_leader and len(leaders) != 1:
        reasons.append('leaders: %s (one expected)' % (', '.join(sorted(leaders)) or 'none'))
    for name in leaders:
        if members[name].get('state') != 'running':
            reasons.append('leader %s is %s' % (name, members[name].get('state')))
        if name in leave_out:
            reasons.append('%s leads: the leader cannot be left out of the gate' % name)
    if cluster.get('pause'):
        reasons.append('Patroni is paused (maintenance mode): it would not fail over')
    for name in sorted(set(expect_members or []) - set(members) - set(leave_out)):
        reasons.append('%s is not a member' % name)
    for name, member in sorted(members.items()):
        if name in leaders or name in leave_out:
            continue
        state = member.get('state')
        if state not in REPLICA_OK_STATES:
            reasons.append('%s is %s' % (name, state))
            continue
        lag = member_lag(member)
        if lag is None:
            reasons.append('%s has no known lag' % name)
        elif max_lag_bytes is not None and lag > max_lag_bytes:
            reasons.append('%s lags %d bytes (at most %d)' % (name, lag, max_lag_bytes))
    return not reasons, reasons


def summary(cluster):
    """What a gate reports: the leader, and each member's role, state, lag, timeline and pending restart."""
    return {
        'leader': leader_of(cluster),
        'members': [{
            'name': m.get('name'), 'role': m.get('role'), 'state': m.get('state'), 'host': m.get('host'),
            'lag': m.get('lag'), 'timeline': m.get('timeline'), 'pending_restart': bool(m.get('pending_restart')),
            'api_url': m.get('api_url'),
        } for m in sorted(cluster.get('members', []), key=lambda m: m.get('name') or '')],
        'paused': bool(cluster.get('pause')),
    }


def config_patch(current, desired, path=''):
    """The PATCH body that turns the dynamic configuration current into desired, and the names it changes.

    Only keys of desired are compared (Patroni keeps what it was not told about); a nested dict is compared key
    by key; a value of None in desired removes the key when present. Values compare as Patroni stores them: a
    number given as a string (from a template) equals the same number.
    """
    patch, changed = {}, []
    for key, want in sorted(desired.items()):
        have = current.get(key) if isinstance(current, dict) else None
        name = '%s.%s' % (path, key) if path else key
        if isinstance(want, dict):
            sub, sub_changed = config_patch(have if isinstance(have, dict) else {}, want, name)
            if sub:
                patch[key] = sub
                changed.extend(sub_changed)
        elif want is None:
            if isinstance(current, dict) and key in current:
                patch[key] = None
                changed.append(name)
        elif not same_value(have, want):
            patch[key] = want
            changed.append(name)
    return patch, changed


def same_value(have, want):
    """Whether Patroni's stored value equals the wanted one (true/on/yes and false/off/no are one value each)."""
    return have is not None and _canonical(have) == _canonical(want)


def _canonical(value):
    if isinstance(value, bool):
        return 'on' if value else 'off'
    text = str(value).strip()
    return {'true': 'on', 'yes': 'on', 'on': 'on', 'false': 'off', 'no': 'off', 'off': 'off'}.get(text.lower(), text)
