# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Planned switchover of an asynchronous GTID source, as pure functions: who is the source now (read from the
servers, never from the inventory), whether a switchover is safe, which replica to promote and why, and what a
converge of the percona_server role must refuse after a switchover the inventory does not know about yet.

A member's state is what `mysql_switchover step=state` returns:
  {running, server_uuid, read_only, super_read_only, gtid_executed,
   replica: None or {source_uuid, source_host, source_port, io_running, sql_running, io_error, sql_error, lag},
   replicas: [server_uuid of each replica connected to it]}
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbops.clusters.plugins.module_utils.group_replication import (
    count, format_gtid_set, gtid_set_text, subtract)


def _name_of_uuid(states, uuid):
    for name, state in states.items():
        if uuid and state.get("server_uuid") == uuid:
            return name
    return None


def _replicating(replica):
    return replica.get("io_running") == "Yes" and replica.get("sql_running") == "Yes"


def live_source(states):
    """(source name or None, error or None) from the members' states.

    A root is a member without a replica configuration. The source is the one writable root; when a stopped
    switchover left no root writable, the one root that replicas follow (it was fenced and never promoted)."""
    roots = sorted(name for name, state in states.items() if not state.get("replica"))
    writable = [name for name in roots if not states[name].get("read_only")]
    if len(writable) > 1:
        return None, ("%s are all writable and replicate from nobody: two sources, refusing to choose one"
                      % ", ".join(writable))
    if writable:
        return writable[0], None
    followed = [name for name in roots
                if any(_name_of_uuid(states, (s.get("replica") or {}).get("source_uuid")) == name
                       for s in states.values())]
    if len(followed) == 1:
        return followed[0], None
    if not roots:
        return None, "every member replicates from another: no source (a replication loop?)"
    return None, ("no member is writable and %s replicate from nobody: cannot tell the source"
                  % ", ".join(roots))


def _missing(source_state, state):
    return count(subtract(source_state.get("gtid_executed") or "", state.get("gtid_executed") or ""))


def plan(states, target="", max_lag=60):
    """What a switchover to `target` (or to the best replica when empty) does, or why it must not start.

    states: {member: state} for every member of the inventory group. Returns {source, target, reason, phase
    ('switchover', 'resume' or 'done'), fence, promote, repoint, following (the replicas that replicate from the
    source), steps, errors}. 'resume' finishes a switchover
    that stopped after the promotion (the promoted member is writable, others still follow the old source)."""
    result = {"source": None, "target": target or None, "reason": "", "phase": None, "fence": [], "promote": None,
              "repoint": [], "following": [], "steps": [], "errors": []}
    errors = result["errors"]
    down = sorted(name for name, state in states.items() if not state.get("running"))
    if down:
        errors.append("%s: no MySQL server answers; every member must run for a switchover" % ", ".join(down))
        return result
    source, error = live_source(states)
    if error:
        errors.append(error)
        return result
    result["source"] = source
    src = states[source]
    following, detached, elsewhere = [], [], []
    for name in sorted(states):
        if name == source:
            continue
        replica = states[name].get("replica")
        upstream = _name_of_uuid(states, (replica or {}).get("source_uuid")) if replica else None
        if replica and upstream == source:
            following.append(name)
        elif not replica:
            detached.append(name)
        elif upstream and not states[upstream].get("replica") and upstream != source:
            detached.append(name)  # follows a member that no longer is the source (a stopped switchover)
        else:
            elsewhere.append("%s replicates from %s" % (name, upstream or "%s:%s (not a member)" % (
                replica.get("source_host"), replica.get("source_port"))))
    result["following"] = following
    if elsewhere:
        errors.append("every replica must replicate from the source %s: %s" % (source, "; ".join(elsewhere)))
    for name in following + detached:
        # The source's own transactions are never errant: the servers are read one after another while it
        # takes writes, so a replica read later may hold some the source had not yet when it was read.
        errant = dict((key, value) for key, value in subtract(states[name].get("gtid_executed") or "",
                                                              src.get("gtid_executed") or "").items()
                      if key[0] != src.get("server_uuid"))
        if errant:
            errors.append("errant GTID on %s: %s are not on the source %s (transactions written on a replica); "
                          "remove them (inject empty transactions on the source) before a switchover"
                          % (name, format_gtid_set(errant), source))
    if detached:
        # A switchover stopped after its promotion: the writable root is the new source; finish it.
        if target and target != source:
            errors.append("mysql_switchover_target=%s: %s is writable and %s do not follow it yet (a switchover "
                          "stopped half-way): run again without a target or with mysql_switchover_target=%s to "
                          "finish it first" % (target, source, ", ".join(detached), source))
            return result
        result.update(target=source, phase="resume", repoint=detached,
                      reason="%s is already the writable source; %s still follow the old one: pointing them at %s"
                      % (source, ", ".join(detached), source))
        result["steps"] = ["point %s at %s with SOURCE_AUTO_POSITION=1" % (", ".join(detached), source),
                           "gate: every replica replicates from %s" % source]
        return result
    unhealthy = []
    for name in following:
        replica = states[name]["replica"]
        if not _replicating(replica) or replica.get("io_error") or replica.get("sql_error"):
            unhealthy.append("%s: I/O thread %s, SQL thread %s%s" % (
                name, replica.get("io_running"), replica.get("sql_running"),
                "".join(": " + e for e in (replica.get("io_error"), replica.get("sql_error")) if e)))
        elif replica.get("lag") is None or int(replica["lag"]) > max_lag:
            unhealthy.append("%s: lag %s s, limit %d s (mysql_switchover_max_lag)"
                             % (name, replica.get("lag"), max_lag))
    if unhealthy:
        errors.append("replication is not healthy: %s" % "; ".join(unhealthy))
    if target:
        if target not in states:
            errors.append("mysql_switchover_target=%s: not a member (members: %s)" % (target, ", ".join(sorted(states))))
            return result
        if target == source:
            result.update(phase="done", reason="%s already is the source and every member follows it" % source)
            return result
        if target not in following:
            errors.append("mysql_switchover_target=%s: not a replica of the current source %s" % (target, source))
            return result
        result["reason"] = "%s was asked for (mysql_switchover_target)" % target
    else:
        healthy = [name for name in following if not any(u.startswith(name + ":") for u in unhealthy)]
        if not healthy:
            errors.append("no healthy replica of %s to promote" % source)
            return result
        ranked = sorted(healthy, key=lambda n: (_missing(src, states[n]), int(states[n]["replica"].get("lag") or 0), n))
        target = ranked[0]
        result["reason"] = "%s is the most caught-up healthy replica: %s" % (target, "; ".join(
            "%s misses %d of the source's transactions, lag %s s" % (n, _missing(src, states[n]),
                                                                     states[n]["replica"].get("lag"))
            for n in ranked))
    if errors:
        return result
    others = [name for name in following if name != target]
    result.update(target=target, phase="switchover", fence=[source], promote=target, repoint=[source] + others)
    result["steps"] = [
        "%s: read_only and super_read_only ON (no new write is acknowledged)" % source,
        "%s: wait until it executed the whole gtid_executed of %s" % (target, source),
        "%s: STOP REPLICA, RESET REPLICA ALL, then super_read_only and read_only OFF (writable last)" % target,
        "point %s at %s with SOURCE_AUTO_POSITION=1" % (", ".join([source] + others), target),
        "gate: %s replicate from %s without errors" % (", ".join([source] + others), target)]
    return result


def converge_conflicts(declared, states, addresses=None):
    """Sentences naming where the live servers contradict the inventory's topology in the way a switchover
    leaves it; the percona_server role refuses to converge on them (it would point the new source at the old
    one and flip read_only).

    declared: {inventory host: its percona_server_source or ''}; states: {inventory host: state} for the
    servers read (a server not installed or not running yet is left out); addresses: {inventory host: address}
    to name a source that was not read."""
    addresses = addresses or {}
    conflicts = []

    def upstream_of(state):
        replica = state.get("replica") or {}
        name = _name_of_uuid(states, replica.get("source_uuid"))
        if name is None:
            name = next((host for host, address in addresses.items()
                         if address and address == replica.get("source_host")), None)
        return name

    for host in sorted(states):
        state = states[host]
        if not state or not state.get("running"):
            continue
        want = declared.get(host) or ""
        replica = state.get("replica")
        attached = sorted(n for n in (_name_of_uuid(states, u) for u in state.get("replicas") or []) if n)
        if not want and replica:
            live = upstream_of(state)
            conflicts.append("%s: the inventory makes it a source (no percona_server_source) but it replicates "
                             "from %s" % (host, live or "%s:%s" % (replica.get("source_host"),
                                                                   replica.get("source_port"))))
        elif want and not replica and (attached or state.get("replicas")):
            conflicts.append("%s: the inventory makes it a replica of %s but it is a source, %s replicate from it"
                             % (host, want, ", ".join(attached) or "%d servers" % len(state["replicas"])))
        elif want and replica:
            live = upstream_of(state)
            if live and live != want:
                conflicts.append("%s: the inventory makes it a replica of %s but it replicates from %s"
                                 % (host, want, live))
    return conflicts


def _on(value):
    return str(value).upper() in ("1", "ON")


def read_state(session, terms):
    """This server's state in the shape plan() and live_source() read, through a module_utils.mysql_connection
    Session (terms: mysql_flavors.replication_terms for its version)."""
    variables = session.variables(["server_uuid", "read_only", "super_read_only", "gtid_executed", "gtid_mode"])
    rows = session.fetch(terms["status"])
    replica = None
    if rows:
        row = rows[0]
        lag = row.get("Seconds_Behind_Source", row.get("Seconds_Behind_Master"))
        replica = {"source_uuid": row.get("Source_UUID", row.get("Master_UUID")) or "",
                   "source_host": row.get("Source_Host", row.get("Master_Host")),
                   "source_port": row.get("Source_Port", row.get("Master_Port")),
                   "io_running": row.get("Replica_IO_Running", row.get("Slave_IO_Running")),
                   "sql_running": row.get("Replica_SQL_Running", row.get("Slave_SQL_Running")),
                   "io_error": row.get("Last_IO_Error") or "", "sql_error": row.get("Last_SQL_Error") or "",
                   "lag": int(lag) if lag not in (None, "") else None,
                   "auto_position": str(row.get("Auto_Position", "")) == "1"}
    show_replicas = "SHOW REPLICAS" if terms["start"] == "START REPLICA" else "SHOW SLAVE HOSTS"
    replicas = [r.get("Replica_UUID", r.get("Slave_UUID")) or "" for r in session.fetch(show_replicas)]
    return {"running": True, "server_uuid": variables.get("server_uuid"),
            "read_only": _on(variables.get("read_only")), "super_read_only": _on(variables.get("super_read_only")),
            "gtid_mode": variables.get("gtid_mode"),
            "gtid_executed": gtid_set_text(variables.get("gtid_executed")),
            "replica": replica, "replicas": sorted(r for r in replicas if r)}
