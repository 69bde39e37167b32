# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Decisions about PostgreSQL streaming replication, as pure functions over what the server reports."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type


def replica_verdict(state, max_lag_bytes):
    """None when a replica streams and has replayed within max_lag_bytes of what it received, else the problem."""
    if state.get("receiver") != "streaming":
        return "the WAL receiver is %s, not streaming" % (state.get("receiver") or "not running")
    lag = state.get("lag_bytes")
    if lag is None or lag > max_lag_bytes:
        return "replay is %s bytes behind what was received (at most %d accepted)" % (lag, max_lag_bytes)
    return None


def primary_verdict(rows, replicas, max_lag_bytes):
    """None when every named replica streams from this primary within max_lag_bytes, else the problem."""
    problems = []
    for name in replicas:
        row = rows.get(name)
        if row is None:
            problems.append("%s is not connected" % name)
        elif row.get("state") != "streaming":
            problems.append("%s is %s, not streaming" % (name, row.get("state")))
        elif row.get("lag_bytes") is None or row["lag_bytes"] > max_lag_bytes:
            problems.append("%s replays %s bytes behind (at most %d accepted)" % (name, row.get("lag_bytes"),
                                                                                  max_lag_bytes))
    return "; ".join(problems) or None


def parse_lsn(text):
    """A WAL position 'X/Y' (hexadecimal halves, as PostgreSQL prints it) as an integer byte position."""
    high, sep, low = (text or "").strip().partition("/")
    if not sep:
        raise ValueError("not a WAL position (expected X/Y in hexadecimal): %r" % text)
    return (int(high, 16) << 32) + int(low, 16)


def promotion_verdict(state, replayed_past=None):
    """None when a replica may be promoted without losing what it was given, else what it still waits for.

    state: in_recovery, received_lsn (None once the receiver restarted), replayed_lsn ('X/Y' texts).
    It must have replayed everything it received, and, in a switchover, WAL past replayed_past (the start of
    the old primary's shutdown checkpoint: past it, the replica holds every commit the old primary made)."""
    if not state.get("in_recovery"):
        return None
    replayed = parse_lsn(state["replayed_lsn"])
    if state.get("received_lsn") and parse_lsn(state["received_lsn"]) > replayed:
        return "replay is at %s, %d bytes behind what was received (%s)" % (
            state["replayed_lsn"], parse_lsn(state["received_lsn"]) - replayed, state["received_lsn"])
    if replayed_past and replayed <= parse_lsn(replayed_past):
        return "replay is at %s, not yet past %s (the old primary's last WAL)" % (state["replayed_lsn"],
                                                                                  replayed_past)
    return None


def read_system_identifier(control_file):
    """The cluster's system identifier from a stopped server's global/pg_control, as text, or None.

    It is the first field of pg_control in every supported major (a uint64 in the host's byte order), and the
    same on a primary and every copy pg_basebackup made of it: two data directories that share it are one
    cluster's history, two that do not were created apart."""
    import struct
    import sys
    try:
        with open(control_file, "rb") as handle:
            head = handle.read(8)
    except (IOError, OSError):
        return None
    if len(head) < 8:
        return None
    return str(struct.unpack("<Q" if sys.byteorder == "little" else ">Q", head)[0])


def _holds_data(state):
    """Whether a running primary holds something a re-seed would destroy: user data, or replicas of its own."""
    return bool(state.get("user_objects")) or bool(state.get("streaming_replicas"))


def choose_primary(states, inventory_primary, reseed=None):
    """Which member is the primary, decided from what the servers report; the inventory only picks a new one.

    states: {member: {running, in_recovery, has_data, standby_signal, user_objects, streaming_replicas,
    system_identifier}} as postgres_member_state reads them (a member whose server is down has running False).
    inventory_primary: the member postgres_tuned_primary names, used only when no server says otherwise (a new
    cluster, or one whose members hold nothing). reseed: {member: True} for members the user allows to be copied
    again although they hold data (postgres_tuned_reseed).

    Returns {primary, reason, error, stopped_primaries}: error is set (and primary None) when the servers
    disagree or the primary cannot be told; a member that holds data and runs as a primary is never the one
    re-seeded."""
    reseed = dict((name, True) for name, forced in (reseed or {}).items() if forced)
    result = dict(primary=None, reason="", error="", stopped_primaries=[])
    live = sorted(name for name, state in states.items()
                  if state.get("running") and state.get("in_recovery") is False and name not in reseed)
    holding = [name for name in live if _holds_data(states[name])]
    replicas = sorted(name for name, state in states.items()
                      if (state.get("running") and state.get("in_recovery"))
                      or (not state.get("running") and state.get("has_data") and state.get("standby_signal")))
    stopped = sorted(name for name, state in states.items()
                     if not state.get("running") and state.get("has_data") and not state.get("standby_signal")
                     and name not in reseed)
    if len(holding) > 1:
        result["error"] = (
            "%s each run as a primary holding data (two histories: a split brain or an unfinished failover). The "
            "role will not choose: keep one, then rejoin the others as its replicas with pg_rejoin.yml, or set "
            "postgres_tuned_reseed: true on the member whose data may be discarded" % " and ".join(holding))
        return result
    if holding:
        primary = holding[0]
        result["reason"] = "%s runs as the primary (not in recovery, holds data)" % primary
    elif replicas:
        # The replicas follow a primary that no member runs: it is the stopped member of the same cluster.
        candidates = [name for name in stopped
                      if same_cluster(states[name], [states[replica] for replica in replicas])]
        if len(candidates) != 1:
            result["error"] = (
                "no member runs as the primary: %s run as replicas, and %s. Start the primary, or promote the most "
                "advanced replica with pg_failover.yml" % (", ".join(replicas), (
                    "no stopped member is their primary" if not candidates else
                    "%s are stopped with data and could each be it" % " and ".join(candidates))))
            return result
        primary = candidates[0]
        result["reason"] = "%s is stopped, holds the replicas' cluster and is not a standby: the primary" % primary
    else:
        primary = inventory_primary
        result["reason"] = ("no member holds data as a primary: postgres_tuned_primary (%s) starts the cluster"
                            % primary)
    # A stopped member of the primary's own cluster that is not a standby was a primary (a failover's old
    # primary): starting it would make a second primary, diverged from the first.
    primary_state = states.get(primary, {})
    result["stopped_primaries"] = [
        name for name in stopped
        if name != primary and primary_state.get("system_identifier")
        and states[name].get("system_identifier") == primary_state.get("system_identifier")]
    if result["stopped_primaries"]:
        result["error"] = (
            "%s %s stopped with %s cluster's data and no standby.signal: started, it would run as a second "
            "primary beside %s. Rejoin it with pg_rejoin.yml (pg_rewind), or set postgres_tuned_reseed: true for "
            "it to be copied again from %s" % (
                " and ".join(result["stopped_primaries"]), "is" if len(result["stopped_primaries"]) == 1 else "are",
                primary + "'s", primary, primary))
        return result
    if primary != inventory_primary:
        result["reason"] += "; postgres_tuned_primary names %s, the servers win" % inventory_primary
    result["primary"] = primary
    return result


def same_cluster(state, others):
    """Whether a member's data shares its system identifier with any of the others (one cluster's history)."""
    identifier = state.get("system_identifier")
    return bool(identifier) and any(other.get("system_identifier") == identifier for other in others)


# Beside the data directory (<data_dir>.dbops-seeding) from the moment the role empties a member to copy it until
# that copy streams: a copy that died half way (a killed pg_basebackup or pgBackRest, a lost host) leaves a data
# directory that may hold PG_VERSION and look like a server of its own; the marker says it is the role's unfinished
# copy, so the next run copies it again instead of refusing it.
SEEDING_MARKER_SUFFIX = ".dbops-seeding"


def reseed_refusal(member, state, forced):
    """None when a replica-to-be may be emptied and copied again from the primary, else why not.

    state: what postgres_member_state read on the member just before (running, in_recovery, user_objects,
    streaming_replicas, seeding). Only a member that holds nothing of the user's, one the user named in
    postgres_tuned_reseed, or the role's own unfinished copy (seeding) is emptied; never one that runs as a
    primary, marker or not."""
    if state.get("seeding"):
        if state.get("running") and not state.get("in_recovery"):
            return ("%s runs as a primary although the role's copy onto it never finished (%s is there): the "
                    "role does not empty it; if it must become a replica, set postgres_tuned_reseed: true for it"
                    % (member, SEEDING_MARKER_SUFFIX))
        return None
    if forced or not state.get("has_data"):
        return None
    if state.get("running") and state.get("in_recovery"):
        return None
    if not state.get("running"):
        return ("%s is not running (%s): the role cannot see what its data directory holds, and does not empty "
                "it; start it, or set postgres_tuned_reseed: true for it" % (member, state.get("error") or "down"))
    held = []
    if state.get("user_objects"):
        held.append("%d databases or tables of the user's" % state["user_objects"])
    if state.get("streaming_replicas"):
        held.append("%d replicas streaming from it" % state["streaming_replicas"])
    if held:
        return ("%s runs as a primary with %s; the role does not empty it to make it a replica. If it is the "
                "current primary the servers should have said so: check the other members; to discard its data, "
                "set postgres_tuned_reseed: true for it" % (member, " and ".join(held)))
    return None
