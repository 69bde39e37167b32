"""Unit tests for the MySQL/InnoDB tuning engine: every rule, its edges, overrides, validation and rendering."""
import copy
import json

import pytest

from ansible_collections.dbops.clusters.plugins.module_utils import mysql_tuning as mt
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_tuning import GIB, KIB, MIB, TuningInputError

LAB = {"memory_mb": 1024, "cpus": 2, "flavor": "mysql", "version": "9.7.4"}
VM16 = {"memory_mb": 16384, "cpus": 8, "flavor": "percona", "version": "8.4.3", "disk_type": "ssd"}
BIG = {"memory_mb": 262144, "cpus": 56, "flavor": "percona", "version": "8.4.3", "disk_type": "ssd"}

# Every name below was accepted by `mysqld --validate-config` (MySQL 9.7.4) or `mariadbd --help --verbose`
# (MariaDB 11.8.6) with the engine's rendered my.cnf, and the values were read back from a running server.
VERIFIED_MYSQL97 = {
    "innodb_buffer_pool_size", "innodb_buffer_pool_instances", "innodb_redo_log_capacity",
    "innodb_flush_log_at_trx_commit", "sync_binlog", "innodb_flush_method", "innodb_io_capacity",
    "innodb_io_capacity_max", "innodb_flush_neighbors", "innodb_thread_concurrency", "innodb_read_io_threads",
    "innodb_write_io_threads", "innodb_purge_threads", "innodb_page_cleaners", "max_connections",
    "thread_cache_size", "table_open_cache", "table_definition_cache", "table_open_cache_instances",
    "max_allowed_packet", "sort_buffer_size", "lock_wait_timeout", "group_concat_max_len",
    "key_buffer_size", "innodb_max_undo_log_size", "performance_schema", "temptable_max_ram",
}
VERIFIED_MARIADB118 = (VERIFIED_MYSQL97 - {
    "innodb_buffer_pool_instances", "innodb_redo_log_capacity", "innodb_flush_method", "innodb_thread_concurrency",
    "innodb_page_cleaners", "temptable_max_ram"}) | {"innodb_log_file_size", "binlog_format"}


def facts(base, **changes):
    result = dict(base)
    result.update(changes)
    return result


def settings(base, overrides=None, **changes):
    return mt.recommend(facts(base, **changes), overrides)["settings"]


def recommend_result(base, overrides=None, **changes):
    return mt.recommend(facts(base, **changes), overrides)


def value(base, name, **changes):
    return settings(base, **changes)[name]["value"]


def size_of(base, name, **changes):
    return mt.parse_size(value(base, name, **changes))


# --------------------------------------------------------------------------------------------------------------
# parse_size / format_size / TuningInputError


@pytest.mark.parametrize("text, expected", [
    ("512M", 512 * MIB), ("2G", 2 * GIB), ("1048576", MIB), ("1.5G", 1536 * MIB), (1048576, MIB),
    ("64k", 64 * KIB), (" 1G ", GIB), ("2GB", 2 * GIB), ("3GiB", 3 * GIB), ("0", 0), ("0.5K", 512),
    (2.0, 2), ("256m", 256 * MIB),
])
def test_parse_size(text, expected):
    assert mt.parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "abc", "12X", "1.5.2G", "-1G", "1e3", "0.3K", "G", "1 0M", True, None, [1], -5,
                                  1.5, float("nan")])
def test_parse_size_rejects_malformed(text):
    with pytest.raises(TuningInputError) as err:
        mt.parse_size(text, "innodb_buffer_pool_size")
    assert err.value.variable == "innodb_buffer_pool_size"
    assert "innodb_buffer_pool_size" in str(err.value)


@pytest.mark.parametrize("size, text", [
    (0, "0"), (1000, "1000"), (KIB, "1K"), (3 * KIB, "3K"), (512 * MIB, "512M"), (2 * GIB, "2G"),
    (1536 * MIB, "1536M"), (1025, "1025"), (1024 * GIB, "1024G"),
])
def test_format_size_and_round_trip(size, text):
    assert mt.format_size(size) == text
    assert mt.parse_size(mt.format_size(size)) == size


def test_format_size_rejects_negative():
    with pytest.raises(ValueError):
        mt.format_size(-1)


def test_tuning_input_error_is_a_value_error_naming_its_variable():
    err = TuningInputError("rto_minutes", "too short")
    assert isinstance(err, ValueError)
    assert err.variable == "rto_minutes"
    assert str(err) == "rto_minutes: too short"
    assert str(TuningInputError("cpus", "cpus must be positive")) == "cpus must be positive"


# --------------------------------------------------------------------------------------------------------------
# Input validation and defaults


@pytest.mark.parametrize("name, bad", [
    ("memory_mb", None), ("memory_mb", 0), ("memory_mb", -1024), ("memory_mb", "lots"), ("memory_mb", True),
    ("memory_mb", 256), ("memory_mb", 1024.5), ("cpus", 0), ("cpus", None), ("cpus", "two"), ("cpus", False),
    ("flavor", "postgres"), ("flavor", 5), ("workload", "olap"), ("durability", "fast"), ("disk_type", "tape"),
    ("disk_type", 3), ("version", "abc"), ("version", "5.6.51"), ("dedicated", "yes"), ("redo_mb_per_hour", -5),
    ("redo_mb_per_hour", "fast"), ("redo_mb_per_hour", True), ("rto_minutes", 0), ("rto_minutes", -15),
])
def test_bad_facts_raise_naming_the_fact(name, bad):
    with pytest.raises(TuningInputError) as err:
        mt.recommend(facts(LAB, **{name: bad}))
    assert err.value.variable == name
    assert name in str(err.value)


def test_old_mariadb_is_refused_naming_version():
    with pytest.raises(TuningInputError) as err:
        mt.recommend(facts(LAB, flavor="mariadb", version="10.5.20"))
    assert err.value.variable == "version"


def test_facts_must_be_a_dict():
    with pytest.raises(TuningInputError) as err:
        mt.recommend([1024, 2])
    assert err.value.variable == "facts"


def test_defaults_are_filled_in_and_reported():
    inputs = mt.recommend({"memory_mb": "1024", "cpus": 2})["inputs"]
    assert inputs == {
        "memory_mb": 1024, "cpus": 2, "disk_type": None, "disk_type_assumed": "ssd", "redo_mb_per_hour": None,
        "rto_minutes": 15, "max_redo_mb": 3072, "workload": "oltp", "dedicated": True, "flavor": "percona",
        "family": "mysql", "version": "8.4", "durability": "durable",
    }


def test_facts_and_overrides_are_not_mutated():
    given, overrides = facts(LAB, disk_type="SSD"), {"max-connections": 100}
    before = (copy.deepcopy(given), copy.deepcopy(overrides))
    mt.recommend(given, overrides)
    assert (given, overrides) == before


def test_every_setting_has_the_documented_shape():
    for base in (LAB, facts(LAB, flavor="mariadb", version="11.8.2"), BIG, facts(LAB, version="8.0.20")):
        for name, setting in settings(base).items():
            assert set(setting) == {"value", "reason", "source", "dynamic", "section"}, name
            assert isinstance(setting["value"], str) and setting["value"], name
            assert setting["reason"] and "\n" not in setting["reason"], name
            assert setting["source"] == "derived"
            assert isinstance(setting["dynamic"], bool)
            assert setting["section"] == "mysqld"


# --------------------------------------------------------------------------------------------------------------
# Buffer pool


def test_lab_host_gets_half_its_memory():
    result = settings(LAB)
    assert result["innodb_buffer_pool_size"]["value"] == "512M"
    assert "50%" in result["innodb_buffer_pool_size"]["reason"]
    assert result["innodb_buffer_pool_instances"]["value"] == "1"
    assert "below 1 GiB" in result["innodb_buffer_pool_instances"]["reason"]


def test_four_gib_is_still_half_and_above_is_three_quarters():
    assert value(LAB, "innodb_buffer_pool_size", memory_mb=4096) == "2G"
    assert value(VM16, "innodb_buffer_pool_size") == "12G"
    assert "75%" in settings(VM16)["innodb_buffer_pool_size"]["reason"]
    assert value(VM16, "innodb_buffer_pool_instances") == "8"


def test_big_host_gets_about_three_quarters_in_whole_chunks():
    result = settings(BIG)
    pool = mt.parse_size(result["innodb_buffer_pool_size"]["value"])
    instances = int(result["innodb_buffer_pool_instances"]["value"])
    assert instances == 56
    assert pool % (128 * MIB * instances) == 0
    assert 0.70 * 256 * GIB < pool <= 0.75 * 256 * GIB
    assert "128M chunks x 56 instances" in result["innodb_buffer_pool_size"]["reason"]


def test_shared_host_gets_half_the_dedicated_pool():
    assert value(VM16, "innodb_buffer_pool_size", dedicated=False) == "6G"
    assert value(LAB, "innodb_buffer_pool_size", dedicated=False) == "256M"
    result = mt.recommend(facts(VM16, dedicated=False))
    assert "halved" in result["settings"]["innodb_buffer_pool_size"]["reason"]
    assert any("dedicated=false" in w for w in result["warnings"])


def test_chunk_rounding_is_down_to_chunk_times_instances():
    # 5000 MiB x 75% = 3750 MiB; 4 CPUs but only 3 whole GiB -> 3 instances -> 384 MiB units -> 9 x 384 MiB.
    result = settings(LAB, memory_mb=5000, cpus=4)
    assert result["innodb_buffer_pool_instances"]["value"] == "3"
    assert result["innodb_buffer_pool_size"]["value"] == "3456M"
    assert "rounded down" in result["innodb_buffer_pool_size"]["reason"]


def test_instances_follow_cpus_and_cap_at_64():
    assert value(VM16, "innodb_buffer_pool_instances", cpus=2) == "2"
    assert value(BIG, "innodb_buffer_pool_instances", memory_mb=1024 * 1024, cpus=128) == "64"


def test_mariadb_has_no_buffer_pool_instances():
    result = mt.recommend(facts(VM16, flavor="mariadb", version="11.8.2"))
    assert "innodb_buffer_pool_instances" not in result["settings"]
    assert "removed" in result["omitted"]["innodb_buffer_pool_instances"]
    assert result["settings"]["innodb_buffer_pool_size"]["value"] == "12G"


def test_buffer_pool_override_larger_than_memory_raises():
    with pytest.raises(TuningInputError) as err:
        mt.recommend(LAB, {"innodb_buffer_pool_size": "2G"})
    assert err.value.variable == "innodb_buffer_pool_size"
    assert "innodb_buffer_pool_size" in str(err.value)


def test_buffer_pool_override_below_minimum_raises():
    with pytest.raises(TuningInputError) as err:
        mt.recommend(LAB, {"innodb_buffer_pool_size": "1M"})
    assert err.value.variable == "innodb_buffer_pool_size"


def test_buffer_pool_override_drives_instances_redo_and_connections():
    result = mt.recommend(VM16, {"innodb_buffer_pool_size": "4G"})["settings"]
    assert result["innodb_buffer_pool_size"]["value"] == "4G"
    assert result["innodb_buffer_pool_size"]["source"] == "override"
    assert result["innodb_buffer_pool_instances"]["value"] == "4"
    assert result["innodb_redo_log_capacity"]["value"] == "512M"       # 4G / 8
    assert "4G buffer pool" in result["max_connections"]["reason"]


def test_buffer_pool_override_off_the_chunk_grid_warns():
    result = mt.recommend(VM16, {"innodb_buffer_pool_size": "4000M"})
    assert any("rounds it up" in w for w in result["warnings"])


# --------------------------------------------------------------------------------------------------------------
# Redo log


def test_redo_from_rate_holds_an_hour_of_writes():
    result = settings(VM16, redo_mb_per_hour=1024)
    assert result["innodb_redo_log_capacity"]["value"] == "1G"
    assert "1024 MB/hour x 1 h" in result["innodb_redo_log_capacity"]["reason"]
    assert "60 min" in result["innodb_redo_log_capacity"]["reason"]


def test_redo_capped_by_rto_states_the_cycle_time():
    result = settings(VM16, redo_mb_per_hour=6000)        # an hour = 6000M, RTO 15 min allows 3G
    assert result["innodb_redo_log_capacity"]["value"] == "3G"
    reason = result["innodb_redo_log_capacity"]["reason"]
    assert "capped at 3G" in reason and "a log cycle of 30.7 min" in reason and "RTO 15 min" in reason


def test_longer_rto_raises_the_cap():
    assert value(BIG, "innodb_redo_log_capacity", redo_mb_per_hour=12288, rto_minutes=60) == "12G"
    assert value(BIG, "innodb_redo_log_capacity", redo_mb_per_hour=12288, rto_minutes=40) == "8G"


def test_rto_exactly_met_by_fifteen_minutes_of_writes():
    result = settings(BIG, redo_mb_per_hour=12288)         # 15 min = 3G = the cap
    assert result["innodb_redo_log_capacity"]["value"] == "3G"
    assert "a log cycle of 15 min" in result["innodb_redo_log_capacity"]["reason"]


def test_impossible_rto_raises_naming_rto_minutes():
    with pytest.raises(TuningInputError) as err:
        mt.recommend(facts(BIG, redo_mb_per_hour=12289))
    assert err.value.variable == "rto_minutes"
    assert "rto_minutes" in str(err.value) and "cannot be met" in str(err.value)


def test_tiny_rto_raises_naming_rto_minutes():
    with pytest.raises(TuningInputError) as err:
        mt.recommend(facts(LAB, rto_minutes=0.01))
    assert err.value.variable == "rto_minutes"


def test_small_rate_gets_the_floor():
    result = settings(LAB, redo_mb_per_hour=100)
    assert result["innodb_redo_log_capacity"]["value"] == "256M"
    assert "floor" in result["innodb_redo_log_capacity"]["reason"]


def test_cap_below_floor_wins():
    assert value(LAB, "innodb_redo_log_capacity", redo_mb_per_hour=100, rto_minutes=1) == "204M"


def test_redo_ceiling_is_128g():
    result = settings(BIG, redo_mb_per_hour=200000, rto_minutes=1000)
    assert result["innodb_redo_log_capacity"]["value"] == "128G"
    assert "limited to 128G" in result["innodb_redo_log_capacity"]["reason"]


def test_no_rate_uses_a_fraction_of_the_pool_and_asks_for_the_rate():
    result = mt.recommend(VM16)
    assert result["settings"]["innodb_redo_log_capacity"]["value"] == "1536M"     # 12G / 8
    assert "declare redo_mb_per_hour" in result["settings"]["innodb_redo_log_capacity"]["reason"]
    assert any("declare redo_mb_per_hour" in w for w in result["warnings"])
    assert value(VM16, "innodb_redo_log_capacity", workload="write_heavy") == "3G"  # 12G / 4, RTO cap 3G
    assert value(VM16, "innodb_redo_log_capacity", workload="read_mostly") == "768M"
    assert value(LAB, "innodb_redo_log_capacity") == "256M"                        # 512M / 8 -> floor


def test_no_rate_default_is_capped_by_rto_and_by_8g():
    assert value(BIG, "innodb_redo_log_capacity") == "3G"
    assert "capped" in settings(BIG)["innodb_redo_log_capacity"]["reason"]
    assert value(BIG, "innodb_redo_log_capacity", rto_minutes=120) == "8G"


@pytest.mark.parametrize("flavor, version, present, absent", [
    ("mysql", "9.7.4", {"innodb_redo_log_capacity"}, {"innodb_log_file_size", "innodb_log_files_in_group"}),
    ("mysql", "8.0.30", {"innodb_redo_log_capacity"}, {"innodb_log_file_size", "innodb_log_files_in_group"}),
    ("percona", "8.4.3", {"innodb_redo_log_capacity"}, {"innodb_log_file_size", "innodb_log_files_in_group"}),
    ("mysql", "8.0.29", {"innodb_log_file_size", "innodb_log_files_in_group"}, {"innodb_redo_log_capacity"}),
    ("percona", "5.7.44", {"innodb_log_file_size", "innodb_log_files_in_group"}, {"innodb_redo_log_capacity"}),
    ("mariadb", "11.8.2", {"innodb_log_file_size"}, {"innodb_redo_log_capacity", "innodb_log_files_in_group"}),
    ("mariadb", "10.6.21", {"innodb_log_file_size"}, {"innodb_redo_log_capacity", "innodb_log_files_in_group"}),
])
def test_redo_variable_by_flavor_and_version(flavor, version, present, absent):
    names = set(settings(VM16, flavor=flavor, version=version, redo_mb_per_hour=2048))
    assert present <= names
    assert not absent & names


def test_old_mysql_splits_the_redo_over_two_files():
    result = settings(VM16, flavor="mysql", version="8.0.29", redo_mb_per_hour=2048)
    assert result["innodb_log_file_size"]["value"] == "1G"
    assert result["innodb_log_files_in_group"]["value"] == "2"
    assert "total redo 2G" in result["innodb_log_file_size"]["reason"]


def test_mariadb_redo_is_one_file_of_the_whole_size():
    assert value(VM16, "innodb_log_file_size", flavor="mariadb", version="11.8.2", redo_mb_per_hour=2048) == "2G"


def test_redo_override_beyond_the_rto_cap_warns():
    result = mt.recommend(VM16, {"innodb_redo_log_capacity": "16G"})
    assert result["settings"]["innodb_redo_log_capacity"]["value"] == "16G"
    assert any("exceeds the RTO" in w for w in result["warnings"])


# --------------------------------------------------------------------------------------------------------------
# I/O


@pytest.mark.parametrize("disk, capacity, capacity_max, neighbors", [
    ("hdd", "200", "400", "1"), ("ssd", "2000", "4000", "0"), ("nvme", "10000", "20000", "0"),
    (None, "2000", "4000", "0"), ("unknown", "2000", "4000", "0"), ("NVMe", "10000", "20000", "0"),
])
def test_io_capacity_by_disk_type(disk, capacity, capacity_max, neighbors):
    result = settings(VM16, disk_type=disk)
    assert result["innodb_io_capacity"]["value"] == capacity
    assert result["innodb_io_capacity_max"]["value"] == capacity_max
    assert result["innodb_flush_neighbors"]["value"] == neighbors


def test_unknown_disk_is_assumed_ssd_and_said_so():
    result = mt.recommend(facts(VM16, disk_type=None))
    assert "assumed ssd" in result["settings"]["innodb_io_capacity"]["reason"]
    assert any("disk_type unknown" in w for w in result["warnings"])
    assert result["inputs"]["disk_type"] is None and result["inputs"]["disk_type_assumed"] == "ssd"


def test_io_capacity_override_raises_the_derived_maximum():
    result = mt.recommend(VM16, {"innodb_io_capacity": 8000})["settings"]
    assert result["innodb_io_capacity"]["source"] == "override"
    assert result["innodb_io_capacity_max"]["value"] == "16000"
    assert "twice innodb_io_capacity=8000" in result["innodb_io_capacity_max"]["reason"]


def test_io_capacity_max_below_capacity_raises():
    with pytest.raises(TuningInputError) as err:
        mt.recommend(VM16, {"innodb_io_capacity": 8000, "innodb_io_capacity_max": 4000})
    assert err.value.variable == "innodb_io_capacity_max"


def test_flush_method_is_o_direct_on_mysql_and_unset_on_mariadb():
    result = settings(VM16)
    assert result["innodb_flush_method"]["value"] == "O_DIRECT"
    assert "O_DIRECT_NO_FSYNC" in result["innodb_flush_method"]["reason"]
    maria = mt.recommend(facts(VM16, flavor="mariadb", version="11.8.2"))
    assert "innodb_flush_method" not in maria["settings"]
    assert any("innodb_flush_method" in w and "deprecated" in w for w in maria["warnings"])


# --------------------------------------------------------------------------------------------------------------
# Threads


def test_thread_settings_on_small_and_big_hosts():
    small, big = settings(LAB), settings(BIG)
    assert small["innodb_thread_concurrency"]["value"] == "0"
    assert (small["innodb_read_io_threads"]["value"], small["innodb_write_io_threads"]["value"]) == ("4", "4")
    assert (big["innodb_read_io_threads"]["value"], big["innodb_write_io_threads"]["value"]) == ("16", "14")
    assert small["innodb_purge_threads"]["value"] == "1" and big["innodb_purge_threads"]["value"] == "4"
    assert small["innodb_page_cleaners"]["value"] == "1" and big["innodb_page_cleaners"]["value"] == "16"
    assert settings(VM16)["innodb_page_cleaners"]["value"] == "8"


def test_workload_changes_write_threads_and_purge():
    heavy, mostly = settings(BIG, workload="write_heavy"), settings(BIG, workload="read_mostly")
    assert heavy["innodb_write_io_threads"]["value"] == heavy["innodb_read_io_threads"]["value"] == "16"
    assert heavy["innodb_purge_threads"]["value"] == "8"
    assert mostly["innodb_purge_threads"]["value"] == "2"
    assert settings(LAB, workload="read_mostly")["innodb_purge_threads"]["value"] == "1"


def test_mariadb_omits_removed_thread_variables():
    result = mt.recommend(facts(BIG, flavor="mariadb", version="11.8.2"))
    for name in ("innodb_thread_concurrency", "innodb_page_cleaners"):
        assert name not in result["settings"]
        assert "10.6" in result["omitted"][name]
    assert result["settings"]["innodb_purge_threads"]["value"] == "4"


# --------------------------------------------------------------------------------------------------------------
# Connections and caches


def test_lab_connections_come_from_the_memory_budget():
    result = settings(LAB)
    assert result["max_connections"]["value"] == "64"      # (1024 - 512 - 256) MiB / 4 MiB
    reason = result["max_connections"]["reason"]
    assert "4M per connection" in reason and "512M buffer pool" in reason and "256M for the OS" in reason


def test_big_host_connections_come_from_the_workload():
    assert value(BIG, "max_connections") == "2800"              # 56 x 50
    assert value(BIG, "max_connections", workload="read_mostly") == "5600"
    assert value(BIG, "max_connections", workload="write_heavy") == "1400"
    assert value(VM16, "max_connections") == "400"


def test_shared_host_budget_is_half_the_ram():
    result = settings(VM16, dedicated=False)
    assert result["max_connections"]["value"] == "400"          # (8G - 6G) / 4M = 512 > 400
    assert "shared host" in result["max_connections"]["reason"]


def test_tight_memory_holds_connections_at_20_and_warns():
    result = mt.recommend(facts(LAB, memory_mb=512))
    assert result["settings"]["max_connections"]["value"] == "20"
    assert any("memory is tight" in w for w in result["warnings"])


def test_connection_override_beyond_budget_warns_and_feeds_the_caches():
    result = mt.recommend(LAB, {"max_connections": 1000})
    assert any("max_connections=1000" in w for w in result["warnings"])
    assert result["settings"]["table_open_cache"]["value"] == "4000"
    assert result["settings"]["thread_cache_size"]["value"] == "100"


def test_table_caches_and_open_files_are_consistent():
    for base in (LAB, VM16, BIG, facts(BIG, workload="read_mostly")):
        result = settings(base)
        connections = int(result["max_connections"]["value"])
        tables = int(result["table_open_cache"]["value"])
        assert 2000 <= tables <= 8000
        assert int(result["table_definition_cache"]["value"]) == min(2000, 400 + tables // 2)
        assert result["table_open_cache_instances"]["value"] == str(min(16, base["cpus"]))
        assert "open_files_limit" not in result
        need = max(10 + connections + 2 * tables, 5 * connections)
        assert str(need) in recommend_result(base)["omitted"]["open_files_limit"]


def test_mariadb_open_files_count_every_cache_instance():
    result = settings(VM16, flavor="mariadb", version="11.8.2")
    assert result["table_open_cache_instances"]["value"] == "8"
    assert settings(BIG, flavor="mariadb", version="11.8.2")["table_open_cache_instances"]["value"] == "8"
    need = 2 * int(result["table_open_cache"]["value"]) * 8 + int(result["max_connections"]["value"]) + 33
    report = recommend_result(VM16, flavor="mariadb", version="11.8.2")
    assert "open_files_limit" not in result and str(need) in report["omitted"]["open_files_limit"]
    assert need <= 32768 and not any("LimitNOFILE" in warning for warning in report["warnings"])
    big = recommend_result(BIG, flavor="mariadb", version="11.8.2")
    assert any("LimitNOFILE" in warning for warning in big["warnings"])


# --------------------------------------------------------------------------------------------------------------
# Durability


def test_durable_profile():
    result = settings(LAB)
    assert (result["innodb_flush_log_at_trx_commit"]["value"], result["sync_binlog"]["value"]) == ("1", "1")
    assert "no acknowledged transaction" in result["innodb_flush_log_at_trx_commit"]["reason"]
    assert "30%" in result["sync_binlog"]["reason"]


def test_relaxed_profile_states_the_trade_off():
    result = settings(LAB, durability="relaxed")
    assert (result["innodb_flush_log_at_trx_commit"]["value"], result["sync_binlog"]["value"]) == ("2", "1000")
    assert "~1 s" in result["innodb_flush_log_at_trx_commit"]["reason"]
    assert "lag" in result["sync_binlog"]["reason"]


def test_ephemeral_profile_is_for_disposable_data():
    result = mt.recommend(facts(LAB, durability="ephemeral"))
    assert result["settings"]["innodb_flush_log_at_trx_commit"]["value"] == "0"
    assert result["settings"]["sync_binlog"]["value"] == "0"
    assert "disposable" in result["settings"]["innodb_flush_log_at_trx_commit"]["reason"]
    assert any("ephemeral" in w for w in result["warnings"])


# --------------------------------------------------------------------------------------------------------------
# Pinned defaults and flavor/version validity


def test_binlog_format_only_where_it_is_not_deprecated():
    assert value(LAB, "binlog_format", flavor="mariadb", version="11.8.2") == "ROW"
    assert value(LAB, "binlog_format", version="8.0.33") == "ROW"
    for version in ("8.0.34", "8.4.3", "9.7.4"):
        result = mt.recommend(facts(LAB, version=version))
        assert "binlog_format" not in result["settings"]
        assert "deprecated" in result["omitted"]["binlog_format"]


def test_pinned_defaults_on_both_flavors():
    for base in (LAB, facts(LAB, flavor="mariadb", version="11.8.2")):
        result = settings(base)
        assert result["max_allowed_packet"]["value"] == "64M"
        assert result["sort_buffer_size"]["value"] == "256K"
        assert result["lock_wait_timeout"]["value"] == "86400"
        assert result["group_concat_max_len"]["value"] == "1048576"
        assert result["key_buffer_size"]["value"] == "8M"
        assert result["innodb_max_undo_log_size"]["value"] == "1G"
        assert result["performance_schema"]["value"] == "ON"
        assert result["thread_cache_size"]["value"] == "16"


@pytest.mark.parametrize("memory_mb, expected", [
    (768, "48M"), (1024, "64M"), (2048, "128M"), (16384, "1G"), (65536, "1966M"), (262144, "4G")])
def test_temptable_ram_follows_the_declared_memory(memory_mb, expected):
    # The server's own default follows the machine's RAM (1G on this 24 GiB lab, container_aware OFF): at a
    # 2 GiB limit that 1G of TempTable beside the 1G pool got mysqld OOM-killed in sysbench's prewarm.
    result = settings(LAB, memory_mb=memory_mb)
    assert result["temptable_max_ram"]["value"] == expected
    assert result["temptable_max_ram"]["dynamic"] is True


def test_temptable_ram_leaves_the_small_host_room_beside_pool_and_connections():
    result = settings(LAB, memory_mb=2048)
    pool = mt.parse_size(result["innodb_buffer_pool_size"]["value"])
    temptable = mt.parse_size(result["temptable_max_ram"]["value"])
    assert pool + temptable <= 2048 * mt.MIB * 5 // 8


def test_temptable_ram_is_mysql_8_only_and_overridable():
    assert "temptable_max_ram" not in settings(LAB, flavor="mariadb", version="11.8.6")
    assert "temptable_max_ram" not in settings(VM16, flavor="mysql", version="5.7.44")
    assert value(VM16, "temptable_max_ram", flavor="mysql", version="8.0.36") == "1G"
    result = settings(LAB, {"temptable_max_ram": "256M"})
    assert result["temptable_max_ram"]["value"] == "256M"
    assert result["temptable_max_ram"]["source"] == "override"


def test_emitted_names_were_verified_against_real_servers():
    assert set(settings(LAB)) == VERIFIED_MYSQL97
    assert set(settings(BIG, flavor="mysql", version="9.7.4", durability="relaxed", redo_mb_per_hour=4096,
                        rto_minutes=60)) == VERIFIED_MYSQL97
    assert set(settings(LAB, flavor="mariadb", version="11.8.6")) == VERIFIED_MARIADB118
    assert set(settings(BIG, flavor="mariadb", version="11.8.6", disk_type="hdd")) == VERIFIED_MARIADB118


def test_percona_84_emits_the_mysql_97_set():
    assert set(settings(BIG)) == VERIFIED_MYSQL97


def test_old_mysql_emits_the_per_file_redo_and_binlog_format():
    names = set(settings(VM16, flavor="mysql", version="5.7.44"))
    assert names == (VERIFIED_MYSQL97 - {"innodb_redo_log_capacity", "temptable_max_ram"}) | {
        "innodb_log_file_size", "innodb_log_files_in_group", "binlog_format"}


# --------------------------------------------------------------------------------------------------------------
# Dynamic flags


@pytest.mark.parametrize("flavor, version, name, dynamic", [
    ("mysql", "9.7.4", "innodb_buffer_pool_size", True),
    ("mysql", "9.7.4", "innodb_buffer_pool_instances", False),
    ("mysql", "9.7.4", "innodb_redo_log_capacity", True),
    ("mysql", "9.7.4", "innodb_io_capacity", True),
    ("mysql", "9.7.4", "innodb_io_capacity_max", True),
    ("mysql", "9.7.4", "innodb_flush_log_at_trx_commit", True),
    ("mysql", "9.7.4", "sync_binlog", True),
    ("mysql", "9.7.4", "max_connections", True),
    ("mysql", "9.7.4", "table_open_cache", True),
    ("mysql", "9.7.4", "table_definition_cache", True),
    ("mysql", "9.7.4", "innodb_flush_method", False),
    ("mysql", "9.7.4", "table_open_cache_instances", False),
    ("mysql", "9.7.4", "innodb_read_io_threads", False),
    ("mysql", "9.7.4", "innodb_write_io_threads", False),
    ("mysql", "9.7.4", "innodb_purge_threads", False),
    ("mysql", "9.7.4", "performance_schema", False),
    ("mysql", "9.7.4", "innodb_page_cleaners", False),
    ("mysql", "8.0.29", "innodb_log_file_size", False),
    ("mysql", "8.0.29", "innodb_log_files_in_group", False),
    ("mariadb", "11.8.2", "innodb_log_file_size", True),
    ("mariadb", "10.9.0", "innodb_log_file_size", True),
    ("mariadb", "10.6.21", "innodb_log_file_size", False),
    ("mariadb", "11.8.2", "innodb_read_io_threads", True),
    ("mariadb", "11.8.2", "innodb_purge_threads", True),
    ("mariadb", "11.8.2", "table_open_cache_instances", False),
    ("mariadb", "11.8.2", "binlog_format", True),
])
def test_dynamic_flags(flavor, version, name, dynamic):
    result = settings(VM16, flavor=flavor, version=version, redo_mb_per_hour=1024)
    assert result[name]["dynamic"] is dynamic


# --------------------------------------------------------------------------------------------------------------
# Overrides


def test_override_wins_and_the_reason_keeps_the_derived_value():
    result = mt.recommend(LAB, {"max_connections": 100})["settings"]["max_connections"]
    assert result["value"] == "100"
    assert result["source"] == "override"
    assert result["dynamic"] is True
    assert result["reason"].startswith("override by user; derived value was 64 (")
    assert "4M per connection" in result["reason"]


def test_override_names_are_normalised_and_sizes_rewritten():
    result = mt.recommend(VM16, {"Innodb-Buffer-Pool-Size": "1.5G", "sort_buffer_size": 2097152})["settings"]
    assert result["innodb_buffer_pool_size"]["value"] == "1536M"
    assert result["sort_buffer_size"]["value"] == "2M"
    assert result["sort_buffer_size"]["reason"].startswith("override by user; derived value was 256K")


def test_boolean_and_enum_overrides():
    result = mt.recommend(facts(LAB, flavor="mariadb", version="11.8.2"),
                          {"performance_schema": False, "binlog_format": "mixed"})["settings"]
    assert result["performance_schema"]["value"] == "OFF"
    assert result["binlog_format"]["value"] == "MIXED"
    assert value(LAB, "performance_schema") == "ON"


def test_unknown_variables_pass_through_as_static_overrides():
    result = mt.recommend(LAB, {"innodb_log_buffer_size": "64M", "optimizer_switch": "index_condition_pushdown=off",
                                "skip_name_resolve": True})["settings"]
    assert result["innodb_log_buffer_size"] == {
        "value": "64M", "source": "override", "dynamic": False, "section": "mysqld",
        "reason": "override by user; no rule derives innodb_log_buffer_size for mysql 9.7.4, so it is passed through "
                  "as given"}
    assert result["optimizer_switch"]["value"] == "index_condition_pushdown=off"
    assert result["skip_name_resolve"]["value"] == "ON"
    assert list(result)[-3:] == ["innodb_log_buffer_size", "optimizer_switch", "skip_name_resolve"]


@pytest.mark.parametrize("name, bad", [
    ("innodb_buffer_pool_size", "lots"), ("innodb_redo_log_capacity", "1.2.3G"), ("max_allowed_packet", "64Q"),
    ("innodb_log_buffer_size", "big"), ("max_connections", "many"), ("max_connections", 0), ("max_connections", -5),
    ("innodb_io_capacity", 1.5), ("innodb_flush_log_at_trx_commit", 3), ("performance_schema", "maybe"),
    ("innodb_flush_method", "O_FAST"), ("binlog_format", "JSON"), ("optimizer_switch", "a\nb"),
    ("optimizer_switch", "  "), ("max_connections", None), ("max_connections", [1]), ("max_connections", True),
])
def test_bad_override_values_raise_naming_the_override(name, bad):
    with pytest.raises(TuningInputError) as err:
        mt.recommend(LAB, {name: bad})
    assert err.value.variable == name
    assert name in str(err.value)


@pytest.mark.parametrize("flavor, version, name", [
    ("mysql", "9.7.4", "innodb_log_file_size"), ("mysql", "9.7.4", "innodb_log_files_in_group"),
    ("percona", "8.4.3", "query_cache_size"), ("percona", "8.4.3", "innodb_file_format"),
    ("mysql", "8.0.29", "innodb_redo_log_capacity"), ("mariadb", "11.8.2", "innodb_buffer_pool_instances"),
    ("mariadb", "11.8.2", "innodb_page_cleaners"), ("mariadb", "11.8.2", "innodb_thread_concurrency"),
    ("mariadb", "11.8.2", "innodb_redo_log_capacity"), ("mariadb", "10.6.21", "innodb_log_files_in_group"),
    ("mysql", "9.7.4", "innodb_buffer_pool_size_max"),
])
def test_overrides_of_variables_the_server_does_not_know_raise(flavor, version, name):
    with pytest.raises(TuningInputError) as err:
        mt.recommend(facts(LAB, flavor=flavor, version=version), {name: "1"})
    assert err.value.variable == name
    assert "not valid for %s" % flavor in str(err.value)


def test_overrides_of_omitted_variables_pass_through():
    result = mt.recommend(facts(LAB, flavor="mariadb", version="11.8.2"), {"innodb_flush_method": "o_direct"})
    assert result["settings"]["innodb_flush_method"]["value"] == "O_DIRECT"
    assert result["settings"]["innodb_flush_method"]["source"] == "override"
    assert result["settings"]["innodb_flush_method"]["dynamic"] is False


def test_bad_override_names_and_containers_raise():
    with pytest.raises(TuningInputError) as err:
        mt.recommend(LAB, {"max-connections": 5, "max_connections": 6})
    assert err.value.variable == "max_connections"
    with pytest.raises(TuningInputError) as err:
        mt.recommend(LAB, {"max connections": 5})
    assert err.value.variable == "max connections"
    with pytest.raises(TuningInputError) as err:
        mt.recommend(LAB, {1: 5})
    assert err.value.variable == "1"
    with pytest.raises(TuningInputError) as err:
        mt.recommend(LAB, ["max_connections"])
    assert err.value.variable == "overrides"


def test_instances_override_sets_the_rounding_unit():
    result = mt.recommend(VM16, {"innodb_buffer_pool_instances": 5})["settings"]
    assert result["innodb_buffer_pool_instances"]["value"] == "5"
    assert mt.parse_size(result["innodb_buffer_pool_size"]["value"]) % (5 * 128 * MIB) == 0
    assert "x 5 instances" in result["innodb_buffer_pool_size"]["reason"]


# --------------------------------------------------------------------------------------------------------------
# Rendering


def test_render_mycnf_puts_the_reason_before_each_setting():
    result = mt.recommend(LAB, {"optimizer_switch": "a=on # comment"})
    text = mt.render_mycnf(result)
    lines = text.splitlines()
    assert lines[0].startswith("# Rendered by dbops.clusters mysql_tuning for mysql 9.7.4")
    assert "[mysqld]" in lines
    body = lines[lines.index("[mysqld]") + 1:]
    assert len(body) == 2 * len(result["settings"])
    for (name, setting), comment, line in zip(result["settings"].items(), body[0::2], body[1::2]):
        assert comment == "# " + setting["reason"]
        assert line.startswith(name + " = ")
    assert 'optimizer_switch = "a=on # comment"' in lines
    assert "innodb_buffer_pool_size = 512M" in lines
    assert text.endswith("\n")


def test_render_mycnf_lists_the_warnings_in_the_header():
    result = mt.recommend(LAB)
    header = mt.render_mycnf(result).split("[mysqld]", 1)[0]
    assert header.count("# warning: ") == len(result["warnings"]) == 2


# --------------------------------------------------------------------------------------------------------------
# The module


def _run_module(args, capsys):
    testing = pytest.importorskip("ansible.module_utils.testing")
    from ansible_collections.dbops.clusters.plugins.modules import mysql_tuning as module
    with testing.patch_module_args(args):
        with pytest.raises(SystemExit):
            module.main()
    return json.loads(capsys.readouterr().out)


def test_module_returns_settings_and_mycnf(capsys):
    result = _run_module({"memory_mb": 1024, "cpus": 2, "flavor": "mysql", "version": "9.7.4", "disk_type": "ssd",
                          "redo_mb_per_hour": 512, "_ansible_check_mode": True}, capsys)
    assert result["changed"] is False
    assert result["settings"]["innodb_buffer_pool_size"]["value"] == "512M"
    assert "innodb_redo_log_capacity = 512M" in result["mycnf"]
    assert result["omitted"]["binlog_format"]
    assert result["inputs"]["disk_type"] == "ssd"
    assert "warnings" not in result


def test_module_fails_naming_the_variable(capsys):
    result = _run_module({"memory_mb": 1024, "cpus": 2, "redo_mb_per_hour": 100000}, capsys)
    assert result["failed"] is True
    assert result["variable"] == "rto_minutes"
    assert "rto_minutes" in result["msg"]


@pytest.mark.parametrize("written, seconds, expected", [
    (0, 60, 0), (1, 60, 1), (12 * GIB, 3600, 12288), (100 * MIB, 60, 6000), (MIB, 3.6, 1000)])
def test_redo_rate_from_a_sample(written, seconds, expected):
    assert mt.redo_rate_mb_per_hour(written, seconds) == expected


def test_redo_rate_needs_a_duration():
    with pytest.raises(ValueError):
        mt.redo_rate_mb_per_hour(MIB, 0)
