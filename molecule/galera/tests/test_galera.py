"""Verify the three-node Galera cluster: every node Synced in one primary component of three, and a row
written on any node is read on every other."""
import json
import os
import time
import uuid

import pytest

NODES = ("g1", "g2", "g3")


def status(sql, host):
    return dict(sql(host, "SHOW GLOBAL STATUS LIKE 'wsrep_%'"))


@pytest.mark.parametrize("node", NODES)
def test_node_is_synced_in_a_primary_component_of_three(lab_hosts, sql, node):
    wsrep = status(sql, lab_hosts[node])
    assert wsrep["wsrep_local_state_comment"] == "Synced"
    assert wsrep["wsrep_cluster_status"] == "Primary"
    assert wsrep["wsrep_cluster_size"] == "3"
    assert wsrep["wsrep_ready"] == "ON"


def test_one_cluster(lab_hosts, sql):
    assert len({status(sql, lab_hosts[node])["wsrep_cluster_state_uuid"] for node in NODES}) == 1


@pytest.mark.parametrize("writer", NODES)
def test_row_written_on_one_node_is_read_on_the_others(lab_hosts, writer, sql):
    marker = uuid.uuid4().hex
    sql(lab_hosts[writer], "CREATE TABLE IF NOT EXISTS app.t (id VARCHAR(32) PRIMARY KEY, node VARCHAR(8)); "
                           "INSERT INTO app.t VALUES ('%s', '%s')" % (marker, writer))
    for reader in NODES:
        deadline = time.time() + 10
        rows = []
        while time.time() < deadline and not rows:
            rows = sql(lab_hosts[reader], "SELECT node FROM app.t WHERE id = '%s'" % marker)
            if not rows:
                time.sleep(0.3)
        assert rows == [[writer]], "%s did not read the row written on %s" % (reader, writer)


def test_wsrep_file_explains_every_setting(lab_hosts):
    lines = lab_hosts["g1"].file("/etc/mysql/mariadb.conf.d/zz-dbops-wsrep.cnf").content_string.splitlines()
    body = lines[lines.index("[mysqld]") + 1:]
    for number, line in enumerate(body):
        if line and not line.startswith("#"):
            assert body[number - 1].startswith("# "), "no reason above: " + line
    assert any(line.startswith("wsrep_provider_options") and "gcache.size=" in line for line in body)


# ----------------------------------------------------- the percona flavor in check mode (prepare.yml)

def percona_check(node):
    path = os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "percona-check-%s.json" % node)
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def test_percona_check_mode_predicts_a_new_cluster_from_the_first_member():
    decision = percona_check("g1")["decision"]
    print("percona check mode:", decision["decision"], decision["bootstrap_node"], decision["reason"])
    assert (decision["decision"], decision["bootstrap_node"], decision["join_order"]) == \
        ("bootstrap", "g1", ["g2", "g3"])
    assert decision["reason"].startswith("new cluster: no node has state")


@pytest.mark.parametrize("node", NODES)
def test_percona_check_mode_went_through_the_percona_path(node):
    check = percona_check(node)
    assert check["predict_only"] is True, "the hosts were fresh: the run could only predict"
    assert check["repo_enable"]["changed"] is True, "percona-release enable pxc-84-lts was not predicted"
    assert check["bootstrap_unit"]["status"]["LoadState"] == "not-found"
    assert (check["state"]["running"], check["state"]["grastate_found"]) == (False, False)
    wsrep = dict((name, setting["value"]) for name, setting in check["wsrep"].items())
    assert wsrep["wsrep_provider"] == "/usr/lib/galera4/libgalera_smm.so"
    assert wsrep["wsrep_sst_method"] == "xtrabackup-v2" and wsrep["pxc_strict_mode"] == "ENFORCING"
    assert wsrep["wsrep_cluster_address"] == "gcomm://10.89.204.11,10.89.204.12,10.89.204.13"


@pytest.mark.parametrize("node", NODES)
def test_the_real_run_left_no_policy_rc_d_behind(lab_hosts, node):
    assert not lab_hosts[node].file("/usr/sbin/policy-rc.d").exists
