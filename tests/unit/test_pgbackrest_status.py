"""The backup status verdict (module_utils/pgbackrest_status.py): from pgbackrest info and the scheduled units."""
from ansible_collections.dbops.clusters.plugins.module_utils.pgbackrest_status import summarize

NOW = 1_800_000_000
HOUR = 3600


def backup(label, kind, hours_ago, error=False):
    stop = NOW - int(hours_ago * HOUR)
    return {"label": label, "type": kind, "timestamp": {"start": stop - 30, "stop": stop}, "error": error}


def info(*backups, code=0, message="ok"):
    return [{"name": "main", "status": {"code": code, "message": message}, "backup": list(backups)}]


SERVICE_OK = {"Result": "success", "ActiveState": "inactive", "ExecMainExitTimestamp": "Mon 2026-11-30 01:00:09 UTC",
              "ExecMainStatus": "0"}
SERVICE_NEVER = {"Result": "success", "ActiveState": "inactive", "ExecMainExitTimestamp": "", "ExecMainStatus": "0"}
SERVICE_FAILED = {"Result": "exit-code", "ActiveState": "failed",
                  "ExecMainExitTimestamp": "Mon 2026-11-30 01:00:09 UTC", "ExecMainStatus": "50"}
TIMER_OK = {"UnitFileState": "enabled", "ActiveState": "active", "LastTriggerUSec": "n/a",
            "NextElapseUSecRealtime": "Sun 2026-12-06 01:00:00 UTC"}


def units(full_service=None, diff_service=None, diff_timer=None):
    return {"dbops-pgbackrest-main-full.service": full_service or SERVICE_OK,
            "dbops-pgbackrest-main-full.timer": TIMER_OK,
            "dbops-pgbackrest-main-diff.service": diff_service or SERVICE_OK,
            "dbops-pgbackrest-main-diff.timer": diff_timer or TIMER_OK}


def test_a_recent_backup_and_healthy_units_have_no_problem():
    status = summarize(info(backup("F1", "full", 50), backup("D1", "diff", 3)), NOW, units(), 26, "main")
    assert status["problems"] == []
    assert status["newest"]["label"] == "D1" and status["newest"]["age_hours"] == 3.0
    assert status["by_type"]["full"]["label"] == "F1" and "incr" not in status["by_type"]
    assert status["units"]["dbops-pgbackrest-main-full.timer"]["next_start"] == "Sun 2026-12-06 01:00:00 UTC"
    assert status["units"]["dbops-pgbackrest-main-full.timer"]["last_start"] == ""


def test_no_backup_at_all_is_a_problem_in_plain_words():
    status = summarize(info(code=2, message="no valid backups"), NOW, units(SERVICE_NEVER, SERVICE_NEVER), 26, "main")
    assert status["problems"] == ["no backup in stanza main"]


def test_a_backup_that_stopped_happening_is_named_with_its_age():
    status = summarize(info(backup("F1", "full", 80)), NOW, units(), 26, "main")
    assert status["problems"] == ["the newest backup of stanza main (F1, full) is 80.0 h old, more than "
                                  "pgbackrest_max_backup_age_hours=26"]


def test_a_failed_scheduled_run_is_a_problem_even_with_a_recent_backup():
    status = summarize(info(backup("F1", "full", 2)), NOW, units(diff_service=SERVICE_FAILED), 26, "main")
    assert status["problems"] == ["dbops-pgbackrest-main-diff.service: its last run failed (exit-code, exit status "
                                  "50; journalctl -u dbops-pgbackrest-main-diff.service)"]


def test_a_unit_that_never_ran_is_no_failure_but_a_stopped_timer_is():
    stopped = dict(TIMER_OK, ActiveState="inactive")
    status = summarize(info(backup("F1", "full", 2)), NOW, units(SERVICE_NEVER, SERVICE_NEVER, stopped), 26, "main")
    assert status["problems"] == ["dbops-pgbackrest-main-diff.timer is not enabled and active: no backup will start "
                                  "from it"]


def test_a_missing_stanza_an_unhealthy_stanza_and_checksum_errors_are_named():
    assert summarize([], NOW, {}, 26, "main")["problems"] == [
        "stanza main is not in the repository (run the pgbackrest role)"]
    status = summarize(info(backup("F1", "full", 1, error=True), code=1, message="missing stanza path"), NOW, {},
                       26, "main")
    assert status["problems"] == ["stanza main: missing stanza path (code 1)",
                                  "the newest backup F1 has page checksum errors (pgbackrest info --set=F1)"]


def test_the_newest_backup_is_the_last_to_stop_whatever_the_order_given():
    status = summarize(info(backup("D2", "diff", 1), backup("F1", "full", 30)), NOW, {}, 26, "main")
    assert status["newest"]["label"] == "D2"
