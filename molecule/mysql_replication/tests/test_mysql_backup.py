"""The backup and point-in-time restore drill (side_effect's backup_drill.yml): the rows on mrs1 after the restore
to the target, against what the writer on the source logged (id, when it sent the INSERT, when it was
acknowledged); what the backup copied; how the archive keeps its secret; rep1 re-seeded from the backup."""
import json
import os
import time

import pytest
from ansible_collections.dbops.clusters.plugins.module_utils.group_replication import parse_gtid_set

REPOSITORY = "/var/backups/mysql/mysql"


@pytest.fixture(scope="module")
def drill(writer_drill_record):
    return writer_drill_record("pitr")


@pytest.fixture(scope="module")
def description(lab_hosts, drill):
    """The backup's dbops-backup.json on mbk1, with its file."""
    found = lab_hosts["mbk1"].file(drill["backup"]["path"] + "/dbops-backup.json")
    return dict(json.loads(found.content_string), file_mode=found.mode)


@pytest.fixture(scope="module")
def restored(lab_hosts, sql):
    return {int(row[0]) for row in sql(lab_hosts["mrs1"], "SELECT id FROM app.pitr_acks")}


@pytest.fixture(scope="module")
def split(drill, point_in_time):
    return point_in_time(drill["acks"], drill["target_epoch"])


def test_the_drill_wrote_on_both_sides_of_the_target_and_after_the_backup(drill, split, description):
    after_backup = {i for i, sent, acked in drill["acks"]
                    if description["finished"] < sent and acked < drill["target_epoch"]}
    # about 30 commits a second for 2 s or more on each side: not a vacuous comparison; rows sent after the backup
    # had landed and acknowledged before the target exist only in the archived binary logs, so a restore that does
    # not replay them fails test_every_row_acknowledged_before_the_target_is_restored
    assert len(split.before) >= 30 and len(split.after) >= 30, (len(split.before), len(split.after))
    assert len(after_backup) >= 20, len(after_backup)
    assert len(split.in_flight) <= 1


def test_the_backup_copied_a_replica_not_the_source(drill):
    backup = drill["backup"]
    assert backup["source"] == "src", backup
    assert backup["member"] in ("rep1", "rep2"), backup
    assert "replicates within" in backup["reason"], backup


def test_every_row_acknowledged_before_the_target_is_restored(split, restored):
    missing = sorted(split.before - restored)
    assert not missing, "acknowledged before the target, missing on mrs1: %s" % missing[:20]


def test_no_row_sent_after_the_target_is_restored(split, restored):
    present = sorted(split.after & restored)
    assert not present, "sent after the target, present on mrs1: %s" % present[:20]


def test_nothing_but_acknowledged_rows(drill, restored):
    logged = {i for i, _, _ in drill["acks"]}
    assert {i for i in restored if i >= min(logged)} <= logged


def test_rpo_and_restore_time(drill, split, restored, capsys):
    figures = split.figures(restored)
    restore_seconds = float(drill["restore"]["seconds"])
    with capsys.disabled():     # the figures bench/backups keeps: in the log of every run, not only a failing one
        print("\nMySQL PITR figures: RPO %.2f s (restored up to id %d, acknowledged %.3f s before the target; newest "
              "acknowledged id %d); restore %.1f s (%d archived logs); clone of %s %.1f s"
              % (figures["rpo"], figures["newest_restored"], figures["short_of_target"], figures["newest"],
                 restore_seconds, len(drill["restore"]["logs"]), drill["backup"]["member"],
                 float(drill["backup"]["clone_seconds"])))
    assert split.reached_the_target(restored), (figures, max(split.before), split.in_flight)
    assert -1.0 < figures["short_of_target"] < 1.0
    # what the restore lacks is what the writer committed after the target (2 s and the stop)
    assert 2.0 <= figures["rpo"] < 10.0
    assert 0 < restore_seconds < 120


def test_the_restore_refused_a_host_with_a_schema_of_its_own_first(drill):
    assert "ledger" in drill["refusal"] and "percona_server_restore_force" in drill["refusal"], drill["refusal"]


def test_the_restored_server_replicates_from_nobody_and_kept_the_old_data_aside(lab_hosts, sql, drill):
    mrs1 = lab_hosts["mrs1"]
    assert sql(mrs1, "SHOW REPLICA STATUS") == []
    assert mrs1.file(drill["restore"]["aside"] + "/ledger").is_directory
    assert not mrs1.file("/etc/mysql/mysql.conf.d/zz-dbops-restore.cnf").exists


def test_the_restore_resumed_after_a_run_that_stopped_half_way(lab_hosts, drill):
    # the run from the damaged copy left mrs1 down; the next one resumed and kept the first run's copy of its data
    mrs1 = lab_hosts["mrs1"]
    assert drill["restore"]["resumed"], drill["restore"]
    assert drill["restore"]["aside"] == drill["halfway_aside"]
    assert not mrs1.file("/var/lib/mysql.restore-in-progress.json").exists


def test_the_archive_runs_and_keeps_its_login_to_itself(lab_hosts):
    mbk1 = lab_hosts["mbk1"]
    assert mbk1.service("dbops-mysql-binlog-mysql").is_running
    login = mbk1.file("/etc/dbops/mysql-binlog/mysql.cnf")
    assert login.mode == 0o600 and login.user == "root"
    assert "ssl-mode=VERIFY_IDENTITY" in login.content_string
    # the password (molecule.yml) is "molecule binlog 'archive' \ \"secret\""
    assert "molecule binlog" in login.content_string
    processes = mbk1.run("ps -eo args").stdout
    assert "mysqlbinlog" in processes and "molecule binlog" not in processes
    for path in ("/etc/dbops/mysql-binlog/mysql.env", "/etc/systemd/system/dbops-mysql-binlog-mysql.service"):
        assert "molecule binlog" not in mbk1.file(path).content_string, path


def test_the_backup_is_private_and_described(lab_hosts, drill, description):
    mbk1 = lab_hosts["mbk1"]
    path = drill["backup"]["path"]
    assert mbk1.file(path).mode == 0o700
    assert description["file_mode"] == 0o600
    assert description["complete"] is True and description["member"] == drill["backup"]["member"], description
    assert description["gtid_executed_before"] and description["gtid_executed_after"], description
    assert mbk1.file(REPOSITORY + "/latest").linked_to == path


def bounds(gtid_set, uuid):
    """(first, last) transaction number of uuid's untagged transactions in a GTID set, or (None, None)."""
    intervals = parse_gtid_set(gtid_set).get((uuid.lower(), ""))
    return (intervals[0][0], intervals[-1][1]) if intervals else (None, None)


def test_seeding_the_live_source_was_refused(drill):
    assert "source" in drill["seed_refusal"], drill["seed_refusal"]


def test_the_seeded_replica_fetched_only_what_the_backup_lacked(lab_hosts, sql, drill, description, capsys):
    """rep1's data came from the backup: its channel retrieved the source's transactions from the backup's position
    on, not from the source's first one (a replica seeded from the binary logs retrieves them all)."""
    src_uuid = sql(lab_hosts["src"], "SELECT @@server_uuid")[0][0]
    (host, auto_position, io_state, received), = sql(
        lab_hosts["rep1"], "SELECT c.HOST, c.AUTO_POSITION, s.SERVICE_STATE, "
                           "REPLACE(s.RECEIVED_TRANSACTION_SET, '\\n', '') "
                           "FROM performance_schema.replication_connection_configuration c "
                           "JOIN performance_schema.replication_connection_status s USING (CHANNEL_NAME)")
    (applier,), = sql(lab_hosts["rep1"], "SELECT SERVICE_STATE FROM performance_schema.replication_applier_status")
    assert (host, auto_position, io_state, applier) == ("10.89.203.11", "1", "ON", "ON")
    before = bounds(description["gtid_executed_before"], src_uuid)[1]
    after = bounds(description["gtid_executed_after"], src_uuid)[1]
    retrieved = bounds(received, src_uuid)[0]
    assert retrieved is not None and before < retrieved <= after + 1, (
        "rep1 retrieved %s:%s on; the backup held %s:1-%s..%s" % (src_uuid, retrieved, src_uuid, before, after))
    # seeded from the drill's backup, nothing replayed
    assert drill["seed"]["backup"] == os.path.basename(drill["backup"]["path"]) and drill["seed"]["logs"] == []
    with capsys.disabled():     # the figure bench/backups keeps
        print("\nMySQL seeding figures: rep1 seeded from %s in %s s (bound 120 s), retrieving %s:%s on"
              % (drill["seed"]["backup"], drill["seed"]["seconds"], src_uuid, retrieved))
    assert 0 < float(drill["seed"]["seconds"]) < 120


def test_the_seeded_replica_has_every_row_the_source_has(lab_hosts, sql, drill):
    src_rows = {int(row[0]) for row in sql(lab_hosts["src"], "SELECT id FROM app.pitr_acks")}
    acked = {i for i, _, _ in drill["acks"]}
    assert acked <= src_rows
    deadline = time.time() + 30
    while True:
        rep1_rows = {int(row[0]) for row in sql(lab_hosts["rep1"], "SELECT id FROM app.pitr_acks")}
        if rep1_rows == src_rows or time.time() > deadline:
            break
        time.sleep(1)
    assert rep1_rows == src_rows, "on src, not on rep1: %s" % sorted(src_rows - rep1_rows)[:20]
