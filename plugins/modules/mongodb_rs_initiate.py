#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: mongodb_rs_initiate
short_description: Initiate a MongoDB replica set once, with its full member list
version_added: 0.1.0
description:
  - Asks every member in I(members) (C(hello), which needs no login) before anything else. Runs
    C(replSetInitiate) on the member it connects to only when every listed member answered and none has a
    config, then waits until the set has a primary.
  - When any listed member already has a config for I(set_name), the set exists and is left alone
    (I(changed=false)), even when the member this module runs on is new, and the result says whether its
    members differ from I(members) (I(members_differ)); M(dbops.clusters.mongodb_rs_reconfigure) is the
    module that changes them. Initiating the new member instead would start a second set with the same name.
  - Refuses, changing nothing, when a listed member runs another replica set, or when no member has a config
    but one did not answer (it may hold the set's config).
  - Run it on one member, with I(login_host=localhost); C(hello) and C(replSetInitiate) run without
    credentials, over the localhost exception, because no user can exist before the set has a primary
    (U(https://www.mongodb.com/docs/manual/tutorial/deploy-replica-set-with-keyfile-access-control/)).
    The credentials, when given, are used to read the config of a set already initiated.
  - Refuses, before any change, a member list the server would refuse (duplicate hosts, more than 7 voting
    members, a hidden, non-voting or arbiter member with a priority, no electable member), naming the entry.
options:
  set_name:
    description: Replica set name; must equal the member's C(replication.replSetName).
    type: str
    required: true
  members:
    description: The members, in C(_id) order.
    type: list
    elements: dict
    required: true
    suboptions:
      host:
        description: host:port as the members reach each other.
        type: str
        required: true
      priority:
        description: Election priority (0 never becomes primary). Default 1, or 0 when hidden, non-voting or an arbiter.
        type: float
      votes:
        description: 1 or 0.
        type: int
        default: 1
      hidden:
        description: Hidden from clients; needs priority 0.
        type: bool
        default: false
      arbiter_only:
        description: An arbiter (votes, holds no data).
        type: bool
        default: false
      tags:
        description: Replica set tags.
        type: dict
      secondary_delay_secs:
        description: Delay of a delayed member; needs priority 0.
        type: int
        default: 0
  settings:
    description: The config's C(settings) document (for example C(electionTimeoutMillis)).
    type: dict
  configsvr:
    description: The set is a config server replica set (C(configsvr=true) in the config).
    type: bool
    default: false
  wait_timeout:
    description: Seconds to wait for a primary after initiation.
    type: int
    default: 120
extends_documentation_fragment:
  - dbops.clusters.mongodb_login
attributes:
  check_mode:
    support: full
    description: Reports the config it would send, in I(config), without sending it.
  diff_mode:
    support: none
    description: The config is returned instead.
requirements:
  - pymongo
author:
  - dbops.clusters maintainers (@dbops)
"""

EXAMPLES = r"""
- name: Initiate the set from its first member (localhost exception, no user yet)
  dbops.clusters.mongodb_rs_initiate:
    set_name: rs0
    members: "{{ groups['mongodb'] | map('extract', hostvars, 'mongodb_member') | list }}"
  run_once: true
  delegate_to: "{{ groups['mongodb'][0] }}"
"""

RETURN = r"""
config:
  description: The config sent (or that would be sent), or the existing one when already initiated.
  returned: always
  type: dict
primary:
  description: The primary after initiation, or null in check mode.
  returned: always
  type: str
members_differ:
  description: The set was already initiated with a different member list.
  returned: always
  type: bool
decision:
  description: What the module did and why.
  returned: always
  type: str
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible_collections.dbops.clusters.plugins.module_utils import mongodb_rs_plan as plan
from ansible_collections.dbops.clusters.plugins.module_utils.mongodb_common import (
    HAS_PYMONGO, LOGIN_ARGUMENT_SPEC, PYMONGO_IMPORT_ERROR, MongoLoginError, OperationFailure, PyMongoError,
    connect, find_primary, hello, is_refused, plain, without_login)


def main():
    argument_spec = dict(
        set_name=dict(type="str", required=True),
        members=dict(type="list", elements="dict", required=True, options=plan.MEMBER_SPEC),
        settings=dict(type="dict"),
        configsvr=dict(type="bool", default=False),
        wait_timeout=dict(type="int", default=120),
    )
    argument_spec.update(LOGIN_ARGUMENT_SPEC)
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    if not HAS_PYMONGO:
        module.fail_json(msg=missing_required_lib("pymongo"), exception=str(PYMONGO_IMPORT_ERROR))
    params = module.params
    try:
        members = plan.validate_members(plan.members_from_params(params["members"]))
    except plan.PlanError as err:
        module.fail_json(msg=str(err))
    config = {"_id": params["set_name"], "version": 1,
              "members": [dict(_id=index, **dict((k, m[k]) for k in plan.MEMBER_FIELDS))
                          for index, m in enumerate(members)]}
    if params["settings"]:
        config["settings"] = params["settings"]
    if params["configsvr"]:
        config["configsvr"] = True
    # hello and replSetInitiate run without credentials: before initiation no user can exist (a user is a
    # write, and writes need a primary), so initiation always goes through the localhost exception or an
    # unauthenticated server. The credentials, when given, read the config of an initiated set.
    try:
        anonymous = without_login(params)
        client = connect(anonymous)
        seen = hello(client)
        if seen.get("setName") and seen["setName"] != params["set_name"]:
            module.fail_json(msg="set_name is %s but the member runs with replSetName %s"
                             % (params["set_name"], seen["setName"]))
        # Ask every listed member, not only this one: when this member is new and the others already form
        # the set, initiating here would start a second set with the same name.
        answers = ask_members(anonymous, [m["host"] for m in members])
        if "setVersion" in seen:
            answers["%s:%s" % (params["login_host"], params["login_port"])] = seen
        decision = plan.initiate_decision(params["set_name"], answers)
        if decision["action"] == "refuse":
            module.fail_json(msg="not initiating %s: %s" % (params["set_name"], decision["reason"]),
                             config=config, answers=plain(answers))
        if decision["action"] == "exists":
            exists(module, params, members, answers, decision)
        if module.check_mode:
            module.exit_json(changed=True, config=config, primary=None, members_differ=False,
                             decision="would run replSetInitiate: %s" % decision["reason"])
        client.admin.command("replSetInitiate", config)
        primary, _client = find_primary(anonymous, client=client, timeout=params["wait_timeout"])
        if not primary:
            module.fail_json(msg="replSetInitiate succeeded but no primary was elected within %ss"
                             % params["wait_timeout"], config=config)
    except (OperationFailure, PyMongoError, MongoLoginError) as err:
        module.fail_json(msg="replSetInitiate on %s:%s failed: %s" % (params["login_host"], params["login_port"], err),
                         config=config)
    module.exit_json(changed=True, config=config, primary=primary, members_differ=False,
                     decision="initiated (%s); %s is primary" % (decision["reason"], primary))


def ask_members(params, hosts):
    """{host: hello reply, or the error as a string} for every listed member, asked directly."""
    answers = {}
    for host in hosts:
        try:
            answers[host] = hello(connect(dict(params, connect_timeout=min(params["connect_timeout"], 5)),
                                          host=host))
        except PyMongoError as err:
            answers[host] = str(err)
    return answers


def exists(module, params, members, answers, decision):
    """Exit unchanged for a set that is initiated already, saying whether its members differ."""
    source = decision["source"]
    try:
        current = connect(params, host=source).admin.command("replSetGetConfig")["config"]
        differ = not plan.members_match(current["members"], members)
    except OperationFailure as err:
        if not is_refused(err):
            raise
        # No user can log in yet (a run stopped between initiation and the first user): judge on the hosts
        # that hello lists, which needs no login (hidden members are not listed there).
        seen = answers.get(source) if isinstance(answers.get(source), dict) else {}
        listed = set(seen.get("hosts", []) + seen.get("passives", []) + seen.get("arbiters", []))
        current = {"_id": params["set_name"], "version": seen.get("setVersion"),
                   "members": [{"host": host} for host in sorted(listed)]}
        differ = listed != set(m["host"] for m in members)
    primary = next((a["primary"] for a in answers.values() if isinstance(a, dict) and a.get("primary")), None)
    module.exit_json(changed=False, config=plain(current), primary=primary, members_differ=differ,
                     decision="%s (config version %s)%s" % (
                         decision["reason"], current["version"],
                         "; members differ: use mongodb_rs_reconfigure" if differ else ""))


if __name__ == "__main__":
    main()
