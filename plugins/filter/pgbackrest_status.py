# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: pgbackrest_status
short_description: Whether a pgBackRest stanza is backed up, from its info and its scheduled units
version_added: 0.1.0
description:
  - Takes C(pgbackrest --output=json info) of the stanza and the systemd properties of its scheduled backup units
    (services and timers). Gives the newest backup of each type with its age, each unit's last run and next start,
    and the problems found, one sentence each - no backup, the newest older than O(max_age_hours), a backup with
    page checksum errors, a timer not enabled or not active, a unit whose last run failed.
positional: _input, now, units, max_age_hours, stanza
options:
  _input:
    description: The parsed JSON of C(pgbackrest --stanza=S --output=json info).
    type: list
    elements: dict
    required: true
  now:
    description: Seconds since the epoch on the repository host.
    type: int
    required: true
  units:
    description: Unit name to its systemd properties (the C(status) that M(ansible.builtin.systemd_service) returns).
    type: dict
    required: true
  max_age_hours:
    description: Age, in hours, past which the newest backup is a problem.
    type: int
    required: true
  stanza:
    description: The stanza's name.
    type: str
    required: true
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Sum up the stanza's backups
  ansible.builtin.set_fact:
    status: "{{ info.stdout | from_json | dbops.clusters.pgbackrest_status(now.stdout | int, units, 26, 'main') }}"
"""

RETURN = r"""
_value:
  description: stanza, state, backups (count), newest, by_type, units and problems (empty when all is well).
  type: dict
"""

from ansible_collections.dbops.clusters.plugins.module_utils.pgbackrest_status import summarize


def pgbackrest_status(info, now, units, max_age_hours, stanza):
    return summarize(info, int(now), units, int(max_age_hours), stanza)


class FilterModule(object):
    def filters(self):
        return {"pgbackrest_status": pgbackrest_status}
