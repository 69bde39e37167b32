# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""etcd v3 through its JSON gRPC gateway over HTTPS with a client certificate, and the decisions of the etcd
modules (health gate, member change, authentication plan) as pure functions.

Why the gateway and not etcdctl: a password given to etcdctl is on its command line (`--user root:secret`),
readable in /proc by every local user for the command's life. Here the password goes in a request body over
TLS, from the module's own process. The gateway paths are etcd's (api/etcdserverpb/rpc.proto, /v3/...): field
names are the protobuf names (`peerURLs`, `range_end`, `member_id`), 64-bit integers come back as strings, and
fields holding their default (READ = 0 for a permission type, false, 0) are left out of a response.

The gateway's own requests to the server carry the server's certificate; etcd never takes a certificate's common
name as the user for a gateway request (auth/store.go, AuthInfoFromTLS), so over the gateway only a token from
/v3/auth/authenticate authenticates. Pure parts unit tested in tests/unit/test_etcd.py.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json
import socket
import ssl

from urllib.error import HTTPError, URLError
from urllib.request import Request

from ansible.module_utils.urls import ConnectionError as UrlsConnectionError
from ansible.module_utils.urls import SSLValidationError, open_url

LOGIN_ARGUMENT_SPEC = dict(
    endpoints=dict(type="list", elements="str", required=True),
    ca_cert=dict(type="path", default="/etc/etcd/tls/ca.crt"),
    client_cert=dict(type="path", default="/etc/etcd/tls/host.crt"),
    client_key=dict(type="path", default="/etc/etcd/tls/host.key", no_log=False),
    login_user=dict(type="str"),
    login_password=dict(type="str", no_log=True),
    connect_timeout=dict(type="float", default=5),
)

READ, WRITE, READWRITE = "READ", "WRITE", "READWRITE"
PERM_TYPES = {0: READ, 1: WRITE, 2: READWRITE, READ: READ, WRITE: WRITE, READWRITE: READWRITE}


class EtcdError(Exception):
    """A request that got no answer (refused, timed out, TLS refused) or an error answer (status and text)."""

    def __init__(self, message, status=None, body=None):
        super(EtcdError, self).__init__(message)
        self.status = status
        self.body = body or {}

    @property
    def text(self):
        return str(self.body.get("error") or self.body.get("message") or self)


def prefix_range_end(prefix):
    """etcd's range end for "every key starting with prefix" (clientv3.GetPrefixRangeEnd): the prefix with its
    last byte below 0xff incremented and what follows dropped; "\\0" when every byte is 0xff (to the end)."""
    data = bytearray(prefix.encode("utf-8") if not isinstance(prefix, (bytes, bytearray)) else prefix)
    for index in range(len(data) - 1, -1, -1):
        if data[index] < 0xff:
            data[index] += 1
            return bytes(data[:index + 1])
    return b"\0"


def b64(value):
    return base64.b64encode(value if isinstance(value, bytes) else value.encode("utf-8")).decode("ascii")


def unb64(value):
    return base64.b64decode(value or "")


class Client(object):
    """One etcd endpoint (https://host:port). Authenticates lazily when a user is given; the token is this
    member's (simple tokens are per member), kept for the client's life and renewed once when refused."""

    def __init__(self, endpoint, ca_cert, client_cert, client_key, timeout=5, user=None, password=None,
                 opener=None):
        self.endpoint = endpoint.rstrip("/")
        self.timeout = timeout
        self.user = user
        self.password = password
        self.token = None
        self.auth_off = False
        self.opener = opener
        self.tls = dict(ca_path=ca_cert, client_cert=client_cert or None, client_key=client_key or None)
        if opener is None:
            # read here, so a missing or unreadable file is named before any request
            try:
                context = ssl.create_default_context(cafile=ca_cert)
                if client_cert:
                    context.load_cert_chain(client_cert, client_key)
            except (IOError, OSError, ssl.SSLError) as err:
                raise EtcdError("cannot use the TLS files (ca_cert %s, client_cert %s, client_key %s): %s"
                                % (ca_cert, client_cert, client_key, err))

    def _open(self, path, body, token):
        data = None if body is None else json.dumps(body).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = token
        if self.opener is not None:
            return self.opener(Request(self.endpoint + path, data=data, headers=headers), self.timeout)
        try:
            # the server's certificate and name are checked against the CA; no proxy, no netrc: cluster traffic
            response = open_url(self.endpoint + path, data=data, headers=headers,
                                method="GET" if data is None else "POST", timeout=self.timeout,
                                validate_certs=True, use_proxy=False, use_netrc=False, **self.tls)
            return json.loads(response.read().decode("utf-8") or "{}")
        except HTTPError as err:
            try:
                answer = json.loads(err.read().decode("utf-8") or "{}")
            except ValueError:
                answer = {}
            raise EtcdError("%s%s: HTTP %s %s" % (self.endpoint, path, err.code,
                                                  answer.get("error") or answer.get("message") or err.reason),
                            status=err.code, body=answer)
        except (URLError, UrlsConnectionError, SSLValidationError, socket.timeout, ssl.SSLError, OSError,
                ValueError) as err:
            raise EtcdError("%s%s: %s" % (self.endpoint, path, getattr(err, "reason", None) or err))

    def authenticate(self):
        answer = self._open("/v3/auth/authenticate", {"name": self.user, "password": self.password}, None)
        self.token = answer.get("token")
        return self.token

    def call(self, path, body=None, auth=True):
        """POST body (a dict) to path; GET when body is None. Adds the token when a user is set and auth is
        true; a refused token (expired, or the member restarted) is renewed once."""
        if auth and self.user and self.token is None and not self.auth_off:
            try:
                self.authenticate()
            except EtcdError as err:
                if not is_auth_not_enabled(err):
                    raise
                self.auth_off = True        # nothing to log in to: requests go without a token
        try:
            return self._open(path, body, self.token if auth else None)
        except EtcdError as err:
            if auth and self.user and "token" in err.text.lower():
                self.authenticate()
                return self._open(path, body, self.token)
            raise


def is_auth_not_enabled(err):
    return "authentication is not enabled" in err.text.lower()


def is_auth_failed(err):
    return "authentication failed" in err.text.lower()


def is_not_found(err):
    text = err.text.lower()
    return "not found" in text


# --- members -------------------------------------------------------------------------------------------------

def normalize_members(answer):
    """Members of a /v3/cluster/member/list answer: [{id, name, peer_urls, client_urls, learner, started}]. A
    member added but not started yet has no name and no client URL."""
    members = []
    for raw in answer.get("members") or []:
        members.append({
            "id": str(raw.get("ID", "0")),
            "name": raw.get("name") or "",
            "peer_urls": list(raw.get("peerURLs") or []),
            "client_urls": list(raw.get("clientURLs") or []),
            "learner": bool(raw.get("isLearner", False)),
            "started": bool(raw.get("name")),
        })
    return members


def quorum(voters):
    return voters // 2 + 1


def health_verdict(members, statuses, expect_members=None):
    """Whether a cluster passes the gate, from the member list and what each member's client URL answered.

    members: normalize_members() of the list (one answer, from any member).
    statuses: {member id: {"health": True/False/None, "reason": text, "leader": id or "", "raft_term": n,
               "errors": [...], "version": text}} for the members that answered /v3/maintenance/status, and
               {"health": None, "reason": why} for those that did not.
    expect_members: names the cluster must have, exactly (None: any).
    Returns {ok, reasons, leader (name or ""), leader_id, healthy (names), unhealthy (names)}.
    """
    reasons = []
    if not members:
        reasons.append("no member list: no endpoint answered /v3/cluster/member/list")
    by_id = dict((m["id"], m) for m in members)
    names = [m["name"] or ("(unstarted %s)" % m["id"]) for m in members]
    for member in members:
        if not member["started"]:
            reasons.append("member %s (peer %s) was added but has not started"
                           % (member["id"], ",".join(member["peer_urls"])))
        if member["learner"]:
            reasons.append("member %s is a learner, not a voting member" % (member["name"] or member["id"]))
    if expect_members is not None:
        missing = sorted(set(expect_members) - set(names))
        extra = sorted(set(names) - set(expect_members))
        if missing:
            reasons.append("expected members missing from the member list: %s" % ", ".join(missing))
        if extra:
            reasons.append("members not expected: %s" % ", ".join(extra))
    healthy, unhealthy, leaders = [], [], set()
    for member in members:
        label = member["name"] or member["id"]
        status = statuses.get(member["id"])
        if status is None:
            unhealthy.append(label)
            reasons.append("member %s did not answer (none of the endpoints reached it)" % label)
            continue
        if status.get("health") is not True:
            unhealthy.append(label)
            reasons.append("member %s is not healthy: %s" % (label, status.get("reason") or "no answer"))
            continue
        if status.get("errors"):
            unhealthy.append(label)
            reasons.append("member %s reports errors: %s" % (label, "; ".join(status["errors"])))
            continue
        healthy.append(label)
        leaders.add(str(status.get("leader") or "0"))
    leaders.discard("0")
    leader_id, leader = "", ""
    if len(leaders) > 1:
        reasons.append("members disagree on the leader: %s" % ", ".join(
            sorted(by_id[i]["name"] if i in by_id else i for i in leaders)))
    elif not leaders and members:
        reasons.append("no leader")
    elif leaders:
        leader_id = leaders.pop()
        if leader_id in by_id:
            leader = by_id[leader_id]["name"]
        else:
            reasons.append("the leader %s is not in the member list" % leader_id)
    return {"ok": not reasons, "reasons": reasons, "leader": leader, "leader_id": leader_id,
            "healthy": healthy, "unhealthy": unhealthy}


def member_change_plan(members, healthy_ids, state, name, peer_urls):
    """What etcd_member does, decided from the member list and which members answered /health true.

    Returns {"action": "none"|"add"|"remove", "member": the member concerned or None, "refusal": text or None,
             "reason": text}.
    Adding counts the new member as a voter that is not up yet: the cluster after the add needs a quorum of
    len(members) + 1 among the members healthy now (etcd's own strict reconfiguration check refuses the same).
    Removing needs the remaining voters' quorum among the healthy remaining ones, and never removes the only
    healthy member.
    """
    peer_urls = list(peer_urls or [])
    voters = [m for m in members if not m["learner"]]
    healthy_voters = [m for m in voters if m["id"] in healthy_ids]
    by_name = [m for m in members if name and m["name"] == name]
    by_peer = [m for m in members if set(m["peer_urls"]) & set(peer_urls)]
    if state == "present":
        if by_peer:
            member = by_peer[0]
            if member["name"] and member["name"] != name:
                return {"action": "none", "member": member, "reason": "",
                        "refusal": "peer URL %s belongs to member %s, not %s"
                                   % (",".join(peer_urls), member["name"], name)}
            if sorted(member["peer_urls"]) != sorted(peer_urls):
                return {"action": "none", "member": member, "reason": "",
                        "refusal": "member %s has peer URLs %s, not %s: remove it first"
                                   % (name, ",".join(member["peer_urls"]), ",".join(peer_urls))}
            return {"action": "none", "member": member, "refusal": None,
                    "reason": "%s is a member (%s)" % (name, "started" if member["started"] else "added, not started")}
        if by_name:
            return {"action": "none", "member": by_name[0], "reason": "",
                    "refusal": "member %s has peer URLs %s, not %s: remove it first (etcd_replace_member.yml)"
                               % (name, ",".join(by_name[0]["peer_urls"]), ",".join(peer_urls))}
        if not peer_urls:
            return {"action": "none", "member": None, "reason": "", "refusal": "peer_urls is required to add %s" % name}
        need = quorum(len(voters) + 1)
        if len(healthy_voters) < need:
            return {"action": "none", "member": None, "reason": "",
                    "refusal": "adding %s makes %d voting members, which need %d healthy for quorum; only %d are "
                               "healthy now (%s): repair or remove the unhealthy members first"
                               % (name, len(voters) + 1, need, len(healthy_voters),
                                  ", ".join(m["name"] or m["id"] for m in healthy_voters) or "none")}
        return {"action": "add", "member": None, "refusal": None,
                "reason": "%s is not a member: add it (%d voting members after, %d healthy now, quorum %d)"
                          % (name, len(voters) + 1, len(healthy_voters), need)}
    # absent
    targets = by_name or by_peer
    if not targets:
        return {"action": "none", "member": None, "refusal": None, "reason": "%s is not a member" % name}
    target = targets[0]
    remaining = [m for m in voters if m["id"] != target["id"]]
    healthy_remaining = [m for m in remaining if m["id"] in healthy_ids]
    if not remaining:
        return {"action": "none", "member": target, "reason": "",
                "refusal": "%s is the only member: removing it removes the cluster" % (name or target["id"])}
    if target["id"] in healthy_ids and not healthy_remaining:
        return {"action": "none", "member": target, "reason": "",
                "refusal": "%s is the only healthy member: removing it leaves no healthy member" % name}
    need = quorum(len(remaining)) if not target["learner"] else quorum(len(voters))
    if len(healthy_remaining) < need:
        return {"action": "none", "member": target, "reason": "",
                "refusal": "removing %s leaves %d voting members, which need %d healthy for quorum; only %d of them "
                           "are healthy (%s)" % (name or target["id"], len(remaining), need, len(healthy_remaining),
                                                 ", ".join(m["name"] or m["id"] for m in healthy_remaining) or "none")}
    return {"action": "remove", "member": target, "refusal": None,
            "reason": "remove %s (%s; %d voting members after, %d of them healthy, quorum %d)"
                      % (name or target["id"], "healthy" if target["id"] in healthy_ids else "not healthy",
                         len(remaining), len(healthy_remaining), need)}


# --- authentication ------------------------------------------------------------------------------------------

def wanted_permission(prefix):
    """The one permission a user's role gets: read and write every key under prefix."""
    return {"type": READWRITE, "key": prefix.encode("utf-8"), "range_end": prefix_range_end(prefix)}


def normalize_permissions(perms):
    """Permissions of a /v3/auth/role/get answer as {type, key (bytes), range_end (bytes)}."""
    return [{"type": PERM_TYPES.get(p.get("permType", 0), str(p.get("permType"))),
             "key": unb64(p.get("key")), "range_end": unb64(p.get("range_end"))} for p in perms or []]


def describe_permission(perm):
    end = perm["range_end"]
    if not end:
        return "%s key %r" % (perm["type"], perm["key"].decode("utf-8", "replace"))
    return "%s [%r, %r)" % (perm["type"], perm["key"].decode("utf-8", "replace"),
                            end.decode("utf-8", "replace"))


def role_permission_plan(current, prefix):
    """(revoke, grant): the permissions to take from a user's role and to give it so that it holds exactly
    READWRITE on prefix."""
    want = wanted_permission(prefix)
    keep = [p for p in current if p == want]
    revoke = [p for p in current if p != want]
    grant = [] if keep else [want]
    return revoke, grant


# --- talking to several members ------------------------------------------------------------------------------

def make_client(params, endpoint, opener=None, authenticated=True):
    return Client(endpoint, params.get("ca_cert"), params.get("client_cert"), params.get("client_key"),
                  timeout=params.get("connect_timeout") or 5,
                  user=(params.get("login_user") or None) if authenticated else None,
                  password=params.get("login_password") if authenticated else None, opener=opener)


def ask_any(params, endpoints, path, body=None, opener=None, skip=()):
    """The first answer to path among endpoints (in order), as (answer, endpoint); EtcdError naming every
    endpoint's failure when none answers. Refusals of the request itself (an authentication failure, a
    permission denied) are not retried on another member."""
    failures = []
    for endpoint in endpoints:
        if endpoint.rstrip("/") in skip:
            continue
        try:
            return make_client(params, endpoint, opener).call(path, body if body is not None else {}), endpoint
        except EtcdError as err:
            if err.status is not None and err.status < 500 and err.status != 404:
                raise
            failures.append(str(err))
    raise EtcdError("no endpoint answered %s: %s" % (path, "; ".join(failures) or "no endpoint left to ask"))


def member_health(params, endpoint, opener=None):
    """What one client URL says: {"health", "reason", "member_id", "leader", "raft_term", "errors", "version",
    "endpoint"}; "health" None when it did not answer at all."""
    client = make_client(params, endpoint, opener)
    result = {"endpoint": endpoint, "health": None, "reason": "", "member_id": "", "leader": "", "raft_term": 0,
              "errors": [], "version": ""}
    try:
        try:
            status = client.call("/v3/maintenance/status", {}, auth=False)
        except EtcdError as err:
            # a server that wants a login for its status: with one given, log in (a token per member)
            if err.status is None or err.status >= 500 or not client.user:
                raise
            status = client.call("/v3/maintenance/status", {}, auth=True)
    except EtcdError as err:
        result["reason"] = str(err)
        return result
    header = status.get("header") or {}
    result.update(member_id=str(header.get("member_id", "")), leader=str(status.get("leader", "")),
                  raft_term=int(status.get("raftTerm", 0) or 0), errors=list(status.get("errors") or []),
                  version=status.get("version", ""))
    try:
        health = client.call("/health", None, auth=False)
    except EtcdError as err:
        health = err.body if err.body else {"health": None, "reason": str(err)}
    value = health.get("health")
    result["health"] = value in (True, "true")
    result["reason"] = health.get("reason") or ("" if result["health"] else "answered /health %r" % value)
    return result


def survey(params, opener=None):
    """(members, statuses by member id, endpoint statuses): the member list from the first endpoint that answers,
    then /v3/maintenance/status and /health from every endpoint given and every member's client URLs."""
    list_error = None
    try:
        answer, dummy = ask_any(params, params["endpoints"], "/v3/cluster/member/list", {}, opener)
        members = normalize_members(answer)
    except EtcdError as err:
        members, list_error = [], str(err)
    urls = []
    for url in list(params["endpoints"]) + [u for m in members for u in m["client_urls"]]:
        if url.rstrip("/") not in urls:
            urls.append(url.rstrip("/"))
    seen = [member_health(params, url, opener) for url in urls]
    if list_error:
        seen.append({"endpoint": "member list", "health": None, "reason": list_error, "member_id": ""})
    statuses = {}
    for status in seen:
        if status["member_id"] and (status["member_id"] not in statuses or status["health"]):
            statuses[status["member_id"]] = status
    for member in members:
        if member["id"] not in statuses:
            reason = "; ".join(s["reason"] for s in seen if s["endpoint"] in member["client_urls"]) or \
                "no client URL"
            statuses[member["id"]] = {"health": None, "reason": reason, "endpoint": ",".join(member["client_urls"])}
    return members, statuses, seen


def initial_cluster(members, name=None, peer_urls=None):
    """ETCD_INITIAL_CLUSTER for a member joining: the started members, and name with its peer URLs."""
    pairs = []
    for member in members:
        member_name = member["name"] or (name if set(member["peer_urls"]) & set(peer_urls or []) else "")
        if member_name:
            pairs.extend("%s=%s" % (member_name, url) for url in member["peer_urls"])
    if name and not any(p.startswith(name + "=") for p in pairs):
        pairs.extend("%s=%s" % (name, url) for url in peer_urls or [])
    return ",".join(pairs)
