"""Verify the complete-outage drill: playbooks/gr_reboot.yml bootstrapped the member that died last, which is
the member that acknowledged the writer's last commit (drill/acks.log), three members are ONLINE again and
every acknowledged row of both drills is on every member."""
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
    return {"order": order, "plan": reboot["plan"], "health": reboot["health"]}


def test_the_member_that_died_last_was_bootstrapped(outage):
    assert outage["plan"]["decision"] == "reboot", outage["plan"]["reason"]
    assert outage["plan"]["bootstrap_member"] == outage["order"]["killed_last"]


def test_it_acknowledged_the_writers_last_commit(drill, lab_ips, outage):
    with open(os.path.join(drill["dir"], "acks.log"), encoding="utf-8") as handle:
        last_host = handle.read().splitlines()[-1].split()[2]
    name_of = dict((ip, name) for name, ip in lab_ips.items())
    assert name_of[last_host] == outage["plan"]["bootstrap_member"], \
        "the writer's last commit was acknowledged by %s" % name_of[last_host]


def test_three_members_online_after_the_reboot(outage):
    assert outage["health"]["ok"], outage["health"]["unmet"]
    assert sorted(m["state"] for m in outage["health"]["view"]) == ["ONLINE"] * 3


@pytest.mark.parametrize("member", MEMBERS)
def test_no_acknowledged_row_lost(lab_hosts, sql, drill, member):
    assert drill["summary"]["acked"] >= 200, drill["summary"]
    present = {int(row[0]) for row in sql(lab_hosts[member], "SELECT id FROM app.counter")}
    missing = sorted(drill["acked"] - present)
    assert not missing, "%s lacks %d acknowledged ids, first %s" % (member, len(missing), missing[:10])
