# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The connection a scheduled backup travels in, between a member and the backup host (the agent
roles/percona_server/files/dbops_mysql_backup.py on both ends).

TLS with the collection's copy certificates (roles/percona_server/tasks/copy_tls.yml), each end verified by its
inventory name: the member checks that it reached the backup host it was told of (the certificate's DNS name, as
any TLS client does), the backup host that the certificate of the member connecting names the member its offer
speaks for (a member cannot send a backup as another). Over it, JSON messages of one line, and one byte stream in
frames (a 4-byte length, then the bytes; a frame of length 0 ends it), so the receiver tells a whole stream from
one the connection cut short, and both ends can still exchange messages after it.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import socket
import ssl
import struct
import time

FRAME = 1 << 20
LENGTH = struct.Struct("!I")


class CopyChannelError(Exception):
    """The connection failed, went silent, or carried something other than what the other end must send."""


def _context(purpose, tls):
    context = ssl.create_default_context(purpose, cafile=tls["ca"])
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(tls["cert"], tls["key"])
    context.verify_mode = ssl.CERT_REQUIRED     # the server side asks for, and verifies, the client's certificate
    return context


def connect(address, port, server_name, tls, timeout=30):
    """The member's end: a channel to the backup host, whose certificate must name server_name."""
    raw = socket.create_connection((address, port), timeout=timeout)
    try:
        return Channel(_context(ssl.Purpose.SERVER_AUTH, tls).wrap_socket(raw, server_hostname=server_name))
    except (ssl.SSLError, ssl.CertificateError, OSError) as err:
        raw.close()
        raise CopyChannelError("TLS with %s (%s:%s) failed: %s" % (server_name, address, port, err))


def accept(sock, tls, timeout=60):
    """The backup host's end, on a connection already accepted (socket activation): the client must present a
    certificate of the copy CA."""
    sock.settimeout(timeout)
    try:
        return Channel(_context(ssl.Purpose.CLIENT_AUTH, tls).wrap_socket(sock, server_side=True))
    except (ssl.SSLError, OSError) as err:
        raise CopyChannelError("the TLS handshake failed: %s" % err)


def certificate_names(certificate):
    """The DNS names of a certificate as ssl.SSLSocket.getpeercert() returns it."""
    return [value for kind, value in (certificate or {}).get("subjectAltName", ()) if kind == "DNS"]


class Channel:
    """JSON messages and a framed byte stream over one TLS connection."""

    def __init__(self, tls_socket):
        self.sock, self.pending = tls_socket, b""

    def peer_names(self):
        return certificate_names(self.sock.getpeercert())

    def close(self):
        self.sock.close()

    def _recv(self, deadline, what):
        self.sock.settimeout(max(deadline - time.time(), 0.001))
        try:
            data = self.sock.recv(FRAME)
        except (socket.timeout, ssl.SSLError, OSError) as err:
            raise CopyChannelError("%s did not arrive: %s" % (what, err or "timed out"))
        if not data:
            raise CopyChannelError("the connection closed before %s" % what)
        return data

    def _read_exactly(self, size, deadline, what):
        while len(self.pending) < size:
            self.pending += self._recv(deadline, what)
        data, self.pending = self.pending[:size], self.pending[size:]
        return data

    def send_message(self, value):
        self.sock.sendall((json.dumps(value) + "\n").encode())

    def read_message(self, timeout):
        deadline = time.time() + timeout
        while b"\n" not in self.pending:
            self.pending += self._recv(deadline, "a whole message (within %d s)" % timeout)
        line, self.pending = self.pending.split(b"\n", 1)
        try:
            return json.loads(line.decode())
        except ValueError:
            raise CopyChannelError("not a message: %r" % line[:80])

    def send_stream(self, fd):
        """Everything readable from the file descriptor fd (a tool's output), framed; returns the bytes sent."""
        sent = 0
        self.sock.settimeout(None)
        while True:
            data = os.read(fd, FRAME)
            if not data:
                break
            self.sock.sendall(LENGTH.pack(len(data)) + data)
            sent += len(data)
        self.sock.sendall(LENGTH.pack(0))
        return sent

    def receive_stream(self, write, idle_timeout):
        """Hand every frame to write() until the end frame; CopyChannelError when the connection ends or stays
        silent idle_timeout seconds first. Returns the bytes received."""
        received = 0
        while True:
            deadline = time.time() + idle_timeout
            size = LENGTH.unpack(self._read_exactly(LENGTH.size, deadline, "the rest of the stream"))[0]
            if size == 0:
                return received
            if size > FRAME:
                raise CopyChannelError("a frame of %d bytes (at most %d): not this channel's stream" % (size, FRAME))
            write(self._read_exactly(size, deadline, "the rest of the stream"))
            received += size
