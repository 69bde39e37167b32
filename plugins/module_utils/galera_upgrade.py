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

import re

from ansible_collections.dbops.clusters.plugins.module_utils.rolling import rolling_order

UPGRADE_PLAYBOOK = "playbooks/rolling_upgrade_galera.yml"

# Packages that are tools of the state transfer, not the server or the provider: never part of the upgrade.
TOOL_PACKAGES = ("socat", "rsync")


# ------------------------------------------------------------------------------------ Debian versions

def _split(version):
    """'1:11.8.9+ds-4' -> (1, '11.8.9+ds', '4'), as dpkg reads epoch, upstream version and revision."""
    version = str(version).strip()
    epoch = 0
    if ":" in version:
        head, version = version.split(":", 1)
        epoch = int(head) if head.isdigit() else 0
    revision = "0"
    if "-" in version:
        version, revision = version.rsplit("-", 1)
    return epoch, version, revision


def _order(char):
    if char == "~":
        return -1
    if char.isalpha():
        return ord(char)
    return ord(char) + 256


def _compare_part(left, right):
    """dpkg's verrevcmp: non-digit runs by character order (~ before everything), digit runs as numbers."""
    while left or right:
        left_text = re.match(r"^[^0-9]*", left).group(0)
        right_text = re.match(r"^[^0-9]*", right).group(0)
        for index in range(max(len(left_text), len(right_text))):
            left_char = _order(left_text[index]) if index < len(left_text) else 0
            right_char = _order(right_text[index]) if index < len(right_text) else 0
            if left_char != right_char:
                return -1 if left_char < right_char else 1
        left, right = left[len(left_text):], right[len(right_text):]
        left_digits = re.match(r"^[0-9]*", left).group(0)
        right_digits = re.match(r"^[0-9]*", right).group(0)
        if int(left_digits or 0) != int(right_digits or 0):
            return -1 if int(left_digits or 0) < int(right_digits or 0) else 1
        left, right = left[len(left_digits):], right[len(right_digits):]
    return 0


def compare_versions(left, right):
    """-1, 0 or 1 as Debian orders two package versions (epoch, then upstream version, then revision)."""
    left_epoch, left_upstream, left_revision = _split(left)
    right_epoch, right_upstream, right_revision = _split(right)
    if left_epoch != right_epoch:
        return -1 if left_epoch < right_epoch else 1
    return _compare_part(left_upstream, right_upstream) or _compare_part(left_revision, right_revision)


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


def _member_step(member, packages, names):
    """('upgrade'|'skip', {package: [installed, target]}, refusals) for one member."""
    refusals, changes = [], {}
    for name in names:
        info = packages.get(name) or {}
        installed, target = info.get("installed"), info.get("target")
        if not installed:
            refusals.append("%s: %s is not installed (the upgrade replaces installed packages; converge the "
                            "member with the role first)" % (member, name))
        elif not target:
            refusals.append("%s: the package source has no %s %s (available: %s)" % (
                member, name, info.get("wanted") or "candidate for the requested release",
                ", ".join(info.get("available") or []) or "none"))
        elif compare_versions(installed, target) > 0:
            refusals.append("%s: %s %s is newer than the target %s: a downgrade, refused (restore from a "
                            "backup or rebuild the member instead)" % (member, name, installed, target))
        elif compare_versions(installed, target) < 0:
            changes[name] = [installed, target]
    return ("upgrade" if changes else "skip"), changes, refusals


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
        refusals.append("%s (members of pxc_galera_group=%s) are outside the play (--limit or "
                        "unreachable): an upgrade runs over the whole cluster, one member at a time, and skips "
                        "members already upgraded; run it without --limit" % (", ".join(outside), group))
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
        steps[member], changes[member], member_refusals = _member_step(member, state.get("packages") or {}, names)
        refusals += member_refusals
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
