# -*- coding: utf-8 -*-
"""A test double of one mongod replica-set member, for a lab where no MongoDB server can be installed.

One process is one member: it holds its own state (config, term, vote, oplog) under its dbpath and talks
to the other members over TCP with heartbeats, oplog pulls and vote requests, so killing one process with
SIGKILL is what losing that host is. Clients (pymongo, unchanged) speak the MongoDB wire protocol to it:
OP_MSG, and OP_QUERY/OP_REPLY for the first handshake. BSON is pymongo's own ``bson`` package.

Every rule it models names the manual page it follows. What it does not model is listed in README.md.
Wire protocol: https://www.mongodb.com/docs/manual/reference/mongodb-wire-protocol/
"""

from __future__ import annotations

import argparse
import base64
import datetime
import hashlib
import hmac
import json
import os
import random
import re
import signal
import socket
import socketserver
import ssl
import struct
import sys
import threading
import time

import bson
from bson import ObjectId, Timestamp
from bson.int64 import Int64

OP_REPLY, OP_QUERY, OP_MSG = 1, 2004, 2013
# maxWireVersion by server release: https://github.com/mongodb/specifications (wire version table);
# 7.0 = 21, 8.0 = 25.
WIRE_VERSION = {"7.0": 21, "8.0": 25}
PREVIOUS_RELEASE = {"8.0": "7.0", "7.0": "6.0"}
STATE_NAMES = {0: "STARTUP", 1: "PRIMARY", 2: "SECONDARY", 3: "RECOVERING", 5: "STARTUP2",
               7: "ARBITER", 8: "DOWN", 10: "REMOVED"}
STARTUP, PRIMARY, SECONDARY, STARTUP2, ARBITER, DOWN, REMOVED = 0, 1, 2, 5, 7, 8, 10
SCRAM_ITERATIONS = 15000  # scramSHA256IterationCount default: https://www.mongodb.com/docs/manual/reference/parameters/
# Defaults of settings.*: https://www.mongodb.com/docs/manual/reference/replica-configuration/#settings
DEFAULT_SETTINGS = {"electionTimeoutMillis": 10000, "heartbeatIntervalMillis": 2000, "heartbeatTimeoutSecs": 10,
                    "catchUpTimeoutMillis": -1, "chainingAllowed": True}
FCV_DOC_ID = "featureCompatibilityVersion"


class CommandError(Exception):
    def __init__(self, code, code_name, message, labels=None):
        super().__init__(message)
        self.code, self.code_name, self.message, self.labels = code, code_name, message, labels

    def reply(self):
        doc = {"ok": 0.0, "errmsg": self.message, "code": self.code, "codeName": self.code_name}
        if self.labels:
            doc["errorLabels"] = self.labels
        return doc


class Fatal(Exception):
    """A condition on which the real mongod exits (fassert or startup refusal)."""

    def __init__(self, exit_code, message):
        super().__init__(message)
        self.exit_code = exit_code


def not_primary(message="not primary"):
    return CommandError(10107, "NotWritablePrimary", message)


def now_utc():
    return datetime.datetime.now(datetime.timezone.utc)


# ---------------------------------------------------------------------------------------------------------
# Wire protocol: https://www.mongodb.com/docs/manual/reference/mongodb-wire-protocol/
# ---------------------------------------------------------------------------------------------------------
def recv_exact(sock, size):
    chunks = []
    while size:
        chunk = sock.recv(size)
        if not chunk:
            raise ConnectionError("connection closed")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def read_message(sock):
    header = recv_exact(sock, 16)
    length, request_id, _response_to, opcode = struct.unpack("<iiii", header)
    return request_id, opcode, recv_exact(sock, length - 16)


def parse_op_msg(body):
    flags = struct.unpack_from("<I", body)[0]
    end = len(body) - (4 if flags & 1 else 0)
    pos, command = 4, None
    sequences = {}
    while pos < end:
        kind = body[pos]
        pos += 1
        if kind == 0:
            size = struct.unpack_from("<i", body, pos)[0]
            command = bson.decode(body[pos:pos + size])
            pos += size
        else:
            size = struct.unpack_from("<i", body, pos)[0]
            section_end = pos + size
            name_end = body.index(b"\x00", pos + 4)
            name = body[pos + 4:name_end].decode()
            pos = name_end + 1
            docs = []
            while pos < section_end:
                doc_size = struct.unpack_from("<i", body, pos)[0]
                docs.append(bson.decode(body[pos:pos + doc_size]))
                pos += doc_size
            sequences[name] = docs
    command.update(sequences)
    return flags, command


def parse_op_query(body):
    name_end = body.index(b"\x00", 4)
    collection = body[4:name_end].decode()
    pos = name_end + 1 + 8
    size = struct.unpack_from("<i", body, pos)[0]
    query = bson.decode(body[pos:pos + size])
    if "$query" in query:
        query = query["$query"]
    query.setdefault("$db", collection.split(".", 1)[0])
    return query


def op_msg(request_id, response_to, doc):
    payload = struct.pack("<I", 0) + b"\x00" + bson.encode(doc)
    return struct.pack("<iiii", 16 + len(payload), request_id, response_to, OP_MSG) + payload


def op_reply(request_id, response_to, doc):
    payload = struct.pack("<iqii", 0, 0, 0, 1) + bson.encode(doc)
    return struct.pack("<iiii", 16 + len(payload), request_id, response_to, OP_REPLY) + payload


# ---------------------------------------------------------------------------------------------------------
# TLS (net.tls): https://www.mongodb.com/docs/manual/reference/configuration-options/#mongodb-setting-net.tls.mode
# and https://www.mongodb.com/docs/manual/tutorial/configure-ssl/ . Modes: disabled (no TLS); allowTLS (members
# talk to each other without TLS, clients may use it or not); preferTLS (members use TLS, clients may use it or
# not); requireTLS (TLS only, a plaintext connection is refused). certificateKeyFile holds the certificate and
# its key; with CAFile, clients must present a certificate signed by it unless
# allowConnectionsWithoutCertificates; members present certificateKeyFile to each other (no clusterFile here).
# ---------------------------------------------------------------------------------------------------------
TLS_MODES = ("disabled", "allowTLS", "preferTLS", "requireTLS")
PEER_TLS = None  # the client context members use towards each other (preferTLS, requireTLS)


def tls_contexts(options):
    """(server context or None, peer client context or None) from the net.tls options."""
    mode = options.tls_mode or "disabled"
    if mode not in TLS_MODES:
        raise SystemExit("net.tls.mode must be one of %s, got %r" % (", ".join(TLS_MODES), mode))
    if mode == "disabled":
        return None, None
    if not options.tls_certificate_key_file:
        raise SystemExit("net.tls.mode %s needs net.tls.certificateKeyFile" % mode)
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.minimum_version = ssl.TLSVersion.TLSv1_2
    server.load_cert_chain(options.tls_certificate_key_file)
    if options.tls_ca_file:
        server.load_verify_locations(options.tls_ca_file)
        server.verify_mode = ssl.CERT_OPTIONAL if options.tls_allow_without_certificates else ssl.CERT_REQUIRED
    peer = None
    if mode in ("preferTLS", "requireTLS"):
        peer = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        peer.load_cert_chain(options.tls_certificate_key_file)
        if options.tls_ca_file:
            peer.load_verify_locations(options.tls_ca_file)
        else:
            peer.load_default_certs()
        peer.check_hostname = not options.tls_allow_invalid_hostnames
    return server, peer


def accept_tls(sock, server):
    """The socket to talk on for a new connection under net.tls, or None to close it. A TLS client starts with a
    handshake record (first byte 0x16); a wire-protocol message starts with its length."""
    mode = server.tls_mode
    if server.tls_context is None:
        return sock
    try:
        first = sock.recv(1, socket.MSG_PEEK)
    except OSError:
        return None
    if first == b"\x16":
        try:
            return server.tls_context.wrap_socket(sock, server_side=True)
        except (ssl.SSLError, OSError) as error:
            server.member.event("tls_refused", peer=sock.getpeername()[0] if hasattr(sock, "getpeername") else None,
                                reason=str(error)[:200])
            return None
    if mode == "requireTLS":
        server.member.event("tls_refused", reason="plaintext connection under requireTLS")
        return None
    return sock


class PeerClient:
    """A minimal OP_MSG client for member-to-member traffic (heartbeats, votes, oplog pulls)."""

    _ids = iter(range(1, 1 << 30))

    def __init__(self, host, timeout):
        self.host, self.timeout, self.sock = host, timeout, None

    def close(self):
        if self.sock is not None:
            try:
                self.sock.close()
            except OSError:
                pass
        self.sock = None

    def call(self, command, timeout=None):
        try:
            if self.sock is None:
                name, port = self.host.rsplit(":", 1)
                self.sock = socket.create_connection((name, int(port)), timeout=self.timeout)
                if PEER_TLS is not None:
                    self.sock = PEER_TLS.wrap_socket(self.sock, server_hostname=name)
            self.sock.settimeout(timeout or self.timeout)
            self.sock.sendall(op_msg(next(self._ids), 0, command))
            _rid, opcode, body = read_message(self.sock)
            if opcode != OP_MSG:
                raise ConnectionError("unexpected opcode %d" % opcode)
            return parse_op_msg(body)[1]
        except (OSError, ConnectionError, ValueError, ssl.SSLError):
            self.close()
            raise ConnectionError("cannot reach " + self.host)


# ---------------------------------------------------------------------------------------------------------
# SCRAM-SHA-256 (RFC 5802 / RFC 7677), hand-written because the standard library has none. MongoDB's use of
# it: https://www.mongodb.com/docs/manual/core/security-scram/
# ---------------------------------------------------------------------------------------------------------
def saslprep(text):
    from pymongo.saslprep import saslprep as _saslprep  # pymongo's own SASLprep (RFC 4013)
    return _saslprep(text)


def scram_credentials(password, salt=None, iterations=SCRAM_ITERATIONS):
    salt = salt or os.urandom(28)
    salted = hashlib.pbkdf2_hmac("sha256", saslprep(password).encode(), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", "sha256").digest()
    return {"iterationCount": iterations, "salt": base64.b64encode(salt).decode(),
            "storedKey": base64.b64encode(hashlib.sha256(client_key).digest()).decode(),
            "serverKey": base64.b64encode(hmac.new(salted, b"Server Key", "sha256").digest()).decode()}


def scram_attributes(message):
    return dict(part.split("=", 1) for part in message.split(","))


# ---------------------------------------------------------------------------------------------------------
# A tiny query engine for the few CRUD commands the tests use.
# ---------------------------------------------------------------------------------------------------------
def _compare(value, operator, operand):
    if operator == "$eq":
        return value == operand
    if operator == "$ne":
        return value != operand
    if operator == "$in":
        return value in operand
    if operator == "$nin":
        return value not in operand
    if operator == "$exists":
        return (value is not None) == bool(operand)
    if value is None:
        return False
    try:
        return {"$gt": value > operand, "$gte": value >= operand,
                "$lt": value < operand, "$lte": value <= operand}[operator]
    except (KeyError, TypeError):
        raise CommandError(2, "BadValue", "unsupported query operator %s in the test double" % operator)


def matches(doc, query):
    for key, condition in (query or {}).items():
        value = doc.get(key)
        if isinstance(condition, dict) and condition and all(k.startswith("$") for k in condition):
            if not all(_compare(value, op, operand) for op, operand in condition.items()):
                return False
        elif value != condition:
            return False
    return True


def apply_update(doc, update):
    if not any(key.startswith("$") for key in update):
        new = dict(update)
        new["_id"] = doc["_id"]
        return new
    new = dict(doc)
    for operator, fields in update.items():
        for key, value in fields.items():
            if operator == "$set":
                new[key] = value
            elif operator == "$inc":
                new[key] = new.get(key, 0) + value
            elif operator == "$unset":
                new.pop(key, None)
            else:
                raise CommandError(2, "BadValue", "unsupported update operator %s in the test double" % operator)
    return new


def sort_docs(docs, spec):
    for key, direction in reversed(list((spec or {}).items())):
        docs.sort(key=lambda d, k=key: (d.get(k) is None, d.get(k)), reverse=direction < 0)
    return docs


# ---------------------------------------------------------------------------------------------------------
# Roles, coarsely: which built-in role grants which class of command.
# https://www.mongodb.com/docs/manual/reference/built-in-roles/
# ---------------------------------------------------------------------------------------------------------
ROLE_GRANTS = {
    "root": {"cluster_read", "cluster_admin", "user_admin", "read", "write", "shutdown"},
    "__system": {"cluster_read", "cluster_admin", "user_admin", "read", "write", "shutdown"},
    "clusterAdmin": {"cluster_read", "cluster_admin", "shutdown"},
    "clusterManager": {"cluster_read", "cluster_admin"},
    "clusterMonitor": {"cluster_read"},
    "hostManager": {"shutdown", "cluster_read"},
    "userAdminAnyDatabase": {"user_admin"},
    "userAdmin": {"user_admin"},
    "readWriteAnyDatabase": {"read", "write"},
    "readWrite": {"read", "write"},
    "readAnyDatabase": {"read"},
    "read": {"read"},
}
ANY_DATABASE_ROLES = {"root", "__system", "clusterAdmin", "clusterManager", "clusterMonitor", "hostManager",
                      "userAdminAnyDatabase", "readWriteAnyDatabase", "readAnyDatabase"}


class Member:
    """The state of one member and the replication protocol it runs with its peers."""

    def __init__(self, options):
        self.options = options
        self.port = options.port
        self.set_name = options.replSet
        self.binary_version = options.binary_version
        self.dbpath = options.dbpath
        self.cluster_role = options.cluster_role
        self.keyfile_digests = keyfile_digests(options.keyFile)
        # keyFile implies authorization: https://www.mongodb.com/docs/manual/tutorial/enforce-keyfile-access-control-in-existing-replica-set/
        self.auth_enabled = bool(options.auth or options.keyFile)
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.started = time.monotonic()
        self.event_path = options.event_log or os.path.join(self.dbpath, "events.jsonl")
        self.me = None
        self.config = None
        self.term = 0
        self.voted = {"term": -1, "for": None}
        self.oplog = []
        self.data = {}
        self.state = STARTUP
        self.views = {}
        self.progress = {}
        self.commit_index = 0
        self.config_install_index = 0
        self.stepdown_until = 0.0
        self.last_primary_contact = time.monotonic()
        self.takeover_since = None
        self.primary_since = 0.0
        self.reconfig_running = False
        self.shutting_down = False
        self.server = None
        with self.lock:
            self._load()

    # -- persistence -------------------------------------------------------------------------------------
    def _meta_path(self):
        return os.path.join(self.dbpath, "meta.json")

    def _oplog_path(self):
        return os.path.join(self.dbpath, "oplog.bson")

    def _load(self):
        os.makedirs(self.dbpath, exist_ok=True)
        meta = {}
        if os.path.exists(self._meta_path()):
            with open(self._meta_path()) as handle:
                meta = json.load(handle)
        self.config = meta.get("config")
        self.term = meta.get("term", 0)
        self.voted = meta.get("voted", self.voted)
        previous_binary = meta.get("binary_version")
        if os.path.exists(self._oplog_path()):
            with open(self._oplog_path(), "rb") as handle:
                self.oplog = list(bson.decode_file_iter(handle))
        self._rebuild_data()
        fcv = self.fcv()
        # A binary starts only on data files whose FCV it supports (its own release or the one before):
        # https://www.mongodb.com/docs/manual/release-notes/8.0-upgrade-replica-set/#prerequisites and
        # https://www.mongodb.com/docs/manual/reference/command/setFeatureCompatibilityVersion/
        if fcv and fcv not in (self.binary_version, PREVIOUS_RELEASE[self.binary_version]):
            self.event("start_refused", binary_version=self.binary_version, fcv=fcv, pid=os.getpid())
            raise Fatal(62, "UPGRADE PROBLEM: featureCompatibilityVersion is %s; binary %s supports only %s or %s"
                        % (fcv, self.binary_version, self.binary_version, PREVIOUS_RELEASE[self.binary_version]))
        self.event("start", binary_version=self.binary_version, previous_binary_version=previous_binary, fcv=fcv,
                   pid=os.getpid())
        if self.config:
            self._adopt_config(self.config, persist=False)
        self._save_meta()

    def _save_meta(self):
        tmp = self._meta_path() + ".tmp"
        with open(tmp, "w") as handle:
            json.dump({"config": self.config, "term": self.term, "voted": self.voted,
                       "binary_version": self.binary_version}, handle)
        os.replace(tmp, self._meta_path())

    def _append_oplog_file(self, entries):
        with open(self._oplog_path(), "ab") as handle:
            for entry in entries:
                handle.write(bson.encode(entry))

    def _rewrite_oplog_file(self):
        tmp = self._oplog_path() + ".tmp"
        with open(tmp, "wb") as handle:
            for entry in self.oplog:
                handle.write(bson.encode(entry))
        os.replace(tmp, self._oplog_path())

    def event(self, name, **fields):
        record = {"time": time.time(), "host": self.me or "%s:%s" % (socket.gethostname(), self.port),
                  "event": name}
        record.update(fields)
        line = (json.dumps(record, default=str) + "\n").encode()
        fd = os.open(self.event_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)

    # -- data, derived from the oplog ----------------------------------------------------------------------
    def _rebuild_data(self):
        self.data = {}
        for entry in self.oplog:
            self._apply(entry, live=False)

    def _apply(self, entry, live=True):
        op, ns = entry["op"], entry.get("ns")
        if op == "n":
            return
        collection = self.data.setdefault(ns, {})
        if op in ("i", "u"):
            collection[entry["o"]["_id"]] = entry["o"]
        elif op == "d":
            collection.pop(entry["o"]["_id"], None)
        if ns == "admin.system.version" and entry["o"].get("_id") == FCV_DOC_ID and live:
            version = entry["o"]["version"]
            if version not in (self.binary_version, PREVIOUS_RELEASE[self.binary_version]):
                # A member replicating an FCV its binary cannot run stops (fassert), the reason all members
                # must run the new binary before FCV is raised:
                # https://www.mongodb.com/docs/manual/reference/command/setFeatureCompatibilityVersion/
                raise Fatal(14, "Invalid featureCompatibilityVersion %s for binary %s"
                            % (version, self.binary_version))
            self.event("fcv", version=version)
        if ns == "config.settings" and entry["o"].get("_id") == "balancer" and live:
            self.event("balancer", stopped=entry["o"]["stopped"])

    def fcv(self):
        doc = self.data.get("admin.system.version", {}).get(FCV_DOC_ID)
        return doc["version"] if doc else None

    def users(self):
        return self.data.get("admin.system.users", {})

    def last_applied(self):
        return (self.oplog[-1]["t"], len(self.oplog)) if self.oplog else (-1, 0)

    def _optime(self, index=None):
        index = len(self.oplog) if index is None else index
        if not index:
            return {"ts": Timestamp(0, 0), "t": Int64(-1)}, datetime.datetime(1970, 1, 1)
        entry = self.oplog[index - 1]
        return {"ts": entry["ts"], "t": Int64(entry["t"])}, entry["wall"]

    def write(self, ns, op, doc):
        """Append one entry as primary; returns its oplog index."""
        if self.state != PRIMARY:
            raise not_primary()
        wall = now_utc()
        wall = wall.replace(microsecond=wall.microsecond // 1000 * 1000)
        entry = {"t": self.term, "ts": Timestamp(int(time.time()), len(self.oplog) + 1), "wall": wall,
                 "op": op, "ns": ns, "o": doc}
        self.oplog.append(entry)
        self._append_oplog_file([entry])
        self._apply(entry)
        self._advance_commit()
        self.changed.notify_all()
        return len(self.oplog)

    # -- configuration -----------------------------------------------------------------------------------
    def settings(self):
        merged = dict(DEFAULT_SETTINGS)
        merged.update((self.config or {}).get("settings", {}))
        return merged

    def election_timeout(self):
        return self.settings()["electionTimeoutMillis"] / 1000.0

    def heartbeat_interval(self):
        return self.settings()["heartbeatIntervalMillis"] / 1000.0

    def heartbeat_timeout(self):
        return float(self.settings()["heartbeatTimeoutSecs"])

    def members(self):
        return (self.config or {}).get("members", [])

    def my_member(self):
        for member in self.members():
            if member["host"] == self.me:
                return member
        return None

    def is_self(self, host):
        name, _sep, port = host.rpartition(":")
        if int(port or 0) != self.port:
            return False
        if name in (self.options.advertise_host, socket.gethostname(), socket.getfqdn(), "localhost"):
            return True
        try:
            address = socket.gethostbyname(name)
        except OSError:
            return False
        if address.startswith("127."):
            return True
        # Like mongod's isSelf: the address is one of this host's own when a socket can bind to it.
        probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            probe.bind((address, 0))
            return True
        except OSError:
            return False
        finally:
            probe.close()

    def _adopt_config(self, config, persist=True):
        self.config = config
        me = [m["host"] for m in config["members"] if self.is_self(m["host"])]
        self.me = me[0] if me else None
        member = self.my_member()
        if member is None:
            self._set_state(REMOVED, "not in the config")
        elif member.get("arbiterOnly"):
            self._set_state(ARBITER, "config")
        elif self.state in (STARTUP, REMOVED, ARBITER):
            self._set_state(SECONDARY if self.oplog else STARTUP2, "config installed")
        if persist:
            self._save_meta()
        self.changed.notify_all()

    @staticmethod
    def config_order(config):
        # Configs are ordered by (term, version); a force reconfig has term -1 and compares by version only:
        # https://www.mongodb.com/docs/manual/reference/replica-configuration/#mongodb-rsconf-rsconf.term
        return (config.get("term", -1), config["version"])

    @classmethod
    def config_newer(cls, candidate, current):
        if current is None:
            return True
        if candidate.get("term", -1) == -1 or current.get("term", -1) == -1:
            return candidate["version"] > current["version"]
        return cls.config_order(candidate) > cls.config_order(current)

    def voting_hosts(self, config=None):
        """Members that vote; a newlyAdded member does not vote until it is SECONDARY:
        https://www.mongodb.com/docs/manual/reference/replica-configuration/#mongodb-rsconf-rsconf.members-n-.newlyAdded
        """
        return [m["host"] for m in (config or self.config or {}).get("members", [])
                if m.get("votes", 1) and not m.get("newlyAdded")]

    def majority(self, config=None):
        return len(self.voting_hosts(config)) // 2 + 1

    def electable(self, member=None):
        member = member or self.my_member()
        return bool(member and member.get("priority", 1) > 0 and member.get("votes", 1)
                    and not member.get("arbiterOnly") and not member.get("hidden") and not member.get("newlyAdded"))

    def _set_state(self, state, reason):
        if state != self.state:
            previous = self.state
            self.state = state
            if state == SECONDARY:
                # The election timer starts when a member becomes SECONDARY.
                self.last_primary_contact = time.monotonic()
            self.event("state", old=STATE_NAMES[previous], new=STATE_NAMES[state], reason=reason, term=self.term)
            self.changed.notify_all()

    def observe_term(self, term):
        if term > self.term:
            self.term = term
            self._save_meta()
            if self.state == PRIMARY:
                self.step_down_now("saw a higher term %d" % term)

    def step_down_now(self, reason, freeze=0.0):
        self.stepdown_until = time.monotonic() + freeze
        self.progress = {}
        self._set_state(SECONDARY, reason)
        self.last_primary_contact = time.monotonic()
        self.event("stepdown", reason=reason, term=self.term)

    def validate_config(self, config, initiating):
        """Rules of https://www.mongodb.com/docs/manual/reference/replica-configuration/ ."""
        def invalid(message):
            return CommandError(93, "InvalidReplicaSetConfig", message)
        if config.get("_id") != self.set_name:
            raise invalid("Attempting to initiate a replica set with name %s, but command line reports %s; "
                          "rejecting" % (config.get("_id"), self.set_name))
        members = config.get("members") or []
        if not members:
            raise invalid("Replica set configuration must have at least one member")
        if len(members) > 50:
            raise invalid("Replica sets may have at most 50 members")
        ids, hosts = set(), set()
        for member in members:
            if "newlyAdded" in member:
                raise invalid("newlyAdded is set by the server only: "
                              "https://www.mongodb.com/docs/manual/reference/replica-configuration/")
            if not isinstance(member.get("_id"), int) or member["_id"] in ids:
                raise invalid("member _id fields must be unique integers: %r" % member.get("_id"))
            host = member.get("host", "")
            if ":" not in host or host in hosts:
                raise invalid("member host fields must be unique host:port strings: %r" % host)
            ids.add(member["_id"])
            hosts.add(host)
            votes, priority = member.get("votes", 1), member.get("priority", 0 if member.get("arbiterOnly") else 1)
            # members[n].votes "may be 0 or 1" and members[n].priority is "a number between 0 and 1000":
            # https://www.mongodb.com/docs/manual/reference/replica-configuration/#mongodb-rsconf-rsconf.members-n-.votes
            # https://www.mongodb.com/docs/manual/reference/replica-configuration/#mongodb-rsconf-rsconf.members-n-.priority
            if isinstance(votes, bool) or votes not in (0, 1):
                raise invalid("votes must be 0 or 1")
            if isinstance(priority, bool) or not isinstance(priority, (int, float)) or not 0 <= priority <= 1000:
                raise invalid("priority must be between 0 and 1000")
            if votes == 0 and priority > 0:
                raise invalid("priority must be 0 when non-voting (votes:0)")
            if member.get("hidden") and priority > 0:
                raise invalid("priority must be 0 when hidden=true")
            if member.get("arbiterOnly") and priority > 0:
                raise invalid("priority must be 0 when arbiterOnly=true")
        if sum(1 for m in members if m.get("votes", 1)) > 7:
            raise invalid("Replica set configuration contains more than 7 voting members")
        if not any(self.electable(dict(m, priority=m.get("priority", 1))) for m in members):
            raise invalid("Replica set configuration must contain at least one electable member")
        if not any(self.is_self(m["host"]) for m in members):
            raise CommandError(74, "NodeNotFound", "No host described in new configuration with version %s for "
                               "replica set %s maps to this node" % (config.get("version"), self.set_name))

    # -- the replication loops ----------------------------------------------------------------------------
    def key_fields(self):
        return {"$keyDigests": self.keyfile_digests} if self.keyfile_digests else {}

    def shares_a_key(self, command):
        """Whether a cluster process's request authenticates against this member's keyfile: at least one key in
        common (a rotation runs with both keys in every keyfile for a while)."""
        offered = command.get("$keyDigests") or ([command["$keyDigest"]] if "$keyDigest" in command else [])
        return bool(set(offered) & set(self.keyfile_digests))

    def status_fields(self):
        term, index = self.last_applied()
        optime, wall = self._optime()
        # A heartbeat carries the sender's last applied optime and its wall time; replSetGetStatus reports
        # them for remote members (members[n].optime, optimeDate), even for entries this member lacks:
        # https://www.mongodb.com/docs/manual/reference/command/replSetGetStatus/#mongodb-data-replSetGetStatus.members-n-.optime
        return {"setName": self.set_name, "from": self.me, "term": self.term, "state": self.state,
                "lastApplied": [term, index], "optime": optime, "optimeDate": wall,
                "binaryVersion": self.binary_version,
                "configVersion": self.config["version"] if self.config else -2,
                "configTerm": self.config.get("term", -1) if self.config else -1}

    def heartbeat_loop(self, host, stop):
        client = PeerClient(host, timeout=2.0)
        while not stop.is_set() and not self.shutting_down:
            with self.lock:
                request = {"replSetHeartbeat": self.set_name, "$db": "admin"}
                request.update(self.status_fields())
                request.update(self.key_fields())
                view = self.views.get(host, {})
                known = {"term": view.get("configTerm", -1), "version": view.get("configVersion", -2)}
                if self.config and self.config_newer(self.config, known):
                    request["config"] = self.config
                interval = self.heartbeat_interval()
            try:
                reply = client.call(request, timeout=max(1.0, interval))
                if reply.get("ok"):
                    self.observe_peer(host, reply)
            except ConnectionError:
                pass
            stop.wait(interval)
        client.close()

    def observe_peer(self, host, status):
        """Record what a heartbeat (either direction) says about a peer."""
        with self.lock:
            if status.get("setName") != self.set_name:
                return
            config = status.get("config")
            if config and config.get("_id") == self.set_name and self.config_newer(config, self.config):
                # A member with a config takes a newer one even when it is no longer in it (it becomes
                # REMOVED); a member without one only takes a config that includes it.
                if self.config or any(self.is_self(m["host"]) for m in config["members"]):
                    self._adopt_config(config)
                    self.event("config_installed", version=config["version"], term=config.get("term"))
            self.observe_term(status.get("term", 0))
            self.views[host] = {"state": status.get("state"), "term": status.get("term"),
                                "lastApplied": tuple(status.get("lastApplied", (-1, 0))),
                                "optime": status.get("optime"), "optimeDate": status.get("optimeDate"),
                                "configVersion": status.get("configVersion"),
                                "configTerm": status.get("configTerm"),
                                "binaryVersion": status.get("binaryVersion"), "seen": time.monotonic(),
                                "seenWall": now_utc()}
            if status.get("state") == PRIMARY and status.get("term", 0) >= self.term and self.state != PRIMARY:
                self.last_primary_contact = time.monotonic()
            self.changed.notify_all()

    def healthy(self, host):
        view = self.views.get(host)
        return bool(view) and time.monotonic() - view["seen"] < self.heartbeat_timeout()

    def primary_host(self):
        if self.state == PRIMARY:
            return self.me
        best = None
        for host, view in self.views.items():
            if view["state"] == PRIMARY and self.healthy(host) and view["term"] >= self.term:
                if best is None or view["term"] > self.views[best]["term"]:
                    best = host
        return best

    def pull_loop(self):
        clients = {}
        while not self.shutting_down:
            with self.lock:
                source = self.primary_host() if self.state in (SECONDARY, STARTUP2) else None
                request = {"_replPull": 1, "$db": "admin", "from": self.me, "term": self.term,
                           "last": list(self.last_applied())}
                request.update(self.key_fields())
            if source is None:
                time.sleep(0.05)
                continue
            client = clients.setdefault(source, PeerClient(source, timeout=2.0))
            try:
                reply = client.call(request, timeout=3.0)
            except ConnectionError:
                time.sleep(0.1)
                continue
            if not reply.get("ok"):
                time.sleep(0.05)
                continue
            try:
                self._take_pull_reply(reply, request["last"])
            except Fatal as fatal:
                self.die(fatal)

    def _take_pull_reply(self, reply, last):
        with self.lock:
            if list(self.last_applied()) != last:
                return
            if reply.get("mismatch"):
                # Entries this member has that the primary does not were never majority committed; real
                # mongod rolls them back: https://www.mongodb.com/docs/manual/core/replica-set-rollbacks/
                terms = reply["terms"]
                keep = 0
                while keep < min(len(terms), len(self.oplog)) and self.oplog[keep]["t"] == terms[keep]:
                    keep += 1
                dropped = len(self.oplog) - keep
                self.oplog = self.oplog[:keep]
                self._rewrite_oplog_file()
                self._rebuild_data()
                self.event("rollback", entries=dropped)
                return
            entries = reply.get("entries", [])
            if entries:
                self.oplog.extend(entries)
                self._append_oplog_file(entries)
                for entry in entries:
                    self._apply(entry)
                    self.observe_term(entry["t"])
            self.commit_index = max(self.commit_index, min(reply.get("commitIndex", 0), len(self.oplog)))
            if self.state == STARTUP2 and len(self.oplog) >= reply.get("primaryLength", 0):
                self._set_state(SECONDARY, "initial sync done")
            self.changed.notify_all()

    def handle_pull(self, request):
        deadline = time.monotonic() + 0.3
        with self.lock:
            if self.state != PRIMARY:
                raise not_primary()
            if request.get("from") not in [m["host"] for m in self.members()]:
                raise CommandError(93, "InvalidReplicaSetConfig", "%s is not a member of the current config"
                                   % request.get("from"))
            self.observe_term(request.get("term", 0))
            term, index = request["last"]
            if index > len(self.oplog) or (index and self.oplog[index - 1]["t"] != term):
                return {"ok": 1.0, "mismatch": True, "terms": [e["t"] for e in self.oplog[:index]]}
            self.progress[request["from"]] = index
            self._advance_commit()
            self.changed.notify_all()
            while len(self.oplog) == index and self.state == PRIMARY and time.monotonic() < deadline:
                self.changed.wait(deadline - time.monotonic())
            return {"ok": 1.0, "entries": self.oplog[index:index + 500], "commitIndex": self.commit_index,
                    "primaryLength": len(self.oplog), "term": self.term}

    def _advance_commit(self):
        """An entry is majority committed when a majority of voting members applied it:
        https://www.mongodb.com/docs/manual/reference/write-concern/#calculating-majority-for-write-concern
        """
        if self.state != PRIMARY:
            return
        applied = sorted((len(self.oplog) if host == self.me else self.progress.get(host, 0))
                         for host in self.voting_hosts())
        if not applied:
            return
        candidate = applied[len(applied) - self.majority()]
        # Like Raft, the primary commits through an entry of its own term.
        if candidate > self.commit_index and self.oplog[candidate - 1]["t"] == self.term:
            self.commit_index = candidate

    def config_committed(self):
        """A config is committed when a majority of its voting members installed it and the oplog entries
        written under the previous config are majority committed:
        https://www.mongodb.com/docs/manual/reference/command/replSetReconfig/#mongodb-dbcommand-dbcmd.replSetReconfig
        """
        installed = 0
        for host in self.voting_hosts():
            if host == self.me:
                installed += 1
                continue
            view = self.views.get(host)
            if view and self.healthy(host) and view["configVersion"] == self.config["version"] \
                    and view["configTerm"] == self.config.get("term", -1):
                installed += 1
        return installed >= self.majority() and self.commit_index >= self.config_install_index

    def monitor_loop(self):
        while not self.shutting_down:
            time.sleep(0.05)
            try:
                self._monitor_once()
            except Fatal as fatal:
                self.die(fatal)

    def _monitor_once(self):
        run_election = None
        with self.lock:
            if not self.config or self.state in (REMOVED, ARBITER, STARTUP):
                return
            now = time.monotonic()
            timeout = self.election_timeout()
            if self.state == PRIMARY:
                self._advance_commit()
                visible = sum(1 for h in self.voting_hosts() if h == self.me or self.healthy(h))
                # A primary that cannot see a majority of voting members steps down:
                # https://www.mongodb.com/docs/manual/core/replica-set-elections/
                if len(self.voting_hosts()) > 1 and visible < self.majority() \
                        and now - self.primary_since > timeout:
                    self.step_down_now("cannot see a majority of voting members")
                    return
                self._finish_newly_added()
                return
            if not self.electable() or now < self.stepdown_until or self.state != SECONDARY:
                return
            primary = self.primary_host()
            # Elections after electionTimeoutMillis without hearing from a primary, with a random offset:
            # https://www.mongodb.com/docs/manual/core/replica-set-elections/#factors-and-conditions-that-affect-elections
            if now - self.last_primary_contact > timeout * (1 + random.uniform(0, 0.15)):
                run_election = "no primary"
            elif primary is not None and primary != self.me and primary in self.views:
                # Priority takeover: a caught-up member with a higher priority than the primary calls an
                # election: https://www.mongodb.com/docs/manual/core/replica-set-elections/#member-priority
                primary_member = next((m for m in self.members() if m["host"] == primary), None)
                mine = self.my_member().get("priority", 1)
                caught_up = self.last_applied() >= self.views[primary]["lastApplied"]
                if primary_member and mine > primary_member.get("priority", 1) and caught_up:
                    if self.takeover_since is None:
                        self.takeover_since = now
                    elif now - self.takeover_since > max(2 * self.heartbeat_interval(), 0.3):
                        run_election = "priority takeover"
                else:
                    self.takeover_since = None
        if run_election:
            self.takeover_since = None
            self.run_election(run_election)

    def run_election(self, reason):
        """Election protocol version 1 (Raft-like, with a dry run first):
        https://www.mongodb.com/docs/manual/core/replica-set-elections/
        """
        for dry_run in (True, False):
            with self.lock:
                if self.state != SECONDARY or not self.electable():
                    return False
                if not dry_run:
                    self.term += 1
                    self.voted = {"term": self.term, "for": self.me}
                    self._save_meta()
                term = self.term + (1 if dry_run else 0)
                request = {"replSetRequestVotes": 1, "$db": "admin", "setName": self.set_name, "dryRun": dry_run,
                           "term": term, "candidate": self.me, "configVersion": self.config["version"],
                           "configTerm": self.config.get("term", -1), "lastApplied": list(self.last_applied())}
                request.update(self.key_fields())
                voters = [h for h in self.voting_hosts() if h != self.me]
                needed = self.majority()
                timeout = min(1.0, self.election_timeout())
            replies = self._ask_all(voters, request, timeout)
            with self.lock:
                for reply in replies:
                    self.observe_term(reply.get("term", 0))
                granted = 1 + sum(1 for reply in replies if reply.get("voteGranted"))
                if self.term != (term if not dry_run else term - 1) or self.state != SECONDARY:
                    return False
                if granted < needed:
                    self.last_primary_contact = time.monotonic()
                    return False
                if dry_run:
                    continue
                self._become_primary(reason)
                return True
        return False

    def _ask_all(self, hosts, request, timeout):
        replies = []

        def ask(host):
            client = PeerClient(host, timeout=timeout)
            try:
                replies.append(client.call(request, timeout=timeout))
            except ConnectionError:
                pass
            finally:
                client.close()
        threads = [threading.Thread(target=ask, args=(h,), daemon=True) for h in hosts]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout + 0.5)
        return list(replies)

    def _become_primary(self, reason):
        self._set_state(PRIMARY, "elected (%s)" % reason)
        self.primary_since = time.monotonic()
        self.progress = {}
        self.event("elected", term=self.term, reason=reason)
        # A new primary writes a no-op in its term, and the config takes the new term (no version change):
        # https://www.mongodb.com/docs/manual/reference/replica-configuration/#mongodb-rsconf-rsconf.term
        self.write("", "n", {"msg": "new primary", "term": self.term})
        config = dict(self.config, term=self.term)
        self._adopt_config(config)
        self.config_install_index = len(self.oplog)

    def handle_vote_request(self, request):
        with self.lock:
            def answer(granted, reason):
                return {"ok": 1.0, "term": self.term, "voteGranted": granted, "reason": reason}
            if request.get("setName") != self.set_name or not self.config:
                return answer(False, "wrong set or no config")
            candidate_config = {"term": request.get("configTerm", -1), "version": request.get("configVersion")}
            if self.config_newer(self.config, candidate_config):
                return answer(False, "candidate's config is older than mine")
            if request["term"] < self.term:
                return answer(False, "candidate's term is lower than mine")
            if not request.get("dryRun"):
                self.observe_term(request["term"])
                if self.voted["term"] == request["term"] and self.voted["for"] != request["candidate"]:
                    return answer(False, "already voted for another candidate in this term")
            elif self.state == PRIMARY and request["term"] <= self.term:
                return answer(False, "I am primary in this term")
            if self.state != ARBITER and tuple(request["lastApplied"]) < self.last_applied():
                return answer(False, "candidate's oplog is behind mine")
            if not request.get("dryRun"):
                self.voted = {"term": request["term"], "for": request["candidate"]}
                self._save_meta()
                self.last_primary_contact = time.monotonic()
            return answer(True, "")

    def _finish_newly_added(self):
        """The primary removes newlyAdded once the member is SECONDARY, by an automatic reconfig:
        https://www.mongodb.com/docs/manual/reference/replica-configuration/#mongodb-rsconf-rsconf.members-n-.newlyAdded
        """
        if self.reconfig_running or not self.config_committed():
            return
        for member in self.members():
            view = self.views.get(member["host"])
            if member.get("newlyAdded") and view and view["state"] == SECONDARY and self.healthy(member["host"]):
                members = [dict(m) for m in self.members()]
                for item in members:
                    if item["host"] == member["host"]:
                        del item["newlyAdded"]
                self._install_as_primary(dict(self.config, members=members, version=self.config["version"] + 1))
                self.event("newly_added_cleared", member=member["host"], version=self.config["version"])
                return

    def _install_as_primary(self, config):
        config["term"] = self.term
        self._adopt_config(config)
        self.write("", "n", {"msg": "Reconfig set", "version": config["version"]})
        self.config_install_index = len(self.oplog)

    def die(self, fatal):
        sys.stderr.write("FATAL: %s\n" % fatal)
        try:
            self.event("fatal", message=str(fatal), exit_code=fatal.exit_code)
        finally:
            sys.stderr.flush()
            os._exit(fatal.exit_code)

    def exit(self, how):
        self.shutting_down = True
        self.event("shutdown", how=how)
        os._exit(0)


class Connection:
    """Per-client state: who authenticated, the SASL conversation, whether the peer is on localhost."""

    def __init__(self, peer_address):
        self.localhost = peer_address in ("127.0.0.1", "::1") or peer_address.startswith("127.")
        self.users = []
        self.sasl = None


class Commands:
    """Command implementations. Each returns a reply document or raises CommandError."""

    OPEN = {"hello", "ismaster", "ping", "buildinfo", "saslstart", "saslcontinue", "logout", "endsessions",
            "replsetheartbeat", "replsetrequestvotes", "_replpull", "replsetstepup", "getlog", "whatsmyuri"}
    NEEDS = {"replsetgetstatus": "cluster_read", "replsetgetconfig": "cluster_read", "getparameter": "cluster_read",
             "serverstatus": "cluster_read", "replsetinitiate": "cluster_admin", "replsetreconfig": "cluster_admin",
             "replsetstepdown": "cluster_admin", "setfeaturecompatibilityversion": "cluster_admin",
             "_configsvrbalancerstart": "cluster_admin", "_configsvrbalancerstop": "cluster_admin",
             "_configsvrbalancerstatus": "cluster_read", "shutdown": "shutdown",
             "balancerstart": "cluster_admin", "balancerstop": "cluster_admin", "balancerstatus": "cluster_read",
             "_mongosusers": "user_admin", "_configsvraddshard": "cluster_admin", "addshard": "cluster_admin",
             "listshards": "cluster_read",
             "_configsvrsetfeaturecompatibilityversion": "cluster_admin",
             "createuser": "user_admin", "updateuser": "user_admin", "dropuser": "user_admin",
             "usersinfo": "user_admin",
             "insert": "write", "update": "write", "delete": "write",
             "find": "read", "count": "read", "aggregate": "read", "listcollections": "read",
             "listdatabases": "read"}
    INTERNAL = {"replsetheartbeat", "replsetrequestvotes", "_replpull", "replsetstepup", "_shardsvraddshard"}

    def __init__(self, member):
        self.member = member

    # -- dispatch -------------------------------------------------------------------------------------------
    def run(self, conn, command):
        name = next(iter(command))
        key = name.lower()
        handler = getattr(self, "cmd_" + key, None)
        if handler is None:
            raise CommandError(59, "CommandNotFound", "no such command: '%s'" % name)
        self.authorize(conn, key, command)
        return handler(conn, command, command[name])

    def authorize(self, conn, key, command):
        member = self.member
        if key in self.INTERNAL:
            if member.keyfile_digests and not member.shares_a_key(command):
                raise CommandError(18, "AuthenticationFailed", "internal authentication failed (keyFile mismatch)")
            return
        if not member.auth_enabled or key in self.OPEN:
            return
        if member.keyfile_digests and member.shares_a_key(command):
            return  # another cluster process (a mongos) authenticated with the shared keyfile
        needed = self.NEEDS.get(key)
        database = command.get("$db", "admin")
        # The localhost exception: with no user yet, a localhost client may create the first user (and, as
        # the keyfile tutorial does, initiate the set first):
        # https://www.mongodb.com/docs/manual/core/localhost-exception/ and
        # https://www.mongodb.com/docs/manual/tutorial/deploy-replica-set-with-keyfile-access-control/
        if conn.localhost and not member.users():
            if key in ("createuser", "replsetinitiate", "replsetgetstatus", "getparameter"):
                return
        for user in conn.users:
            for role in user["roles"]:
                if needed in ROLE_GRANTS.get(role["role"], ()) and (
                        role["role"] in ANY_DATABASE_ROLES or role["db"] == database):
                    return
        raise CommandError(13, "Unauthorized", "command %s requires authentication" % next(iter(command)))

    def require_primary(self):
        if self.member.state != PRIMARY:
            raise not_primary()

    def require_readable(self, command):
        mode = (command.get("$readPreference") or {}).get("mode", "primary")
        if self.member.state != PRIMARY and not (self.member.state == SECONDARY and mode != "primary"):
            raise CommandError(13435, "NotPrimaryNoSecondaryOk", "not primary and secondaryOk=false")

    # -- handshake and diagnostics -----------------------------------------------------------------------
    def cmd_hello(self, conn, command, _arg, legacy=False):
        """https://www.mongodb.com/docs/manual/reference/command/hello/"""
        m = self.member
        with m.lock:
            reply = {"isWritablePrimary": m.state == PRIMARY, "topologyVersion": None,
                     "maxBsonObjectSize": 16 * 1024 * 1024, "maxMessageSizeBytes": 48000000,
                     "maxWriteBatchSize": 100000, "localTime": now_utc(), "connectionId": 1,
                     "minWireVersion": 0, "maxWireVersion": WIRE_VERSION[m.binary_version], "readOnly": False}
            del reply["topologyVersion"]  # no awaitable hello: clients poll
            if legacy:
                reply["ismaster"] = reply.pop("isWritablePrimary")
            if m.config:
                visible = [x for x in m.members() if not x.get("hidden")]
                reply.update({
                    "setName": m.set_name, "setVersion": m.config["version"],
                    "hosts": [x["host"] for x in visible if not x.get("arbiterOnly") and x.get("priority", 1) > 0],
                    "passives": [x["host"] for x in visible if not x.get("arbiterOnly") and x.get("priority", 1) == 0],
                    "arbiters": [x["host"] for x in visible if x.get("arbiterOnly")],
                    "secondary": m.state == SECONDARY, "arbiterOnly": m.state == ARBITER})
                if not reply["passives"]:
                    del reply["passives"]
                if not reply["arbiters"]:
                    del reply["arbiters"]
                if m.me:
                    reply["me"] = m.me
                    mine = m.my_member() or {}
                    if mine.get("hidden"):
                        reply["hidden"] = True
                    if mine.get("tags"):
                        reply["tags"] = mine["tags"]
                primary = m.primary_host()
                if primary:
                    reply["primary"] = primary
                if m.state == PRIMARY:
                    reply["electionId"] = ObjectId("7fffffff" + "%016x" % m.term)
                optime, wall = m._optime()
                reply["lastWrite"] = {"opTime": optime, "lastWriteDate": wall, "majorityOpTime": m._optime(
                    m.commit_index)[0], "majorityWriteDate": m._optime(m.commit_index)[1]}
            else:
                reply.update({"secondary": False, "isreplicaset": True, "info": "Does not have a valid replica "
                              "set config", "setName": m.set_name})
            if m.cluster_role == "configsvr":
                reply["configsvr"] = 2
            mechs = command.get("saslSupportedMechs")
            if mechs and mechs in m.users():
                reply["saslSupportedMechs"] = ["SCRAM-SHA-256"]
        reply["ok"] = 1.0
        return reply

    def cmd_ismaster(self, conn, command, arg):
        return self.cmd_hello(conn, command, arg, legacy=True)

    def cmd_ping(self, conn, command, arg):
        return {"ok": 1.0}

    def cmd_whatsmyuri(self, conn, command, arg):
        return {"you": "", "ok": 1.0}

    def cmd_getlog(self, conn, command, arg):
        return {"names": [], "log": [], "totalLinesWritten": 0, "ok": 1.0}

    def cmd_endsessions(self, conn, command, arg):
        return {"ok": 1.0}

    def cmd_buildinfo(self, conn, command, arg):
        version = self.member.binary_version + ".0"
        return {"version": version, "gitVersion": "test-double", "modules": ["test-double"],
                "versionArray": [int(x) for x in version.split(".")] + [0], "bits": 64,
                "maxBsonObjectSize": 16 * 1024 * 1024, "ok": 1.0}

    def cmd_serverstatus(self, conn, command, arg):
        m = self.member
        return {"host": m.me, "version": m.binary_version + ".0", "process": "mongod", "pid": Int64(os.getpid()),
                "uptime": time.monotonic() - m.started, "localTime": now_utc(),
                "repl": {"setName": m.set_name, "ismaster": m.state == PRIMARY}, "ok": 1.0}

    # -- authentication ------------------------------------------------------------------------------------
    def cmd_saslstart(self, conn, command, arg):
        m = self.member
        if command.get("mechanism") not in ("SCRAM-SHA-256", "SCRAM-SHA-1"):
            raise CommandError(334, "MechanismUnavailable", "Received authentication for mechanism %s which is "
                               "not enabled" % command.get("mechanism"))
        client_first = bytes(command["payload"]).decode()
        bare = client_first.split(",", 2)[2]
        attrs = scram_attributes(bare)
        name = attrs["n"].replace("=2C", ",").replace("=3D", "=")
        user = m.users().get("%s.%s" % (command.get("$db", "admin"), name))
        if not user:
            # An unknown user fails the same way whatever the mechanism (clients pick SCRAM-SHA-1 when hello
            # lists no saslSupportedMechs for the user).
            raise CommandError(18, "AuthenticationFailed", "Authentication failed.")
        if command.get("mechanism") != "SCRAM-SHA-256":
            raise CommandError(334, "MechanismUnavailable", "SCRAM-SHA-1 is not modelled by the test double")
        creds = user["credentials"]["SCRAM-SHA-256"]
        nonce = attrs["r"] + base64.b64encode(os.urandom(24)).decode()
        server_first = "r=%s,s=%s,i=%d" % (nonce, creds["salt"], creds["iterationCount"])
        skip_empty = bool((command.get("options") or {}).get("skipEmptyExchange"))
        conn.sasl = {"user": user, "bare": bare, "server_first": server_first, "nonce": nonce, "step": 1,
                     "skip_empty": skip_empty}
        return {"conversationId": 1, "done": False, "payload": bson.Binary(server_first.encode()), "ok": 1.0}

    def cmd_saslcontinue(self, conn, command, arg):
        sasl = conn.sasl
        if not sasl:
            raise CommandError(17, "ProtocolError", "No SASL session state found")
        if sasl["step"] == 2:
            conn.sasl = None
            conn.users.append(sasl["user"])
            return {"conversationId": 1, "done": True, "payload": bson.Binary(b""), "ok": 1.0}
        client_final = bytes(command["payload"]).decode()
        without_proof, _sep, proof = client_final.rpartition(",p=")
        attrs = scram_attributes(without_proof)
        creds = sasl["user"]["credentials"]["SCRAM-SHA-256"]
        auth_message = ",".join((sasl["bare"], sasl["server_first"], without_proof)).encode()
        stored_key = base64.b64decode(creds["storedKey"])
        signature = hmac.new(stored_key, auth_message, "sha256").digest()
        client_key = bytes(a ^ b for a, b in zip(base64.b64decode(proof), signature))
        if attrs.get("r") != sasl["nonce"] or not hmac.compare_digest(hashlib.sha256(client_key).digest(), stored_key):
            conn.sasl = None
            raise CommandError(18, "AuthenticationFailed", "Authentication failed.")
        server_signature = hmac.new(base64.b64decode(creds["serverKey"]), auth_message, "sha256").digest()
        payload = bson.Binary(b"v=" + base64.b64encode(server_signature))
        if sasl["skip_empty"]:
            conn.sasl = None
            conn.users.append(sasl["user"])
            return {"conversationId": 1, "done": True, "payload": payload, "ok": 1.0}
        sasl["step"] = 2
        return {"conversationId": 1, "done": False, "payload": payload, "ok": 1.0}

    def cmd_logout(self, conn, command, arg):
        conn.users = []
        return {"ok": 1.0}

    def cmd_createuser(self, conn, command, name):
        m = self.member
        database = command.get("$db", "admin")
        if m.auth_enabled and conn.localhost and not m.users() and not conn.users and database != "admin":
            # The localhost exception creates the first user in the admin database:
            # https://www.mongodb.com/docs/manual/core/localhost-exception/
            raise CommandError(13, "Unauthorized", "the localhost exception creates users in the admin database only")
        if "pwd" not in command:
            raise CommandError(2, "BadValue", "Must provide a 'pwd' field for all user documents")
        roles = [r if isinstance(r, dict) else {"role": r, "db": database} for r in command.get("roles", [])]
        with m.lock:
            self.require_primary()
            key = "%s.%s" % (database, name)
            if key in m.users():
                raise CommandError(51003, "Location51003", "User \"%s@%s\" already exists" % (name, database))
            index = m.write("admin.system.users", "i", {"_id": key, "user": name, "db": database, "roles": roles,
                            "credentials": {"SCRAM-SHA-256": scram_credentials(command["pwd"])}})
        return self.finish_write(command, index, {"ok": 1.0})

    def cmd_updateuser(self, conn, command, name):
        """pwd replaces the user's SCRAM credentials, roles its roles; a connection already authenticated as the
        user stays so, the next login needs the new password:
        https://www.mongodb.com/docs/manual/reference/command/updateUser/"""
        m = self.member
        database = command.get("$db", "admin")
        with m.lock:
            self.require_primary()
            key = "%s.%s" % (database, name)
            user = m.users().get(key)
            if user is None:
                raise CommandError(11, "UserNotFound", "Could not find user \"%s\" for db \"%s\"" % (name, database))
            updated = dict(user)
            if "pwd" in command:
                updated["credentials"] = {"SCRAM-SHA-256": scram_credentials(command["pwd"])}
            if "roles" in command:
                updated["roles"] = [r if isinstance(r, dict) else {"role": r, "db": database}
                                    for r in command["roles"]]
            index = m.write("admin.system.users", "u", updated)
        return self.finish_write(command, index, {"ok": 1.0})

    def cmd_dropuser(self, conn, command, name):
        m = self.member
        with m.lock:
            self.require_primary()
            key = "%s.%s" % (command.get("$db", "admin"), name)
            if key not in m.users():
                raise CommandError(11, "UserNotFound", "User %s not found" % key)
            index = m.write("admin.system.users", "d", {"_id": key})
        return self.finish_write(command, index, {"ok": 1.0})

    def cmd_usersinfo(self, conn, command, arg):
        database = command.get("$db", "admin")
        wanted = {"%s.%s" % (database, arg)} if isinstance(arg, str) else None
        users = [{"_id": k, "user": u["user"], "db": u["db"], "roles": u["roles"],
                  "mechanisms": ["SCRAM-SHA-256"]} for k, u in self.member.users().items()
                 if wanted is None or k in wanted]
        return {"users": users, "ok": 1.0}

    # -- write concern -------------------------------------------------------------------------------------
    def finish_write(self, command, index, reply):
        """Acknowledge according to the write concern; the implicit default is majority:
        https://www.mongodb.com/docs/manual/reference/write-concern/#implicit-default-write-concern
        """
        m = self.member
        concern = command.get("writeConcern") or {}
        w = concern.get("w", "majority")
        timeout = concern.get("wtimeout", 0) / 1000.0
        deadline = time.monotonic() + timeout if timeout else None
        with m.lock:
            term = m.term

            def satisfied():
                if w == "majority":
                    return m.commit_index >= index
                count = sum(1 for h in [x["host"] for x in m.members()]
                            if (len(m.oplog) if h == m.me else m.progress.get(h, 0)) >= index)
                return count >= int(w)
            while not satisfied():
                if m.state != PRIMARY or m.term != term:
                    raise CommandError(11602, "InterruptedDueToReplStateChange",
                                       "operation was interrupted because the node stepped down",
                                       labels=["RetryableWriteError"])
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    reply["writeConcernError"] = {"code": 64, "codeName": "WriteConcernFailed",
                                                  "errmsg": "waiting for replication timed out",
                                                  "errInfo": {"wtimeout": True}}
                    return reply
                m.changed.wait(0.2 if remaining is None else min(0.2, remaining))
        return reply

    # -- CRUD ----------------------------------------------------------------------------------------------
    def _ns(self, command, collection):
        return "%s.%s" % (command.get("$db", "test"), collection)

    def cmd_insert(self, conn, command, collection):
        m = self.member
        ns = self._ns(command, collection)
        errors, index, n = [], 0, 0
        with m.lock:
            self.require_primary()
            existing = m.data.get(ns, {})
            for position, doc in enumerate(command.get("documents", [])):
                doc = dict(doc)
                doc.setdefault("_id", ObjectId())
                if doc["_id"] in existing:
                    errors.append({"index": position, "code": 11000, "errmsg": "E11000 duplicate key error "
                                   "collection: %s index: _id_ dup key: { _id: %r }" % (ns, doc["_id"])})
                    if command.get("ordered", True):
                        break
                    continue
                index = m.write(ns, "i", doc)
                n += 1
        reply = {"n": n, "ok": 1.0}
        if errors:
            reply["writeErrors"] = errors
        return self.finish_write(command, index, reply) if index else reply

    def cmd_update(self, conn, command, collection):
        m = self.member
        ns = self._ns(command, collection)
        n = modified = 0
        index = 0
        upserted = []
        with m.lock:
            self.require_primary()
            for position, spec in enumerate(command.get("updates", [])):
                docs = [d for d in m.data.get(ns, {}).values() if matches(d, spec.get("q"))]
                if not spec.get("multi"):
                    docs = docs[:1]
                for doc in docs:
                    index = m.write(ns, "u", apply_update(doc, spec["u"]))
                    n += 1
                    modified += 1
                if not docs and spec.get("upsert"):
                    base = {k: v for k, v in (spec.get("q") or {}).items() if not isinstance(v, dict)}
                    base.setdefault("_id", ObjectId())
                    new = apply_update(base, spec["u"])
                    index = m.write(ns, "i", new)
                    upserted.append({"index": position, "_id": new["_id"]})
                    n += 1
        reply = {"n": n, "nModified": modified, "ok": 1.0}
        if upserted:
            reply["upserted"] = upserted
        return self.finish_write(command, index, reply) if index else reply

    def cmd_delete(self, conn, command, collection):
        m = self.member
        ns = self._ns(command, collection)
        n, index = 0, 0
        with m.lock:
            self.require_primary()
            for spec in command.get("deletes", []):
                docs = [d for d in m.data.get(ns, {}).values() if matches(d, spec.get("q"))]
                if spec.get("limit", 0) == 1:
                    docs = docs[:1]
                for doc in docs:
                    index = m.write(ns, "d", {"_id": doc["_id"]})
                    n += 1
        return self.finish_write(command, index, {"n": n, "ok": 1.0}) if index else {"n": n, "ok": 1.0}

    def _select(self, command, collection, query):
        self.require_readable(command)
        docs = [d for d in self.member.data.get(self._ns(command, collection), {}).values() if matches(d, query)]
        return docs

    def _cursor(self, command, collection, docs):
        return {"cursor": {"id": Int64(0), "ns": self._ns(command, collection), "firstBatch": docs}, "ok": 1.0}

    def cmd_find(self, conn, command, collection):
        with self.member.lock:
            docs = sort_docs(self._select(command, collection, command.get("filter")), command.get("sort"))
            docs = docs[command.get("skip", 0):]
            if command.get("limit"):
                docs = docs[:abs(command["limit"])]
            return self._cursor(command, collection, docs)

    def cmd_count(self, conn, command, collection):
        with self.member.lock:
            return {"n": len(self._select(command, collection, command.get("query"))), "ok": 1.0}

    def cmd_aggregate(self, conn, command, collection):
        """$match, $sort, $skip, $limit, $count and a $group on a constant key with $sum: enough for
        count_documents and the tests."""
        with self.member.lock:
            docs = self._select(command, collection, None)
            for stage in command.get("pipeline", []):
                (name, spec), = stage.items()
                if name == "$match":
                    docs = [d for d in docs if matches(d, spec)]
                elif name == "$sort":
                    docs = sort_docs(docs, spec)
                elif name == "$skip":
                    docs = docs[spec:]
                elif name == "$limit":
                    docs = docs[:spec]
                elif name == "$count":
                    docs = [{spec: len(docs)}] if docs else []
                elif name == "$group" and not isinstance(spec.get("_id"), str):
                    group = {"_id": spec["_id"]}
                    for field, acc in spec.items():
                        if field != "_id":
                            operand = acc["$sum"]
                            group[field] = sum(operand if not isinstance(operand, str)
                                               else d.get(operand[1:], 0) for d in docs)
                    docs = [group] if docs else []
                else:
                    raise CommandError(2, "BadValue", "stage %s is not modelled by the test double" % name)
            return self._cursor(command, collection, docs)

    def cmd_listcollections(self, conn, command, arg):
        with self.member.lock:
            database = command.get("$db", "test")
            names = sorted(ns.split(".", 1)[1] for ns, docs in self.member.data.items()
                           if ns.startswith(database + ".") and docs)
            return self._cursor(command, "$cmd.listCollections", [{"name": n, "type": "collection"} for n in names])

    def cmd_listdatabases(self, conn, command, arg):
        with self.member.lock:
            names = sorted({ns.split(".", 1)[0] for ns, docs in self.member.data.items() if docs and ns})
            return {"databases": [{"name": n, "sizeOnDisk": 1, "empty": False} for n in names],
                    "totalSize": len(names), "ok": 1.0}

    # -- replica set ---------------------------------------------------------------------------------------
    def cmd_replsetinitiate(self, conn, command, config):
        """https://www.mongodb.com/docs/manual/reference/command/replSetInitiate/"""
        m = self.member
        with m.lock:
            if m.config:
                raise CommandError(23, "AlreadyInitialized", "already initialized")
            if not config:
                config = {"_id": m.set_name, "version": 1,
                          "members": [{"_id": 0, "host": "%s:%d" % (socket.gethostname(), m.port)}]}
            config = dict(config, version=config.get("version", 1), term=0)
            if m.cluster_role == "configsvr" and not config.get("configsvr"):
                raise CommandError(93, "InvalidReplicaSetConfig", "Nodes started with the --configsvr flag must "
                                   "have configsvr:true in their config")
            m.validate_config(config, initiating=True)
            m._adopt_config(config)
            m.event("initiated", version=config["version"], members=[x["host"] for x in config["members"]])
            # The initiating member writes the first entries, including FCV = its binary's release:
            # https://www.mongodb.com/docs/manual/reference/command/setFeatureCompatibilityVersion/#default-values
            m.state = PRIMARY
            m.term = max(m.term, 0)
            m.write("", "n", {"msg": "initiating set"})
            m.write("admin.system.version", "i", {"_id": FCV_DOC_ID, "version": m.binary_version})
            if m.cluster_role == "configsvr":
                m.write("config.settings", "i", {"_id": "balancer", "stopped": False, "mode": "full"})
            m.state = STARTUP2
            m._set_state(SECONDARY, "initiated")
            m.last_primary_contact = time.monotonic() - m.election_timeout()
        return {"ok": 1.0}

    def cmd_replsetgetconfig(self, conn, command, arg):
        """https://www.mongodb.com/docs/manual/reference/command/replSetGetConfig/"""
        m = self.member
        with m.lock:
            if not m.config:
                raise CommandError(94, "NotYetInitialized", "no replset config has been received")
            reply = {"config": m.config, "ok": 1.0}
            if command.get("commitmentStatus"):
                self.require_primary()
                reply["commitmentStatus"] = m.config_committed()
            return reply

    def cmd_replsetgetstatus(self, conn, command, arg):
        """https://www.mongodb.com/docs/manual/reference/command/replSetGetStatus/"""
        m = self.member
        with m.lock:
            if not m.config:
                raise CommandError(94, "NotYetInitialized", "no replset config has been received")
            primary = m.primary_host()
            members = []
            for member in m.members():
                host = member["host"]
                item = {"_id": member["_id"], "name": host}
                if host == m.me:
                    optime, wall = m._optime()
                    item.update({"health": 1.0, "state": m.state, "stateStr": STATE_NAMES[m.state],
                                 "uptime": int(time.monotonic() - m.started), "optime": optime, "optimeDate": wall,
                                 "configVersion": m.config["version"], "configTerm": m.config.get("term", -1),
                                 "self": True,
                                 "syncSourceHost": primary if m.state == SECONDARY and primary else ""})
                else:
                    view = m.views.get(host)
                    if view and m.healthy(host):
                        item.update({"health": 1.0, "state": view["state"], "stateStr": STATE_NAMES[view["state"]],
                                     "optime": view.get("optime") or {"ts": Timestamp(0, 0), "t": Int64(-1)},
                                     "optimeDate": view.get("optimeDate") or datetime.datetime(1970, 1, 1),
                                     "lastHeartbeat": view["seenWall"], "configVersion": view["configVersion"],
                                     "configTerm": view["configTerm"]})
                    else:
                        item.update({"health": 0.0, "state": DOWN, "stateStr": "(not reachable/healthy)",
                                     "optime": {"ts": Timestamp(0, 0), "t": Int64(-1)},
                                     "optimeDate": datetime.datetime(1970, 1, 1),
                                     "lastHeartbeatMessage": "heartbeats failing", "configVersion": -1})
                members.append(item)
            committed, committed_wall = m._optime(m.commit_index)
            applied, applied_wall = m._optime()
            return {"set": m.set_name, "date": now_utc(), "myState": m.state, "term": Int64(m.term),
                    "heartbeatIntervalMillis": Int64(m.settings()["heartbeatIntervalMillis"]),
                    "majorityVoteCount": m.majority(), "writeMajorityCount": m.majority(),
                    "votingMembersCount": len(m.voting_hosts()),
                    "optimes": {"lastCommittedOpTime": committed, "lastCommittedWallTime": committed_wall,
                                "appliedOpTime": applied, "durableOpTime": applied},
                    "members": members, "ok": 1.0}

    def cmd_replsetreconfig(self, conn, command, config):
        """Safe reconfiguration rules of https://www.mongodb.com/docs/manual/reference/command/replSetReconfig/"""
        m = self.member
        force = bool(command.get("force"))
        timeout = command.get("maxTimeMS", 0) / 1000.0 or None
        with m.lock:
            if not m.config:
                raise CommandError(94, "NotYetInitialized", "no replset config has been received")
            if not force:
                self.require_primary()
            if m.reconfig_running:
                raise CommandError(109, "ConfigurationInProgress", "a reconfig is already running")
            if not isinstance(config.get("version"), int):
                raise CommandError(93, "InvalidReplicaSetConfig", "version field is required")
            config = {k: v for k, v in config.items() if k != "term"}
            m.validate_config(config, initiating=False)
            if force:
                # A force reconfig gets a version well above the current one and term -1.
                config["version"] = max(config["version"], m.config["version"] + random.randint(10000, 100000))
                config["term"] = -1
                m._adopt_config(config)
                m.event("reconfig", version=config["version"], force=True)
                return {"ok": 1.0}
            if config["version"] <= m.config["version"]:
                raise CommandError(103, "NewReplicaSetConfigurationIncompatible",
                                   "New replica set configuration version must be greater than old, but %d is not "
                                   "greater than %d for replica set %s"
                                   % (config["version"], m.config["version"], m.set_name))
            if not m.config_committed():
                # The previous config must be committed before a new one is accepted.
                raise CommandError(308, "CurrentConfigNotCommittedYet",
                                   "Cannot run replSetReconfig because the current config is not majority "
                                   "committed")
            old_voters = {x["host"] for x in m.members() if x.get("votes", 1)}
            new_voters = {x["host"] for x in config["members"] if x.get("votes", 1)}
            if len(old_voters ^ new_voters) > 1:
                # "allows adding or removing no more than 1 voting member at a time"
                raise CommandError(103, "NewReplicaSetConfigurationIncompatible",
                                   "Non force replica set reconfig can only add or remove at most 1 voting member.")
            mine = next(x for x in config["members"] if x["host"] == m.me) \
                if any(x["host"] == m.me for x in config["members"]) else None
            if mine is None or not m.electable(dict(mine, priority=mine.get("priority", 1))):
                raise CommandError(103, "NewReplicaSetConfigurationIncompatible",
                                   "This node, %s, is not electable under the new configuration; step it down "
                                   "first" % m.me)
            members = []
            pending = {x["host"] for x in m.members() if x.get("newlyAdded")}
            for member in config["members"]:
                member = dict(member)
                # A new voting member is added as newlyAdded and does not vote until it is SECONDARY; a
                # member that still has it keeps it even when the new config omits it.
                if member.get("votes", 1) and (member["host"] not in old_voters or member["host"] in pending):
                    member["newlyAdded"] = True
                members.append(member)
            config["members"] = members
            m.reconfig_running = True
            try:
                m._install_as_primary(config)
                m.event("reconfig", version=config["version"], members=[x["host"] for x in members])
                # Waits until a majority of voting members installed the new config.
                deadline = time.monotonic() + (timeout or 60.0)
                while True:
                    installed = sum(1 for h in m.voting_hosts() if h == m.me or (
                        m.healthy(h) and m.views[h]["configVersion"] == config["version"]))
                    if installed >= m.majority():
                        break
                    if m.state != PRIMARY:
                        raise CommandError(11602, "InterruptedDueToReplStateChange", "stepped down during reconfig")
                    if time.monotonic() > deadline:
                        raise CommandError(50, "MaxTimeMSExpired", "waiting for the new config to propagate to a "
                                           "majority timed out")
                    m.changed.wait(0.1)
            finally:
                m.reconfig_running = False
        return {"ok": 1.0}

    def cmd_replsetstepdown(self, conn, command, seconds):
        """https://www.mongodb.com/docs/manual/reference/command/replSetStepDown/"""
        m = self.member
        step_down_secs = float(seconds or 60)
        catch_up = float(command.get("secondaryCatchUpPeriodSecs", 10))
        if catch_up >= step_down_secs:
            raise CommandError(2, "BadValue", "stepdown period must be longer than secondaryCatchUpPeriodSecs")
        self._step_down(catch_up, step_down_secs, bool(command.get("force")))
        return {"ok": 1.0}

    def _step_down(self, catch_up, freeze, force):
        m = self.member
        deadline = time.monotonic() + catch_up
        with m.lock:
            if m.state != PRIMARY:
                raise not_primary("not primary so can't step down")
            while True:
                target = self._caught_up_electable()
                if target or force:
                    break
                if time.monotonic() >= deadline:
                    raise CommandError(262, "ExceededTimeLimit", "No electable secondaries caught up as of %s. "
                                       "Please use the replSetStepDown command with the argument "
                                       "{force: true} to force node to step down." % now_utc().isoformat())
                m.changed.wait(min(0.1, max(0.0, deadline - time.monotonic())))
            m.step_down_now("replSetStepDown", freeze=freeze)
        # Election handoff: the former primary asks the caught-up secondary to stand at once:
        # https://www.mongodb.com/docs/manual/reference/replica-configuration/#mongodb-rsconf-rsconf.settings.enableElectionHandoff
        if target and m.settings().get("enableElectionHandoff", True):
            request = {"replSetStepUp": 1, "$db": "admin"}
            request.update(m.key_fields())
            threading.Thread(target=m._ask_all, args=([target], request, 2.0), daemon=True).start()

    def _caught_up_electable(self):
        m = self.member
        best = None
        for member in m.members():
            host = member["host"]
            view = m.views.get(host)
            if host == m.me or not m.electable(member) or not view or not m.healthy(host):
                continue
            if view["state"] == SECONDARY and m.progress.get(host, 0) >= len(m.oplog):
                if best is None or member.get("priority", 1) > best[0]:
                    best = (member.get("priority", 1), host)
        return best[1] if best else None

    def cmd_replsetstepup(self, conn, command, arg):
        m = self.member
        with m.lock:
            # A member that stepped down is ineligible for stepDownSecs, a step-up request included:
            # https://www.mongodb.com/docs/manual/reference/command/replSetStepDown/
            if time.monotonic() < m.stepdown_until:
                raise CommandError(20, "IllegalOperation", "stepped down: not electable for another %.0f s"
                                   % (m.stepdown_until - time.monotonic()))
        threading.Thread(target=m.run_election, args=("step up requested",), daemon=True).start()
        return {"ok": 1.0}

    def cmd_replsetheartbeat(self, conn, command, arg):
        m = self.member
        if command.get("from"):
            m.observe_peer(command["from"], command)
        with m.lock:
            if m.config is None and command.get("config") is None:
                reply = {"ok": 1.0, "setName": m.set_name, "state": STARTUP, "term": 0, "lastApplied": [-1, 0],
                         "configVersion": -2, "configTerm": -1, "binaryVersion": m.binary_version}
                return reply
            reply = {"ok": 1.0}
            reply.update(m.status_fields())
            asked = {"term": command.get("configTerm", -1), "version": command.get("configVersion", -2)}
            if m.config and m.config_newer(m.config, asked):
                reply["config"] = m.config
            return reply

    def cmd_replsetrequestvotes(self, conn, command, arg):
        return self.member.handle_vote_request(command)

    def cmd__replpull(self, conn, command, arg):
        return self.member.handle_pull(command)

    # -- featureCompatibilityVersion -------------------------------------------------------------------------
    def cmd_getparameter(self, conn, command, arg):
        """https://www.mongodb.com/docs/manual/reference/command/getParameter/"""
        m = self.member
        reply = {"ok": 1.0}
        with m.lock:
            if command.get("featureCompatibilityVersion") or arg == "*":
                fcv = m.fcv()
                if fcv is None:
                    raise CommandError(94, "NotYetInitialized", "featureCompatibilityVersion is not known until "
                                       "the replica set is initiated")
                reply["featureCompatibilityVersion"] = {"version": fcv}
        return reply

    def cmd_setfeaturecompatibilityversion(self, conn, command, version):
        """https://www.mongodb.com/docs/manual/reference/command/setFeatureCompatibilityVersion/"""
        m = self.member
        if command.get("$db") != "admin":
            raise CommandError(13, "Unauthorized", "setFeatureCompatibilityVersion may only be run against the "
                               "admin database")
        allowed = (m.binary_version, PREVIOUS_RELEASE[m.binary_version])
        if version not in allowed:
            raise CommandError(2, "BadValue", "Invalid feature compatibility version value '%s'; expected '%s' or "
                               "'%s'" % (version, allowed[1], allowed[0]))
        # Since 7.0 the command requires confirm: true.
        if command.get("confirm") is not True:
            raise CommandError(7369100, "Location7369100", "Once you have upgraded to %s, you will not be able to "
                               "downgrade FCV and binary version without support assistance. Please re-run this "
                               "command with 'confirm: true' to acknowledge this and continue with the FCV "
                               "upgrade." % version)
        with m.lock:
            self.require_primary()
            if m.fcv() == version:
                return {"ok": 1.0}
            index = m.write("admin.system.version", "u", {"_id": FCV_DOC_ID, "version": version})
        return self.finish_write(dict(command, writeConcern={"w": "majority"}), index, {"ok": 1.0})

    def cmd__configsvrsetfeaturecompatibilityversion(self, conn, command, version):
        """setFeatureCompatibilityVersion run on mongos, as the config server primary carries it out: every
        shard registered in config.shards first (each shard's primary, majority-acknowledged), then the config
        server replica set; a shard that refuses stops it there
        (https://www.mongodb.com/docs/manual/reference/command/setFeatureCompatibilityVersion/ : on a sharded
        cluster the command runs on mongos)."""
        m = self.member
        if m.cluster_role != "configsvr":
            raise CommandError(59, "CommandNotFound", "_configsvrSetFeatureCompatibilityVersion runs on a config server")
        if command.get("confirm") is not True or version not in (m.binary_version, PREVIOUS_RELEASE[m.binary_version]):
            return self.cmd_setfeaturecompatibilityversion(conn, command, version)  # refused there, before any shard
        self.require_primary()
        with m.lock:
            shards = list(m.data.get("config.shards", {}).values())
        for shard in shards:
            set_name, _sep, hosts = shard["host"].partition("/")
            primary = None
            for host in hosts.split(","):
                client = PeerClient(host, timeout=2.0)
                try:
                    primary = client.call({"hello": 1, "$db": "admin"}).get("primary")
                except ConnectionError:
                    continue
                finally:
                    client.close()
                if primary:
                    break
            if not primary:
                raise CommandError(133, "FailedToSatisfyReadPreference", "shard %s has no primary" % shard["_id"])
            client = PeerClient(primary, timeout=2.0)
            try:
                answer = client.call(dict({"setFeatureCompatibilityVersion": version, "confirm": True,
                                           "$db": "admin"}, **m.key_fields()), timeout=60.0)
            except ConnectionError:
                raise CommandError(6, "HostUnreachable", "cannot reach %s of shard %s" % (primary, shard["_id"]))
            finally:
                client.close()
            if not answer.get("ok"):
                raise CommandError(answer.get("code", 96), answer.get("codeName", "OperationFailed"),
                                   "shard %s: %s" % (shard["_id"], answer.get("errmsg", "")))
        return self.cmd_setfeaturecompatibilityversion(conn, dict(command, confirm=command.get("confirm")), version)

    # -- balancer (config server replica set) --------------------------------------------------------------
    def _balancer_set(self, command, stopped):
        m = self.member
        if m.cluster_role != "configsvr":
            raise CommandError(59, "CommandNotFound", "balancer commands run on a config server")
        with m.lock:
            self.require_primary()
            index = m.write("config.settings", "u", {"_id": "balancer", "stopped": stopped,
                                                     "mode": "off" if stopped else "full"})
        return self.finish_write(command, index, {"ok": 1.0})

    def cmd__configsvrbalancerstop(self, conn, command, arg):
        """https://www.mongodb.com/docs/manual/reference/command/balancerStop/ (mongos forwards it here)."""
        return self._balancer_set(command, True)

    def cmd__configsvrbalancerstart(self, conn, command, arg):
        """https://www.mongodb.com/docs/manual/reference/command/balancerStart/"""
        return self._balancer_set(command, False)

    def cmd__configsvrbalancerstatus(self, conn, command, arg):
        """https://www.mongodb.com/docs/manual/reference/command/balancerStatus/"""
        m = self.member
        if m.cluster_role != "configsvr":
            raise CommandError(59, "CommandNotFound", "balancer commands run on a config server")
        with m.lock:
            doc = m.data.get("config.settings", {}).get("balancer", {"stopped": False, "mode": "full"})
            return {"mode": doc["mode"], "inBalancerRound": False, "numBalancerRounds": Int64(0), "ok": 1.0}

    def cmd__mongosusers(self, conn, command, arg):
        """A sharded cluster's users live on the config servers; mongos reads them from there:
        https://www.mongodb.com/docs/manual/core/security-users/#sharded-cluster-users"""
        if self.member.cluster_role != "configsvr":
            raise CommandError(59, "CommandNotFound", "users for mongos are kept on config servers")
        with self.member.lock:
            return {"users": list(self.member.users().values()), "ok": 1.0}

    # -- shards ---------------------------------------------------------------------------------------------
    def cmd__configsvraddshard(self, conn, command, seed):
        """addShard as mongos forwards it to the config server primary
        (https://www.mongodb.com/docs/manual/reference/command/addShard/): the seed "set/host:port,..." must
        name a replica set (its setName must match), whose primary must run with clusterRole shardsvr
        (https://www.mongodb.com/docs/manual/reference/configuration-options/#mongodb-setting-sharding.clusterRole);
        the shard's name defaults to the set's name; the shard is recorded in config.shards with the set's
        hosts. Adding a shard already added with the same name and set answers ok without a change; a name
        taken by another set is refused."""
        m = self.member
        if m.cluster_role != "configsvr":
            raise CommandError(59, "CommandNotFound", "_configsvrAddShard runs on a config server")
        self.require_primary()
        set_name, _sep, hosts = str(seed).partition("/")
        seeds = [h for h in hosts.split(",") if h]
        if not set_name or not seeds:
            raise CommandError(9, "FailedToParse", "addShard needs a replica set seed list 'set/host:port,...'")
        name = command.get("name") or set_name
        with m.lock:
            existing = m.data.get("config.shards", {})
            for shard in existing.values():
                if shard["host"].partition("/")[0] == set_name:
                    if shard["_id"] != name:
                        raise CommandError(96, "OperationFailed", "replica set %s is already shard %s"
                                           % (set_name, shard["_id"]))
                    return {"shardAdded": name, "ok": 1.0}
            if name in existing:
                raise CommandError(96, "OperationFailed", "a shard named %s already exists" % name)
        primary, seen = None, None
        for host in seeds:
            client = PeerClient(host, timeout=2.0)
            try:
                seen = client.call({"hello": 1, "$db": "admin"})
            except ConnectionError:
                continue
            finally:
                client.close()
            if seen.get("setName") != set_name:
                raise CommandError(96, "OperationFailed", "in seed list %s, host %s does not belong to replica set %s"
                                   % (seed, host, set_name))
            primary = seen.get("primary")
            if primary:
                break
        if not primary:
            raise CommandError(133, "FailedToSatisfyReadPreference", "no primary found for replica set %s" % set_name)
        client = PeerClient(primary, timeout=2.0)
        try:
            answer = client.call(dict({"_shardsvrAddShard": name, "configsvrConnectionString": "%s/%s" % (
                m.set_name, ",".join(x["host"] for x in m.members())), "$db": "admin"}, **m.key_fields()),
                timeout=30.0)
        except ConnectionError:
            raise CommandError(6, "HostUnreachable", "cannot reach %s" % primary)
        finally:
            client.close()
        if not answer.get("ok"):
            raise CommandError(answer.get("code", 96), answer.get("codeName", "OperationFailed"),
                               "%s: %s" % (primary, answer.get("errmsg", "")))
        with m.lock:
            self.require_primary()
            index = m.write("config.shards", "i", {"_id": name, "host": "%s/%s" % (set_name, ",".join(seen["hosts"])),
                                                   "state": 1})
        m.event("shard_added", shard=name, host="%s/%s" % (set_name, ",".join(seen["hosts"])))
        return self.finish_write(command, index, {"shardAdded": name, "ok": 1.0})

    def cmd__shardsvraddshard(self, conn, command, name):
        """The config server's call to the shard's primary: refused unless this member runs with clusterRole
        shardsvr; records the shard identity document in admin.system.version
        (https://www.mongodb.com/docs/manual/reference/command/addShard/)."""
        m = self.member
        if m.cluster_role != "shardsvr":
            raise CommandError(96, "OperationFailed", "Cannot add %s as a shard since it was not started with "
                               "sharding.clusterRole shardsvr" % m.set_name)
        with m.lock:
            self.require_primary()
            known = m.data.get("admin.system.version", {}).get("shardIdentity")
            if known and known["shardName"] != name:
                raise CommandError(96, "OperationFailed", "this replica set is already shard %s" % known["shardName"])
            index = m.write("admin.system.version", "u", {"_id": "shardIdentity", "shardName": name,
                                                          "configsvrConnectionString":
                                                          command.get("configsvrConnectionString")})
        return self.finish_write(command, index, {"ok": 1.0})

    # -- shutdown ------------------------------------------------------------------------------------------
    def cmd_shutdown(self, conn, command, arg):
        """A primary shuts down only after an electable secondary caught up, unless force; default timeout
        15 s: https://www.mongodb.com/docs/manual/reference/command/shutdown/
        """
        m = self.member
        if command.get("$db") != "admin":
            raise CommandError(13, "Unauthorized", "shutdown must run against the admin database")
        if m.state == PRIMARY and not command.get("force"):
            self._step_down(float(command.get("timeoutSecs", 15)), 60.0, False)
        raise SystemExit("shutdown command")


# ---------------------------------------------------------------------------------------------------------
# mongos: a router that keeps no data; balancer commands and users go to the config server replica set.
# https://www.mongodb.com/docs/manual/core/sharded-cluster-query-router/
# ---------------------------------------------------------------------------------------------------------
class Router:
    """Enough of mongos for the balancer commands, authentication against the config servers' users,
    createUser and shutdown. It holds no state of its own but its event log."""

    def __init__(self, options):
        self.options = options
        self.port = options.port
        self.binary_version = options.binary_version
        self.cluster_role = "mongos"
        self.set_name, _sep, hosts = options.configdb.partition("/")
        self.config_hosts = [h for h in hosts.split(",") if h]
        self.keyfile_digests = keyfile_digests(options.keyFile)
        self.auth_enabled = bool(options.keyFile)
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.started = time.monotonic()
        self.state = None
        self.me = "%s:%d" % (socket.gethostname(), self.port)
        self.event_path = options.event_log or os.path.join(options.dbpath, "mongos-events.jsonl")
        os.makedirs(os.path.dirname(os.path.abspath(self.event_path)), exist_ok=True)
        self.shutting_down = False
        self.event("start", binary_version=self.binary_version, role="mongos", pid=os.getpid())

    event = Member.event
    key_fields = Member.key_fields
    shares_a_key = Member.shares_a_key
    die = Member.die

    def exit(self, how):
        self.shutting_down = True
        self.event("shutdown", how=how)
        os._exit(0)

    def config_primary_call(self, command, database="admin"):
        request = dict(command, **self.key_fields())
        request["$db"] = database
        for host in self.config_hosts:
            client = PeerClient(host, timeout=2.0)
            try:
                seen = client.call({"hello": 1, "$db": "admin"})
                primary = host if seen.get("isWritablePrimary") else seen.get("primary")
                if not primary:
                    continue
                if primary != host:
                    client.close()
                    client = PeerClient(primary, timeout=2.0)
                return client.call(request, timeout=30.0)
            except ConnectionError:
                continue
            finally:
                client.close()
        raise CommandError(133, "FailedToSatisfyReadPreference",
                           "Could not find host matching read preference { mode: \"primary\" } for set %s"
                           % self.set_name)

    def users(self):
        reply = self.config_primary_call({"_mongosUsers": 1})
        if not reply.get("ok"):
            raise CommandError(reply.get("code", 8), reply.get("codeName", "UnknownError"), reply.get("errmsg", ""))
        return dict((u["_id"], u) for u in reply["users"])


class RouterCommands(Commands):
    ROUTED = {"hello", "ismaster", "ping", "buildinfo", "saslstart", "saslcontinue", "logout", "endsessions",
              "whatsmyuri", "getlog", "balancerstart", "balancerstop", "balancerstatus", "createuser",
              "shutdown", "serverstatus", "addshard", "listshards", "setfeaturecompatibilityversion"}

    def run(self, conn, command):
        name = next(iter(command))
        if name.lower() not in self.ROUTED:
            raise CommandError(59, "CommandNotFound", "no such command: '%s' (not modelled by the mongos double)"
                               % name)
        return super().run(conn, command)

    def authorize(self, conn, key, command):
        if key == "createuser" and conn.localhost and self.member.auth_enabled and not conn.users:
            if not self.member.users():
                return  # the localhost exception, judged on the config servers' users
        super().authorize(conn, key, command)

    def cmd_hello(self, conn, command, _arg, legacy=False):
        """mongos answers hello with msg: isdbgrid: https://www.mongodb.com/docs/manual/reference/command/hello/"""
        reply = {"isWritablePrimary": True, "msg": "isdbgrid", "maxBsonObjectSize": 16 * 1024 * 1024,
                 "maxMessageSizeBytes": 48000000, "maxWriteBatchSize": 100000, "localTime": now_utc(),
                 "connectionId": 1, "minWireVersion": 0, "maxWireVersion": WIRE_VERSION[self.member.binary_version],
                 "readOnly": False, "ok": 1.0}
        if legacy:
            reply["ismaster"] = reply.pop("isWritablePrimary")
        mechs = command.get("saslSupportedMechs")
        if mechs:
            try:
                if mechs in self.member.users():
                    reply["saslSupportedMechs"] = ["SCRAM-SHA-256"]
            except CommandError:
                pass
        return reply

    def cmd_serverstatus(self, conn, command, arg):
        return {"host": self.member.me, "version": self.member.binary_version + ".0", "process": "mongos",
                "pid": Int64(os.getpid()), "uptime": time.monotonic() - self.member.started, "ok": 1.0}

    def _forward(self, command, internal_name):
        body = {internal_name: 1}
        if command.get("maxTimeMS"):
            body["maxTimeMS"] = command["maxTimeMS"]
        reply = self.member.config_primary_call(body)
        if not reply.get("ok"):
            raise CommandError(reply.get("code", 8), reply.get("codeName", "UnknownError"), reply.get("errmsg", ""))
        return reply

    def cmd_balancerstop(self, conn, command, arg):
        """https://www.mongodb.com/docs/manual/reference/command/balancerStop/"""
        return self._forward(command, "_configsvrBalancerStop")

    def cmd_balancerstart(self, conn, command, arg):
        """https://www.mongodb.com/docs/manual/reference/command/balancerStart/"""
        return self._forward(command, "_configsvrBalancerStart")

    def cmd_balancerstatus(self, conn, command, arg):
        """https://www.mongodb.com/docs/manual/reference/command/balancerStatus/"""
        return self._forward(command, "_configsvrBalancerStatus")

    def cmd_addshard(self, conn, command, seed):
        """https://www.mongodb.com/docs/manual/reference/command/addShard/ (runs on mongos, against admin)."""
        if command.get("$db") != "admin":
            raise CommandError(13, "Unauthorized", "addShard may only be run against the admin database")
        body = {"_configsvrAddShard": seed}
        if command.get("name"):
            body["name"] = command["name"]
        return self._forward_body(body)

    def cmd_listshards(self, conn, command, arg):
        """https://www.mongodb.com/docs/manual/reference/command/listShards/: config.shards as the config
        server primary has it."""
        reply = self._forward_body({"find": "shards", "$db": "config"}, database="config")
        return {"shards": reply["cursor"]["firstBatch"], "ok": 1.0}

    def cmd_setfeaturecompatibilityversion(self, conn, command, version):
        """https://www.mongodb.com/docs/manual/reference/command/setFeatureCompatibilityVersion/ (on mongos
        for a sharded cluster): carried out by the config server primary."""
        if command.get("$db") != "admin":
            raise CommandError(13, "Unauthorized", "setFeatureCompatibilityVersion may only be run against the "
                               "admin database")
        body = {"_configsvrSetFeatureCompatibilityVersion": version, "confirm": command.get("confirm")}
        reply = self._forward_body(body)
        return {"ok": reply.get("ok", 1.0)}

    def _forward_body(self, body, database="admin"):
        reply = self.member.config_primary_call(body, database=database)
        if not reply.get("ok"):
            raise CommandError(reply.get("code", 8), reply.get("codeName", "UnknownError"), reply.get("errmsg", ""))
        return reply

    def cmd_createuser(self, conn, command, name):
        """Users created through mongos are stored on the config servers."""
        forwarded = dict((k, v) for k, v in command.items() if k not in ("$db", "lsid", "$clusterTime"))
        forwarded["$db"] = command.get("$db", "admin")
        reply = self.member.config_primary_call(forwarded)
        if not reply.get("ok"):
            raise CommandError(reply.get("code", 8), reply.get("codeName", "UnknownError"), reply.get("errmsg", ""))
        return {"ok": 1.0}

    def cmd_shutdown(self, conn, command, arg):
        if command.get("$db") != "admin":
            raise CommandError(13, "Unauthorized", "shutdown must run against the admin database")
        raise SystemExit("shutdown command")


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        member = self.server.member
        commands = self.server.commands
        conn = Connection(self.client_address[0])
        sock = accept_tls(self.request, self.server)
        if sock is None:
            return
        while True:
            try:
                request_id, opcode, body = read_message(sock)
            except (ConnectionError, OSError):
                return
            if opcode == OP_MSG:
                flags, command = parse_op_msg(body)
            elif opcode == OP_QUERY:
                flags, command = 0, parse_op_query(body)
            else:
                return
            try:
                reply = commands.run(conn, command)
            except CommandError as error:
                reply = error.reply()
            except SystemExit:
                member.exit("shutdown command")
            except Fatal as fatal:
                member.die(fatal)
            if flags & 2:  # moreToCome: the client expects no reply
                continue
            pack = op_msg if opcode == OP_MSG else op_reply
            try:
                sock.sendall(pack(request_id + 1, request_id, reply))
            except OSError:
                return


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def read_keyfile(data):
    """The keys of a keyfile, as mongod reads one (https://www.mongodb.com/docs/manual/core/security-internal-authentication/
    and https://www.mongodb.com/docs/manual/tutorial/rotate-key-replica-set/): a single key string, or a YAML
    sequence of key strings (each optionally quoted) since 4.2; whitespace inside a key is ignored, so a key may
    span lines (a sequence item's continuation lines are indented)."""
    text = data.decode("ascii", "replace")
    lines = [line for line in text.splitlines() if line.strip() and line.strip() != "---"]
    if not lines or not lines[0].lstrip().startswith("- "):
        return ["".join(text.split()).strip("'\"")] if text.strip() else []
    items = []
    for line in lines:
        if line.lstrip().startswith("- "):
            items.append(line.lstrip()[2:])
        else:
            items[-1] += line
    return ["".join(item.split()).strip("'\"") for item in items]


def keyfile_digests(path):
    """The digests of a keyfile's keys (read_keyfile) that members compare; empty without a keyfile."""
    if not path:
        return []
    with open(path, "rb") as handle:
        return [hashlib.sha256(key.encode()).hexdigest() for key in read_keyfile(handle.read())]


def read_conf(text):
    """The block mappings of a mongod.conf (YAML, as the configuration file page describes it:
    https://www.mongodb.com/docs/manual/reference/configuration-options/) as nested dicts, scalars as
    int, bool or str. mongod parses its file itself; the double does too, so the package needs no YAML
    library. Flow collections and multi-line scalars are not read."""
    root = {}
    stack = [(-1, root)]
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if not line.strip() or line.strip() == "---":
            continue
        indent = len(line) - len(line.lstrip())
        key, _sep, value = line.strip().partition(":")
        while indent <= stack[-1][0]:
            stack.pop()
        parent = stack[-1][1]
        value = value.strip()
        if not value:
            parent[key] = {}
            stack.append((indent, parent[key]))
            continue
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            parent[key] = value[1:-1]
        elif value.lower() in ("true", "false"):
            parent[key] = value.lower() == "true"
        else:
            parent[key] = _number_or_text(value)
    return root


def _number_or_text(value):
    """A scalar as YAML reads it: an int, a float (storage.wiredTiger.engineConfig.cacheSizeGB), else the text."""
    try:
        return int(value)
    except ValueError:
        pass
    if re.match(r"^-?[0-9]+\.[0-9]*$", value):
        return float(value)
    return value


def parse_args(argv):
    parser = argparse.ArgumentParser(description="mongod test double (one replica-set member)")
    parser.add_argument("--config", "-f", help="a mongod.conf (YAML) whose settings are used")
    parser.add_argument("--port", type=int, default=27017)
    parser.add_argument("--bind_ip", default="127.0.0.1")
    parser.add_argument("--dbpath", default="/var/lib/mongodb")
    parser.add_argument("--replSet", default=None)
    parser.add_argument("--keyFile", default=None)
    parser.add_argument("--auth", action="store_true")
    parser.add_argument("--cluster-role", choices=["configsvr", "shardsvr"], default=None)
    parser.add_argument("--binary-version", choices=sorted(WIRE_VERSION), default=None)
    parser.add_argument("--advertise-host", default=None)
    parser.add_argument("--event-log", default=None)
    parser.add_argument("--mongos", action="store_true", help="run as a mongos router")
    parser.add_argument("--configdb", default=None, help="mongos: configReplSet/host:port,host:port")
    parser.add_argument("--tlsMode", dest="tls_mode", choices=TLS_MODES, default=None)
    parser.add_argument("--tlsCertificateKeyFile", dest="tls_certificate_key_file", default=None)
    parser.add_argument("--tlsCAFile", dest="tls_ca_file", default=None)
    parser.add_argument("--tlsAllowConnectionsWithoutCertificates", dest="tls_allow_without_certificates",
                        action="store_true")
    parser.add_argument("--tlsAllowInvalidHostnames", dest="tls_allow_invalid_hostnames", action="store_true")
    options = parser.parse_args(argv)
    if options.config:
        with open(options.config) as handle:
            conf = read_conf(handle.read())
        net, storage = conf.get("net", {}), conf.get("storage", {})
        replication, security = conf.get("replication", {}), conf.get("security", {})
        options.port = net.get("port", options.port)
        options.bind_ip = net.get("bindIp", options.bind_ip)
        options.dbpath = storage.get("dbPath", options.dbpath)
        options.replSet = replication.get("replSetName", options.replSet)
        options.keyFile = security.get("keyFile", options.keyFile)
        options.auth = options.auth or security.get("authorization") == "enabled"
        options.cluster_role = conf.get("sharding", {}).get("clusterRole", options.cluster_role)
        options.configdb = conf.get("sharding", {}).get("configDB", options.configdb)
        tls = net.get("tls", {})
        options.tls_mode = tls.get("mode", options.tls_mode)
        options.tls_certificate_key_file = tls.get("certificateKeyFile", options.tls_certificate_key_file)
        options.tls_ca_file = tls.get("CAFile", options.tls_ca_file)
        options.tls_allow_without_certificates = (options.tls_allow_without_certificates
                                                  or tls.get("allowConnectionsWithoutCertificates") is True)
        options.tls_allow_invalid_hostnames = (options.tls_allow_invalid_hostnames
                                               or tls.get("allowInvalidHostnames") is True)
    if not options.binary_version:
        version_file = os.path.join(os.path.dirname(os.path.abspath(__file__)), "VERSION")
        options.binary_version = open(version_file).read().strip() if os.path.exists(version_file) else "8.0"
    if options.mongos:
        if not options.configdb or "/" not in options.configdb:
            parser.error("--configdb (sharding.configDB) must be configReplSetName/host:port,...")
        return options
    if not options.replSet:
        parser.error("--replSet (replication.replSetName) is required: the double models replica-set members only")
    return options


def use_tls(server, options):
    global PEER_TLS  # pylint: disable=global-statement
    server.tls_mode = options.tls_mode or "disabled"
    server.tls_context, PEER_TLS = tls_contexts(options)
    server.member.event("tls", mode=server.tls_mode, ca_file=options.tls_ca_file,
                        client_certificates="optional" if options.tls_allow_without_certificates else "required")


def serve_router(options):
    router = Router(options)
    server = Server(("0.0.0.0" if options.bind_ip in ("0.0.0.0", "*") else options.bind_ip.split(",")[0].strip(),
                     options.port), Handler)
    server.member, server.commands = router, RouterCommands(router)
    use_tls(server, options)

    def on_term(_signum, _frame):
        threading.Thread(target=router.exit, args=("SIGTERM",), daemon=True).start()
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    sys.stdout.write("mongos double %s listening on %s:%d\n" % (options.binary_version, options.bind_ip, options.port))
    sys.stdout.flush()
    server.serve_forever(poll_interval=0.2)
    return 0


def main(argv=None):
    options = parse_args(argv)
    if options.mongos:
        return serve_router(options)
    try:
        member = Member(options)
    except Fatal as fatal:
        sys.stderr.write("FATAL: %s\n" % fatal)
        return fatal.exit_code
    server = None
    for address in [a.strip() for a in str(options.bind_ip).split(",")]:
        server = Server(("0.0.0.0" if address in ("0.0.0.0", "*") else address, options.port), Handler)
        break  # one listening address is enough for the double
    server.member, server.commands = member, Commands(member)
    member.server = server
    use_tls(server, options)

    def on_term(_signum, _frame):
        # SIGTERM as a primary first tries to hand over (like shutdown with its default timeout).
        def stop():
            if member.state == PRIMARY:
                try:
                    server.commands._step_down(15.0, 60.0, False)
                except CommandError:
                    pass
            member.exit("SIGTERM")
        threading.Thread(target=stop, daemon=True).start()
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)

    heartbeats = {}

    def manage_heartbeats():
        while not member.shutting_down:
            with member.lock:
                peers = {m["host"] for m in member.members() if m["host"] != member.me} if member.me else set()
            for host in peers - set(heartbeats):
                stop = threading.Event()
                heartbeats[host] = stop
                threading.Thread(target=member.heartbeat_loop, args=(host, stop), daemon=True).start()
            for host in set(heartbeats) - peers:
                heartbeats.pop(host).set()
            time.sleep(0.1)
    for target in (manage_heartbeats, member.pull_loop, member.monitor_loop):
        threading.Thread(target=target, daemon=True).start()
    sys.stdout.write("mongod double %s listening on %s:%d\n" % (options.binary_version, options.bind_ip, options.port))
    sys.stdout.flush()
    server.serve_forever(poll_interval=0.2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
