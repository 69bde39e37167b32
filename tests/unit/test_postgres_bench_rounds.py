"""The PostgreSQL tuning benchmark's summary (bench/postgres_tuning/rounds.py) on recorded rows: a configuration
killed for memory, PostgreSQL alone or the server's whole host, is printed as killed with its evidence (never as
0 tps, never dropped), the ratios come from the rounds where both configurations ran."""
import importlib.util
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPEC = importlib.util.spec_from_file_location("bench_pg_rounds",
                                              os.path.join(ROOT, "bench", "postgres_tuning", "rounds.py"))
ROUNDS = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(ROUNDS)


def ran(number, config, tpcb, tpcc):
    return {"round": number, "config": config, "settings": "", "tpcb": {"tps": tpcb}, "tpcc": {"tps": tpcc}}


def host_down(number, config):
    # As run_slot records it: no measurement, podman's view of the container's end, the cgroup gone with it.
    return {"round": number, "config": config, "killed": "host down", "oom_kills": None,
            "host": {"oom_killed": True, "exit_code": 137, "status": "exited"},
            "error": "bench-postgres-pgb1: can only create exec sessions on running containers"}


def test_host_down_slot_is_killed_for_memory_and_ratios_come_from_the_rest():
    rows = [ran(1, "stock", 1000, 400), ran(1, "pgtune", 1100, 440), ran(1, "ours", 1200, 500),
            host_down(2, "pgtune"), ran(2, "ours", 1300, 520), ran(2, "stock", 1000, 400)]
    text = "\n".join(ROUNDS.summary(rows, 2))
    assert "Killed for memory (left out of the medians; the ratios come from the rounds that ran): " \
           "pgtune in 1 of 2 rounds" in text
    assert ("round 2 pgtune: killed for memory (host down): the benchmark host went down and was started again; "
            "podman: OOMKilled=True, exit code 137, status exited; cgroup oom_kill count: unreadable "
            "(the host went down); bench-postgres-pgb1: can only create exec sessions") in text
    assert "       killed        in 0 of 2      in 1 of 2      in 0 of 2" in text
    assert "tpcb   median             1000           1100           1250" in text     # pgtune: round 1 only
    assert "ours/stock    median 1.25x  per round 1.20 1.30" in text
    assert "pgtune/stock  median 1.10x  per round 1.10\n" in text                     # round 2 left out
    assert " 0 " not in text.replace("in 0 of", "")


def test_postgres_killed_in_the_cgroup_and_a_plain_failure_are_told_apart():
    rows = [ran(1, "stock", 1000, 400),
            {"round": 1, "config": "pgtune", "killed": "postgres", "oom_kills": 2, "error": "pgbench tpcb failed"},
            {"round": 1, "config": "ours", "failed": True, "oom_kills": 0, "error": "pgbench tpcc failed"}]
    text = "\n".join(ROUNDS.summary(rows, 1))
    assert "round 1 pgtune: killed for memory; cgroup oom_kill count: 2; pgbench tpcb failed" in text
    assert "round 1 ours: failed; cgroup oom_kill count: 0; pgbench tpcc failed" in text
    assert "pgtune in 1 of 1 rounds" in text and "ours in" not in text


def test_recorded_run_with_the_host_taken_down_in_a_slot():
    # rounds.py's rows from a real run (1 round, 5 s) in which BENCH_DRILL_HOST_DOWN killed the server's PID 1
    # during pgtune's turn: run_slot recorded it, started the host again, and ours ran after it.
    with open(os.path.join(ROOT, "tests", "unit", "data", "bench_postgres_host_down.json"), encoding="utf-8") as f:
        rows = json.load(f)
    text = "\n".join(ROUNDS.summary(rows, 1))
    assert "pgtune in 1 of 1 rounds" in text
    assert ("round 1 pgtune: killed for memory (host down): the benchmark host went down and was started again; "
            "podman: OOMKilled=False, exit code 137, status exited") in text
    assert "can only create exec sessions on running containers" in text
    assert "ours/stock    median 1.58x  per round 1.58" in text
    assert "       min-max       1390-1390            n/a      2198-2198" in text   # never 0 tps
