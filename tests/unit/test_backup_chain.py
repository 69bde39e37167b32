"""Chains of physical backups (module_utils/backup_chain.py): which backup a new incremental is taken against, what a
restore applies and in which order, what a retention of N chains removes, and the repository module's base, chain
and prune steps on a repository of real directories."""
import json
import os

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.dbops.clusters.plugins.module_utils import backup_chain, mysql_backup
from ansible_collections.dbops.clusters.plugins.modules import mysql_backup_repository

DAY = 86400.0
LINEAGE = "g5 8d1e0c52-35b5-4f7e-a3a1-0d2b9c1f6a11"


def full(name, day, to_lsn=1000, member="g5", **extra):
    return dict({"name": name, "path": "/r/" + name, "started": day * DAY, "complete": True, "type": "full",
                 "member": member, "lineage": LINEAGE,
                 "checkpoints": {"backup_type": "log-applied", "from_lsn": 0, "to_lsn": to_lsn, "last_lsn": to_lsn}},
                **extra)


def incremental(name, day, base, from_lsn, to_lsn, member="g5", **extra):
    return dict({"name": name, "path": "/r/" + name, "started": day * DAY, "complete": True, "type": "incremental",
                 "base": base, "member": member, "lineage": LINEAGE,
                 "checkpoints": {"backup_type": "incremental", "from_lsn": from_lsn, "to_lsn": to_lsn,
                                 "last_lsn": to_lsn}}, **extra)


def repository():
    """Two chains: F1 (day 1) <- I1 <- I2, and F2 (day 4) <- I3."""
    return [full("F1", 1, 1000), incremental("I1", 2, "F1", 1000, 1500), incremental("I2", 3, "I1", 1500, 2100),
            full("F2", 4, 3000), incremental("I3", 5, "F2", 3000, 3400)]


def names(pieces):
    return [piece["name"] for piece in pieces]


# ------------------------------------------------------------------------------------------ what a restore applies

def test_a_restore_applies_the_full_backup_then_each_incremental_in_the_order_taken():
    backups = repository()
    assert names(backup_chain.chain(backups, "I2")) == ["F1", "I1", "I2"]
    assert names(backup_chain.chain(backups, "I3")) == ["F2", "I3"]
    assert names(backup_chain.chain(backups, "F1")) == ["F1"]
    # the order comes from the base links, not from the list's order or the names
    assert names(backup_chain.chain(list(reversed(backups)), "I2")) == ["F1", "I1", "I2"]


@pytest.mark.parametrize("change, said", [
    (lambda b: b.pop(1), "I2 is an incremental backup on I1, which is not in the repository any more"),
    (lambda b: b[1].update(complete=False), "I1 is not a complete backup"),
    (lambda b: b[2]["checkpoints"].update(from_lsn=1499), "I2 starts at LSN 1499, its base I1 ends at LSN 1500"),
    (lambda b: b[2].update(member="g4"), "I2 was copied from member g4, its base I1 from g5"),
    (lambda b: b[2].update(lineage="g5 another-directory"), "I2 was copied from lineage g5 another-directory"),
    (lambda b: b[0]["checkpoints"].update(backup_type="full-backuped"), "F1, the full backup of the chain, is not "
                                                                        "prepared"),
    (lambda b: b[2]["checkpoints"].update(backup_type="full-backuped"), "I2 is described as incremental, its "
                                                                        "checkpoints file says full-backuped"),
    (lambda b: b[2].pop("base"), "names no backup as its base"),
])
def test_a_chain_with_a_broken_link_is_refused_naming_the_link(change, said):
    backups = repository()
    change(backups)
    with pytest.raises(backup_chain.ChainBroken, match=said.replace("(", r"\(").replace(")", r"\)")):
        backup_chain.chain(backups, "I2")


def test_the_chain_is_assembled_on_a_copy_one_incremental_at_a_time():
    pieces = backup_chain.chain(repository(), "I2")
    steps = backup_chain.apply_steps(pieces, "/r/.restore", ["mariadb-backup", "--prepare"])
    assert steps == [
        ["rm", "-rf", "--", "/r/.restore"], ["mkdir", "-p", "-m", "0700", "--", "/r/.restore"],
        ["cp", "-a", "--reflink=auto", "--", "/r/F1", "/r/.restore/data"],
        ["cp", "-a", "--reflink=auto", "--", "/r/I1", "/r/.restore/incremental"],
        ["mariadb-backup", "--prepare", "--target-dir=/r/.restore/data", "--incremental-dir=/r/.restore/incremental"],
        ["rm", "-rf", "--", "/r/.restore/incremental"],
        ["cp", "-a", "--reflink=auto", "--", "/r/I2", "/r/.restore/incremental"],
        ["mariadb-backup", "--prepare", "--target-dir=/r/.restore/data", "--incremental-dir=/r/.restore/incremental"],
        ["rm", "-rf", "--", "/r/.restore/incremental"]]
    # no step writes into a stored backup: each is only ever the source of a copy
    for step in steps:
        assert not any(arg.startswith("--target-dir=/r/") and ".restore" not in arg for arg in step), step
        assert step[0] != "rm" or ".restore" in step[-1], step


def test_xtrabackup_keeps_the_copy_open_for_every_incremental_but_the_last():
    pieces = backup_chain.chain(repository(), "I2")
    prepares = [step for step in backup_chain.apply_steps(pieces, "/s", ["xtrabackup", "--prepare"],
                                                          ["--apply-log-only"]) if step[0] == "xtrabackup"]
    assert prepares == [
        ["xtrabackup", "--prepare", "--apply-log-only", "--target-dir=/s/data", "--incremental-dir=/s/incremental"],
        ["xtrabackup", "--prepare", "--target-dir=/s/data", "--incremental-dir=/s/incremental"]]


def test_a_full_backup_alone_is_restored_as_stored():
    assert backup_chain.apply_steps(backup_chain.chain(repository(), "F2"), "/s", ["mariadb-backup", "--prepare"]) \
        == []


@pytest.mark.parametrize("staging, said", [
    ("/r", "would replace the repository"), ("/", "absolute path below /"), ("relative", "absolute path"),
    ("/r/latest", "would replace the repository"), ("/r/F1", "would replace or lie inside the backup /r/F1"),
    ("/r/I1/tmp", "lie inside the backup /r/I1"), ("/", "absolute"),
])
def test_a_staging_directory_that_would_erase_a_backup_is_refused(staging, said):
    assert said in backup_chain.staging_refusal(staging, "/r", repository())


def test_the_staging_directory_may_sit_in_the_repository_under_a_dot_name_or_elsewhere():
    assert backup_chain.staging_refusal("/r/.restore", "/r", repository()) == ""
    assert backup_chain.staging_refusal("/srv/restore", "/r", repository()) == ""


# ------------------------------------------------------------------------------ the base of the next incremental

def test_the_next_incremental_is_taken_against_the_newest_complete_backup():
    backups = repository() + [dict(incremental("I4", 6, "I3", 3400, 3900), complete=False)]
    found = backup_chain.next_base(backups)
    assert found["base"]["name"] == "I3" and names(found["chain"]) == ["F2", "I3"]


def test_no_base_without_a_complete_backup_or_with_a_broken_newest_chain():
    with pytest.raises(backup_chain.ChainBroken, match="no complete backup"):
        backup_chain.next_base([dict(full("F1", 1), complete=False)])
    broken = [b for b in repository() if b["name"] != "F2"]
    with pytest.raises(backup_chain.ChainBroken, match="the newest complete backup, I3, cannot be restored: I3 is an "
                                                       "incremental backup on F2, which is not in the repository"):
        backup_chain.next_base(broken)


def test_the_checkpoints_file_is_read_with_its_lsns():
    text = "backup_type = incremental\nfrom_lsn = 14581788\nto_lsn = 14761226\nlast_lsn = 14761242\n" \
           "recover_binlog_info = 0\n"
    assert backup_chain.parse_checkpoints(text) == {"backup_type": "incremental", "from_lsn": 14581788,
                                                    "to_lsn": 14761226, "last_lsn": 14761242}
    with pytest.raises(backup_chain.ChainBroken, match="no backup_type and LSNs"):
        backup_chain.parse_checkpoints("backup_type = full-backuped\n")


# ------------------------------------------------------------------------------------------------- retention

def test_retention_keeps_the_newest_chains_whole():
    remove, oldest_kept = backup_chain.expired(repository(), keep=1)
    assert remove == ["/r/F1", "/r/I1", "/r/I2"] and oldest_kept == 4 * DAY
    assert backup_chain.expired(repository(), keep=2) == ([], 1 * DAY)
    # fewer complete chains than the retention holds: nothing goes
    assert backup_chain.expired(repository(), keep=3) == ([], None)


def test_retention_never_leaves_an_incremental_without_its_base():
    # an incremental of the old chain taken after the new chain began (day 4.5) goes with its chain
    backups = repository() + [incremental("I2b", 4.5, "I2", 2100, 2200)]
    remove = backup_chain.expired(backups, keep=1)[0]
    assert "/r/I2b" in remove and "/r/F1" in remove
    kept = [b for b in backups if b["path"] not in remove]
    for backup in kept:
        backup_chain.chain(kept, backup["name"])      # every kept backup can still be restored


def test_retention_removes_incomplete_copies_and_broken_incrementals_older_than_the_oldest_kept_chain():
    backups = repository() + [
        dict(incremental("Ix", 3.5, "F0", 100, 200)),              # its base was never here
        dict(full("Fp", 3.7), complete=False),                    # a copy that did not land
        dict(full("Fq", 4.2), complete=False)]                    # newer than the kept chain: stays
    remove = backup_chain.expired(backups, keep=1)[0]
    assert remove == ["/r/F1", "/r/Fp", "/r/I1", "/r/I2", "/r/Ix"]


def test_a_repository_of_full_backups_keeps_the_newest_n_as_before():
    fulls = [full("F%d" % day, day) for day in (2, 4, 6, 8)]
    old_backups = mysql_backup.expired([{"path": b["path"], "started": b["started"], "complete": True}
                                        for b in fulls], {}, keep=2)[0]
    assert old_backups == ["/r/F2", "/r/F4"]


def test_the_status_names_the_newest_backups_type_and_chain():
    backups = sorted(repository(), key=lambda b: b["started"], reverse=True)
    for backup in backups:
        backup["finished"] = backup["started"] + 60
    status = mysql_backup.repository_status(backups, {}, 5 * DAY + 600, 3600)
    assert (status["ok"], status["type"], status["chain"]) == (True, "incremental", ["F2", "I3"])
    assert status["reason"] == "I3 (of g5, incremental: a restore applies F2 + I3) finished 540 s ago, within the " \
                               "3600 s allowed"
    broken = [b for b in backups if b["name"] != "F2"]
    status = mysql_backup.repository_status(broken, {}, 5 * DAY + 600, 3600)
    assert not status["ok"] and "its chain is broken: I3 is an incremental backup on F2" in status["reason"]


# ------------------------------------------------------------------- the repository module on real directories

CHECKPOINTS = "mariadb_backup_checkpoints"
POSITION = "mariadb_backup_galera_info"


def write_backup(root, backup, seqno):
    directory = root / backup["name"]
    directory.mkdir()
    checkpoints = backup["checkpoints"]
    (directory / CHECKPOINTS).write_text("backup_type = %s\nfrom_lsn = %d\nto_lsn = %d\nlast_lsn = %d\n" % (
        checkpoints["backup_type"], checkpoints["from_lsn"], checkpoints["to_lsn"], checkpoints["last_lsn"]))
    (directory / POSITION).write_text("f3fce748-e5f3-11f1-9b48-23d4b883f3ea:%d 0\n" % seqno)
    description = dict((k, v) for k, v in backup.items() if k not in ("path", "name", "checkpoints"))
    description["finished"] = description["started"] + 60
    (directory / mysql_backup.DESCRIPTION).write_text(json.dumps(description))


@pytest.fixture
def on_disk(tmp_path):
    for seqno, backup in enumerate(repository(), start=1):
        write_backup(tmp_path, backup, seqno * 100)
    (tmp_path / ".restore").mkdir()          # a restore's staging copy: never read as a backup
    os.symlink(str(tmp_path / "I3"), str(tmp_path / "latest"))
    return tmp_path


def run_repository(monkeypatch, capsys, **args):
    monkeypatch.setattr(mysql_backup_repository.time, "time", lambda: 5 * DAY + 600)
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            mysql_backup_repository.main()
    return json.loads(capsys.readouterr().out)


def test_the_module_finds_the_base_with_its_lsns(on_disk, monkeypatch, capsys):
    result = run_repository(monkeypatch, capsys, path=str(on_disk), step="base")
    assert result["refusal"] == "" and result["base"]["name"] == "I3"
    assert result["base"]["checkpoints"]["to_lsn"] == 3400 and result["base"]["lineage"] == LINEAGE
    assert names(result["chain"]) == ["F2", "I3"]
    assert ".restore" not in names(result["backups"])
    empty = run_repository(monkeypatch, capsys, path=str(on_disk / "nothing-yet"), step="base")
    assert empty["base"] is None and "no backup was taken" in empty["refusal"]


def test_the_module_gives_a_restore_the_chain_its_position_and_the_steps(on_disk, monkeypatch, capsys):
    result = run_repository(monkeypatch, capsys, path=str(on_disk), step="chain", backup=str(on_disk / "latest"),
                            position_file=POSITION, staging=str(on_disk / ".restore"))
    assert result["refusal"] == "" and names(result["chain"]) == ["F2", "I3"]
    # the position is the newest piece's: the rebuilt member asks its donor for what came after the incremental
    assert result["position"].strip().endswith(":500 0")
    assert result["stream_from"] == str(on_disk / ".restore" / "data")
    assert [step[0] for step in result["steps"]] == ["rm", "mkdir", "cp", "cp", "mariadb-backup", "rm"]
    alone = run_repository(monkeypatch, capsys, path=str(on_disk), step="chain", backup="F2", position_file=POSITION,
                           staging=str(on_disk / ".restore"))
    assert (alone["steps"], alone["stream_from"]) == ([], str(on_disk / "F2"))


def test_the_module_refuses_a_chain_whose_files_do_not_join(on_disk, monkeypatch, capsys):
    (on_disk / "I2" / CHECKPOINTS).write_text("backup_type = incremental\nfrom_lsn = 1400\nto_lsn = 2100\n")
    result = run_repository(monkeypatch, capsys, path=str(on_disk), step="chain", backup="I2",
                            position_file=POSITION, staging=str(on_disk / ".restore"))
    assert "I2 starts at LSN 1400, its base I1 ends at LSN 1500" in result["refusal"] and result["steps"] == []
    unsafe = run_repository(monkeypatch, capsys, path=str(on_disk), step="chain", backup="I3",
                            position_file=POSITION, staging=str(on_disk / "F2"))
    assert "would replace or lie inside the backup" in unsafe["refusal"] and unsafe["steps"] == []


def test_the_module_restores_a_bare_prepared_copy_as_a_full_backup(tmp_path, monkeypatch, capsys):
    bare = tmp_path / "copied-by-hand"
    bare.mkdir()
    (bare / CHECKPOINTS).write_text("backup_type = log-applied\nfrom_lsn = 0\nto_lsn = 9\nlast_lsn = 9\n")
    (bare / POSITION).write_text("f3fce748-e5f3-11f1-9b48-23d4b883f3ea:7 0\n")
    result = run_repository(monkeypatch, capsys, path=str(tmp_path), step="chain", backup=str(bare),
                            position_file=POSITION)
    assert result["refusal"] == "" and names(result["chain"]) == ["copied-by-hand"]
    (bare / CHECKPOINTS).write_text("backup_type = full-backuped\nfrom_lsn = 0\nto_lsn = 9\nlast_lsn = 9\n")
    result = run_repository(monkeypatch, capsys, path=str(tmp_path), step="chain", backup=str(bare),
                            position_file=POSITION)
    assert "is not prepared (backup_type full-backuped" in result["refusal"]


def test_the_module_prunes_whole_chains(on_disk, monkeypatch, capsys):
    result = run_repository(monkeypatch, capsys, path=str(on_disk), step="prune", keep=1)
    assert sorted(os.path.basename(p) for p in result["removed"]) == ["F1", "I1", "I2"]
    assert sorted(os.listdir(str(on_disk))) == [".restore", "F2", "I3", "latest"]
