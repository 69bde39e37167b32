# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: mongodb_keyfile_rotation_plan
short_description: The steps of a MongoDB replica set's key rotation from its members' keyfiles as they are
version_added: 0.1.0
description:
  - MongoDB's rotation without downtime (module_utils/mongodb_keyfile.py rotation_plan) - every keyfile holds the
    old key and the new one, a rolling restart, then the new key alone, a second rolling restart. Resumes from
    any stop - a member that owes a restart (its pending reason) may still run its old file.
  - The result holds both keyfiles' contents (secrets) - keep the task that sets it C(no_log).
positional: _input, new_key, pending, until
options:
  _input:
    description: Each member's keyfile text, null when it has none.
    type: dict
    required: true
  new_key:
    description: The key to end with (mongodb_rs_keyfile_content).
    type: str
    required: true
  pending:
    description: Each member's pending restart reasons.
    type: dict
    required: true
  until:
    description: C(new) for the whole rotation, C(both) to stop once every member runs both keys.
    type: str
    default: new
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Plan the rotation
  ansible.builtin.set_fact:
    plan: "{{ files | dbops.clusters.mongodb_keyfile_rotation_plan(new_key, pending) }}"
  no_log: true
"""

RETURN = r"""
_value:
  description: C(refusals), C(steps) (C(both) and/or C(new), in order), C(write_both) and C(write_new) (the members
    whose file each step rewrites), C(both_content) and C(new_content) (secrets), C(why).
  type: dict
"""

from ansible.errors import AnsibleFilterError
from ansible_collections.dbops.clusters.plugins.module_utils import mongodb_keyfile


def mongodb_keyfile_rotation_plan(files, new_key, pending, until=mongodb_keyfile.NEW):
    if until not in (mongodb_keyfile.BOTH, mongodb_keyfile.NEW):
        raise AnsibleFilterError("mongodb_rs_keyfile_rotation_until must be 'both' or 'new', not %r" % (until,))
    return mongodb_keyfile.rotation_plan(
        dict((str(member), None if text is None else str(text)) for member, text in files.items()),
        str(new_key), dict((str(member), [str(reason) for reason in reasons]) for member, reasons in pending.items()),
        str(until))


class FilterModule(object):
    def filters(self):
        return {"mongodb_keyfile_rotation_plan": mongodb_keyfile_rotation_plan}
