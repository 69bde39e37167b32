#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: mysql_config
short_description: Write a MySQL option file with reasons, apply dynamic settings online, say when a restart is due
version_added: 0.1.0
description:
  - Renders I(settings) into one option file, each setting preceded by its reason as a comment.
  - Settings marked dynamic whose running value differs are applied online with C(SET GLOBAL); the file keeps
    them across restarts. Static settings never change a running server; when one changed (compared with the
    file this module wrote before, or with the running server the first time) the module returns
    C(restart_required) and a reason per setting, and the caller restarts.
  - Runs on the database host and connects through the Unix socket as root by default. A server that does not
    answer (not started) gets the file only; a server that answers and refuses the login (access denied) is a
    failure, never taken for a stopped server.
  - The file is written atomically (a temporary file in the same directory, renamed over the old one) with
    I(owner), I(group) and I(mode).
options:
  path:
    description: Option file to write, for example C(/etc/mysql/mysql.conf.d/zz-dbops.cnf).
    type: path
    required: true
  settings:
    description:
      - Option name to a dict with C(value), C(reason), C(dynamic) (can be changed with SET GLOBAL),
        C(online) (false for options that are not server variables, such as C(log_bin) with a base name) and
        C(restarts) (default true; false for an option a running server does not need again, such as Galera's
        C(wsrep_cluster_address), read only to find peers at startup; its change is written, never a restart
        reason).
      - An empty C(value) writes the bare option name (for example C(skip_name_resolve)).
    type: dict
    required: true
  header:
    description: Comment text written at the top of the file.
    type: str
    default: Managed by Ansible (dbops.clusters). Each setting is preceded by the reason for its value.
  section:
    description: Option file section.
    type: str
    default: mysqld
  apply_online:
    description: Apply changed dynamic settings with SET GLOBAL.
    type: bool
    default: true
  mode:
    description: File mode of the option file, in octal (for example C("0644")); anything else is refused.
    type: str
    default: "0644"
  owner:
    description: Owner of the option file.
    type: str
    default: root
  group:
    description: Group of the option file.
    type: str
    default: root
  server_binary:
    description:
      - The server binary (C(/usr/sbin/mysqld), C(/usr/sbin/mariadbd)). When given, every option name is checked
        against the names the binary lists with C(--verbose --help) before the file is written, and an unknown
        one is refused (with the closest known name), because the server would refuse to start with it.
      - Names with the C(loose-) prefix are not checked (the server ignores those it does not know).
      - The values are checked by the binary too, before the file is written. The settings it lists (not
        C(loose-), not plugin loads) are written to a private 0600 option file given to
        C(--defaults-file=FILE --verbose --help), which parses them as a start would and prints the value each
        would run with, starting nothing. A value it refuses (an enum value it does not know, a malformed size)
        is refused with its error; a setting whose C(source) is C(override) (the user's) that it would move into
        its accepted range is refused with the value it would run.
      - When the binary does not exist, the check fails; in check mode it is skipped with a warning (the
        package may be installed by an earlier task of the same run).
    type: path
  override_variable:
    description: The role variable that holds the user's overrides (settings with C(source) C(override)), named
      in a refusal of their values.
    type: str
    default: overrides
  restart_pending_file:
    description:
      - A file that keeps the reasons for a restart until the caller has made it. When static settings change,
        their reasons are written there B(before) the option file, so a run that stops between the file and the
        restart (a failure, a killed play, a lost connection) leaves the restart due. Without it, the next run
        finds the option file as it wants it and only reports the running value as drift.
      - While the file holds reasons, C(restart_required) is true and each earlier reason is returned prefixed
        with C(pending since an earlier run). The caller removes the file once the restarted server passed its
        health gate.
      - In check mode the file is read, never written.
    type: path
  flavor:
    description:
      - With I(version), the flavor the settings are for (C(percona) or C(mysql)). Any setting that release
        removed (C(module_utils/mysql_removed_options.py)) is refused before the file is written, naming the
        release and its replacement; a renamed one too (the plan writes the new name).
    type: str
  version:
    description: The release or series (C(8.4), C(9.7.4)) the settings are for; see I(flavor).
    type: str
extends_documentation_fragment:
  - dbops.clusters.mysql_login
attributes:
  check_mode:
    support: full
    description: Returns the file diff, the SET GLOBAL statements and the restart decision without changing anything.
  diff_mode:
    support: full
    description: Shows the option file before and after.
requirements:
  - PyMySQL
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Configure the server from the tuning report
  dbops.clusters.mysql_config:
    path: /etc/mysql/mysql.conf.d/zz-dbops.cnf
    settings:
      innodb_io_capacity: {value: 2000, dynamic: true, reason: "SSD: 2000 IOPS of background flushing"}
      innodb_buffer_pool_instances: {value: 4, dynamic: false, reason: "one per GiB of buffer pool"}
  register: config

- name: Restart only when a static setting changed
  ansible.builtin.service:
    name: mysql
    state: restarted
  when: config.restart_required
"""

RETURN = r"""
restart_required:
  description: Whether a static setting changed, so the server must restart to use the file.
  returned: always
  type: bool
restart_reasons:
  description:
    - One sentence per static setting that forces the restart; with I(restart_pending_file), also the reasons an
      earlier run wrote there and no restart has cleared, each prefixed with C(pending since an earlier run).
  returned: always
  type: list
  elements: str
  sample: ["innodb_buffer_pool_instances: 1 -> 4"]
applied_online:
  description: Dynamic settings changed on the running server, with the value before and after.
  returned: always
  type: dict
  sample: {innodb_io_capacity: {before: "200", after: "2000"}}
queries:
  description: Statements run (or, in check mode, that would run), with placeholders for values.
  returned: always
  type: list
  elements: str
server_running:
  description: Whether the server answered; when it did not, only the file was written.
  returned: always
  type: bool
options_checked_against:
  description: The server binary whose option list the names were checked against, or null when not checked.
  returned: always
  type: str
file_changed:
  description: Whether the option file changed.
  returned: always
  type: bool
warnings_seen:
  description: Values the server adjusted after SET GLOBAL (it may clamp or round them).
  returned: always
  type: list
  elements: str
drift:
  description: Static settings already in the file whose running value differs (adjusted by the server at startup).
  returned: always
  type: list
  elements: str
unchecked:
  description: Settings the server does not report as variables; judged by the file alone.
  returned: always
  type: list
  elements: str
"""

import os

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.dbops.clusters.plugins.module_utils import (
    mysql_errors, mysql_removed_options, mysql_server_options, mysql_settings)
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_tuning import plan_version
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_connection import (
    HAS_PYMYSQL, LOGIN_ARGUMENT_SPEC, PYMYSQL_IMPORT_ERROR, ConnectionError_, Session, connect, pymysql)
from ansible_collections.dbops.clusters.plugins.module_utils.text_file import mode_error, read_text, write_atomically


def check_option_names(module, settings):
    """Refuse option names the server binary does not list, and values it would not start with, before anything is
    written. Returns the binary or None."""
    binary = module.params["server_binary"]
    if not binary:
        return None
    known = mysql_server_options.known_options(module, binary)
    if known is None:
        if module.check_mode:
            module.warn("%s does not exist yet: option names not checked in check mode" % binary)
            return None
        module.fail_json(msg="server_binary %s does not exist: cannot check the option names" % binary)
    message = mysql_server_options.refusal("settings", settings, known, binary)
    if message:
        module.fail_json(msg=message, unknown_options=mysql_settings.unknown_options(settings, known))
    refusals = mysql_server_options.value_refusals(module, binary, settings, known, module.params["override_variable"])
    if refusals:
        module.fail_json(msg="%s (checked by %s --verbose --help, which parses the values as a start would). "
                             "Nothing was written." % ("; ".join(refusals), binary), refused_values=refusals)
    return binary


def write_option_file(module, path, text, mode, owner, group):
    """The whole file, atomically (text_file.write_atomically); a missing directory names the likely cause."""
    try:
        write_atomically(path, text, mode, owner, group)
    except OSError as err:
        module.fail_json(msg="cannot write %s: %s (is the server package installed?)" % (path, err))
    except KeyError as err:
        module.fail_json(msg="cannot write %s: %s" % (path, err.args[0]))


PENDING_SINCE = "pending since an earlier run: "


def keep_restart_pending(module, restart_reasons):
    """Record this run's restart reasons in restart_pending_file before the option file changes, and add the
    reasons an earlier run left there. Returns (reasons to report, whether the pending file changed)."""
    pending_file = module.params["restart_pending_file"]
    if not pending_file:
        return restart_reasons, False
    earlier = [line for line in (read_text(pending_file) or "").splitlines() if line.strip()]
    reasons = restart_reasons + [PENDING_SINCE + reason for reason in earlier if reason not in restart_reasons]
    wanted = earlier + [reason for reason in restart_reasons if reason not in earlier]
    if wanted == earlier:
        return reasons, False
    if not module.check_mode:
        write_option_file(module, pending_file, "".join(reason + "\n" for reason in wanted), "0600", None, None)
    return reasons, True


def removed_settings(flavor, version, settings):
    """Sentences refusing settings the flavor's release removed or renamed, or [] (nothing to judge without both)."""
    if not flavor or not version:
        return []
    refused = []
    for option in sorted(settings):
        found = mysql_removed_options.decision(option, settings[option].get("value"), flavor, plan_version(version))
        if found and found["action"] == "refuse":
            refused.append("settings.%s: %s" % (option, found["reason"]))
        elif found:
            # The plan translates a user's override; a setting that still has the old name is a caller's bug.
            refused.append("settings.%s: %s was removed in %s (%s); write %s" % (
                option, found["key"], found["removed_in"], found["why"], found["to"]))
    return refused


def main():
    argument_spec = dict(
        path=dict(type="path", required=True),
        settings=dict(type="dict", required=True),
        header=dict(type="str", default="Managed by Ansible (dbops.clusters). Each setting is preceded by the "
                                        "reason for its value."),
        section=dict(type="str", default="mysqld"),
        apply_online=dict(type="bool", default=True),
        mode=dict(type="str", default="0644"),
        owner=dict(type="str", default="root"),
        group=dict(type="str", default="root"),
        server_binary=dict(type="path"),
        override_variable=dict(type="str", default="overrides"),
        restart_pending_file=dict(type="path"),
        flavor=dict(type="str"),
        version=dict(type="str"),
    )
    argument_spec.update(LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    if not HAS_PYMYSQL:
        module.fail_json(msg=missing_required_lib("PyMySQL"), exception=str(PYMYSQL_IMPORT_ERROR))
    bad_mode = mode_error("mode", module.params["mode"])
    if bad_mode:
        module.fail_json(msg=bad_mode)

    settings = {}
    for option, setting in module.params["settings"].items():
        try:
            mysql_settings.validate_name(option)
        except ValueError as err:
            module.fail_json(msg="settings: %s" % err)
        if not isinstance(setting, dict) or "value" not in setting:
            module.fail_json(msg="settings.%s must be a dict with at least 'value'" % option)
        settings[option] = setting
    removed = removed_settings(module.params["flavor"], module.params["version"], settings)
    if removed:
        module.fail_json(msg="%s. Nothing was written." % "; ".join(removed))
    checked_against = check_option_names(module, settings)

    path, section = module.params["path"], module.params["section"]
    before = read_text(path)
    after = mysql_settings.render(settings, module.params["header"], section)
    previous = mysql_settings.parse(before, section) if before is not None else None

    session, running = None, None
    try:
        session = Session(connect(module.params), check_mode=module.check_mode)
        running = session.variables(sorted(set(mysql_settings.variable_name(o) for o in settings)))
    except ConnectionError_ as err:
        # Only a server that did not answer is "not running"; one that refused us must not be configured blind.
        if not mysql_errors.is_unreachable(err):
            module.fail_json(msg="%s. The server runs but refused the login, so its settings cannot be compared "
                                 "or applied: nothing was written." % err)
        session = None

    online, restart_reasons, drift, unchecked = mysql_settings.plan(settings, previous, running)

    restart_reasons, pending_changed = keep_restart_pending(module, restart_reasons)
    file_changed = before != after
    if file_changed and not module.check_mode:
        write_option_file(module, path, after, module.params["mode"], module.params["owner"], module.params["group"])
    file_args = module.load_file_common_arguments(dict(path=path, mode=module.params["mode"],
                                                       owner=module.params["owner"], group=module.params["group"]))
    attributes_changed = False
    if os.path.exists(path):
        attributes_changed = module.set_fs_attributes_if_different(file_args, False)

    applied, adjusted = {}, []
    if session is not None and module.params["apply_online"]:
        for option, variable, was, wanted in online:
            try:
                session.execute("SET GLOBAL %s = %%s" % variable, (mysql_settings.sql_value(wanted),))
            except pymysql.err.MySQLError as err:  # the server's refusal, by number, is the message
                module.fail_json(msg="SET GLOBAL %s = %s failed: %s" % (variable, wanted, mysql_errors.describe(err)),
                                 queries=session.queries)
            if module.check_mode:
                applied[option] = {"before": was, "after": str(wanted)}
                continue
            now = session.variables([variable]).get(variable)
            if mysql_settings.normalize(now) != mysql_settings.normalize(was):
                applied[option] = {"before": was, "after": now}
            if mysql_settings.normalize(now) != mysql_settings.normalize(wanted):
                adjusted.append("%s: asked for %s, the server runs %s" % (option, wanted, now))
    queries = session.queries if session is not None else []
    if session is not None:
        session.close()

    module.exit_json(
        changed=file_changed or attributes_changed or bool(applied) or pending_changed,
        file_changed=file_changed,
        restart_required=bool(restart_reasons),
        restart_reasons=restart_reasons,
        applied_online=applied,
        queries=queries,
        server_running=running is not None,
        options_checked_against=checked_against,
        unchecked=unchecked,
        drift=drift,
        warnings_seen=adjusted,
        diff={"before": before or "", "after": after, "before_header": path, "after_header": path},
    )


if __name__ == "__main__":
    main()
