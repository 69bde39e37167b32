# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: mysql_flavor
short_description: The packages, service and paths of a MySQL-family flavor
version_added: 0.1.0
description:
  - Returns the row of the collection's flavor table (module_utils/mysql_flavors.py) for C(percona), C(mysql)
    or C(mariadb), so roles read flavor differences from one place.
positional: _input
options:
  _input:
    description: Flavor name.
    type: str
    required: true
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Install the flavor's server packages
  ansible.builtin.apt:
    name: "{{ (percona_server_flavor | dbops.clusters.mysql_flavor).server_packages }}"
"""

RETURN = r"""
_value:
  description: family, server_packages, service, config_dir, default_series, percona_release_repo.
  type: dict
"""

from ansible.errors import AnsibleFilterError
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_flavors import FlavorError, flavor


def mysql_flavor(name):
    try:
        return dict(flavor(name))
    except FlavorError as err:
        raise AnsibleFilterError(str(err))


class FilterModule(object):
    def filters(self):
        return {"mysql_flavor": mysql_flavor}
