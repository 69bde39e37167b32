#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: etcd_member
short_description: Add or remove an etcd member by name and peer URL, never below quorum
version_added: 0.1.0
description:
  - Reads the member list and asks every member's client URL for C(/health), then adds the member
    (C(/v3/cluster/member/add)) or removes it (C(/v3/cluster/member/remove)) when the list is not as asked.
  - Adding refuses when the cluster after the add (the new member counted as a voter not up yet) would need
    more healthy members for quorum than are healthy now. A member already added but not started yet counts as
    present (its name is empty in the list until it starts).
  - Removing refuses when the remaining voting members would not have a healthy quorum, when the member is the
    only healthy one, and when it is the only member. The removal is asked of another member than the one
    removed.
  - Returns C(initial_cluster), the value the joining member starts with (C(ETCD_INITIAL_CLUSTER), with
    C(ETCD_INITIAL_CLUSTER_STATE=existing)).
options:
  name:
    description: The member's name (its C(ETCD_NAME)).
    type: str
    required: true
  peer_urls:
    description: The member's peer URLs (C(https://10.0.0.14:2380)); required to add.
    type: list
    elements: str
    default: []
  state:
    description: Whether the member is in the list.
    type: str
    choices: [present, absent]
    default: present
extends_documentation_fragment:
  - dbops.clusters.etcd_login
attributes:
  check_mode:
    support: full
    description: Reads the list and health, and reports the change (or the refusal) it would make.
  diff_mode:
    support: none
    description: Reports the action and the member list.
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Remove the lost member etcd2 through the healthy ones
  dbops.clusters.etcd_member:
    endpoints: [https://10.0.0.11:2379, https://10.0.0.13:2379]
    login_user: root
    login_password: "{{ etcd_root_password }}"
    name: etcd2
    state: absent

- name: Add its replacement
  dbops.clusters.etcd_member:
    endpoints: [https://10.0.0.11:2379, https://10.0.0.13:2379]
    login_user: root
    login_password: "{{ etcd_root_password }}"
    name: etcd4
    peer_urls: [https://10.0.0.14:2380]
"""

RETURN = r"""
action:
  description: What was done (or would be in check mode), C(add), C(remove) or C(none).
  returned: always
  type: str
reason:
  description: Why, with the counts of voters, healthy members and quorum.
  returned: always
  type: str
member:
  description: The member concerned as listed (id, name, peer_urls, client_urls, learner, started), or null.
  returned: always
  type: dict
members:
  description: The member list after the change (before it, in check mode).
  returned: always
  type: list
  elements: dict
initial_cluster:
  description: ETCD_INITIAL_CLUSTER for the member joining (the started members and this one); empty when absent.
  returned: always
  type: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.dbops.clusters.plugins.module_utils.etcd import (
    LOGIN_ARGUMENT_SPEC, EtcdError, ask_any, initial_cluster, member_change_plan, normalize_members, survey)


def main():
    spec = dict(LOGIN_ARGUMENT_SPEC)
    spec.update(name=dict(type="str", required=True), peer_urls=dict(type="list", elements="str", default=[]),
                state=dict(type="str", choices=["present", "absent"], default="present"))
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    params = module.params
    name, peer_urls = params["name"], [u.rstrip("/") for u in params["peer_urls"]]
    try:
        members, statuses, dummy = survey(params)
    except EtcdError as err:
        module.fail_json(msg=str(err))
    if not members:
        module.fail_json(msg="no endpoint answered the member list: %s"
                         % "; ".join("%s: %s" % (s.get("endpoint"), s.get("reason")) for s in statuses.values())
                         or ", ".join(params["endpoints"]))
    healthy = set(member_id for member_id, seen in statuses.items() if seen.get("health") is True)
    plan = member_change_plan(members, healthy, params["state"], name, peer_urls)
    result = dict(changed=False, action=plan["action"], reason=plan["reason"], member=plan["member"],
                  members=members, initial_cluster="")
    if plan["refusal"]:
        module.fail_json(msg=plan["refusal"], **result)
    # Ask a healthy member other than the one concerned.
    target_urls = set((plan["member"] or {}).get("client_urls") or [])
    ask = [s["endpoint"] for s in statuses.values() if s.get("health") is True and s["endpoint"] not in target_urls]
    ask += [e for e in params["endpoints"] if e not in ask and e.rstrip("/") not in target_urls]
    try:
        if plan["action"] == "add":
            result["changed"] = True
            if not module.check_mode:
                answer, dummy = ask_any(params, ask, "/v3/cluster/member/add", {"peerURLs": peer_urls})
                result["member"] = normalize_members({"members": [answer.get("member") or {}]})[0]
                result["members"] = normalize_members(answer)
        elif plan["action"] == "remove":
            result["changed"] = True
            if not module.check_mode:
                answer, dummy = ask_any(params, ask, "/v3/cluster/member/remove", {"ID": plan["member"]["id"]})
                result["members"] = normalize_members(answer)
    except EtcdError as err:
        module.fail_json(msg="%s %s failed: %s" % (plan["action"], name, err), **result)
    if params["state"] == "present":
        result["initial_cluster"] = initial_cluster(result["members"], name, peer_urls)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
