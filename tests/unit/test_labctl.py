"""lab/labctl.py without podman: profiles, lanes, package files, the inventory, and the progress and recap of
side-by-side playbook runs (parsed from the default callback's output)."""
import glob
import hashlib
import importlib.util
import io
import os

import pytest
import yaml

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
SPEC = importlib.util.spec_from_file_location("labctl", os.path.join(ROOT, "lab", "labctl.py"))
labctl = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(labctl)
TOPOLOGY = os.path.join(ROOT, "lab", "topology.yml")


def write_topology(tmp_path, **extra):
    topo = {"name": "t", "network": {"name": "t", "subnet": "10.1.2.0/24"},
            "inventory": str(tmp_path / "inventory" / "t.yml"),
            "hosts": [{"name": "a", "ip": "10.1.2.1", "groups": ["one"]},
                      {"name": "b", "ip": "10.1.2.2", "groups": ["two"]}]}
    topo.update(extra)
    path = tmp_path / "topology.yml"
    path.write_text(yaml.safe_dump(topo))
    return str(path)


def test_default_lab_is_the_seeds_stack_and_every_host_is_in_one_lane():
    topo = labctl.load_topology(TOPOLOGY, "")
    groups = {h["name"]: h["groups"] for h in topo["hosts"]}
    assert [h for h, g in groups.items() if "galera" in g] == ["db1", "db2", "db3"]
    assert [h for h, g in groups.items() if "proxysql" in g] == ["proxy1", "proxy2"]
    assert not [h for h, g in groups.items() if "gr" in g], "the default lab stays small"
    lanes = labctl.lane_hosts(topo)
    # The proxies converge beside the cluster, not after it (a rerun's time is the longest lane's).
    assert lanes == {"galera": ["db1", "db2", "db3", "gbk1"], "proxies": ["proxy1", "proxy2"],
                     "mysql": ["mysql1", "mysql2", "mbk1"]}
    assert labctl.vip_addresses(topo) == [("proxysql", "10.89.100.100")]


def test_gr_profile_adds_its_hosts_settings_and_lane():
    topo = labctl.load_topology(TOPOLOGY, "gr")
    assert [h["name"] for h in topo["hosts"]][-3:] == ["gr1", "gr2", "gr3"]
    assert topo["group_vars"]["gr"]["group_replication_group"] == "gr"
    assert labctl.lane_hosts(topo)["gr"] == ["gr1", "gr2", "gr3"]
    assert "Group Replication" in topo["guide"] and "Failover drill" in topo["guide"]


def test_secrets_are_generated_lookups_never_literal_values():
    topo = labctl.load_topology(TOPOLOGY, "gr")
    secrets = {**topo["vars"], **{k: v for values in topo["group_vars"].values() for k, v in values.items()}}
    for name, value in secrets.items():
        if "password" in name and isinstance(value, str):
            assert "lookup('ansible.builtin.password', inventory_dir ~ '/secrets/" in value \
                or value in ("{{ lab_app_password }}", "{{ lab_proxysql_monitor_password }}"), name


def test_the_galera_lane_creates_the_monitor_account_the_proxies_log_in_with():
    # The proxies' lane runs beside the cluster's, so it cannot create the account on a cluster that may not
    # exist yet: the cluster's own accounts include it, with the user, password and privilege the proxies use.
    topo = labctl.load_topology(TOPOLOGY, "")
    proxies, galera = topo["group_vars"]["proxysql"], topo["group_vars"]["galera"]
    assert proxies["proxysql_create_monitor_account"] is False
    monitor = [u for u in galera["pxc_galera_users"] if u["name"] == "proxysql_monitor"]
    assert monitor == [{"name": "proxysql_monitor", "host": "%", "password": proxies["proxysql_monitor_password"],
                        "privileges": {"*.*": "USAGE"}, "update_password": "always"}]
    defaults = yaml.safe_load(open(os.path.join(labctl.REPO_DIR, "roles", "proxysql", "defaults", "main.yml")))
    assert defaults["proxysql_monitor_user"] == "proxysql_monitor" and defaults["proxysql_backend_group"] == "galera"


def test_unknown_profile_is_refused_with_the_known_ones(tmp_path):
    with pytest.raises(labctl.LabError, match="no profile 'nope'; profiles: big"):
        labctl.load_topology(write_topology(tmp_path, profiles={"big": {}}), "nope")


def test_up_records_the_profile_and_other_commands_follow_it(tmp_path):
    path = write_topology(tmp_path, profiles={"big": {"hosts": [{"name": "c", "ip": "10.1.2.3", "groups": ["x"]}]}})
    topo = labctl.load_topology(path, "big")
    labctl.write_inventory(topo)
    assert [h["name"] for h in labctl.load_topology(path)["hosts"]] == ["a", "b", "c"]
    assert [h["name"] for h in labctl.load_topology(path, "")["hosts"]] == ["a", "b"]


def test_a_host_in_two_lanes_or_in_none_is_refused(tmp_path):
    with pytest.raises(labctl.LabError, match="host a is in lanes l1 and l2"):
        labctl.load_topology(write_topology(tmp_path, configure={"lanes": {"l1": ["one"], "l2": ["one", "two"]}}))
    with pytest.raises(labctl.LabError, match="hosts in no lane .*: b"):
        labctl.load_topology(write_topology(tmp_path, configure={"lanes": {"l1": ["one"]}}))


def package_dir(tmp_path, names, sums=None):
    folder = tmp_path / "vendor"
    folder.mkdir()
    for name in names:
        (folder / name).write_bytes(name.encode())
    if sums is not None:
        (folder / "SHA256SUMS").write_text("".join(f"{digest}  {name}\n" for name, digest in sums.items()))
    return folder


def test_a_host_starts_from_its_engine_image_and_an_unknown_engine_is_refused(tmp_path):
    hosts = [{"name": "a", "ip": "10.1.2.1", "groups": ["one"], "engine_image": "mysql"},
             {"name": "b", "ip": "10.1.2.2", "groups": ["two"]}]
    topo = labctl.load_topology(write_topology(tmp_path, hosts=hosts), "")
    images = [labctl.host_image(topo, h) for h in topo["hosts"]]
    assert images == ["localhost/dbops-lab:trixie-mysql", "localhost/dbops-lab:trixie"]
    # every engine image the scenarios name is one lab/image/engines.txt defines
    named = set()
    for scenario in glob.glob(os.path.join(ROOT, "molecule", "*", "molecule.yml")):
        with open(scenario, encoding="utf-8") as handle:
            named |= {p["engine_image"] for p in yaml.safe_load(handle)["platforms"] if "engine_image" in p}
    assert {"mysql", "mariadb", "postgres"} <= named <= set(labctl.engines())
    hosts[1]["engine_image"] = "oracle"
    with pytest.raises(labctl.LabError, match="host b engine_image 'oracle' is not one of"):
        labctl.load_topology(write_topology(tmp_path, hosts=hosts), "")


def test_package_file_is_the_newest_match_and_its_checksum_is_verified(tmp_path):
    names = ["p_2.9.1_amd64.deb", "p_2.10.0_amd64.deb"]
    package_dir(tmp_path, names, {n: hashlib.sha256(n.encode()).hexdigest() for n in names})
    found = labctl.find_package_file("vendor/p_*_amd64.deb", base=str(tmp_path))
    assert found == str(tmp_path / "vendor" / "p_2.10.0_amd64.deb")


def test_package_file_with_a_wrong_checksum_or_none_is_refused(tmp_path):
    package_dir(tmp_path, ["p_1_amd64.deb"], {"p_1_amd64.deb": "0" * 64})
    with pytest.raises(labctl.LabError, match="differs from"):
        labctl.find_package_file("vendor/p_*_amd64.deb", base=str(tmp_path))
    with pytest.raises(labctl.LabError, match="no package file matches vendor/q_"):
        labctl.find_package_file("vendor/q_*_amd64.deb", base=str(tmp_path))


def test_package_file_not_listed_in_its_checksums_is_refused(tmp_path):
    package_dir(tmp_path, ["p_1_amd64.deb"], {"other.deb": "0" * 64})
    with pytest.raises(labctl.LabError, match="not listed in"):
        labctl.find_package_file("vendor/p_*_amd64.deb", base=str(tmp_path))


def test_inventory_carries_group_settings_and_resolved_package_files(tmp_path, monkeypatch):
    monkeypatch.setattr(labctl, "find_package_file", lambda pattern: "/abs/" + pattern)
    path = write_topology(tmp_path, group_vars={"one": {"k": 1}}, package_files={"two": {"f": "x_*.deb"}},
                          profiles={"p": {}})
    inv = labctl.inventory(labctl.load_topology(path, "p"))["all"]
    assert inv["children"]["one"]["vars"] == {"k": 1}
    assert inv["children"]["two"]["vars"] == {"f": "/abs/x_*.deb"}
    assert inv["vars"]["lab_profile"] == "p"


def test_default_lab_inventory_installs_the_vendored_proxysql():
    inv = labctl.inventory(labctl.load_topology(TOPOLOGY, ""))["all"]
    package = inv["children"]["proxysql"]["vars"]["proxysql_package_file"]
    assert os.path.isabs(package) and package.endswith("_amd64.deb") and os.path.isfile(package)


RUN = """
PLAY [Three-node Galera cluster] ***********************************************

TASK [Gathering Facts] *********************************************************
ok: [db1]

TASK [dbops.clusters.pxc_galera : Write the option file] ***********************
changed: [db2]
ok: [db1]

PLAY RECAP *********************************************************************
db1                        : ok=61   changed=0    unreachable=0    failed=0    skipped=20   rescued=0    ignored=0
db2                        : ok=61   changed=1    unreachable=0    failed=0    skipped=20   rescued=0    ignored=0
"""


def run_lane(text, rc, tmp_path):
    lane = labctl.Lane("galera", ["galera"], ["db1", "db2"], str(tmp_path / "galera.log"))
    (tmp_path / "galera.log").write_text(text)
    out = io.StringIO()
    progress = labctl.Progress(6, out=out)
    for line in text.splitlines():
        progress.line(lane, line)
    lane.rc = rc
    return lane, out.getvalue()


def test_progress_names_plays_and_changes_and_the_recap_counts_changes(tmp_path):
    lane, printed = run_lane(RUN, 0, tmp_path)
    assert "play: Three-node Galera cluster" in printed
    assert "changed db2      dbops.clusters.pxc_galera : Write the option file" in printed
    assert lane.recap["db2"]["changed"] == 1 and lane.tasks == 2
    out = io.StringIO()
    labctl.report_lanes([lane], 12.0, out=out)
    assert "changed: db2 (1)" in out.getvalue()
    lane.recap["db2"]["changed"] = 0
    out = io.StringIO()
    labctl.report_lanes([lane], 12.0, out=out)
    assert "changed=0 on every host" in out.getvalue()


def test_a_failed_lane_is_reported_with_its_log_tail(tmp_path):
    failed_run = RUN.replace("failed=0    skipped=20   rescued=0    ignored=0\n", "failed=1 x\n", 1)
    lane, _unused = run_lane(failed_run, 2, tmp_path)
    out = io.StringIO()
    with pytest.raises(labctl.LabError, match="configuring failed in galera"):
        labctl.report_lanes([lane], 5.0, out=out)
    assert "galera: exit 2" in out.getvalue() and "PLAY RECAP" in out.getvalue()


def test_ansible_reaches_the_hosts_over_ssh_by_address_with_the_options_molecule_uses(tmp_path):
    topo = labctl.load_topology(write_topology(tmp_path), "")
    inventory = labctl.inventory(topo)
    assert inventory["all"]["vars"]["ansible_connection"] == "ssh"
    assert inventory["all"]["vars"]["ansible_ssh_args"] == labctl.SSH_OPTIONS
    for host in topo["hosts"]:
        values = inventory["all"]["hosts"][host["name"]]
        assert values["ansible_host"] == values["lab_ip"] == host["ip"]
        assert values["lab_container"] == labctl.container_name(topo, host)
    config = yaml.safe_load(open(os.path.join(ROOT, ".config", "molecule", "config.yml"), encoding="utf-8"))
    assert config["provisioner"]["config_options"]["ssh_connection"]["ssh_args"] == labctl.SSH_OPTIONS
    # the host's identity is checked against the key read through podman, never taken on first use
    assert "StrictHostKeyChecking=yes" in labctl.SSH_OPTIONS and "%h" in labctl.SSH_OPTIONS
    assert labctl.SSH_DIR == os.path.expanduser("~/.cache/dbops-lab/ssh")


def test_host_keys_read_through_podman_replace_only_this_labs_addresses(tmp_path, monkeypatch):
    monkeypatch.setattr(labctl, "SSH_DIR", str(tmp_path))
    monkeypatch.setattr(labctl, "SSH_KNOWN_HOSTS", str(tmp_path / "known_hosts"))
    monkeypatch.setattr(labctl, "SSH_KEY", str(tmp_path / "id_ed25519"))
    monkeypatch.setattr(labctl, "SSH_CONTROL_DIR", str(tmp_path / "cp"))
    (tmp_path / "known_hosts").write_text("10.9.9.9 ssh-ed25519 OTHERLAB\n10.1.2.1 ssh-ed25519 OLDKEY\n")
    topo = labctl.load_topology(write_topology(tmp_path), "")
    names = {labctl.container_name(topo, h): h["ip"] for h in topo["hosts"]}
    monkeypatch.setattr(labctl, "podman_exec_each", lambda containers, *argv: {
        name: "ssh-ed25519 KEY-%s root@%s\n" % (names[name], name) for name in containers})
    labctl.trust_host_keys(topo)
    lines = (tmp_path / "known_hosts").read_text().splitlines()
    assert "10.9.9.9 ssh-ed25519 OTHERLAB" in lines and not any("OLDKEY" in line for line in lines)
    for address in names.values():
        assert "%s ssh-ed25519 KEY-%s" % (address, address) in lines
    monkeypatch.setattr(labctl, "podman_exec_each", lambda containers, *argv: {name: "" for name in containers})
    with pytest.raises(labctl.LabError, match="no SSH host key in"):
        labctl.trust_host_keys(topo)
    # the lab key is made once, private to its owner
    assert oct((tmp_path / "id_ed25519").stat().st_mode & 0o777) == "0o600"


def test_memory_limit_is_optional_passed_to_podman_and_declared_to_the_roles(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(labctl, "podman", lambda *args, **_kw: calls.append(args))
    monkeypatch.setattr(labctl, "lab_ssh_key", lambda: "/keys/lab")
    path = write_topology(tmp_path, hosts=[{"name": "a", "ip": "10.1.2.1", "groups": ["one"], "memory_mb": 2048},
                                           {"name": "b", "ip": "10.1.2.2", "groups": ["two"]}])
    topo = labctl.load_topology(path, "")
    for host in topo["hosts"]:
        labctl.run_host(topo, host)
    limited, unlimited = calls
    assert limited[limited.index("--memory") + 1] == "2048m"
    assert limited[limited.index("--memory-swap") + 1] == "2048m", "no swap beyond the limit"
    assert "--memory" not in unlimited and "--memory-swap" not in unlimited, "no limit unless declared"
    # every host accepts the lab key, read-only
    assert "/keys/lab.pub:/etc/ssh/lab_authorized_keys:ro" in unlimited
    hosts = labctl.inventory(topo)["all"]["hosts"]
    assert hosts["a"]["dbops_memory_limit_mb"] == 2048
    assert "dbops_memory_limit_mb" not in hosts["b"]


@pytest.mark.parametrize("memory", [0, 32, "2g", 1.5, True])
def test_a_memory_limit_that_is_not_whole_mib_is_refused(tmp_path, memory):
    path = write_topology(tmp_path, hosts=[{"name": "a", "ip": "10.1.2.1", "memory_mb": memory}])
    with pytest.raises(labctl.LabError, match="host a memory_mb must be a whole number of MiB"):
        labctl.load_topology(path, "")


def test_up_refuses_a_running_host_whose_memory_limit_differs_from_the_topology(tmp_path, monkeypatch):
    path = write_topology(tmp_path, hosts=[{"name": "a", "ip": "10.1.2.1", "memory_mb": 2048}])
    topo = labctl.load_topology(path, "")
    monkeypatch.setattr(labctl, "ensure_image", lambda _topo: None)
    monkeypatch.setattr(labctl, "ensure_network", lambda _topo: False)
    monkeypatch.setattr(labctl, "container_states", lambda _topo: {labctl.container_name(topo, topo["hosts"][0]): "running"})
    monkeypatch.setattr(labctl, "memory_limit_mb", lambda _name: None)
    with pytest.raises(labctl.LabError, match="memory limit none MiB, the topology says 2048.*down' first"):
        labctl.cmd_up(topo, None)


def test_a_recreated_host_is_asked_for_its_facts_again(tmp_path):
    # configure keeps gathered facts between runs (jsonfile cache beside the inventory); a host that `up`
    # creates again, or a lab brought down, must not reuse them.
    topo = labctl.load_topology(write_topology(tmp_path), "")
    cache = labctl.fact_cache_dir(topo)
    assert cache == os.path.join(os.path.dirname(topo["inventory"]), "facts")
    os.makedirs(cache)
    for name in ("a", "b"):
        open(os.path.join(cache, name), "w").write("{}")
    labctl.forget_facts(topo, "a")
    labctl.forget_facts(topo, "nope")
    assert sorted(os.listdir(cache)) == ["b"]


# A stand-in for ansible-playbook: each call takes the next of its outputs (counted in a file), prints it, and
# exits with its status.
FAKE_PLAYBOOK = """#!/bin/sh
count=$(cat "$0.calls" 2>/dev/null || echo 0)
count=$((count + 1))
echo $count > "$0.calls"
cat "$0.out$count"
exit $(cat "$0.rc$count")
"""
OWN_FAILURE = RUN.replace("failed=0    skipped=20   rescued=0    ignored=0\n", "failed=1 x\n", 1) \
    + "fatal: [db1]: FAILED! => wsrep_cluster_size is 2, expected 3\n"


def run_fake_lanes(tmp_path, runs):
    fake = tmp_path / "ansible-playbook"
    fake.write_text(FAKE_PLAYBOOK)
    fake.chmod(0o755)
    for number, (text, rc) in enumerate(runs, 1):
        (tmp_path / f"ansible-playbook.out{number}").write_text(text)
        (tmp_path / f"ansible-playbook.rc{number}").write_text(str(rc))
    lane = labctl.Lane("galera", ["galera"], ["db1", "db2"], str(tmp_path / "galera.log"))
    out = io.StringIO()
    lanes = labctl.run_lanes([lane], lambda _lane: [str(fake)], dict(os.environ), labctl.Progress(6, out=out))
    calls = int((tmp_path / "ansible-playbook.calls").read_text())
    return lanes, calls, out.getvalue()


def test_a_failed_lane_runs_once_and_fails_the_lab(tmp_path):
    lanes, calls, _printed = run_fake_lanes(tmp_path, [(OWN_FAILURE, 2), (RUN, 0)])
    assert calls == 1 and lanes[0].rc == 2
    with pytest.raises(labctl.LabError, match="configuring failed in galera"):
        labctl.report_lanes(lanes, 1.0, out=io.StringIO())


def test_status_asks_each_running_host_once_and_names_the_vip_holder(tmp_path, monkeypatch, capsys):
    topo = labctl.load_topology(write_topology(
        tmp_path, hosts=[{"name": "p1", "ip": "10.1.2.1", "groups": ["proxysql"]},
                         {"name": "p2", "ip": "10.1.2.2", "groups": ["proxysql"]},
                         {"name": "off", "ip": "10.1.2.3", "groups": ["proxysql"]}],
        group_vars={"proxysql": {"keepalived_vips": [{"address": "10.1.2.100/24"}]}}), "")
    calls = []

    class Done:
        def __init__(self, stdout):
            self.stdout, self.returncode = stdout, 0

    def fake_podman(*args, check=True, capture=True):
        calls.append(args)
        if args[0] == "ps":
            return Done('[{"Names": ["t-p1"], "State": "running"}, {"Names": ["t-p2"], "State": "running"},'
                        ' {"Names": ["t-off"], "State": "exited"}]')
        held = "    inet 10.1.2.100/24 scope global eth0\n" if args[1] == "t-p2" else ""
        return Done("degraded\n2: eth0    inet 10.1.2.2/24 scope global eth0\n" + held)
    monkeypatch.setattr(labctl, "container_name", lambda topo, host: "t-" + host["name"])
    monkeypatch.setattr(labctl, "podman", fake_podman)
    labctl.cmd_status(topo, None)
    out = capsys.readouterr().out
    assert sorted(call[1] for call in calls if call[0] == "exec") == ["t-p1", "t-p2"], calls
    assert "VIP 10.1.2.100 (proxysql): held by p2\n" in out
    assert [line.split()[4] for line in out.splitlines()[1:4]] == ["degraded", "degraded", "-"]


def test_closing_a_master_that_removes_its_own_socket_is_not_an_error(tmp_path, monkeypatch):
    # `ssh -O exit` ends the master, which removes its control socket itself, sometimes only after ssh returned:
    # `down` failed a scenario's last destroy on that race ("cp/10.89.203.13 not found").
    monkeypatch.setattr(labctl, "SSH_CONTROL_DIR", str(tmp_path))
    gone, stale = tmp_path / "10.0.0.1", tmp_path / "10.0.0.2"
    gone.write_text("")
    stale.write_text("")
    calls = []

    def master_exits(argv, **_kwargs):
        calls.append(argv)
        if str(gone) in " ".join(argv):
            gone.unlink()

    monkeypatch.setattr(labctl.subprocess, "run", master_exits)
    exists = os.path.exists
    # the race: the socket is still listed when looked for, and gone when removed
    monkeypatch.setattr(labctl.os.path, "exists", lambda path: path == str(gone) or exists(path))
    labctl.close_ssh_masters(["10.0.0.1", "10.0.0.2", "10.0.0.3"])
    assert not gone.exists() and not stale.exists() and len(calls) == 2
