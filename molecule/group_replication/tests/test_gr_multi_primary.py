"""Verify the multi-primary drill: after gr_member multi_primary every member was ONLINE and PRIMARY, rows
committed on gr2 and on gr3 were both read on gr1, and gr_member single_primary brought the group back to one
primary, the member it named (gr3)."""
import json
import os

import pytest


@pytest.fixture(scope="module")
def multi(lab_ips):
    with open(os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "drill", "multi_primary.json"),
              encoding="utf-8") as handle:
        record = json.load(handle)
    print("\nmulti-primary drill: on %s; off %s" % (record["on"], record["off"]))
    return record


def test_every_member_was_primary_in_multi_primary_mode(multi):
    assert multi["on"]["changed"], multi["on"]
    assert sorted((m["state"], m["role"]) for m in multi["view"]) == [("ONLINE", "PRIMARY")] * 3, multi["view"]


def test_rows_committed_on_two_members_were_read_on_the_third(multi):
    assert multi["rows_on_gr1"] == [["100", "multi-gr2"], ["101", "multi-gr3"]], multi["rows_on_gr1"]


def test_back_to_one_primary_the_named_member(multi, lab_ips):
    assert multi["off"]["changed"], multi["off"]
    assert multi["primary_after"] == lab_ips["gr3"]
    assert sorted(m["role"] for m in multi["view_after"]) == ["PRIMARY", "SECONDARY", "SECONDARY"]
