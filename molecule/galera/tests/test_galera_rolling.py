"""After a rolling restart under continuous writes: every member restarted during the roll (uptimes taken
right after it), the cluster never below N-1 members while it rolled (sampled every 0.2 s on every node),
writes acknowledged throughout (counted from the first restart on), every acknowledged row on every node;
then the role's handler restarted each member for a static change."""
import json
import os

import pytest

NODES = ("g1", "g2", "g3")

# This drill's record (side_effect.yml runs two drills on one converge); read by conftest's `drill` fixture.
WRITER_RECORD = "drill-rolling"


@pytest.fixture(scope="module")
def roll(drill):
    with open(os.path.join(drill["dir"], "roll.json"), encoding="utf-8") as handle:
        return json.load(handle)


@pytest.fixture(scope="module")
def samples(drill, roll):
    """(time, host, size or None, status or None) sampled during the roll; None when the host did not answer."""
    rows = []
    with open(os.path.join(drill["dir"], "samples.log"), encoding="utf-8") as handle:
        for line in handle:
            fields = line.split()
            at = float(fields[0])
            if roll["started"] <= at <= roll["ended"]:
                if fields[2] == "down":
                    rows.append((at, fields[1], None, None))
                else:
                    rows.append((at, fields[1], int(fields[2]), fields[3]))
    return rows


def test_every_member_restarted_during_the_roll(roll):
    took = roll["ended"] - roll["started"]
    print("rolling restart took %.1f s; uptimes right after it: %s" % (took, roll["uptimes"]))
    for node in NODES:
        assert roll["uptimes"][node] <= took + 2, "%s was not restarted by the rolling restart" % node


def test_the_member_taking_the_writes_restarted_last(drill, roll, lab_ips):
    """rolling_restart_galera.yml restarts the member with the most client sessions last (galera_writer,
    rolling_order): the member that acknowledged the writer's last commit before the roll began has the
    shortest uptime right after it, so the writer moved once, at the end."""
    node_of = dict((ip, node) for node, ip in lab_ips.items())
    before = []
    with open(os.path.join(drill["dir"], "acks.log"), encoding="utf-8") as handle:
        for line in handle:
            fields = line.split()
            if float(fields[1]) < roll["started"]:
                before.append(fields[2])
    assert before, "no commit acknowledged before the roll began"
    writer = node_of[before[-1]]
    last = min(NODES, key=lambda node: roll["uptimes"][node])
    print("the writer used %s when the roll began; restarted last: %s (uptimes %s)" % (writer, last, roll["uptimes"]))
    assert last == writer, "%s took the writes but %s restarted last" % (writer, last)


def test_the_cluster_never_dropped_below_n_minus_one(samples):
    # The cluster is the Primary component: a member that is starting (or leaving) answers with its own view,
    # non-Primary and as small as 1, which says nothing about the others. Two members down at once would
    # leave a Primary component of 1, and that fails here.
    sizes = [size for _, _, size, status in samples if status == "Primary"]
    outside = sorted(set("%s %s" % (host, status) for _, host, _, status in samples
                         if status is not None and status != "Primary"))
    print("%d samples during the roll; Primary component sizes seen: %s; answers from outside it: %s" % (
        len(samples), sorted(set(sizes)), outside or "none"))
    assert len(samples) > 50, "too few samples during the roll to judge"
    assert min(sizes) >= len(NODES) - 1, "the Primary component dropped to %d members" % min(sizes)
    assert min(sizes) == len(NODES) - 1, "no member ever left: nothing restarted while sampling"


def test_writes_were_acknowledged_from_the_first_restart_on(drill, roll, samples):
    first_restart = min(at for at, _, size, _ in samples if size is None or size < len(NODES))
    after = []
    with open(os.path.join(drill["dir"], "acks.log"), encoding="utf-8") as handle:
        for line in handle:
            at = float(line.split()[1])
            if at >= first_restart:
                after.append(at)
    summary = drill["summary"]
    print("rolling restart: %d commits acknowledged, %d of them from the first restart on, %d failed (%s)" % (
        summary["acked"], len(after), summary["failed_commits"], summary["failures"]))
    assert len(after) > 200
    assert max(after) >= roll["ended"] - 5, "the writer stopped acknowledging before the roll ended"


@pytest.mark.parametrize("node", NODES)
def test_every_acknowledged_row_is_on_every_node(lab_hosts, sql, drill, node):
    present = {int(row[0]) for row in sql(lab_hosts[node], "SELECT id FROM app.counter")}
    missing = sorted(drill["acked"] - present)
    assert not missing, "%s lacks %d acknowledged rows, first %s" % (node, len(missing), missing[:10])


@pytest.mark.parametrize("node", NODES)
def test_the_role_handler_restarted_each_member_for_its_static_change(lab_hosts, sql, node):
    assert sql(lab_hosts[node], "SELECT @@table_open_cache_instances") == [["3"]]
    wsrep = dict(sql(lab_hosts[node], "SHOW GLOBAL STATUS LIKE 'wsrep_%'"))
    assert (wsrep["wsrep_local_state_comment"], wsrep["wsrep_cluster_size"]) == ("Synced", "3")
