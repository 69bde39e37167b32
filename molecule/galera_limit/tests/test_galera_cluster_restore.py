"""The whole cluster restored from a backup over a dropped table (cluster_restore_drill.yml): refused while the
Primary component ran without force, predicted in check mode, then every member restored and the cluster
recovered: the table is back with the rows the backup holds, one cluster at the backup's uuid, and no member
received a full state transfer. The backup is latest, the scheduled incremental of backup_drill.yml: its chain (the
scheduled full backup and the incremental) was assembled once on the backup host and copied to every member."""
import json
import os
import re

import pytest

NODES = ("g1", "g2", "g3", "g4", "g5")
WRITER_RECORD = "drill-backup"
BACKUP_DIR = "/var/backups/galera"
RESTORE_SECONDS_BOUND = 300     # five copies of the backup, stops, the recovery's reads and five gated starts


@pytest.fixture(scope="module")
def record(drill):
    with open(os.path.join(drill["dir"], "cluster_restore.json"), encoding="utf-8") as handle:
        cluster = json.load(handle)
    with open(os.path.join(drill["dir"], "runs.json"), encoding="utf-8") as handle:
        cluster["runs"] = json.load(handle)
    acked_at = {}
    with open(os.path.join(drill["dir"], "acks.log"), encoding="utf-8") as handle:
        for line in handle:
            ident, epoch = line.split()[:2]
            acked_at[int(ident)] = float(epoch)
    cluster["acked_at"] = acked_at
    return cluster


@pytest.fixture(scope="module")
def manifest(lab_hosts, playbook_backup):
    return playbook_backup(lab_hosts["gbk1"], BACKUP_DIR)[1]


def test_the_restore_was_refused_while_the_cluster_ran_without_force(record):
    refused = record["refused"]
    assert refused["rc"] != 0
    assert "run in a Primary component" in refused["out"] and "pxc_galera_restore_force=true" in refused["out"]
    assert "Nothing was changed" in refused["out"]


def test_check_mode_said_each_step(record):
    check = record["check"]
    assert check["rc"] == 0, check["out"][-3000:]
    assert "Would restore the whole cluster galera from gbk1" in check["out"]
    for step in ("1. stop mariadb on g1, g2, g3, g4, g5", "2. on each, move the data directory aside",
                 "3. galera_recover.yml: bootstrap the first member"):
        assert step in check["out"], step


def test_the_table_is_back_with_the_rows_the_backup_holds(lab_hosts, sql, record, capsys):
    runs, acked_at = record["runs"]["scheduled"], record["acked_at"]
    assert record["restore"]["rc"] == 0, record["restore"]["out"][-3000:]
    rows = {int(row[0]) for row in sql(lab_hosts["g3"], "SELECT id FROM app.backup_drill")}
    # the restore point is the incremental's: the rows written after the full backup are back too
    chain = [os.path.basename(runs[level]["path"]) for level in ("full", "incremental")]
    assert "(%s + %s)" % tuple(chain) in " ".join(record["restore"]["out"].split()), record["restore"]["out"][-3000:]
    before = {i for i in acked_at if i <= runs["incremental"]["acked_at_start"]}
    between = {i for i in acked_at if runs["full"]["acked_at_end"] < i <= runs["incremental"]["acked_at_start"]}
    after = {i for i in acked_at if i > runs["incremental"]["acked_at_end"] + 1}
    assert len(between) > 50 and len(after) > 50, "too few writes on either side of the incremental to judge"
    missing = sorted(before - rows)
    assert not missing, "acknowledged before the incremental began, missing after the restore: %s" % missing[:20]
    present = sorted(after & rows)
    assert not present, "sent after the incremental ended, present after the restore: %s" % present[:20]
    newest_restored = max(rows & set(acked_at))
    rpo = max(acked_at.values()) - acked_at[newest_restored]
    took = record["ended"] - record["started"]
    with capsys.disabled():     # the figures bench/backups keeps
        print("\nGalera cluster restore figures: restored from the scheduled chain (full + incremental) up to id %d; "
              "RPO %.1f s (everything acknowledged after the incremental); restore %.1f s (bound %d s)"
              % (newest_restored, rpo, took, RESTORE_SECONDS_BOUND))
    assert took < RESTORE_SECONDS_BOUND


@pytest.mark.parametrize("node", NODES)
def test_one_cluster_at_the_backups_uuid_every_member_the_same_rows(lab_hosts, sql, manifest, node):
    wsrep = dict(sql(lab_hosts[node], "SHOW GLOBAL STATUS WHERE Variable_name LIKE 'wsrep_%'"))
    assert (wsrep["wsrep_local_state_comment"], wsrep["wsrep_cluster_status"], wsrep["wsrep_cluster_size"]) == \
        ("Synced", "Primary", "5")
    assert wsrep["wsrep_cluster_state_uuid"] == manifest["galera_info"].split(":")[0]
    counts = {name: sql(lab_hosts[name], "SELECT COUNT(*), MAX(id) FROM app.backup_drill")[0] for name in ("g1", node)}
    assert counts[node] == counts["g1"], counts


@pytest.mark.parametrize("node", NODES)
def test_no_member_received_a_full_state_transfer(lab_hosts, record, node):
    log = "".join(lab_hosts[node].run("journalctl %s --no-pager -o cat --since @%s", selector,
                                      str(int(record["started"]))).stdout
                  for selector in ("--unit=mariadb", "--identifier=-wsrep-sst-joiner"))
    # the restore started the member at the backup's position (not an empty read)
    assert re.search(r"WSREP: Found saved state: [0-9a-f-]+:\d+, safe_to_bootstrap", log), log[-2000:]
    # MariaDB's mariabackup method starts its SST script on every joiner (and logs "SST received" either way); a
    # donor that serves IST (the few write-sets since the bootstrap) sends the script only a marker, and its
    # closing line names the transfer it ran: "mariabackup SST completed" for a full copy.
    if "--role 'joiner'" in log:
        assert "mariabackup IST completed on joiner" in log and "mariabackup SST completed" not in log, \
            [line for line in log.splitlines() if re.search("IST|SST", line)][:12]
