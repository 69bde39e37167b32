"""Verify the failover drill of side_effect (a SIGKILLed primary whose timeline diverged): no acknowledged row is
lost and the old primary follows the new one, rewound by pg_rewind."""
import json
import os
import time

import psycopg2
import pytest

APP_PASSWORD = "molecule-app-secret"     # the scenario's app role (molecule.yml)
MEMBERS = ("pga", "pgb", "pgc")
DIVERGENT_ID = -1                        # the row side_effect commits on the primary only, just before killing it


def psql(host, query):
    result = host.run("runuser -u postgres -- psql -X -At -d app -c %s", query)
    assert result.rc == 0, result.stderr
    return result.stdout.strip()


def roles(lab_hosts):
    return {name: psql(lab_hosts[name], "SELECT pg_is_in_recovery()") for name in MEMBERS}


def wait_for(check, timeout=30):
    deadline = time.time() + timeout
    while True:
        value = check()
        if value or time.time() > deadline:
            return value
        time.sleep(0.5)


def drill_results(name):
    directory = os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], name)
    results = {}
    for kind in ("writer", "drill"):
        with open(os.path.join(directory, kind + ".json"), encoding="utf-8") as handle:
            results[kind] = json.load(handle)
    with open(os.path.join(directory, "acks.txt"), encoding="utf-8") as handle:
        results["acked"] = [int(line) for line in handle if line.strip()]
    return results


def stored_ids(host):
    return {int(v) for v in psql(host, "SELECT id FROM acks").split()}


def test_exactly_one_primary_and_the_others_stream(lab_hosts):
    seen = roles(lab_hosts)
    primaries = [name for name, in_recovery in seen.items() if in_recovery == "f"]
    assert len(primaries) == 1, seen
    streaming = psql(lab_hosts[primaries[0]],
                     "SELECT string_agg(application_name || ':' || state || ':' || sync_state, ',' "
                     "ORDER BY application_name) FROM pg_stat_replication")
    # quorum commit (postgres_tuned_synchronous_standbys: 1): each replica is a candidate for the quorum
    assert streaming == ",".join("%s:streaming:quorum" % n for n in MEMBERS if n != primaries[0])


def test_row_committed_on_the_primary_is_read_on_each_replica(lab_hosts, lab_ips):
    seen = roles(lab_hosts)
    primary = [name for name, in_recovery in seen.items() if in_recovery == "f"][0]
    marker = "row-%d" % time.time_ns()
    connection = psycopg2.connect(host=lab_ips[primary], user="app", password=APP_PASSWORD, dbname="app")
    connection.autocommit = True
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE IF NOT EXISTS markers (v TEXT PRIMARY KEY)")
        cursor.execute("INSERT INTO markers VALUES (%s)", (marker,))
    connection.close()
    for name in MEMBERS:
        if name != primary:
            found = wait_for(lambda n=name: psql(lab_hosts[n], "SELECT count(*) FROM markers WHERE v = '%s'"
                                                 % marker) == "1")
            assert found, "%s never received the row committed on %s" % (name, primary)
            refused = lab_hosts[name].run("runuser -u postgres -- psql -X -At -d app -c %s",
                                          "INSERT INTO markers VALUES ('x')")
            assert refused.rc != 0 and "read-only" in refused.stderr


@pytest.mark.parametrize("drill", ["drill-failover"])
def test_drill_kept_every_acknowledged_row_on_every_member(lab_hosts, lab_ips, drill):
    results = drill_results(drill)
    summary, record, acked = results["writer"], results["drill"], set(results["acked"])
    assert summary["acked"] == len(acked) > 0
    # the writer wrote through the old primary, then the new one: the drill happened under it
    assert summary["primaries_written"] == [lab_ips[record["old_primary"]], lab_ips[record["new_primary"]]], \
        (summary, record)
    print("%s write gap: %.2f s, %d acknowledged, %d failed commits" % (
        drill, summary["write_gap_seconds"], summary["acked"], summary["failed_commits"]))
    for name in MEMBERS:
        wait_for(lambda n=name: not acked - stored_ids(lab_hosts[n]))
        lacking = acked - stored_ids(lab_hosts[name])
        assert not lacking, "%s lacks acknowledged rows %s" % (name, sorted(lacking)[:10])


@pytest.mark.parametrize("drill", ["drill-failover"])
def test_old_primary_followed_the_new_one_right_after_the_drill(lab_ips, drill):
    record = drill_results(drill)["drill"]
    old, new = record["old_primary"], record["new_primary"]
    assert old != new
    assert record["members"][new]["in_recovery"] is False, record
    for name in MEMBERS:
        if name != new:
            assert record["members"][name]["in_recovery"] is True, record
            assert record["members"][name]["receiver"] == "streaming", record
            assert record["members"][name]["upstream"] == lab_ips[new], record


def test_failover_lost_no_row_acknowledged_before_the_kill(lab_hosts):
    results = drill_results("drill-failover")
    before_kill = results["acked"][:results["drill"]["acked_before_kill"]]
    assert len(before_kill) > 10
    new = results["drill"]["new_primary"]
    lacking = set(before_kill) - stored_ids(lab_hosts[new])
    assert not lacking, "the new primary %s lacks rows acknowledged before the kill: %s" % (new, sorted(lacking)[:10])


def test_failover_rewound_the_dead_primary(lab_hosts):
    record = drill_results("drill-failover")["drill"]
    assert record["rejoined"] == [record["old_primary"]]
    assert record["rewind_changed"] is True and any("Done!" in line for line in record["rewind_output"]), record
    # the commit only the dead primary had is gone from it (rewound) and never reached the others
    for name in MEMBERS:
        assert DIVERGENT_ID not in stored_ids(lab_hosts[name]), "%s holds the divergent row" % name
