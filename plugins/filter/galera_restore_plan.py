# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: galera_restore_plan
short_description: Whether one Galera member, or the whole cluster, may be restored from a backup now, and the grastate.dat
version_added: 0.1.0
description:
  - From every member's wsrep status (C(galera_state)'s C(wsrep)) and the backup's C(mariadb_backup_galera_info), returns
    C(refusal) (empty when the rebuild may run), C(position) (C(uuid), C(seqno), C(gtid)) and C(grastate) (the
    grastate.dat that makes the member ask a donor for the write-sets after the backup, IST, instead of a full
    SST).
  - Refuses when the member is the last Synced one, when taking it out would leave no majority of the members in
    the Primary component, when the backup holds no Galera position, or when the backup belongs to another
    cluster (its uuid is not the running cluster's).
  - With an empty I(target), the whole cluster is restored - refused while a Primary component runs unless
    I(force).
positional: _input, members, target, galera_info, cluster_uuid, force
options:
  _input:
    description: Member name to its C(galera_state) C(wsrep) (null for a member that does not run).
    type: dict
    required: true
  members:
    description: The members, in the inventory group's order.
    type: list
    elements: str
    required: true
  target:
    description: The member to rebuild; empty for the whole cluster.
    type: str
    required: true
  galera_info:
    description: The text of the backup's mariadb_backup_galera_info.
    type: str
    required: true
  cluster_uuid:
    description: The running cluster's state uuid; empty skips the check.
    type: str
    default: ""
  force:
    description: For the whole cluster, restore over a running Primary component.
    type: bool
    default: false
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Decide
  ansible.builtin.set_fact:
    plan: "{{ states | dbops.clusters.galera_restore_plan(groups['galera'], 'g5', info_text, uuid) }}"
"""

RETURN = r"""
_value:
  description: C(refusal), C(position) and C(grastate).
  type: dict
"""

from ansible_collections.dbops.clusters.plugins.module_utils import galera_backup


def galera_restore_plan(states, members, target, galera_info, cluster_uuid="", force=False):
    if target:
        refusal = galera_backup.restore_refusal(dict(states), list(members), target)
    else:
        refusal = galera_backup.cluster_restore_refusal(dict(states), list(members), force)
    try:
        position = galera_backup.parse_galera_info(galera_info)
    except galera_backup.BackupRefused as err:
        return {"refusal": refusal or str(err), "position": {}, "grastate": ""}
    if not refusal and cluster_uuid and position["uuid"] != str(cluster_uuid).lower():
        refusal = ("the backup was taken from cluster %s, the running cluster is %s: its write-sets cannot be "
                   "replayed here" % (position["uuid"], cluster_uuid))
    return {"refusal": refusal, "position": position, "grastate": galera_backup.grastate_text(position)}


class FilterModule(object):
    def filters(self):
        return {"galera_restore_plan": galera_restore_plan}
