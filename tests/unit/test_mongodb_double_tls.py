"""The mongod double under net.tls (mode, certificateKeyFile, CAFile, allowConnectionsWithoutCertificates),
driven by pymongo, and the modules' TLS login options (module_utils/mongodb_common.py)."""

from __future__ import annotations

import datetime
import ipaddress
import os
import subprocess
import sys

import pytest

pymongo = pytest.importorskip("pymongo")
x509 = pytest.importorskip("cryptography.x509")
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import rsa  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "doubles", "mongodb"))
from harness import FAST_SETTINGS, free_port, wait_until  # noqa: E402  pylint: disable=wrong-import-position

DOUBLE = os.path.join(REPO, "tests", "doubles", "mongodb", "mongod_double.py")


def issue(directory, name, ca=None, server=True):
    """A key and certificate (signed by `ca`, or a self-signed CA when ca is None); returns the paths."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder().subject_name(subject).public_key(key.public_key())
               .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
               .not_valid_after(now + datetime.timedelta(days=2)))
    if ca is None:
        builder = builder.issuer_name(subject).add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        signer = key
    else:
        builder = builder.issuer_name(ca["cert"].subject)
        signer = ca["key"]
        if server:
            builder = builder.add_extension(x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
    cert = builder.sign(signer, hashes.SHA256())
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption())
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    paths = {"cert": cert, "key": key, "cert_file": os.path.join(directory, name + ".pem"),
             "combined": os.path.join(directory, name + "-combined.pem")}
    with open(paths["cert_file"], "wb") as handle:
        handle.write(cert_pem)
    with open(paths["combined"], "wb") as handle:
        handle.write(cert_pem + key_pem)
    os.chmod(paths["combined"], 0o600)
    return paths


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    directory = str(tmp_path_factory.mktemp("pki"))
    ca = issue(directory, "ca")
    other_ca = issue(directory, "other-ca")
    return {"dir": directory, "ca": ca, "server": issue(directory, "server", ca), "other_ca": other_ca,
            "client": issue(directory, "client", ca, server=False)}


class Double:
    def __init__(self, root, tls_lines, port=None):
        self.port = port or free_port()
        self.dbpath = os.path.join(root, "db%d" % self.port)
        os.makedirs(self.dbpath)
        conf = os.path.join(root, "mongod-%d.conf" % self.port)
        with open(conf, "w") as handle:
            handle.write("net:\n  port: %d\n  bindIp: 127.0.0.1\n%sstorage:\n  dbPath: %s\nreplication:\n"
                         "  replSetName: tls0\n" % (self.port, tls_lines, self.dbpath))
        self.process = subprocess.Popen([sys.executable, DOUBLE, "--config", conf], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE)
        wait_until(self.listening, timeout=10, what="the double to listen")

    def listening(self):
        import socket  # pylint: disable=import-outside-toplevel
        assert self.process.poll() is None, self.process.stderr.read().decode()
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
            return True
        except OSError:
            return False

    def hello(self, **options):
        client = pymongo.MongoClient("127.0.0.1", self.port, directConnection=True, serverSelectionTimeoutMS=1500,
                                     connectTimeoutMS=1500, **options)
        try:
            return client.admin.command("hello")
        finally:
            client.close()

    def stop(self):
        self.process.kill()
        self.process.wait()


def tls_conf(mode, pki, ca=True, without_certificates=True):
    lines = "  tls:\n    mode: %s\n    certificateKeyFile: %s\n" % (mode, pki["server"]["combined"])
    if ca:
        lines += "    CAFile: %s\n" % pki["ca"]["cert_file"]
    if without_certificates:
        lines += "    allowConnectionsWithoutCertificates: true\n"
    return lines


def refused(double, **options):
    with pytest.raises(pymongo.errors.PyMongoError):
        double.hello(**options)
    return True


def test_require_tls_refuses_plaintext_and_clients_without_the_ca(tmp_path, pki):
    double = Double(str(tmp_path), tls_conf("requireTLS", pki))
    try:
        assert double.hello(tls=True, tlsCAFile=pki["ca"]["cert_file"])["ok"] == 1
        assert refused(double)                                             # plaintext
        assert refused(double, tls=True)                                   # the system CAs do not know ours
        assert refused(double, tls=True, tlsCAFile=pki["other_ca"]["cert_file"])
        assert double.hello(tls=True, tlsAllowInvalidCertificates=True)["ok"] == 1  # encrypted, unverified
    finally:
        double.stop()


def test_prefer_and_allow_tls_accept_both(tmp_path, pki):
    for mode in ("preferTLS", "allowTLS"):
        double = Double(str(tmp_path), tls_conf(mode, pki))
        try:
            assert double.hello()["ok"] == 1
            assert double.hello(tls=True, tlsCAFile=pki["ca"]["cert_file"])["ok"] == 1
        finally:
            double.stop()


def test_disabled_tls_speaks_plaintext_only(tmp_path, pki):
    double = Double(str(tmp_path), "")
    try:
        assert double.hello()["ok"] == 1
        assert refused(double, tls=True, tlsCAFile=pki["ca"]["cert_file"])
    finally:
        double.stop()


def test_ca_file_requires_a_client_certificate_unless_allowed(tmp_path, pki):
    double = Double(str(tmp_path), tls_conf("requireTLS", pki, without_certificates=False))
    try:
        assert refused(double, tls=True, tlsCAFile=pki["ca"]["cert_file"])
        assert double.hello(tls=True, tlsCAFile=pki["ca"]["cert_file"],
                            tlsCertificateKeyFile=pki["client"]["combined"])["ok"] == 1
    finally:
        double.stop()


def test_members_talk_tls_to_each_other_under_require_tls(tmp_path, pki):
    """Two members with requireTLS form a set: heartbeats and oplog pulls go over TLS (plaintext is refused)."""
    ports = [free_port(), free_port()]
    doubles = [Double(str(tmp_path), tls_conf("requireTLS", pki), port=port) for port in ports]
    try:
        options = dict(tls=True, tlsCAFile=pki["ca"]["cert_file"])
        first = pymongo.MongoClient("127.0.0.1", ports[0], directConnection=True, **options)
        first.admin.command("replSetInitiate", {"_id": "tls0", "version": 1, "settings": FAST_SETTINGS, "members": [
            {"_id": i, "host": "127.0.0.1:%d" % port} for i, port in enumerate(ports)]})

        def states():
            status = first.admin.command("replSetGetStatus")
            return sorted(m["stateStr"] for m in status["members"]) == ["PRIMARY", "SECONDARY"]
        wait_until(states, timeout=30, what="a primary and a secondary over TLS")
    finally:
        for double in doubles:
            double.stop()


def test_module_login_options_carry_tls_from_arguments_and_the_credentials_file(tmp_path):
    from ansible_collections.dbops.clusters.plugins.module_utils.mongodb_common import client_kwargs
    assert "tls" not in client_kwargs({"login_host": "h", "login_port": 1})
    direct = client_kwargs({"login_host": "h", "login_port": 1, "tls": True, "tls_ca_file": "/ca.pem",
                            "tls_certificate_key_file": "/me.pem"})
    assert direct["tls"] is True and direct["tlsCAFile"] == "/ca.pem" and direct["tlsCertificateKeyFile"] == "/me.pem"
    credentials = tmp_path / "creds.yml"
    credentials.write_text("user: admin\npassword: 'pw'\ntls: true\ntls_ca_file: /etc/mongodb/tls/ca.pem\n")
    os.chmod(str(credentials), 0o600)
    from_file = client_kwargs({"login_host": "h", "login_port": 1, "login_credentials_file": str(credentials)})
    assert from_file["tls"] is True and from_file["tlsCAFile"] == "/etc/mongodb/tls/ca.pem"
    assert from_file["username"] == "admin" and from_file["password"] == "pw"


def test_the_localhost_exception_keeps_the_credentials_files_tls(tmp_path):
    """Before the first user exists the modules connect without a login, but still over TLS when the credentials
    file says so: a member under requireTLS refuses a plaintext client (seen in molecule: the set was never
    initiated because the anonymous connection dropped the file's TLS settings)."""
    from ansible_collections.dbops.clusters.plugins.module_utils.mongodb_common import client_kwargs, without_login
    credentials = tmp_path / "creds.yml"
    credentials.write_text("user: admin\npassword: 'pw'\ntls: true\ntls_ca_file: /etc/mongodb/tls/ca.pem\n"
                           "tls_certificate_key_file: /etc/mongodb/tls/server.pem\n")
    os.chmod(str(credentials), 0o600)
    anonymous = client_kwargs(without_login({"login_host": "localhost", "login_port": 1,
                                             "login_credentials_file": str(credentials)}))
    assert "username" not in anonymous and "password" not in anonymous
    assert (anonymous["tls"], anonymous["tlsCAFile"], anonymous["tlsCertificateKeyFile"]) == (
        True, "/etc/mongodb/tls/ca.pem", "/etc/mongodb/tls/server.pem")
    plain = tmp_path / "plain.yml"
    plain.write_text("user: admin\npassword: pw\n")
    os.chmod(str(plain), 0o600)
    assert "tls" not in client_kwargs(without_login({"login_host": "localhost", "login_credentials_file": str(plain)}))
