"""Bad role input fails before any change, with a message that names the problem.

Runs ansible-playbook against hosts that are never contacted: the checks under test run on the controller
(set_fact/assert) before the first task that would reach a host."""
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_play(tmp_path, hosts, role, tasks_from, variables):
    play = tmp_path / "play.yml"
    play.write_text(
        "- hosts: all\n  gather_facts: false\n  tasks:\n"
        "    - ansible.builtin.include_role:\n        name: %s\n        tasks_from: %s\n" % (role, tasks_from))
    extra = tmp_path / "vars.yml"
    extra.write_text("\n".join("%s: %r" % item for item in variables.items()) + "\n")
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_NOCOLOR="1")
    env["ANSIBLE_COLLECTIONS_PATH"] = os.path.join(REPO, ".collections")
    command = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", ",".join(hosts) + ",",
               "-c", "local", "-e", "@%s" % extra, str(play)]
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("nodes", [["n1", "n2"], ["n1", "n2", "n3", "n4"]])
def test_galera_refuses_an_even_or_too_small_cluster(tmp_path, nodes):
    result = run_play(tmp_path, nodes, "dbops.clusters.pxc_galera", "cluster_facts.yml",
                      {"pxc_galera_flavor": "mariadb", "pxc_galera_cluster_group": "all"})
    assert result.returncode != 0
    assert "at least three and an odd count" in result.stdout, result.stdout[-2000:]


def test_galera_refuses_a_flavor_without_galera(tmp_path):
    result = run_play(tmp_path, ["n1", "n2", "n3"], "dbops.clusters.pxc_galera", "cluster_facts.yml",
                      {"pxc_galera_flavor": "mysql"})
    assert result.returncode != 0 and "has no Galera" in result.stdout, result.stdout[-2000:]


def test_galera_accepts_three_nodes(tmp_path):
    result = run_play(tmp_path, ["n1", "n2", "n3"], "dbops.clusters.pxc_galera", "cluster_facts.yml",
                      {"pxc_galera_flavor": "mariadb", "pxc_galera_address": "10.0.0.1",
                       "pxc_galera_cluster_group": "all"})
    assert result.returncode == 0, result.stdout[-2000:]


def test_unknown_flavor_is_refused_naming_the_known_ones(tmp_path):
    result = run_play(tmp_path, ["n1", "n2", "n3"], "dbops.clusters.pxc_galera", "cluster_facts.yml",
                      {"pxc_galera_flavor": "oracle"})
    assert result.returncode != 0
    assert "unknown flavor 'oracle': expected one of mariadb, mysql, percona" in result.stdout, result.stdout[-2000:]
