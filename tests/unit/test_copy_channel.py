"""module_utils/copy_channel.py over real TLS on a socket pair: both ends verified by name, messages and the framed
stream, a stream cut short told apart from a whole one."""
import os
import socket
import threading

import pytest

from ansible_collections.dbops.clusters.plugins.module_utils import copy_channel

from copy_certs import copy_tls


@pytest.fixture(name="tls")
def fixture_tls(tmp_path):
    return copy_tls(tmp_path / "tls", ["backup", "db2"], rogue=["db9"])


def pair(tls, client="db2", server_name="backup"):
    """(member's channel or its error, backup host's channel or its error) over one connected socket pair."""
    member_end, host_end = socket.socketpair()
    result = {}

    def serve():
        try:
            result["host"] = copy_channel.accept(host_end, tls["backup"], timeout=10)
        except copy_channel.CopyChannelError as err:
            result["host"] = err
    server = threading.Thread(target=serve)
    server.start()
    ssl_context = copy_channel._context(copy_channel.ssl.Purpose.SERVER_AUTH, tls[client])  # pylint: disable=protected-access
    try:
        member = copy_channel.Channel(ssl_context.wrap_socket(member_end, server_hostname=server_name))
    except (copy_channel.ssl.SSLError, OSError) as err:
        member = err
        member_end.close()
    server.join(10)
    return member, result["host"]


def test_messages_and_a_whole_stream_arrive_and_each_end_knows_the_others_name(tls):
    member, host = pair(tls)
    assert member.peer_names() == ["backup"] and host.peer_names() == ["db2"]
    payload = os.urandom(3 * copy_channel.FRAME + 17)
    read_end, write_end = os.pipe()

    def produce():
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(payload)
    producer = threading.Thread(target=produce)
    producer.start()
    member.send_message({"op": "offer", "member": "db2"})
    sender = threading.Thread(target=lambda: (member.send_stream(read_end), member.send_message({"exit": 0})))
    sender.start()
    assert host.read_message(5) == {"op": "offer", "member": "db2"}
    received = []
    assert host.receive_stream(received.append, 10) == len(payload)
    assert b"".join(received) == payload
    assert host.read_message(5) == {"exit": 0}      # messages still flow after the stream's end frame
    host.send_message({"ok": True})
    sender.join(10)
    producer.join(10)
    assert member.read_message(5) == {"ok": True}
    os.close(read_end)


def test_a_stream_the_connection_cut_short_is_an_error_not_an_end(tls):
    member, host = pair(tls)
    member.sock.sendall(copy_channel.LENGTH.pack(100) + b"x" * 40)
    member.close()
    with pytest.raises(copy_channel.CopyChannelError, match="closed before the rest of the stream"):
        host.receive_stream(lambda data: None, 5)


def test_a_silent_sender_times_out(tls):
    member, host = pair(tls)
    with pytest.raises(copy_channel.CopyChannelError, match="a whole message"):
        host.read_message(0.5)
    member.close()


def test_a_member_refuses_a_receiver_that_is_not_the_backup_host_it_was_told_of(tls):
    member, host = pair(tls, server_name="backup2")
    assert isinstance(member, copy_channel.ssl.SSLCertVerificationError), member
    assert "backup2" in str(member)
    assert isinstance(host, copy_channel.CopyChannelError)


def test_the_backup_host_refuses_a_certificate_of_another_ca(tls):
    member, host = pair(tls, client="db9")
    assert isinstance(host, copy_channel.CopyChannelError) and "certificate" in str(host).lower(), host


def test_connect_names_the_receiver_it_could_not_verify(tls):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    server = threading.Thread(target=_accept_quietly, args=(listener, tls))
    server.start()
    with pytest.raises(copy_channel.CopyChannelError, match=r"TLS with mbk9 \(127\.0\.0\.1:\d+\) failed"):
        copy_channel.connect("127.0.0.1", listener.getsockname()[1], "mbk9", tls["db2"], timeout=10)
    server.join(10)
    listener.close()


def _accept_quietly(listener, tls):
    try:
        copy_channel.accept(listener.accept()[0], tls["backup"], timeout=10)
    except copy_channel.CopyChannelError:
        pass


def test_certificate_names_are_the_dns_names_only():
    assert copy_channel.certificate_names(
        {"subjectAltName": (("DNS", "db2"), ("IP Address", "10.0.0.2"), ("DNS", "db2.lab"))}) == ["db2", "db2.lab"]
    assert copy_channel.certificate_names(None) == []
