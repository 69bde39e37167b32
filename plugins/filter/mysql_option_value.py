# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: mysql_option_value
short_description: A value quoted for a MySQL option file, read back exactly by the client
version_added: 0.1.0
description:
  - Double quotes with backslashes and double quotes escaped, so that C(#), C(;), quotes, backslashes and
    spaces reach the client unchanged (a bare C(#) starts a comment; a bare backslash starts an escape).
  - Refuses control characters (line breaks), which an option file line cannot hold.
positional: _input
options:
  _input:
    description: The value, usually a password.
    type: str
    required: true
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: A login file the mysql client reads
  ansible.builtin.copy:
    dest: /etc/check.cnf
    mode: "0600"
    content: |
      [client]
      password={{ check_password | dbops.clusters.mysql_option_value }}
"""

RETURN = r"""
_value:
  description: The quoted value.
  type: str
"""

from ansible.errors import AnsibleFilterError
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_option_file import option_value


def mysql_option_value(text):
    try:
        return option_value(str(text))
    except ValueError as err:
        raise AnsibleFilterError("mysql_option_value: %s" % err)


class FilterModule(object):
    def filters(self):
        return {"mysql_option_value": mysql_option_value}
