"""Verify playbooks/rolling_restart_gr.yml from what the sampler saw (drill/rolling_samples.jsonl: every
member's uptime and its view of the group every ~0.25 s) and the writer's record, not from the playbook's
own report: every member restarted exactly once, the primary last and only after it had handed the primary
role to another member, every ONLINE member saw a majority ONLINE throughout, the writer kept committing,
and no id it acknowledged during the roll is missing anywhere. Prints the writer's longest pause."""
import json
import os

import pytest

MEMBERS = ("gr1", "gr2", "gr3")
# The writer's longest pause during the roll: a planned primary switch (~0.3 s) and the view changes of
# three clean leaves and rejoins; an election after a primary that vanished would be several seconds.
GAP_LIMIT = 5.0


@pytest.fixture(scope="module")
def roll(drill, lab_ips):
    name_of = dict((ip, name) for name, ip in lab_ips.items())
    with open(os.path.join(drill["dir"], "rolling.json"), encoding="utf-8") as handle:
        events = json.load(handle)
    samples = dict((m, []) for m in MEMBERS)
    with open(os.path.join(drill["dir"], "rolling_samples.jsonl"), encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            record["name"] = name_of[record["host"]]
            record["view"] = [(name_of.get(h, h), state, role) for h, state, role in record.get("view", [])]
            samples[record["name"]].append(record)
    restarts = {}
    for member, records in samples.items():
        restarts[member] = []
        last_up = last_in_group = None
        for record in records:
            if not record["up"]:
                continue
            if last_up is not None and record["uptime"] < last_up["uptime"]:
                # last_up: the last sample of the old server; last_in_group: its last sample as a member of the
                # group (the role stops Group Replication before the server, and a sample may fall between the
                # two, when the server sees only itself OFFLINE); started: when the new one started.
                restarts[member].append({"last_seen_before": last_up, "last_in_group_before": last_in_group,
                                         "started": record["t"] - record["uptime"]})
                last_in_group = None
            last_up = record
            if any(name == member and state != "OFFLINE" for name, state, _ in record["view"]):
                last_in_group = record
    print("\nrolling restart: %s; samples per member %s; restarts %s" % (
        events, dict((m, len(r)) for m, r in samples.items()),
        dict((m, [round(r["started"] - events["start"], 1) for r in rs]) for m, rs in restarts.items())))
    return {"events": events, "samples": samples, "restarts": restarts}


@pytest.mark.parametrize("member", MEMBERS)
def test_every_member_restarted_exactly_once_during_the_roll(roll, member):
    assert len(roll["samples"][member]) > 50, "too few samples of %s" % member
    restarts = roll["restarts"][member]
    assert len(restarts) == 1, "%s restarted %d times during the roll" % (member, len(restarts))
    assert roll["events"]["start"] - 1 <= restarts[0]["started"] <= roll["events"]["end"]


def test_the_primary_restarted_last(roll):
    primary = roll["events"]["primary_before"]
    started = dict((m, r[0]["started"]) for m, r in roll["restarts"].items() if r)
    assert primary in started, "the primary %s never restarted" % primary
    assert all(started[primary] > started[m] for m in started if m != primary), started


def test_the_primary_role_moved_before_the_primary_went_down(roll):
    primary = roll["events"]["primary_before"]
    restarts = roll["restarts"][primary]
    assert restarts, "the primary %s never restarted" % primary
    last_seen = restarts[0]["last_in_group_before"]
    assert last_seen, "no sample of %s as a member of the group before its restart" % primary
    # The old server's own view in its last answer as a member of the group, before it left and stopped: it must
    # already be a secondary, with another member ONLINE as primary.
    own = [role for name, state, role in last_seen["view"] if name == primary]
    others = [name for name, state, role in last_seen["view"] if role == "PRIMARY" and state == "ONLINE" and name != primary]
    assert own == ["SECONDARY"] and others, "%s's last view before its restart: %s" % (primary, last_seen["view"])


def test_every_online_member_saw_a_majority_online_throughout(roll):
    events, bad, answered = roll["events"], [], []
    for member, records in roll["samples"].items():
        for record in records:
            if record["up"] and record.get("state") == "ONLINE" and events["start"] <= record["t"] <= events["end"]:
                online = [name for name, state, _ in record["view"] if state == "ONLINE"]
                answered.append(record["t"])
                if len(online) * 2 <= len(MEMBERS):
                    bad.append((member, record["t"] - events["start"], record["view"]))
    assert not bad, "a member ONLINE in a minority: %s" % bad[:5]
    # And some ONLINE member answered in every 3 s of the roll: the group was there the whole time.
    answered.sort()
    holes = [(a - events["start"], b - a) for a, b in zip([events["start"]] + answered, answered + [events["end"]])
             if b - a > 3]
    assert not holes, "no ONLINE member answered for these stretches (start offset, length): %s" % holes


def test_the_writer_kept_committing_and_lost_nothing(roll, drill, lab_ips, lab_hosts, sql):
    events = roll["events"]
    acks = []
    with open(os.path.join(drill["dir"], "acks.log"), encoding="utf-8") as handle:
        for line in handle:
            ident, epoch, _ = line.split()
            acks.append((int(ident), float(epoch)))
    before = [a for a in acks if a[1] < events["start"]][-1:]
    during = [a for a in acks if events["start"] <= a[1] <= events["end"]]
    after = [a for a in acks if a[1] > events["end"]][:1]
    assert len(during) > 100, "the writer committed only %d rows during the roll" % len(during)
    series = before + during + after
    gap, where = max((b[1] - a[1], (a[0], b[0])) for a, b in zip(series, series[1:]))
    print("\nWRITE GAP rolling restart (3 members, primary switched before its restart): longest pause "
          "%.2f s (ids %d -> %d), %d commits in %.0f s" % (gap, where[0], where[1], len(during),
                                                             events["end"] - events["start"]))
    ids = set(a[0] for a in during)
    for member in MEMBERS:
        present = {int(row[0]) for row in sql(lab_hosts[member], "SELECT id FROM app.counter WHERE id BETWEEN %d AND %d"
                                              % (min(ids), max(ids)))}
        missing = sorted(ids - present)
        assert not missing, "%s lacks ids acknowledged during the roll: %s" % (member, missing[:10])
    assert gap < GAP_LIMIT, "the writer paused %.2f s during the roll" % gap


# The VIP client's longest pause: the proxies hold its writes while the primary role moves (drain, switch, the
# read_only monitor's next check every 200 ms) and while a drained member's sessions move; measured about 1 s.
VIP_GAP_LIMIT = 4.0


def test_no_commit_through_the_vip_failed_during_the_roll(roll, drill, lab_hosts, sql):
    """group_replication_proxies: each member drained before it stopped, the primary's writes held in the proxies
    during the switch. Any write sent to a stopping member or to the old primary once super_read_only would
    have failed here."""
    events = roll["events"]
    with open(os.path.join(drill["dir"], "vip_writer.json"), encoding="utf-8") as handle:
        summary = json.load(handle)
    acks = []
    with open(os.path.join(drill["dir"], "vip_acks.log"), encoding="utf-8") as handle:
        for line in handle:
            ident, epoch, _ = line.split()
            acks.append((int(ident), float(epoch)))
    during = [a for a in acks if events["start"] <= a[1] <= events["end"]]
    series = [a for a in acks if a[1] < events["start"]][-1:] + during + [a for a in acks if a[1] > events["end"]][:1]
    gap, where = max((b[1] - a[1], (a[0], b[0])) for a, b in zip(series, series[1:]))
    print("\nVIP CLIENT rolling restart through ProxySQL: %d commits acknowledged, %d failed %s; longest pause "
          "%.2f s (ids %d -> %d, bound %.1f s)" % (summary["acked"], summary["failed_commits"], summary["failures"],
                                                  gap, where[0], where[1], VIP_GAP_LIMIT))
    assert len(during) > 100, "the VIP client committed only %d rows during the roll" % len(during)
    assert summary["failed_commits"] == 0, "commits through the VIP failed during the roll: %s" % summary["failures"]
    ids = set(a[0] for a in acks)
    for member in MEMBERS:
        present = {int(row[0]) for row in sql(lab_hosts[member], "SELECT id FROM app.rolling_vip")}
        missing = sorted(ids - present)
        assert not missing, "%s lacks ids acknowledged through the VIP: %s" % (member, missing[:10])
    assert gap < VIP_GAP_LIMIT, "the VIP client paused %.2f s during the roll" % gap
