#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: mysql_tuning
short_description: Derive InnoDB and server settings for MySQL, Percona Server or MariaDB, each with its reason
version_added: 0.1.0
description:
  - Computes the C([mysqld]) settings for a host from its memory, CPUs, disk type, redo write rate, recovery
    time objective, workload and durability profile, and explains each value in one sentence.
  - "The rules: buffer pool 50% of RAM up to 4 GiB and 75% above (half that on a shared host), rounded down to
    whole 128M chunks x instances; redo log sized for a log cycle of an hour of writes, capped by the RTO at
    about 5 minutes of crash recovery per GB; I/O capacity by disk type; durability by profile; explicit values
    where MySQL and MariaDB defaults differ."
  - Emits only variables that exist on the given flavor and version, and says for each whether it can be
    changed at runtime (C(dynamic)) or needs a restart.
  - Computes only; never connects to a server or changes the host, so the result is the same in check mode.
    With I(server_binary) it runs that binary with C(--verbose --help) to read its option names and version.
options:
  memory_mb:
    description: Memory in MiB the server may use (for example C(memory_mb) from M(dbops.clusters.host_resources)).
    type: int
    required: true
  cpus:
    description: CPUs the server may use.
    type: int
    required: true
  disk_type:
    description:
      - Kind of disk under the data directory. C(unknown) or no value assumes an SSD and says so.
    type: str
    choices: [hdd, ssd, nvme, unknown]
  redo_mb_per_hour:
    description:
      - Declared or measured redo write rate in MiB per hour. Without it the redo log is sized from the buffer
        pool and a warning asks for it.
    type: int
  rto_minutes:
    description:
      - Recovery time objective in minutes; caps the redo log at about 5 minutes of crash recovery per GB.
      - Fails, naming C(rto_minutes), when even 15 minutes of writes exceed that cap.
    type: int
    default: 15
  workload:
    description: Workload shape; changes connection targets, purge and write I/O threads and the default redo size.
    type: str
    choices: [oltp, read_mostly, write_heavy]
    default: oltp
  dedicated:
    description: Whether the server has the host to itself; a shared host gets half the buffer pool.
    type: bool
    default: true
  flavor:
    description: Server flavor.
    type: str
    choices: [percona, mysql, mariadb]
    default: percona
  version:
    description:
      - Server version, for example C(8.4.3), C(9.7.4) or C(11.8.2); defaults to the flavor's default series.
        A series (C(8.0), C(8.4)) plans for its current releases.
      - Supported from MySQL/Percona 5.7.9 and MariaDB 10.6.
    type: str
  durability:
    description:
      - C(durable) loses no acknowledged transaction on an OS crash (C(innodb_flush_log_at_trx_commit=1),
        C(sync_binlog=1)); C(relaxed) may lose about a second on an OS crash or power failure (2, 1000);
        C(ephemeral) is for disposable or benchmark data only (0, 0).
    type: str
    choices: [durable, relaxed, ephemeral]
    default: durable
  overrides:
    description:
      - Variable name to value; an override replaces the derived value and its reason records the derived one.
      - Sizes are validated and normalised (C(1.5G) becomes C(1536M)); variables that do not exist on the flavor
        and version are refused.
      - An option the flavor's I(version) removed (C(module_utils/mysql_removed_options.py)) is refused naming the
        release and its replacement; one renamed with the same meaning (C(group_replication_ip_whitelist),
        C(tx_isolation)) is written under its new name, and its reason and a warning say so.
    type: dict
    default: {}
  server_binary:
    description:
      - The installed server binary (C(/usr/sbin/mysqld), C(/usr/sbin/mariadbd)). When it exists, every override
        name is checked against the options the binary lists with C(--verbose --help) (C(loose-) names are not),
        so a typo is refused before anything is written. When it does not exist (first install), only the
        names the engine knows are checked here; M(dbops.clusters.mysql_config) checks again before writing.
      - When the binary is of the I(flavor) asked for, the version it names must be of the series I(version) asks
        for (8.4 for 8.4.3); another series is refused, since the plan would be for options the installed server
        may not have.
    type: path
  version_variable:
    description: The role variable that set I(version), named in the refusal of another series.
    type: str
    default: percona_server_version
  upgrade_path:
    description:
      - How the caller's topology moves to another series, named in the refusal of another series (default the
        async path - C(playbooks/rolling_upgrade_mysql.yml), the replicas first, the source last after a hand-over).
    type: str
attributes:
  check_mode:
    support: full
    description: Computes the same settings in check mode.
  diff_mode:
    support: none
    description: Changes nothing, so there is nothing to diff.
seealso:
  - module: dbops.clusters.host_resources
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Read what this host may give the server
  dbops.clusters.host_resources:
    path: /var/lib/mysql
    memory_limit_mb: 1024
  register: resources

- name: Tune MySQL 9.7 for it
  dbops.clusters.mysql_tuning:
    memory_mb: "{{ resources.memory_mb }}"
    cpus: "{{ resources.cpus }}"
    disk_type: >-
      {{ 'unknown' if resources.disk.rotational is none
         else ('hdd' if resources.disk.rotational else 'ssd') }}
    flavor: mysql
    version: 9.7.4
    redo_mb_per_hour: 2048
    rto_minutes: 10
    overrides:
      max_connections: 200
  register: tuning

- name: Write the settings, each preceded by its reason
  ansible.builtin.copy:
    content: "{{ tuning.mycnf }}"
    dest: /etc/mysql/mysql.conf.d/zz-tuning.cnf
    mode: "0644"
"""

RETURN = r"""
settings:
  description:
    - Variable name to C(value) (as written in my.cnf), C(reason), C(source) (C(derived) or C(override)),
      C(dynamic) (settable with SET GLOBAL on this flavor and version) and C(section).
  returned: always
  type: dict
  sample:
    innodb_buffer_pool_size:
      value: 512M
      reason: "dedicated host with 1024 MiB RAM: 50% at or below 4 GiB ... = 512M, rounded down to a multiple of 128M"
      source: derived
      dynamic: true
      section: mysqld
inputs:
  description: The facts after validation and defaults, including C(max_redo_mb), the redo cap the RTO allows.
  returned: always
  type: dict
  sample: {memory_mb: 1024, cpus: 2, disk_type: null, disk_type_assumed: ssd, rto_minutes: 15, max_redo_mb: 3072}
omitted:
  description: Variables deliberately not emitted for this flavor and version, with the reason.
  returned: always
  type: dict
  sample: {innodb_buffer_pool_instances: "MariaDB 10.6+ has a single buffer pool; the variable was removed"}
translated:
  description: Overrides written under another name, the name given to the name written (a rename with the same
    meaning in the target release).
  returned: always
  type: dict
  sample: {group_replication_ip_whitelist: group_replication_ip_allowlist}
mycnf:
  description: The settings rendered as my.cnf text, a C([mysqld]) section with a C(# reason) line before each setting.
  returned: always
  type: str
  sample: "[mysqld]\n# durable profile: ...\ninnodb_flush_log_at_trx_commit = 1\n"
warnings:
  description: What the user should know or declare (also shown as Ansible warnings).
  returned: when there is something to say
  type: list
  elements: str
  sample: ["disk_type unknown: I/O settings assume an SSD; declare disk_type (hdd, ssd or nvme)"]
variable:
  description: On failure, the input or override at fault.
  returned: failure
  type: str
  sample: rto_minutes
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dbops.clusters.plugins.module_utils import mysql_server_options
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_tuning import (
    TuningInputError,
    recommend,
    render_mycnf,
)

FACTS = ("memory_mb", "cpus", "disk_type", "redo_mb_per_hour", "rto_minutes", "workload", "dedicated", "flavor",
         "version", "durability")


def main():
    module = AnsibleModule(
        argument_spec=dict(
            memory_mb=dict(type="int", required=True),
            cpus=dict(type="int", required=True),
            disk_type=dict(type="str", choices=["hdd", "ssd", "nvme", "unknown"]),
            redo_mb_per_hour=dict(type="int"),
            rto_minutes=dict(type="int", default=15),
            workload=dict(type="str", choices=["oltp", "read_mostly", "write_heavy"], default="oltp"),
            dedicated=dict(type="bool", default=True),
            flavor=dict(type="str", choices=["percona", "mysql", "mariadb"], default="percona"),
            version=dict(type="str"),
            durability=dict(type="str", choices=["durable", "relaxed", "ephemeral"], default="durable"),
            overrides=dict(type="dict", default={}),
            server_binary=dict(type="path"),
            version_variable=dict(type="str", default="percona_server_version"),
            upgrade_path=dict(type="str"),
        ),
        supports_check_mode=True,
    )
    facts = dict((name, module.params[name]) for name in FACTS)
    known, installed, installed_flavor = mysql_server_options.read_binary(module, module.params["server_binary"])
    refused = mysql_server_options.series_refusal(module.params["version"], installed, module.params["server_binary"],
                                                  module.params["flavor"], installed_flavor,
                                                  module.params["version_variable"], module.params["upgrade_path"])
    if refused:
        module.fail_json(msg=refused, variable="version", installed_version=installed)
    # The plan first: an option the target release removed is refused naming the release and its replacement,
    # and a renamed one is translated, before the binary is asked about the names the plan would write.
    try:
        result = recommend(facts, module.params["overrides"])
    except TuningInputError as err:
        module.fail_json(msg=str(err), variable=err.variable)
    if known is not None:
        written = [name for name, setting in result["settings"].items() if setting["source"] == "override"]
        message = mysql_server_options.refusal("overrides", written, known, module.params["server_binary"])
        if message:
            module.fail_json(msg=message, variable="overrides")
    for warning in result["warnings"]:
        module.warn(warning)
    module.exit_json(changed=False, settings=result["settings"], inputs=result["inputs"],
                     omitted=result["omitted"], translated=result["translated"], mycnf=render_mycnf(result))


if __name__ == "__main__":
    main()
