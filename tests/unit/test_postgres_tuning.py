"""Unit tests for the PostgreSQL tuning engine: memory, WAL/checkpoints, profiles, six rules and overrides."""
import pytest

from ansible_collections.dbops.clusters.plugins.module_utils import postgres_tuning as pt
from ansible_collections.dbops.clusters.plugins.module_utils.postgres_tuning import MIB, TuningInputError

ARCHIVE = "test ! -f /a/%f && cp %p /a/%f"
LAB = {"memory_mb": 1024, "cpus": 2, "max_connections": 50, "hot_data_mb": 200}
SEEDS = {"memory_mb": 262144, "cpus": 56, "disk_type": "ssd", "hot_data_mb": 120000, "wal_mb_per_hour": 200000,
         "rto_minutes": 30, "max_connections": 200}
VM16 = {"memory_mb": 16384, "cpus": 8, "disk_type": "ssd"}


def run(base, overrides=None, unsafe=None, **changes):
    facts = dict(base)
    facts.update(changes)
    return pt.recommend(facts, overrides, unsafe, ARCHIVE)


def mb(result, name):
    return pt.parse_size(result["settings"][name]["value"], name, "kB") // MIB


def work_mem_kb(result):
    return pt.parse_size(result["settings"]["work_mem"]["value"], "work_mem", "kB") // 1024


# ---- memory


def test_hot_data_that_fits_gets_three_quarters_of_ram_as_in_the_seeds():
    result = run(SEEDS)
    assert mb(result, "shared_buffers") == 262144 * 3 // 4
    assert "fits in memory" in result["settings"]["shared_buffers"]["reason"]
    assert result["inputs"]["hot_data_fits"] is True


def test_hot_data_larger_than_memory_gets_a_quarter():
    result = run(SEEDS, hot_data_mb=400000)
    assert mb(result, "shared_buffers") == 262144 // 4
    assert "does not fit" in result["settings"]["shared_buffers"]["reason"]


def test_unknown_hot_data_is_a_quarter_with_a_warning():
    result = run(VM16)
    assert mb(result, "shared_buffers") == 4096
    assert any("hot_data_mb" in w for w in result["warnings"])


def test_small_host_caps_shared_buffers_so_connections_keep_memory():
    result = run(LAB, max_connections=100)
    shared = mb(result, "shared_buffers")
    assert shared < 768 and "capped" in result["settings"]["shared_buffers"]["reason"]


@pytest.mark.parametrize("base", [LAB, VM16, SEEDS])
@pytest.mark.parametrize("profile", pt.PROFILES)
def test_work_mem_cannot_overcommit_memory(base, profile):
    result = run(base, profile=profile)
    settings = result["settings"]
    connections = int(settings["max_connections"]["value"])
    parallel = int(settings["max_parallel_workers_per_gather"]["value"])
    ops = pt.PROFILE_OPS_PER_QUERY[profile] * (1 + parallel)
    maintenance = mb(result, "maintenance_work_mem") + mb(result, "autovacuum_work_mem") * int(
        settings["autovacuum_max_workers"]["value"])
    worst = mb(result, "shared_buffers") + maintenance + connections * ops * work_mem_kb(result) / 1024.0
    assert worst <= base["memory_mb"]


def test_too_many_connections_for_the_memory_is_refused_naming_max_connections():
    with pytest.raises(TuningInputError) as refused:
        run(LAB, max_connections=400)
    assert refused.value.variable == "max_connections"


def test_effective_cache_size_at_least_shared_buffers():
    for base in (LAB, VM16, SEEDS):
        result = run(base)
        assert mb(result, "effective_cache_size") >= mb(result, "shared_buffers")


# ---- WAL and checkpoints


def test_seeds_write_rate_gives_checkpoints_the_seeds_saw_within_the_rto():
    # seeds: about 196 GB/h of WAL with checkpoint_timeout=1h, and max_wal_size forced 3-4 checkpoints an hour
    result = run(SEEDS, rto_minutes=60)
    minutes = pt.parse_time_ms(result["settings"]["checkpoint_timeout"]["value"], "t") // 60000
    assert 15 <= minutes <= 30
    assert mb(result, "max_wal_size") <= result["inputs"]["recovery_cap_mb"]


def test_modest_write_rate_checkpoints_hourly():
    result = run(VM16, wal_mb_per_hour=4096, rto_minutes=5)
    assert result["settings"]["checkpoint_timeout"]["value"] == "1h"
    assert mb(result, "max_wal_size") >= 4096


def test_tight_rto_shortens_checkpoints():
    long_rto = run(SEEDS, rto_minutes=60)["settings"]["checkpoint_timeout"]["value"]
    short_rto = run(SEEDS, rto_minutes=15)["settings"]["checkpoint_timeout"]["value"]
    assert pt.parse_time_ms(short_rto, "t") < pt.parse_time_ms(long_rto, "t")


def test_impossible_rto_is_refused_naming_rto_minutes():
    with pytest.raises(TuningInputError) as refused:
        run(SEEDS, rto_minutes=1)
    assert refused.value.variable == "rto_minutes"


def test_unknown_write_rate_warns_and_stays_within_the_rto():
    result = run(VM16, rto_minutes=1)
    assert mb(result, "max_wal_size") <= max(1024, result["inputs"]["recovery_cap_mb"])
    assert any("wal_mb_per_hour" in w for w in result["warnings"])


def test_wal_compression_lz4_from_15():
    assert run(VM16)["settings"]["wal_compression"]["value"] == "lz4"
    assert run(VM16, version=14)["settings"]["wal_compression"]["value"] == "on"


# ---- disks, CPUs, profiles


@pytest.mark.parametrize("disk,cost", [("hdd", "4"), ("ssd", "1.1"), ("nvme", "1.1")])
def test_random_page_cost_by_disk(disk, cost):
    assert run(VM16, disk_type=disk)["settings"]["random_page_cost"]["value"] == cost


def test_unknown_disk_assumes_ssd_and_says_so():
    reason = run(VM16, disk_type="unknown")["settings"]["random_page_cost"]["reason"]
    assert "assumed SSD" in reason


def test_parallel_workers_follow_cpus_and_profile():
    oltp = run(SEEDS, profile="oltp")["settings"]
    olap = run(SEEDS, profile="olap")["settings"]
    assert oltp["max_parallel_workers"]["value"] == "56"
    assert int(oltp["max_parallel_workers_per_gather"]["value"]) <= 2
    assert olap["max_parallel_workers_per_gather"]["value"] == "28"
    assert int(oltp["max_worker_processes"]["value"]) >= 56


def test_huge_pages_on_only_when_reserved():
    assert run(SEEDS)["settings"]["huge_pages"]["value"] == "try"
    assert run(SEEDS, huge_pages_total=110000)["settings"]["huge_pages"]["value"] == "on"
    assert run(LAB)["settings"]["huge_pages"]["value"] == "try"


# ---- six rules and overrides


def test_safe_defaults_keep_every_rule():
    settings = run(VM16)["settings"]
    for name, wanted in (("fsync", "on"), ("full_page_writes", "on"), ("synchronous_commit", "on"),
                         ("autovacuum", "on"), ("wal_level", "replica"), ("archive_mode", "on")):
        assert settings[name]["value"] == wanted
    assert settings["archive_command"]["value"] == ARCHIVE


@pytest.mark.parametrize("name,value,rule", [
    ("fsync", "off", "acid"), ("synchronous_commit", "off", "acid"), ("full_page_writes", False, "crash_recovery"),
    ("wal_level", "minimal", "replica_wal"), ("archive_mode", "off", "pitr"), ("archive_command", "", "pitr"),
    ("autovacuum", "off", "autovacuum"), ("checkpoint_timeout", "1d", "checkpoints"),
    ("max_wal_size", "1TB", "checkpoints"),
])
def test_breaking_a_rule_needs_the_unsafe_flag(name, value, rule):
    with pytest.raises(TuningInputError) as refused:
        run(VM16, {name: value})
    assert refused.value.variable == name and "rule %s" % rule in str(refused.value)
    result = run(VM16, {name: value}, [rule])
    assert "UNSAFE: breaks rule %s" % rule in result["settings"][name]["reason"]
    assert result["broken_rules"] == {rule: [name]}
    assert any(rule in warning for warning in result["warnings"])


def test_override_wins_and_records_the_engine_value():
    derived = run(VM16)["settings"]["work_mem"]["value"]
    setting = run(VM16, {"work_mem": "64MB"})["settings"]["work_mem"]
    assert setting["value"] == "64MB" and setting["source"] == "override"
    assert "the engine would set %s" % derived in setting["reason"]


@pytest.mark.parametrize("name,value", [
    ("work_mem", "lots"), ("work_mem", "4TB"), ("effective_io_concurrency", 5000), ("wal_compression", "brotli"),
    ("checkpoint_completion_target", 2), ("shared_buffers", "1XB"), ("Bad-Name", 1), ("work_mem", None),
])
def test_values_postgres_would_reject_are_refused(name, value):
    with pytest.raises(TuningInputError) as refused:
        run(VM16, {name: value})
    assert refused.value.variable == name


def test_bare_numbers_use_postgres_units():
    assert pt.check_known("shared_buffers", "16384") == "128MB"     # 8kB blocks
    assert pt.check_known("work_mem", "4096") == "4MB"              # kB
    assert pt.check_known("max_wal_size", "2048") == "2GB"          # MB


def test_unknown_rule_name_refused():
    with pytest.raises(TuningInputError) as refused:
        run(VM16, unsafe=["speed"])
    assert refused.value.variable == "unsafe_rules"


@pytest.mark.parametrize("name,value", [("memory_mb", 100), ("cpus", 0), ("profile", "web"), ("disk_type", "tape"),
                                        ("version", 9)])
def test_bad_facts_name_the_input(name, value):
    with pytest.raises(TuningInputError) as refused:
        run(VM16, **{name: value})
    assert refused.value.variable == name


def test_rendered_file_has_a_reason_above_every_setting():
    text = pt.render_conf(run(LAB), "header")
    lines = text.splitlines()
    for number, line in enumerate(lines):
        if line and not line.startswith("#"):
            assert lines[number - 1].startswith("# ")
    assert "archive_command = 'test ! -f /a/%f && cp %p /a/%f'" in lines


def test_overridden_max_connections_is_what_work_mem_is_bounded_by():
    planned = run(VM16, max_connections=100)
    overridden = run(VM16, {"max_connections": 400}, max_connections=100)
    assert work_mem_kb(overridden) < work_mem_kb(planned)
    assert overridden["settings"]["max_connections"]["value"] == "400"


def test_archive_timeout_bounds_what_a_restore_from_the_archive_lacks():
    setting = run(LAB)["settings"]["archive_timeout"]
    assert setting["value"] == "1min" and "lacks at most the last minute" in setting["reason"]
    # an operator may trade the bound for fewer segments: not one of the six rules
    assert run(LAB, {"archive_timeout": "0"})["settings"]["archive_timeout"]["value"] == "0"
    with pytest.raises(TuningInputError) as refused:
        run(LAB, {"archive_timeout": "-5s"})
    assert "archive_timeout" in str(refused.value)
