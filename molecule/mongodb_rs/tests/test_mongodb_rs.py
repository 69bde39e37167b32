"""Verify the mongod doubles after converge and the side_effect drills (molecule.yml says which): the set was
initiated once (on m3), grew to five (joined by m1, the grown group's new first host) and shrank to m1, m2,
m5 one voting member per reconfig, the rolling restart went
secondaries first and the primary last after a step-down with each member caught up before the next went down,
a SIGKILLed primary was replaced and rejoined, and no acknowledged majority insert was lost; then
playbooks/rolling_upgrade_rs.yml took the set from 7.0 to 8.0 (upgrade_drill.yml): a member killed half way stopped
the first run with the set serving, the second run finished, secondaries first and the old primary last after its
step-down."""
import json
import os
import re
import time

import pymongo
import pytest

ALL = ("m1", "m2", "m3", "m4", "m5")
FINAL = ("m1", "m2", "m5")          # the set after the shrink
REMOVED = ("m3", "m4")              # m3 initiated the set and is its primary until the shrink
# rotation_drill.yml, side_effect's last step, rotated molecule.yml's password on the set (m1, m2, m5); the members
# removed before it (m3, m4, REMOVED) keep the users they had
PASSWORD = 'molecule-rotated admin "pw"'
PASSWORD_BEFORE_ROTATION = "molecule-only-admin-pw"
DRILL = os.path.join(os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", "."), "drill")


# The set runs net.tls requireTLS with the collection's MongoDB CA (molecule.yml): every client here uses it.
CA_FILE = os.path.join(os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", "."), "tls", "mongodb-ca.pem")
TLS = dict(tls=True, tlsCAFile=CA_FILE)


def admin(ip, password=PASSWORD, **options):
    return pymongo.MongoClient(ip, 27017, directConnection=True, username="admin", password=password,
                               serverSelectionTimeoutMS=5000, **dict(TLS, **options))


def events(lab_hosts, names=ALL):
    out = []
    for name in names:
        text = lab_hosts[name].check_output("cat /var/lib/mongodb/events.jsonl")
        out += [dict(json.loads(line), node=name) for line in text.splitlines() if line.strip()]
    return sorted(out, key=lambda e: e["time"])


def drill_times():
    with open(os.path.join(DRILL, "times.log"), encoding="utf-8") as handle:
        return dict((name, float(value)) for name, value in (line.split() for line in handle if line.strip()))


def drill_json(name):
    with open(os.path.join(DRILL, name), encoding="utf-8") as handle:
        return json.load(handle)


def samples():
    with open(os.path.join(DRILL, "samples.jsonl"), encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def primary_of(lab_ips):
    for name in FINAL:
        status = admin(lab_ips[name]).admin.command("replSetGetStatus")
        for member in status["members"]:
            if member["stateStr"] == "PRIMARY":
                return member["name"]
    raise AssertionError("no primary among %s" % (FINAL,))


def node_of(lab_ips, address):
    return next(name for name, ip in lab_ips.items() if address == "%s:27017" % ip)


def test_mongod_runs_under_systemd_as_mongodb(lab_hosts):
    for node in ALL:
        host = lab_hosts[node]
        assert host.service("mongod").is_running and host.service("mongod").is_enabled, node
        assert host.process.get(comm="python3", user="mongodb")
        assert host.file("/etc/mongodb/keyfile").mode == 0o400
        assert host.file("/etc/dbops/mongodb-admin.yml").mode == 0o600
        assert host.package("mongodb-double").is_installed


def test_authentication_is_enforced(lab_ips):
    anonymous = pymongo.MongoClient(lab_ips["m5"], 27017, directConnection=True, serverSelectionTimeoutMS=5000,
                                    **TLS)
    try:
        anonymous.admin.command("replSetGetStatus")
        raise AssertionError("replSetGetStatus answered without a login")
    except pymongo.errors.OperationFailure as err:
        assert err.code == 13


def test_the_set_was_initiated_once_and_joined_by_the_new_first_host(lab_hosts):
    initiated = [e for e in events(lab_hosts) if e["event"] == "initiated"]
    assert [e["node"] for e in initiated] == ["m3"], initiated
    grow = drill_json("grow.json")
    # m1, the grown group's first host, was new: the module found the set on the others and did not initiate.
    assert not grow["initiate"]["changed"] and grow["initiate"]["members_differ"], grow["initiate"]


def test_grow_and_shrink_changed_one_voting_member_per_reconfig(lab_hosts, lab_ips):
    grow, shrink = drill_json("grow.json")["reconfigure"], drill_json("shrink.json")["reconfigure"]
    print("grow steps: %s\nshrink steps: %s" % (grow["steps"], shrink["steps"]))
    times = drill_times()
    print("grow 3->5: %.1f s (role run), shrink 5->3: %.1f s (role run)" % (
        times["grow_end"] - times["grow_start"], times["shrink_end"] - times["grow_end"]))
    added = ["%s:27017" % lab_ips[n] for n in ("m1", "m2")]
    assert [s.split(" - ")[1] for s in grow["steps"]] == ["add voting member %s" % a for a in added]
    removed = ["%s:27017" % lab_ips[n] for n in REMOVED]
    # m3, the primary, leaves: m4 (leaving too) loses its priority first, then m3 steps down once.
    assert "priority 0 for %s before %s steps down" % (removed[1], removed[0]) in shrink["steps"][0], shrink["steps"]
    assert [s for s in shrink["steps"] if s.startswith("step down")] == ["step down %s" % removed[0]]
    assert sorted(s.split(" - ")[1] for s in shrink["steps"] if " - remove " in s) == [
        "remove voting member %s" % r for r in removed]
    # Every reconfig the members recorded changed the member list by at most one host.
    reconfigs = [set(e["members"]) for e in events(lab_hosts) if e["event"] == "reconfig" and "members" in e]
    assert len(reconfigs) >= 4
    for before, after in zip(reconfigs, reconfigs[1:]):
        assert len(before ^ after) <= 1, (before, after)
    # Each reconfig waited for the previous one to settle: a member it added had stopped being newlyAdded
    # (the primary's automatic reconfig) before the next reconfig.
    history = [e for e in events(lab_hosts) if e["event"] in ("initiated", "reconfig") and "members" in e]
    cleared = dict((e["member"], e["version"]) for e in events(lab_hosts) if e["event"] == "newly_added_cleared")
    for before, change, after in zip(history, history[1:], history[2:]):
        for member in set(change["members"]) - set(before["members"]):
            assert change["version"] < cleared.get(member, -1) < after["version"], (
                "reconfig to version %s came before %s (added in version %s) stopped being newlyAdded"
                % (after["version"], member, change["version"]))
    config = admin(lab_ips["m5"]).admin.command("replSetGetConfig")["config"]
    assert sorted(m["host"] for m in config["members"]) == sorted("%s:27017" % lab_ips[n] for n in FINAL)
    assert not [m for m in config["members"] if m.get("newlyAdded")]
    for name in REMOVED:
        removed = admin(lab_ips[name], password=PASSWORD_BEFORE_ROTATION)
        assert removed.admin.command("replSetGetStatus")["myState"] == 10, name   # REMOVED


def restarts(lab_hosts, start, end):
    """{node: (shutdown time, start time)} of the restarts between start and end."""
    seen = {}
    for event in events(lab_hosts, FINAL):
        if start <= event["time"] <= end and event["event"] in ("shutdown", "start"):
            seen.setdefault(event["node"], []).append((event["event"], event["time"]))
    out = {}
    for node, items in seen.items():
        assert [kind for kind, _t in items] == ["shutdown", "start"], (node, items)
        out[node] = (items[0][1], items[1][1])
    return out


def test_rolling_restart_secondaries_first_primary_last_after_a_stepdown(lab_hosts, lab_ips):
    times = drill_times()
    done = restarts(lab_hosts, times["roll_start"], times["roll_end"])
    assert sorted(done) == sorted(FINAL), done
    order = sorted(done, key=lambda n: done[n][0])
    first_primary = [s["host"] for s in samples() if s["t"] <= times["roll_start"] and s.get("primary")][-1]
    assert order[-1] == node_of(lab_ips, first_primary), (order, first_primary)
    stepdowns = [e for e in events(lab_hosts, [order[-1]]) if e["event"] == "stepdown"
                 and e["reason"] == "replSetStepDown" and times["roll_start"] <= e["time"] <= done[order[-1]][0]]
    assert stepdowns, "%s was not stepped down before its restart" % order[-1]
    print("rolling restart: %.1f s, order %s" % (times["roll_end"] - times["roll_start"], order))


def down_intervals(records):
    """{host: [(first down sample, last down sample), ...]} from the sampler's records."""
    out, current = {}, {}
    for record in records:
        host = record["host"]
        if not record["up"]:
            current.setdefault(host, [record["t"], record["t"]])[1] = record["t"]
        elif host in current:
            out.setdefault(host, []).append(tuple(current.pop(host)))
    for host, interval in current.items():
        out.setdefault(host, []).append(tuple(interval))
    return out


def test_rolling_restart_never_had_two_members_down_and_each_caught_up_first(lab_hosts, lab_ips):
    times = drill_times()
    records = [s for s in samples() if times["roll_start"] <= s["t"] <= times["roll_end"]]
    intervals = [(a, b, host) for host, spans in down_intervals(records).items() for a, b in spans]
    for a1, b1, h1 in intervals:
        for a2, b2, h2 in intervals:
            assert h1 == h2 or b1 < a2 or b2 < a1, "%s and %s were down at once" % (h1, h2)
    done = restarts(lab_hosts, times["roll_start"], times["roll_end"])
    order = sorted(done, key=lambda n: done[n][0])
    for member, following in zip(order, order[1:]):
        address = "%s:27017" % lab_ips[member]
        back = done[member][1]
        # The primary's position when the member came back, then the first sample where the member had it.
        primary_then = [s for s in records if s["t"] >= back and s.get("primary")][0]["optime"]
        caught_up = [s["t"] for s in records if s["host"] == address and s["t"] >= back and s["up"]
                     and s["optime"] >= primary_then]
        assert caught_up and caught_up[0] < done[following][0], (
            "%s went down at %.2f before %s caught up (%s)" % (following, done[following][0], member, caught_up[:1]))


def test_a_killed_primary_is_replaced_and_rejoins(lab_hosts, lab_ips):
    killed = [n for n in FINAL if lab_hosts[n].file("/root/killed_at").exists]
    assert len(killed) == 1, killed
    killed = killed[0]
    killed_at = float(lab_hosts[killed].file("/root/killed_at").content_string)
    address = "%s:27017" % lab_ips[killed]
    after = [s for s in samples() if s["t"] > killed_at]
    new_primary = [s for s in after if s.get("primary") and s["host"] != address]
    assert new_primary, "no other member became primary after the kill"
    print("kill -9 of the primary %s: %s primary after %.1f s" % (
        killed, node_of(lab_ips, new_primary[0]["host"]), new_primary[0]["t"] - killed_at))
    # SIGKILL: the killed process wrote no shutdown event; a new process started and is SECONDARY again.
    # Up to the upgrade drill, which restarts every member again.
    upgrade_start = drill_times()["upgrade_check_start"]
    mine = [e for e in events(lab_hosts, [killed]) if e["event"] in ("start", "shutdown") and e["time"] < upgrade_start]
    before = [e for e in mine if e["time"] < killed_at]
    assert before[-1]["event"] == "start", before[-1]
    assert [e["event"] for e in mine if e["time"] > killed_at] == ["start"]
    status = admin(lab_ips[killed]).admin.command("replSetGetStatus")
    assert status["myState"] in (1, 2), status["myState"]
    # The new primary took majority inserts after the kill.
    writes = admin(lab_ips[killed], readPreference="secondaryPreferred").drill.acks
    assert writes.count_documents({"at": {"$gt": new_primary[0]["t"]}}) > 0


def test_no_acknowledged_insert_was_lost(lab_ips):
    with open(os.path.join(DRILL, "writer.json"), encoding="utf-8") as handle:
        summary = json.load(handle)
    with open(os.path.join(DRILL, "acks.txt"), encoding="utf-8") as handle:
        acked = {int(line) for line in handle if line.strip()}
    print("writer: %s" % summary)
    assert summary["acked"] == len(acked) > 0
    assert len(summary["primaries_written"]) >= 3, summary   # the roll's step-down and the kill moved the primary
    for name in FINAL:
        client = admin(lab_ips[name], readPreference="secondaryPreferred")
        deadline = time.time() + 15
        while True:
            present = {doc["_id"] for doc in client.drill.acks.find({}, {"_id": 1})}
            missing = acked - present
            if not missing or time.time() > deadline:
                break
            time.sleep(0.5)
        assert not missing, "%s lacks %d acknowledged inserts, e.g. %s" % (name, len(missing), sorted(missing)[:5])


def test_majority_write_is_read_on_every_secondary(lab_ips):
    primary = primary_of(lab_ips)
    marker = "marker-%d" % time.time_ns()
    admin(primary.split(":")[0]).test.get_collection(
        "probe", write_concern=pymongo.WriteConcern(w="majority", wtimeout=10000)).insert_one({"_id": marker})
    for name in FINAL:
        if "%s:27017" % lab_ips[name] == primary:
            continue
        probe = admin(lab_ips[name], readPreference="secondaryPreferred").test.probe
        deadline = time.time() + 10
        while probe.find_one({"_id": marker}) is None and time.time() < deadline:
            time.sleep(0.2)
        assert probe.find_one({"_id": marker}) is not None, name


# MongoDB's OS settings (roles/mongodb_rs/tasks/os_settings.yml). The lab's containers have a read-only /sys
# and /proc/sys, so molecule.yml sets mongodb_rs_os_settings_enforce false: the role applies what it can,
# records the rest in /etc/dbops/mongodb-os-settings.json and warns. These checks hold the record to the truth.

def dropin_limits(host):
    text = host.check_output("cat /etc/systemd/system/mongod.service.d/60-dbops-limits.conf")
    return dict(line.split("=", 1) for line in text.splitlines() if line.startswith("Limit"))


def test_mongod_runs_with_the_limits_of_its_drop_in(lab_hosts):
    from ansible_collections.dbops.clusters.plugins.module_utils import mongodb_os as rules
    for name in FINAL:
        host = lab_hosts[name]
        pid = host.check_output("systemctl show --property MainPID --value mongod").strip()
        assert pid not in ("", "0"), name
        observed = rules.parse_proc_limits(host.check_output("cat /proc/%s/limits" % pid))
        wanted = dropin_limits(host)
        assert set(wanted) == set(rules.PROC_LIMIT_NAMES), wanted
        assert rules.limit_problems(wanted, observed) == [], (name, wanted, observed)
        # The documented value, or PID 1's hard limit when this container's systemd cannot raise it.
        pid1 = rules.parse_proc_limits(host.check_output("cat /proc/1/limits"))
        can_raise = rules.has_capability(host.check_output("cat /proc/1/status"), rules.CAP_SYS_RESOURCE)
        hard = pid1["LimitNOFILE"][1]
        expected = 64000 if can_raise or hard is None or hard >= 64000 else hard
        assert int(wanted["LimitNOFILE"]) == expected, (name, wanted, hard, can_raise)
        print("%s: mongod pid %s LimitNOFILE %s LimitNPROC %s (PID 1 hard %s, CAP_SYS_RESOURCE %s)" % (
            name, pid, wanted["LimitNOFILE"], wanted["LimitNPROC"], hard, can_raise))
        # 8.0's per-CPU caches: glibc's rseq left to TCMalloc.
        environ = host.check_output("tr '\\0' '\\n' < /proc/%s/environ" % pid).splitlines()
        assert "GLIBC_TUNABLES=glibc.pthread.rseq=0" in environ


def test_the_os_settings_record_says_what_this_host_allowed(lab_hosts):
    from ansible_collections.dbops.clusters.plugins.module_utils import mongodb_os as rules
    for name in FINAL:
        host = lab_hosts[name]
        record = json.loads(host.check_output("cat /etc/dbops/mongodb-os-settings.json"))
        assert record["release"] == "8.0"
        seen = dict((s["name"], s) for s in record["settings"])
        assert seen["THP enabled"]["desired"] == "always" and seen["THP defrag"]["desired"] == "defer+madvise"
        assert seen["vm.swappiness"]["desired"] == 1 and seen["vm.max_map_count"]["desired"] == 102400
        for item in record["settings"]:
            if item["outcome"] == "applied":
                value = host.check_output("cat %s" % item["path"])
                value = rules.selected(value) if item["name"] in ("THP enabled", "THP defrag") else value
                assert rules.satisfied(value, item["desired"], item["compare"]), (name, item, value)
            elif item["outcome"] == "not settable":
                # Really not writable here: writing the current value back is refused by the kernel.
                write = host.run("cat %s > %s" % (item["path"], item["path"]))
                assert write.rc != 0 and "Read-only file system" in write.stderr, (name, item, write.stderr)
                assert any(line.startswith(item["name"]) for line in record["not_settable"]), item
            else:
                assert item["outcome"] in ("not applicable", "absent"), item
        print("%s: %s" % (name, "; ".join("%s %s" % (s["name"], s["outcome"]) for s in record["settings"])))
        assert host.service("dbops-mongodb-os").is_enabled
        sysctl_d = host.check_output("cat /etc/sysctl.d/60-dbops-mongodb.conf")
        assert "vm.swappiness = 1" in sysctl_d and "vm.max_map_count = " in sysctl_d


# ----------------------------------------------------------------------------------- TLS (net.tls requireTLS)

@pytest.mark.parametrize("node", FINAL)
def test_the_member_runs_require_tls_with_the_collections_ca(lab_hosts, lab_ips, node):
    conf = lab_hosts[node].file("/etc/mongod.conf").content_string
    assert "mode: requireTLS" in conf and "certificateKeyFile: /etc/mongodb/tls/server.pem" in conf
    pem = lab_hosts[node].file("/etc/mongodb/tls/server.pem")
    assert (pem.user, pem.mode) == ("mongodb", 0o600) and "PRIVATE KEY" in pem.content_string
    # The server's name is checked (pymongo's default): the member's address is in its certificate.
    assert admin(lab_ips[node]).admin.command("ping")["ok"] == 1
    started = [e for e in events(lab_hosts, [node]) if e["event"] == "tls"]
    assert started and started[-1]["mode"] == "requireTLS", started[-1:]


def test_plaintext_is_refused(lab_ips):
    """Refused by the TLS requirement, not by a server that is down: a TLS client is answered first, and the
    plaintext client's connection is closed, never refused."""
    assert admin(lab_ips["m5"]).admin.command("ping")["ok"] == 1
    plain = pymongo.MongoClient(lab_ips["m5"], 27017, directConnection=True, serverSelectionTimeoutMS=3000)
    with pytest.raises(pymongo.errors.ServerSelectionTimeoutError) as refused:
        plain.admin.command("ping")
    assert "Connection refused" not in str(refused.value), refused.value


def test_a_client_that_does_not_trust_the_collections_ca_is_refused(lab_ips):
    """Without the CA file pymongo checks the server against the system's CAs, which never signed it."""
    stranger = pymongo.MongoClient(lab_ips["m5"], 27017, directConnection=True, serverSelectionTimeoutMS=3000,
                                   tls=True)
    with pytest.raises(pymongo.errors.ServerSelectionTimeoutError, match="certificate verify failed"):
        stranger.admin.command("ping")


def test_the_modules_connect_over_tls(lab_hosts):
    credentials = lab_hosts["m1"].file("/etc/dbops/mongodb-admin.yml")
    assert credentials.mode == 0o600
    assert "tls: true" in credentials.content_string and "tls_ca_file: /etc/mongodb/tls/ca.pem" in \
        credentials.content_string


def test_dropping_tls_in_one_run_was_refused_before_any_change(lab_hosts):
    for node in FINAL:
        refusal = lab_hosts[node].file("/root/tls-refusal.txt").content_string
        assert "mongodb_rs_tls_mode" in refusal and "requireTLS and this run asks for disabled" in refusal, refusal
        assert "one step at a time" in refusal
        assert "mode: requireTLS" in lab_hosts[node].file("/etc/mongod.conf").content_string


# ------------------------------------------------ rolling upgrade 7.0 -> 8.0 (upgrade_drill.yml, rolling_upgrade_rs.yml)

def drill_text(name):
    with open(os.path.join(DRILL, name), encoding="utf-8") as handle:
        return handle.read()


def upgrade_members():
    """The set the drill upgraded (m1, m2, m5 after the other drills; the drill can run alone on another group)."""
    return tuple(drill_text("upgrade_members.txt").split())


def upgraded(lab_hosts, start, end):
    """[(node, time)] of the members that started on 8.0 between start and end, in time order."""
    return [(e["node"], e["time"]) for e in events(lab_hosts, upgrade_members())
            if start <= e["time"] <= end and e["event"] == "start" and e.get("binary_version") == "8.0"]


def test_the_upgrade_in_check_mode_predicted_the_steps_and_changed_nothing(lab_hosts):
    times = drill_times()
    log = drill_text("upgrade_check.log")
    for line in ["upgrade %s 7.0.0 -> 8.0" % n for n in upgrade_members()] + [
            "stepdown m", "fcv_kept the set featureCompatibilityVersion stays 7.0"]:
        assert line in log, line
    moved = [e for e in events(lab_hosts, upgrade_members()) if times["upgrade_check_start"] <= e["time"] <= times["upgrade1_start"]
             and e["event"] in ("shutdown", "start", "stepdown")]
    assert not moved, moved


def test_a_member_killed_mid_upgrade_stopped_the_run_with_the_set_serving(lab_hosts, lab_ips):
    times = drill_times()
    killed = first = drill_text("upgrade_killed.txt").strip()
    log = drill_text("upgrade1.log")
    assert re.search(r"^rc=[1-9]", log, re.M), log[-2000:]
    # Only the first secondary moved to 8.0 in the first run, and it was killed on 8.0: no shutdown (SIGKILL).
    assert [n for n, _t in upgraded(lab_hosts, times["upgrade1_start"], times["upgrade1_end"])] == [first]
    assert not [e for e in events(lab_hosts, [killed]) if times["upgrade_killed"] <= e["time"] <= times["upgrade1_end"]
                and e["event"] in ("shutdown", "start")]
    serving = drill_json("upgrade_serving.json")
    assert times["upgrade1_end"] <= serving["at"] and serving["acked"] - serving["at"] < 30, serving
    assert serving["primary"] != "%s:27017" % lab_ips[killed], serving
    print("upgrade run 1: stopped %.1f s after the kill of %s; a majority write acknowledged by %s in %.1f s" % (
        times["upgrade1_end"] - times["upgrade_killed"], killed, node_of(lab_ips, serving["primary"]),
        serving["acked"] - serving["at"]))
    assert times["upgrade1_end"] - times["upgrade_killed"] < 120
    for name in upgrade_members():
        assert admin(lab_ips[name], readPreference="secondaryPreferred").drill.upgrade.find_one(
            {"_id": "while-killed"}) is not None, name


def test_the_second_run_finished_secondaries_first_and_the_old_primary_last_after_its_stepdown(lab_hosts, lab_ips):
    times = drill_times()
    first = drill_text("upgrade_killed.txt").strip()
    members = upgrade_members()
    window = [e for e in events(lab_hosts, members) if times["upgrade2_start"] <= e["time"] <= times["upgrade2_end"]]
    order = [n for n, _t in upgraded(lab_hosts, times["upgrade2_start"], times["upgrade2_end"])]
    # Resumed: the member on 8.0 since the first run was left alone, every other one upgraded once.
    assert sorted(order) == sorted(set(members) - {first}), order
    assert not [e for e in window if e["node"] == first and e["event"] in ("shutdown", "start")]
    # The primary when the run started (the last election before it) went last, after its own step-down, and
    # every other member was back on 8.0 before that step-down.
    primary = [e for e in events(lab_hosts, members) if e["event"] == "elected"
               and e["time"] < times["upgrade2_start"]][-1]["node"]
    assert order[-1] == primary, (order, primary)
    stepdown = [e["time"] for e in window if e["node"] == primary and e["event"] == "stepdown"
                and e["reason"] == "replSetStepDown"]
    shutdown = [e["time"] for e in window if e["node"] == primary and e["event"] == "shutdown"]
    assert stepdown and shutdown and stepdown[0] < shutdown[0], (stepdown, shutdown)
    for node, started in upgraded(lab_hosts, times["upgrade2_start"], times["upgrade2_end"]):
        if node != primary:
            assert started < stepdown[0], (node, started, stepdown[0])
    # One member down at a time: each shutdown is followed by the same member's start before the next shutdown.
    moves = [(e["node"], e["event"]) for e in window if e["event"] in ("shutdown", "start")]
    assert moves == [item for node in order for item in ((node, "shutdown"), (node, "start"))], moves
    print("upgrade run 2: %.1f s, order %s (the primary %s last)" % (
        times["upgrade2_end"] - times["upgrade2_start"], order, primary))


def test_every_member_runs_8_0_and_fcv_stayed_where_it_was(lab_ips):
    for name in upgrade_members():
        assert admin(lab_ips[name]).admin.command("buildInfo")["version"].startswith("8.0."), name
    fcv = admin(lab_ips[upgrade_members()[0]]).admin.command("getParameter", 1, featureCompatibilityVersion=1)
    assert fcv["featureCompatibilityVersion"]["version"] == "7.0"   # not asked to move
