"""Verify streaming replication with quorum commit: rows reach every replica; after the switchover drill and the
failover drill (side_effect), no acknowledged row is lost, each old primary follows the new one, and the replication
slots are where they should be: on the primary one per replica, each used by that replica's WAL sender, none left on
a replica (a stale slot holds WAL forever); the members stream over TLS, each checking the primary's certificate
against the collection's CA and the address it dials."""
import json
import os
import time

import psycopg2
import pytest

APP_PASSWORD = "molecule-app-secret"     # the scenario's app role (molecule.yml)
MEMBERS = ("pga", "pgb", "pgc")
DIVERGENT_ID = -1                        # the row side_effect commits on the primary only, just before killing it
DRILLS = ("drill", "drill-failover")     # the switchover, then the failover
# The longest time without an acknowledged commit, per drill: about 2.5 times the slowest measured on this 2-core
# kind with another scenario beside it (switchover 2.2-3.7 s; failover 17-28 s, which includes running
# pg_failover.yml after the kill, as a DBA would).
WRITE_GAP_BOUND_S = {"drill": 10.0, "drill-failover": 60.0}


def psql(host, query):
    result = host.run("runuser -u postgres -- psql -X -At -d app -c %s", query)
    assert result.rc == 0, result.stderr
    return result.stdout.strip()


def roles(lab_hosts):
    return {name: psql(lab_hosts[name], "SELECT pg_is_in_recovery()") for name in MEMBERS}


def current_primary(lab_hosts):
    primaries = [name for name, in_recovery in roles(lab_hosts).items() if in_recovery == "f"]
    assert len(primaries) == 1, primaries
    return primaries[0]


def slot(name):
    """The slot the role names for a member (roles/postgres_tuned/tasks/replication.yml)."""
    return "dbops_" + name


def wait_for(check, timeout=30):
    deadline = time.time() + timeout
    while True:
        value = check()
        if value or time.time() > deadline:
            return value
        time.sleep(0.5)


def drill_results(name, kinds=("writer", "drill")):
    """What side_effect kept of a drill: the writer's summary, drill.json (written once the drill's playbook
    ended) and, for the failover, before.json (written before pg_failover.yml ran, so the checks that read only it
    and the live servers judge the outcome even when the failover failed half-way)."""
    directory = os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], name)
    results = {}
    for kind in kinds:
        with open(os.path.join(directory, kind + ".json"), encoding="utf-8") as handle:
            results[kind] = json.load(handle)
    with open(os.path.join(directory, "acks.txt"), encoding="utf-8") as handle:
        results["acked"] = [int(line) for line in handle if line.strip()]
    return results


def stored_ids(host):
    return {int(v) for v in psql(host, "SELECT id FROM acks").split()}


def test_exactly_one_primary_and_the_others_stream(lab_hosts):
    primary = current_primary(lab_hosts)
    streaming = psql(lab_hosts[primary],
                     "SELECT string_agg(application_name || ':' || state || ':' || sync_state, ',' "
                     "ORDER BY application_name) FROM pg_stat_replication")
    # quorum commit (postgres_tuned_synchronous_standbys: 1): each replica is a candidate for the quorum
    assert streaming == ",".join("%s:streaming:quorum" % n for n in MEMBERS if n != primary)


def test_row_committed_on_the_primary_is_read_on_each_replica(lab_hosts, lab_ips):
    primary = current_primary(lab_hosts)
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


def test_slots_now_one_per_replica_on_the_primary_each_used_by_its_replica(lab_hosts):
    primary = current_primary(lab_hosts)
    # each slot joined to the WAL sender holding it: the sender's application_name is the replica's name
    held = psql(lab_hosts[primary],
                "SELECT string_agg(s.slot_name || ':' || s.slot_type || ':' || s.active || ':'"
                " || coalesce(r.application_name, '-'), ',' ORDER BY s.slot_name)"
                " FROM pg_replication_slots s LEFT JOIN pg_stat_replication r ON r.pid = s.active_pid")
    assert held == ",".join("%s:physical:true:%s" % (slot(n), n) for n in MEMBERS if n != primary)
    for name in MEMBERS:
        if name != primary:
            # the replica streams through its own slot, and keeps none itself
            assert psql(lab_hosts[name], "SELECT slot_name FROM pg_stat_wal_receiver") == slot(name)
            assert psql(lab_hosts[name], "SELECT count(*) FROM pg_replication_slots") == "0", \
                "%s (a replica) holds slots: they would keep WAL forever" % name


@pytest.mark.parametrize("drill", DRILLS)
def test_slots_right_after_the_drill(drill):
    record = drill_results(drill)["drill"]
    new, members = record["new_primary"], record["members"]
    senders = {s["application_name"]: s["pid"] for s in members[new]["senders"]}
    slots = {s["name"]: s for s in members[new]["slots"]}
    replicas = [n for n in MEMBERS if n != new]
    # the new primary holds a slot for each other member (the old primary included), each in use by the WAL sender
    # streaming to that member
    assert sorted(slots) == sorted(slot(n) for n in replicas), members[new]
    for name in replicas:
        held = slots[slot(name)]
        assert held["type"] == "physical" and held["active"] is True and held["restart_lsn"], held
        assert held["active_pid"] == senders.get(name), (name, held, senders)
        # no member other than the primary keeps a slot: the old primary's slots were dropped, not left to hold WAL
        assert members[name]["slots"] == [], "%s keeps slots after the %s: %s" % (name, drill, members[name]["slots"])


@pytest.mark.parametrize("drill", DRILLS)
def test_drill_kept_every_acknowledged_row_on_every_member(lab_hosts, lab_ips, drill):
    results = drill_results(drill)
    summary, record, acked = results["writer"], results["drill"], set(results["acked"])
    assert summary["acked"] == len(acked) > 0
    # the writer wrote through the old primary, then the new one: the drill happened under it
    assert summary["primaries_written"] == [lab_ips[record["old_primary"]], lab_ips[record["new_primary"]]], \
        (summary, record)
    print("%s write gap: %.2f s (bound %.0f s), %d acknowledged, %d failed commits" % (
        drill, summary["write_gap_seconds"], WRITE_GAP_BOUND_S[drill], summary["acked"], summary["failed_commits"]))
    assert summary["write_gap_seconds"] < WRITE_GAP_BOUND_S[drill], summary
    for name in MEMBERS:
        wait_for(lambda n=name: not acked - stored_ids(lab_hosts[n]))
        lacking = acked - stored_ids(lab_hosts[name])
        assert not lacking, "%s lacks acknowledged rows %s" % (name, sorted(lacking)[:10])


@pytest.mark.parametrize("drill", DRILLS)
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


def test_failover_promoted_the_replica_that_received_the_most():
    results = drill_results("drill-failover", kinds=("drill", "before"))
    record, before = results["drill"], results["before"]
    received = {name: int(value) for name, value in record["received"].items() if name != before["old_primary"]}
    # the drill set the choice up: one replica received less than the other when the primary died
    assert received[before["lagging"]] < max(received.values()), (record, before)
    assert record["new_primary"] != before["lagging"], (record, before)
    assert received[record["new_primary"]] == max(received.values()), (record, before)


def test_failover_lost_no_row_acknowledged_before_the_kill(lab_hosts):
    results = drill_results("drill-failover", kinds=("before",))
    before = results["before"]
    before_kill = results["acked"][:before["acked_before_kill"]]
    # rows acknowledged while one replica lagged: quorum commit put them on the other replica only
    while_lagging = results["acked"][before["acked_at_lag"]:before["acked_before_kill"]]
    assert len(before_kill) > 10 and len(while_lagging) >= 50, before
    primary = current_primary(lab_hosts)
    lacking = set(before_kill) - stored_ids(lab_hosts[primary])
    assert not lacking, "the primary %s lacks %d rows acknowledged before the kill (%d while %s lagged): %s" % (
        primary, len(lacking), len(set(while_lagging) & lacking), before["lagging"], sorted(lacking)[:10])


def test_no_member_holds_the_commit_only_the_dead_primary_had(lab_hosts):
    # the dead primary's divergent commit is gone from it (rewound) and never reached the others
    for name in MEMBERS:
        assert DIVERGENT_ID not in stored_ids(lab_hosts[name]), "%s holds the divergent row" % name


def test_failover_rewound_the_dead_primary():
    record = drill_results("drill-failover")["drill"]
    assert record["rejoined"] == [record["old_primary"]]
    assert record["rewind_changed"] is True and any("Done!" in line for line in record["rewind_output"]), record


# 4. The major upgrade (upgrade.yml): PostgreSQL 17 -> 18 through playbooks/pg_upgrade_major.yml under the writer.
UPGRADE_TARGET = 18
UPGRADE_MAX_WRITE_GAP_S = 60      # stop, pg_upgrade --link of a small cluster, start: about 15 s in the lab


def test_upgrade_left_every_member_on_18_streaming_from_the_primary(lab_hosts, lab_ips):
    primary = current_primary(lab_hosts)
    for name in MEMBERS:
        assert int(psql(lab_hosts[name], "SHOW server_version_num")) // 10000 == UPGRADE_TARGET, name
        if name != primary:
            assert psql(lab_hosts[name], "SELECT status || ' ' || sender_host FROM pg_stat_wal_receiver") == \
                "streaming %s" % lab_ips[primary], name
    # the old major's cluster is stopped and never starts at boot beside the new one
    for name in MEMBERS:
        assert lab_hosts[name].run("pg_lsclusters -h 17 main").stdout.split()[3].startswith("down"), name
        assert lab_hosts[name].file("/etc/postgresql/17/main/start.conf").content_string.strip() == "manual"


def test_upgrade_kept_every_acknowledged_row_on_every_member(lab_hosts, lab_ips):
    results = drill_results("drill-upgrade")
    summary, record, acked = results["writer"], results["drill"], set(results["acked"])
    assert summary["acked"] == len(acked) > 0
    # the writer wrote through the primary before and after the upgrade (the same host), nowhere else
    assert summary["primaries_written"] == [lab_ips[record["old_primary"]]], (summary, record)
    downtime = record["primary_started_at"] - record["primary_stopped_at"]
    print("major upgrade: the primary took no writes for %.1f s; write gap %.2f s, %d acknowledged, %d failed commits"
          % (downtime, summary["write_gap_seconds"], summary["acked"], summary["failed_commits"]))
    assert 0 < downtime < UPGRADE_MAX_WRITE_GAP_S, record
    assert 0 < summary["write_gap_seconds"] < UPGRADE_MAX_WRITE_GAP_S, summary
    assert record["actions"] == {n: "upgrade_primary" if n == record["old_primary"] else "rebuild_replica"
                                 for n in MEMBERS}, record
    for name in MEMBERS:
        wait_for(lambda n=name: not acked - stored_ids(lab_hosts[n]))
        lacking = acked - stored_ids(lab_hosts[name])
        assert not lacking, "%s lacks acknowledged rows %s after the upgrade" % (name, sorted(lacking)[:10])


# 5. TLS between members (postgres_tuned_tls): a replica streams, and pg_basebackup and pg_rewind connect, with the
# role's upstream options (postgres_tuned_upstream_options): verify-full against the collection's CA, so a member
# never follows a server that only answers on the primary's address.
def wal_receiver_options(host):
    """{keyword: value} of the connection a replica streams over, as pg_stat_wal_receiver shows it (the password
    masked), without the address: the options every member-to-member connection of the role uses."""
    options = dict(item.split("=", 1) for item in psql(host, "SELECT conninfo FROM pg_stat_wal_receiver").split())
    for keyword in ("host", "hostaddr", "password"):
        options.pop(keyword, None)
    return options


def connect_as_replica(host, address, options):
    """A replication connection from host to address with options: (exit code, stderr)."""
    conninfo = " ".join("%s=%s" % item for item in dict(options, host=address, replication="true").items())
    result = host.run("runuser -u postgres -- psql -X -At %s -c IDENTIFY_SYSTEM", conninfo)
    return result.rc, result.stderr


def test_every_replica_streams_over_tls_verifying_the_primary(lab_hosts):
    primary = current_primary(lab_hosts)
    over_tls = psql(lab_hosts[primary],
                    "SELECT string_agg(r.application_name || ':' || s.ssl, ',' ORDER BY r.application_name) "
                    "FROM pg_stat_replication r JOIN pg_stat_ssl s USING (pid)")
    assert over_tls == ",".join("%s:true" % n for n in MEMBERS if n != primary)
    for name in MEMBERS:
        if name != primary:
            options = wal_receiver_options(lab_hosts[name])
            assert options["sslmode"] == "verify-full", (name, options)
            # the CA file beside the member's configuration, which the role writes from the collection's CA
            config_dir = os.path.dirname(psql(lab_hosts[name], "SHOW config_file"))
            assert options["sslrootcert"] == config_dir + "/ca.crt", (name, options)


def test_the_upstream_options_refuse_a_server_whose_certificate_does_not_name_the_address(lab_hosts, lab_ips):
    primary = current_primary(lab_hosts)
    replica = next(n for n in MEMBERS if n != primary)
    options = wal_receiver_options(lab_hosts[replica])
    rc, stderr = connect_as_replica(lab_hosts[replica], lab_ips[primary], options)
    assert rc == 0, stderr
    # 127.0.0.1 reaches a member's server too (the replica's own), but no member's certificate names it
    rc, stderr = connect_as_replica(lab_hosts[replica], "127.0.0.1", options)
    assert rc != 0 and "does not match host name" in stderr, (rc, stderr)
