"""The benchmark's pgtune configuration (bench/postgres_tuning/pgtune.py): pgtune's published formulas, worked by
hand here for the benchmark's host and for a larger one, so a slip in the reimplementation cannot pass as pgtune."""
import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPEC = importlib.util.spec_from_file_location("bench_pgtune", os.path.join(ROOT, "bench", "postgres_tuning", "pgtune.py"))
PGTUNE = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(PGTUNE)


def test_benchmark_host_2gb_2cpus_oltp_50_connections():
    settings = PGTUNE.pgtune(2048, 2, 50, "oltp", "ssd")
    assert settings == {
        "max_connections": "50",
        "shared_buffers": "512MB",            # RAM/4
        "effective_cache_size": "1536MB",     # RAM*3/4
        "maintenance_work_mem": "128MB",      # RAM/16
        "checkpoint_completion_target": "0.9",
        "wal_buffers": "16MB",                # 3% of 512MB = 15.36MB, above 14MB: rounded up to 16MB
        "default_statistics_target": "100",
        "random_page_cost": "1.1",
        "effective_io_concurrency": "200",
        "work_mem": "9039kB",                 # (2097152 - 524288) kB / ((50 + 8 default workers) x 3)
        "huge_pages": "off",                  # below 32GB
        "min_wal_size": "2GB",
        "max_wal_size": "8GB",
    }                                         # no parallel settings below 4 CPUs


def test_larger_web_host_gets_parallel_settings_and_their_work_mem_divisor():
    settings = PGTUNE.pgtune(16384, 4, 200, "web", "hdd")
    assert settings["shared_buffers"] == "4GB"
    assert settings["maintenance_work_mem"] == "1GB"
    assert settings["work_mem"] == "20560kB"  # (16777216 - 4194304) / ((200 + 4 CPUs) x 3) = 20560.3
    assert (settings["max_worker_processes"], settings["max_parallel_workers_per_gather"],
            settings["max_parallel_workers"], settings["max_parallel_maintenance_workers"]) == ("4", "2", "4", "2")
    assert (settings["random_page_cost"], settings["effective_io_concurrency"]) == ("4", "2")
    assert (settings["min_wal_size"], settings["max_wal_size"]) == ("1GB", "4GB")


def test_caps_and_floors():
    big = PGTUNE.pgtune(65536, 32, None, "dw", "san")
    assert big["maintenance_work_mem"] == "2GB"        # RAM/8 capped at 2GB
    assert big["max_connections"] == "40"              # dw default
    assert big["max_parallel_workers_per_gather"] == "16"  # dw is not capped at 4
    assert big["huge_pages"] == "try"
    small = PGTUNE.pgtune(256, 1, 500, "desktop", "ssd")
    assert small["wal_level"] == "minimal" and small["max_wal_senders"] == "0"
    assert small["work_mem"] == "64kB"                 # floor
