"""The backup and point-in-time restore drill (side_effect's backup_drill.yml): the rows on mrs1 after the restore
to the target, against what the writer on the source logged (id, when it sent the INSERT, when it was
acknowledged); what the backup copied; how the archive keeps its secret."""
import json
import os

import pytest

DRILL = os.path.join(os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", ""), "pitr")
REPOSITORY = "/var/backups/mysql/mysql"


@pytest.fixture(scope="module")
def drill():
    with open(os.path.join(DRILL, "drill.json"), encoding="utf-8") as handle:
        record = json.load(handle)
    with open(os.path.join(DRILL, "acks.log"), encoding="utf-8") as handle:
        record["acks"] = [(int(i), float(s), float(a)) for i, s, a in (line.split() for line in handle if line.strip())]
    return record


@pytest.fixture(scope="module")
def description(lab_hosts, drill):
    """The backup's dbops-backup.json on mbk1, with its file."""
    found = lab_hosts["mbk1"].file(drill["backup"]["path"] + "/dbops-backup.json")
    return dict(json.loads(found.content_string), file_mode=found.mode)


@pytest.fixture(scope="module")
def restored(lab_hosts, sql):
    return {int(row[0]) for row in sql(lab_hosts["mrs1"], "SELECT id FROM app.pitr_acks")}


def split(drill):
    target = drill["target_epoch"]
    before = {i for i, sent, acked in drill["acks"] if acked < target}
    after = {i for i, sent, acked in drill["acks"] if sent > target}
    in_flight = {i for i, sent, acked in drill["acks"]} - before - after
    return before, after, in_flight


def test_the_drill_wrote_on_both_sides_of_the_target_and_after_the_backup(drill, description):
    before, after, in_flight = split(drill)
    after_backup = {i for i, sent, acked in drill["acks"]
                    if description["finished"] < sent and acked < drill["target_epoch"]}
    # about 30 commits a second for 2 s or more on each side: not a vacuous comparison; rows sent after the backup
    # had landed and acknowledged before the target exist only in the archived binary logs, so a restore that does
    # not replay them fails test_every_row_acknowledged_before_the_target_is_restored
    assert len(before) >= 30 and len(after) >= 30, (len(before), len(after))
    assert len(after_backup) >= 20, len(after_backup)
    assert len(in_flight) <= 1


def test_the_backup_copied_a_replica_not_the_source(drill):
    backup = drill["backup"]
    assert backup["source"] == "src", backup
    assert backup["member"] in ("rep1", "rep2"), backup
    assert "replicates within" in backup["reason"], backup


def test_every_row_acknowledged_before_the_target_is_restored(drill, restored):
    before, _, _ = split(drill)
    missing = sorted(before - restored)
    assert not missing, "acknowledged before the target, missing on mrs1: %s" % missing[:20]


def test_no_row_sent_after_the_target_is_restored(drill, restored):
    _, after, _ = split(drill)
    present = sorted(after & restored)
    assert not present, "sent after the target, present on mrs1: %s" % present[:20]


def test_nothing_but_acknowledged_rows(drill, restored):
    logged = {i for i, _, _ in drill["acks"]}
    assert {i for i in restored if i >= min(logged)} <= logged


def test_rpo_and_restore_time(drill, restored, capsys):
    acked_at = {i: acked for i, _, acked in drill["acks"]}
    newest_restored = max(restored & set(acked_at))
    newest = max(acked_at)
    rpo = acked_at[newest] - acked_at[newest_restored]
    short_of_target = drill["target_epoch"] - acked_at[newest_restored]
    restore_seconds = float(drill["restore"]["seconds"])
    with capsys.disabled():     # the figures bench/backups keeps: in the log of every run, not only a failing one
        print("\nMySQL PITR figures: RPO %.2f s (restored up to id %d, acknowledged %.3f s before the target; newest "
              "acknowledged id %d); restore %.1f s (%d archived logs); clone of %s %.1f s"
              % (rpo, newest_restored, short_of_target, newest, restore_seconds, len(drill["restore"]["logs"]),
                 drill["backup"]["member"], float(drill["backup"]["clone_seconds"])))
    before, _, in_flight = split(drill)
    # the restore reached the target: its newest row is the last one acknowledged before it or the one in flight
    assert newest_restored in {max(before)} | in_flight, (newest_restored, max(before), in_flight)
    assert -1.0 < short_of_target < 1.0
    # what the restore lacks is what the writer committed after the target (2 s and the stop)
    assert 2.0 <= rpo < 10.0
    assert 0 < restore_seconds < 120


def test_the_restore_refused_a_host_with_a_schema_of_its_own_first(drill):
    assert "ledger" in drill["refusal"] and "percona_server_restore_force" in drill["refusal"], drill["refusal"]


def test_the_restored_server_replicates_from_nobody_and_kept_the_old_data_aside(lab_hosts, sql, drill):
    mrs1 = lab_hosts["mrs1"]
    assert sql(mrs1, "SHOW REPLICA STATUS") == []
    assert mrs1.file(drill["restore"]["aside"] + "/ledger").is_directory
    assert not mrs1.file("/etc/mysql/mysql.conf.d/zz-dbops-restore.cnf").exists


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
