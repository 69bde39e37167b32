#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: apt_package_versions
short_description: Report each package's installed version and the version apt would install
version_added: 0.1.0
description:
  - Reads the host's package cache through C(apt_pkg) (python3-apt) and returns, per package, the installed
    version, the candidate apt would install (with I(default_release) as C(apt-get -t) would see it), the
    versions the configured sources hold, and the target (I(versions) when given for the package and
    available, else the candidate).
  - Upgrade playbooks read it on every member before any change, to refuse a target the package source does
    not have or a downgrade, and to skip members already on the target. Never changes anything.
  - Reads the lists as they are; it does not run C(apt-get update).
options:
  packages:
    description: Package names.
    type: list
    elements: str
    required: true
  default_release:
    description: The release apt prefers (C(APT::Default-Release), as C(apt-get -t RELEASE)); empty for the
      host's own preference.
    type: str
    default: ""
  versions:
    description: Exact versions wanted, by package name; a package not named here targets its candidate.
    type: dict
    default: {}
attributes:
  check_mode:
    support: full
    description: Reads the same in check mode.
  diff_mode:
    support: none
    description: Changes nothing.
requirements:
  - python3-apt on the managed host
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Read the server and provider versions, sid's as the target
  dbops.clusters.apt_package_versions:
    packages: [mariadb-server, galera-4]
    default_release: sid
  register: versions
"""

RETURN = r"""
packages:
  description: Per package, C(installed) (null when not installed), C(candidate) (null when no source has
    it), C(available) (every version the sources hold, newest first), C(wanted) (the requested version or
    null) and C(target) (the wanted version when available, else the candidate when nothing was requested,
    else null).
  returned: always
  type: dict
  sample:
    galera-4: {installed: 26.4.23-0+deb13u1, candidate: 26.4.27-1+b1, wanted: null, target: 26.4.27-1+b1,
               available: [26.4.27-1+b1, 26.4.23-0+deb13u1]}
"""

from functools import cmp_to_key

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

try:
    import apt_pkg
    HAS_APT_PKG = True
except ImportError:
    HAS_APT_PKG = False


def read_versions(packages, default_release, versions):
    apt_pkg.init_config()
    if default_release:
        apt_pkg.config.set("APT::Default-Release", default_release)
    apt_pkg.init_system()
    cache = apt_pkg.Cache(None)
    policy = apt_pkg.DepCache(cache)
    result = {}
    for name in packages:
        wanted = versions.get(name) or None
        try:
            package = cache[name]
        except KeyError:
            result[name] = {"installed": None, "candidate": None, "available": [], "wanted": wanted, "target": None}
            continue
        candidate = policy.get_candidate_ver(package)
        available = sorted((version.ver_str for version in package.version_list),
                           key=cmp_to_key(apt_pkg.version_compare), reverse=True)
        candidate_str = candidate.ver_str if candidate else None
        if wanted:
            target = wanted if wanted in available else None
        else:
            target = candidate_str
        result[name] = {"installed": package.current_ver.ver_str if package.current_ver else None,
                        "candidate": candidate_str, "available": available, "wanted": wanted, "target": target}
    return result


def main():
    module = AnsibleModule(
        argument_spec=dict(packages=dict(type="list", elements="str", required=True),
                           default_release=dict(type="str", default=""),
                           versions=dict(type="dict", default={})),
        supports_check_mode=True)
    if not HAS_APT_PKG:
        module.fail_json(msg=missing_required_lib("python3-apt (apt_pkg)"))
    versions = dict((str(key), str(value)) for key, value in module.params["versions"].items())
    unknown = sorted(set(versions) - set(module.params["packages"]))
    if unknown:
        module.fail_json(msg="versions names packages not in packages: %s" % ", ".join(unknown))
    try:
        packages = read_versions(module.params["packages"], module.params["default_release"], versions)
    except SystemError as err:  # apt_pkg's error for a broken cache or configuration
        module.fail_json(msg="apt could not read its package cache: %s" % err)
    module.exit_json(changed=False, packages=packages)


if __name__ == "__main__":
    main()
