#!/usr/bin/env python3
"""Measure each drill of patroni_drill.py's output and draw its timeline: results.json, results.md, <drill>.svg.

    patroni_report.py DIR     (DIR holds requests.jsonl and events.json)

Per drill (from its fault to the next drill's fault): the longest gap between two acknowledged commits (what an
application feels), the failed requests, the members that acknowledged, and the drill's own events (the new
leader, the old leader read-only, the rejoin) as seconds after the fault. The pictures are plain SVG: one dot per
request at its start time, its height the latency, coloured by the member that acknowledged it, red when it
failed; a vertical line for each event.
"""
import json
import os
import sys

# Reading a drill's record is ha_failover's report.py's load().
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ha_failover"))
from report import load  # noqa: E402  pylint: disable=wrong-import-position

DRILLS = ["postgres_kill", "patroni_kill", "switchover", "etcd_one_down", "etcd_quorum_lost", "network_cut",
          "network_back", "rolling_restart", "etcd_rolling_restart", "etcd_replace"]
FAULTS = {"postgres_kill": "kill", "patroni_kill": "kill", "switchover": "start", "etcd_one_down": "kill",
          "etcd_quorum_lost": "stop", "network_cut": "disconnect", "network_back": "connect",
          "rolling_restart": "start", "etcd_rolling_restart": "start", "etcd_replace": "lose"}
TITLES = {
    "postgres_kill": "kill -9 the leader's postmaster (Patroni restarts it in place)",
    "patroni_kill": "kill -9 Patroni on the leader (systemd restarts it)",
    "switchover": "planned switchover (pg_switchover.yml, through Patroni)",
    "etcd_one_down": "kill -9 etcd's leader and hold it down (quorum kept)",
    "etcd_quorum_lost": "stop etcd on two members (quorum lost), then start them",
    "network_cut": "disconnect the leader's network",
    "network_back": "reconnect it (it rejoins as a replica)",
    "rolling_restart": "rolling restart (rolling_restart_postgres.yml, through Patroni)",
    "etcd_rolling_restart": "etcd rolling restart (rolling_restart_etcd.yml, etcd's leader last)",
    "etcd_replace": "pg3's etcd member lost (data wiped), replaced by px1 (etcd_replace_member.yml), converge again",
}
# What the same event costs elsewhere: the manual mode of this collection (docs/roles/postgres_tuned.md) and the
# seeds (seeds-digest.md, "Failover times").
COMPARE = {
    "postgres_kill": "manual mode: pg_failover.yml run by hand after the kill, 25-69 s plus a person's reaction",
    "patroni_kill": "(no manual-mode equivalent: nothing runs beside PostgreSQL)",
    "switchover": "manual mode: pg_switchover.yml, 2.62 s",
    "etcd_one_down": "(no manual-mode equivalent)",
    "etcd_quorum_lost": "(no manual-mode equivalent)",
    "network_cut": "manual mode: a person fences the host and runs pg_failover.yml; seeds: async replication "
                   "failover with MHA ~30 s",
    "network_back": "manual mode: pg_rejoin.yml by hand",
    "rolling_restart": "manual mode: rolling_restart_postgres.yml, its switchover 2.62 s",
    "etcd_rolling_restart": "(no manual-mode equivalent)",
    "etcd_replace": "(no manual-mode equivalent)",
}
COLORS = ["#2a9d8f", "#264653", "#e9c46a", "#8ab17d", "#6a4c93"]




def measure(requests, events):
    """Per drill: its window, the longest gap between acknowledgements in it, failures, members, events."""
    faults = {}
    for entry in events["events"]:
        if FAULTS.get(entry["drill"]) == entry["what"] and entry["drill"] not in faults:
            faults[entry["drill"]] = entry["at"]
    order = [d for d in DRILLS if d in faults]
    acked = sorted(r["end"] for r in requests if r.get("ok"))
    names = dict((address, name) for name, address in events.get("members", {}).items())
    results = {}
    for index, drill in enumerate(order):
        start = faults[drill]
        end = faults[order[index + 1]] if index + 1 < len(order) else max(r["end"] for r in requests)
        # the gap that covers the fault: from the last acknowledgement before it to the first after it
        before = [t for t in acked if t < start]
        inside = [t for t in acked if start <= t < end]
        points = before[-1:] + inside
        gap = max((b - a for a, b in zip(points, points[1:])), default=end - start)
        results[drill] = {
            "title": TITLES[drill],
            "write_gap_seconds": round(gap, 3),
            "acked": len(inside),
            "failed": sum(1 for r in requests if not r.get("ok") and start <= r["start"] < end),
            "members": sorted(set(names.get(r.get("member"), r.get("member")) for r in requests
                                  if r.get("ok") and start <= r["end"] < end)),
            "events": [dict(e, after=round(e["at"] - start, 3)) for e in events["events"] if e["drill"] == drill],
            "compare": COMPARE[drill],
            "window": [start, end],
        }
    return results


def svg(drill, result, requests, names):
    start, end = result["window"]
    width, height, left, bottom = 900, 260, 50, 30
    span = max(end - start, 1.0)
    shown = [r for r in requests if start - 1 <= r["start"] < end]
    top = max([r["end"] - r["start"] for r in shown] + [0.1])

    def x(t):
        return left + (t - start + 1) / (span + 1) * (width - left - 10)

    def y(latency):
        return height - bottom - latency / top * (height - bottom - 30)
    colors = dict((member, COLORS[i % len(COLORS)]) for i, member in enumerate(sorted(names.values())))
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
             'font-size="11">' % (width, height),
             '<text x="%d" y="15" font-size="13">%s: longest write gap %.2f s, %d failed</text>'
             % (left, result["title"], result["write_gap_seconds"], result["failed"])]
    for r in shown:
        member = names.get(r.get("member"), r.get("member"))
        color = colors.get(member, "#999") if r.get("ok") else "#d62828"
        parts.append('<circle cx="%.1f" cy="%.1f" r="1.6" fill="%s"/>' % (x(r["start"]), y(r["end"] - r["start"]),
                                                                            color))
    for event in result["events"]:
        parts.append('<line x1="%.1f" x2="%.1f" y1="25" y2="%d" stroke="#555" stroke-dasharray="3,3"/>'
                     '<text x="%.1f" y="%d" transform="rotate(-90 %.1f %d)">%s</text>'
                     % (x(event["at"]), x(event["at"]), height - bottom, x(event["at"]) + 10, 30,
                        x(event["at"]) + 10, 30, event["what"]))
    for index, (member, color) in enumerate(sorted(colors.items())):
        parts.append('<text x="%d" y="%d" fill="%s">&#9679; %s</text>' % (width - 200 + 60 * index, 15, color,
                                                                           member))
    parts.append('<text x="%d" y="%d">seconds after the fault (latency up to %.2f s)</text>'
                 % (left, height - 8, top))
    parts.append("</svg>")
    return "\n".join(parts)


def main(directory):
    requests, events = load(directory)
    results = measure(requests, events)
    names = dict((address, name) for name, address in events.get("members", {}).items())
    with open(os.path.join(directory, "results.json"), "w", encoding="utf-8") as handle:
        json.dump(results, handle, indent=1)
    lines = ["| drill | longest write gap | failed requests | members that acknowledged | the same elsewhere |",
             "|---|---|---|---|---|"]
    for drill, result in results.items():
        lines.append("| %s | %.2f s | %d | %s | %s |" % (result["title"], result["write_gap_seconds"],
                                                        result["failed"], ", ".join(result["members"]),
                                                        result["compare"]))
        with open(os.path.join(directory, drill + ".svg"), "w", encoding="utf-8") as handle:
            handle.write(svg(drill, result, requests, names))
    with open(os.path.join(directory, "results.md"), "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1])
