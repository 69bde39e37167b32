# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    """Connection options shared by the collection's etcd modules (module_utils/etcd.py)."""

    DOCUMENTATION = r"""
options:
  endpoints:
    description:
      - Client URLs of the members (C(https://10.0.0.11:2379)), asked in this order; the modules talk to etcd's
        v3 JSON gateway over HTTPS with a client certificate (mutual TLS).
    type: list
    elements: str
    required: true
  ca_cert:
    description: CA certificate the members' certificates are checked against.
    type: path
    default: /etc/etcd/tls/ca.crt
  client_cert:
    description: Client certificate presented to the members (signed by their CA, extended key usage clientAuth).
    type: path
    default: /etc/etcd/tls/host.crt
  client_key:
    description: Key of O(client_cert).
    type: path
    default: /etc/etcd/tls/host.key
  login_user:
    description:
      - User to authenticate as when etcd's authentication is enabled (a token from C(/v3/auth/authenticate)).
      - The password travels in the request body over TLS, never on a command line.
    type: str
  login_password:
    description: Password of O(login_user).
    type: str
  connect_timeout:
    description: Seconds each request may take.
    type: float
    default: 5
"""
