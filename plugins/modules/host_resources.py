#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: host_resources
short_description: Report the memory, CPUs and disk type a database server on this host may use
version_added: 0.1.0
description:
  - Reads C(/proc) and C(/sys) and returns the memory and CPUs a database server may plan for, and whether
    the disk under its data directory is rotational, each with the source and the reason.
  - A container sees the host's whole RAM and CPU count; cgroup limits bind below that, and a declared
    limit wins over both. The tuning roles of this collection take their hardware facts from here.
  - Reads only; never changes the host.
options:
  path:
    description: Data directory whose backing disk is examined; the nearest existing parent is used.
    type: path
    default: /var/lib
  memory_limit_mb:
    description: Memory in MiB the server may plan for, overriding what the host reports.
    type: int
  cpu_limit:
    description: CPUs the server may plan for, overriding what the host reports.
    type: int
attributes:
  check_mode:
    support: full
    description: Reads the same facts in check mode.
  diff_mode:
    support: none
    description: Changes nothing, so there is nothing to diff.
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Size the server for the lab's declared memory
  dbops.clusters.host_resources:
    path: /var/lib/mysql
    memory_limit_mb: 1024
  register: resources

- name: Show why
  ansible.builtin.debug:
    var: resources.reasons
"""

RETURN = r"""
memory_mb:
  description: Memory in MiB the server may plan for.
  returned: always
  type: int
  sample: 1024
memory_source:
  description: Where memory_mb came from, one of C(declared), C(cgroup), C(meminfo).
  returned: always
  type: str
  sample: declared
cpus:
  description: Whole CPUs the server may plan for (at least 1).
  returned: always
  type: int
  sample: 2
cpus_source:
  description: Where cpus came from, one of C(declared), C(cgroup), C(affinity).
  returned: always
  type: str
  sample: affinity
disk:
  description: The mount under I(path) and whether its device is rotational (null when unknown).
  returned: always
  type: dict
  sample: {path: /var/lib/mysql, device: "253:0", mount_point: /, fstype: ext4, rotational: false}
reasons:
  description: One sentence per fact saying how it was derived.
  returned: always
  type: dict
  sample: {memory_mb: "declared limit 1024 MiB (host has 24105 MiB)"}
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dbops.clusters.plugins.module_utils.host_resources import gather


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type="path", default="/var/lib"),
            memory_limit_mb=dict(type="int"),
            cpu_limit=dict(type="int"),
        ),
        supports_check_mode=True,
    )
    try:
        result = gather(module.params["path"], module.params["memory_limit_mb"], module.params["cpu_limit"])
    except ValueError as err:
        module.fail_json(msg=str(err))
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
