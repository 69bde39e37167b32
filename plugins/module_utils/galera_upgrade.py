# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rolling package upgrade of a Galera cluster: which members need it, in which order, and the refusals.

Pure logic (no I/O): playbooks/rolling_upgrade_galera.yml reads every member's wsrep status, client
connections and package versions from the servers and hands them to plan_upgrade (through the
galera_upgrade_plan filter); the role pxc_galera asks running_member_refusal before it installs anything.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbops.clusters.plugins.module_utils.mysql_upgrade_paths import (
    jump_refusal as mysql_jump_refusal, package_version)
from ansible_collections.dbops.clusters.plugins.module_utils.package_upgrade import (
    compare_versions, member_step, outside_play_refusal)
from ansible_collections.dbops.clusters.plugins.module_utils.rolling import rolling_order

UPGRADE_PLAYBOOK = "playbooks/rolling_upgrade_galera.yml"

# Packages that are tools of the state transfer, not the server or the provider: never part of the upgrade.
TOOL_PACKAGES = ("socat", "rsync")


# MariaDB's long-term series in the order a Galera cluster moves through them. Galera replicates between mixed
# versions only across adjacent major releases, so a rolling upgrade goes one series at a time; a jump past one
# needs the whole cluster stopped ("Upgrading Galera Cluster", MariaDB documentation: "Do not run a rolling upgrade
# that skips major versions ... To skip versions, use the full-cluster-shutdown method"). Seen here too: from an
# 11.8 donor a 10.11 joiner gets neither SST nor IST (11.8 renamed the state-transfer file the joiner waits for).
MARIADB_SERIES = ((10, 6), (10, 11), (11, 4), (11, 8))
MARIADB_DOCS = ("MariaDB documentation, Upgrading Galera Cluster: one major version at a time, "
                "10.6 -> 10.11 -> 11.4 -> 11.8")
VERSIONS_VARIABLES = "pxc_galera_upgrade_release, pxc_galera_upgrade_versions"


def series_jump_refusal(server_package, installed, target):
    """Why a rolling upgrade cannot take the server package from `installed` to `target`, or None.

    MariaDB: within a series, or to the next series of MARIADB_SERIES. Percona XtraDB Cluster follows MySQL's
    upgrade paths (within an LTS series or to the next one)."""
    current, goal = package_version(installed), package_version(target)
    if current is None or goal is None or goal[:2] <= current[:2]:
        return None
    if not server_package.startswith("mariadb"):
        return mysql_jump_refusal(current, goal, VERSIONS_VARIABLES)
    where = "%s %s -> %s (%s)" % (server_package, installed, target, VERSIONS_VARIABLES)
    if current[:2] not in MARIADB_SERIES or goal[:2] not in MARIADB_SERIES:
        return ("%s: a series this playbook does not know for a rolling upgrade (%s); move one series at a time "
                "(%s)" % (where, ", ".join("%d.%d" % series for series in MARIADB_SERIES), MARIADB_DOCS))
    following = MARIADB_SERIES[MARIADB_SERIES.index(current[:2]) + 1]
    if goal[:2] != following:
        return ("%s skips a major series: Galera replicates between mixed versions only across adjacent major "
                "releases, so a rolling upgrade moves one series at a time (%s); upgrade to %d.%d first, or stop the "
                "whole cluster to skip versions" % (where, MARIADB_DOCS, following[0], following[1]))
    return None


# -------------------------------------------------------------------------------------------- the plan

def upgrade_packages(flavor_packages):
    """The flavor's Galera packages the upgrade replaces: the server, its client/backup and the provider."""
    return [name for name in flavor_packages if name not in TOOL_PACKAGES]


def _health(member, state, expected_size):
    wsrep = state.get("wsrep") or None
    if not wsrep:
        return ["%s: the server does not run with wsrep (%s)" % (member, state.get("reason") or "not running")]
    problems = []
    for key, variable, wanted in (("local_state_comment", "wsrep_local_state_comment", "Synced"),
                                  ("cluster_status", "wsrep_cluster_status", "Primary"),
                                  ("ready", "wsrep_ready", "ON"),
                                  ("cluster_size", "wsrep_cluster_size", expected_size)):
        if wsrep.get(key) != wanted:
            problems.append("%s: %s is %r, wanted %r" % (member, variable, wsrep.get(key), wanted))
    return problems


def writer_of(members, connections):
    """The member taking the writes: the one with the most client connections, ties to the later name.

    None when no member has a client connection (nothing to protect: the group's order is kept).
    """
    counts = [(int(connections.get(member) or 0), member) for member in members]
    busiest = max(counts) if counts else (0, None)
    return busiest[1] if busiest[0] > 0 else None


def plan_upgrade(members, states, names, in_play, group="galera"):
    """Which members to upgrade, in which order, or why not at all.

    members: the inventory group's hosts (the cluster); in_play: the play's hosts; names: the packages.
    states: {member: {"wsrep": {...} or None, "reason": str, "client_connections": int,
                      "packages": {name: {"installed": v, "target": v or None, "wanted": v, "available": [...]}}}}
    Returns {"refusals": [...], "order": [...], "steps": {member: "upgrade"|"skip"},
             "changes": {member: {package: [installed, target]}}, "writer": member or None, "why": str,
             "cluster_state_uuid": str or None}.
    Every refusal is collected (not the first only) so one run names everything to fix.
    """
    members, in_play = list(members), list(in_play)
    refusals = []
    outside = [member for member in members if member not in in_play]
    if outside:
        refusals.append(outside_play_refusal(outside, "pxc_galera_group", group))
    if len(members) < 3:
        refusals.append("pxc_galera_group=%s has %d members: a rolling upgrade needs at least three, so "
                        "two keep the quorum while one is down" % (group, len(members)))
    uuids = set()
    steps, changes = {}, {}
    for member in members:
        state = states.get(member)
        if state is None:
            if member not in outside:
                refusals.append("%s: its state could not be read" % member)
            continue
        refusals += _health(member, state, len(members))
        uuid = (state.get("wsrep") or {}).get("cluster_state_uuid")
        if uuid:
            uuids.add(uuid)
        steps[member], changes[member], member_refusals = member_step(member, state.get("packages") or {}, names)
        refusals += member_refusals
        server = (state.get("packages") or {}).get(names[0]) or {} if names else {}
        jump = series_jump_refusal(names[0], server.get("installed"), server.get("target")) if names else None
        if jump and jump not in refusals:
            refusals.append(jump)
    if len(uuids) > 1:
        refusals.append("the members report different cluster state UUIDs (%s): more than one cluster"
                        % ", ".join(sorted(uuids)))
    connections = dict((member, (states.get(member) or {}).get("client_connections")) for member in members)
    writer = writer_of(members, connections)
    order = rolling_order(members, last=writer)
    if writer:
        why = ("%s takes the writes (%s client connections): upgraded last, after the others"
               % (writer, connections.get(writer)))
    else:
        why = "no member has a client connection: the group's order"
    return {"refusals": refusals, "order": order, "steps": steps, "changes": changes, "writer": writer,
            "why": why, "cluster_state_uuid": sorted(uuids)[0] if len(uuids) == 1 else None}


def running_member_refusal(member, packages, names):
    """The role's refusal: a running member whose packages the inputs would move to another version.

    packages: {name: {"installed": v, "target": v}} where target is what the role's inputs would install.
    Returns a sentence, or "" when the inputs keep what runs.
    """
    moved = ["%s %s -> %s" % (name, (packages.get(name) or {}).get("installed"), (packages.get(name) or {}).get("target"))
             for name in names
             if (packages.get(name) or {}).get("installed") and (packages.get(name) or {}).get("target")
             and compare_versions(packages[name]["installed"], packages[name]["target"]) != 0]
    if not moved:
        return ""
    return ("%s runs and its inputs ask for other package versions (%s): the role never upgrades a running "
            "member; run %s, which upgrades one member at a time between health gates"
            % (member, ", ".join(moved), UPGRADE_PLAYBOOK))
