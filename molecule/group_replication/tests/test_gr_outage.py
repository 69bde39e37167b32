"""Verify the complete-outage drill: playbooks/gr_reboot.yml bootstrapped the member that died last (the one
that acknowledged the writer's last row), and every acknowledged row is on every member."""
import json
import os

import pytest

MEMBERS = ("gr1", "gr2", "gr3")


@pytest.fixture(scope="module")
def outage(drill):
    with open(os.path.join(drill["dir"], "outage_order.json"), encoding="utf-8") as handle:
        order = json.load(handle)
    with open(os.path.join(drill["dir"], "reboot.json"), encoding="utf-8") as handle:
        reboot = json.load(handle)
    print("\nwriter: %s\norder: %s\nplan: %s: %s" % (drill["summary"], order, reboot["plan"]["decision"],
                                                    reboot["plan"]["reason"]))
    return {"order": order, "plan": reboot["plan"]}


def test_the_writer_committed_before_the_outage(drill):
    assert drill["summary"]["acked"] >= 200, drill["summary"]


def test_the_member_that_died_last_was_bootstrapped(outage):
    assert outage["plan"]["decision"] == "reboot", outage["plan"]["reason"]
    assert outage["plan"]["bootstrap_member"] == outage["order"]["killed_last"]


def test_the_client_saw_the_bootstrapped_member_acknowledge_the_last_row(lab_hosts, sql, drill, outage):
    chosen = outage["plan"]["bootstrap_member"]
    last = max(drill["acked"])
    node = sql(lab_hosts[chosen], "SELECT node FROM app.counter WHERE id = %d" % last)
    assert node == [[lab_hosts[chosen].check_output("hostname")]], (last, node)


@pytest.mark.parametrize("member", MEMBERS)
def test_no_acknowledged_row_lost(lab_hosts, sql, drill, member):
    present = {int(row[0]) for row in sql(lab_hosts[member], "SELECT id FROM app.counter")}
    missing = sorted(drill["acked"] - present)
    assert not missing, "%s lacks %d acknowledged ids, first %s" % (member, len(missing), missing[:10])
