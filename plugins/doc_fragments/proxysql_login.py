# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    """Admin-interface login shared by the collection's ProxySQL modules (module_utils/proxysql_admin.py)."""

    DOCUMENTATION = r"""
options:
  login_host:
    description: Address of ProxySQL's admin interface.
    type: str
    default: 127.0.0.1
  login_port:
    description: Port of the admin interface.
    type: int
    default: 6032
  login_user:
    description: Admin user. Required unless I(login_config_file) names one.
    type: str
  login_password:
    description: Password of I(login_user). Prefer I(login_config_file).
    type: str
  login_config_file:
    description: An option file (mode 0600) with C([client]) user, password, host and port of the admin interface.
    type: path
  login_fallback_password:
    description:
      - Tried when the login with the other credentials fails. A role that changes C(admin-admin_credentials)
        and only then rewrites I(login_config_file) passes the new password here, so that a run stopped
        between the two can still log in next time.
    type: str
  login_fallback_host:
    description:
      - Tried (with each password) when the address of I(login_config_file) refuses the connection or the
        login. A role that changes the admin interface (C(admin-mysql_ifaces)) and only then rewrites
        I(login_config_file) passes the new address here, so a run stopped between the two, or a file left
        with an address the role no longer uses, never locks it out.
    type: str
  login_fallback_port:
    description: Port tried with I(login_fallback_host) (or with the file's host when that is not given).
    type: int
  wait_timeout:
    description:
      - Seconds to keep trying while no address accepts a connection at all (ProxySQL starting, or moving
        its admin interface). A refused login is not retried.
    type: int
    default: 0
  connect_timeout:
    description: Seconds to wait for the connection.
    type: int
    default: 10
"""
