#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: postgres_config
short_description: Write a PostgreSQL conf.d file with reasons, reload, say which settings need a restart
version_added: 0.1.0
description:
  - Checks every setting against the running server's C(pg_settings) (type, unit, bounds, enum values) and fails,
    naming the setting, before anything is written when the server would reject a value.
  - Writes the file (each setting preceded by its reason as a comment) only when its text changes, reloads the
    server, and reports the settings C(pg_settings.pending_restart) names; the caller restarts for those.
  - Also reports settings still pending a restart from an earlier run, so an interrupted run restarts next time.
options:
  path:
    description: The conf.d file to own.
    type: path
    required: true
  settings:
    description: Setting name to a value, or to a dict with C(value) and C(reason).
    type: dict
    required: true
  header:
    description: Comment lines at the top of the file.
    type: str
    default: ""
  owner:
    description: Owner of the file.
    type: str
    default: postgres
  group:
    description: Group of the file.
    type: str
    default: postgres
  offline:
    description:
      - Write the file to a stopped server's configuration without connecting, checking or reloading (a replica
        being built). Only for settings the role generates itself; user settings are checked on a running server.
    type: bool
    default: false
  reload_timeout:
    description: Seconds to wait for the server to load the new file after the reload signal.
    type: int
    default: 30
  library_dir:
    description:
      - The server's C($libdir), where preload libraries are looked for. Every library the preload settings name
        must be there (the server refuses to start without one); checked offline too.
      - Default, on a running server, what C(pg_config) reports.
    type: path
requirements: [psycopg2]
extends_documentation_fragment:
  - dbops.clusters.postgres_login
attributes:
  check_mode:
    support: full
    description: Validates, and predicts the file change, the settings applied online and those needing a restart.
  diff_mode:
    support: full
    description: Shows the file before and after.
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Write the tuned settings and reload
  dbops.clusters.postgres_config:
    path: /etc/postgresql/17/main/conf.d/50-dbops-tuning.conf
    settings: "{{ tuning.settings }}"
    header: Managed by Ansible
  register: pg_config

- name: Restart for the settings that need it
  ansible.builtin.service:
    name: postgresql@17-main
    state: restarted
  when: pg_config.restart_required
"""

RETURN = r"""
online:
  description: Settings whose value changes with a reload.
  returned: always
  type: list
  elements: str
restart_required:
  description: Whether the server must restart to use the file (pg_settings.pending_restart, or predicted in check mode).
  returned: always
  type: bool
restart_settings:
  description: The settings that force the restart.
  returned: always
  type: list
  elements: str
queries:
  description: Statements run.
  returned: always
  type: list
  elements: str
variable:
  description: On failure, the setting at fault.
  returned: failure
  type: str
"""

import os
import time

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.dbops.clusters.plugins.module_utils import postgres_connection as pgc
from ansible_collections.dbops.clusters.plugins.module_utils.postgres_settings import library_errors, plan, render


def read_text(path):
    if not os.path.exists(path):
        return None
    with open(path) as handle:
        return handle.read()


def compare(params):
    content = render(params["settings"], params["header"])
    previous = read_text(params["path"])
    changed = previous != content
    result = dict(changed=changed, diff=dict(before=previous or "", after=content, before_header=params["path"],
                                             after_header=params["path"]))
    return content, previous, changed, result


def write(module, content):
    params = module.params
    directory = os.path.dirname(params["path"])
    temporary = os.path.join(directory, ".%s.dbops-tmp" % os.path.basename(params["path"]))
    with open(temporary, "w") as handle:
        handle.write(content)
    module.set_owner_if_different(temporary, params["owner"], False)
    module.set_group_if_different(temporary, params["group"], False)
    module.set_mode_if_different(temporary, "0644", False)
    module.atomic_move(temporary, params["path"])


def refuse(module, errors, queries):
    first = sorted(errors)[0]
    module.fail_json(msg="refused before writing %s: %s" % (module.params["path"], "; ".join(
        errors[name] for name in sorted(errors))), variable=first, errors=errors, queries=queries)


def write_offline(module, values):
    if module.params["library_dir"]:
        errors = library_errors(values, module.params["library_dir"], os.path.exists)
        if errors:
            refuse(module, errors, [])
    content, previous, changed, result = compare(module.params)
    if changed and not module.check_mode:
        write(module, content)
    module.exit_json(online=[], queries=[], restart_required=False, restart_settings=[], **result)


def main():
    spec = dict(
        path=dict(type="path", required=True),
        settings=dict(type="dict", required=True),
        header=dict(type="str", default=""),
        owner=dict(type="str", default="postgres"),
        group=dict(type="str", default="postgres"),
        reload_timeout=dict(type="int", default=30),
        offline=dict(type="bool", default=False),
        library_dir=dict(type="path"),
    )
    spec.update(pgc.LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    if not pgc.HAS_PSYCOPG2:
        module.fail_json(msg=missing_required_lib("psycopg2"), exception=str(pgc.PSYCOPG2_IMPORT_ERROR))
    params = module.params
    values = dict((name, setting["value"] if isinstance(setting, dict) else setting)
                  for name, setting in params["settings"].items())
    queries = []
    if params["offline"]:
        write_offline(module, values)
    try:
        connection = pgc.connect(params)
    except Exception as err:
        module.fail_json(msg="cannot connect to PostgreSQL to check the settings before writing them: %s" % err)
    try:
        catalogue = pgc.catalogue(connection, list(values))
        queries.append("SELECT ... FROM pg_settings WHERE name = ANY(settings)")
        errors, online, restart = plan(values, catalogue)
        library_dir = params["library_dir"] or pgc.query(
            connection, "SELECT setting FROM pg_config WHERE name = 'PKGLIBDIR'")[0][0]
        errors.update(library_errors(values, library_dir, os.path.exists))
        if errors:
            refuse(module, errors, queries)
        content, previous, changed, result = compare(params)
        result.update(online=online, queries=queries)
        if module.check_mode:
            pending = sorted(name for name, row in pgc.catalogue(connection).items() if row["pending_restart"])
            restart_settings = sorted(set(restart) | set(pending))
            module.exit_json(restart_required=bool(restart_settings), restart_settings=restart_settings, **result)
        if changed:
            write(module, content)
            loaded_before = pgc.query(connection, "SELECT pg_conf_load_time()")[0][0]
            pgc.query(connection, "SELECT pg_reload_conf()")
            queries.append("SELECT pg_reload_conf()")
            deadline = time.time() + params["reload_timeout"]
            while True:
                # the reload is a signal: wait until a new session sees the new load time
                probe = pgc.connect(params)
                loaded = pgc.query(probe, "SELECT pg_conf_load_time()")[0][0]
                if loaded > loaded_before:
                    connection.close()
                    connection = probe
                    break
                probe.close()
                if time.time() > deadline:
                    module.fail_json(msg="the server did not reload %s within %d s"
                                         % (params["path"], params["reload_timeout"]))
                time.sleep(0.2)
            # 'setting could not be applied' only means the setting waits for a restart (pending_restart)
            bad = pgc.query(connection, "SELECT name, error FROM pg_file_settings WHERE sourcefile = %s "
                                        "AND error IS NOT NULL AND error <> 'setting could not be applied'",
                            (params["path"],))
            if bad:
                module.fail_json(msg="the server did not accept %s: %s" % (params["path"], bad), queries=queries)
        pending = sorted(name for name, row in pgc.catalogue(connection).items() if row["pending_restart"])
        queries.append("SELECT name FROM pg_settings WHERE pending_restart")
        module.exit_json(restart_required=bool(pending), restart_settings=pending, **result)
    finally:
        connection.close()


if __name__ == "__main__":
    main()
