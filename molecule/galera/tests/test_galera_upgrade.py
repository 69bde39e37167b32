"""After the rolling package upgrade trixie -> sid under continuous writes (upgrade_drill.yml): every member
runs sid's galera-4 and MariaDB build, the members went one at a time with the writer's node last, the
Primary component never dropped below N-1, every acknowledged row is on every node, the failed commits and
the longest write gap are bounded; the runs before it changed nothing (--limit refused, check mode predicted,
the role refused sid's packages naming the playbook) and a second run skipped every member."""
import json
import os

import pytest

NODES = ("g1", "g2", "g3")
PACKAGES = ("galera-4", "mariadb-server", "mariadb-client", "mariadb-backup")

WRITER_RECORD = "drill-upgrade"


def record(drill, name):
    with open(os.path.join(drill["dir"], name + ".json"), encoding="utf-8") as handle:
        return json.load(handle)


@pytest.fixture(scope="module")
def upgrade(drill):
    return record(drill, "upgrade")


@pytest.fixture(scope="module")
def samples(drill, upgrade):
    """(time, host ip, size or None, status or None) sampled during the upgrade; None when the host was down."""
    rows = []
    with open(os.path.join(drill["dir"], "samples.log"), encoding="utf-8") as handle:
        for line in handle:
            fields = line.split()
            at = float(fields[0])
            if upgrade["started"] <= at <= upgrade["ended"]:
                down = fields[2] == "down"
                rows.append((at, fields[1], None if down else int(fields[2]), None if down else fields[3]))
    return rows


@pytest.mark.parametrize("node", NODES)
def test_every_member_runs_sids_packages(lab_hosts, sql, node):
    host = lab_hosts[node]
    for package in PACKAGES:
        sid = host.check_output("apt-cache -t sid policy %s | awk '/Candidate:/ {print $2}'", package)
        installed = host.check_output("dpkg-query -W -f '${Version}' %s", package)
        assert installed == sid, "%s: %s is %s, sid has %s" % (node, package, installed, sid)
    status = dict(sql(host, "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_provider_version', "
                            "'wsrep_local_state_comment', 'wsrep_cluster_size')"))
    # Debian's build reports the provider as 4.27(rXXXX) (upstream: 26.4.27(r...)); trixie's says 4.23.
    assert status["wsrep_provider_version"].startswith(("26.4.27(", "4.27(")), status
    assert (status["wsrep_local_state_comment"], status["wsrep_cluster_size"]) == ("Synced", "3")


def test_the_members_went_one_at_a_time_the_writer_last(upgrade, samples, lab_ips):
    plan = upgrade["plan"]
    names = dict((ip, name) for name, ip in lab_ips.items())
    first_down = {}
    for at, ip, size, _ in samples:
        if size is None:
            first_down.setdefault(names[ip], at)
    went = sorted(first_down, key=first_down.get)
    print("upgrade took %.1f s; plan %s (%s); members seen down in the order %s" % (
        upgrade["ended"] - upgrade["started"], plan["order"], plan["why"], went))
    assert plan["writer"] == "g1", "the writer writes to g1 first: it must be the member upgraded last"
    assert plan["order"][-1] == "g1" and plan["steps"] == dict((node, "upgrade") for node in NODES)
    assert went == plan["order"], "the members went down in the order %s, the plan said %s" % (went, plan["order"])


def test_the_cluster_never_dropped_below_n_minus_one(samples):
    sizes = [size for _, _, size, status in samples if status == "Primary"]
    print("%d samples during the upgrade; Primary component sizes seen: %s" % (len(samples), sorted(set(sizes))))
    assert len(samples) > 50, "too few samples during the upgrade to judge"
    assert min(sizes) == len(NODES) - 1, "the Primary component went to %d members" % min(sizes)


def test_writes_went_on_with_few_failures(drill, upgrade):
    times = []
    with open(os.path.join(drill["dir"], "acks.log"), encoding="utf-8") as handle:
        for line in handle:
            at = float(line.split()[1])
            if upgrade["started"] <= at <= upgrade["ended"]:
                times.append(at)
    gaps = [after - before for before, after in zip(times, times[1:])]
    summary = drill["summary"]
    print("upgrade: %d commits acknowledged during it, longest gap between two %.2f s; %d failed (%s), "
          "%d node switches" % (len(times), max(gaps), summary["failed_commits"], summary["failures"],
                                summary["node_switches"]))
    assert len(times) > 200
    # The writer's node stops once (upgraded last): its open commit fails and the writer moves on.
    assert summary["failed_commits"] <= 10
    assert max(gaps) < 15, "writes stopped for %.1f s" % max(gaps)


@pytest.mark.parametrize("node", NODES)
def test_every_acknowledged_row_is_on_every_node(lab_hosts, sql, drill, node):
    present = {int(row[0]) for row in sql(lab_hosts[node], "SELECT id FROM app.upgrade_counter")}
    missing = sorted(drill["acked"] - present)
    assert not missing, "%s lacks %d acknowledged rows, first %s" % (node, len(missing), missing[:10])


def test_limit_was_refused_before_any_change(drill):
    run = record(drill, "limit")
    assert run["rc"] != 0
    assert "g3 (members of pxc_galera_group=galera) are outside the play" in run["stdout"]
    assert "nothing was changed" in run["stdout"]


def test_check_mode_predicted_every_step(drill, upgrade):
    run = record(drill, "check")
    predicted = [line for line in run["stdout"].splitlines() if "would upgrade" in line]
    print("check mode: %s" % predicted)
    assert run["rc"] == 0
    assert "Order: g2, g3, g1" in run["stdout"]
    assert len(predicted) == len(NODES)
    # It changed nothing: the real run after it still found every member to upgrade.
    assert upgrade["plan"]["steps"] == dict((node, "upgrade") for node in NODES)


def test_the_role_refused_to_upgrade_a_running_member(drill):
    run = record(drill, "role")
    assert run["rc"] != 0
    assert "the role never upgrades a running member; run playbooks/rolling_upgrade_galera.yml" in run["stdout"]
    assert "galera-4 26.4.23-0+deb13u1 -> 26.4.27" in run["stdout"]


def test_a_second_run_skipped_every_member(upgrade):
    run = upgrade["second_run"]
    assert run["rc"] == 0, run["stdout"][-2000:]
    assert run["stdout"].count("already on the target, skipped") == len(NODES)
    assert "pxc_galera : Stop" not in run["stdout"]
