"""Verify the failover drill: after kill -9 of the primary another member was elected and the writer's
commits resumed; the planned switch moved the role; no acknowledged row is missing on any member. Prints the
write gap around each event (the time between the last commit acknowledged before it and the first after)."""
import json
import os

import pytest

MEMBERS = ("gr1", "gr2", "gr3")


@pytest.fixture(scope="module")
def failover():
    directory = os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "drill")
    with open(os.path.join(directory, "failover.json"), encoding="utf-8") as handle:
        events = json.load(handle)
    with open(os.path.join(directory, "failover-writer.json"), encoding="utf-8") as handle:
        summary = json.load(handle)
    with open(os.path.join(directory, "failover-acks.txt"), encoding="utf-8") as handle:
        acked = {int(line) for line in handle if line.strip()}
    return {"events": events, "summary": summary, "acked": acked}


@pytest.fixture(scope="module")
def commit_times(lab_hosts, sql, failover):
    rows = sql(lab_hosts["gr1"], "SELECT id, UNIX_TIMESTAMP(at) FROM app.failover ORDER BY at")
    return sorted(float(at) for ident, at in rows if int(ident) in failover["acked"])


def gap(times, event):
    before = [t for t in times if t <= event]
    after = [t for t in times if t > event]
    assert before and after, "no commit on one side of the event"
    return round(after[0] - before[-1], 2)


def test_a_new_primary_was_elected_and_writes_resumed(failover, commit_times):
    events = failover["events"]
    print("\nfailover drill: %s\nwriter: %s" % (events, failover["summary"]))
    assert events["elected"] and events["elected"] != \
        dict(gr1="10.89.222.11", gr2="10.89.222.12", gr3="10.89.222.13")[events["old_primary"]]
    assert any(t > events["kill_at"] for t in commit_times), "no commit after the primary was killed"


def test_write_gaps(failover, commit_times):
    events = failover["events"]
    unplanned = gap(commit_times, events["kill_at"])
    planned = gap(commit_times, events["switch_at"])
    print("\nWRITE GAP unplanned failover (kill -9 of the primary): %.2f s\n"
          "WRITE GAP planned switch (group_replication_set_as_primary): %.2f s" % (unplanned, planned))
    assert unplanned < 60
    assert planned < 15


@pytest.mark.parametrize("member", MEMBERS)
def test_no_acknowledged_row_lost_in_the_failover(lab_hosts, sql, failover, member):
    present = {int(row[0]) for row in sql(lab_hosts[member], "SELECT id FROM app.failover")}
    missing = sorted(failover["acked"] - present)
    assert not missing, "%s lacks %d acknowledged ids, first %s" % (member, len(missing), missing[:10])
