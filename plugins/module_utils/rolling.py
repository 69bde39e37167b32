# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The order of every rolling operation (restart, upgrade) on every engine, in one place.

A rolling operation takes one member at a time between two health gates. Every engine orders its members the
same way: the members that serve no writes first, the one that does (the primary, the writer, the source) last,
after a hand-over where the engine has one; in a replication chain a replica before its source, the deepest
first. Each engine's planner says who takes the writes (from the servers, never from the inventory's order)
and how the hand-over is done (a MongoDB step-down, a Group Replication primary switch, a PostgreSQL
switchover, ProxySQL moving the Galera writer); the order itself is rolling_order. Pure functions, unit tested
in tests/unit/test_rolling.py.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type


def source_depth(name, sources):
    """Hops from `name` up its replication chain to a server with no source. sources: {name: its source or ""}.
    A loop (refused earlier by each role's topology checks) cannot hang this: it stops at the number of hosts."""
    hops, current = 0, name
    while sources.get(current) and hops <= len(sources):
        current = sources[current]
        hops += 1
    return hops


def rolling_order(members, last=None, sources=None):
    """The members in the order a rolling operation takes them.

    members: names, in the order that breaks ties (the inventory's, or sorted for a stable plan).
    last: the member that takes the writes: it goes after every other. A `last` that is not among the members
      changes nothing (a restart of the changed members only, the writer unchanged).
    sources: {name: its replication source or ""} for chains (async MySQL): replicas before their source,
      the deepest first, the roots last.
    Returns a new list; each member once, in the first place it had.
    """
    names = []
    for name in members:
        if name not in names:
            names.append(name)
    sources = sources or {}
    ranked = sorted(enumerate(names), key=lambda pair: (pair[1] == last, -source_depth(pair[1], sources), pair[0]))
    return [name for dummy, name in ranked]
