"""The Galera backup's choice of member, the rebuild's refusals, the position kept with a backup, and the backup
commands each flavor's tool gets (rendered from the role's task file)."""
import os

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from ansible_collections.dbops.clusters.plugins.module_utils import galera_backup, mysql_flavors

MEMBERS = ["g1", "g2", "g3", "g4", "g5"]
UUID = "f3fce748-e5f3-11f1-9b48-23d4b883f3ea"


def synced(size=5):
    return {"local_state_comment": "Synced", "cluster_status": "Primary", "cluster_size": size}


def all_synced():
    return dict((name, synced()) for name in MEMBERS)


def test_the_backup_copies_the_last_member_the_writer_does_not_use():
    assert galera_backup.backup_member(all_synced(), MEMBERS, ["g1"]) == "g5"
    assert galera_backup.backup_member(all_synced(), MEMBERS, ["g4", "g5"]) == "g3"


def test_a_requested_member_is_copied_unless_the_writer_uses_it():
    assert galera_backup.backup_member(all_synced(), MEMBERS, ["g1"], "g3") == "g3"
    with pytest.raises(galera_backup.BackupRefused, match="g1 is used by the writer"):
        galera_backup.backup_member(all_synced(), MEMBERS, ["g1"], "g1")


@pytest.mark.parametrize("broken, said", [
    ({"g3": None}, "g3 is not running"),
    ({"g2": {"local_state_comment": "Donor/Desynced", "cluster_status": "Primary", "cluster_size": 5}},
     "g2 is Donor/Desynced, Primary of 5"),
    ({"g4": synced(4)}, "g4 is Synced, Primary of 4"),
])
def test_the_backup_is_refused_unless_every_member_is_synced_in_one_component(broken, said):
    states = all_synced()
    states.update(broken)
    with pytest.raises(galera_backup.BackupRefused, match="not complete and Synced") as err:
        galera_backup.backup_member(states, MEMBERS, ["g1"])
    assert said in str(err.value)


def test_the_backup_names_what_is_not_a_member_and_refuses_when_all_are_avoided():
    with pytest.raises(galera_backup.BackupRefused, match="g9 not among the members"):
        galera_backup.backup_member(all_synced(), MEMBERS, ["g9"])
    with pytest.raises(galera_backup.BackupRefused, match="every member is in pxc_galera_backup_avoid"):
        galera_backup.backup_member(all_synced(), MEMBERS, MEMBERS)


LINEAGE = "g5 0f8e4c1a-5a0b-4d0e-9d1f-2a7c3b9e6d01"


def base(**changes):
    """The repository's newest complete backup, as mysql_backup_repository step=base returns it."""
    return dict({"name": "20261201T020000Z-g5", "path": "/var/backups/galera/20261201T020000Z-g5", "member": "g5",
                 "lineage": LINEAGE, "checkpoints": {"backup_type": "log-applied", "from_lsn": 0, "to_lsn": 14581788,
                                                     "last_lsn": 14581804}}, **changes)


def test_a_full_backup_is_the_default_level():
    plan = galera_backup.backup_plan(all_synced(), MEMBERS, ["g1"])
    assert (plan["level"], plan["member"], plan["base"], plan["from_lsn"]) == ("full", "g5", "", None)


def test_an_incremental_is_taken_from_its_bases_member_from_its_to_lsn():
    plan = galera_backup.backup_plan(all_synced(), MEMBERS, ["g1"], "", "incremental", base(member="g3",
                                                                                            lineage="g3 x"), "", "g3 x")
    assert (plan["level"], plan["member"], plan["base"], plan["from_lsn"]) == (
        "incremental", "g3", "20261201T020000Z-g5", 14581788)
    assert "copied from g3 like it" in plan["reason"]
    assert galera_backup.backup_plan(all_synced(), MEMBERS, ["g1"], "g5", "auto", base(), "", LINEAGE + "\n")[
        "level"] == "incremental"


@pytest.mark.parametrize("requested, the_base, base_refusal, lineage, said", [
    ("g3", base(), "", LINEAGE, "pxc_galera_backup_member=g3, but its base 20261201T020000Z-g5 was copied from g5"),
    ("", base(), "", "", "g5's data directory is not the one 20261201T020000Z-g5 copied (its dbops-backup-lineage is "
                         "missing)"),
    ("", base(), "", "g5 another", "says 'g5 another', the backup recorded"),
    ("", base(member="g1"), "", LINEAGE, "copied from g1, which the writer or the proxies use now"),
    ("", base(member="g9"), "", LINEAGE, "copied from g9, which is not a member any more"),
    ("", base(lineage=None), "", LINEAGE, "records no data-directory lineage or LSN"),
    ("", None, "the repository holds no complete backup to take an incremental against",
     LINEAGE, "the repository holds no complete backup"),
])
def test_an_incremental_that_cannot_be_taken_is_refused_or_becomes_a_full_backup_with_auto(
        requested, the_base, base_refusal, lineage, said):
    with pytest.raises(galera_backup.BackupRefused) as refused:
        galera_backup.backup_plan(all_synced(), MEMBERS, ["g1"], requested, "incremental", the_base, base_refusal,
                                  lineage)
    assert said in str(refused.value) and "take a full backup" in str(refused.value)
    auto = galera_backup.backup_plan(all_synced(), MEMBERS, ["g1"], requested, "auto", the_base, base_refusal,
                                     lineage)
    # never another member's LSN: auto copies the whole member it would copy for a full backup
    assert (auto["level"], auto["member"], auto["from_lsn"]) == ("full", requested or "g5", None)
    assert auto["reason"].startswith("a full backup, as no incremental can be taken: ") and said in auto["reason"]


def test_no_backup_of_any_level_while_the_cluster_is_not_whole():
    short = all_synced()
    short["g2"] = None
    for level in ("full", "incremental", "auto"):
        with pytest.raises(galera_backup.BackupRefused, match="not complete and Synced"):
            galera_backup.backup_plan(short, MEMBERS, ["g1"], "", level, base(), "", LINEAGE)
    with pytest.raises(galera_backup.BackupRefused, match="pxc_galera_backup_level=weekly: one of full"):
        galera_backup.backup_plan(all_synced(), MEMBERS, ["g1"], "", "weekly")


def test_a_scheduled_full_turn_takes_a_full_backup_whatever_the_chain():
    plan = galera_backup.scheduled_level("full", "g5", MEMBERS, LINEAGE, base(), "")
    assert (plan["level"], plan["base"], plan["from_lsn"]) == ("full", "", None)
    assert "full turn" in plan["reason"]


def test_a_scheduled_incremental_turn_extends_the_newest_chain_from_its_bases_member():
    plan = galera_backup.scheduled_level("incremental", "g5", MEMBERS, LINEAGE + "\n", base(), "")
    assert (plan["level"], plan["base"], plan["base_path"], plan["from_lsn"]) == (
        "incremental", "20261201T020000Z-g5", "/var/backups/galera/20261201T020000Z-g5", 14581788)
    assert plan["reason"].startswith("an incremental backup: the pages of g5 changed since 20261201T020000Z-g5")


@pytest.mark.parametrize("member, the_base, base_refusal, lineage, said", [
    # another member's turn (the base's member was not Synced in its turn): never its LSNs on another data directory
    ("g4", base(), "", LINEAGE, "the turn is g4's, but its base 20261201T020000Z-g5 was copied from g5"),
    # g5 was rebuilt (a state transfer or a restore) since its base: its marker is gone or new
    ("g5", base(), "", "", "its dbops-backup-lineage is missing"),
    ("g5", base(), "", "g5 another", "says 'g5 another', the backup recorded"),
    ("g5", base(member="g9"), "", LINEAGE, "copied from g9, which is not a member any more"),
    ("g5", base(lineage=None), "", LINEAGE, "records no data-directory lineage or LSN"),
    ("g5", None, "the repository holds no complete backup to take an incremental against", LINEAGE,
     "the repository holds no complete backup"),
    ("g5", None, "the newest complete backup, X, cannot be restored: gone", LINEAGE, "X, cannot be restored"),
])
def test_a_scheduled_incremental_turn_takes_a_full_backup_saying_why_when_no_incremental_can_be_taken(
        member, the_base, base_refusal, lineage, said):
    plan = galera_backup.scheduled_level("incremental", member, MEMBERS, lineage, the_base, base_refusal)
    assert (plan["level"], plan["base"], plan["from_lsn"]) == ("full", "", None)
    assert plan["reason"].startswith("a full backup, as no incremental can be taken: ") and said in plan["reason"]


def test_a_scheduled_turn_of_another_level_is_refused():
    with pytest.raises(galera_backup.BackupRefused, match="level 'auto': one of full, incremental"):
        galera_backup.scheduled_level("auto", "g5", MEMBERS, LINEAGE, base(), "")


def test_the_filter_returns_the_plan_or_the_refusal():
    from ansible_collections.dbops.clusters.plugins.filter.galera_backup_member import galera_backup_member
    assert galera_backup_member(all_synced(), MEMBERS, ["g1"])["member"] == "g5"
    refused = galera_backup_member(all_synced(), MEMBERS, ["g1"], "", "incremental", None, "no backup yet", "")
    assert (refused["member"], refused["refusal"]) == ("", "no incremental backup: no backup yet; take a full backup "
                                                           "(pxc_galera_backup_level=full, or auto to take one whenever "
                                                           "no incremental can be taken)")


def test_the_role_and_the_agent_name_the_same_lineage_file():
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "roles", "pxc_galera", "vars", "main.yml")) as handle:
        assert yaml.safe_load(handle)["pxc_galera_backup_lineage_file"] == galera_backup.LINEAGE_FILE


def test_a_member_may_be_rebuilt_while_the_others_keep_a_majority():
    assert galera_backup.restore_refusal(all_synced(), MEMBERS, "g4") == ""
    # already down: the other four are a majority of five
    states = dict((name, synced(4)) for name in MEMBERS)
    states["g4"] = None
    assert galera_backup.restore_refusal(states, MEMBERS, "g4") == ""


def test_the_rebuild_is_refused_when_it_would_lose_quorum():
    states = {"g1": synced(3), "g2": synced(3), "g3": synced(3), "g4": None, "g5": None}
    refusal = galera_backup.restore_refusal(states, MEMBERS, "g3")
    assert "leave 2 of 5 members" in refusal and "quorum" in refusal


def test_the_rebuild_is_refused_for_the_last_synced_member():
    states = {"g1": synced(1), "g2": None, "g3": None, "g4": None, "g5": None}
    assert "g1 is the last Synced member" in galera_backup.restore_refusal(states, MEMBERS, "g1")
    assert "not a member" in galera_backup.restore_refusal(all_synced(), MEMBERS, "g9")


@pytest.mark.parametrize("text, seqno, gtid", [
    (UUID + ":1234\n", 1234, ""),
    (UUID.upper() + ":7,0-1-7", 7, "0-1-7"),
    (UUID + ":11 0", 11, "0"),
])
def test_the_backups_position_is_read_from_mariadb_backup_galera_info(text, seqno, gtid):
    position = galera_backup.parse_galera_info(text)
    assert position == {"uuid": UUID, "seqno": seqno, "gtid": gtid}
    grastate = galera_backup.grastate_text(position)
    assert "uuid:    %s\n" % UUID in grastate and "seqno:   %d\n" % seqno in grastate
    assert "safe_to_bootstrap: 0" in grastate


@pytest.mark.parametrize("text", ["", "garbage", UUID + ":-1", "00000000-0000:3"])
def test_a_backup_without_a_position_is_refused(text):
    with pytest.raises(galera_backup.BackupRefused, match="holds no Galera position"):
        galera_backup.parse_galera_info(text)


class FakeSession:
    """A member whose wsrep_desync and state the module reads and sets; it is Synced again after `lag` reads."""

    def __init__(self, desync="OFF", state="Synced", lag=0, check_mode=False):
        self.desync, self.state, self.lag, self.check_mode, self.executed = desync, state, lag, check_mode, []

    def variables(self, names):
        return {"wsrep_desync": self.desync}

    def fetch(self, query, args=None):
        if self.desync == "OFF" and self.state != "Synced":
            self.lag -= 1
            if self.lag <= 0:
                self.state = "Synced"
        return [{"Variable_name": "wsrep_local_state_comment", "Value": self.state}]

    def execute(self, query, args=None):
        self.executed.append(query)
        if not self.check_mode:
            self.desync = query.split("= ")[1]
            self.state = "Donor/Desynced" if self.desync == "ON" else self.state

    def close(self):
        pass


def run_desync(monkeypatch, capsys, session, args, check_mode=False):
    import json
    from ansible.module_utils.testing import patch_module_args
    from ansible_collections.dbops.clusters.plugins.modules import galera_desync
    monkeypatch.setattr(galera_desync, "connect", lambda params: None)
    monkeypatch.setattr(galera_desync, "Session", lambda connection, check_mode=False: session)
    monkeypatch.setattr(galera_desync.time, "sleep", lambda seconds: None)
    with patch_module_args(dict(args, _ansible_check_mode=check_mode)):
        with pytest.raises(SystemExit):
            galera_desync.main()
    return json.loads(capsys.readouterr().out)


def test_desync_sets_the_variable_once_and_says_so(monkeypatch, capsys):
    session = FakeSession()
    result = run_desync(monkeypatch, capsys, session, {"desynced": True})
    assert (result["changed"], result["before"], result["after"]) == (True, "OFF", "ON")
    assert session.executed == ["SET GLOBAL wsrep_desync = ON"]
    again = run_desync(monkeypatch, capsys, session, {"desynced": True})
    assert again["changed"] is False and len(session.executed) == 1


def test_resync_waits_until_the_member_is_synced_again(monkeypatch, capsys):
    session = FakeSession(desync="ON", state="Donor/Desynced", lag=3)
    result = run_desync(monkeypatch, capsys, session, {"desynced": False})
    assert (result["changed"], result["after"], result["state"]) == (True, "OFF", "Synced")


def test_resync_fails_when_the_member_never_syncs(monkeypatch, capsys):
    session = FakeSession(desync="ON", state="Donor/Desynced", lag=10 ** 9)
    result = run_desync(monkeypatch, capsys, session, {"desynced": False, "timeout": 0})
    assert result["failed"] and "not Synced" in result["msg"]


def test_check_mode_predicts_and_sets_nothing(monkeypatch, capsys):
    session = FakeSession(check_mode=True)
    result = run_desync(monkeypatch, capsys, session, {"desynced": True}, check_mode=True)
    assert (result["changed"], result["after"], session.desync) == (True, "ON", "OFF")


def test_the_restore_plan_refuses_a_backup_of_another_cluster_and_writes_grastate_otherwise():
    from ansible_collections.dbops.clusters.plugins.filter.galera_restore_plan import galera_restore_plan
    plan = galera_restore_plan(all_synced(), MEMBERS, "g4", UUID + ":11 0", UUID)
    assert plan["refusal"] == "" and plan["position"]["seqno"] == 11 and "seqno:   11" in plan["grastate"]
    other = galera_restore_plan(all_synced(), MEMBERS, "g4", UUID + ":11 0", "0" * 8 + UUID[8:])
    assert "taken from cluster %s" % UUID in other["refusal"]
    assert "no Galera position" in galera_restore_plan(all_synced(), MEMBERS, "g4", "", UUID)["refusal"]


def test_the_whole_cluster_is_restored_over_a_running_component_only_with_force():
    refusal = galera_backup.cluster_restore_refusal(all_synced(), MEMBERS)
    assert "g1, g2, g3, g4, g5 run in a Primary component" in refusal and "pxc_galera_restore_force" in refusal
    assert galera_backup.cluster_restore_refusal(all_synced(), MEMBERS, force=True) == ""


def test_the_whole_cluster_is_restored_after_a_total_loss():
    down = dict((name, None) for name in MEMBERS)
    assert galera_backup.cluster_restore_refusal(down, MEMBERS) == ""
    # a member left running outside a Primary component holds nothing clients write to
    down["g2"] = {"local_state_comment": "Initialized", "cluster_status": "non-Primary", "cluster_size": 1}
    assert galera_backup.cluster_restore_refusal(down, MEMBERS) == ""
    down["g3"] = synced(1)
    assert "g3 runs in a Primary component" in galera_backup.cluster_restore_refusal(down, MEMBERS)


# ----------------------------------------------- the backup commands of each flavor, rendered from backup.yml

def backup_commands(flavor, incremental=False):
    """What roles/pxc_galera/tasks/backup.yml streams (the send and receive commands it gives percona_server's
    stream.yml), prepares and reads, rendered by Ansible's templar with the flavor's backup tool from the flavor
    table (percona cannot run here); incremental: against a base that ends at LSN 14581788."""
    path = os.path.join(os.path.dirname(__file__), "..", "..", "roles", "pxc_galera", "tasks", "backup.yml")
    with open(path, encoding="utf-8") as handle:
        tasks = yaml.safe_load(handle)
    flat = []
    for task in tasks:
        flat.extend(task.get("block", [task]))
    by_name = dict((task["name"], task) for task in flat)
    choice = {"level": "incremental", "from_lsn": 14581788, "base": "T0-g5"} if incremental else \
        {"level": "full", "from_lsn": None, "base": ""}
    variables = {"pxc_galera_backup_tool": mysql_flavors.flavor(flavor)["galera"]["backup"],
                 "pxc_galera_backup_option_file": "/etc/mysql/dbops-backup.cnf", "pxc_galera_backup_port": 4444,
                 "pxc_galera_backup_path": "/var/backups/galera/T-g5", "pxc_galera_backup_source": "g5",
                 "pxc_galera_member_addresses": {"g5": "10.0.0.15"}, "pxc_galera_backup_host_address": "10.0.0.71",
                 "pxc_galera_backup_choice": choice, "pxc_galera_backup_incremental": incremental,
                 "ansible_check_mode": False}
    templar = Templar(loader=DataLoader(), variables=variables)

    def render(value):
        return templar.template(trust_as_template(value) if isinstance(value, str)
                                else [trust_as_template(v) for v in value])
    stream = by_name["Stream the backup to the backup host"]["vars"]
    prepare = by_name["Prepare a full backup on the backup host (apply its redo log)"]
    return {"from_address": render(stream["percona_server_stream_from_address"]),
            "receive": render(stream["percona_server_stream_receive"]),
            "send": render(stream["percona_server_stream_send"]),
            "prepare": render(prepare["ansible.builtin.command"]["argv"]),
            "prepared": render("{{ %s }}" % prepare["when"]),
            "info": render(by_name["Read the Galera position and the LSNs kept with the backup"]
                           ["ansible.builtin.slurp"]["src"].replace("{{ item }}", "{{ pxc_galera_backup_tool.galera_info }}"))}


def test_percona_backs_up_with_xtrabackup_and_xbstream():
    commands = backup_commands("percona")
    assert commands["send"] == ("xtrabackup --defaults-extra-file=/etc/mysql/dbops-backup.cnf --backup --galera-info "
                                "--stream=xbstream --target-dir=/tmp")
    assert commands["from_address"] == "10.0.0.15"
    assert commands["receive"] == "xbstream -x -C /var/backups/galera/T-g5"
    # without the rollback phase: a fully prepared XtraBackup copy takes no incremental any more
    assert commands["prepare"] == ["xtrabackup", "--prepare", "--apply-log-only",
                                   "--target-dir=/var/backups/galera/T-g5"]
    assert commands["prepared"] is True
    assert commands["info"] == "/var/backups/galera/T-g5/xtrabackup_galera_info"


def test_mariadb_backs_up_with_mariadb_backup_and_mbstream():
    commands = backup_commands("mariadb")
    assert commands["send"].startswith("mariadb-backup --defaults-extra-file=/etc/mysql/dbops-backup.cnf --backup")
    assert "--stream=mbstream" in commands["send"] and commands["receive"].startswith("mbstream -x -C")
    assert "--incremental-lsn" not in commands["send"]
    assert commands["prepare"] == ["mariadb-backup", "--prepare", "--target-dir=/var/backups/galera/T-g5"]
    assert commands["info"].endswith("/mariadb_backup_galera_info")


@pytest.mark.parametrize("flavor, tool, stream", [("mariadb", "mariadb-backup", "mbstream"),
                                                  ("percona", "xtrabackup", "xbstream")])
def test_an_incremental_copies_the_pages_changed_since_its_base_and_is_not_prepared_alone(flavor, tool, stream):
    commands = backup_commands(flavor, incremental=True)
    assert commands["send"] == ("%s --defaults-extra-file=/etc/mysql/dbops-backup.cnf --backup --galera-info "
                                "--stream=%s --target-dir=/tmp --incremental-lsn=14581788" % (tool, stream))
    assert commands["prepared"] is False


def test_a_restore_applies_each_flavors_incrementals_with_its_tool():
    from ansible_collections.dbops.clusters.plugins.module_utils import backup_chain
    pieces = [{"name": "F", "path": "/b/F"}, {"name": "I1", "path": "/b/I1"}, {"name": "I2", "path": "/b/I2"}]
    for flavor, tool, keep_open in (("mariadb", "mariadb-backup", []), ("percona", "xtrabackup", ["--apply-log-only"])):
        row = mysql_flavors.flavor(flavor)["galera"]["backup"]
        assert row["incremental_keep_open"] == keep_open
        prepares = [step for step in backup_chain.apply_steps(pieces, "/s", [row["tool"], "--prepare"],
                                                              row["incremental_keep_open"]) if step[0] == tool]
        assert prepares == [[tool, "--prepare"] + keep_open + ["--target-dir=/s/data", "--incremental-dir=/s/incremental"],
                            [tool, "--prepare", "--target-dir=/s/data", "--incremental-dir=/s/incremental"]]


def test_each_galera_flavor_names_its_backup_tool_package_and_account():
    percona = mysql_flavors.flavor("percona")["galera"]["backup"]
    assert "percona-xtrabackup-84" in percona["packages"] and "BACKUP_ADMIN" in percona["privileges"]["*.*"]
    assert percona["privileges"]["performance_schema.log_status"] == "SELECT"
    mariadb = mysql_flavors.flavor("mariadb")["galera"]["backup"]
    assert "mariadb-backup" in mariadb["packages"] and "BINLOG MONITOR" in mariadb["privileges"]["*.*"]


def test_a_scheduled_turn_copies_a_member_only_while_it_is_synced_in_the_whole_cluster():
    synced = {"local_state_comment": "Synced", "cluster_status": "Primary", "ready": "ON", "cluster_size": 3}
    assert galera_backup.scheduled_turn(synced, 3) == (True, "Synced in a Primary component of 3")
    take, why = galera_backup.scheduled_turn(dict(synced, cluster_size=2), 3)
    assert not take and "wsrep_cluster_size is 2, wanted 3" in why and "only while the cluster is whole" in why
    take, why = galera_backup.scheduled_turn(dict(synced, local_state_comment="Donor/Desynced"), 3)
    assert not take and "Donor/Desynced" in why
    assert not galera_backup.scheduled_turn(None, 3)[0]
