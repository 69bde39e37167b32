#!/usr/bin/env python3
"""Measure each drill of drill.py's output and draw its timeline: results.json, results.md, <drill>.svg.

    report.py DIR     (DIR holds requests.jsonl and events.json)

Per drill (from its fault to the next drill's fault): the longest gap between two acknowledged commits
(what an application feels), failed requests, the VIP move (first keepalived MASTER transition after the
fault, from the notify hooks' log), the backend switch (first commit on another backend) and, for the worker
kill, the angel's restart. The pictures are plain SVG (no plotting library): one dot per request at its start
time, its height the latency, green/blue/... by backend when acknowledged, red when it failed; vertical lines
for the fault, the VIP move, the backend switch and the angel's restart.
"""
import json
import os
import sys

DRILLS = ["worker_kill", "service_kill", "service_restart", "writer_kill", "network_cut", "network_back"]
FAULTS = {"worker_kill": "kill", "service_kill": "kill", "service_restart": "start", "writer_kill": "kill",
          "network_cut": "disconnect", "network_back": "connect"}
# The seeds' figures (004_b358499c8c17c1ee.txt, 000_a66f1ae9148f3c5b.txt) for the nearest event.
SEEDS = {
    "worker_kill": ("ProxySQL angel restart", "< 1 s"),
    "service_kill": ("ProxySQL crash, single VIP (2 s checks)", "5.06 s"),
    "service_restart": ("failback after restart", "4.04 s"),
    "writer_kill": ("PXC node loss behind HAProxy (3 s x 2 checks)", "8 s"),
    "network_cut": ("VIP move, 2 s checks; multi-VIP", "~3-5 s; 7-10 s"),
    "network_back": ("(no seed figure)", "-"),
}
TITLES = {
    "worker_kill": "kill -9 ProxySQL's worker (angel restarts it)",
    "service_kill": "kill -9 ProxySQL (angel and worker) on the VIP holder",
    "service_restart": "start ProxySQL again (preempt: failback)",
    "writer_kill": "kill -9 the Galera writer",
    "network_cut": "disconnect the VIP holder's network",
    "network_back": "reconnect it",
}
COLORS = ["#2a9d8f", "#264653", "#e9c46a", "#8ab17d", "#6a4c93"]



def vrrp_masters(vrrp, at):
    """The proxies whose last VRRP transition (the keepalived notify log) at or before `at` was MASTER."""
    last = {}
    for entry in vrrp:
        if entry["at"] <= at:
            last[entry["proxy"]] = entry["state"]
    return sorted(proxy for proxy, state in last.items() if state == "MASTER")

def load(directory):
    with open(os.path.join(directory, "requests.jsonl"), encoding="utf-8") as handle:
        requests = [json.loads(line) for line in handle if line.strip()]
    with open(os.path.join(directory, "events.json"), encoding="utf-8") as handle:
        events = json.load(handle)
    return requests, events


def measure(requests, events):
    faults = {}
    for entry in events["events"]:
        if entry["drill"] in FAULTS and entry["what"] == FAULTS[entry["drill"]]:
            faults[entry["drill"]] = entry
    ordered = [d for d in DRILLS if d in faults]
    acked = sorted((r for r in requests if r.get("ok")), key=lambda r: r["end"])
    results = {}
    for index, drill in enumerate(ordered):
        fault = faults[drill]["at"]
        window_end = faults[ordered[index + 1]]["at"] if index + 1 < len(ordered) else requests[-1]["end"]
        gap, gap_from = 0.0, None
        for before, after in zip(acked, acked[1:]):
            # a gap belongs to the drill in whose window it ends (a gap opened by the next fault is the next's)
            if fault < after["end"] <= window_end and after["end"] - before["end"] > gap:
                gap, gap_from = after["end"] - before["end"], before["end"]
        in_window = [r for r in requests if fault <= r["start"] < window_end]
        before_fault = [r for r in acked if r["end"] <= fault]
        backend_before = before_fault[-1]["backend"] if before_fault else None
        switch = next((r for r in acked if r["end"] > fault and r["end"] < window_end
                       and r["backend"] != backend_before), None)
        # keepalived's own record (each proxy's last VRRP state before the fault), not the drill's choice of
        # target (the address seen on an interface): the two are compared by the tests
        holder_before = vrrp_masters(events["vrrp"], fault)
        vip_move = next((v for v in events["vrrp"] if fault < v["at"] < window_end and v["state"] == "MASTER"), None)
        result = {
            "fault_at": fault, "window_end": window_end, "target": faults[drill].get("proxy") or faults[drill].get("node"),
            "longest_write_gap_s": round(gap, 3), "gap_starts_s": round(gap_from - fault, 3) if gap_from else None,
            "requests": len(in_window), "failed": sum(1 for r in in_window if not r.get("ok")),
            "errors": sorted(set(r["error"] for r in in_window if not r.get("ok")))[:5],
            "backend_before": backend_before,
            "backend_switch_s": round(switch["end"] - fault, 3) if switch else None,
            "backend_after": switch["backend"] if switch else backend_before,
            "vip_holder_before": holder_before[0] if len(holder_before) == 1 else holder_before or None,
            "vip_move_s": round(vip_move["at"] - fault, 3) if vip_move else None,
            "vip_holder_after": vip_move["proxy"] if vip_move else (holder_before[0] if len(holder_before) == 1 else None),
            "seed": SEEDS[drill],
        }
        restarted = [e for e in events["events"] if e["drill"] == drill and e["what"] == "angel_restarted"]
        if restarted:
            result["angel_restart_s"] = round(restarted[0]["at"] - fault, 3)
        synced = [e for e in events["events"] if e["drill"] == drill and e["what"] == "rejoined_synced"]
        if drill == "writer_kill":
            # Writes the proxies sent the killed node after it died and before its log says it was Synced again
            # (must be none). It is dead once a request through it failed after the kill: the kill's timestamp is
            # taken just before pkill lands, and a commit in flight then is acknowledged by the node while it is
            # still Synced, which is no write to an unsynced node.
            killed_host = backend_before
            synced_at = synced[0]["at"] if synced else None
            dead_at = next((r["end"] for r in sorted(requests, key=lambda r: r["end"])
                            if not r.get("ok") and r["end"] > fault), fault)
            unsynced = [r for r in acked if r["backend"] == killed_host and r["start"] > dead_at
                        and (synced_at is None or r["start"] < synced_at)]
            result["rejoin_synced_s"] = round(synced_at - fault, 3) if synced_at else None
            result["dead_s"] = round(dead_at - fault, 3)
            result["writes_to_unsynced_node"] = len(unsynced)
            # each one's start and end, seconds after the kill: the evidence when this is not 0
            result["unsynced_writes_s"] = [[round(r["start"] - fault, 3), round(r["end"] - fault, 3)]
                                           for r in unsynced][:5]
        holders = [e for e in events["events"] if e["drill"] == drill and e["what"] == "holders"]
        if holders:
            result["holders_after"] = holders[-1]["holders"]
        results[drill] = result
    synced = [e["what"] for e in events["events"] if e["drill"] == "end"]
    return {"drills": results, "galera_at_end": synced[-1] if synced else None,
            "requests": len(requests), "acknowledged": len(acked)}


def svg(drill, result, requests, events, backends):
    """One drill's timeline, 2 s before the fault to the end of its window (at most 8 s after)."""
    fault = result["fault_at"]
    t0, t1 = fault - 2.0, min(result["window_end"], fault + 8.0)
    width, height, left, right, top, bottom = 900, 380, 60, 170, 40, 50
    plot_w, plot_h = width - left - right, height - top - bottom
    shown = [r for r in requests if t0 <= r["start"] <= t1]
    max_ms = max([500.0] + [min((r["end"] - r["start"]) * 1000, 2000) for r in shown])
    x = lambda t: left + (t - t0) / (t1 - t0) * plot_w  # noqa: E731
    y = lambda ms: top + plot_h - min(ms, max_ms) / max_ms * plot_h  # noqa: E731
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" '
           'font-size="12">' % (width, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="20" font-size="14" font-weight="bold">%s: longest write gap %.3f s '
           '(seeds: %s %s)</text>' % (left, TITLES[drill], result["longest_write_gap_s"], result["seed"][0],
                                      result["seed"][1]),
           '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (left, top + plot_h, left + plot_w, top + plot_h),
           '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (left, top, left, top + plot_h)]
    second = int(t0 - fault) - 1
    while second <= t1 - fault:
        px = x(fault + second)
        if left <= px <= left + plot_w:
            out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>' % (px, top, px, top + plot_h))
            out.append('<text x="%.1f" y="%d" text-anchor="middle">%+d s</text>' % (px, top + plot_h + 15, second))
        second += 1
    for fraction in (0, 0.25, 0.5, 0.75, 1):
        ms = max_ms * fraction
        out.append('<text x="%d" y="%.1f" text-anchor="end">%d ms</text>' % (left - 5, y(ms) + 4, ms))
    out.append('<text x="%d" y="%d">request start (relative to the fault); dot height = latency</text>'
               % (left, height - 10))
    for record in shown:
        latency = (record["end"] - record["start"]) * 1000
        px, py = x(record["start"]), y(latency)
        if record.get("ok"):
            color = COLORS[backends.index(record["backend"]) % len(COLORS)]
            out.append('<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>' % (px, py, color))
        else:
            out.append('<path d="M%.1f %.1fl6 6m0 -6l-6 6" stroke="#d62828" stroke-width="1.5"/>' % (px - 3, py - 3))
    marks = [("fault", fault, "#d62828")]
    if result.get("vip_move_s") is not None:
        marks.append(("VIP to %s" % result["vip_holder_after"], fault + result["vip_move_s"], "#1d4ed8"))
    if result.get("backend_switch_s") is not None and result["backend_after"] != result["backend_before"]:
        marks.append(("writes on %s" % result["backend_after"], fault + result["backend_switch_s"], "#7b2cbf"))
    if result.get("angel_restart_s") is not None:
        marks.append(("angel restarted", fault + result["angel_restart_s"], "#f77f00"))
    for index, (label, at, color) in enumerate(marks):
        if t0 <= at <= t1:
            px = x(at)
            out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-dasharray="4 3"/>'
                       % (px, top, px, top + plot_h, color))
            out.append('<text x="%.1f" y="%d" fill="%s">%s</text>' % (px + 3, top + 12 + 14 * index, color, label))
    legend_x = left + plot_w + 15
    entries = [(b, COLORS[i % len(COLORS)], "dot") for i, b in enumerate(backends)] + [("failed", "#d62828", "x")]
    for index, (label, color, shape) in enumerate(entries):
        ly = top + 10 + index * 18
        if shape == "dot":
            out.append('<circle cx="%d" cy="%d" r="4" fill="%s"/>' % (legend_x, ly - 4, color))
        else:
            out.append('<path d="M%d %dl7 7m0 -7l-7 7" stroke="%s" stroke-width="1.5"/>' % (legend_x - 3, ly - 8, color))
        out.append('<text x="%d" y="%d">%s</text>' % (legend_x + 10, ly, label))
    summary = ["gap %.3f s" % result["longest_write_gap_s"], "failed %d of %d" % (result["failed"], result["requests"])]
    if result.get("vip_move_s") is not None:
        summary.append("VIP move %.3f s" % result["vip_move_s"])
    if result.get("backend_switch_s") is not None and result["backend_after"] != result["backend_before"]:
        summary.append("backend switch %.3f s" % result["backend_switch_s"])
    if result.get("angel_restart_s") is not None:
        summary.append("angel %.3f s" % result["angel_restart_s"])
    for index, line in enumerate(summary):
        out.append('<text x="%d" y="%d">%s</text>' % (legend_x, top + 140 + index * 16, line))
    out.append("</svg>")
    return "\n".join(out)


def markdown(report):
    lines = ["| drill | longest write gap | failed requests | VIP move | backend switch | angel restart | seeds |",
             "|---|---|---|---|---|---|---|"]
    fmt = lambda v: "-" if v is None else "%.3f s" % v  # noqa: E731
    for drill, r in report["drills"].items():
        lines.append("| %s | **%.3f s** | %d / %d | %s | %s | %s | %s: %s |" % (
            TITLES[drill], r["longest_write_gap_s"], r["failed"], r["requests"], fmt(r["vip_move_s"]),
            fmt(r["backend_switch_s"]) if r["backend_after"] != r["backend_before"] else "-",
            fmt(r.get("angel_restart_s")), r["seed"][0], r["seed"][1]))
    writer = report["drills"].get("writer_kill")
    if writer:
        lines.append("")
        lines.append("Killed writer (%s) Synced again after %s (restarted by systemd, rejoined); writes it "
                     "acknowledged before that: %d." % (writer["backend_before"], fmt(writer["rejoin_synced_s"]),
                                                       writer["writes_to_unsynced_node"]))
    return "\n".join(lines) + "\n"


def main():
    directory = sys.argv[1]
    requests, events = load(directory)
    report = measure(requests, events)
    backends = sorted(set(r["backend"] for r in requests if r.get("ok")))
    for drill, result in report["drills"].items():
        with open(os.path.join(directory, "%s.svg" % drill), "w", encoding="utf-8") as handle:
            handle.write(svg(drill, result, requests, events, backends))
    with open(os.path.join(directory, "results.json"), "w", encoding="utf-8") as handle:
        json.dump(report, handle, indent=1)
    with open(os.path.join(directory, "results.md"), "w", encoding="utf-8") as handle:
        handle.write(markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
