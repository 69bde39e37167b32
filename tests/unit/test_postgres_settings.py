"""Unit tests for checking settings against pg_settings rows, and for the replication verdicts."""
import pytest

from ansible_collections.dbops.clusters.plugins.module_utils import postgres_replication as pr
from ansible_collections.dbops.clusters.plugins.module_utils import postgres_settings as ps

# Rows as PostgreSQL 17 reports them in pg_settings.
ROWS = {
    "shared_buffers": {"setting": "16384", "unit": "8kB", "vartype": "integer", "min_val": "16",
                       "max_val": "1073741823", "enumvals": None, "context": "postmaster"},
    "work_mem": {"setting": "4096", "unit": "kB", "vartype": "integer", "min_val": "64", "max_val": "2147483647",
                 "enumvals": None, "context": "user"},
    "checkpoint_timeout": {"setting": "300", "unit": "s", "vartype": "integer", "min_val": "30", "max_val": "86400",
                           "enumvals": None, "context": "sighup"},
    "commit_delay": {"setting": "0", "unit": None, "vartype": "integer", "min_val": "0", "max_val": "100000",
                     "enumvals": None, "context": "superuser"},
    "random_page_cost": {"setting": "4", "unit": None, "vartype": "real", "min_val": "0",
                         "max_val": "1.79769e+308", "enumvals": None, "context": "user"},
    "fsync": {"setting": "on", "unit": None, "vartype": "bool", "min_val": None, "max_val": None, "enumvals": None,
              "context": "sighup"},
    "wal_compression": {"setting": "off", "unit": None, "vartype": "enum", "min_val": None, "max_val": None,
                        "enumvals": ["pglz", "lz4", "zstd", "on", "off"], "context": "superuser"},
    "archive_command": {"setting": "", "unit": None, "vartype": "string", "min_val": None, "max_val": None,
                        "enumvals": None, "context": "sighup"},
}


@pytest.mark.parametrize("name,value,expected", [
    ("shared_buffers", "128MB", 16384), ("shared_buffers", "1GB", 131072), ("work_mem", "4MB", 4096),
    ("work_mem", 8192, 8192), ("checkpoint_timeout", "15min", 900), ("checkpoint_timeout", "1h", 3600),
    ("random_page_cost", "1.1", 1.1), ("fsync", "true", "on"), ("wal_compression", "LZ4", "lz4"),
])
def test_normalize_to_the_servers_unit(name, value, expected):
    assert ps.normalize(name, value, ROWS[name]) == expected


@pytest.mark.parametrize("name,value,words", [
    ("commit_delay", 999999, "outside"), ("work_mem", "32kB", "outside"), ("work_mem", "4 parsecs", "unit"),
    ("checkpoint_timeout", "10s", "outside"), ("wal_compression", "brotli", "not one of"),
    ("fsync", "maybe", "boolean"), ("shared_bufers", "1GB", "not a setting"), ("work_mem", "1.5", "integer"),
])
def test_values_the_server_rejects_are_refused(name, value, words):
    with pytest.raises(ps.SettingError) as refused:
        ps.check(name, value, ROWS.get(name))
    assert refused.value.variable == name and words in str(refused.value)


def test_custom_extension_settings_pass():
    assert ps.check("pg_stat_statements.track", "all", None) == "all"


def test_plan_splits_online_and_restart_changes():
    errors, online, restart = ps.plan({"shared_buffers": "256MB", "work_mem": "4MB", "random_page_cost": "1.1",
                                       "commit_delay": -1}, ROWS)
    assert errors == {"commit_delay": pytest.approx(errors["commit_delay"])} and "commit_delay" in errors
    assert online == ["random_page_cost"] and restart == ["shared_buffers"]


def test_render_quotes_what_needs_quotes():
    text = ps.render({"archive_command": {"value": "cp %p /a/%f", "reason": "why"}, "work_mem": "4MB",
                      "listen_addresses": "localhost,10.0.0.1", "wal_level": "replica"})
    assert "archive_command = 'cp %p /a/%f'" in text and "# why" in text
    assert "work_mem = 4MB" in text and "wal_level = replica" in text
    assert "listen_addresses = 'localhost,10.0.0.1'" in text
    assert ps.quote_value("it's") == "'it''s'"


def test_replica_verdicts():
    assert pr.replica_verdict({"receiver": "streaming", "lag_bytes": 0}, 100) is None
    assert "not streaming" in pr.replica_verdict({"receiver": "startup", "lag_bytes": 0}, 100)
    assert "behind" in pr.replica_verdict({"receiver": "streaming", "lag_bytes": 101}, 100)
    assert "not running" in pr.replica_verdict({"receiver": None, "lag_bytes": None}, 100)


def test_primary_verdicts():
    rows = {"pg2": {"state": "streaming", "lag_bytes": 10}, "pg3": {"state": "catchup", "lag_bytes": 10}}
    assert pr.primary_verdict(rows, ["pg2"], 100) is None
    assert "pg3 is catchup" in pr.primary_verdict(rows, ["pg2", "pg3"], 100)
    assert "pg4 is not connected" in pr.primary_verdict(rows, ["pg4"], 100)
    assert "behind" in pr.primary_verdict(rows, ["pg2"], 5)


def test_parse_lsn():
    assert pr.parse_lsn("0/0") == 0
    assert pr.parse_lsn("16/B374D848") == (0x16 << 32) + 0xB374D848
    with pytest.raises(ValueError):
        pr.parse_lsn("B374D848")


def test_promotion_verdicts():
    replica = {"in_recovery": True, "received_lsn": "0/3000100", "replayed_lsn": "0/3000100"}
    assert pr.promotion_verdict(replica) is None
    assert pr.promotion_verdict(replica, "0/30000A0") is None
    # a switchover waits for WAL past the old primary's shutdown checkpoint, which starts at replayed_past
    assert "not yet past 0/3000100" in pr.promotion_verdict(replica, "0/3000100")
    behind = dict(replica, replayed_lsn="0/3000000")
    assert "256 bytes behind" in pr.promotion_verdict(behind)
    # after the primary died the receiver may have restarted: nothing received is known, replay decides
    assert pr.promotion_verdict(dict(replica, received_lsn=None)) is None
    assert pr.promotion_verdict({"in_recovery": False, "received_lsn": None, "replayed_lsn": "0/1"}, "0/5") is None
