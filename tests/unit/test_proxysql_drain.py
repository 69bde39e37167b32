"""proxysql_drain's plan (module_utils/proxysql_admin.py drain_plan): weight 0 to drain, the saved weights to
put a backend back, refusals before any change."""
import pytest

from ansible_collections.dbops.clusters.plugins.module_utils.proxysql_admin import (
    DrainError, answered_since, drain_plan, galera_monitor_hostgroups, idle_reset_statements, known_backend,
    load_keeping_placements, placed_rows)


def rows(*spec):
    return [{"hostgroup_id": str(hg), "hostname": host, "port": "3306", "weight": str(weight)}
            for hg, host, weight in spec]


# The proxysql role's Galera rows: every member in the writer hostgroup, heaviest first.
GALERA = rows((10, "g1", 10000000), (10, "g2", 100000), (10, "g3", 1000))


def test_a_drain_sets_weight_zero_on_every_row_of_the_backend():
    statements, reason = drain_plan("drained", "g1", 3306, GALERA, GALERA)
    assert statements == [("UPDATE mysql_servers SET weight=0 WHERE hostname=%s AND port=%s", ("g1", 3306))]
    assert "10000000 in hostgroup 10" in reason


def test_a_drained_backend_is_left_alone():
    memory = rows((10, "g1", 0), (10, "g2", 100000), (10, "g3", 1000))
    assert drain_plan("drained", "g1", 3306, memory, GALERA)[0] == []


def test_a_backend_the_proxy_does_not_have_is_refused():
    with pytest.raises(DrainError, match="g9:3306 is not a backend of this proxy"):
        drain_plan("drained", "g9", 3306, GALERA, GALERA)
    with pytest.raises(DrainError, match="not a backend"):
        drain_plan("drained", "g1", 3307, GALERA, GALERA)


def test_known_backend_matches_address_and_port():
    # skip_unknown leaves a backend without a row alone (a server new to the topology): only an exact match counts
    assert known_backend(GALERA, "g2", 3306) and known_backend(GALERA, "g2", "3306")
    assert not known_backend(GALERA, "g9", 3306) and not known_backend(GALERA, "g2", 3307)
    assert not known_backend([], "g1", 3306)


def test_an_async_source_keeps_the_writer_hostgroup_it_serves_alone_with_shared_only():
    # every async server a reader (weight 1000 in 20); the read_only monitor placed src alone in the writer
    # hostgroup 10 of the runtime: shared_only drains its reader row only, its writes go on until it stops
    memory = rows((20, "src", 1000), (20, "rep1", 1000), (20, "rep2", 1000))
    runtime = [dict(row, status="ONLINE") for row in rows((10, "src", 1000)) + memory]
    with pytest.raises(DrainError, match="only server of runtime hostgroup 10"):
        drain_plan("drained", "src", 3306, memory, memory, runtime)
    statements, reason = drain_plan("drained", "src", 3306, memory, memory, runtime, shared_only=True)
    assert statements == [("UPDATE mysql_servers SET weight=0 WHERE hostgroup_id=%s AND hostname=%s AND port=%s",
                           (20, "src", 3306))]
    assert "hostgroup 10, which it serves alone, keeps it" in reason
    # a replica shares every hostgroup: shared_only drains all of it, as a plain drain does
    assert drain_plan("drained", "rep1", 3306, memory, memory, runtime, shared_only=True)[0] == [
        ("UPDATE mysql_servers SET weight=0 WHERE hostname=%s AND port=%s", ("rep1", 3306))]
    # its shared rows already at 0: nothing to do
    drained = rows((20, "src", 0), (20, "rep1", 1000), (20, "rep2", 1000))
    assert drain_plan("drained", "src", 3306, drained, memory, runtime, shared_only=True)[0] == []
    # alone in a declared hostgroup too: kept, not refused
    alone = rows((10, "src", 1000), (20, "src", 1000), (20, "rep1", 1000))
    statements, dummy = drain_plan("drained", "src", 3306, alone, alone, shared_only=True)
    assert statements == [("UPDATE mysql_servers SET weight=0 WHERE hostgroup_id=%s AND hostname=%s AND port=%s",
                           (20, "src", 3306))]


def test_a_drain_that_leaves_a_hostgroup_without_a_server_is_refused():
    # async replication: the source alone in the writer hostgroup, readers elsewhere
    replication = rows((10, "src", 1000), (20, "src", 1000), (20, "rep1", 1000))
    with pytest.raises(DrainError, match="only server of hostgroup 10"):
        drain_plan("drained", "src", 3306, replication, replication)
    assert drain_plan("drained", "rep1", 3306, replication, replication)[0]      # a reader has others beside it
    # the other members drained already: nothing left to serve
    with pytest.raises(DrainError, match="only server of hostgroup 10"):
        drain_plan("drained", "g3", 3306, rows((10, "g1", 0), (10, "g2", 0), (10, "g3", 1000)), GALERA)


def test_online_puts_back_the_saved_weights_only_where_they_differ():
    memory = rows((10, "g1", 0), (20, "g1", 5), (10, "g2", 100000))
    disk = rows((10, "g1", 10000000), (20, "g1", 5), (10, "g2", 100000))
    statements, reason = drain_plan("online", "g1", 3306, memory, disk)
    assert statements == [("UPDATE mysql_servers SET weight=%s, status=%s WHERE hostgroup_id=%s AND hostname=%s "
                           "AND port=%s", (10000000, "ONLINE", 10, "g1", 3306))]
    assert "10000000 in hostgroup 10" in reason
    assert drain_plan("online", "g1", 3306, disk, disk)[0] == []


def test_online_puts_back_the_saved_status_a_stopped_reset_left():
    # a run stopped between the idle reset's load and the put-back: the weight is back, the status is not
    disk = [dict(row, status="ONLINE") for row in GALERA]
    memory = [dict(row, status="OFFLINE_HARD" if row["hostname"] == "g1" else "ONLINE") for row in GALERA]
    statements, dummy = drain_plan("online", "g1", 3306, memory, disk)
    assert [args for sql, args in statements] == [(10000000, "ONLINE", 10, "g1", 3306)]


def test_the_idle_reset_takes_the_put_back_rows_offline_hard_for_one_load():
    memory = rows((10, "g1", 0), (20, "g1", 0), (10, "g2", 100000))
    disk = rows((10, "g1", 10000000), (20, "g1", 5), (10, "g2", 100000))
    put_back, dummy = drain_plan("online", "g1", 3306, memory, disk)
    reset = idle_reset_statements(put_back, "g1", 3306)
    assert reset == [("UPDATE mysql_servers SET status='OFFLINE_HARD' WHERE hostgroup_id=%s AND hostname=%s "
                      "AND port=%s", (hostgroup, "g1", 3306)) for hostgroup in (10, 20)]
    # the put-back that follows sets every one of those rows' saved status again
    assert set((args[2], args[1]) for sql, args in put_back) == set([(10, "ONLINE"), (20, "ONLINE")])
    assert idle_reset_statements([], "g1", 3306) == []


def test_online_without_a_saved_weight_is_refused():
    memory = rows((10, "g1", 0), (10, "g2", 100000))
    with pytest.raises(DrainError, match="no saved row for hostgroup 10"):
        drain_plan("online", "g1", 3306, memory, rows((10, "g2", 100000)))


def runtime(*spec):
    return [{"hostgroup_id": str(hg), "hostname": host, "port": "3306", "weight": str(weight), "status": status}
            for hg, host, weight, status in spec]


def test_a_writer_only_the_runtime_has_in_its_hostgroup_is_refused():
    """Group Replication with the super_read_only monitor: every member is declared a reader, the monitor alone
    puts the primary in the writer hostgroup. Draining it would leave the writes nowhere to go."""
    declared = rows((20, "gr1", 1000), (20, "gr2", 1000), (20, "gr3", 1000))
    live = runtime((10, "gr1", 1000, "ONLINE"), (20, "gr1", 1000, "ONLINE"), (20, "gr2", 1000, "ONLINE"),
                   (20, "gr3", 1000, "ONLINE"))
    with pytest.raises(DrainError, match="only server of runtime hostgroup 10"):
        drain_plan("drained", "gr1", 3306, declared, declared, live)
    assert drain_plan("drained", "gr2", 3306, declared, declared, live)[0]        # a secondary can go


def test_a_hand_over_drains_the_writer_only_the_runtime_has_and_says_the_writes_wait():
    """The caller switches the primary right after: the writes wait in the proxy for the monitor's next writer."""
    declared = rows((20, "gr1", 1000), (20, "gr2", 1000), (20, "gr3", 1000))
    live = runtime((10, "gr1", 1000, "ONLINE"), (20, "gr2", 1000, "ONLINE"), (20, "gr3", 1000, "ONLINE"))
    statements, reason = drain_plan("drained", "gr1", 3306, declared, declared, live, hand_over=True)
    assert statements == [("UPDATE mysql_servers SET weight=0 WHERE hostname=%s AND port=%s", ("gr1", 3306))]
    assert "hostgroup 10 keeps its new sessions waiting" in reason


def test_a_hand_over_does_not_empty_a_declared_hostgroup():
    """No monitor fills a declared hostgroup: its only server stays refused, hand-over or not."""
    declared = rows((10, "src", 1000), (20, "rep1", 1000))
    with pytest.raises(DrainError, match="only server of hostgroup 10"):
        drain_plan("drained", "src", 3306, declared, declared, (), hand_over=True)


def test_the_galera_writer_can_be_drained_the_monitor_keeps_the_others_as_candidates():
    """ProxySQL's Galera monitor keeps the other members in the writer hostgroup as SHUNNED: candidates."""
    live = runtime((10, "g1", 10000000, "ONLINE"), (10, "g2", 100000, "SHUNNED"), (10, "g3", 1000, "SHUNNED"),
                   (12, "g2", 100000, "ONLINE"), (12, "g3", 1000, "ONLINE"), (20, "g2", 100000, "ONLINE"),
                   (20, "g3", 1000, "ONLINE"))
    assert drain_plan("drained", "g1", 3306, GALERA, GALERA, live)[0]
    assert drain_plan("drained", "g2", 3306, GALERA, GALERA, live)[0]
    gone = runtime((10, "g1", 10000000, "ONLINE"), (10, "g2", 100000, "OFFLINE_HARD"), (10, "g3", 0, "SHUNNED"))
    with pytest.raises(DrainError, match="only server of runtime hostgroup 10"):
        drain_plan("drained", "g1", 3306, GALERA, GALERA, gone)


COLUMNS = ["hostgroup_id", "hostname", "port", "status", "weight", "use_ssl", "comment"]


def test_the_rows_a_monitor_placed_are_kept_through_the_load_and_taken_out_after():
    """Group Replication: the monitor alone put the primary in the writer hostgroup. A load without that row in
    mysql_servers cuts its connections, and ProxySQL runs the statement that was running there again (seen: an
    INSERT acknowledged as a duplicate of itself)."""
    declared = rows((20, "gr1", 1000), (20, "gr2", 1000), (20, "gr3", 1000))
    live = [dict(row, use_ssl="1", comment="") for row in runtime(
        (10, "gr1", 1000, "ONLINE"), (20, "gr2", 1000, "ONLINE"), (20, "gr3", 0, "SHUNNED"))]
    placed = placed_rows(declared, live, "gr3", 3306)
    assert [(row["hostgroup_id"], row["hostname"], row["status"]) for row in placed] == [("10", "gr1", "ONLINE")]
    assert load_keeping_placements(placed, COLUMNS) == [
        ("INSERT INTO mysql_servers (hostgroup_id, hostname, port, status, weight, use_ssl, comment) "
         "VALUES (%s, %s, %s, %s, %s, %s, %s)", ("10", "gr1", "3306", "ONLINE", "1000", "1", "")),
        ("LOAD MYSQL SERVERS TO RUNTIME", ()),
        ("DELETE FROM mysql_servers WHERE hostgroup_id=%s AND hostname=%s AND port=%s", (10, "gr1", 3306))]
    assert load_keeping_placements([], COLUMNS) == [("LOAD MYSQL SERVERS TO RUNTIME", ())]


def test_a_drained_backends_own_placed_rows_are_kept_and_a_restored_ones_left_to_its_monitor():
    """The primary handing over keeps its writer row through the load (weight 0 from the drain's UPDATE: the
    writes wait); a backend put back gets its placed rows from the monitor again, from its restored weight."""
    declared = rows((20, "gr1", 1000), (20, "gr2", 1000))
    live = runtime((10, "gr1", 1000, "ONLINE"), (20, "gr1", 1000, "ONLINE"), (20, "gr2", 1000, "ONLINE"))
    assert [row["hostname"] for row in placed_rows(declared, live, "gr1", 3306, keep_own=True)] == ["gr1"]
    assert placed_rows(declared, live, "gr1", 3306, keep_own=False) == []
    assert placed_rows(declared, runtime((20, "gr1", 1000, "ONLINE")), "gr1", 3306) == []   # nothing placed


def test_a_drains_statements_reach_the_placed_rows_it_keeps():
    """The drain's UPDATEs run after the placed rows are back in mysql_servers, so the handing-over primary's writer
    row loads at weight 0 too. Run before them (as a refactoring once did), the row kept its weight, a commit
    through the VIP reached the old primary as it turned read-only, and failed (1290) in group_replication's
    rolling drill."""
    declared = [dict(row, use_ssl="1", comment="") for row in rows((20, "gr1", 1000), (20, "gr2", 1000))]
    live = [dict(row, use_ssl="1", comment="") for row in runtime(
        (10, "gr1", 1000, "ONLINE"), (20, "gr1", 1000, "ONLINE"), (20, "gr2", 1000, "ONLINE"))]
    statements, dummy = drain_plan("drained", "gr1", 3306, declared, declared, live, hand_over=True)
    sequence = load_keeping_placements(placed_rows(declared, live, "gr1", 3306, keep_own=True), COLUMNS, statements)
    kinds = [sql.split()[0] for sql, args in sequence]
    assert kinds == ["INSERT"] + ["UPDATE"] * len(statements) + ["LOAD", "DELETE"], sequence
    assert any("UPDATE" in sql and "hostname" in sql and "gr1" in args for sql, args in statements), statements


def test_a_backend_removed_from_the_configuration_is_not_kept():
    """proxysql_config's load after a member left the declaration: its placed writer row goes with it."""
    declared = rows((20, "gr2", 1000), (20, "gr3", 1000))
    live = runtime((10, "gr1", 1000, "ONLINE"), (20, "gr1", 1000, "ONLINE"), (10, "gr2", 1000, "SHUNNED"))
    assert [(row["hostgroup_id"], row["hostname"]) for row in placed_rows(declared, live)] == [("10", "gr2")]


def test_the_rows_the_galera_monitor_placed_are_left_to_it():
    """ProxySQL's Galera monitor places the members again from mysql_servers in the load itself: its backup-writer
    and reader rows are not kept, while a row of another hostgroup on the same proxy still is."""
    galera = [{"writer_hostgroup": "10", "backup_writer_hostgroup": "12", "reader_hostgroup": "20",
               "offline_hostgroup": "13", "active": "1", "max_writers": "1"}]
    assert galera_monitor_hostgroups(galera) == {"10", "12", "20", "13"}
    live = runtime((10, "g1", 10000000, "ONLINE"), (10, "g2", 100000, "SHUNNED"), (12, "g2", 100000, "ONLINE"),
                   (20, "g2", 100000, "ONLINE"), (30, "g3", 1000, "ONLINE"))
    assert placed_rows(GALERA, live) != []
    kept = placed_rows(GALERA, live, galera_hostgroups=galera_monitor_hostgroups(galera))
    assert [(row["hostgroup_id"], row["hostname"]) for row in kept] == [("30", "g3")]


def test_a_backend_goes_back_only_after_the_monitor_pinged_it_since_the_wait_began():
    """ProxySQL shuns a backend and kills its connections in use when its newest pings all failed (the ones of its
    downtime): the put-back waits for a newer ping that answered."""
    answered = [{"time_start_us": "2000", "ping_error": None}]
    assert answered_since(answered, 1500)
    assert not answered_since(answered, 2500)                                    # an answer from before the wait
    assert not answered_since([{"time_start_us": "2000", "ping_error": "Can't connect"}], 1500)
    assert not answered_since([], 0)
