# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rolling package upgrade of an asynchronous GTID topology (the percona_server role: a source and its replicas):
which servers need it, in which order, and the refusals.

Pure logic (no I/O): the role's rolling_upgrade.yml (playbooks/rolling_upgrade_mysql.yml) reads every server's
replication state (mysql_switchover step=state) and package versions (apt_package_versions) and hands them to
plan_upgrade through the mysql_upgrade_plan filter. Unit tested in tests/unit/test_mysql_upgrade.py.

The order is the rolling restart's: the deepest replicas first, each source after its replicas, the root source
last. MySQL replicates from an older source to a newer replica (not the other way round), so every replica runs
the new version before its source does; the root source hands its writes to an upgraded replica before it stops
(percona_server_restart_hand_over) and takes them back once it runs the new version.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbops.clusters.plugins.module_utils.mysql_switchover import converge_conflicts
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_upgrade_paths import (
    dotted, jump_refusal, package_version, version_of)
from ansible_collections.dbops.clusters.plugins.module_utils.package_upgrade import (
    member_step, outside_play_refusal, upstream_version)
from ansible_collections.dbops.clusters.plugins.module_utils.rolling import rolling_order

UPGRADE_PLAYBOOK = "playbooks/rolling_upgrade_mysql.yml"
GROUP_VARIABLE = "percona_server_group"
VERSIONS_VARIABLE = "percona_server_upgrade_versions"
RELEASE_VARIABLE = "percona_server_upgrade_release"


def _replication_refusal(member, source, state):
    """Why a replica's replication must be repaired before the upgrade, or None."""
    replica = state.get("replica") or {}
    if not replica:
        return None     # a contradiction with the inventory, named by converge_conflicts
    if replica.get("io_running") != "Yes" or replica.get("sql_running") != "Yes" or replica.get("io_error") \
            or replica.get("sql_error"):
        return ("%s: replication from %s is not healthy (I/O thread %s, SQL thread %s%s): repair it before an "
                "upgrade takes any server down" % (
                    member, source, replica.get("io_running"), replica.get("sql_running"),
                    "".join(": " + error for error in (replica.get("io_error"), replica.get("sql_error")) if error)))
    return None


def plan_upgrade(members, states, names, in_play, declared, group="mysql"):
    """Which servers to upgrade, in which order, or why not at all.

    members: the inventory group's hosts; in_play: the play's hosts; names: the packages the upgrade replaces, the
    one holding mysqld first; declared: {member: its percona_server_source, '' for a source}.
    states: {member: {"state": mysql_switchover's state or None, "packages": apt_package_versions' packages}}
    Returns {"refusals", "order", "steps" {member: upgrade|skip}, "changes" {member: {package: [installed,
    target]}}, "source", "why", "versions" {member: installed server version}, "target_version"}. Every refusal is
    collected so one run names everything to fix.
    """
    members, in_play = list(members), list(in_play)
    refusals = []
    outside = [member for member in members if member not in in_play]
    if outside:
        refusals.append(outside_play_refusal(outside, GROUP_VARIABLE, group, whole="group"))
    read = dict((member, (states.get(member) or {}).get("state")) for member in members if member not in outside)
    down = sorted(member for member, state in read.items() if not state or not state.get("running"))
    if down:
        refusals.append("%s: no MySQL server answers; every server of %s=%s must run before a rolling upgrade "
                        "(start it, or rebuild it)" % (", ".join(down), GROUP_VARIABLE, group))
    running = dict((member, state) for member, state in read.items() if member not in down)
    for conflict in converge_conflicts(dict((member, declared.get(member) or "") for member in members), running):
        refusals.append("%s: make percona_server_source describe the live topology, or switch back with "
                        "playbooks/mysql_switchover.yml, before an upgrade" % conflict)
    for member in sorted(running):
        if declared.get(member):
            refusal = _replication_refusal(member, declared[member], running[member])
            if refusal:
                refusals.append(refusal)
    steps, changes, versions, targets = {}, {}, {}, {}
    for member in members:
        if member in outside or (states.get(member) or {}).get("packages") is None:
            continue
        packages = states[member]["packages"]
        steps[member], changes[member], member_refusals = member_step(member, packages, names, VERSIONS_VARIABLE)
        refusals += member_refusals
        info = packages.get(names[0]) or {}
        versions[member] = upstream_version(info["installed"]) if info.get("installed") else None
        targets[member] = package_version(info.get("target"))
    installed = [version for version in (version_of(text) for text in versions.values()) if version]
    wanted = sorted(set(target for target in targets.values() if target))
    target_version = wanted[-1] if wanted else None
    if len(wanted) > 1:
        refusals.append("the servers' package sources offer different %s versions (%s): set %s to one version"
                        % (names[0], ", ".join(dotted(version) for version in wanted), VERSIONS_VARIABLE))
    jump = jump_refusal(min(installed) if installed else None, target_version,
                        "%s, %s" % (RELEASE_VARIABLE, VERSIONS_VARIABLE))
    if jump:
        refusals.append(jump)
    roots = [member for member in members if not declared.get(member)]
    order = rolling_order(members, sources=dict((member, declared.get(member) or "") for member in members))
    why = ("the replicas first, the deepest first, each source after its replicas, %s last: a replica may run a "
           "newer version than its source, not an older one; %s hands its writes to an upgraded replica before it "
           "stops (percona_server_restart_hand_over) and takes them back after" % (
               " and ".join(roots) or "the source", " and ".join(roots) or "the source"))
    return {"refusals": refusals, "order": order, "steps": steps, "changes": changes,
            "source": roots[0] if len(roots) == 1 else None, "why": why, "versions": versions,
            "target_version": dotted(target_version) if target_version else None}
