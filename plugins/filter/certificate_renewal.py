# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: certificate_renewal_reason
short_description: Why a certificate on the controller must be (re)issued, or nothing when it is current
version_added: 0.1.0
description:
  - >-
    Reads a PEM certificate and its PEM private key on the controller (the filter runs in the controller's
    process, so the paths are controller paths) and returns one sentence saying why the certificate must be
    (re)issued, or an empty string when it is current. The C(tls_certificate) role asks this first and runs
    its community.crypto tasks only when there is a reason, since each of them is a module forked on the
    controller (seconds per run) while this check takes milliseconds.
  - >-
    Reasons, the first that applies: the certificate or the key does not exist or cannot be read as PEM;
    the key is not an RSA key of I(key_size) bits; the key does not match the certificate's public key;
    for a server certificate the CA certificate or key is missing or unreadable, the CA key does not match
    the CA certificate, or the certificate is not signed by the CA (issuer and signature); for a CA, it is
    not a self-signed certificate with C(CA:TRUE) and C(keyCertSign); the common name, the subject
    alternative names (compared as a set, C(DNS) names in lower case, C(IP) addresses normalised) or the
    extended key usages differ; it has expired or has fewer than I(min_days_left) days left; and last, with
    the content current, a file of I(file_modes) with another mode.
  - Never fails on a missing, unreadable or garbled file (that is a reason); only an input it cannot compare
    (a subject alternative name of another type, an IP address that does not parse) is an error.
positional: _input, key_path
options:
  _input:
    description: Path of the PEM certificate.
    type: path
    required: true
  key_path:
    description: Path of the certificate's PEM private key (unencrypted).
    type: path
    required: true
  ca_cert_path:
    description: For a certificate signed by a CA, the CA's PEM certificate; the certificate must be signed by it.
    type: path
  ca_key_path:
    description: The CA's PEM private key; it must match I(ca_cert_path).
    type: path
  common_name:
    description: The expected common name; not compared when omitted.
    type: str
  subject_alt_names:
    description:
      - The expected subject alternative names, as given to community.crypto.openssl_csr, for example
        C(DNS:db1) and C(IP:10.0.0.11) (also C(email:), C(URI:) and C(RID:)); not compared when omitted.
    type: list
    elements: str
  extended_key_usage:
    description:
      - The expected extended key usages, by name (C(serverAuth), C(clientAuth), ...) or dotted OID; an empty
        list expects none; not compared when omitted.
    type: list
    elements: str
  is_ca:
    description: The certificate is a self-signed CA.
    type: bool
    default: false
  key_size:
    description: The key must be an RSA key of this many bits; not checked when omitted.
    type: int
  min_days_left:
    description: A certificate with fewer days left before it expires is reissued.
    type: int
    default: 30
  file_modes:
    description:
      - Paths and the mode each must have (C('0600')), checked only when the content is current; a missing
        path is skipped. The reason then starts with C(mode of), which tells the role to fix the mode only.
    type: dict
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Why this server's certificate must be issued (empty when it is current)
  ansible.builtin.debug:
    msg: >-
      {{ '/srv/ca/db1-cert.pem' | dbops.clusters.certificate_renewal_reason('/srv/ca/db1-key.pem',
         ca_cert_path='/srv/ca/ca.pem', ca_key_path='/srv/ca/ca-key.pem', common_name='db1',
         subject_alt_names=['DNS:db1', 'IP:10.0.0.11'], extended_key_usage=['serverAuth'], key_size=2048) }}
"""

RETURN = r"""
_value:
  description:
    - One sentence, for example C(the subject alternative names of /srv/ca/db1-cert.pem lack IP:10.0.0.12), or
      an empty string when the certificate is current.
    - A reason that starts with C(mode of) means only a file's mode differs (the certificate is current).
  type: str
"""

import datetime
import ipaddress
import os

from ansible.errors import AnsibleFilterError

try:
    from cryptography import x509
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID
except ImportError as err:  # reported when the filter is used, not when Ansible loads the plugins
    CRYPTOGRAPHY_ERROR = err
else:
    CRYPTOGRAPHY_ERROR = None

MODE_PREFIX = "mode of "

# openssl's short names, as openssl_csr takes them (the role passes serverAuth and clientAuth).
EKU_NAMES = {
    "serverAuth": "1.3.6.1.5.5.7.3.1",
    "clientAuth": "1.3.6.1.5.5.7.3.2",
    "codeSigning": "1.3.6.1.5.5.7.3.3",
    "emailProtection": "1.3.6.1.5.5.7.3.4",
    "timeStamping": "1.3.6.1.5.5.7.3.8",
    "OCSPSigning": "1.3.6.1.5.5.7.3.9",
}
EKU_BY_LOWER_NAME = dict((name.lower(), oid) for name, oid in EKU_NAMES.items())


class _Reason(Exception):
    """A reason to (re)issue, raised where it is found so the first one wins."""


def _read(path, what):
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        raise _Reason("%s %s does not exist" % (what, path))
    except OSError as err:
        raise _Reason("%s %s cannot be read (%s)" % (what, path, err.strerror or err))


def _certificate(path, what):
    data = _read(path, what)
    try:
        return x509.load_pem_x509_certificate(data)
    except Exception:  # pylint: disable=broad-except  # garbled or not a certificate: a reason, never a stop
        raise _Reason("%s %s is not a readable PEM certificate" % (what, path))


def _private_key(path, what):
    data = _read(path, what)
    try:
        return serialization.load_pem_private_key(data, password=None)
    except Exception:  # pylint: disable=broad-except  # garbled, encrypted or not a key: openssl_privatekey remakes it
        raise _Reason("%s %s is not a readable unencrypted PEM private key" % (what, path))


def _public_der(key):
    return key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def _not_after(cert):
    # cryptography 42 added the timezone-aware property and deprecated the naive one.
    if hasattr(cert, "not_valid_after_utc"):
        return cert.not_valid_after_utc
    return cert.not_valid_after.replace(tzinfo=datetime.timezone.utc)


def _extension(cert, kind):
    try:
        return cert.extensions.get_extension_for_class(kind).value
    except x509.ExtensionNotFound:
        return None


def _issued_by(cert, issuer):
    """Whether issuer's key signed cert and cert names issuer's subject as its issuer."""
    if cert.issuer != issuer.subject:
        return False
    try:
        cert.verify_directly_issued_by(issuer)
    except (InvalidSignature, ValueError, TypeError):
        return False
    return True


def _normal_san(text):
    kind, sep, value = str(text).partition(":")
    kind = kind.strip().lower()
    value = value.strip()
    if not sep or not value:
        raise AnsibleFilterError("certificate_renewal_reason: subject alternative name %r is not TYPE:VALUE" % (text,))
    if kind == "dns":
        return "DNS:" + value.lower()
    if kind in ("ip", "ip address"):
        try:
            # ipaddress writes each address one way (10.0.0.1, ::1), whatever form the input had.
            return "IP:%s" % (ipaddress.ip_network(value) if "/" in value else ipaddress.ip_address(value))
        except ValueError:
            raise AnsibleFilterError("certificate_renewal_reason: %r is not an IP address" % (text,))
    if kind == "email":
        return "email:" + value
    if kind == "uri":
        return "URI:" + value
    if kind == "rid":
        return "RID:" + value
    raise AnsibleFilterError("certificate_renewal_reason: cannot compare subject alternative name %r "
                             "(DNS, IP, email, URI and RID are supported)" % (text,))


def _cert_sans(cert):
    names = set()
    extension = _extension(cert, x509.SubjectAlternativeName)
    for name in extension or []:
        if isinstance(name, x509.DNSName):
            names.add("DNS:" + name.value.lower())
        elif isinstance(name, x509.IPAddress):
            names.add("IP:%s" % name.value)
        elif isinstance(name, x509.RFC822Name):
            names.add("email:" + name.value)
        elif isinstance(name, x509.UniformResourceIdentifier):
            names.add("URI:" + name.value)
        elif isinstance(name, x509.RegisteredID):
            names.add("RID:" + name.value.dotted_string)
        else:  # a type the role never asks for: it never equals an expected name, so it is reissued
            names.add("%s:%r" % (type(name).__name__, name.value))
    return names


def _normal_eku(name):
    text = str(name).strip()
    oid = EKU_BY_LOWER_NAME.get(text.lower())
    if oid:
        return oid
    if all(part.isdigit() for part in text.split(".")) and "." in text:
        return text
    raise AnsibleFilterError("certificate_renewal_reason: unknown extended key usage %r (use a name like "
                             "serverAuth or a dotted OID)" % (name,))


def _eku_names(oids):
    by_oid = dict((oid, name) for name, oid in EKU_NAMES.items())
    return ", ".join(sorted(by_oid.get(oid, oid) for oid in oids)) or "none"


def _check(cert_path, key_path, ca_cert_path, ca_key_path, common_name, subject_alt_names, extended_key_usage,
           is_ca, key_size, min_days_left, file_modes):
    cert = _certificate(cert_path, "the certificate")
    key = _private_key(key_path, "the key")
    if key_size and not (isinstance(key, rsa.RSAPrivateKey) and key.key_size == int(key_size)):
        raise _Reason("the key %s is not an RSA key of %s bits" % (key_path, key_size))
    if _public_der(key.public_key()) != _public_der(cert.public_key()):
        raise _Reason("the key %s does not match the public key of %s" % (key_path, cert_path))

    if ca_cert_path:
        ca_cert = _certificate(ca_cert_path, "the CA certificate")
        if ca_key_path and _public_der(_private_key(ca_key_path, "the CA key").public_key()) != \
                _public_der(ca_cert.public_key()):
            raise _Reason("the CA key %s does not match the CA certificate %s" % (ca_key_path, ca_cert_path))
        if not _issued_by(cert, ca_cert):
            raise _Reason("%s is not signed by the CA %s" % (cert_path, ca_cert_path))
    if is_ca:
        constraints = _extension(cert, x509.BasicConstraints)
        usage = _extension(cert, x509.KeyUsage)
        if constraints is None or not constraints.ca:
            raise _Reason("%s is not a CA certificate (no basicConstraints CA:TRUE)" % cert_path)
        if usage is None or not usage.key_cert_sign:
            raise _Reason("%s may not sign certificates (no keyUsage keyCertSign)" % cert_path)
        if not _issued_by(cert, cert):
            raise _Reason("%s is not self-signed" % cert_path)

    if common_name is not None:
        # an empty common name: the certificate must have none (etcd refuses a gateway client that has one)
        names = [attribute.value for attribute in cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)]
        if names != ([str(common_name)] if str(common_name) else []):
            raise _Reason("%s has the common name %s, not %s"
                          % (cert_path, ", ".join(names) or "(none)", common_name or "(none)"))
    if subject_alt_names is not None:
        wanted = set(_normal_san(name) for name in subject_alt_names)
        present = _cert_sans(cert)
        if wanted != present:
            changes = ["lack " + ", ".join(sorted(wanted - present))] if wanted - present else []
            changes += ["still have " + ", ".join(sorted(present - wanted))] if present - wanted else []
            raise _Reason("the subject alternative names of %s %s" % (cert_path, " and ".join(changes)))
    if not is_ca and len(cert.subject) == 0:
        # RFC 5280 4.2.1.6: with an empty subject the SAN extension is critical; OpenSSL 3 refuses the certificate
        # otherwise ("Subject empty and Subject Alt Name extension not critical"), Go accepts it.
        try:
            critical = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).critical
        except x509.ExtensionNotFound:
            critical = False
        if not critical:
            raise _Reason("%s has an empty subject and a subject alternative name extension that is not critical"
                          % cert_path)
    if extended_key_usage is not None:
        wanted = set(_normal_eku(name) for name in extended_key_usage)
        usages = _extension(cert, x509.ExtendedKeyUsage)
        present = set(oid.dotted_string for oid in usages or [])
        if wanted != present:
            raise _Reason("%s has the extended key usages %s, not %s"
                          % (cert_path, _eku_names(present), _eku_names(wanted)))

    not_after = _not_after(cert)
    now = datetime.datetime.now(datetime.timezone.utc)
    if not_after <= now:
        raise _Reason("%s expired on %s" % (cert_path, not_after.strftime("%Y-%m-%d %H:%M UTC")))
    if not_after - now < datetime.timedelta(days=int(min_days_left)):
        raise _Reason("%s expires on %s, fewer than %s days from now"
                      % (cert_path, not_after.strftime("%Y-%m-%d %H:%M UTC"), int(min_days_left)))

    for path, mode in sorted((file_modes or {}).items()):
        try:
            actual = os.stat(path).st_mode & 0o7777
        except OSError:
            continue  # the directory or file is checked as content above, or not needed
        if actual != int(str(mode), 8):
            raise _Reason("%s%s is %04o, not %s" % (MODE_PREFIX, path, actual, mode))


def certificate_renewal_reason(cert_path, key_path, ca_cert_path=None, ca_key_path=None, common_name=None,
                               subject_alt_names=None, extended_key_usage=None, is_ca=False, key_size=None,
                               min_days_left=30, file_modes=None):
    if CRYPTOGRAPHY_ERROR is not None:
        raise AnsibleFilterError("certificate_renewal_reason needs the Python library cryptography on the "
                                 "controller: %s" % CRYPTOGRAPHY_ERROR)
    for name, value in (("subject_alt_names", subject_alt_names), ("extended_key_usage", extended_key_usage)):
        if value is not None and (isinstance(value, str) or not isinstance(value, (list, tuple))):
            raise AnsibleFilterError("certificate_renewal_reason: %s must be a list, got %r" % (name, value))
    if file_modes is not None and not isinstance(file_modes, dict):
        raise AnsibleFilterError("certificate_renewal_reason: file_modes must be a dict, got %r" % (file_modes,))
    paths = [os.path.expanduser(str(path)) if path else None for path in (cert_path, key_path, ca_cert_path, ca_key_path)]
    modes = dict((os.path.expanduser(str(path)), mode) for path, mode in (file_modes or {}).items())
    try:
        _check(paths[0], paths[1], paths[2], paths[3], common_name, subject_alt_names, extended_key_usage,
               bool(is_ca), key_size, min_days_left, modes)
    except _Reason as reason:
        return str(reason)
    return ""


class FilterModule(object):
    def filters(self):
        return {"certificate_renewal_reason": certificate_renewal_reason}
