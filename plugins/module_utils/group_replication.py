# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Group Replication logic as pure functions: GTID sets, the member-state summary, the plan that brings a
group to its desired state (bootstrap, reboot after a complete outage, join, recover, mode and primary
changes) and the health verdict. The modules only read servers, call these and run the statements.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
TAG_RE = re.compile(r"^[a-z_][a-z0-9_]{0,31}$")


class GtidError(ValueError):
    """A GTID set that cannot be read."""


# ---------------------------------------------------------------------------------------------------------
# GTID sets: {(uuid, tag): [(start, end), ...]} with sorted, merged, inclusive intervals. tag is '' for an
# untagged GTID; MySQL 8.3+ writes tagged ones as uuid:tag:1-5 (a tag applies to the intervals after it).
# ---------------------------------------------------------------------------------------------------------

def _merge(intervals):
    merged = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def parse_gtid_set(text):
    """'uuid:1-5:7,uuid2:tag:1-3' (whitespace and newlines as MySQL prints them) -> {(uuid, tag): intervals}."""
    result = {}
    if text is None:
        return result
    text = str(text).replace("\n", "").replace(" ", "").strip()
    if not text:
        return result
    for part in text.split(","):
        if not part:
            continue
        pieces = part.split(":")
        uuid = pieces[0].lower()
        if not UUID_RE.match(uuid):
            raise GtidError("%r is not a server UUID in GTID set %r" % (pieces[0], text))
        if len(pieces) < 2:
            raise GtidError("%r has no transaction numbers in GTID set %r" % (part, text))
        tag = ""
        for piece in pieces[1:]:
            if not piece:
                raise GtidError("empty element in %r" % part)
            if piece[0].isdigit():
                bounds = piece.split("-")
                try:
                    if len(bounds) == 1:
                        start = end = int(bounds[0])
                    elif len(bounds) == 2:
                        start, end = int(bounds[0]), int(bounds[1])
                    else:
                        raise ValueError(piece)
                except ValueError:
                    raise GtidError("%r is not a transaction interval in GTID set %r" % (piece, text))
                if start < 1 or end < start:
                    raise GtidError("%r is not a valid interval (1 <= start <= end) in %r" % (piece, text))
                result.setdefault((uuid, tag), []).append((start, end))
            else:
                tag = piece.lower()
                if not TAG_RE.match(tag):
                    raise GtidError("%r is not a GTID tag in %r" % (piece, text))
    return dict((key, _merge(value)) for key, value in result.items())


def gtid_set_text(value):
    """A server's GTID set as one line: MySQL prints a set of several UUIDs across lines."""
    return str(value or "").replace("\n", "").replace(" ", "")


def format_gtid_set(gtids):
    """The canonical text of a parsed set: uuids sorted, untagged intervals first, then each tag."""
    parts = []
    for uuid in sorted(set(key[0] for key in gtids)):
        text = uuid
        for tag in sorted(tag for (u, tag) in gtids if u == uuid):
            intervals = gtids[(uuid, tag)]
            if not intervals:
                continue
            if tag:
                text += ":" + tag
            text += "".join(":%d" % s if s == e else ":%d-%d" % (s, e) for s, e in intervals)
        if text != uuid:
            parts.append(text)
    return ",".join(parts)


def _as_set(value):
    return value if isinstance(value, dict) else parse_gtid_set(value)


def union(*sets):
    result = {}
    for value in sets:
        for key, intervals in _as_set(value).items():
            result.setdefault(key, []).extend(intervals)
    return dict((key, _merge(value)) for key, value in result.items())


def _interval_contains(intervals, start, end):
    return any(s <= start and end <= e for s, e in intervals)


def contains(outer, inner):
    """Whether every GTID of inner is in outer."""
    outer, inner = _as_set(outer), _as_set(inner)
    for key, intervals in inner.items():
        have = outer.get(key, [])
        for start, end in intervals:
            if not _interval_contains(have, start, end):
                return False
    return True


def subtract(left, right):
    """GTIDs in left and not in right (what MySQL's GTID_SUBTRACT returns)."""
    left, right = _as_set(left), _as_set(right)
    result = {}
    for key, intervals in left.items():
        remaining = list(intervals)
        for rs, re_ in right.get(key, []):
            nxt = []
            for s, e in remaining:
                if re_ < s or rs > e:
                    nxt.append((s, e))
                    continue
                if s < rs:
                    nxt.append((s, rs - 1))
                if e > re_:
                    nxt.append((re_ + 1, e))
            remaining = nxt
        if remaining:
            result[key] = remaining
    return result


def count(gtids):
    return sum(e - s + 1 for intervals in _as_set(gtids).values() for s, e in intervals)


# ---------------------------------------------------------------------------------------------------------
# Member state as gr_member_state reports it (the module builds it from performance_schema):
#   {reachable, running, server_uuid, server_id, member_state, member_role, group_name, gtid_executed,
#    gtid_received, single_primary_mode, view: [{member_id, host, port, state, role}], ...}
# A host the controller could not reach is None.
# ---------------------------------------------------------------------------------------------------------

ONLINE = "ONLINE"


def known_transactions(state):
    """What a member holds: GTID_EXECUTED plus what its applier channel received and not yet applied (after
    a crash the relay log may hold transactions the group certified), as MySQL Shell's reboot compares."""
    return union(state.get("gtid_executed") or "", state.get("gtid_received") or "")


def view_majority(state):
    """(reachable members, view size) of the view this ONLINE member sees."""
    view = state.get("view") or []
    reachable = [m for m in view if m.get("state") != "UNREACHABLE"]
    return len(reachable), len(view)


def _online_in_group(state, group_name):
    return (state is not None and state.get("running") and state.get("member_state") == ONLINE
            and (state.get("group_name") or "").lower() == group_name.lower())


RENAME_PROCEDURE = ("a running group cannot be renamed (its members would leave it and form another). Keep the "
                    "name, or rename it as a planned outage: stop the server of every member, set "
                    "group_replication_group_name, then run playbooks/gr_reboot.yml, which writes the new name "
                    "and starts the group under it from the member holding every transaction")


def rename_refusal(running_names, wanted):
    """A sentence refusing a new group name while members run in the old one, or None.

    running_names: {member: the group_replication_group_name its server runs with ("" when none: a new member
    or Group Replication not loaded)}; members whose server could not be read are left out.
    """
    others = dict((m, (name or "").lower()) for m, name in running_names.items()
                  if name and name.lower() != (wanted or "").lower())
    if not others:
        return None
    shown = "; ".join("%s runs %s" % (m, others[m]) for m in sorted(others))
    return "group_replication_group_name=%s: %s; %s. Nothing was written." % (wanted, shown, RENAME_PROCEDURE)


TLS_MODE_PROCEDURE = ("members whose group communication uses different TLS modes cannot talk to each other, so a "
                      "running group keeps the mode it runs with. Keep group_replication_tls as it is, or change it "
                      "as a planned outage: stop the server of every member, then run the role with the new value "
                      "(it writes both option files before it starts any server)")


def tls_mode_refusal(running_modes, wanted):
    """A sentence refusing a change of group_replication_ssl_mode while members run in a group, or None.

    running_modes: {member: the group_replication_ssl_mode its running group communication uses}, only for members
    whose server runs Group Replication (a new member, or one without the plugin, is left out).
    """
    others = dict((m, (mode or "DISABLED").upper()) for m, mode in running_modes.items()
                  if (mode or "DISABLED").upper() != wanted.upper())
    if not others:
        return None
    shown = "; ".join("%s runs %s" % (m, others[m]) for m in sorted(others))
    return ("group_replication_tls asks for group_replication_ssl_mode=%s: %s; %s. Nothing was written."
            % (wanted, shown, TLS_MODE_PROCEDURE))


def reported_states(members, hostvars, variable="group_replication_state_before"):
    """{member: state} of the members whose registered report (`variable` in hostvars) says their server runs;
    a member without a readable report is left out (the refusals built on this do not compare it)."""
    states = {}
    for member in members:
        try:
            report = hostvars[member].get(variable)
        except Exception:  # pylint: disable=broad-except  # a member without a report is not compared
            report = None
        state, dummy = state_from_report(report)
        if state is not None and state.get("running"):
            states[member] = state
    return states


def state_from_report(report):
    """(state, None) from what a member reported, or (None, why it could not be read).

    report: a state dict from gr_member_state (it has "running"), the whole registered result of that module
    ({"state": ...}), a failed or skipped result ({"failed": true, "msg": ...}), or None (no report at all).
    """
    if isinstance(report, dict) and "running" in report:
        return report, None
    if isinstance(report, dict) and isinstance(report.get("state"), dict) and "running" in report["state"]:
        return report["state"], None
    if isinstance(report, dict) and report.get("unreachable"):
        return None, "unreachable: %s" % (report.get("msg") or "no connection")
    if isinstance(report, dict) and report.get("failed"):
        return None, "reading its state failed: %s" % (report.get("msg") or "no message")
    if isinstance(report, dict) and report.get("skipped"):
        return None, "its state was not read (skipped)"
    return None, "it did not report its state (unreachable, outside the play, or failed earlier in the run)"


def plan(states, members, group_name, single_primary=True, primary=None, force_member=None,
         ignore_unreachable=False, unread=None):
    """Decide what each member of the inventory group must do.

    states: {inventory host: state dict or None (not reachable)}; members: the inventory group, in order.
    unread: {inventory host: why its state could not be read} for the members whose state is None.
    Returns {decision, reason, bootstrap_member, join_order, actions: {host: {action, reason}},
             mode_change, primary_change, refused: [sentences]}.
    decision is 'none' (every member ONLINE and as desired), 'converge' (some members must join, recover, or
    the mode/primary change), 'bootstrap' (no member was ever in a group: a new group), 'reboot' (a complete
    outage: start the group from the member whose transactions contain every other's) or 'refuse'.
    """
    result = {"decision": "none", "reason": "", "bootstrap_member": None, "join_order": [],
              "actions": {}, "mode_change": None, "primary_change": None, "refused": [], "gtid_sets": {}}
    unknown = [m for m in members if m not in states]
    if unknown:
        raise ValueError("no state for %s" % ", ".join(unknown))
    if force_member and force_member not in members:
        return _refuse(result, "force_member=%s is not a member of the group (%s)" % (force_member, ", ".join(members)))

    unread = unread or {}
    unreachable = [m for m in members if states[m] is None]
    stopped = [m for m in members if states[m] is not None and not states[m].get("running")]
    for m in members:
        if states[m] is not None and states[m].get("running"):
            result["gtid_sets"][m] = format_gtid_set(known_transactions(states[m]))

    # Two members reporting the same server_uuid or server_id cannot both be in one group.
    for key in ("server_uuid", "server_id"):
        seen = {}
        for m in members:
            value = (states[m] or {}).get(key)
            if value in (None, ""):
                continue
            if value in seen:
                return _refuse(result, "%s and %s have the same %s %s: every member needs its own (a cloned "
                                       "data directory keeps the source's auto.cnf)" % (seen[value], m, key, value))
            seen[value] = m

    # Members ONLINE in some other group: never touched.
    for m in members:
        state = states[m]
        if (state is not None and state.get("running") and state.get("member_state") == ONLINE
                and (state.get("group_name") or "").lower() != group_name.lower()):
            return _refuse(result, "%s is ONLINE in group %s, not in %s: it belongs to another group"
                                   % (m, state.get("group_name"), group_name))

    online = [m for m in members if _online_in_group(states[m], group_name)]
    if online:
        return _plan_running_group(result, states, members, group_name, online, unreachable, stopped,
                                   single_primary, primary, unread)

    # No member is ONLINE anywhere the inventory can reach: bootstrap, but only from complete knowledge.
    if (unreachable or stopped) and not ignore_unreachable:
        names = (["%s (could not be read: %s)" % (m, unread.get(m, "unreachable")) for m in unreachable]
                 + ["%s (server not running)" % m for m in stopped])
        return _refuse(result, "no member is ONLINE among those that answered, but %s could not be asked: it "
                               "may be ONLINE in a running group or hold transactions the others lack. Bring it "
                               "back, or set force to bootstrap without it." % ", ".join(names))
    candidates = [m for m in members if states[m] is not None and states[m].get("running")]
    if not candidates:
        return _refuse(result, "no member answered")
    sets = dict((m, known_transactions(states[m])) for m in candidates)
    if all(count(sets[m]) == 0 and not states[m].get("was_member") for m in candidates) and not force_member:
        chosen = _preferred(candidates, states, primary)
        result.update(decision="bootstrap", bootstrap_member=chosen,
                      reason="no member has ever run a group (every GTID set is empty): a new group %s "
                             "starts on %s" % (group_name, chosen))
    else:
        covering = [m for m in candidates if all(contains(sets[m], sets[o]) for o in candidates)]
        if force_member:
            missing = dict((o, format_gtid_set(subtract(sets[o], sets[force_member]))) for o in candidates
                           if o != force_member and not contains(sets[force_member], sets[o]))
            chosen = force_member
            reason = "no member is ONLINE; bootstrapping %s because force_member names it" % chosen
            if missing:
                reason += ("; these transactions of other members are NOT in it and those members will be "
                           "refused until rebuilt: %s" % "; ".join("%s: %s" % kv for kv in sorted(missing.items())))
        elif not covering:
            shown = "; ".join("%s: %s" % (m, format_gtid_set(sets[m]) or "(empty)") for m in candidates)
            return _refuse(result, "complete outage and the members diverged: no member's transactions "
                                   "contain every other's (%s). Compare them, then name the member to keep "
                                   "with force_member." % shown)
        else:
            chosen = _preferred(covering, states, primary)
            reason = ("complete outage: no member is ONLINE; %s holds every transaction any member holds (%s)"
                      % (chosen, format_gtid_set(sets[chosen]) or "(empty)"))
            if len(covering) > 1:
                reason += "; %s hold the same set, %s preferred" % (", ".join(covering), chosen)
        if unreachable or stopped:
            reason += "; forced past members that could not be asked: %s" % ", ".join(unreachable + stopped)
        result.update(decision="reboot", bootstrap_member=chosen, reason=reason)

    chosen = result["bootstrap_member"]
    for m in members:
        if m == chosen:
            result["actions"][m] = {"action": "bootstrap", "reason": result["reason"]}
        elif m in unreachable:
            result["actions"][m] = {"action": "skip", "reason": "could not be read: %s"
                                    % unread.get(m, "unreachable")}
        elif m in stopped:
            result["actions"][m] = {"action": "skip", "reason": "could not be asked"}
        else:
            extra = subtract(sets[m], sets[chosen])
            if count(extra):
                result["actions"][m] = {"action": "refuse", "reason": "holds transactions the group will not "
                                        "have: %s (rebuild it, e.g. by clone)" % format_gtid_set(extra)}
                result["refused"].append("%s: %s" % (m, result["actions"][m]["reason"]))
            else:
                action = "recover" if states[m].get("member_state") == "ERROR" else "join"
                result["actions"][m] = {"action": action, "reason": "joins the group started on %s" % chosen}
                result["join_order"].append(m)
    return result


def _preferred(candidates, states, primary):
    """The desired primary if it is a candidate, else the highest member weight, else inventory order."""
    if primary in candidates:
        return primary
    return sorted(candidates, key=lambda m: (-int((states[m] or {}).get("member_weight") or 50),
                                             candidates.index(m)))[0]


def _refuse(result, reason):
    result.update(decision="refuse", reason=reason)
    result["refused"].append(reason)
    return result


def _plan_running_group(result, states, members, group_name, online, unreachable, stopped, single_primary,
                        primary, unread):
    reference = states[online[0]]
    reachable, size = view_majority(reference)
    if size and reachable * 2 <= size:
        return _refuse(result, "%s is ONLINE but sees only %d of %d members reachable: the group has lost its "
                               "majority. Restore the network or the members; forcing a new membership is a "
                               "manual decision (group_replication_force_members)" % (online[0], reachable, size))
    group_set = union(*[known_transactions(states[m]) for m in online])
    changes = []
    for m in members:
        state = states[m]
        if m in online:
            result["actions"][m] = {"action": "none", "reason": "ONLINE"}
            continue
        if m in unreachable:
            result["actions"][m] = {"action": "skip", "reason": "could not be read (%s): the group runs without "
                                    "it" % unread.get(m, "unreachable")}
            continue
        if m in stopped:
            result["actions"][m] = {"action": "start", "reason": "server not running: start it, then join"}
            result["join_order"].append(m)
            changes.append(m)
            continue
        member_state = state.get("member_state") or "OFFLINE"
        if member_state == "RECOVERING":
            result["actions"][m] = {"action": "wait", "reason": "RECOVERING: catching up with the group"}
            continue
        extra = subtract(known_transactions(state), group_set)
        if count(extra):
            result["actions"][m] = {"action": "refuse", "reason": "has transactions the group does not: %s "
                                    "(errant writes; rebuild it, e.g. by clone, or remove them)" % format_gtid_set(extra)}
            result["refused"].append("%s: %s" % (m, result["actions"][m]["reason"]))
            continue
        if member_state == "ERROR":
            result["actions"][m] = {"action": "recover", "reason": "ERROR (expelled or failed applier): STOP and "
                                    "START GROUP_REPLICATION, as START alone fails with error 3093"}
        else:
            result["actions"][m] = {"action": "join", "reason": "%s: joins the running group through %s"
                                    % (member_state, ", ".join(online))}
        result["join_order"].append(m)
        changes.append(m)

    running_single = reference.get("single_primary_mode")
    if running_single is not None and bool(running_single) != bool(single_primary):
        result["mode_change"] = "single_primary" if single_primary else "multi_primary"
    if single_primary and primary:
        current = [m for m in online if states[m].get("member_role") == "PRIMARY"]
        if primary not in members:
            return _refuse(result, "primary=%s is not a member of the group" % primary)
        if current != [primary] and (result["mode_change"] or primary in online or primary in changes):
            result["primary_change"] = primary
    parts = []
    if changes:
        parts.append("the group runs on %s; %s" % (", ".join(online), "; ".join(
            "%s: %s" % (m, result["actions"][m]["action"]) for m in changes)))
    if result["mode_change"]:
        parts.append("switch to %s mode" % result["mode_change"].replace("_", "-"))
    if result["primary_change"]:
        parts.append("make %s the primary" % result["primary_change"])
    if parts or result["refused"]:
        result["decision"] = "converge" if parts else "refuse"
        result["reason"] = "; ".join(parts + result["refused"])
    else:
        result["reason"] = "every reachable member is ONLINE in %s as desired" % group_name
    return result


# ---------------------------------------------------------------------------------------------------------
# Health gate verdict.
# ---------------------------------------------------------------------------------------------------------

def health(view, expected_members, single_primary=True, stats=None, max_queue=None):
    """Unmet conditions (sentences) for: every expected member ONLINE in the view, exactly one PRIMARY in
    single-primary mode and it one of the expected members (all PRIMARY in multi-primary), applier and
    certifier queues at most max_queue.
    view: [{member_id, host, state, role}], expected_members: {name: member_id (server_uuid) or host}."""
    unmet = []
    by_id = dict((m.get("member_id"), m) for m in view)
    by_host = dict((m.get("host"), m) for m in view)
    found = []
    for name, ident in sorted(expected_members.items()):
        member = by_id.get(ident) or by_host.get(ident) or by_host.get(name)
        if member is None:
            unmet.append("%s is not in the group's view" % name)
        elif member.get("state") != ONLINE:
            unmet.append("%s is %s, not ONLINE" % (name, member.get("state")))
        else:
            found.append(member.get("member_id"))
    online = [m for m in view if m.get("state") == ONLINE]
    primaries = [m for m in online if m.get("role") == "PRIMARY"]
    if single_primary and len(primaries) != 1:
        unmet.append("%d ONLINE primaries in single-primary mode (%s), expected exactly one"
                     % (len(primaries), ", ".join(m.get("host") or "?" for m in primaries) or "none"))
    elif single_primary and primaries[0].get("member_id") not in found:
        # A killed primary stays ONLINE PRIMARY in the survivors' view until they suspect and expel it (5 s of
        # silence plus group_replication_member_expel_timeout): a gate that leaves it out of the expected
        # members must wait for the new primary, not accept the dead one.
        unmet.append("the primary %s is not one of the expected members (%s)"
                     % (primaries[0].get("host") or primaries[0].get("member_id"), ", ".join(sorted(expected_members))))
    if not single_primary and len(primaries) != len(online):
        unmet.append("multi-primary mode, but only %d of %d ONLINE members are PRIMARY" % (len(primaries), len(online)))
    if max_queue is not None:
        for row in stats or []:
            for field, label in (("applier_queue", "applier"), ("certifier_queue", "certifier")):
                value = row.get(field)
                if value is not None and int(value) > max_queue:
                    unmet.append("%s has %s transactions in its %s queue (limit %d)"
                                 % (row.get("host") or row.get("member_id"), value, label, max_queue))
    return unmet


# ---------------------------------------------------------------------------------------------------------
# Reading a server (through mysql_connection.Session): the only code here that talks to MySQL.
# ---------------------------------------------------------------------------------------------------------

RECOVERY_CHANNEL = "group_replication_recovery"
GR_VARIABLES = ("group_replication_group_name", "group_replication_single_primary_mode",
                "group_replication_member_weight", "group_replication_group_seeds",
                "group_replication_local_address", "group_replication_start_on_boot",
                "group_replication_ssl_mode")


def _on(value):
    return str(value).upper() in ("ON", "1", "TRUE")


def read_state(session):
    """The member state dict plan() and the modules use, read from one server."""
    row = session.fetch("SELECT @@server_uuid AS server_uuid, @@server_id AS server_id, "
                        "@@global.gtid_executed AS gtid_executed, @@global.gtid_mode AS gtid_mode, "
                        "@@global.enforce_gtid_consistency AS enforce_gtid_consistency, @@log_bin AS log_bin, "
                        "@@version AS version, @@offline_mode AS offline_mode, "
                        "@@super_read_only AS super_read_only")[0]
    state = {"reachable": True, "running": True, "server_uuid": row["server_uuid"], "server_id": int(row["server_id"]),
             "gtid_executed": (row["gtid_executed"] or "").replace("\n", ""), "version": row["version"],
             "gtid_mode": row["gtid_mode"], "enforce_gtid_consistency": str(row["enforce_gtid_consistency"]),
             "log_bin": _on(row["log_bin"]), "offline_mode": _on(row["offline_mode"]),
             "super_read_only": _on(row["super_read_only"])}
    plugins = dict((r["PLUGIN_NAME"], r["PLUGIN_STATUS"]) for r in session.fetch(
        "SELECT PLUGIN_NAME, PLUGIN_STATUS FROM information_schema.PLUGINS "
        "WHERE PLUGIN_NAME IN ('group_replication', 'clone')"))
    state["plugin_active"] = plugins.get("group_replication") == "ACTIVE"
    state["clone_plugin_active"] = plugins.get("clone") == "ACTIVE"
    state.update(member_state="OFFLINE", member_role="", group_name="", single_primary_mode=None,
                 member_weight=None, view=[], stats=[], gtid_received="", recovery_user="", clone=None)
    if state["clone_plugin_active"]:
        # The last clone into this server (kept across the restart a clone ends with): how a joiner was provisioned.
        rows = session.fetch("SELECT STATE, CAST(BEGIN_TIME AS CHAR) AS begin_time, CAST(END_TIME AS CHAR) AS end_time, "
                             "SOURCE, ERROR_NO FROM performance_schema.clone_status")
        if rows:
            state["clone"] = {"state": rows[0]["STATE"], "begin_time": rows[0]["begin_time"],
                              "end_time": rows[0]["end_time"], "source": rows[0]["SOURCE"],
                              "error_no": rows[0]["ERROR_NO"]}
    if not state["plugin_active"]:
        return state
    variables = session.variables(GR_VARIABLES)
    state["group_name"] = variables.get("group_replication_group_name") or ""
    state["single_primary_mode"] = _on(variables.get("group_replication_single_primary_mode", "ON"))
    state["member_weight"] = int(variables.get("group_replication_member_weight") or 50)
    state["start_on_boot"] = _on(variables.get("group_replication_start_on_boot", "OFF"))
    state["ssl_mode"] = (variables.get("group_replication_ssl_mode") or "DISABLED").upper()
    view = [{"member_id": r["MEMBER_ID"], "host": r["MEMBER_HOST"], "port": r["MEMBER_PORT"],
             "state": r["MEMBER_STATE"], "role": r["MEMBER_ROLE"] or "", "version": r["MEMBER_VERSION"]}
            for r in session.fetch("SELECT MEMBER_ID, MEMBER_HOST, MEMBER_PORT, MEMBER_STATE, MEMBER_ROLE, "
                                   "MEMBER_VERSION FROM performance_schema.replication_group_members")]
    me = [m for m in view if m["member_id"] == state["server_uuid"]]
    if me:
        state["member_state"] = me[0]["state"] or "OFFLINE"
        state["member_role"] = me[0]["role"]
    # When GR is not running the table still lists this member as OFFLINE (sometimes with no id): not a view.
    state["view"] = [m for m in view if m["member_id"]] if state["member_state"] not in ("OFFLINE",) else []
    stats = session.fetch("SELECT MEMBER_ID, COUNT_TRANSACTIONS_IN_QUEUE, "
                          "COUNT_TRANSACTIONS_REMOTE_IN_APPLIER_QUEUE "
                          "FROM performance_schema.replication_group_member_stats")
    hosts = dict((m["member_id"], m["host"]) for m in view)
    state["stats"] = [{"member_id": r["MEMBER_ID"], "host": hosts.get(r["MEMBER_ID"]),
                       "certifier_queue": int(r["COUNT_TRANSACTIONS_IN_QUEUE"] or 0),
                       "applier_queue": int(r["COUNT_TRANSACTIONS_REMOTE_IN_APPLIER_QUEUE"] or 0)}
                      for r in stats if r["MEMBER_ID"]]
    received = session.value("SELECT RECEIVED_TRANSACTION_SET FROM performance_schema.replication_connection_status "
                             "WHERE CHANNEL_NAME = 'group_replication_applier'")
    state["gtid_received"] = (received or "").replace("\n", "")
    state["recovery_user"] = session.value("SELECT USER FROM performance_schema.replication_connection_configuration "
                                           "WHERE CHANNEL_NAME = %s", [RECOVERY_CHANNEL]) or ""
    return state


def prerequisites(state):
    """Sentences naming each server setting Group Replication needs and this server lacks."""
    missing = []
    if str(state.get("gtid_mode")).upper() != "ON":
        missing.append("gtid_mode is %s, Group Replication needs ON" % state.get("gtid_mode"))
    if str(state.get("enforce_gtid_consistency")).upper() not in ("ON", "1"):
        missing.append("enforce_gtid_consistency is %s, needs ON" % state.get("enforce_gtid_consistency"))
    if not state.get("log_bin"):
        missing.append("the binary log is off, Group Replication needs it")
    if not state.get("plugin_active"):
        missing.append("the group_replication plugin is not active")
    return missing
