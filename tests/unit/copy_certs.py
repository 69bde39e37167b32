"""A copy CA and copy certificates as copy_tls.yml issues them (a DNS name per host, serverAuth and clientAuth),
written as files for module_utils/copy_channel.py, and one certificate from another CA."""
import datetime

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


def _name(common_name):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _pem_key(key):
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                             serialization.NoEncryption())


def _ca(common_name):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(_name(common_name)).issuer_name(_name(common_name))
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                         crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256()))
    return key, cert


def _host(ca, name):
    ca_key, ca_cert = ca
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(_name(name)).issuer_name(ca_cert.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                           critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    return key, cert


def copy_tls(directory, names, rogue=()):
    """{name: {ca, cert, key}}: file paths under directory, every host's certificate from one copy CA, the rogue
    names' from another CA (each host trusts the copy CA)."""
    copy_ca, other_ca = _ca("dbops.clusters MySQL copy CA"), _ca("another CA")
    directory.mkdir(parents=True, exist_ok=True)
    ca_path = directory / "ca.pem"
    ca_path.write_bytes(copy_ca[1].public_bytes(serialization.Encoding.PEM))
    files = {}
    for name in list(names) + list(rogue):
        key, cert = _host(other_ca if name in rogue else copy_ca, name)
        (directory / (name + "-cert.pem")).write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        (directory / (name + "-key.pem")).write_bytes(_pem_key(key))
        files[name] = {"ca": str(ca_path), "cert": str(directory / (name + "-cert.pem")),
                       "key": str(directory / (name + "-key.pem"))}
    return files
