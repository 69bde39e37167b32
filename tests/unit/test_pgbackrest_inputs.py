"""The pgbackrest role refuses bad input before any change, naming the variable (its validate entry point, which
main.yml, backup.yml, restore.yml and postgres_tuned's plan run first). Hosts are never contacted."""
import pytest

from test_role_input_validation import run_play

HOSTS = ["bk1", "pg1", "pgr1"]
GOOD = {"pgbackrest_repository_host": "bk1", "pgbackrest_database_hosts": ["pg1"],
        "pgbackrest_restore_hosts": ["pgr1"], "pgbackrest_cipher_pass": "a-cipher-pass-of-enough-length"}


def test_good_input_passes(tmp_path):
    result = run_play(tmp_path, HOSTS, "dbops.clusters.pgbackrest", "validate.yml", GOOD)
    assert result.returncode == 0, result.stdout[-2000:]
    incremental = dict(GOOD, pgbackrest_schedules=[{"type": "incr", "on_calendar": "hourly"}])
    result = run_play(tmp_path, HOSTS, "dbops.clusters.pgbackrest", "validate.yml", incremental)
    assert result.returncode == 0, result.stdout[-2000:]


@pytest.mark.parametrize("change, names", [
    ({"pgbackrest_repository_path": "/var/lib/postgresql/17/main/backups"}, "pgbackrest_repository_path"),
    ({"pgbackrest_repository_path": "/var/lib"}, "pgbackrest_repository_path"),
    ({"pgbackrest_cipher_pass": None}, "pgbackrest_cipher_pass is required"),
    ({"pgbackrest_cipher_pass": "short"}, "pgbackrest_cipher_pass is required"),
    ({"pgbackrest_retention_full": 0}, "pgbackrest_retention_full"),
    ({"pgbackrest_repository_host": "bk9"}, "pgbackrest_repository_host"),
    ({"pgbackrest_restore_hosts": ["pg1"]}, "pgbackrest_restore_hosts"),
    ({"pgbackrest_stanza": "main;rm"}, "pgbackrest_stanza"),
    ({"pgbackrest_tls_port": 70000}, "pgbackrest_tls_port"),
    ({"pgbackrest_schedules": [{"type": "weekly", "on_calendar": "Sun"}]}, "pgbackrest_schedules"),
    ({"pgbackrest_schedules": [{"type": "full", "on_calendar": "Sun"}, {"type": "full", "on_calendar": "Mon"}]},
     "pgbackrest_schedules"),
    ({"pgbackrest_schedules": [{"type": "full", "on_calendar": "Sun\nExecStart=/bin/sh"}]}, "pgbackrest_schedules"),
    ({"pgbackrest_schedules": [{"type": "full", "on_calendar": "%H"}]}, "pgbackrest_schedules"),
    ({"pgbackrest_schedules": [{"type": "full"}]}, "pgbackrest_schedules"),
    ({"pgbackrest_schedules": [{"type": "full", "on_calendar": "Sun", "user": "root"}]}, "pgbackrest_schedules"),
    ({"pgbackrest_schedules": {"type": "full", "on_calendar": "Sun"}}, "pgbackrest_schedules"),
    ({"pgbackrest_max_backup_age_hours": 0}, "pgbackrest_max_backup_age_hours"),
    ({"pgbackrest_backup_standby": "always"}, "pgbackrest_backup_standby"),
])
def test_bad_input_is_refused_naming_the_variable(tmp_path, change, names):
    variables = dict(GOOD, **change)
    variables = dict((key, value) for key, value in variables.items() if value is not None)
    result = run_play(tmp_path, HOSTS, "dbops.clusters.pgbackrest", "validate.yml", variables)
    assert result.returncode != 0
    assert names in result.stdout, result.stdout[-2000:]
    assert "a-cipher-pass-of-enough-length" not in result.stdout
