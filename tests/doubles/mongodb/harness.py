# -*- coding: utf-8 -*-
"""Start and stop mongod double processes on loopback ports, for unit tests."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

DOUBLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mongod_double.py")
# Short timers so elections take a second or two, long enough not to misfire on a loaded test machine;
# real defaults are 10 s / 2 s / 10 s.
FAST_SETTINGS = {"electionTimeoutMillis": 1500, "heartbeatIntervalMillis": 150, "heartbeatTimeoutSecs": 5}


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until(predicate, timeout=10.0, interval=0.05, what="condition"):
    deadline = time.monotonic() + timeout
    last_error = None
    while time.monotonic() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except Exception as error:  # pylint: disable=broad-except
            last_error = error
        time.sleep(interval)
    raise AssertionError("timed out waiting for %s (last error: %r)" % (what, last_error))


class Node:
    def __init__(self, cluster, index, port, binary_version):
        self.cluster, self.index, self.port = cluster, index, port
        self.binary_version = binary_version
        self.dbpath = os.path.join(cluster.root, "node%d" % index)
        self.process = None
        self.keyfile = None     # this node's own keyfile (a key rotation), else the cluster's

    @property
    def host(self):
        return "127.0.0.1:%d" % self.port

    def start(self, binary_version=None, wait=True):
        self.binary_version = binary_version or self.binary_version
        argv = [sys.executable, DOUBLE, "--port", str(self.port), "--dbpath", self.dbpath,
                "--replSet", self.cluster.set_name, "--binary-version", self.binary_version,
                "--event-log", self.cluster.event_log]
        if self.keyfile or self.cluster.keyfile:
            argv += ["--keyFile", self.keyfile or self.cluster.keyfile]
        if self.cluster.cluster_role:
            argv += ["--cluster-role", self.cluster.cluster_role]
        self.process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if wait:
            wait_until(self.listening, timeout=10, what="%s to listen" % self.host)
        return self.process

    def listening(self):
        if self.process.poll() is not None:
            if not hasattr(self.process, "error_text"):
                self.process.error_text = self.process.stderr.read().decode()
            raise AssertionError("double exited with %s: %s" % (self.process.returncode, self.process.error_text))
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
            return True
        except OSError:
            return False

    def start_router(self, configdb, binary_version=None):
        """Run this node as a mongos of the config server replica set `configdb` ("name/host:port,...")."""
        self.binary_version = binary_version or self.binary_version
        argv = [sys.executable, DOUBLE, "--mongos", "--configdb", configdb, "--port", str(self.port),
                "--dbpath", self.dbpath, "--binary-version", self.binary_version, "--event-log",
                self.cluster.event_log]
        if self.cluster.keyfile:
            argv += ["--keyFile", self.cluster.keyfile]
        self.process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_until(self.listening, timeout=10, what="mongos %s to listen" % self.host)
        return self.process

    def kill(self, sig=signal.SIGKILL):
        if self.process and self.process.poll() is None:
            self.process.send_signal(sig)
            if sig in (signal.SIGKILL, signal.SIGTERM):
                self.process.wait(timeout=20)

    def alive(self):
        return self.process is not None and self.process.poll() is None


class Cluster:
    def __init__(self, root, size=3, set_name="rs0", binary_version="8.0", keyfile=True, cluster_role=None):
        self.root, self.set_name, self.cluster_role = str(root), set_name, cluster_role
        os.makedirs(self.root, exist_ok=True)
        self.event_log = os.path.join(self.root, "events.jsonl")
        self.keyfile = None
        if keyfile:
            self.keyfile = os.path.join(self.root, "keyfile")
            with open(self.keyfile, "w") as handle:
                handle.write("a-shared-test-key-0123456789\n")
            os.chmod(self.keyfile, 0o600)
        self.nodes = [Node(self, i, free_port(), binary_version) for i in range(size)]

    def start(self):
        for node in self.nodes:
            node.start(wait=False)
        for node in self.nodes:
            wait_until(node.listening, timeout=10, what="%s to listen" % node.host)
        return self

    def add_node(self, binary_version="8.0"):
        node = Node(self, len(self.nodes), free_port(), binary_version)
        self.nodes.append(node)
        return node

    def stop(self):
        for node in self.nodes:
            if node.process and node.process.poll() is None:
                node.process.send_signal(signal.SIGCONT)
                node.kill(signal.SIGKILL)

    def config(self, settings=None, **overrides):
        members = []
        for node in self.nodes:
            member = {"_id": node.index, "host": node.host}
            member.update(overrides.get(node.index, {}))
            members.append(member)
        return {"_id": self.set_name, "version": 1, "members": members,
                "settings": dict(FAST_SETTINGS, **(settings or {}))}

    def events(self):
        with open(self.event_log) as handle:
            return [json.loads(line) for line in handle if line.strip()]
