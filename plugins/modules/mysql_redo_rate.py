#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: mysql_redo_rate
short_description: Measure how fast a running server writes redo, for sizing the redo log
version_added: 0.1.0
description:
  - Reads the server's redo log sequence number twice, I(seconds) apart, and returns the write rate in MB per
    hour, the measured input the mysql_tuning engine sizes the redo log from (one log cycle of at least an
    hour of writes). Measure under representative load.
  - Uses C(Innodb_redo_log_current_lsn) on MySQL 8.0.30 and later, else C(Innodb_lsn_current) (Percona Server
    5.7/8.0) or C(Innodb_os_log_written) (MariaDB and older MySQL).
  - Reads only.
options:
  seconds:
    description: How long to sample.
    type: int
    default: 60
extends_documentation_fragment:
  - dbops.clusters.mysql_login
attributes:
  check_mode:
    support: full
    description: Measures in check mode too; it changes nothing.
  diff_mode:
    support: none
    description: Changes nothing.
requirements:
  - PyMySQL
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Measure the redo rate for ten minutes under the usual load
  dbops.clusters.mysql_redo_rate:
    seconds: 600
  register: redo

- name: Size the redo log from it
  dbops.clusters.mysql_tuning:
    memory_mb: 16384
    cpus: 8
    flavor: percona
    version: "8.4"
    redo_mb_per_hour: "{{ redo.mb_per_hour }}"
"""

RETURN = r"""
mb_per_hour:
  description: Redo written per hour at the measured pace, in MB (rounded up; 0 when nothing was written).
  returned: always
  type: int
bytes:
  description: Redo bytes written during the sample.
  returned: always
  type: int
seconds:
  description: Length of the sample in seconds.
  returned: always
  type: float
source:
  description: The status variable the measurement used.
  returned: always
  type: str
"""

import time

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_connection import (
    HAS_PYMYSQL, LOGIN_ARGUMENT_SPEC, PYMYSQL_IMPORT_ERROR, ConnectionError_, Session, connect)
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_tuning import redo_rate_mb_per_hour

# In order of preference: the first the server reports is used.
LSN_VARIABLES = ("Innodb_redo_log_current_lsn", "Innodb_lsn_current", "Innodb_os_log_written")


def read_counter(session):
    rows = session.fetch("SHOW GLOBAL STATUS WHERE Variable_name IN (%s)" % ", ".join(["%s"] * len(LSN_VARIABLES)),
                         list(LSN_VARIABLES))
    found = dict((row["Variable_name"], int(row["Value"])) for row in rows)
    for name in LSN_VARIABLES:
        if name in found:
            return name, found[name]
    return None, None


def main():
    argument_spec = dict(seconds=dict(type="int", default=60))
    argument_spec.update(LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    if not HAS_PYMYSQL:
        module.fail_json(msg=missing_required_lib("PyMySQL"), exception=str(PYMYSQL_IMPORT_ERROR))
    if module.params["seconds"] < 1:
        module.fail_json(msg="seconds must be at least 1, got %d" % module.params["seconds"])
    try:
        session = Session(connect(module.params))
    except ConnectionError_ as err:
        module.fail_json(msg=str(err))
    source, before = read_counter(session)
    if source is None:
        module.fail_json(msg="the server reports none of %s" % ", ".join(LSN_VARIABLES))
    started = time.time()
    time.sleep(module.params["seconds"])
    after = read_counter(session)[1]
    elapsed = time.time() - started
    session.close()
    written = max(0, after - before)
    module.exit_json(changed=False, mb_per_hour=redo_rate_mb_per_hour(written, elapsed), bytes=written,
                     seconds=round(elapsed, 1), source=source)


if __name__ == "__main__":
    main()
