"""The writer through ProxySQL on mpx1 during the switchover drill (drill/proxied: "id epoch proxy" per
acknowledged commit, and each row's @@hostname of the server that wrote it): the proxy followed each switchover by
itself (its read_only monitor; the inventory declares no writer), no acknowledged commit was lost, and the write
gap through the proxy is printed and bounded like the direct writer's."""
import json
import os

import pytest

WRITER_RECORD = os.path.join("drill", "proxied")
# The proxies hold the source's new writes during a switchover (percona_server_proxies) until their read_only
# monitor (every 200 ms) finds the new source writable; a held session fails after mysql-connect_timeout_server_max
# (10 s), so a pause near that would be failed commits, not a slow switchover. Measured 0.46-0.67 s.
GAP_LIMIT = 10.0


@pytest.fixture(scope="module")
def notes(drill):
    with open(os.path.join(os.path.dirname(drill["dir"]), "switchovers.json"), encoding="utf-8") as handle:
        return json.load(handle)


@pytest.fixture(scope="module")
def acks(drill):
    with open(os.path.join(drill["dir"], "acks.log"), encoding="utf-8") as handle:
        return [(int(ident), float(epoch)) for ident, epoch, _ in (line.split() for line in handle if line.strip())]


def longest_pause(acks, start, end):
    """The longest time between two consecutive acknowledged commits from `start` to `end` (one switchover's
    window: from just before it to the next one)."""
    times = [epoch for _, epoch in acks if start <= epoch <= end]
    assert len(times) > 10, "the writer through the proxy hardly committed from %.3f to %.3f" % (start, end)
    return max(later - earlier for earlier, later in zip(times, times[1:]))


def test_the_write_gap_through_the_proxy_is_bounded(notes, acks, capsys):
    first, second = notes["first"]["at"], notes["second"]["at"]
    out, back = longest_pause(acks, first, second), longest_pause(acks, second, max(epoch for _, epoch in acks))
    with capsys.disabled():
        print("\nwrite gap through ProxySQL: src -> %s %.2f s, back %.2f s (bound %.0f s)"
              % (notes["first"]["plan"]["target"], out, back, GAP_LIMIT))
    assert 0 < out < GAP_LIMIT and 0 < back < GAP_LIMIT, (out, back)


def test_the_proxy_sent_the_writes_to_each_source_in_turn(lab_hosts, sql, notes, drill):
    """Rows in commit order, each with the server that wrote it: src, then the new source, then src again."""
    nodes = [row[0] for row in sql(lab_hosts["src"], "SELECT node FROM app.proxied ORDER BY id")]
    runs = [node for index, node in enumerate(nodes) if index == 0 or nodes[index - 1] != node]
    assert runs == ["src", notes["first"]["plan"]["target"], "src"], runs
    assert len(drill["acked"]) > 100


@pytest.mark.parametrize("member", ["src", "rep1", "rep2"])
def test_every_commit_acknowledged_through_the_proxy_is_on_every_server(lab_hosts, missing_acknowledged, drill,
                                                                       member):
    missing = missing_acknowledged(lab_hosts[member], "proxied", drill["acked"], 30)
    assert not missing, "%s lacks %d acknowledged ids, first %s" % (member, len(missing), missing[:10])


def test_the_proxy_writes_to_the_source_the_servers_name_and_reads_from_all(lab_hosts, proxysql_admin):
    rows = proxysql_admin(lab_hosts["mpx1"], "SELECT hostgroup_id, hostname, status FROM runtime_mysql_servers")
    writers = sorted(row["hostname"] for row in rows if str(row["hostgroup_id"]) == "10")
    readers = sorted(row["hostname"] for row in rows if str(row["hostgroup_id"]) == "20")
    assert writers == ["10.89.203.11"], rows
    assert readers == ["10.89.203.11", "10.89.203.12", "10.89.203.13"], rows


# ---- the rolling restart under a reader through the proxy (side_effect's second drill, drill/reader)
# The longest time no read transaction completed while the servers restarted one by one: with each server drained
# first, the other two serve every transaction (a few tenths of a second between completions, 4 sessions of 0.5 s).
READ_PAUSE_LIMIT = 3.0


@pytest.fixture(scope="module")
def reader():
    directory = os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "drill", "reader")
    with open(os.path.join(directory, "summary.json"), encoding="utf-8") as handle:
        summary = json.load(handle)
    with open(os.path.join(directory, "window.json"), encoding="utf-8") as handle:
        window = json.load(handle)
    with open(os.path.join(directory, "transactions.log"), encoding="utf-8") as handle:
        # "start end thread server outcome..."
        transactions = [(float(start), float(end), server, outcome) for start, end, _, server, outcome
                        in (line.strip().split(None, 4) for line in handle if line.strip())]
    return {"summary": summary, "window": window, "transactions": transactions}


def test_no_read_transaction_failed_while_every_server_restarted(reader, capsys):
    """Each server was drained on the proxy before it stopped: its transactions in flight finished and new ones
    went to the others. A transaction cut by a stop fails in the client (it is bound to one server)."""
    summary, window = reader["summary"], reader["window"]
    done = sorted(end for _, end, _, outcome in reader["transactions"]
                  if outcome == "ok" and window["from"] <= end <= window["to"])
    assert len(done) > 20, "the reader hardly ran during the rolling restart: %s" % summary
    pause = max(later - earlier for earlier, later in zip([window["from"]] + done, done + [window["to"]]))
    with capsys.disabled():
        print("\nreads through ProxySQL during the rolling restart (%.0f s): %d transactions, %d failed, "
              "longest pause %.2f s (bound %.0f s), served %s"
              % (window["to"] - window["from"], len(done), summary["failed"], pause, READ_PAUSE_LIMIT,
                 summary["served"]))
    assert summary["failed"] == 0, summary["failures"]
    assert pause < READ_PAUSE_LIMIT, pause


def test_every_server_served_reads_before_and_after_its_restart(reader):
    """The probe reached each server before the restarts (so each restart could have cut it), and each served
    again once the last one was over (its weights back on the proxy)."""
    window = reader["window"]
    for server in ("src", "rep1", "rep2"):
        ends = [end for _, end, name, outcome in reader["transactions"] if name == server and outcome == "ok"]
        assert any(end < window["from"] for end in ends), "%s served no read before the restarts" % server
        assert any(end > window["to"] for end in ends), "%s served no read after the restarts" % server


@pytest.fixture(scope="module")
def restart_writer():
    directory = os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "drill", "reader")
    with open(os.path.join(directory, "writer.json"), encoding="utf-8") as handle:
        summary = json.load(handle)
    with open(os.path.join(directory, "acks.log"), encoding="utf-8") as handle:
        acks = [(int(ident), float(epoch)) for ident, epoch, _ in (line.split() for line in handle if line.strip())]
    return {"summary": summary, "acks": acks}


# The source hands its writes to a replica before its restart and takes them back after (two switchovers): each
# holds new writes in the proxy from the hand-over until its monitor finds the new source writable (the drain, the
# old source read-only, the catch-up, the promotion, then a read_only check every 200 ms). The proxy holds a
# session at most mysql-connect_timeout_server_max (10 s) before it fails it: a pause near that would be failures.
WRITE_PAUSE_LIMIT = 8.0


def transactions_of(gtid_set, uuid):
    """How many transactions of the server `uuid` the GTID set holds ("uuid:1-5:7,uuid2:1-3")."""
    total = 0
    for member in gtid_set.replace("\n", "").split(","):
        parts = member.strip().split(":")
        if parts[0].lower() != uuid.lower():
            continue
        for interval in parts[1:]:
            low, _, high = interval.partition("-")
            total += int(high or low) - int(low) + 1
    return total


def test_the_writes_through_the_proxy_during_the_rolling_restart(reader, restart_writer, capsys):
    """No commit failed while every server restarted: the replicas' restarts do not touch the writer hostgroup,
    and the source's writes moved to a replica and back, held in the proxy during each switchover."""
    window, summary = reader["window"], restart_writer["summary"]
    times = [epoch for _, epoch in restart_writer["acks"] if window["from"] <= epoch <= window["to"]]
    assert len(times) > 10, "the writer hardly committed during the rolling restart: %s" % summary
    pause = max(later - earlier for earlier, later in zip([window["from"]] + times, times + [window["to"]]))
    with capsys.disabled():
        print("\nwrites through ProxySQL during the rolling restart: %d acknowledged, %d failed %s, longest pause "
              "%.2f s (bound %.0f s; a switchover of the source's hand-over)"
              % (len(times), summary["failed_commits"], summary["failures"], pause, WRITE_PAUSE_LIMIT))
    assert summary["failed_commits"] == 0, summary["failures"]
    assert pause < WRITE_PAUSE_LIMIT, pause


def test_a_replica_took_the_writes_while_the_source_restarted(reader):
    """The transactions written during the rolling restart carry a replica's server_uuid: the source handed its
    writes over before it stopped (it restarted last, so no earlier drill's can be in the window)."""
    window = reader["window"]
    written = {name: transactions_of(window["gtid_after"], uuid) - transactions_of(window["gtid_before"], uuid)
               for name, uuid in window["uuids"].items()}
    assert written["src"] > 0, written
    assert written["rep1"] + written["rep2"] > 0, "no replica took a write during the restart: %s" % written


@pytest.mark.parametrize("member", ["src", "rep1", "rep2"])
def test_every_write_acknowledged_during_the_rolling_restart_is_on_every_server(lab_hosts, missing_acknowledged,
                                                                                restart_writer, member):
    acked = {ident for ident, _ in restart_writer["acks"]}
    missing = missing_acknowledged(lab_hosts[member], "restarted", acked, 30)
    assert acked and not missing, "%s lacks %d acknowledged ids, first %s" % (member, len(missing), missing[:10])
