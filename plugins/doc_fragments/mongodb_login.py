# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    """Connection options shared by the collection's MongoDB modules (module_utils/mongodb_common.py)."""

    DOCUMENTATION = r"""
options:
  login_host:
    description: The member (or router) to connect to.
    type: str
    default: localhost
  login_port:
    description: Its port.
    type: int
    default: 27017
  login_user:
    description:
      - User to authenticate as, with SCRAM-SHA-256. Leave unset before the first user exists (the localhost
        exception).
    type: str
  login_password:
    description: Password of I(login_user); passed to pymongo, never on a command line.
    type: str
  login_database:
    description: Authentication database of I(login_user).
    type: str
    default: admin
  login_credentials_file:
    description:
      - A file of C(user:), C(password:) and optionally C(tls:), C(tls_ca_file:), C(tls_certificate_key_file:)
        lines, used for what the module arguments leave unset. Refused when readable by group or others.
    type: path
  replica_set:
    description: Replica set name; when set, pymongo discovers the set from I(login_host).
    type: str
  tls:
    description:
      - Connect with TLS. Unset, the C(tls:) line of I(login_credentials_file) decides (the role writes
        C(tls), C(tls_ca_file) there when the server runs with net.tls), else no TLS.
    type: bool
  tls_ca_file:
    description: CA certificate file that verifies the server's certificate; unset, the credentials file's C(tls_ca_file).
    type: path
  tls_certificate_key_file:
    description:
      - A PEM file with this client's certificate and key, for servers that require client certificates (net.tls.CAFile
        without allowConnectionsWithoutCertificates); unset, the credentials file's C(tls_certificate_key_file).
    type: path
  tls_allow_invalid_hostnames:
    description: Accept a server certificate whose names do not match I(login_host) (still verified against the CA).
    type: bool
    default: false
  connect_timeout:
    description: Seconds to wait for a server to answer.
    type: int
    default: 10
"""
