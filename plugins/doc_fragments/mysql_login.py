# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    """Login options shared by the collection's MySQL modules (module_utils/mysql_connection.py)."""

    DOCUMENTATION = r"""
options:
  login_unix_socket:
    description:
      - Unix socket to connect through when I(login_host) is not set. Default is the first that exists of
        C(/run/mysqld/mysqld.sock), C(/var/run/mysqld/mysqld.sock), C(/var/lib/mysql/mysql.sock), C(/tmp/mysql.sock).
    type: path
  login_host:
    description: Connect over TCP to this host instead of the socket.
    type: str
  login_port:
    description: TCP port with I(login_host).
    type: int
    default: 3306
  login_user:
    description: Account to log in as; root on the socket is authenticated by the socket, without a password.
    type: str
    default: root
  login_password:
    description: Password of I(login_user). Prefer the socket or I(login_config_file).
    type: str
  login_config_file:
    description:
      - A MySQL option file with C([client]) user, password, host, port or socket. It must be mode 0600
        (the module refuses a file readable by group or others).
    type: path
  login_ca:
    description: CA certificate to verify the server with over TCP (enables TLS).
    type: path
  connect_timeout:
    description: Seconds to wait for the connection.
    type: int
    default: 10
requirements:
  - PyMySQL (python3-pymysql on Debian)
"""
