# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: dpkg_missing
short_description: The packages of a list that dpkg does not report fully installed
version_added: 0.1.0
description:
  - >-
    Reads the output of C(dpkg-query --show --showformat='${Package}:${db:Status-Status},' NAME...) and returns
    the names of I(_input) that it does not report as C(installed) (unknown to dpkg, removed, or half
    installed or configured). The roles ask dpkg first and run the apt module only for what this returns, since
    dpkg answers in milliseconds and the apt module loads the whole package cache (seconds per host, every run).
  - >-
    A name is only ever reported present when dpkg says exactly that package is installed, so a virtual
    package, a name with a version or an architecture, or anything dpkg does not list is missing and left
    to apt, as before.
positional: _input, dpkg_output
options:
  _input:
    description: Package names, as given to the apt module with C(state=present).
    type: list
    elements: str
    required: true
  dpkg_output:
    description: The standard output of the dpkg-query command above (empty when dpkg-query failed).
    type: str
    required: true
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Find which packages are not installed yet
  ansible.builtin.command:
    argv: "{{ ['dpkg-query', '--show', '--showformat=${Package}:${db:Status-Status},'] + packages }}"
  register: dpkg
  changed_when: false
  failed_when: false
  check_mode: false

- name: Install what is missing
  ansible.builtin.apt:
    name: "{{ packages | dbops.clusters.dpkg_missing(dpkg.stdout) }}"
  when: packages | dbops.clusters.dpkg_missing(dpkg.stdout) | length > 0
"""

RETURN = r"""
_value:
  description: The names of I(_input) that are not installed, in their order.
  type: list
  elements: str
"""

from ansible.errors import AnsibleFilterError


def dpkg_missing(packages, dpkg_output):
    if isinstance(packages, str) or not isinstance(packages, (list, tuple)):
        raise AnsibleFilterError("dpkg_missing: expects a list of package names, got %r" % (packages,))
    installed = set()
    for entry in str(dpkg_output or "").replace("\n", ",").split(","):
        name, sep, status = entry.strip().rpartition(":")
        if sep and status == "installed":
            installed.add(name)
    return [name for name in packages if str(name) not in installed]


class FilterModule(object):
    def filters(self):
        return {"dpkg_missing": dpkg_missing}
