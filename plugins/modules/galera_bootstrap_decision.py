#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: galera_bootstrap_decision
short_description: Decide which Galera node bootstraps after a full stop, and the order in which the others join
version_added: 0.1.0
description:
  - Pure decision from the M(dbops.clusters.galera_state) results of every node; connects to nothing. Run it
    once, for example with C(run_once) and C(delegate_to localhost).
  - When any node runs in a Primary component, nothing is bootstrapped (a second Primary component would
    split the cluster); the nodes outside it join one at a time. When all of them run in it, the decision
    is C(none).
  - When no node runs and no node has cluster state (no uuid, or the all-zero uuid, with seqno -1), this is
    a new cluster; the first node in the order of I(states) bootstraps and the others join in that order.
  - After a full stop, the node with the highest seqno bootstraps (a seqno recovered with
    C(--wsrep-recover) counts); on a tie the one whose grastate.dat has C(safe_to_bootstrap 1); if several
    remain equally advanced, the first in the order of I(states). Nodes without state join after it.
  - It refuses (fails, naming the nodes) when it cannot compare positions, rather than guess. That is when a
    node's result is missing, failed or unreachable, or fewer nodes than I(expected_size) reported; when
    nodes hold different cluster uuids; when a node with state has seqno -1 that was not recovered; when a
    node with state runs outside any Primary component.
  - I(force_node) skips those refusals and chooses that node; the reason lists what was overridden. It never
    bootstraps while a Primary component runs, nor a node that is running, nor one in I(out_of_play).
  - Members listed in I(out_of_play) (outside the play because of C(--limit), or unreachable) are never
    started. Joining the others to a Primary component that runs goes ahead without them, but a new Primary
    component is refused while any member is out of the play (unless I(force_node) names one).
  - With I(mode=converge), a node that runs outside a Primary component is refused, because an ordinary
    converge neither stops nor restarts a running server; C(playbooks/galera_recover.yml) does
    (I(mode=recover)).
options:
  states:
    description:
      - Inventory host name to the full registered result of M(dbops.clusters.galera_state) on that host, in
        inventory order (the order breaks ties). A missing (null or empty), failed, skipped or unreachable
        result counts as unknown.
    type: dict
    required: true
  expected_size:
    description: Number of nodes in the inventory's cluster.
    type: int
    required: true
  out_of_play:
    description:
      - Members of I(states) that this run cannot start (outside the play, unreachable).
    type: list
    elements: str
    default: []
  mode:
    description:
      - C(converge) refuses when a node runs outside a Primary component; C(recover) expects the caller to have
        stopped such nodes (or to restart them) and joins them.
    type: str
    choices: [converge, recover]
    default: recover
  force_node:
    description:
      - An operator's explicit choice of the bootstrap node, after checking that it holds the data to keep.
        Overrides the refusals above; transactions that only the other nodes committed are lost.
    type: str
attributes:
  check_mode:
    support: full
    description: The same computation and output as a normal run (the module is pure).
  diff_mode:
    support: none
    description: Returns a decision, changes nothing.
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Read every node's Galera position
  dbops.clusters.galera_state:
  register: galera

- name: Decide who bootstraps
  dbops.clusters.galera_bootstrap_decision:
    states: "{{ dict(ansible_play_hosts_all | zip(ansible_play_hosts_all | map('extract', hostvars, 'galera'))) }}"
    expected_size: "{{ groups['galera'] | length }}"
    force_node: "{{ galera_force_bootstrap_node | default(omit) }}"
  run_once: true
  delegate_to: localhost
  register: bootstrap

- name: Allow the chosen node to bootstrap
  ansible.builtin.lineinfile:
    path: /var/lib/mysql/grastate.dat
    regexp: '^safe_to_bootstrap:'
    line: 'safe_to_bootstrap: 1'
  when:
    - inventory_hostname == bootstrap.bootstrap_node
    - bootstrap.set_safe_to_bootstrap
"""

RETURN = r"""
decision:
  description:
    - C(bootstrap) (start I(bootstrap_node) as a new Primary component, then the I(join_order) nodes),
      C(join) (a Primary component runs; start the I(join_order) nodes one at a time) or C(none).
  returned: always
  type: str
bootstrap_node:
  description: The node to bootstrap, or null.
  returned: always
  type: str
  sample: g1
join_order:
  description: Nodes to start one at a time, after the bootstrap node when there is one.
  returned: always
  type: list
  elements: str
  sample: [g2, g3]
nodes:
  description: Per host, C(action) (C(bootstrap), C(join) or C(none)) and C(reason).
  returned: always
  type: dict
  sample: {g1: {action: bootstrap, reason: "highest seqno 12 (recovered by --wsrep-recover), others at 10, 10"}}
reason:
  description: One sentence on the decision.
  returned: always
  type: str
running_size:
  description:
    - Size of the Primary component before the joins (its C(wsrep_cluster_size)); 1 after a bootstrap. The
      I(n)th joiner's gate expects C(running_size + n).
  returned: always
  type: int
  sample: 2
set_safe_to_bootstrap:
  description:
    - Whether the chosen node's grastate.dat says C(safe_to_bootstrap 0) and must be set to 1 before it is
      started with C(galera_new_cluster) (Galera refuses to bootstrap from it otherwise).
  returned: always
  type: bool
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dbops.clusters.plugins.module_utils.galera import BootstrapRefused, decide_bootstrap


def main():
    module = AnsibleModule(
        argument_spec=dict(
            states=dict(type="dict", required=True),
            expected_size=dict(type="int", required=True),
            force_node=dict(type="str"),
            out_of_play=dict(type="list", elements="str", default=[]),
            mode=dict(type="str", choices=["converge", "recover"], default="recover"),
        ),
        supports_check_mode=True,
    )
    try:
        result = decide_bootstrap(module.params["states"], module.params["expected_size"],
                                  module.params["force_node"] or None, module.params["out_of_play"],
                                  module.params["mode"])
    except BootstrapRefused as refusal:
        module.fail_json(msg=refusal.reason, decision="none", bootstrap_node=None, join_order=[],
                         nodes=refusal.nodes, reason=refusal.reason, set_safe_to_bootstrap=False,
                         running_size=0)
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
