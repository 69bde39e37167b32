"""The point-in-time restore drill (side_effect's pitr.yml): the rows on pgr1 after the restore to the target,
against what the writer on pg1 logged (id, when it sent the INSERT, when it was acknowledged)."""
import json

import pytest


@pytest.fixture(scope="module")
def drill(writer_drill_record):
    return writer_drill_record("pitr")


@pytest.fixture(scope="module")
def restored(lab_hosts):
    result = lab_hosts["pgr1"].run("runuser -u postgres -- psql -X -At -d app -c %s", "SELECT id FROM pitr_acks")
    assert result.rc == 0, result.stderr
    return {int(line) for line in result.stdout.split()}


@pytest.fixture(scope="module")
def split(drill, point_in_time):
    return point_in_time(drill["acks"], drill["target_epoch"])


def test_the_drill_wrote_on_both_sides_of_the_target(split):
    # at ~30 commits a second for 2 s on each side, and more before the backup: not a vacuous comparison
    assert len(split.before) >= 30 and len(split.after) >= 30, (len(split.before), len(split.after))
    assert len(split.in_flight) <= 1


def test_every_row_acknowledged_before_the_target_is_restored(split, restored):
    missing = sorted(split.before - restored)
    assert not missing, "acknowledged before the target, missing on pgr1: %s" % missing[:20]


def test_no_row_sent_after_the_target_is_restored(split, restored):
    present = sorted(split.after & restored)
    assert not present, "sent after the target, present on pgr1: %s" % present[:20]


def test_nothing_but_acknowledged_rows(drill, restored):
    logged = {i for i, _, _ in drill["acks"]}
    # ids below this run's first come from an earlier run of the drill on the same table
    assert {i for i in restored if i >= min(logged)} <= logged


def test_rpo_and_restore_time(drill, split, restored, capsys):
    figures = split.figures(restored)
    restore_seconds = float(drill["restore"]["seconds"])
    with capsys.disabled():     # the figures bench/backups keeps: in the log of every run, not only a failing one
        print("\nPITR figures: RPO %.2f s (restored up to id %d, acknowledged %.3f s before the target; newest "
              "acknowledged id %d); restore %.1f s; full backup %s %s s"
              % (figures["rpo"], figures["newest_restored"], figures["short_of_target"], figures["newest"],
                 restore_seconds, drill["backup"]["label"], drill["backup"]["seconds"]))
    assert split.reached_the_target(restored)
    assert -1.0 < figures["short_of_target"] < 1.0
    # what the restore lacks is what the writer committed after the target: 2 s, the WAL switch and its archiving
    assert 2.0 <= figures["rpo"] < 30.0
    assert 0 < restore_seconds < 120


def test_backup_was_a_full_backup_of_the_stanza(drill):
    assert drill["backup"]["type"] == "full"
    assert 0 <= int(drill["backup"]["seconds"]) < 60
    assert int(drill["backup"]["database_bytes"]) > 10 * 1024 * 1024


def test_restored_server_is_a_primary_that_does_not_archive(lab_hosts):
    result = lab_hosts["pgr1"].run("runuser -u postgres -- psql -X -At -c %s",
                                   "SELECT pg_is_in_recovery(), current_setting('archive_mode')")
    assert result.stdout.strip() == "f|off"


def test_repository_is_encrypted_and_its_secret_file_is_private(lab_hosts):
    bk1 = lab_hosts["bk1"]
    info = json.loads(bk1.run("runuser -u postgres -- pgbackrest --stanza=main --output=json info").stdout)
    assert info[0]["cipher"] == "aes-256-cbc" and info[0]["status"]["code"] == 0
    conf = bk1.file("/etc/pgbackrest.conf")
    assert (conf.user, conf.group, conf.mode) == ("postgres", "postgres", 0o600)
    key = bk1.file("/etc/pgbackrest/tls/host.key")
    assert (key.user, key.mode) == ("postgres", 0o600)
    assert lab_hosts["pg1"].file("/etc/pgbackrest.conf").mode == 0o640
    assert "cipher-pass" not in lab_hosts["pg1"].file("/etc/pgbackrest.conf").content_string
