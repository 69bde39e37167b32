# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    """Connection options shared by the collection's PostgreSQL modules (module_utils/postgres_connection.py)."""

    DOCUMENTATION = r"""
options:
  login_unix_socket:
    description: Socket directory used when O(login_host) is not set.
    type: path
    default: /var/run/postgresql
  login_host:
    description: Connect over TCP to this host instead.
    type: str
  login_port:
    description: Port.
    type: int
    default: 5432
  login_user:
    description: Superuser to log in as (peer on the socket).
    type: str
    default: postgres
  login_password:
    description: Password of O(login_user) over TCP.
    type: str
  login_db:
    description: Database to connect to.
    type: str
    default: postgres
  connect_timeout:
    description: Seconds to wait for a connection.
    type: int
    default: 10
"""
