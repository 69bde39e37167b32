"""tls_certificate: the certificate_renewal_reason filter (why a certificate on the controller must be
(re)issued, '' when it is current), and the role that asks it first so that a run with a current CA and
current certificates runs no community.crypto module at all.

The filter tests build their certificates with cryptography in tmp_path. The role tests run ansible-playbook on
the controller (-c local) for two inventory hosts, with the CA directory in tmp_path."""
import datetime
import hashlib
import ipaddress
import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml
from ansible.errors import AnsibleFilterError
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from ansible_collections.dbops.clusters.plugins.filter.certificate_renewal import certificate_renewal_reason

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NOW = datetime.datetime.now(datetime.timezone.utc)
SANS = ("DNS:db1", "IP:10.0.0.11", "IP:127.0.0.1")
EKU = ("serverAuth", "clientAuth")


# ------------------------------------------------------------------------------------------- helpers

def _key(size=2048):
    return rsa.generate_private_key(public_exponent=65537, key_size=size)


def _name(common_name):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)] if common_name else [])


def _general_name(text):
    kind, value = text.split(":", 1)
    if kind == "IP":
        return x509.IPAddress(ipaddress.ip_address(value))
    return x509.DNSName(value)


def make_ca(key, common_name="dbops.clusters CA", days=3650, ca=True, key_cert_sign=True):
    """A self-signed CA as the role's x509_certificate step makes it (same extensions, same criticality)."""
    builder = (x509.CertificateBuilder().subject_name(_name(common_name)).issuer_name(_name(common_name))
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(NOW - datetime.timedelta(days=2)).not_valid_after(NOW + datetime.timedelta(days=days))
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False))
    if ca:
        builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
    builder = builder.add_extension(x509.KeyUsage(
        digital_signature=False, content_commitment=False, key_encipherment=False, data_encipherment=False,
        key_agreement=False, key_cert_sign=key_cert_sign, crl_sign=True, encipher_only=False, decipher_only=False),
        critical=True)
    return builder.sign(key, hashes.SHA256())


def make_cert(key, ca_cert, ca_key, common_name="db1", sans=SANS, eku=EKU, days=825, san_critical=False):
    """A server certificate as the role's ownca step makes it: SANs in the given order, EKU, SKI and AKI."""
    builder = (x509.CertificateBuilder().subject_name(_name(common_name)).issuer_name(ca_cert.subject)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(NOW - datetime.timedelta(days=2)).not_valid_after(NOW + datetime.timedelta(days=days))
               .add_extension(x509.SubjectAlternativeName([_general_name(s) for s in sans]), critical=san_critical)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
               .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(
                   ca_cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value), critical=False))
    if eku:
        oids = {"serverAuth": ExtendedKeyUsageOID.SERVER_AUTH, "clientAuth": ExtendedKeyUsageOID.CLIENT_AUTH}
        builder = builder.add_extension(x509.ExtendedKeyUsage([oids[e] for e in eku]), critical=False)
    return builder.sign(ca_key, hashes.SHA256())


def write_key(path, key, mode=0o600):
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                       serialization.NoEncryption()))
    os.chmod(str(path), mode)


def write_cert(path, cert, mode=0o644):
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    os.chmod(str(path), mode)


def read_cert(path):
    return x509.load_pem_x509_certificate(path.read_bytes())


def read_key(path):
    return serialization.load_pem_private_key(path.read_bytes(), password=None)


def public_der(key):
    return key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


@pytest.fixture(scope="module")
def keys():
    """Keys are the slow part: made once for the module's filter tests."""
    return {"ca": _key(), "other_ca": _key(), "db1": _key(), "other": _key()}


@pytest.fixture
def pki(tmp_path, keys):
    """A current CA and db1 certificate in tmp_path; returns the paths and a reason() with the role's arguments."""
    ca_cert = make_ca(keys["ca"])
    files = {"ca": tmp_path / "ca.pem", "ca_key": tmp_path / "ca-key.pem",
             "cert": tmp_path / "db1-cert.pem", "key": tmp_path / "db1-key.pem"}
    write_cert(files["ca"], ca_cert)
    write_key(files["ca_key"], keys["ca"])
    write_cert(files["cert"], make_cert(keys["db1"], ca_cert, keys["ca"]))
    write_key(files["key"], keys["db1"])

    def reason(**overrides):
        arguments = dict(ca_cert_path=str(files["ca"]), ca_key_path=str(files["ca_key"]), common_name="db1",
                         subject_alt_names=SANS, extended_key_usage=EKU, key_size=2048)
        arguments.update(overrides)
        return certificate_renewal_reason(str(files["cert"]), str(files["key"]), **arguments)

    files["reason"] = reason
    files["ca_cert"] = ca_cert
    return files


# ----------------------------------------------------------------------------------------- the filter

def test_a_current_certificate_has_no_reason(pki):
    assert pki["reason"]() == ""


def test_a_current_ca_has_no_reason(pki):
    assert certificate_renewal_reason(str(pki["ca"]), str(pki["ca_key"]), common_name="dbops.clusters CA",
                                      is_ca=True, key_size=2048) == ""


def test_a_missing_certificate_or_key_is_a_reason(pki):
    pki["cert"].unlink()
    assert pki["reason"]() == "the certificate %s does not exist" % pki["cert"]


def test_a_missing_key_is_a_reason(pki):
    pki["key"].unlink()
    assert pki["reason"]() == "the key %s does not exist" % pki["key"]


@pytest.mark.parametrize("which, words", [("cert", "is not a readable PEM certificate"),
                                          ("key", "is not a readable unencrypted PEM private key"),
                                          ("ca", "is not a readable PEM certificate"),
                                          ("ca_key", "is not a readable unencrypted PEM private key")])
def test_a_garbled_file_is_a_reason_never_an_error(pki, which, words):
    pki[which].write_text("-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n")
    reason = pki["reason"]()
    assert words in reason and str(pki[which]) in reason


def test_an_empty_file_is_a_reason(pki):
    pki["cert"].write_bytes(b"")
    assert "is not a readable PEM certificate" in pki["reason"]()


def test_a_key_that_does_not_match_the_certificate_is_a_reason(pki, keys):
    write_key(pki["key"], keys["other"])
    assert pki["reason"]() == "the key %s does not match the public key of %s" % (pki["key"], pki["cert"])


def test_a_key_of_another_size_is_a_reason(pki):
    assert pki["reason"](key_size=3072) == "the key %s is not an RSA key of 3072 bits" % pki["key"]


def test_a_certificate_from_another_ca_is_a_reason(pki, keys):
    # Another CA with the very same name: only the signature tells them apart.
    other_ca = make_ca(keys["other_ca"])
    write_cert(pki["cert"], make_cert(keys["db1"], other_ca, keys["other_ca"]))
    assert pki["reason"]() == "%s is not signed by the CA %s" % (pki["cert"], pki["ca"])


def test_a_certificate_from_a_ca_of_another_name_is_a_reason(pki, keys):
    other_ca = make_ca(keys["ca"], common_name="someone else's CA")
    write_cert(pki["cert"], make_cert(keys["db1"], other_ca, keys["ca"]))
    assert pki["reason"]() == "%s is not signed by the CA %s" % (pki["cert"], pki["ca"])


def test_a_ca_key_that_does_not_match_the_ca_certificate_is_a_reason(pki, keys):
    write_key(pki["ca_key"], keys["other_ca"])
    assert pki["reason"]() == "the CA key %s does not match the CA certificate %s" % (pki["ca_key"], pki["ca"])


def test_a_missing_ca_certificate_is_a_reason(pki):
    pki["ca"].unlink()
    assert pki["reason"]() == "the CA certificate %s does not exist" % pki["ca"]


def test_another_common_name_is_a_reason(pki):
    assert pki["reason"](common_name="db9") == "%s has the common name db1, not db9" % pki["cert"]


def test_an_empty_common_name_wants_a_certificate_without_one(pki, keys):
    """etcd's gateway refuses a client certificate with a common name: the etcd role asks for none."""
    assert pki["reason"](common_name="") == "%s has the common name db1, not (none)" % pki["cert"]
    write_cert(pki["cert"], make_cert(keys["db1"], pki["ca_cert"], keys["ca"], common_name=""))
    assert pki["reason"](common_name="") == \
        "%s has an empty subject and a subject alternative name extension that is not critical" % pki["cert"]
    write_cert(pki["cert"], make_cert(keys["db1"], pki["ca_cert"], keys["ca"], common_name="", san_critical=True))
    assert pki["reason"](common_name="") == ""
    assert pki["reason"](common_name="db1") == "%s has the common name (none), not db1" % pki["cert"]


def test_a_new_subject_alternative_name_is_a_reason(pki):
    assert pki["reason"](subject_alt_names=list(SANS) + ["IP:10.0.0.12"]) == \
        "the subject alternative names of %s lack IP:10.0.0.12" % pki["cert"]


def test_a_dropped_subject_alternative_name_is_a_reason(pki):
    assert pki["reason"](subject_alt_names=["DNS:db1", "IP:10.0.0.11", "DNS:db1.lab"]) == \
        "the subject alternative names of %s lack DNS:db1.lab and still have IP:127.0.0.1" % pki["cert"]


def test_subject_alternative_names_compare_as_a_normalised_set(pki, keys):
    """Order, the case of a DNS name and the spelling of an IP address are no reason."""
    assert pki["reason"](subject_alt_names=["IP:127.0.0.1", "dns:DB1", "IP:10.0.0.11", "DNS:db1"]) == ""
    write_cert(pki["cert"], make_cert(keys["db1"], pki["ca_cert"], keys["ca"], sans=["DNS:db1", "IP:::1"]))
    assert pki["reason"](subject_alt_names=["IP:0:0:0:0:0:0:0:1", "DNS:db1"]) == ""


def test_subject_alternative_names_the_filter_cannot_compare_are_an_error(pki):
    with pytest.raises(AnsibleFilterError, match="not an IP address"):
        pki["reason"](subject_alt_names=["IP:db1"])
    with pytest.raises(AnsibleFilterError, match="cannot compare"):
        pki["reason"](subject_alt_names=["dirName:CN=db1"])
    with pytest.raises(AnsibleFilterError, match="must be a list"):
        pki["reason"](subject_alt_names="DNS:db1")


def test_other_extended_key_usages_are_a_reason(pki):
    assert pki["reason"](extended_key_usage=["serverAuth"]) == \
        "%s has the extended key usages clientAuth, serverAuth, not serverAuth" % pki["cert"]
    assert pki["reason"](extended_key_usage=[]) == \
        "%s has the extended key usages clientAuth, serverAuth, not none" % pki["cert"]
    # by OID, in another order: the same usages
    assert pki["reason"](extended_key_usage=["1.3.6.1.5.5.7.3.2", "serverAuth"]) == ""


def test_a_certificate_without_extended_key_usage_matches_an_empty_list(pki, keys):
    write_cert(pki["cert"], make_cert(keys["db1"], pki["ca_cert"], keys["ca"], eku=[]))
    assert pki["reason"](extended_key_usage=[]) == ""
    assert "not clientAuth, serverAuth" in pki["reason"]()


def test_a_certificate_near_its_end_is_a_reason_naming_the_date(pki, keys):
    write_cert(pki["cert"], make_cert(keys["db1"], pki["ca_cert"], keys["ca"], days=10))
    end = read_cert(pki["cert"]).not_valid_after_utc.strftime("%Y-%m-%d %H:%M UTC")
    assert pki["reason"]() == "%s expires on %s, fewer than 30 days from now" % (pki["cert"], end)
    assert pki["reason"](min_days_left=5) == ""


def test_an_expired_certificate_is_a_reason(pki, keys):
    write_cert(pki["cert"], make_cert(keys["db1"], pki["ca_cert"], keys["ca"], days=-1))
    assert re.match(r"^%s expired on \d{4}-\d\d-\d\d " % re.escape(str(pki["cert"])), pki["reason"](min_days_left=0))


def test_a_ca_without_ca_true_is_a_reason(pki, keys):
    write_cert(pki["ca"], make_ca(keys["ca"], ca=False))
    assert certificate_renewal_reason(str(pki["ca"]), str(pki["ca_key"]), is_ca=True) == \
        "%s is not a CA certificate (no basicConstraints CA:TRUE)" % pki["ca"]
    write_cert(pki["ca"], make_ca(keys["ca"], key_cert_sign=False))
    assert "may not sign certificates" in certificate_renewal_reason(str(pki["ca"]), str(pki["ca_key"]), is_ca=True)


def test_a_server_certificate_is_not_a_ca(pki):
    assert "is not a CA certificate" in certificate_renewal_reason(str(pki["cert"]), str(pki["key"]), is_ca=True)


def test_a_mode_is_a_reason_only_once_the_content_is_current(pki, tmp_path):
    modes = {str(tmp_path): "0700", str(pki["key"]): "0600", str(pki["cert"]): "0644",
             str(tmp_path / "absent.pem"): "0600"}
    os.chmod(str(tmp_path), 0o700)
    assert pki["reason"](file_modes=modes) == ""
    os.chmod(str(pki["key"]), 0o644)
    assert pki["reason"](file_modes=modes) == "mode of %s is 0644, not 0600" % pki["key"]
    # a content reason comes first: the certificate is reissued, not only its mode fixed
    assert pki["reason"](file_modes=modes, common_name="db9").startswith(str(pki["cert"]))


# ------------------------------------------------------------------------------------------ the role

# The tasks that run community.crypto modules: a run with everything current must not show any of them.
ROLE_TASKS = os.path.join(REPO, "roles", "tls_certificate", "tasks")


def _included_task_names():
    names = []
    for included in ("ca.yml", "issue.yml"):
        with open(os.path.join(ROLE_TASKS, included), encoding="utf-8") as handle:
            for block in yaml.safe_load(handle):
                names += [task["name"] for task in block.get("block", [block])]
    return names


def run_role(tmp_path, ca_dir, sans=None, check=False, extra_vars=None, expect_rc=0, installed=None):
    """The role for db1 and db2 (both local), as the server roles include it; returns the completed process.

    installed: {host: SHA-1 of the CA certificate the host trusts now}, as a server role publishes it."""
    sans = dict({"db1": ["DNS:db1", "IP:10.0.0.11", "IP:127.0.0.1"],
                 "db2": ["DNS:db2", "IP:10.0.0.12", "IP:127.0.0.1"]}, **(sans or {}))
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(yaml.safe_dump({"all": {"hosts": {
        host: {"ansible_connection": "local", "ansible_python_interpreter": sys.executable, "sans": names,
               "installed_ca": (installed or {}).get(host, "")}
        for host, names in sans.items()}}}))
    play = tmp_path / "play.yml"
    play.write_text(yaml.safe_dump([{"hosts": "all", "gather_facts": False, "tasks": [
        {"name": "Issue the certificates", "ansible.builtin.include_role": {"name": "dbops.clusters.tls_certificate"},
         "vars": {"tls_certificate_ca_dir": str(ca_dir), "tls_certificate_subject_alt_names": "{{ sans }}",
                  "tls_certificate_installed_ca_checksum": "{{ installed_ca }}",
                  "tls_certificate_extended_key_usage": ["serverAuth", "clientAuth"]}}]}]))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".collections"),
               ANSIBLE_CALLBACK_RESULT_FORMAT="json")  # the yaml format folds a long reason over lines
    command = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory), str(play)]
    if check:
        command.append("--check")
    for name, value in (extra_vars or {}).items():
        command += ["-e", "%s=%s" % (name, value)]
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == expect_rc, result.stdout[-3000:] + result.stderr[-2000:]
    return result


def changed(result):
    recap = re.findall(r"^(db\d)\s+: ok=\d+\s+changed=(\d+)", result.stdout, re.M)
    return dict((host, int(count)) for host, count in recap)


def contents(ca_dir):
    return dict((name, (ca_dir / name).read_bytes()) for name in sorted(os.listdir(str(ca_dir))))


def ran_crypto_tasks(result):
    return [name for name in _included_task_names()
            if "TASK [dbops.clusters.tls_certificate : %s]" % name in result.stdout]


@pytest.fixture(scope="module")
def issued(tmp_path_factory):
    """One first run on an empty controller; each test works on its own copy of the files."""
    work = tmp_path_factory.mktemp("first")
    result = run_role(work, work / "ca")
    return work / "ca", result


@pytest.fixture
def ca_dir(issued, tmp_path):
    copy = tmp_path / "ca"
    shutil.copytree(str(issued[0]), str(copy))  # copies the modes too
    return copy


def test_a_first_run_makes_the_ca_and_both_certificates_as_before(issued):
    ca_dir, result = issued
    assert changed(result) == {"db1": 5, "db2": 2}, result.stdout[-3000:]
    assert "the certificate %s/ca.pem does not exist" % ca_dir in result.stdout
    assert result.stdout.count("the CA was (re)created") == 2
    modes = dict((name, os.stat(str(ca_dir / name)).st_mode & 0o7777) for name in os.listdir(str(ca_dir)))
    assert os.stat(str(ca_dir)).st_mode & 0o7777 == 0o700
    assert modes == {"ca.pem": 0o644, "ca-key.pem": 0o600, "db1-cert.pem": 0o644, "db1-key.pem": 0o600,
                     "db2-cert.pem": 0o644, "db2-key.pem": 0o600}
    ca = read_cert(ca_dir / "ca.pem")
    assert read_key(ca_dir / "ca-key.pem").key_size == 3072
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert 3649 <= (ca.not_valid_after_utc - ca.not_valid_before_utc).days <= 3650
    for host, address in (("db1", "10.0.0.11"), ("db2", "10.0.0.12")):
        cert = read_cert(ca_dir / ("%s-cert.pem" % host))
        assert read_key(ca_dir / ("%s-key.pem" % host)).key_size == 2048
        assert 824 <= (cert.not_valid_after_utc - cert.not_valid_before_utc).days <= 825
        cert.verify_directly_issued_by(ca)
        assert certificate_renewal_reason(
            str(ca_dir / ("%s-cert.pem" % host)), str(ca_dir / ("%s-key.pem" % host)),
            ca_cert_path=str(ca_dir / "ca.pem"), ca_key_path=str(ca_dir / "ca-key.pem"), common_name=host,
            subject_alt_names=["DNS:" + host, "IP:" + address, "IP:127.0.0.1"],
            extended_key_usage=["serverAuth", "clientAuth"], key_size=2048) == ""


def test_a_second_run_runs_no_certificate_module_and_changes_nothing(ca_dir, tmp_path):
    before = contents(ca_dir)
    result = run_role(tmp_path, ca_dir)
    assert changed(result) == {"db1": 0, "db2": 0}, result.stdout[-3000:]
    assert ran_crypto_tasks(result) == [], result.stdout[-3000:]
    assert "ca.yml" not in result.stdout and "issue.yml" not in result.stdout
    assert contents(ca_dir) == before


def test_a_changed_subject_alternative_name_reissues_only_that_hosts_certificate(ca_dir, tmp_path):
    before = contents(ca_dir)
    result = run_role(tmp_path, ca_dir, sans={"db2": ["DNS:db2", "IP:10.0.0.12", "IP:10.0.0.99", "IP:127.0.0.1"]})
    assert changed(result) == {"db1": 0, "db2": 1}, result.stdout[-3000:]
    assert "the subject alternative names of %s/db2-cert.pem lack IP:10.0.0.99" % ca_dir in result.stdout
    after = contents(ca_dir)
    assert [name for name in before if before[name] != after[name]] == ["db2-cert.pem"]
    cert = read_cert(ca_dir / "db2-cert.pem")
    assert "10.0.0.99" in [str(ip) for ip in
                           cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
                           .get_values_for_type(x509.IPAddress)]
    assert public_der(cert.public_key()) == public_der(read_key(ca_dir / "db2-key.pem").public_key())  # the old key
    cert.verify_directly_issued_by(read_cert(ca_dir / "ca.pem"))


def test_a_server_certificate_near_its_end_is_reissued_once(ca_dir, tmp_path):
    """x509_certificate alone ignores the dates: without force the same reason would come back every run."""
    ca, ca_key, key = read_cert(ca_dir / "ca.pem"), read_key(ca_dir / "ca-key.pem"), read_key(ca_dir / "db1-key.pem")
    write_cert(ca_dir / "db1-cert.pem", make_cert(key, ca, ca_key, days=10))
    first = run_role(tmp_path, ca_dir)
    assert changed(first) == {"db1": 1, "db2": 0}, first.stdout[-3000:]
    assert "%s/db1-cert.pem expires on" % ca_dir in first.stdout
    assert (read_cert(ca_dir / "db1-cert.pem").not_valid_after_utc - NOW).days >= 824
    again = run_role(tmp_path, ca_dir)
    assert changed(again) == {"db1": 0, "db2": 0} and ran_crypto_tasks(again) == [], again.stdout[-3000:]


def test_a_ca_near_its_end_is_renewed_with_its_key_and_every_certificate_reissued(ca_dir, tmp_path):
    before = contents(ca_dir)
    ca_key = read_key(ca_dir / "ca-key.pem")
    write_cert(ca_dir / "ca.pem", make_ca(ca_key, days=10))
    first = run_role(tmp_path, ca_dir)
    assert changed(first) == {"db1": 2, "db2": 1}, first.stdout[-3000:]
    assert "%s/ca.pem expires on" % ca_dir in first.stdout
    after = contents(ca_dir)
    assert [name for name in before if before[name] == after[name]] == ["ca-key.pem", "db1-key.pem", "db2-key.pem"]
    ca = read_cert(ca_dir / "ca.pem")
    assert (ca.not_valid_after_utc - NOW).days >= 3649
    for host in ("db1", "db2"):
        read_cert(ca_dir / ("%s-cert.pem" % host)).verify_directly_issued_by(ca)
    again = run_role(tmp_path, ca_dir)
    assert changed(again) == {"db1": 0, "db2": 0} and ran_crypto_tasks(again) == [], again.stdout[-3000:]


def test_a_changed_mode_is_put_back_without_reissuing(ca_dir, tmp_path):
    before = contents(ca_dir)
    os.chmod(str(ca_dir / "ca-key.pem"), 0o644)
    os.chmod(str(ca_dir), 0o755)
    result = run_role(tmp_path, ca_dir)
    assert "mode of %s is 0755, not 0700" % ca_dir in result.stdout
    assert os.stat(str(ca_dir / "ca-key.pem")).st_mode & 0o7777 == 0o600
    assert os.stat(str(ca_dir)).st_mode & 0o7777 == 0o700
    assert contents(ca_dir) == before
    assert changed(result) == {"db1": 2, "db2": 0}, result.stdout[-3000:]


def test_check_mode_on_a_controller_without_a_ca_predicts_and_writes_nothing(tmp_path):
    ca_dir = tmp_path / "ca"
    ca_dir.mkdir(mode=0o700)
    result = run_role(tmp_path, ca_dir, check=True)
    assert os.listdir(str(ca_dir)) == []
    # the keys' steps predict the change; the signing steps need the keys and are skipped
    assert changed(result) == {"db1": 2, "db2": 1}, result.stdout[-3000:]
    assert "Create the CA key] *" in result.stdout and "Create the server key] *" in result.stdout


def test_check_mode_on_a_controller_without_the_ca_directory_predicts_and_creates_nothing(tmp_path):
    ca_dir = tmp_path / "ca"
    result = run_role(tmp_path, ca_dir, check=True)
    assert not ca_dir.exists()
    # the directory's step predicts the change; the keys' steps cannot run without it
    assert changed(result) == {"db1": 1, "db2": 0}, result.stdout[-3000:]


def test_a_renewal_margin_longer_than_a_certificate_lives_is_refused_naming_the_variable(tmp_path):
    ca_dir = tmp_path / "ca"
    result = run_role(tmp_path, ca_dir, extra_vars={"tls_certificate_min_days_left": 900}, expect_rc=2)
    assert "tls_certificate_min_days_left 900 must be from 0 to 824" in result.stdout
    assert not ca_dir.exists()


def test_a_lost_ca_directory_is_refused_while_hosts_trust_the_old_ca(ca_dir, tmp_path):
    """A missing CA directory once created a new CA silently and reissued every certificate of a running cluster."""
    with open(os.path.join(str(ca_dir), "ca.pem"), "rb") as handle:
        trusted = hashlib.sha1(handle.read()).hexdigest()
    shutil.rmtree(str(ca_dir))
    result = run_role(tmp_path, ca_dir, installed={"db1": trusted, "db2": trusted}, expect_rc=2)
    assert "already trust a CA that is not there" in result.stdout, result.stdout[-3000:]
    assert "tls_certificate_new_ca" in result.stdout
    assert not os.path.exists(str(ca_dir)), "nothing may be created before the refusal"


def test_a_new_ca_is_made_when_asked_for(ca_dir, tmp_path):
    with open(os.path.join(str(ca_dir), "ca.pem"), "rb") as handle:
        trusted = hashlib.sha1(handle.read()).hexdigest()
    shutil.rmtree(str(ca_dir))
    run_role(tmp_path, ca_dir, installed={"db1": trusted, "db2": trusted},
             extra_vars={"tls_certificate_new_ca": "true"})
    assert os.path.exists(os.path.join(str(ca_dir), "ca.pem"))


def test_renewing_the_ca_the_hosts_trust_is_not_refused(ca_dir, tmp_path):
    """The refusal is for a CA the hosts do not know: renewing theirs (same key, near its end) goes on."""
    ca_key = read_key(ca_dir / "ca-key.pem")
    write_cert(ca_dir / "ca.pem", make_ca(ca_key, days=10))
    with open(os.path.join(str(ca_dir), "ca.pem"), "rb") as handle:
        trusted = hashlib.sha1(handle.read()).hexdigest()
    result = run_role(tmp_path, ca_dir, installed={"db1": trusted, "db2": trusted})
    assert "%s/ca.pem expires on" % ca_dir in result.stdout
    assert changed(result) == {"db1": 2, "db2": 1}, result.stdout[-3000:]
