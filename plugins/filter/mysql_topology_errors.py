# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: mysql_topology_errors
short_description: Refusals of a host's replication topology, read from the inventory
version_added: 0.1.0
description:
  - "Reads every inventory host's C(percona_server_source), C(percona_server_server_id) and
    C(percona_server_address) (or, for a host that published them, C(percona_server_topology_declared), the
    values the play gives the role, which C(hostvars) does not show) and refuses a source that is the host
    itself or not an inventory host, a chain of sources that loops, and two servers of one replication
    topology with the same server_id."
  - "Membership comes from the inventory hosts given, never from the play's hosts, so C(--limit) cannot hide a
    conflict. A host outside the play whose server_id derives from facts is not compared."
positional: _input, hostvars, inventory_hosts
options:
  _input:
    description: Inventory name of the host being checked.
    type: str
    required: true
  hostvars:
    description: C(hostvars).
    type: dict
    required: true
  inventory_hosts:
    description: Inventory hosts to consider, normally C(groups['all']).
    type: list
    elements: str
    required: true
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Refuse a topology that cannot replicate
  ansible.builtin.assert:
    that: errors | length == 0
    fail_msg: "{{ errors }}"
  vars:
    errors: "{{ inventory_hostname | dbops.clusters.mysql_topology_errors(hostvars, groups['all']) }}"
"""

RETURN = r"""
_value:
  description: One sentence per problem.
  type: list
  elements: str
"""

from ansible_collections.dbops.clusters.plugins.module_utils import mysql_inputs


def _hostvar(hostvars, host, name, default):
    """hostvars[host][name], or default when it is not set or cannot be templated on the controller (no facts)."""
    try:
        value = hostvars[host][name]
    except Exception:  # pylint: disable=broad-except  # an undefined or untemplatable value means "not known"
        return default
    return default if value is None else value


def _declared(hostvars, host):
    """The source, server_id and address `host` will use: what it published (percona_server_topology_declared,
    set by the role's validate.yml from the values the play gives it), else its inventory variables."""
    published = _hostvar(hostvars, host, "percona_server_topology_declared", None)
    if isinstance(published, dict):
        return published.get("source"), published.get("server_id"), published.get("address")
    return (_hostvar(hostvars, host, "percona_server_source", ""),
            _hostvar(hostvars, host, "percona_server_server_id", 0),
            _hostvar(hostvars, host, "percona_server_address", ""))


def mysql_topology_errors(me, hostvars, inventory_hosts):
    """Topology refusals for host `me`, from every inventory host's percona_server_source and server_id."""
    hosts = {}
    for host in inventory_hosts:
        source, explicit, address = _declared(hostvars, host)
        try:
            server_id = mysql_inputs.server_id_for(address or "", explicit or 0)
        except (TypeError, ValueError):
            server_id = None   # no facts for a host outside the play: its derived id is not known here
        hosts[host] = {"source": str(source or ""), "server_id": server_id}
    return mysql_inputs.topology_errors(me, hosts)


class FilterModule(object):
    def filters(self):
        return {"mysql_topology_errors": mysql_topology_errors}
