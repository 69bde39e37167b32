"""Scheduled backups (backup_schedule.yml): the role's timers on the repository host, a scheduled run that backs
up, one that cannot write to the repository and fails its unit, and pg_backup_status.yml telling them apart."""
import json
import os

import pytest

UNITS = ("dbops-pgbackrest-main-full", "dbops-pgbackrest-main-diff")


@pytest.fixture(scope="module")
def record():
    with open(os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "backup_schedule.json"),
              encoding="utf-8") as handle:
        return json.load(handle)


@pytest.mark.parametrize("unit", UNITS)
def test_each_schedule_has_an_enabled_timer_with_a_next_start(lab_hosts, unit):
    bk1 = lab_hosts["bk1"]
    assert bk1.run("systemctl is-enabled %s.timer", unit).stdout.strip() == "enabled"
    assert bk1.run("systemctl is-active %s.timer", unit).stdout.strip() == "active"
    next_start = bk1.run("systemctl show -P NextElapseUSecRealtime %s.timer", unit).stdout.strip()
    assert next_start not in ("", "n/a"), next_start
    service = bk1.file("/etc/systemd/system/%s.service" % unit).content_string
    assert "User=postgres" in service and "--stanza=main" in service


def test_the_default_calendar_is_full_on_sunday_and_diff_the_other_days(lab_hosts):
    bk1 = lab_hosts["bk1"]
    assert "OnCalendar=Sun *-*-* 01:00:00" in bk1.file("/etc/systemd/system/%s.timer" % UNITS[0]).content_string
    assert "OnCalendar=Mon..Sat *-*-* 01:00:00" in bk1.file("/etc/systemd/system/%s.timer" % UNITS[1]).content_string


def test_a_scheduled_run_backs_up_and_the_status_passes(record):
    assert record["scheduled_ok"] == 0 and record["status_ok"] == 0, record


def test_a_run_that_cannot_write_the_repository_fails_its_unit_and_the_status_names_it(record):
    assert record["scheduled_failed"] != 0 and record["status_failed"] != 0, record
    assert "dbops-pgbackrest-main-diff.service: its last run failed" in record["status_failed_output"], record


def test_the_next_good_run_clears_the_status(record):
    assert record["scheduled_again"] == 0 and record["status_again"] == 0, record


def test_the_repository_holds_the_scheduled_differential_backups(lab_hosts):
    info = json.loads(lab_hosts["bk1"].run("runuser -u postgres -- pgbackrest --stanza=main --output=json info")
                      .stdout)
    kinds = [backup["type"] for backup in info[0]["backup"]]
    assert kinds.count("diff") >= 2 and "full" in kinds, kinds
