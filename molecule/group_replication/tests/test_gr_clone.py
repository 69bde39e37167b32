"""Verify the clone drill: a member stopped while the writer committed on the two others, whose binary logs
were then flushed and purged, came back through clone (its performance_schema.clone_status, recorded right
after the converge: a completed clone that began after the stop, from one of the donors) and holds every id
the writer acknowledged while it was down."""
import json
import os

import pytest


@pytest.fixture(scope="module")
def clone(lab_ips):
    with open(os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "drill", "clone.json"), encoding="utf-8") as handle:
        record = json.load(handle)
    decision = record.pop("converge_decision", {}) or {}
    role = record.pop("role_report", {}) or {}
    record["role_saw"] = {"member_state": role.get("member_state"), "clone": role.get("clone")}
    print("\nclone drill: %s\nconverge decision: %s: %s" % (record, decision.get("decision"), decision.get("reason")))
    return record


def test_the_donors_purged_binary_logs(clone):
    assert sorted(clone["donors_gtid_purged"]) == sorted(clone["donors"])
    assert all(purged for purged in clone["donors_gtid_purged"].values()), clone["donors_gtid_purged"]


def test_the_member_came_back_through_a_clone_from_a_donor(clone, lab_ips):
    assert len(clone["clone_status"]) == 1, "no clone ever ran on %s: %s" % (clone["victim"], clone["clone_status"])
    state, begin, end, source, error_no = clone["clone_status"][0]
    assert state == "Completed" and error_no == "0", clone["clone_status"]
    assert clone["stop_at"] < float(begin) <= float(end) < clone["back_at"], \
        "the clone did not run between the stop and the end of the converge: %s" % clone
    assert source.rsplit(":", 1)[0] in [lab_ips[d] for d in clone["donors"]], source


def test_it_holds_every_id_acknowledged_while_it_was_down(clone, drill, lab_hosts, sql):
    down = []
    with open(os.path.join(drill["dir"], "acks.log"), encoding="utf-8") as handle:
        for line in handle:
            ident, epoch, _ = line.split()
            if clone["stop_at"] <= float(epoch) <= clone["back_at"]:
                down.append(int(ident))
    assert len(down) >= 50, len(down)
    present = {int(row[0]) for row in sql(lab_hosts[clone["victim"]], "SELECT id FROM app.counter WHERE id BETWEEN "
                                          "%d AND %d" % (min(down), max(down)))}
    missing = sorted(set(down) - present)
    assert not missing, "%s lacks %d ids acknowledged while it was down: %s" % (clone["victim"], len(missing), missing[:10])


def test_the_role_reported_the_clone(clone, lab_ips):
    # What the converge's wait for a member that joined by itself on start reported (gr_member_state's clone).
    seen = clone["role_saw"]["clone"]
    assert seen and seen["state"] == "Completed" and seen["error_no"] == 0, clone["role_saw"]
    assert seen["source"] == clone["clone_status"][0][3]


def test_the_converge_corrected_the_option_file_before_it_started_the_member(clone):
    # The drill left it a value it cannot start with (and proved that it cannot); it came back, so the corrected
    # file was written before the start, and the value is gone.
    assert clone["bad_option_left"] == 0, clone
