#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: postgres_tuning
short_description: Derive PostgreSQL settings from the host and the workload, each with its reason
version_added: 0.1.0
description:
  - Computes C(postgresql.conf) settings from memory, CPUs, disk type, hot data size, WAL write rate, recovery
    time objective and profile, and explains each value in one sentence.
  - "shared_buffers is 75% of RAM when the hot data fits in memory and 25% when it does not (or is not declared),
    never more than connections, maintenance and the OS leave; work_mem is bounded so that max_connections x
    operations per query x parallel workers cannot over-commit memory; checkpoint_timeout and max_wal_size come
    from the WAL write rate and the time crash recovery may take."
  - "Keeps six rules (acid, pitr, replica_wal, crash_recovery, checkpoints, autovacuum): an override that breaks
    one fails, naming the rule, unless the rule is listed in O(unsafe_rules)."
  - Computes only; never connects to a server or changes the host, so the result is the same in check mode.
options:
  memory_mb:
    description: Memory in MiB the server may use.
    type: int
    required: true
  cpus:
    description: CPUs the server may use.
    type: int
    required: true
  disk_type:
    description: Disk under the data directory; C(unknown) assumes an SSD and says so.
    type: str
    choices: [hdd, ssd, nvme, unknown]
    default: unknown
  hot_data_mb:
    description: Size of the data the workload touches (MiB); decides whether shared_buffers gets 75% or 25% of RAM.
    type: int
  wal_mb_per_hour:
    description: Declared or measured WAL write rate in MiB per hour; sizes checkpoints and max_wal_size.
    type: int
  rto_minutes:
    description: Time crash recovery may take; caps max_wal_size at what replays in it.
    type: int
    default: 5
  replay_mb_per_s:
    description: WAL replay speed during crash recovery if measured; otherwise assumed from the disk type.
    type: int
  max_connections:
    description: Connections to plan for; default by profile (oltp 100, mixed 80, olap 40).
    type: int
  huge_pages_total:
    description: 2 MiB huge pages the host reserves (HugePages_Total); C(huge_pages=on) only when enough.
    type: int
    default: 0
  profile:
    description: Workload profile.
    type: str
    choices: [oltp, olap, mixed]
    default: oltp
  version:
    description: PostgreSQL major version (13 or later).
    type: int
    default: 17
  archive_command:
    description: The archive command the pitr rule needs.
    type: str
    required: true
  overrides:
    description:
      - Setting name to value; replaces the derived value and its reason records the derived one.
      - Values of settings the engine knows are checked against PostgreSQL's types and ranges.
    type: dict
    default: {}
  unsafe_rules:
    description: Rules the user accepts breaking with an override (C(acid), C(pitr), C(replica_wal),
      C(crash_recovery), C(checkpoints), C(autovacuum)).
    type: list
    elements: str
    default: []
attributes:
  check_mode:
    support: full
    description: Computes the same settings in check mode.
  diff_mode:
    support: none
    description: Changes nothing.
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Tune PostgreSQL 17 for a host with 8 GiB and 3 GiB of hot data
  dbops.clusters.postgres_tuning:
    memory_mb: 8192
    cpus: 4
    disk_type: ssd
    hot_data_mb: 3072
    wal_mb_per_hour: 4096
    rto_minutes: 5
    archive_command: "test ! -f /var/lib/postgresql/wal_archive/%f && cp %p /var/lib/postgresql/wal_archive/%f"
    overrides:
      max_connections: 150
  register: tuning
"""

RETURN = r"""
settings:
  description: Setting name to C(value), C(reason), C(source) (derived, rule or override) and C(restart).
  returned: always
  type: dict
  sample:
    shared_buffers: {value: 6GB, reason: "hot data 3072 MB ... fits in memory: 75% of 8192 MB RAM",
                     source: derived, restart: true}
inputs:
  description: The facts after validation and defaults, with C(recovery_cap_mb) and C(hot_data_fits).
  returned: always
  type: dict
broken_rules:
  description: Rule name to the overrides that break it (only rules listed in unsafe_rules).
  returned: always
  type: dict
conf:
  description: The settings as conf.d text, a C(# reason) line before each.
  returned: always
  type: str
variable:
  description: On failure, the input or override at fault.
  returned: failure
  type: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dbops.clusters.plugins.module_utils.postgres_tuning import (
    TuningInputError,
    recommend,
    render_conf,
)

FACTS = ("memory_mb", "cpus", "disk_type", "hot_data_mb", "wal_mb_per_hour", "rto_minutes", "replay_mb_per_s",
         "max_connections", "huge_pages_total", "profile", "version")


def main():
    module = AnsibleModule(
        argument_spec=dict(
            memory_mb=dict(type="int", required=True),
            cpus=dict(type="int", required=True),
            disk_type=dict(type="str", choices=["hdd", "ssd", "nvme", "unknown"], default="unknown"),
            hot_data_mb=dict(type="int"),
            wal_mb_per_hour=dict(type="int"),
            rto_minutes=dict(type="int", default=5),
            replay_mb_per_s=dict(type="int"),
            max_connections=dict(type="int"),
            huge_pages_total=dict(type="int", default=0),
            profile=dict(type="str", choices=["oltp", "olap", "mixed"], default="oltp"),
            version=dict(type="int", default=17),
            archive_command=dict(type="str", required=True),
            overrides=dict(type="dict", default={}),
            unsafe_rules=dict(type="list", elements="str", default=[]),
        ),
        supports_check_mode=True,
    )
    facts = dict((name, module.params[name]) for name in FACTS)
    try:
        result = recommend(facts, module.params["overrides"], module.params["unsafe_rules"],
                           module.params["archive_command"])
    except TuningInputError as err:
        module.fail_json(msg=str(err), variable=err.variable)
    for warning in result["warnings"]:
        module.warn(warning)
    module.exit_json(changed=False, settings=result["settings"], inputs=result["inputs"],
                     broken_rules=result["broken_rules"], conf=render_conf(result))


if __name__ == "__main__":
    main()
