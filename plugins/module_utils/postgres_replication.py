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
