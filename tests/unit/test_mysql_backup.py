"""MySQL backups: which server a backup copies and the archive follows, what a retention keeps, what a restore
replays and with which stop, and which hosts may receive a restore."""
import pytest

from ansible_collections.dbops.clusters.plugins.module_utils import mysql_backup

MEMBERS = ["src", "rep1", "rep2"]
SRC_UUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"


def replica(io="Yes", sql="Yes", lag=0):
    return {"source_uuid": SRC_UUID, "io_running": io, "sql_running": sql, "lag": lag}


def states(**changes):
    result = {"src": {"running": True, "server_uuid": SRC_UUID, "read_only": False, "replica": None},
              "rep1": {"running": True, "server_uuid": "u1", "read_only": True, "replica": replica()},
              "rep2": {"running": True, "server_uuid": "u2", "read_only": True, "replica": replica()}}
    result.update(changes)
    return result


def test_the_backup_copies_the_last_replica_that_replicates():
    choice = mysql_backup.backup_member(states(), MEMBERS)
    assert (choice["member"], choice["source"]) == ("rep2", "src")
    assert "last replica" in choice["reason"]
    lagging = mysql_backup.backup_member(states(rep2={"running": True, "read_only": True, "replica": replica(lag=90)}),
                                         MEMBERS, max_lag=60)
    assert lagging["member"] == "rep1"


def test_the_source_is_read_from_the_servers_not_the_inventory_order():
    # after a switchover rep1 is the source: src replicates from it
    switched = {"src": {"running": True, "server_uuid": SRC_UUID, "read_only": True,
                        "replica": dict(replica(), source_uuid="u1")},
                "rep1": {"running": True, "server_uuid": "u1", "read_only": False, "replica": None},
                "rep2": {"running": True, "server_uuid": "u2", "read_only": True,
                         "replica": dict(replica(), source_uuid="u1")}}
    choice = mysql_backup.backup_member(switched, MEMBERS)
    assert (choice["member"], choice["source"]) == ("rep2", "rep1")
    assert mysql_backup.archive_member(switched, MEMBERS)["member"] == "rep1"


def test_no_healthy_replica_refuses_unless_the_source_is_named():
    broken = states(rep1={"running": True, "read_only": True, "replica": replica(io="No")},
                    rep2={"running": False})
    with pytest.raises(mysql_backup.BackupRefused, match="no replica of src replicates within 60 s"):
        mysql_backup.backup_member(broken, MEMBERS)
    named = mysql_backup.backup_member(broken, MEMBERS, requested="src")
    assert named["member"] == "src" and "blocks DDL" in named["reason"]
    with pytest.raises(mysql_backup.BackupRefused, match="rep1 cannot be copied now: IO No"):
        mysql_backup.backup_member(broken, MEMBERS, requested="rep1")
    with pytest.raises(mysql_backup.BackupRefused, match="not a member"):
        mysql_backup.backup_member(broken, MEMBERS, requested="rep9")


def test_a_lone_server_is_its_own_backup_and_two_writable_roots_are_refused():
    alone = {"src": states()["src"]}
    assert mysql_backup.backup_member(alone, ["src"])["member"] == "src"
    two = states(rep1={"running": True, "server_uuid": "u1", "read_only": False, "replica": None})
    with pytest.raises(mysql_backup.BackupRefused, match="two sources"):
        mysql_backup.backup_member(two, MEMBERS)
    with pytest.raises(mysql_backup.BackupRefused, match="two sources"):
        mysql_backup.archive_member(two, MEMBERS)


def test_the_archive_follows_the_source_or_a_named_running_member():
    assert mysql_backup.archive_member(states(), MEMBERS)["member"] == "src"
    assert mysql_backup.archive_member(states(), MEMBERS, "rep1")["member"] == "rep1"
    with pytest.raises(mysql_backup.BackupRefused, match="rep2 does not run"):
        mysql_backup.archive_member(states(rep2={"running": False}), MEMBERS, "rep2")


DAY = 86400.0


def backups(*started, **extra):
    return [dict({"path": "/b/%d" % s, "started": s * DAY, "complete": True}, **extra) for s in started]


def archives():
    return {"src": [{"path": "/b/binlog/src/binlog.%06d" % n, "name": "binlog.%06d" % n, "mtime": n * DAY}
                    for n in range(1, 11)]}


def test_retention_keeps_n_backups_and_the_logs_the_oldest_needs():
    old_backups, old_logs = mysql_backup.expired(backups(2, 4, 6, 8), archives(), keep=2)
    assert old_backups == ["/b/2", "/b/4"]
    # the oldest kept backup started on day 6: logs last written before it (by the clock margin) go
    assert old_logs == ["/b/binlog/src/binlog.%06d" % n for n in range(1, 6)]


def test_retention_removes_nothing_until_it_holds_n_complete_backups():
    partial = backups(2, 4) + [{"path": "/b/9", "started": 9 * DAY, "complete": False}]
    assert mysql_backup.expired(partial, archives(), keep=3) == ([], [])
    with pytest.raises(mysql_backup.BackupRefused, match="cannot hold one full backup"):
        mysql_backup.expired(partial, archives(), keep=0)


def test_retention_removes_incomplete_copies_older_than_the_oldest_kept():
    mixed = backups(2, 6, 8) + [{"path": "/b/3", "started": 3 * DAY, "complete": False},
                                {"path": "/b/7", "started": 7 * DAY, "complete": False}]
    assert mysql_backup.expired(mixed, archives(), keep=2)[0] == ["/b/2", "/b/3"]


def test_a_restore_replays_from_the_log_holding_the_backup_position_server_after_server():
    logs = archives()
    # after a switchover the archive followed rep1 from its oldest log on; its names repeat src's
    logs["rep1"] = [{"path": "/b/binlog/rep1/binlog.%06d" % n, "name": "binlog.%06d" % n, "mtime": (8 + n) * DAY}
                    for n in (2, 1)]
    replay = mysql_backup.replay_files(logs, 7.5 * DAY)
    assert replay == ["/b/binlog/src/binlog.000007", "/b/binlog/src/binlog.000008", "/b/binlog/src/binlog.000009",
                      "/b/binlog/src/binlog.000010", "/b/binlog/rep1/binlog.000001", "/b/binlog/rep1/binlog.000002"]


def test_log_numbers_sort_as_numbers():
    logs = {"src": [{"path": "/%s" % name, "name": name, "mtime": 10.0 * DAY}
                    for name in ("binlog.1000000", "binlog.999999")]}
    assert mysql_backup.replay_files(logs, 0) == ["/binlog.999999", "/binlog.1000000"]


@pytest.mark.parametrize("time, gtid, arguments", [
    ("2026-11-30 12:00:05", "", ["--stop-datetime=2026-11-30 12:00:05"]),
    ("", SRC_UUID + ":1-1233", ["--include-gtids=%s:1-1233" % SRC_UUID]),
    ("", SRC_UUID + ":1-5:7-9,\n" + SRC_UUID.replace("3e", "4e") + ":1",
     ["--include-gtids=%s:1-5:7-9,%s:1" % (SRC_UUID, SRC_UUID.replace("3e", "4e"))]),
    # MySQL 8.3+ tagged transactions, read as the server reads them (group_replication.parse_gtid_set)
    ("", SRC_UUID + ":ops:1-3", ["--include-gtids=%s:ops:1-3" % SRC_UUID]),
    ("", "", []),
])
def test_the_replay_stops_at_a_time_or_a_gtid_set(time, gtid, arguments):
    assert mysql_backup.replay_arguments(time, gtid) == arguments


@pytest.mark.parametrize("time, gtid, said", [
    ("2026-11-30T12:00:05", "", "'YYYY-MM-DD HH:MM:SS' in UTC"),
    ("2026-02-30 12:00:05", "", "is not a date and time"),
    ("2026-11-30 12:00:05'; DROP", "", "in UTC"),
    ("", "1-100", "is not a GTID set"),
    ("", SRC_UUID + ":1-5 --exec=x", "is not a GTID set"),
    ("", SRC_UUID + ":9-3", "is not a GTID set"),
    ("2026-11-30 12:00:05", SRC_UUID + ":1", "not both"),
])
def test_a_bad_target_is_refused_naming_the_variable(time, gtid, said):
    with pytest.raises(mysql_backup.BackupRefused, match=said):
        mysql_backup.replay_arguments(time, gtid)


def target(**changes):
    state = {"running": True, "replicas": [], "replicating": False, "gtid_mode": "ON", "databases": []}
    state.update(changes)
    return state


@pytest.mark.parametrize("state, force, said", [
    ({"running": False}, True, "no MySQL server runs"),
    (target(replicas=["u9"]), True, "serves as a source"),
    (target(replicating=True), True, "replicates from another server"),
    (target(gtid_mode="OFF"), True, "gtid_mode is OFF"),
    (target(databases=["ledger"]), False, "holds schemas of its own (ledger)"),
])
def test_a_restore_target_is_refused_for_what_it_is(state, force, said):
    assert said in mysql_backup.restore_refusal(state, force)


def test_a_standalone_target_is_accepted_and_its_schemas_only_with_force():
    assert mysql_backup.restore_refusal(target()) == ""
    assert mysql_backup.restore_refusal(target(databases=["ledger"]), force=True) == ""


def test_a_replica_is_reseeded_only_as_a_replica_and_with_force():
    replica_state = target(replicating=True, databases=["app"])
    assert "holds schemas of its own (app)" in mysql_backup.restore_refusal(replica_state, as_replica=True)
    assert mysql_backup.restore_refusal(replica_state, force=True, as_replica=True) == ""
    assert "serves as a source" in mysql_backup.restore_refusal(target(replicas=["u9"]), True, as_replica=True)


def test_a_restore_that_stopped_half_way_is_resumed_over_what_it_left():
    # the server stopped for the copy, or running on a partial copy that carries the copied replica's channel
    assert mysql_backup.restore_refusal({"running": False}, resuming=True) == ""
    partial = target(replicating=True, databases=["app", "ledger"])
    assert mysql_backup.restore_refusal(partial, resuming=True) == ""
    # without the marker the same server is refused: nothing tells its data from a restore's
    assert "holds schemas of its own" in mysql_backup.restore_refusal(target(databases=["ledger"]))
    # replicas following it make it a source, whatever an earlier restore did
    assert "serves as a source" in mysql_backup.restore_refusal(target(replicas=["u9"]), resuming=True)


def backups_on_disk(tmp_path):
    """A repository with three backups: an older complete one, an incomplete copy, a newer complete one."""
    import json
    import os
    descriptions = {
        "20261201T100000Z-rep2": {"member": "rep2", "started": 1796119200.0, "finished": 1796119230.0,
                                  "gtid_executed_after": SRC_UUID + ":1-100", "complete": True},
        "20261201T103000Z-rep2": {"member": "rep2", "started": 1796121000.0},
        "20261201T110000Z-rep1": {"member": "rep1", "started": 1796122800.0, "finished": 1796122830.0,
                                  "gtid_executed_after": SRC_UUID + ":1-300", "complete": True},
    }
    for name, description in descriptions.items():
        os.makedirs(str(tmp_path / name / "mysql"))
        (tmp_path / name / mysql_backup.DESCRIPTION).write_text(json.dumps(description))
    os.symlink(str(tmp_path / "20261201T110000Z-rep1"), str(tmp_path / "latest"))
    os.makedirs(str(tmp_path / "binlog" / "src"))
    (tmp_path / "binlog" / "src" / "binlog.000007").write_text("x")
    return mysql_backup.read_backups(str(tmp_path))


def test_the_repository_is_read_newest_first_with_what_each_backup_says(tmp_path):
    backups = backups_on_disk(tmp_path)
    assert [b["name"] for b in backups] == ["20261201T110000Z-rep1", "20261201T103000Z-rep2",
                                            "20261201T100000Z-rep2"]
    assert [b["complete"] for b in backups] == [True, False, True]
    assert backups[0]["finished"] == 1796122830.0
    assert list(mysql_backup.read_archives(str(tmp_path))) == ["src"]


def test_a_restore_to_a_target_starts_from_the_newest_backup_that_holds_nothing_past_it(tmp_path):
    backups = backups_on_disk(tmp_path)
    # 11:00:30 is the newer backup's end: from then on it is the one; before it, the 10:00 one
    assert mysql_backup.backup_for_target(backups)["backup"]["name"] == "20261201T110000Z-rep1"
    assert mysql_backup.backup_for_target(backups, target_time="2026-12-01 11:00:30")["backup"]["name"] == \
        "20261201T110000Z-rep1"
    early = mysql_backup.backup_for_target(backups, target_time="2026-12-01 11:00:29")
    assert early["backup"]["name"] == "20261201T100000Z-rep2"
    assert "holds nothing past the target" in early["reason"]
    by_gtid = mysql_backup.backup_for_target(backups, target_gtid_set=SRC_UUID + ":1-250")
    assert by_gtid["backup"]["name"] == "20261201T100000Z-rep2"
    assert mysql_backup.backup_for_target(backups, target_gtid_set=SRC_UUID + ":1-300")["backup"]["name"] == \
        "20261201T110000Z-rep1"


def test_a_backup_past_the_target_or_incomplete_is_refused_by_name(tmp_path):
    backups = backups_on_disk(tmp_path)
    with pytest.raises(mysql_backup.BackupRefused, match="finished at 2026-12-01 11:00:30, after the target.*"
                                                         "these backups can: 20261201T100000Z-rep2"):
        mysql_backup.backup_for_target(backups, "20261201T110000Z-rep1", target_time="2026-12-01 10:59:00")
    with pytest.raises(mysql_backup.BackupRefused, match="not a complete backup"):
        mysql_backup.backup_for_target(backups, "20261201T103000Z-rep2")
    with pytest.raises(mysql_backup.BackupRefused, match="no complete backup holds only transactions before"):
        mysql_backup.backup_for_target(backups, target_time="2026-12-01 09:00:00")
    with pytest.raises(mysql_backup.BackupRefused, match="is not a backup"):
        mysql_backup.backup_for_target(backups, "nope")


def test_a_scheduled_turn_is_taken_by_a_replica_that_replicates_or_the_only_server():
    replica_state = {"replica": dict(replica(lag=3), source_host="10.0.3.7"), "replicas": []}
    take, why = mysql_backup.scheduled_turn(replica_state, lone=False, max_lag=60)
    assert take and "replicates from 10.0.3.7 within 60 s (lag 3 s)" in why
    lagging = {"replica": replica(lag=90), "replicas": []}
    assert mysql_backup.scheduled_turn(lagging, False, 60) == (
        False, "its replication is not healthy (IO Yes, SQL Yes, lag 90 s, max 60 s): a stale copy is no backup")
    stopped = {"replica": replica(io="No", lag=None), "replicas": []}
    assert not mysql_backup.scheduled_turn(stopped, False, 60)[0]
    source = {"replica": None, "replicas": ["u1", "u2"]}
    assert mysql_backup.scheduled_turn(source, False, 60) == (
        False, "it serves as the source of 2 replica(s): a replica is copied")
    assert mysql_backup.scheduled_turn({"replica": None, "replicas": []}, True, 60) == (
        True, "the cluster's only server")
    assert not mysql_backup.scheduled_turn({"replica": None, "replicas": []}, False, 60)[0]


def test_the_receiver_takes_one_backup_per_turn_and_one_at_a_time():
    backups = [{"name": "b2", "member": "rep2", "complete": True, "finished": 1000.0},
               {"name": "b1", "member": "rep1", "complete": True, "finished": 400.0}]
    assert mysql_backup.receiver_answer(backups, 1100.0, 60)["go"]
    answer = mysql_backup.receiver_answer(backups, 1100.0, 600)
    assert answer == {"go": False, "reason": "b2 (of rep2) finished 100 s ago, within this turn's 600 s"}
    # an incomplete copy is no backup of the turn
    assert mysql_backup.receiver_answer([dict(backups[0], complete=False)], 1100.0, 600)["go"]
    assert mysql_backup.receiver_answer([], 1100.0, 600, receiving="rep1") == {
        "go": False, "reason": "a backup from rep1 is being received"}


def test_the_status_is_the_newest_complete_backups_age_and_names_a_failed_attempt():
    backups = [{"name": "b3", "complete": False, "finished": 9000.0},
               {"name": "b2", "member": "rep2", "complete": True, "finished": 5000.0}]
    fresh = mysql_backup.repository_status(backups, {"name": "b2", "member": "rep2", "outcome": "complete"},
                                           6000.0, 3600)
    assert fresh["ok"] and fresh["age_seconds"] == 1000 and fresh["newest"] == "b2"
    assert fresh["reason"] == "b2 (of rep2) finished 1000 s ago, within the 3600 s allowed"
    stale = mysql_backup.repository_status(backups, {"name": "b3", "member": "rep1", "outcome": "failed",
                                                     "message": "the clone failed: disk full"}, 9000.0, 3600)
    assert not stale["ok"] and stale["age_seconds"] == 4000
    assert stale["reason"] == ("b2 (of rep2) finished 4000 s ago, past the 3600 s allowed; the last scheduled "
                               "backup (b3, from rep1) failed: the clone failed: disk full")
    assert mysql_backup.repository_status([], {}, 9000.0, 3600) == {
        "ok": False, "age_seconds": None, "newest": None, "type": None, "chain": [], "last_attempt": {},
        "turns": [], "reason": "no complete backup"}


def test_the_status_file_is_read_or_empty(tmp_path):
    assert mysql_backup.read_status(str(tmp_path)) == {}
    (tmp_path / mysql_backup.STATUS).write_text('{"last_attempt": {"outcome": "complete"}}')
    assert mysql_backup.read_status(str(tmp_path)) == {"last_attempt": {"outcome": "complete"}}


def test_the_status_names_each_scheduled_turns_level_and_chain():
    turns = [
        {"name": "b3-g5", "member": "g5", "turn": "incremental", "level": "full", "base": "",
         "reason": "a full backup, as no incremental can be taken: g5's data directory is not the one b1-g5 copied",
         "chain": ["b3-g5"], "outcome": "complete"},
        {"name": "b2-g5-incremental", "member": "g5", "turn": "incremental", "level": "incremental", "base": "b1-g5",
         "reason": "an incremental backup", "chain": ["b1-g5", "b2-g5-incremental"], "outcome": "complete"},
        {"name": "b1-g5", "member": "g5", "turn": "full", "level": "full", "chain": ["b1-g5"], "outcome": "failed",
         "message": "the copy did not prepare"},
    ]
    said = mysql_backup.repository_status([], turns[0], 9000.0, 3600, turns)["turns"]
    assert said == [
        "b3-g5 (of g5, incremental turn): full (a full backup, as no incremental can be taken: g5's data directory is "
        "not the one b1-g5 copied); chain b3-g5; complete",
        "b2-g5-incremental (of g5, incremental turn): incremental on b1-g5; chain b1-g5 + b2-g5-incremental; complete",
        "b1-g5 (of g5, full turn): full; chain b1-g5; failed: the copy did not prepare"]
    # a clone turn recorded before levels existed: a full one
    assert mysql_backup.turn_text({"name": "c1", "member": "rep1", "outcome": "complete"}) == \
        "c1 (of rep1, full turn): full; complete"
