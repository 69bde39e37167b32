# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Galera position reading and the full-outage bootstrap decision, as pure functions.

- parse_grastate: the node's saved state file (datadir/grastate.dat). A clean shutdown writes the last
  committed seqno; a running or crashed node has seqno -1. safe_to_bootstrap is 1 only on the node that
  left the last Primary component last, after a clean shutdown.
- parse_recovered_position: the position `mariadbd --wsrep-recover` (or PXC's `mysqld --wsrep-recover`)
  logs after InnoDB crash recovery, for a node whose grastate.dat says -1.
- decide_bootstrap: which node starts a new Primary component and in which order the others join, from
  the galera_state results of every node; refuses whenever the positions cannot be compared.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

ZERO_UUID = "00000000-0000-0000-0000-000000000000"
# MariaDB 11.x exposes provider options as variables (wsrep_provider_options itself is read-only there).
PC_BOOTSTRAP = ("SET GLOBAL wsrep_provider_pc_bootstrap=ON (MariaDB 11) or SET GLOBAL "
                "wsrep_provider_options='pc.bootstrap=YES' (PXC, MariaDB 10)")

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
# MariaDB: "[Note] WSREP: Recovered position: <uuid>:<seqno>", with ",<domain>-<server>-<seqno>" appended
# when wsrep_gtid_mode is on; PXC 8.x: "[Note] [MY-000000] [WSREP] Recovered position: <uuid>:<seqno>".
_RECOVERED = re.compile(r"WSREP\]?:?\s+Recovered position:?\s+(%s):(-?\d+)" % _UUID)
_SKIPPED = re.compile(r"WSREP: disabled, skipping position recovery|skipping position recovery")


class GaleraStateError(ValueError):
    """A grastate.dat that cannot be read."""


class BootstrapRefused(Exception):
    """decide_bootstrap will not choose: the message says why and what the operator can do."""

    def __init__(self, reason, nodes=None):
        super(BootstrapRefused, self).__init__(reason)
        self.reason = reason
        self.nodes = nodes or {}


def parse_grastate(text):
    """grastate.dat text -> {uuid, seqno, safe_to_bootstrap}.

    uuid is None when the file has none; seqno is -1 when it is unknown (the server runs or crashed);
    safe_to_bootstrap is False when the line is missing (files written before Galera 3.19 have none).
    A seqno written as "<seqno>,<gtid>" keeps the number before the comma.
    """
    if text is None:
        raise GaleraStateError("grastate.dat is empty")
    values = {}
    for raw in str(text).splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or ":" not in line:
            continue
        key, value = line.split(":", 1)
        values.setdefault(key.strip().lower(), value.strip())
    if "uuid" not in values and "seqno" not in values:
        raise GaleraStateError("grastate.dat has neither uuid nor seqno")
    uuid = values.get("uuid") or None
    if uuid is not None and not re.match(r"^%s$" % _UUID, uuid):
        raise GaleraStateError("grastate.dat has an invalid uuid %r" % uuid)
    seqno_text = (values.get("seqno") or "-1").split(",", 1)[0].strip()
    try:
        seqno = int(seqno_text)
    except ValueError:
        raise GaleraStateError("grastate.dat has an invalid seqno %r" % values.get("seqno"))
    safe = values.get("safe_to_bootstrap", "0").strip()
    if safe not in ("0", "1"):
        raise GaleraStateError("grastate.dat has an invalid safe_to_bootstrap %r" % safe)
    return {"uuid": uuid.lower() if uuid else None, "seqno": seqno if seqno >= 0 else -1,
            "safe_to_bootstrap": safe == "1"}


def parse_recovered_position(log_text):
    """(uuid, seqno) from the last "Recovered position" line of a --wsrep-recover run, or None.

    A log may hold several runs (the server appends to its error log): the last one counts.
    """
    found = None
    for match in _RECOVERED.finditer(log_text or ""):
        found = (match.group(1).lower(), int(match.group(2)))
    return found


def recovery_skipped(log_text):
    """True when the server said wsrep is disabled, so it recovered no position."""
    return bool(_SKIPPED.search(log_text or ""))


def is_fresh_position(uuid, seqno):
    """A node that never held cluster state: no uuid, or the all-zero one, with an unknown seqno."""
    return (uuid is None or uuid == ZERO_UUID) and (seqno is None or seqno < 0)


def _as_int(value, default=-1):
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


# ------------------------------------------------------------------------------------- status variables

WSREP_FIELDS = ("cluster_status", "local_state_comment", "cluster_size", "cluster_state_uuid", "ready",
                "connected", "local_index", "local_state_uuid", "last_committed")
_INT_FIELDS = ("cluster_size", "local_index", "last_committed")


def read_wsrep_status(session):
    """{Variable_name: Value} of the server's SHOW GLOBAL STATUS LIKE 'wsrep_%', read through a
    module_utils.mysql_connection Session (the modules' and the backup agent's one read of it)."""
    return dict((row["Variable_name"], row["Value"]) for row in session.fetch("SHOW GLOBAL STATUS LIKE 'wsrep_%'"))


def wsrep_summary(status):
    """{Variable_name: Value} of SHOW GLOBAL STATUS LIKE 'wsrep_%' -> the fields the modules return, or None.

    None when the server reports no wsrep_cluster_status (built or started without wsrep). Numbers become
    ints; the rest stays as the server says it ('Primary', 'Synced', 'ON').
    """
    lowered = dict((str(k).lower(), v) for k, v in (status or {}).items())
    if "wsrep_cluster_status" not in lowered:
        return None
    summary = {}
    for name in WSREP_FIELDS:
        value = lowered.get("wsrep_" + name)
        if name in _INT_FIELDS:
            value = _as_int(value, None) if value not in (None, "") else None
        summary[name] = value
    return summary


def health_problems(summary, expected_size, answers=True, error=None):
    """Unmet conditions of a Synced, Primary, ready node in a cluster of expected_size, one sentence each."""
    if summary is None:
        if error:
            return ["the server does not answer (%s)" % error]
        return ["the server reports no wsrep status (wsrep is off or the provider is not loaded)"]
    problems = []
    if not answers:
        problems.append("the node does not answer queries (SELECT 1: %s)" % (error or "failed"))
    checks = (("local_state_comment", "wsrep_local_state_comment", "Synced"),
              ("cluster_status", "wsrep_cluster_status", "Primary"),
              ("ready", "wsrep_ready", "ON"),
              ("cluster_size", "wsrep_cluster_size", expected_size))
    for key, variable, wanted in checks:
        if summary.get(key) != wanted:
            problems.append("%s is %r, wanted %r" % (variable, summary.get(key), wanted))
    return problems


# ----------------------------------------------------------------------------------- bootstrap decision

def _view(host, result):
    """One node's result of galera_state reduced to what the decision needs."""
    view = {"host": host, "known": False, "why_unknown": None, "running": False, "primary": False,
            "cluster_uuid": None, "cluster_status": None, "local_state": None, "uuid": None, "seqno": -1,
            "safe": False, "recovered": False, "grastate_found": False, "fresh": False, "note": None,
            "cluster_size": None}
    if not isinstance(result, dict) or not result:
        view["why_unknown"] = "no galera_state result"
        return view
    if result.get("unreachable"):
        view["why_unknown"] = "unreachable: %s" % (result.get("msg") or "no message")
        return view
    if result.get("failed"):
        view["why_unknown"] = "galera_state failed: %s" % (result.get("msg") or "no message")
        return view
    if result.get("skipped"):
        view["why_unknown"] = "galera_state was skipped"
        return view
    if "seqno" not in result and "running" not in result:
        view["why_unknown"] = "the result is not one of galera_state"
        return view
    wsrep = result.get("wsrep") if isinstance(result.get("wsrep"), dict) else None
    uuid = result.get("uuid") or None
    view.update(known=True, running=bool(result.get("running")), uuid=uuid.lower() if uuid else None,
                seqno=_as_int(result.get("seqno")), safe=bool(result.get("safe_to_bootstrap")),
                recovered=bool(result.get("recovered")), grastate_found=bool(result.get("grastate_found")),
                note=result.get("reason"))
    if view["seqno"] < 0:
        view["seqno"] = -1
    if view["running"] and wsrep:
        view["cluster_status"] = wsrep.get("cluster_status")
        view["local_state"] = wsrep.get("local_state_comment")
        view["cluster_uuid"] = (wsrep.get("cluster_state_uuid") or "").lower() or None
        view["primary"] = wsrep.get("cluster_status") == "Primary"
        view["cluster_size"] = _as_int(wsrep.get("cluster_size"), None)
    view["fresh"] = is_fresh_position(view["uuid"], view["seqno"])
    return view


def _position(view):
    if view["running"]:
        how = "running server"
    else:
        how = "recovered by --wsrep-recover" if view["recovered"] else "grastate.dat"
    return "%s:%s (%s)" % (view["uuid"], view["seqno"], how)


def _join_reason(view, best=None):
    """Why and how a node joins; best is the bootstrap node's view (None when joining a running component)."""
    ist = "by IST when a donor's gcache still holds the gap, else SST"
    if not view["known"]:
        return "state unknown (%s): joins whatever Primary component runs when it starts" % view["why_unknown"]
    if view["fresh"]:
        return "no cluster state: joins and receives a full state transfer (SST)"
    if best is None or best["fresh"] or not best["known"] or best["seqno"] < 0:
        return "position %s: joins, %s" % (_position(view), ist)
    if view["uuid"] != best["uuid"]:
        return ("cluster uuid %s differs from the bootstrap node's %s: joins by SST, which replaces its data"
                % (view["uuid"], best["uuid"]))
    if view["seqno"] < 0:
        return "seqno unknown: joins, %s" % ist
    if view["seqno"] < best["seqno"]:
        return "seqno %s < %s: joins, %s" % (view["seqno"], best["seqno"], ist)
    if view["seqno"] == best["seqno"]:
        return "seqno %s, equally advanced: joins, by IST" % view["seqno"]
    return ("seqno %s > %s of the bootstrap node: joins by SST; its transactions after %s are discarded"
            % (view["seqno"], best["seqno"], best["seqno"]))


def _primary_case(order, views, expected_size, force_node, out_of_play, mode):
    members = [h for h in order if views[h]["primary"]]
    cluster_uuids = sorted(set(views[h]["cluster_uuid"] for h in members if views[h]["cluster_uuid"]))
    if len(cluster_uuids) > 1:
        raise BootstrapRefused("several Primary components run with different cluster uuids (%s): these are "
                               "separate clusters; refusing to decide" % ", ".join(
                                   "%s=%s" % (h, views[h]["cluster_uuid"]) for h in members))
    if force_node:
        raise BootstrapRefused("a Primary component is running on %s: refusing to bootstrap %s (a second "
                               "Primary component would split the cluster); start the other nodes so they "
                               "join it" % (", ".join(members), force_node))
    stray = [h for h in order if views[h]["known"] and views[h]["running"] and not views[h]["primary"]]
    if mode == "converge" and stray:
        raise BootstrapRefused(_stray_refusal(stray, views, "while a Primary component runs on %s" % ", ".join(
            members)), _unknown_nodes(order, views))
    nodes, join_order = {}, []
    for host in order:
        view = views[host]
        if view["primary"]:
            nodes[host] = {"action": "none", "reason": "runs in the Primary component (%s)" % (
                view["local_state"] or "state unknown")}
        elif host in out_of_play:
            nodes[host] = {"action": "none", "reason": "outside the play (%s): not started by this run; it joins "
                                                       "the Primary component when it starts" % (
                                                           view["why_unknown"] or "--limit")}
        elif not view["known"]:
            nodes[host] = {"action": "none", "reason": "state unknown (%s): not started by this run; it joins "
                                                       "the Primary component when it starts" % view["why_unknown"]}
        elif view["running"]:
            join_order.append(host)
            where = "cluster_status %s" % view["cluster_status"] if view["cluster_status"] else "without wsrep"
            nodes[host] = {"action": "join", "reason": "runs outside the Primary component (%s): restart it so "
                                                       "it joins" % where}
        else:
            join_order.append(host)
            nodes[host] = {"action": "join", "reason": "not running; " + _join_reason(view)}
    uuid_text = cluster_uuids[0] if cluster_uuids else "unknown uuid"
    sizes = [views[h]["cluster_size"] for h in members if views[h]["cluster_size"]]
    running_size = max(sizes) if sizes else len(members)
    left_out = [h for h in order if nodes[h]["action"] == "none" and not views[h]["primary"]]
    if join_order:
        reason = ("a Primary component (%s) of %d runs on %s: %s join it one at a time; never bootstrap while "
                  "one runs" % (uuid_text, running_size, ", ".join(members), ", ".join(join_order)))
        if left_out:
            reason += "; left alone: %s" % ", ".join(left_out)
        return {"decision": "join", "bootstrap_node": None, "join_order": join_order, "nodes": nodes,
                "set_safe_to_bootstrap": False, "running_size": running_size, "reason": reason}
    reason = "%d of the %d members run in one Primary component (%s)" % (running_size, expected_size, uuid_text) \
        if running_size != expected_size or left_out else \
        "all %d nodes run in one Primary component (%s)" % (len(members), uuid_text)
    if len(members) < expected_size and not left_out:
        reason += ", but only %d of the %d expected nodes reported" % (len(members), expected_size)
    if left_out:
        reason += "; left alone: %s" % ", ".join(left_out)
    return {"decision": "none", "bootstrap_node": None, "join_order": [], "nodes": nodes,
            "set_safe_to_bootstrap": False, "running_size": running_size, "reason": reason}


def _stray_refusal(stray, views, context):
    return ("%s run%s outside a Primary component (%s) %s: an ordinary converge neither stops nor restarts a "
            "running server; recover with playbooks/galera_recover.yml, which stops it, compares positions and "
            "rejoins it" % (", ".join(stray), "s" if len(stray) == 1 else "", ", ".join(
                "%s: cluster_status %s" % (h, views[h]["cluster_status"] or "none (wsrep off)") for h in stray),
                context))


def _choose_most_advanced(order, views):
    """(host, why) of the most advanced node among those with state and a known seqno, or (None, None)."""
    candidates = [h for h in order if views[h]["known"] and not views[h]["fresh"] and views[h]["seqno"] >= 0]
    if not candidates:
        return None, None
    top = max(views[h]["seqno"] for h in candidates)
    tied = [h for h in candidates if views[h]["seqno"] == top]
    if len(tied) == 1:
        others = [views[h]["seqno"] for h in candidates if h != tied[0]]
        source = "recovered by --wsrep-recover" if views[tied[0]]["recovered"] else "from grastate.dat"
        why = "highest seqno %s (%s)" % (top, source)
        if others:
            why += ", others at %s" % ", ".join(str(s) for s in others)
        return tied[0], why
    safe = [h for h in tied if views[h]["safe"]]
    if len(safe) == 1:
        return safe[0], "highest seqno %s, shared with %s; chosen for safe_to_bootstrap: 1" % (
            top, ", ".join(h for h in tied if h != safe[0]))
    pool = safe or tied
    return pool[0], "equally advanced at seqno %s with %s; first in the given order" % (
        top, ", ".join(h for h in pool[1:]))


def decide_bootstrap(states, expected_size, force_node=None, out_of_play=None, mode="recover"):
    """Which node bootstraps a new Primary component, and in which order the others join.

    states: {host: galera_state result} of every member, in inventory order (the order is the tie breaker).
    A missing, failed, skipped or unreachable result counts as unknown. out_of_play: members this run must
    not start (outside the play: --limit, unreachable); they are never in join_order, and a new Primary
    component is refused while one exists (unless forced). mode: "recover" (nodes running outside a Primary
    component have been stopped by the caller, or are to be restarted) or "converge" (such a node is refused:
    recovery is a separate, explicit operation). Returns {decision, bootstrap_node, join_order, nodes,
    reason, set_safe_to_bootstrap, running_size}; raises BootstrapRefused when it cannot choose safely.
    """
    states = states or {}
    order = list(states.keys())
    if not order:
        raise BootstrapRefused("no node states were given")
    expected_size = _as_int(expected_size, 0)
    if expected_size < 1:
        raise BootstrapRefused("expected_size must be at least 1")
    if force_node is not None and force_node not in states:
        raise BootstrapRefused("force_node %s is not one of the nodes given: %s" % (force_node, ", ".join(order)))
    if mode not in ("recover", "converge"):
        raise BootstrapRefused("mode must be recover or converge, not %r" % (mode,))
    out_of_play = [h for h in order if h in set(out_of_play or [])]
    if force_node is not None and force_node in out_of_play:
        raise BootstrapRefused("force_node %s is outside the play (%s): it cannot be started by this run" % (
            force_node, ", ".join(out_of_play)))
    views = dict((host, _view(host, states[host])) for host in order)

    if any(v["primary"] for v in views.values()):
        return _primary_case(order, views, expected_size, force_node, out_of_play, mode)

    # No Primary component: a full stop (or a fresh cluster). Collect every reason not to choose.
    problems = []
    unknown = [h for h in order if not views[h]["known"]]
    if len(order) < expected_size:
        problems.append("only %d of the %d expected nodes have a state" % (len(order), expected_size))
    for host in unknown:
        problems.append("cannot compare positions: %s %s" % (host, views[host]["why_unknown"]))
    stateful = [h for h in order if views[h]["known"] and not views[h]["fresh"]]
    stray = [h for h in order if views[h]["known"] and views[h]["running"] and not views[h]["fresh"]]
    if mode == "converge" and stray and force_node is None:
        raise BootstrapRefused(_stray_refusal(stray, views, "and no Primary component runs"),
                               _unknown_nodes(order, views))
    for host in out_of_play:
        if views[host]["known"]:
            problems.append("%s is outside the play (--limit): a new Primary component needs every member's state "
                            "and start; run without --limit" % host)
    for host in order:
        view = views[host]
        if view["known"] and view["running"] and not view["fresh"]:
            problems.append("cannot compare positions: %s runs outside any Primary component (cluster_status "
                            "%s, position %s:%s): stop it so positions can be compared, or, if it is the most "
                            "advanced, make its component Primary with %s" % (
                                host, view["cluster_status"], view["uuid"], view["seqno"], PC_BOOTSTRAP))
    uuids = sorted(set(views[h]["uuid"] for h in stateful))
    if len(uuids) > 1:
        problems.append("the nodes hold different cluster uuids (%s): they are not copies of one cluster" % (
            ", ".join("%s=%s" % (h, views[h]["uuid"]) for h in stateful)))
    for host in stateful:
        view = views[host]
        if view["seqno"] < 0 and not view["running"]:
            problems.append("cannot compare positions: %s has uuid %s but seqno -1 (unclean stop) and no "
                            "position recovered by --wsrep-recover%s" % (
                                host, view["uuid"], " (it said: %s)" % view["note"] if view["note"] else ""))

    if force_node is None:
        if problems:
            raise BootstrapRefused("refusing to choose a bootstrap node: %s. Fix the cause, or name the node "
                                   "with force_node after checking it holds the data to keep"
                                   % "; ".join(problems), _unknown_nodes(order, views))
        if not stateful:
            chosen, why = order[0], "new cluster: no node has state"
            reason = "new cluster: no node has state; %s bootstraps, the others join in the given order" % chosen
        else:
            chosen, why = _choose_most_advanced(order, views)
            reason = "full stop of cluster %s: %s bootstraps, %s" % (uuids[0], chosen, why)
    else:
        view = views[force_node]
        if view["known"] and view["running"]:
            raise BootstrapRefused("force_node %s is running (cluster_status %s): a running node cannot be "
                                   "bootstrapped by starting it; stop it first, or make its component Primary "
                                   "with %s" % (force_node, view["cluster_status"], PC_BOOTSTRAP))
        chosen = force_node
        overridden = list(problems)
        if not problems:
            rule_choice = order[0] if not stateful else _choose_most_advanced(order, views)[0]
            if rule_choice != force_node:
                overridden.append("the rules would choose %s (%s)" % (
                    rule_choice, _position(views[rule_choice]) if stateful else "first in order"))
        if view["known"] and not view["fresh"] and stateful and view["seqno"] >= 0:
            best = max(views[h]["seqno"] for h in stateful)
            if view["seqno"] < best:
                overridden.append("%s is behind (seqno %s < %s): transactions after %s are lost" % (
                    force_node, view["seqno"], best, view["seqno"]))
        why = "forced by force_node"
        reason = "%s bootstraps because force_node says so; overridden: %s" % (
            force_node, "; ".join(overridden) if overridden else "nothing (the rules agree)")

    nodes, join_order = {}, []
    best = views[chosen]
    for host in order:
        if host in out_of_play:
            nodes[host] = {"action": "none", "reason": "outside the play (%s): not started by this run" % (
                views[host]["why_unknown"] or "--limit")}
        elif host == chosen:
            pos = ""
            if force_node is not None and views[host]["known"] and not views[host]["fresh"]:
                pos = "; position %s" % _position(views[host])
            nodes[host] = {"action": "bootstrap", "reason": why + pos}
        else:
            join_order.append(host)
            running = "runs outside a Primary component, restart it if it does not join by itself; " \
                if views[host]["known"] and views[host]["running"] else ""
            nodes[host] = {"action": "join", "reason": running + _join_reason(views[host], best)}
    set_safe = bool(best["known"] and best["grastate_found"] and not best["safe"])
    return {"decision": "bootstrap", "bootstrap_node": chosen, "join_order": join_order, "nodes": nodes,
            "reason": reason, "set_safe_to_bootstrap": set_safe, "running_size": 1}


def _unknown_nodes(order, views):
    return dict((h, {"action": "none", "reason": "not decided: %s" % (
        views[h]["why_unknown"] or "position %s" % _position(views[h]))}) for h in order)
