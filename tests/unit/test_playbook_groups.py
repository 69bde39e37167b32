"""Every operations playbook reads its cluster's inventory group from the variable the role reads, through
playbooks/cluster_group.yml, and refuses, before any host is contacted, a group that matches no host or a --limit
that leaves the group out (one once "succeeded" doing nothing: every play skipped, "no hosts matched", exit 0).

The runs use an inventory whose hosts cannot be reached (unreachable_playbooks.py): a refusal must come with no
host contacted. The PostgreSQL playbooks' whole-group rules are in test_postgres_playbooks.py."""
import glob
import os

import pytest
import yaml

from ansible_collections.dbops.clusters.tests.unit.unreachable_playbooks import REPO, run_playbook, write_inventory

# playbook: (the role's group variable, its default, every member must be in the play)
PLAYBOOKS = {
    "galera_backup.yml": ("pxc_galera_group", "galera", False),
    "galera_recover.yml": ("pxc_galera_group", "galera", False),
    "galera_restore_member.yml": ("pxc_galera_group", "galera", False),
    "rolling_restart_galera.yml": ("pxc_galera_group", "galera", False),
    "rolling_restart_mysql.yml": ("percona_server_group", "mysql", False),
    "gr_reboot.yml": ("group_replication_group", "group_replication", False),
    "rolling_restart_gr.yml": ("group_replication_group", "group_replication", False),
    "rolling_restart_mongodb.yml": ("mongodb_rs_group", "mongodb", True),
    "rolling_upgrade.yml": ("mongodb_rs_mongos_group", "mongodb_mongos", False),
    "rolling_upgrade_galera.yml": ("pxc_galera_group", "galera", False),
    "rolling_upgrade_rs.yml": ("mongodb_rs_group", "mongodb", True),
    "rolling_restart_etcd.yml": ("etcd_group", "etcd", False),
    "etcd_replace_member.yml": ("etcd_group", "etcd", True),
}
# Plays that act on the cluster target an in-memory group cluster_group.yml (or pg_whole_group.yml) fills; these
# playbooks pick their hosts otherwise (the lab's own, or hosts a first play on `all` names from variables: the
# pgBackRest repository host), and mysql_switchover.yml checks its group, the whole of it, together with its other
# inputs in its first play.
NOT_CLUSTER_OPERATIONS = {"lab.yml", "cluster_group.yml", "pg_backup.yml", "pg_backup_status.yml",
                          "pg_restore_pitr.yml", "mysql_switchover.yml"}

# Parts of other playbooks: run alone, they refuse (their group is filled by the playbook that imports them).
IMPORTED_PARTS = {"pg_promote.yml", "pg_rejoin.yml"}


def run(tmp_path, playbook, group, limit=None, all_vars=None, extra=None):
    result = run_playbook(write_inventory(tmp_path, group, ["n1", "n2", "n3"], all_vars), playbook, limit, extra)
    return result, " ".join(result.stdout.split())      # the yaml callback folds long messages


@pytest.mark.parametrize("playbook", sorted(PLAYBOOKS))
def test_a_group_that_matches_no_host_fails_naming_the_variable(tmp_path, playbook):
    variable, default = PLAYBOOKS[playbook][:2]
    result, output = run(tmp_path, playbook, group="ledger")
    assert result.returncode != 0
    assert "%s=%s matches no host of the inventory" % (variable, default) in output, result.stdout[-3000:]
    assert "UNREACHABLE" not in output


def test_the_group_named_in_the_inventory_is_the_one_checked_and_targeted(tmp_path):
    """group_vars/all names the group: the playbook acts on it (a host pattern alone cannot read that)."""
    result, output = run(tmp_path, "rolling_restart_galera.yml", group="ledger",
                         all_vars={"pxc_galera_group": "ledger"})
    assert "matches no host" not in output, result.stdout[-3000:]
    # past the check, the next play reaches for the group's members (and finds them down)
    assert "UNREACHABLE" in output and "n1" in output.split("PLAY [Find the member taking the writes]")[1]


def test_the_group_an_importing_play_names_is_the_one_checked(tmp_path):
    """A playbook that imports an operations playbook with `vars:` names the group for it (hostvars do not hold
    play variables: the check must see it all the same)."""
    wrapper = tmp_path / "wrapper.yml"
    wrapper.write_text("- ansible.builtin.import_playbook: %s\n  vars:\n    mongodb_rs_group: ledger\n"
                       % os.path.join(REPO, "playbooks", "rolling_restart_mongodb.yml"))
    result, output = run(tmp_path, wrapper, group="ledger")
    assert "matches no host" not in output and "different groups" not in output, result.stdout[-3000:]
    assert "UNREACHABLE" in output and "n1" in output.split("PLAY [MongoDB - sort the members")[1]


def test_a_limit_holding_no_member_is_refused(tmp_path):
    result, output = run(tmp_path, "rolling_restart_galera.yml", group="galera", limit="web1")
    assert result.returncode != 0
    assert "--limit leaves every member of the inventory group galera (pxc_galera_group) out of the play" \
        in output, result.stdout[-3000:]
    assert "UNREACHABLE" not in output


def test_a_limit_leaving_part_of_a_set_out_is_refused_where_every_member_is_needed(tmp_path):
    result, output = run(tmp_path, "rolling_restart_mongodb.yml", group="mongodb", limit="n1")
    assert result.returncode != 0
    assert "--limit leaves n2, n3 of the inventory group mongodb (mongodb_rs_group) out of the play" in output, \
        result.stdout[-3000:]
    assert "UNREACHABLE" not in output


def test_hosts_naming_different_groups_are_refused_unless_one_is_given(tmp_path):
    inventory_vars = {"pxc_galera_group": "galera"}
    (tmp_path / "host_vars").mkdir()
    (tmp_path / "host_vars" / "web1.yml").write_text("pxc_galera_group: other\n")
    result, output = run(tmp_path, "rolling_restart_galera.yml", group="galera", all_vars=inventory_vars)
    assert result.returncode != 0
    assert "set pxc_galera_group to different groups (galera, other)" in output, result.stdout[-3000:]
    result, output = run(tmp_path, "rolling_restart_galera.yml", group="galera", all_vars=inventory_vars,
                         extra={"pxc_galera_group": "galera"})
    assert "different groups" not in output and "UNREACHABLE" in output, result.stdout[-3000:]


@pytest.mark.parametrize("playbook", sorted(IMPORTED_PARTS))
def test_a_part_run_alone_is_refused(tmp_path, playbook):
    result, output = run(tmp_path, playbook, group="postgres")
    assert result.returncode != 0
    assert "%s is a part of pg_switchover.yml and pg_failover.yml: run one of them" % playbook in output, \
        result.stdout[-3000:]


def test_every_operations_playbook_targets_the_group_its_first_play_checked():
    """No play of an operations playbook targets a templated group (`hosts: "{{ var | default(..) }}"`), which
    cannot read the inventory's variables; each starts with cluster_group.yml (or pg_whole_group.yml, which
    imports it) and names the variable and default of the table above."""
    checked = set()
    for path in sorted(glob.glob(os.path.join(REPO, "playbooks", "*.yml"))):
        name = os.path.basename(path)
        if name in NOT_CLUSTER_OPERATIONS:
            continue
        with open(path, encoding="utf-8") as handle:
            plays = yaml.safe_load(handle)
        assert not [p["hosts"] for p in plays if "{{" in str(p.get("hosts", ""))], name
        first = plays[0]
        if first.get("ansible.builtin.import_playbook") == "pg_whole_group.yml" or name == "pg_whole_group.yml":
            continue
        if name in IMPORTED_PARTS:
            assert first["name"] == "Refuse to run without pg_switchover.yml or pg_failover.yml", name
            continue
        if name == "rolling_restart.yml":      # every engine's playbook, each passed over when absent
            assert all(p["vars"] == {"dbops_cluster_optional": True} for p in plays), plays
            continue
        assert first.get("ansible.builtin.import_playbook") == "cluster_group.yml", name
        if name in PLAYBOOKS:
            variable, default, whole = PLAYBOOKS[name]
            assert (first["vars"]["dbops_cluster_var"], first["vars"]["dbops_cluster_default"],
                    first["vars"].get("dbops_cluster_whole", False)) == (variable, default, whole), name
            checked.add(name)
    assert checked == set(PLAYBOOKS)
