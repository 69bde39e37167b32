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
  - Given the host's OS family, the row also carries that OS's C(datadir), C(socket), C(tls_dir) and
    C(server_binary); an OS family the roles do not support is refused with the list of those they do.
positional: _input, os_family
options:
  _input:
    description: Flavor name.
    type: str
    required: true
  os_family:
    description: C(ansible_facts.os_family) of the host, for example C(Debian).
    type: str
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Install the flavor's server packages
  ansible.builtin.apt:
    name: "{{ (percona_server_flavor | dbops.clusters.mysql_flavor).server_packages }}"

- name: Read the flavor's paths on this host's OS
  ansible.builtin.set_fact:
    flavor_info: "{{ percona_server_flavor | dbops.clusters.mysql_flavor(ansible_facts.os_family) }}"
"""

RETURN = r"""
_value:
  description:
    - family, server_packages, service, config_dir, default_series, percona_release_repo, os_paths, galera.
    - With I(os_family) also os_family, datadir, socket, tls_dir and server_binary.
  type: dict
"""

from ansible.errors import AnsibleFilterError
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_flavors import FlavorError, flavor, flavor_on


def mysql_flavor(name, os_family=None):
    try:
        return flavor_on(name, os_family) if os_family is not None else dict(flavor(name))
    except FlavorError as err:
        raise AnsibleFilterError(str(err))


class FilterModule(object):
    def filters(self):
        return {"mysql_flavor": mysql_flavor}
