# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: mongodb_upgrade_package_errors
short_description: What the MongoDB upgrade playbooks refuse about the package given for the target release
version_added: 0.1.0
description:
  - Checks mongodb_rs_upgrade_packages for the target release before any change (module_utils/mongodb_inputs.py
    upgrade_package_errors) and returns one sentence per problem, naming the variable; empty when all is well.
  - A package file (a path ending in .deb) must be a file on the controller, named NAME_VERSION_ARCH.deb with a
    version of the target release; a repository version must be of the target release. An absent entry is not
    refused here (a resumed run may have nothing left to upgrade).
positional: _input, target
options:
  _input:
    description: mongodb_rs_upgrade_packages, a mapping of release to package file or repository version.
    type: dict
    required: true
  target:
    description: The release the run upgrades to, such as C(8.0).
    type: str
    required: true
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Refuse a package that cannot upgrade the set to 8.0
  ansible.builtin.assert:
    that: errors | length == 0
    fail_msg: "{{ errors }}"
  vars:
    packages: {"8.0": /srv/pkgs/mongodb-org-server_8.0.4_amd64.deb}
    errors: "{{ packages | dbops.clusters.mongodb_upgrade_package_errors('8.0') }}"
"""

RETURN = r"""
_value:
  description: One sentence per problem.
  type: list
  elements: str
"""

import os

from ansible_collections.dbops.clusters.plugins.module_utils import mongodb_inputs


def mongodb_upgrade_package_errors(packages, target):
    # A filter runs on the controller: the package files the playbooks copy to the members are read from here.
    return mongodb_inputs.upgrade_package_errors(packages, str(target), os.path.isfile)


class FilterModule(object):
    def filters(self):
        return {"mongodb_upgrade_package_errors": mongodb_upgrade_package_errors}
