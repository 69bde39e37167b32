"""Membership under --limit (5 members): what the drills of side_effect.yml did, and the cluster they left."""
import json
import os
import time

import pytest

NODES = ("g1", "g2", "g3", "g4", "g5")


@pytest.fixture(scope="module")
def drills():
    directory = os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "drill")
    with open(os.path.join(directory, "runs.json"), encoding="utf-8") as handle:
        runs = json.load(handle)
    with open(os.path.join(directory, "before.json"), encoding="utf-8") as handle:
        before = {node: dict(line.split("\t") for line in text.splitlines())
                  for node, text in json.load(handle).items()}
    return runs, before


def status(sql, host):
    return dict(sql(host, "SHOW GLOBAL STATUS WHERE Variable_name LIKE 'wsrep_%' OR Variable_name = 'Uptime'"))


def test_before_the_drills_g1_and_g2_ran_a_primary_component_of_two(drills):
    runs, before = drills
    for node in ("g1", "g2"):
        assert (before[node]["wsrep_cluster_status"], before[node]["wsrep_cluster_size"]) == ("Primary", "2")


def test_limit_with_unreachable_members_is_refused_naming_them(drills):
    runs, _ = drills
    refused = runs["refused"]
    print("refused run: rc", refused["rc"], "|", [line for line in refused["out"].splitlines()
                                                   if "cannot be reached" in line][:1])
    assert refused["rc"] != 0
    assert "g1, g2 (members of galera) cannot be reached" in refused["out"]
    assert "Refusing before any change" in refused["out"]
    assert "pxc_galera_force_bootstrap_node" in refused["out"], "the refusal does not name the way out"
    assert "galera_new_cluster" not in refused["out"] and "Start the next member" not in refused["out"]


def test_limit_on_stopped_members_joins_them_to_the_running_component(drills):
    runs, _ = drills
    joined = runs["joined"]
    decision = [line for line in joined["out"].splitlines() if "join: a Primary component" in line]
    print("joined run: rc", joined["rc"], "|", decision[:1])
    assert joined["rc"] == 0, joined["out"][-3000:]
    assert decision, "the decision was not to join the running component"
    assert "Start a new cluster" not in joined["out"].replace("skipping", "")


@pytest.mark.parametrize("node", NODES)
def test_one_cluster_of_five_with_the_uuid_g1_and_g2_had(lab_hosts, sql, drills, node):
    _, before = drills
    wsrep = status(sql, lab_hosts[node])
    assert (wsrep["wsrep_local_state_comment"], wsrep["wsrep_cluster_status"], wsrep["wsrep_cluster_size"]) == \
        ("Synced", "Primary", "5")
    assert wsrep["wsrep_cluster_state_uuid"] == before["g1"]["wsrep_cluster_state_uuid"], \
        "%s is in another cluster: a second Primary component was bootstrapped" % node


@pytest.mark.parametrize("node", ("g1", "g2"))
def test_the_running_members_were_never_restarted(drills, node):
    # read right after the drills (the whole-cluster restore drill restarts every member later)
    runs, before = drills
    uptime, read_at = runs["uptime_after"][node]
    assert uptime >= int(before[node]["Uptime"]) + int(read_at - runs["started"]) - 5


def test_rolling_restart_with_limit_restarts_only_that_member_gated_on_all_five(lab_hosts, sql, drills):
    runs, _ = drills
    rolled = runs["rolled"]
    assert rolled["rc"] == 0, rolled["out"][-3000:]
    assert "Restart g5" in rolled["out"] and "Restart g4" not in rolled["out"]
    uptime = int(status(sql, lab_hosts["g5"])["Uptime"])
    assert uptime < time.time() - runs["rolled_at"], "g5 was not restarted by rolling_restart.yml --limit g5"


def test_rolling_restart_with_a_member_down_refuses_before_the_member_leaves(lab_hosts, sql, drills):
    runs, _ = drills
    refused = runs["roll_refused"]
    print("refused roll: rc", refused["rc"], "|", [line for line in refused["out"].splitlines()
                                                   if "wsrep_cluster_size is" in line][:1])
    assert refused["rc"] != 0
    assert "wsrep_cluster_size is 4, wanted 5" in refused["out"]
    # g5 is stopped for the --limit drill next: its uptime was read right after the refused run.
    uptime, read_at = runs["g5_after_refusal"]
    assert uptime >= read_at - runs["roll_refused_at"] - 2, "g5 restarted although a member was down"
