"""The rolling upgrade plan of a Galera cluster (module_utils/galera_upgrade.py) and the role's refusal."""
import json
import os
import subprocess
import sys

import pytest
import yaml

from ansible_collections.dbops.clusters.plugins.module_utils import galera_upgrade as gu

MEMBERS = ["g1", "g2", "g3"]
NAMES = ["mariadb-server", "galera-4"]
OLD = {"mariadb-server": "1:11.8.9+ds-0+deb13u1", "galera-4": "26.4.23-0+deb13u1"}
NEW = {"mariadb-server": "1:11.8.9+ds-4", "galera-4": "26.4.27-1+b1"}
UUID = "f3fce748-e5f3-11f1-9b48-23d4b883f3ea"


def wsrep(**changes):
    value = {"cluster_status": "Primary", "local_state_comment": "Synced", "cluster_size": 3, "ready": "ON",
             "cluster_state_uuid": UUID}
    value.update(changes)
    return value


def member(installed=None, target=None, connections=0, **wsrep_changes):
    installed, target = installed or OLD, target or NEW
    return {"wsrep": wsrep(**wsrep_changes), "reason": "", "client_connections": connections,
            "packages": dict((name, {"installed": installed[name], "target": target[name],
                                     "available": [NEW[name], OLD[name]]}) for name in NAMES)}


def states(**overrides):
    value = dict((name, member()) for name in MEMBERS)
    value.update(overrides)
    return value


@pytest.mark.parametrize("left, right, expected", [
    ("26.4.23-0+deb13u1", "26.4.27-1+b1", -1),
    ("1:11.8.9+ds-0+deb13u1", "1:11.8.9+ds-4", -1),
    ("1:11.8.9+ds-4", "1:11.8.9+ds-4", 0),
    ("1:10.0", "11.8.9", 1),                  # the epoch wins
    ("1.0~rc1-1", "1.0-1", -1),              # ~ sorts before the end
    ("1.0a-1", "1.0+b-1", -1),               # letters before other characters
    ("26.4.27-1+b1", "26.4.27-1", 1),
    ("1.10", "1.9", 1),                      # digit runs as numbers
])
def test_debian_version_order(left, right, expected):
    assert gu.compare_versions(left, right) == expected
    assert gu.compare_versions(right, left) == -expected  # pylint: disable=arguments-out-of-order


def test_every_member_upgraded_the_writer_last():
    plan = gu.plan_upgrade(MEMBERS, states(g1=member(connections=2), g2=member(connections=1),
                                           g3=member(connections=1)), NAMES, MEMBERS)
    assert plan["refusals"] == []
    assert plan["order"] == ["g2", "g3", "g1"]
    assert plan["writer"] == "g1" and "g1 takes the writes" in plan["why"]
    assert plan["steps"] == {"g1": "upgrade", "g2": "upgrade", "g3": "upgrade"}
    assert plan["changes"]["g2"]["galera-4"] == [OLD["galera-4"], NEW["galera-4"]]
    assert plan["cluster_state_uuid"] == UUID


def test_no_client_keeps_the_groups_order():
    plan = gu.plan_upgrade(MEMBERS, states(), NAMES, MEMBERS)
    assert plan["order"] == MEMBERS and plan["writer"] is None


def test_a_second_run_skips_the_members_already_upgraded():
    plan = gu.plan_upgrade(MEMBERS, states(g2=member(installed=NEW)), NAMES, MEMBERS)
    assert plan["refusals"] == []
    assert plan["steps"] == {"g1": "upgrade", "g2": "skip", "g3": "upgrade"}
    assert plan["changes"]["g2"] == {}


def test_one_package_left_behind_is_still_upgraded():
    partly = dict(NEW, **{"galera-4": OLD["galera-4"]})
    plan = gu.plan_upgrade(MEMBERS, states(g3=member(installed=partly)), NAMES, MEMBERS)
    assert plan["steps"]["g3"] == "upgrade" and list(plan["changes"]["g3"]) == ["galera-4"]


def test_a_member_outside_the_play_is_refused():
    plan = gu.plan_upgrade(MEMBERS, {"g1": member(), "g2": member()}, NAMES, ["g1", "g2"])
    assert len(plan["refusals"]) == 1
    assert "g3 (members of pxc_galera_group=galera) are outside the play" in plan["refusals"][0]


@pytest.mark.parametrize("changes, expected", [
    ({"local_state_comment": "Donor/Desynced"}, "g2: wsrep_local_state_comment is 'Donor/Desynced'"),
    ({"cluster_size": 2}, "g2: wsrep_cluster_size is 2, wanted 3"),
    ({"cluster_status": "non-Primary"}, "g2: wsrep_cluster_status is 'non-Primary'"),
])
def test_an_unhealthy_or_incomplete_cluster_is_refused(changes, expected):
    plan = gu.plan_upgrade(MEMBERS, states(g2=member(**changes)), NAMES, MEMBERS)
    assert any(refusal.startswith(expected) for refusal in plan["refusals"]), plan["refusals"]


def test_a_stopped_member_is_refused():
    stopped = member()
    stopped.update(wsrep=None, reason="the server does not run")
    plan = gu.plan_upgrade(MEMBERS, states(g3=stopped), NAMES, MEMBERS)
    assert plan["refusals"] == ["g3: the server does not run with wsrep (the server does not run)"]


def test_two_cluster_histories_are_refused():
    plan = gu.plan_upgrade(MEMBERS, states(g3=member(cluster_state_uuid="0" * 8)), NAMES, MEMBERS)
    assert any("different cluster state UUIDs" in refusal for refusal in plan["refusals"])
    assert plan["cluster_state_uuid"] is None


def test_a_target_the_source_does_not_have_is_refused():
    missing = member()
    missing["packages"]["galera-4"].update(target=None, wanted="26.4.99-1")
    plan = gu.plan_upgrade(MEMBERS, states(g1=missing), NAMES, MEMBERS)
    assert plan["refusals"] == ["g1: the package source has no galera-4 26.4.99-1 (available: %s, %s)"
                                % (NEW["galera-4"], OLD["galera-4"])]


def test_a_downgrade_is_refused():
    plan = gu.plan_upgrade(MEMBERS, states(g1=member(installed=NEW, target=OLD)), NAMES, MEMBERS)
    assert len(plan["refusals"]) == 2
    assert all("a downgrade, refused" in refusal for refusal in plan["refusals"])


@pytest.mark.parametrize("installed, target, refused", [
    ("1:11.8.9+ds-0+deb13u1", "1:11.8.9+ds-4", None),              # within a series
    ("1:11.4.5-1", "1:11.8.9+ds-4", None),                         # to the next series
    ("1:10.11.18-0+deb12u1", "1:11.8.9+ds-4", "skips a major series"),   # bookworm -> trixie
    ("1:10.11.18-0+deb12u1", "1:11.4.5-1", None),
    ("1:10.5.26-1", "1:10.6.20-1", "a series this playbook does not know"),
])
def test_mariadb_moves_one_series_at_a_time(installed, target, refused):
    server = {"installed": installed, "target": target, "available": [installed, target]}
    value = dict((name, dict(member(), packages={"mariadb-server": server,
                                                 "galera-4": member()["packages"]["galera-4"]}))
                 for name in MEMBERS)
    refusals = [r for r in gu.plan_upgrade(MEMBERS, value, NAMES, MEMBERS)["refusals"] if "series" in r]
    if refused:
        assert len(refusals) == 1 and refused in refusals[0], refusals
        assert "pxc_galera_upgrade_versions" in refusals[0] and "one major version at a time" in refusals[0]
    else:
        assert refusals == []


def test_percona_xtradb_cluster_follows_mysqls_paths():
    assert gu.series_jump_refusal("percona-xtradb-cluster", "8.0.40-1", "8.4.3-1") is None
    assert "skips the LTS series" in gu.series_jump_refusal("percona-xtradb-cluster", "8.0.40-1", "9.7.4-1")


def test_every_reason_at_once():
    stopped = member(installed=NEW, target=OLD)
    stopped.update(wsrep=None)
    plan = gu.plan_upgrade(MEMBERS, {"g1": stopped, "g2": member()}, NAMES, ["g1", "g2"])
    assert len(plan["refusals"]) == 4    # outside the play, not running, two downgrades


def test_the_state_transfer_tools_are_not_upgraded():
    assert gu.upgrade_packages(["mariadb-server", "galera-4", "socat", "rsync"]) == ["mariadb-server", "galera-4"]


def test_the_role_refuses_to_move_a_running_member():
    packages = dict((name, {"installed": OLD[name], "target": NEW[name]}) for name in NAMES)
    reason = gu.running_member_refusal("g1", packages, NAMES)
    assert "galera-4 26.4.23-0+deb13u1 -> 26.4.27-1+b1" in reason
    assert "playbooks/rolling_upgrade_galera.yml" in reason
    same = dict((name, {"installed": OLD[name], "target": OLD[name]}) for name in NAMES)
    assert gu.running_member_refusal("g1", same, NAMES) == ""
    # Nothing installed yet: a new member, the role installs it.
    assert gu.running_member_refusal("g1", {"galera-4": {"installed": None, "target": NEW["galera-4"]}},
                                     NAMES) == ""


# ------------------------------------------------------------------ the role's refusal, rendered by Ansible

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INSTALL = os.path.join(REPO, "roles", "pxc_galera", "tasks", "install.yml")


def install_tasks():
    with open(INSTALL, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def run_refusal(tmp_path, installed, target):
    """Runs install.yml's refusal task (as written in the role) with apt_package_versions' answer given."""
    refusal = next(task for task in install_tasks() if task["name"].startswith("Refuse to move"))
    packages = dict((name, {"installed": installed[name], "target": target[name]}) for name in NAMES)
    variables = {"pxc_galera_package_release": "sid", "pxc_galera_package_versions": {"packages": packages},
                 "pxc_galera_flavor_info": {"galera": {"packages": NAMES + ["socat"]}}}
    (tmp_path / "vars.json").write_text(json.dumps(variables))
    play = tmp_path / "play.yml"
    play.write_text(yaml.safe_dump([{"hosts": "g1", "gather_facts": False, "tasks": [refusal]}]))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".collections"))
    return subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "g1,",
                           "-c", "local", "-e", "@%s" % (tmp_path / "vars.json"), str(play)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False)


def test_the_role_refuses_another_release_on_an_installed_member_before_any_change(tmp_path):
    names = [task["name"] for task in install_tasks()]
    refusal = next(index for index, name in enumerate(names) if name.startswith("Refuse to move"))
    assert refusal < names.index("Install the server, Galera and the SST tools (the MySQL family's install path)")
    assert all(not task.get("ansible.builtin.apt") and not task.get("ansible.builtin.service")
               for task in install_tasks()[:refusal])
    result = run_refusal(tmp_path, OLD, NEW)
    assert result.returncode != 0
    assert ("pxc_galera_package_release=sid: g1 runs and its inputs ask for other package versions "
            "(mariadb-server 1:11.8.9+ds-0+deb13u1 -> 1:11.8.9+ds-4, galera-4 26.4.23-0+deb13u1 -> 26.4.27-1+b1)"
            in " ".join(result.stdout.split())), result.stdout[-2000:]
    assert "run playbooks/rolling_upgrade_galera.yml" in " ".join(result.stdout.split())


def test_the_role_takes_a_release_that_keeps_what_is_installed(tmp_path):
    result = run_refusal(tmp_path, NEW, NEW)
    assert result.returncode == 0, result.stdout[-2000:]
