#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: text_files
short_description: Keep several small text files and their directories on a host in one module run
version_added: 0.1.0
description:
  - Creates the I(directories), then writes each of the I(files) whose content differs, and sets mode, owner and
    group where they differ. A file is written atomically (a temporary file beside it gets the final mode and
    owner first and is then renamed over the old one), so a key is never readable by more than its mode allows.
  - One run of this module replaces a C(ansible.builtin.copy) or C(template) task per file. Each of those costs
    several round trips to the host even when nothing changes (a temporary directory, a stat, a file module,
    a clean-up); the roles write their credential, TLS and unit files with this module instead.
  - A file marked I(secret) has its content, old and new, kept out of the result and the diff. A file marked
    I(create_only) is written only when it does not exist; an existing one is left as it is.
options:
  files:
    description: The files, written in this order.
    type: list
    elements: dict
    required: true
    suboptions:
      path:
        description: Absolute path of the file. Its directory must exist or be in I(directories).
        type: path
        required: true
      content:
        description: The whole text of the file.
        type: str
        required: true
      mode:
        description: File mode in octal, as a quoted string (for example C("0600")); anything else is refused.
        type: raw
        required: true
      owner:
        description: Owner of the file.
        type: str
        default: root
      group:
        description: Group of the file.
        type: str
        default: root
      secret:
        description: Keep the content (old and new) out of the result and the diff.
        type: bool
        default: false
      create_only:
        description: Write the file only when it does not exist; an existing file keeps its content and attributes.
        type: bool
        default: false
      validate:
        description:
          - A command that checks the new content before it replaces the file, with C(%s) where the path of the
            complete temporary file goes (for example C(keepalived -t -f %s)). Run without a shell. When it
            fails, the old file stays and the module fails with the command's output.
          - Not run in check mode.
        type: str
  directories:
    description: Directories created (or given this mode and owner) before any file is written.
    type: list
    elements: dict
    default: []
    suboptions:
      path:
        description:
          - Absolute path of the directory. Missing parents are created first, C(0755) and owned by the user the
            module runs as (as C(mkdir -p) would); the directory itself gets I(mode), I(owner) and I(group).
        type: path
        required: true
      mode:
        description: Directory mode in octal, as a quoted string (for example C("0750")).
        type: raw
        required: true
      owner:
        description: Owner of the directory.
        type: str
        default: root
      group:
        description: Group of the directory.
        type: str
        default: root
attributes:
  check_mode:
    support: full
    description: Returns which files and directories would change, with the diff, and changes nothing.
  diff_mode:
    support: full
    description: One diff per file whose content changes; a secret file's content is not shown.
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Install the TLS files of the server
  dbops.clusters.text_files:
    directories:
      - {path: /etc/mysql/tls, mode: "0750", owner: root, group: mysql}
    files:
      - {path: /etc/mysql/tls/ca.pem, content: "{{ ca_pem }}", mode: "0644", owner: mysql, group: mysql}
      - {path: /etc/mysql/tls/server-key.pem, content: "{{ key_pem }}", mode: "0600", owner: mysql,
         group: mysql, secret: true}
"""

RETURN = r"""
written:
  description: Files whose content was written (or, in check mode, would be).
  returned: always
  type: list
  elements: str
attributes_changed:
  description: Files and directories whose mode, owner or group was set (or would be), content unchanged.
  returned: always
  type: list
  elements: str
created_directories:
  description: Directories created (or that would be).
  returned: always
  type: list
  elements: str
"""

import os
import shlex

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dbops.clusters.plugins.module_utils.text_file import (
    mode_error, owner_ids, read_text, write_atomically)

SECRET_SHOWN_AS = "(secret content not shown)\n"


def input_errors(params):
    """Every bad input, each naming its place, found before anything changes: (errors, unknown owners). An owner
    or group that does not exist yet is an error in a run and a warning in check mode (the package that creates
    it may be installed by an earlier task of the same run)."""
    errors, unknown_owners = [], []
    for kind in ("directories", "files"):
        seen = set()
        for index, entry in enumerate(params[kind]):
            where = "%s[%d] (%s)" % (kind, index, entry["path"])
            if not os.path.isabs(entry["path"]):
                errors.append("%s: the path must be absolute" % where)
            if entry["path"] in seen:
                errors.append("%s: the path is given twice" % where)
            seen.add(entry["path"])
            error = mode_error(where + ": mode", entry["mode"])
            if error:
                errors.append(error)
            if entry.get("validate") is not None and "%s" not in entry["validate"]:  # directories have none
                errors.append("%s: validate must contain %%s where the file's path goes" % where)
            try:
                owner_ids(entry["owner"], entry["group"])
            except KeyError as err:
                unknown_owners.append("%s: %s" % (where, err.args[0]))
    return errors, unknown_owners


def attributes_differ(module, entry, path):
    """Whether the existing `path` needs its mode, owner or group set (set unless in check mode)."""
    try:
        owner_ids(entry["owner"], entry["group"])
    except KeyError:
        return True  # check mode only (input_errors refused it otherwise): the owner cannot be the one asked for
    file_args = module.load_file_common_arguments(dict(path=path, mode=entry["mode"], owner=entry["owner"],
                                                       group=entry["group"]))
    return module.set_fs_attributes_if_different(file_args, False)


def keep_directories(module, result):
    for entry in module.params["directories"]:
        path = entry["path"]
        if os.path.isdir(path):
            if attributes_differ(module, entry, path):
                result["attributes_changed"].append(path)
            continue
        if os.path.exists(path):
            module.fail_json(msg="directories: %s exists and is not a directory" % path, **result)
        missing = [path]  # the directory, then each parent that does not exist, up to one that does
        while not os.path.exists(os.path.dirname(missing[-1])) \
                and os.path.dirname(missing[-1]) not in result["created_directories"]:  # check mode: planned
            missing.append(os.path.dirname(missing[-1]))
        result["created_directories"].extend(reversed(missing))
        if module.check_mode:
            continue
        try:
            for parent in reversed(missing[1:]):
                os.mkdir(parent)
                os.chmod(parent, 0o755)  # not cut by the umask
            os.mkdir(path, int(entry["mode"], 8))
        except OSError as err:
            module.fail_json(msg="directories: cannot create %s: %s" % (path, err), **result)
        attributes_differ(module, entry, path)  # mkdir's mode is cut by the umask


def keep_files(module, result, diffs):
    planned_directories = set(result["created_directories"])
    for entry in module.params["files"]:
        path = entry["path"]
        before = read_text(path) if os.path.isfile(path) else None
        if os.path.exists(path) and before is None:
            module.fail_json(msg="files: %s exists and is not a regular file" % path, **result)
        if entry["secret"] and before:
            module.no_log_values.add(before)  # the old secret stays out of the result too
        if before is not None and (entry["create_only"] or before == entry["content"]):
            if not entry["create_only"] and attributes_differ(module, entry, path):
                result["attributes_changed"].append(path)
            continue
        directory = os.path.dirname(path)
        if not os.path.isdir(directory) and not (module.check_mode and directory in planned_directories):
            module.fail_json(msg="files: the directory of %s does not exist (add it to directories)" % path, **result)
        result["written"].append(path)
        shown_before = SECRET_SHOWN_AS if entry["secret"] and before else (before or "")
        shown_after = SECRET_SHOWN_AS if entry["secret"] else entry["content"]
        diffs.append(dict(before=shown_before, after=shown_after, before_header=path, after_header=path))
        if module.check_mode:
            continue
        try:
            write_atomically(path, entry["content"], entry["mode"], entry["owner"], entry["group"],
                             check=validator(module, entry, result))
        except (OSError, KeyError) as err:
            module.fail_json(msg="files: cannot write %s: %s" % (path, err), **result)


def validator(module, entry, result):
    """The entry's validate command as a check of the temporary file, or None."""
    if entry["validate"] is None:
        return None

    def check(tmp_path):
        argv = [word.replace("%s", tmp_path) for word in shlex.split(entry["validate"])]
        rc, out, err = module.run_command(argv)
        if rc != 0:
            module.fail_json(msg="files: %s was not replaced: %s exited %d: %s"
                                 % (entry["path"], entry["validate"], rc, (err or out).strip()), **result)
    return check


def main():
    entry_options = dict(path=dict(type="path", required=True), mode=dict(type="raw", required=True),
                         owner=dict(type="str", default="root"), group=dict(type="str", default="root"))
    file_options = dict(entry_options, content=dict(type="str", required=True), validate=dict(type="str"),
                        secret=dict(type="bool", default=False), create_only=dict(type="bool", default=False))
    module = AnsibleModule(
        argument_spec=dict(
            files=dict(type="list", elements="dict", required=True, options=file_options),
            directories=dict(type="list", elements="dict", default=[], options=entry_options),
        ),
        supports_check_mode=True,
    )
    for entry in module.params["files"]:
        if entry["secret"] and entry["content"]:
            module.no_log_values.add(entry["content"])
    result = dict(written=[], attributes_changed=[], created_directories=[])
    errors, unknown_owners = input_errors(module.params)
    if module.check_mode:
        for message in unknown_owners:
            module.warn(message + " (check mode: predicted as if an earlier task created it)")
    else:
        errors += unknown_owners
    if errors:
        module.fail_json(msg="; ".join(errors), **result)
    diffs = []
    keep_directories(module, result)
    keep_files(module, result, diffs)
    changed = any(result[key] for key in result)
    module.exit_json(changed=changed, diff=diffs, **result)


if __name__ == "__main__":
    main()
