"""The MySQL tuning benchmark's report (bench/mysql_tuning/report.py) on recorded raw results: a configuration
killed for memory, the server alone or the whole benchmark host, is printed as killed (never as 0 tps, never
dropped), the ratios come from the configurations that ran, and the report says in how many rounds."""
import importlib.util
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPEC = importlib.util.spec_from_file_location("bench_mysql_report",
                                              os.path.join(ROOT, "bench", "mysql_tuning", "report.py"))
REPORT = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(REPORT)

SETTINGS = "134217728\t104857600\t0\t10000\tO_DIRECT\t151\t1\t1\t1073741824\t0\t9.7.4-2"
WORKLOADS = ["oltp_read_write", "oltp_write_only"]


def sysbench(tps):
    return ("SQL statistics:\n    transactions:                        %d   (%.2f per sec.)\n"
            "    queries:                             %d  (%.2f per sec.)\n"
            "Latency (ms):\n         99th percentile:                       %.2f\n"
            % (tps * 30, tps, tps * 600, tps * 20, 1000.0 / tps))


def ran(number, config, tps):
    return [{"round": str(number), "config": config, "workload": w, "status": "ran", "settings": SETTINGS,
             "output": sysbench(tps), "rc": "0", "error": "", "oom_kills": "0"} for w in WORKLOADS]


def host_down(number, config):
    # As run.yml's rescue records it: no output, rc -1, podman's view of the container's end.
    return [{"round": str(number), "config": config, "workload": w, "status": "host_down", "settings": "",
             "output": "", "rc": "-1", "error": "The benchmark host went down", "oom_kills": "-1",
             "host": {"oom_killed": "True", "exit_code": "137", "status": "exited", "events": ["died", "oom"]}}
            for w in WORKLOADS]


def mysqld_killed(number, config):
    return [{"round": str(number), "config": config, "workload": w, "status": "ran", "settings": SETTINGS,
             "output": "FATAL: Lost connection", "rc": "1", "error": "Lost connection", "oom_kills": "1"}
            for w in WORKLOADS]


def raw(runs):
    return {"tables": 8, "table_size": 300000, "threads": 8, "seconds": 5, "warmup_seconds": 2, "rounds": 2,
            "workloads": WORKLOADS, "memory_seen": ["2147483648", "25000000000", "2"], "data_bytes": "579000000",
            "declared_memory_mb": 2048, "runs": runs}


def test_host_down_slot_is_killed_for_memory_and_ratios_come_from_the_rest(tmp_path):
    recorded = raw(ran(1, "stock", 500) + ran(1, "dedicated", 550) + ran(1, "ours", 600)
                   + ran(2, "stock", 520) + host_down(2, "dedicated") + ran(2, "ours", 650))
    path = tmp_path / "raw.json"
    path.write_text(json.dumps(recorded))
    assert REPORT.main([str(path)]) == 0
    text = "\n".join(REPORT.report(recorded))

    assert "Killed for memory (left out of the medians; the ratios come from the rounds that ran): " \
           "dedicated in 1 of 2 rounds" in text
    assert ("round 2 dedicated: killed for memory (host down): the benchmark host went down and was started "
            "again; podman: OOMKilled=True, exit code 137, status exited, events died,oom; "
            "cgroup oom_kill count: unreadable (the host went down)") in text
    # dedicated's median is its one round that ran, marked; never a 0 tps.
    assert "550.0 (550.0-550.0) [1 of 2] killed for memory in 1" in text
    assert " 0.0 " not in text
    # ours/stock over both rounds: medians 625 / 510.
    assert "1.23x (rounds 1.20-1.25)" in text
    # ours/dedicated only from round 1, where both ran.
    assert "1.14x (rounds 1.09-1.09)" in text
    assert "Failed measurements" not in text


def test_configuration_killed_in_every_round_is_named_with_its_count():
    recorded = raw(ran(1, "stock", 500) + mysqld_killed(1, "dedicated") + ran(1, "ours", 600)
                   + ran(2, "stock", 500) + host_down(2, "dedicated") + ran(2, "ours", 600))
    text = "\n".join(REPORT.report(recorded))
    assert "dedicated in 2 of 2 rounds" in text
    assert "round 1 dedicated: killed for memory (mysqld): sysbench rc 1, cgroup oom_kill count: 1" in text
    assert "round 2 dedicated: killed for memory (host down)" in text
    assert "- [0 of 2] killed for memory in 2" in text
    assert "1.20x (rounds 1.20-1.20)" in text        # ours/stock still computed


def test_a_failure_without_an_oom_kill_is_not_called_killed_for_memory():
    failed = [dict(run, oom_kills="0") for run in mysqld_killed(1, "ours")]
    text = "\n".join(REPORT.report(raw(ran(1, "stock", 500) + ran(1, "dedicated", 550) + failed)))
    assert "Killed for memory" not in text
    assert "round 1 ours oltp_read_write: sysbench rc 1, no OOM kill in the memory cgroup" in text


def test_recorded_run_with_the_host_taken_down_in_a_slot():
    # bench-mysql's raw results from a real run (1 round, 5 s) in which bench_drill_host_down killed the
    # benchmark host's PID 1 during dedicated's turn: run.yml recorded it, started the host again, ran the rest.
    path = os.path.join(ROOT, "tests", "unit", "data", "bench_mysql_host_down.json")
    with open(path, encoding="utf-8") as handle:
        recorded = json.load(handle)
    text = "\n".join(REPORT.report(recorded))
    assert "dedicated in 1 of 1 rounds" in text
    assert ("round 1 dedicated: killed for memory (host down): the benchmark host went down and was started again; "
            "podman: OOMKilled=False, exit code 137, status exited, events kill,died,cleanup") in text
    assert "- [0 of 1] killed for memory in 1" in text
    assert "1.04x (rounds 1.04-1.04)" in text      # ours/stock read-write, from the slots that ran
