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


def test_each_switchover_pointed_the_archive_at_the_new_source(lab_hosts):
    # started on src before the switchover drill: the first switchover moved it to the promoted replica, the
    # second back to src, the promotion by hand to rep1, the last switchover back to src; each server's logs in a
    # directory of its own, and the stream from src now
    mbk1 = lab_hosts["mbk1"]
    followed = sorted(mbk1.run("ls %s/binlog", REPOSITORY).stdout.split())
    assert {"src", "rep1"} <= set(followed) <= {"src", "rep1", "rep2"}, followed
    for member in followed:
        logs = mbk1.run("ls %s/binlog/%s", REPOSITORY, member).stdout.split()
        assert any(name.startswith("binlog.") for name in logs), (member, logs)
    streams = [args for args in mbk1.run("ps -eo args").stdout.splitlines() if args.startswith("mysqlbinlog ")]
    assert len(streams) == 1 and "--host=10.89.203.11 " in streams[0], streams


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
    for path in ("/etc/dbops/mysql-binlog/mysql.json", "/etc/systemd/system/dbops-mysql-binlog-mysql.service"):
        assert "molecule binlog" not in mbk1.file(path).content_string, path


def test_the_backup_is_private_and_described(lab_hosts, drill, description):
    mbk1 = lab_hosts["mbk1"]
    path = drill["backup"]["path"]
    assert mbk1.file(path).mode == 0o700
    assert description["file_mode"] == 0o600
    assert description["complete"] is True and description["member"] == drill["backup"]["member"], description
    assert description["gtid_executed_before"] and description["gtid_executed_after"], description


def test_the_restore_to_the_target_started_from_the_backup_before_it_not_the_newer_scheduled_ones(drill, schedule):
    # the scheduled backups finished after the target and hold rows past it: a restore from one of them would
    # hold those rows (test_no_row_sent_after_the_target_is_restored), since a replay only adds
    assert schedule["status_after"]["newest"] != os.path.basename(drill["backup"]["path"])
    assert drill["restore"]["backup"] == os.path.basename(drill["backup"]["path"]), drill["restore"]
    assert "holds nothing past the target" in drill["restore"]["backup_reason"], drill["restore"]


@pytest.fixture(scope="module")
def schedule():
    with open(os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "pitr", "schedule.json")) as handle:
        return json.load(handle)


def test_one_scheduled_turn_copied_the_first_replica_and_the_others_declined(schedule):
    turns = schedule["first_turns"]
    assert {member: turn["result"] for member, turn in turns.items()} == {
        "src": "success", "rep1": "success", "rep2": "success"}, turns
    said = {member: "\n".join(turn["said"]) for member, turn in turns.items()}
    assert "rep2 copies itself (replicates from" in said["rep2"] and "landed on the backup host" in said["rep2"], said
    assert "no backup from rep1" in said["rep1"] and "within this turn" in said["rep1"], said
    assert "no backup from src: it serves as the source of 2 replica(s)" in said["src"], said


def test_a_failed_scheduled_turn_fails_its_unit_and_the_status_says_why(schedule):
    assert schedule["failed_turn_rc"] != 0
    attempt = schedule["status_failed"]["last_attempt"]
    assert attempt["member"] == "rep2" and attempt["outcome"] == "failed", attempt
    assert "the clone failed" in attempt["message"], attempt
    assert schedule["status_playbook_rc"] != 0
    assert any("rep2's last backup turn failed" in line for line in schedule["status_playbook_said"]), schedule


def test_the_next_scheduled_turn_landed_and_is_described(lab_hosts, schedule):
    status = schedule["status_after"]
    assert status["ok"] and status["last_attempt"]["outcome"] == "complete", status
    assert status["last_attempt"]["member"] == "rep2" and 0 <= status["age_seconds"] < 600, status
    mbk1 = lab_hosts["mbk1"]
    path = REPOSITORY + "/" + status["newest"]
    description = json.loads(mbk1.file(path + "/dbops-backup.json").content_string)
    assert description["scheduled"] is True and description["complete"] is True, description
    assert (description["member"], description["source"], description["method"]) == ("rep2", "src", "clone")
    assert description["gtid_executed_before"] and description["gtid_executed_after"], description
    assert mbk1.file(path).mode == 0o700 and mbk1.file(path + "/mysql.ibd").exists
    assert mbk1.file(REPOSITORY + "/latest").linked_to == path
    assert mbk1.file(REPOSITORY + "/dbops-backup-status.json").mode == 0o600
    assert schedule["timer"]["state"] == "active" and "2099" in schedule["timer"]["next"], schedule["timer"]


OFFER_FROM_ELSEWHERE = """
import json, socket
conn = socket.create_connection(("10.89.203.21", 4457), timeout=5)
conn.sendall((json.dumps({"op": "offer", "member": "rep2", "fresh_within": 0}) + "\\n").encode())
print(conn.recv(4096).decode())
"""


def test_the_receiver_admits_only_the_members(lab_hosts):
    # mrs1 is no member: an offer naming rep2 from its address gets no go (the socket's address filter drops it,
    # or the receiver answers no)
    answer = lab_hosts["mrs1"].run("python3 -c %s", OFFER_FROM_ELSEWHERE)
    assert '"go": true' not in answer.stdout, answer.stdout
    assert "not the address of a member" in answer.stdout or answer.rc != 0, (answer.rc, answer.stdout,
                                                                              answer.stderr)


CONNECT_AS_THE_AGENT = """
import sys
sys.path.insert(0, "/usr/local/lib/dbops/python")
from ansible_collections.dbops.clusters.plugins.module_utils import copy_channel
tls = {"ca": "/etc/dbops/copy-tls/ca.pem", "cert": "/etc/dbops/copy-tls/cert.pem", "key": "/etc/dbops/copy-tls/key.pem"}
try:
    channel = copy_channel.connect("10.89.203.21", 4457, sys.argv[1], tls, timeout=10)
    print("verified", ",".join(channel.peer_names()))
    channel.close()
except copy_channel.CopyChannelError as err:
    print("refused", err)
"""


def test_the_scheduled_copies_travel_in_tls_that_verifies_both_ends(lab_hosts):
    rep1, mbk1 = lab_hosts["rep1"], lab_hosts["mbk1"]
    for host in (rep1, mbk1):
        assert host.file("/etc/dbops/copy-tls/key.pem").mode == 0o600
        assert host.file("/etc/dbops/copy-tls/key.pem").user == "root"
    # the receiver proves it is mbk1 with the copy CA's certificate; a member told of another name refuses it
    assert lab_hosts["rep1"].check_output("python3 -c %s mbk1", CONNECT_AS_THE_AGENT) == "verified mbk1"
    refused = rep1.check_output("python3 -c %s rep2", CONNECT_AS_THE_AGENT)
    assert refused.startswith("refused TLS with rep2") and "certificate" in refused, refused
    # a member's address without TLS gets no answer: the receiver refuses the connection at the handshake
    plain = rep1.run("python3 -c %s", OFFER_FROM_ELSEWHERE)
    assert '"go"' not in plain.stdout, plain.stdout
    journal = mbk1.check_output("journalctl -u 'dbops-mysql-backup-receive-mysql@*' -o cat --no-pager -n 50")
    assert "refused a connection from 10.89.203.12: the TLS handshake failed" in journal, journal


# The service reads the members every percona_server_binlog_archive_follow_seconds (10), exits when another is the
# source, and systemd starts it again after 5 s; then rep1's newest log streams in. Measured: see the print.
FOLLOW_LIMIT = 45.0


def test_the_archive_followed_a_promotion_made_by_hand_by_itself():
    with open(os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "hand_promotion.json")) as handle:
        hand = json.load(handle)
    took = hand["followed_at"] - hand["promoted_at"]
    print("\nthe archive followed rep1, promoted by hand, in %.1f s (bound %.0f s)" % (took, FOLLOW_LIMIT))
    assert hand["newest"] in hand["archived"], hand
    assert 0 < took < FOLLOW_LIMIT, hand
    said = "\n".join(hand["journal"])
    assert "rep1 is the source now" in said and "streaming the binary logs of rep1" in said, said
