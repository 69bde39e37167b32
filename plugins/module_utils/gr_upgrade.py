# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rolling package upgrade of a Group Replication group: which members need it, in which order, how the primary
role moves, and the refusals.

Pure logic (no I/O): playbooks/rolling_upgrade_gr.yml reads every member's state (gr_member_state) and package
versions (apt_package_versions) from the servers and hands them to plan_upgrade through the gr_upgrade_plan
filter. Unit tested in tests/unit/test_gr_upgrade.py.

What MySQL allows, from its manual (MySQL 8.4 Reference Manual):
- Upgrade paths: in place within an LTS series or from one LTS series to the next (module_utils/
  mysql_upgrade_paths.py, shared with the async upgrade).
- Mixed versions in a group (20.8.1.1 Member Versions During Upgrades, group-replication-compatibility-
  upgrade.html): a member with a higher version joins a group whose lowest member runs a lower one; in
  single-primary mode it joins as a read-only secondary like any other, in multi-primary mode it stays read-only
  until every member runs the same release. The primary keeps its role only while it runs the lowest version in
  the group, so the secondaries are upgraded first and the primary last.
- Moving the primary role (20.5.1.1 Changing the Primary, group-replication-change-primary.html):
  group_replication_set_as_primary() accepts only a member running the lowest MySQL Server version in the group
  (MySQL answers "The appointed primary member is not the lowest version in the group"), and an election picks
  among the members on the lowest version first. So when the primary's turn comes and the secondaries already run
  a higher server version, no planned switch to them is possible: the primary leaves by a clean stop and the
  upgraded members elect its successor at once (a view change, not a failure suspicion). A planned switch is
  made when the target keeps the server's version (a package rebuild: same MEMBER_VERSION on every member).
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbops.clusters.plugins.module_utils import group_replication as gr
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_upgrade_paths import (
    dotted as _dotted, jump_refusal as mysql_jump_refusal, package_version, version_of as _version)
from ansible_collections.dbops.clusters.plugins.module_utils.package_upgrade import (
    member_step, outside_play_refusal)
from ansible_collections.dbops.clusters.plugins.module_utils.rolling import rolling_order

UPGRADE_PLAYBOOK = "playbooks/rolling_upgrade_gr.yml"
GROUP_VARIABLE = "group_replication_group"
VERSIONS_VARIABLE = "group_replication_upgrade_versions"
RELEASE_VARIABLE = "group_replication_upgrade_release"


def jump_refusal(current, target):
    """Why MySQL does not upgrade a member from `current` to `target` in place, naming this playbook's variables."""
    return mysql_jump_refusal(current, target, "%s, %s" % (RELEASE_VARIABLE, VERSIONS_VARIABLE))


def _member_health(member, state):
    """Refusals for one member's own report."""
    if state is None:
        return ["%s: its state could not be read" % member]
    report = state.get("state") or {}
    if not report.get("running"):
        return ["%s: the server does not answer (%s); start it and let it rejoin first"
                % (member, state.get("error") or "not running")]
    member_state = report.get("member_state") or "OFFLINE"
    if member_state != gr.ONLINE:
        return ["%s is %s, not ONLINE: the group must be complete and healthy before any member leaves (repair it: "
                "the role, or playbooks/gr_reboot.yml)" % (member, member_state)]
    return []


def plan_upgrade(members, states, names, in_play, group="group_replication", server_package=None, addresses=None):
    """Which members to upgrade, in which order, how the primary role moves, or why not at all.

    members: the inventory group's hosts; in_play: the play's hosts; names: the packages the upgrade replaces,
    server_package (default names[0]) the one whose version is the server's; addresses: {member: the address it
    reports in the group's view}, how a member outside the play (not read) is found in the view.
    states: {member: {"state": gr_member_state's state or None, "error": str or None,
                      "packages": apt_package_versions' packages}}
    Returns {"refusals", "order", "steps" {member: upgrade|skip}, "changes" {member: {package: [installed,
    target]}}, "primary", "why", "handover" {"mode": switch|election|none, "why"}, "versions" {member: running
    server version}, "target_version"}. Every refusal is collected so one run names everything to fix.
    """
    members, in_play = list(members), list(in_play)
    server_package = server_package or (names[0] if names else None)
    refusals = []
    outside = [member for member in members if member not in in_play]
    if outside:
        refusals.append(outside_play_refusal(outside, GROUP_VARIABLE, group, whole="group"))
    if len(members) < 3:
        refusals.append("%s=%s has %d members: a rolling upgrade needs at least three, so the group keeps a "
                        "majority if another member fails while one is down" % (GROUP_VARIABLE, group, len(members)))
    steps, changes, versions, targets = {}, {}, {}, {}
    reports = {}
    for member in members:
        if member in outside:
            continue
        state = states.get(member)
        refusals += _member_health(member, state)
        if state is None:
            continue
        report = state.get("state") or {}
        reports[member] = report
        packages = state.get("packages") or {}
        steps[member], changes[member], member_refusals = member_step(member, packages, names, VERSIONS_VARIABLE)
        refusals += member_refusals
        versions[member] = report.get("version")
        info = packages.get(server_package) or {}
        targets[member] = package_version(info.get("target"))
        installed = package_version(info.get("installed"))
        running = _version(report.get("version"))
        if steps[member] == "skip" and running and installed and running != installed:
            refusals.append("%s runs %s but its %s package is %s: the server was not restarted since its package "
                            "changed; restart it (playbooks/rolling_restart_gr.yml), then run this again"
                            % (member, _dotted(running), server_package, _dotted(installed)))
    online = [member for member in members if (reports.get(member) or {}).get("member_state") == gr.ONLINE]
    names_seen = sorted(set(reports[member].get("group_name") or "" for member in online))
    if len(names_seen) > 1:
        refusals.append("the members run in different groups (%s): more than one group" % ", ".join(names_seen))
    primary, single_primary = None, True
    if online:
        view_holder = reports[online[0]]
        single_primary = view_holder.get("single_primary_mode") is not False
        addresses = addresses or {}
        expected = dict((member, (reports.get(member) or {}).get("server_uuid") or addresses.get(member) or member)
                        for member in members)
        view = view_holder.get("view") or []
        refusals += ["the group's view (from %s): %s" % (online[0], unmet)
                     for unmet in gr.health(view, expected, single_primary)]
        known = set(expected.values()) | set(addresses.values())
        strangers = [entry.get("host") or entry.get("member_id") for entry in view
                     if entry.get("member_id") not in known and entry.get("host") not in known]
        if strangers:
            refusals.append("the group holds members that are not in %s=%s (%s): the upgrade would leave them "
                            "behind" % (GROUP_VARIABLE, group, ", ".join(sorted(strangers))))
        primaries = [member for member in online if reports[member].get("member_role") == "PRIMARY"]
        primary = primaries[0] if single_primary and len(primaries) == 1 else None
    running = [_version(version) for version in versions.values() if _version(version)]
    lowest = min(running) if running else None
    wanted = sorted(set(target for target in targets.values() if target))
    target_version = wanted[-1] if wanted else None
    if len(wanted) > 1:
        refusals.append("the members' package sources offer different %s versions (%s): set %s to one version"
                        % (server_package, ", ".join(_dotted(version) for version in wanted), VERSIONS_VARIABLE))
    jump = jump_refusal(lowest, target_version)
    if jump:
        refusals.append(jump)
    order = rolling_order(members, last=primary)
    handover = {"mode": "none", "why": "no primary to move"}
    if primary and steps.get(primary) == "upgrade":
        current = _version(versions.get(primary))
        if current and target_version and current == target_version:
            handover = {"mode": "switch", "why": (
                "the target keeps the server version %s on every member, so MySQL accepts a planned "
                "group_replication_set_as_primary() to an upgraded secondary before %s stops"
                % (_dotted(current), primary))}
        else:
            handover = {"mode": "election", "why": (
                "MySQL accepts group_replication_set_as_primary() only for a member on the lowest server version in "
                "the group (MySQL 8.4 Reference Manual, 20.5.1.1 Changing the Primary); once the secondaries run %s, "
                "%s (%s) is the only one, so it leaves by a clean stop and the upgraded members elect its successor "
                "at once (the heaviest group_replication_member_weight)"
                % (_dotted(target_version) if target_version else "the target", primary,
                   _dotted(current) if current else "?"))}
    elif primary:
        handover = {"mode": "none", "why": "%s is already on the target" % primary}
    if primary:
        why = "%s is the PRIMARY (read from the servers): upgraded last, after every secondary" % primary
    elif not single_primary:
        why = ("multi-primary mode: every member takes writes, the group's order; an upgraded member stays read-only "
               "until every member runs the same release")
    else:
        why = "no PRIMARY was read: the group's order"
    return {"refusals": refusals, "order": order, "steps": steps, "changes": changes, "primary": primary,
            "why": why, "handover": handover, "versions": versions,
            "target_version": _dotted(target_version) if target_version else None}
