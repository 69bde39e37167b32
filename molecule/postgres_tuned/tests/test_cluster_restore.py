"""The whole-cluster restore drill (side_effect's cluster_restore.yml): pgs1 seeded from the stanza, then pg1 and
pgs1 destroyed under a writer and restored by pg_restore_cluster.yml. The rows on both servers against what the
writer logged (id, when it sent the INSERT, when it was acknowledged)."""
import os
import re

import pytest


@pytest.fixture(scope="module")
def drill(writer_drill_record):
    return writer_drill_record("cluster")


def rows(host):
    result = host.run("runuser -u postgres -- psql -X -At -d app -c %s", "SELECT id FROM cluster_acks")
    assert result.rc == 0, result.stderr
    return {int(line) for line in result.stdout.split()}


@pytest.fixture(scope="module")
def restored(lab_hosts):
    return rows(lab_hosts["pg1"])


@pytest.fixture(scope="module")
def split(drill, point_in_time):
    # every row acknowledged before the WAL switch was in a segment the repository had before the data was lost
    return point_in_time(drill["acks"], drill["switch_epoch"])


def test_pgs1_was_seeded_from_the_repository(lab_hosts):
    # pgBackRest's restore log on pgs1: a standby restore, twice (joining, then after the loss); no pg_basebackup
    log = lab_hosts["pgs1"].file("/var/log/pgbackrest/main-restore.log").content_string
    # three: the killed one (its pgbackrest completed, the stand-in killed itself after), the one after it, and
    # the one after the loss
    assert len(re.findall(r"restore command begin .*--type=standby", log)) >= 3, log[-2000:]
    assert len(re.findall(r"restore command end: completed successfully", log)) >= 3, log[-2000:]


def test_a_seeding_that_died_half_way_was_made_again_by_the_next_run(lab_hosts):
    # the first run's restore was killed with PG_VERSION and standby.signal written and the data missing (the
    # drill asserted that state); the next run, the same input, copied pgs1 again, and nothing marks a copy in
    # progress any more
    with open(os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "cluster", "seed.log")) as handle:
        log = " ".join(handle.read().split())     # the output wraps long messages
    assert "An earlier run began copying pgs1 and never finished" in log, log[-3000:]
    assert not lab_hosts["pgs1"].file("/var/lib/postgresql/17/main.dbops-seeding").exists


def test_the_writer_wrote_on_both_sides_of_the_archived_switch(drill, split):
    assert len(split.before) >= 50 and len(split.after) >= 20, (len(split.before), len(split.after))
    assert drill["switch_epoch"] < drill["lost_epoch"]


def test_every_row_acknowledged_before_the_archived_switch_is_restored(split, restored):
    missing = sorted(split.before - restored)
    assert not missing, "acknowledged before the archived WAL switch, missing on pg1: %s" % missing[:20]


def test_the_restore_holds_an_unbroken_run_of_sent_rows(drill, restored):
    logged = {i for i, _, _ in drill["acks"]}
    first = min(logged)
    mine = {i for i in restored if i >= first}
    # rows commit one after another: what the archive holds is every row up to one, and no row never sent
    assert mine == set(range(first, max(mine) + 1)), sorted(set(range(first, max(mine) + 1)) - mine)[:20]
    assert max(mine) <= max(logged) + 1


def test_the_replica_streams_from_the_restored_primary_with_the_same_rows(lab_hosts, restored):
    pg1, pgs1 = lab_hosts["pg1"], lab_hosts["pgs1"]
    state = pg1.run("runuser -u postgres -- psql -X -At -c %s",
                    "SELECT pg_is_in_recovery(), (SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'), "
                    "substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8)")
    recovery, streaming, timeline = state.stdout.strip().split("|")
    assert (recovery, streaming) == ("f", "1"), state.stdout
    assert int(timeline, 16) >= 2, "pg1 was promoted on a new timeline: %s" % state.stdout
    receiver = pgs1.run("runuser -u postgres -- psql -X -At -c %s", "SELECT status FROM pg_stat_wal_receiver")
    assert receiver.stdout.strip() == "streaming"
    assert rows(pgs1) == restored


def test_the_restore_was_refused_unconfirmed_and_with_the_cluster_unnamed(drill):
    assert any("set pg_restore_cluster=postgres" in line for line in drill["refusal"]), drill["refusal"]
    # pgr1 names its own group, pg1 and pgs1 the default one: the playbook does not pick one of them
    assert any("different groups" in line for line in drill["unnamed_refusal"]), drill["unnamed_refusal"]


def test_rpo_and_restore_time(drill, split, restored, capsys):
    figures = split.figures(restored)
    seconds = float(re.search(r"in ([0-9.]+) s", drill["report"]).group(1))
    with capsys.disabled():     # the figures bench/backups keeps
        print("\nWhole-cluster restore figures: RPO %.2f s (restored up to id %d, newest acknowledged id %d; %.2f s "
              "between the archived WAL switch and the loss); restore %.1f s (pg1 restored, pgs1 copied again)"
              % (figures["rpo"], figures["newest_restored"], figures["newest"],
                 drill["lost_epoch"] - drill["switch_epoch"], seconds))
    # what is lost is what the writer committed after the last archived segment, up to the loss
    assert 0.0 <= figures["rpo"] <= drill["lost_epoch"] - drill["switch_epoch"] + 1.0
    assert 0 < seconds < 300


def test_the_backup_taken_with_a_streaming_standby_copied_from_it(lab_hosts):
    """pgbackrest_backup_standby (prefer) with pgs1 the stanza's second database host: pg1 starts the backup, pgs1
    replays up to its start and gives the changed data files (pg1 only what a standby does not replicate)."""
    drill_dir = os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "cluster")
    with open(os.path.join(drill_dir, "standby-backup.log"), encoding="utf-8") as handle:
        log = handle.read()
    assert "replay on the standby reached" in log, log[-2000:]
    from_standby = log.count("backup file pgs1:")
    from_primary = log.count("backup file pg1:")
    print("\nincremental backup with a standby: %d file(s) copied from pgs1, %d from pg1" % (from_standby, from_primary))
    assert from_standby > 0, (from_standby, from_primary)
    conf = lab_hosts["bk1"].file("/etc/pgbackrest.conf").content_string
    assert "backup-standby=prefer" in conf and "pg2-host=pgs1" in conf
