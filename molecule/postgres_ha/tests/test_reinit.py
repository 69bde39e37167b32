"""pg_reinit.yml (reinit_drill.yml): a replica that lost its pg_control (PostgreSQL cannot start on that data
directory) is rebuilt from the leader through Patroni; the leader itself is refused; the leader never changes."""
import json
import os
import time

import pytest

MEMBERS = ("pg1", "pg2", "pg3")
# The rebuild copies a small database (the drills' rows) with pg_basebackup; seen 10-20 s for the whole playbook
# run beside another scenario. The bound leaves room for a busy machine.
REINIT_BOUND_S = 120


def read(name):
    with open(os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], name), encoding="utf-8") as handle:
        return json.load(handle)


@pytest.fixture(scope="module")
def before():
    return read("reinit_before.json")


@pytest.fixture(scope="module")
def run():
    return read("reinit_run.json")


def psql(host, query, database="app"):
    result = host.run("runuser -u postgres -- psql -X -At -d %s -c %s", database, query)
    assert result.rc == 0, result.stderr
    return result.stdout.strip()


def test_the_broken_replica_was_seen_broken_by_the_gate(before):
    assert before["target"] in MEMBERS and before["target"] != before["leader"]
    assert before["broken"]["state"] not in ("streaming", "running"), before
    assert any(u.startswith(before["target"] + " is ") for u in before["unmet"]), before


def test_the_leader_was_refused_and_the_replica_rebuilt(run, capsys):
    with capsys.disabled():
        print("\npg_reinit figures: the broken replica rebuilt in %.1f s (the playbook, bound %d s)"
              % (run["seconds"], REINIT_BOUND_S))
    assert run["refused_leader_rc"] != 0 and run["rc"] == 0, run
    assert run["said"], run
    assert 0 < run["seconds"] < REINIT_BOUND_S, run


def test_the_rebuilt_member_streams_from_the_unchanged_leader(lab_hosts, before):
    leader, target = lab_hosts[before["leader"]], lab_hosts[before["target"]]
    assert psql(leader, "SELECT pg_is_in_recovery()") == "f"
    assert psql(target, "SELECT pg_is_in_recovery()") == "t"
    assert psql(target, "SELECT status FROM pg_stat_wal_receiver") == "streaming"
    # a data directory copied again: pg_control is back, and the member has the cluster's system identifier
    assert target.file("/var/lib/postgresql/17/main/global/pg_control").exists
    system_id = "SELECT system_identifier FROM pg_control_system()"
    assert psql(target, system_id, "postgres") == psql(leader, system_id, "postgres")


def test_a_row_written_after_the_rebuild_reaches_the_rebuilt_member(lab_hosts, before):
    leader, target = lab_hosts[before["leader"]], lab_hosts[before["target"]]
    psql(leader, "CREATE TABLE IF NOT EXISTS reinit_probe (note text)")
    marker = "after-reinit-%d" % time.time_ns()
    psql(leader, "INSERT INTO reinit_probe VALUES ('%s')" % marker)
    for dummy in range(50):
        if psql(target, "SELECT count(*) FROM reinit_probe WHERE note = '%s'" % marker) == "1":
            return
        time.sleep(0.2)
    raise AssertionError("the row written on %s after the rebuild never reached %s" % (before["leader"],
                                                                                       before["target"]))
