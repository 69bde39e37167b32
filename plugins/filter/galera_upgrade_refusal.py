# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: galera_upgrade_refusal
short_description: Why the pxc_galera role refuses to install other package versions on a running member
version_added: 0.1.0
description:
  - From apt_package_versions' result on a running member (installed, and the target the role's inputs would
    install), returns one sentence naming the packages that would move and C(playbooks/rolling_upgrade_galera.yml),
    or an empty string when the inputs keep what runs. The state transfer's tools (socat, rsync) are ignored.
positional: _input, member, packages
options:
  _input:
    description: apt_package_versions' C(packages).
    type: dict
    required: true
  member:
    description: The member's inventory name.
    type: str
    required: true
  packages:
    description: The flavor's Galera packages.
    type: list
    elements: str
    required: true
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Refuse an upgrade through the role
  ansible.builtin.assert:
    that: reason == ''
    fail_msg: "{{ reason }}"
  vars:
    reason: "{{ versions.packages | dbops.clusters.galera_upgrade_refusal(inventory_hostname, ['galera-4']) }}"
"""

RETURN = r"""
_value:
  description: The refusal, or an empty string.
  type: str
"""

from ansible_collections.dbops.clusters.plugins.module_utils import galera_upgrade


def galera_upgrade_refusal(versions, member, packages):
    return galera_upgrade.running_member_refusal(member, dict(versions), galera_upgrade.upgrade_packages(packages))


class FilterModule(object):
    def filters(self):
        return {"galera_upgrade_refusal": galera_upgrade_refusal}
