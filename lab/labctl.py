#!/usr/bin/env python3
"""The local podman lab: hosts with systemd as PID 1 on a podman network with fixed addresses.

    labctl.py [--topology FILE] [--profile NAME] up | down | status | inventory | shell HOST | image [--force]
                                                 | configure | guide

A topology file names the lab, its network and its hosts (see lab/topology.yml). `up` builds the image
when needed, creates what is missing, waits until systemd is up in every host, writes the Ansible
inventory and prints the hosts; a second `up` changes nothing. `configure` runs the topology's playbook
once per lane, the lanes side by side, and prints their progress and one recap. `guide` prints the
topology's how-to (connecting, drills). `down` removes the lab's containers, their volumes and its network.
A profile (`--profile gr`) adds the hosts, settings and lanes of `profiles.<name>` to the topology; `up`
records it in the inventory, and the other commands use the recorded one. Molecule's shared create/destroy
playbooks drive this same code.
"""
import argparse
import concurrent.futures
import fcntl
import glob
import hashlib
import ipaddress
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

import yaml

LAB_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_DIR = os.path.dirname(LAB_DIR)
DEFAULT_TOPOLOGY = os.path.join(LAB_DIR, "topology.yml")
LABEL = "dbops.lab"
# NET_ADMIN/NET_RAW for keepalived, nft and failure drills; SYS_ADMIN because units with BindPaths
# (haproxy's, for one) fail with 226/NAMESPACE without it.
CAPABILITIES = ("NET_ADMIN", "NET_RAW", "SYS_ADMIN")
# Ansible reaches the hosts over SSH with one persistent master connection per host: a task is then a session on
# an open connection (about 20 ms here) where a podman exec took about 0.3 s, most of it podman's own work. The
# lab key is this machine's (made once), every host accepts it for root only (mounted read-only as
# /etc/ssh/lab_authorized_keys), and the hosts' own keys, made at their first boot, are read through podman
# into known_hosts before Ansible connects, so the controller checks every host's identity.
# The masters are named by the host's address: a host created again gets a new master, never its old one's.
# .config/molecule/config.yml (ssh_connection.ssh_args) carries the same options (tests/unit/test_labctl.py).
# They are ssh_args, not ssh_common_args: ssh takes an option's first value, and Ansible puts ssh_args first.
SSH_DIR = os.path.expanduser("~/.cache/dbops-lab/ssh")   # as SSH_OPTIONS spell it
SSH_KEY = os.path.join(SSH_DIR, "id_ed25519")
SSH_KNOWN_HOSTS = os.path.join(SSH_DIR, "known_hosts")
SSH_CONTROL_DIR = os.path.join(SSH_DIR, "cp")
SSH_OPTIONS = ("-o IdentityFile=~/.cache/dbops-lab/ssh/id_ed25519 -o IdentitiesOnly=yes"
               " -o UserKnownHostsFile=~/.cache/dbops-lab/ssh/known_hosts -o StrictHostKeyChecking=yes"
               " -o ControlMaster=auto -o ControlPersist=900s -o ControlPath=~/.cache/dbops-lab/ssh/cp/%h"
               " -o ServerAliveInterval=5 -o ServerAliveCountMax=6 -o ConnectTimeout=30 -o LogLevel=ERROR")


class LabError(Exception):
    """A failure with a message that says what to do."""


def podman(*args, check=True, capture=True):
    proc = subprocess.run(["podman", *args], text=True,
                          stdout=subprocess.PIPE if capture else None,
                          stderr=subprocess.PIPE if capture else None)
    if check and proc.returncode != 0:
        raise LabError(f"podman {' '.join(args)} failed: {(proc.stderr or '').strip()}")
    return proc


def podman_exec_each(names, *argv):
    """The stdout of `podman exec NAME argv...` for each container, run side by side (each podman exec takes
    about 0.25 s, mostly podman's own work: one after another they made `lab status` wait seconds)."""
    names = list(names)
    if not names:
        return {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(names)) as pool:
        outputs = pool.map(lambda name: podman("exec", name, *argv, check=False).stdout, names)
        return dict(zip(names, outputs))


def load_topology(path, profile=None):
    """The topology of `path` with `profile` applied; profile None: the one `up` recorded, if any."""
    with open(path, encoding="utf-8") as handle:
        topo = yaml.safe_load(handle)
    for key in ("name", "network", "hosts"):
        if key not in topo:
            raise LabError(f"{path}: missing '{key}'")
    topo["path"] = path
    topo.setdefault("image", os.environ.get("LAB_IMAGE", "localhost/dbops-lab:trixie"))
    topo.setdefault("inventory", os.path.join(LAB_DIR, "inventory", f"{topo['name']}.yml"))
    for key in ("vars", "group_vars", "package_files", "profiles"):
        topo.setdefault(key, {})
    topo.setdefault("guide", "")
    if profile is None:
        profile = recorded_profile(topo)
    apply_profile(topo, profile)
    subnet = ipaddress.ip_network(topo["network"]["subnet"])
    seen = {}
    for host in topo["hosts"]:
        address = ipaddress.ip_address(host["ip"])
        if address not in subnet:
            raise LabError(f"{path}: host {host['name']} address {address} is outside {subnet}")
        if host["ip"] in seen:
            raise LabError(f"{path}: hosts {seen[host['ip']]} and {host['name']} share {host['ip']}")
        seen[host["ip"]] = host["name"]
        host.setdefault("groups", [])
        host.setdefault("vars", {})
        if host.get("engine_image") and host["engine_image"] not in engines():
            raise LabError(f"{path}: host {host['name']} engine_image {host['engine_image']!r} is not one of "
                           f"{', '.join(engines())} (lab/image/engines.txt)")
        memory = host.setdefault("memory_mb", None)
        if memory is not None and (isinstance(memory, bool) or not isinstance(memory, int) or memory < 64):
            raise LabError(f"{path}: host {host['name']} memory_mb must be a whole number of MiB, at least 64 "
                           f"(got {memory!r})")
    groups = {g for h in topo["hosts"] for g in h["groups"]}
    for key in ("group_vars", "package_files"):
        unknown = sorted(set(topo[key]) - groups)
        if unknown:
            raise LabError(f"{path}: {key} for groups no host is in: {', '.join(unknown)}")
    if "configure" in topo:
        lane_hosts(topo)        # refuse lanes that miss a host or share one
    return topo


def apply_profile(topo, profile):
    """Add a profile's hosts, variables, package files, lanes and guide to the topology."""
    topo["profile"] = profile or ""
    if not profile:
        return
    if profile not in topo["profiles"]:
        raise LabError(f"{topo['path']}: no profile '{profile}'; profiles: "
                       + (", ".join(sorted(topo["profiles"])) or "none"))
    extra = topo["profiles"][profile]
    topo["hosts"] = topo["hosts"] + extra.get("hosts", [])
    topo["vars"] = {**topo["vars"], **extra.get("vars", {})}
    for key in ("group_vars", "package_files"):
        for group, values in extra.get(key, {}).items():
            topo[key][group] = {**topo[key].get(group, {}), **values}
    if "lanes" in extra:
        topo.setdefault("configure", {"lanes": {}})
        topo["configure"]["lanes"] = {**topo["configure"].get("lanes", {}), **extra["lanes"]}
    if extra.get("guide"):
        topo["guide"] = topo["guide"].rstrip("\n") + "\n\n" + extra["guide"]


def recorded_profile(topo):
    """The profile the last `up` wrote into the inventory ("" when none)."""
    if not os.path.exists(topo["inventory"]):
        return ""
    with open(topo["inventory"], encoding="utf-8") as handle:
        written = yaml.safe_load(handle) or {}
    return written.get("all", {}).get("vars", {}).get("lab_profile", "") or ""


def lane_hosts(topo):
    """{lane: [host names]}: every host of the topology in exactly one lane of `configure.lanes`."""
    lanes = topo["configure"].get("lanes") or {}
    if not lanes:
        raise LabError(f"{topo['path']}: configure.lanes is empty")
    owner, result = {}, {}
    for lane, groups in lanes.items():
        result[lane] = []
        for host in topo["hosts"]:
            if set(groups) & set(host.get("groups", [])):
                if host["name"] in owner:
                    raise LabError(f"{topo['path']}: host {host['name']} is in lanes {owner[host['name']]} and "
                                   f"{lane}: two playbook runs would configure it at once")
                owner[host["name"]] = lane
                result[lane].append(host["name"])
    missing = [h["name"] for h in topo["hosts"] if h["name"] not in owner]
    if missing:
        raise LabError(f"{topo['path']}: hosts in no lane of configure.lanes (never configured): "
                       + ", ".join(missing))
    return result


def version_key(path):
    """Sort key that orders proxysql_2.10.0 after proxysql_2.9.1."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", os.path.basename(path))]


def find_package_file(pattern, base=REPO_DIR):
    """The newest file matching `pattern` (relative to the repository), checked against the SHA256SUMS
    file next to it when there is one."""
    full = os.path.normpath(os.path.join(base, pattern))
    matches = sorted((m for m in glob.glob(full) if os.path.isfile(m)), key=version_key)
    if not matches:
        raise LabError(f"no package file matches {pattern} (looked for {full}); the lab installs it "
                       f"through the role's package-file path")
    chosen = os.path.abspath(matches[-1])
    sums = os.path.join(os.path.dirname(chosen), "SHA256SUMS")
    if os.path.exists(sums):
        with open(sums, encoding="utf-8") as handle:
            listed = dict(reversed(line.split(None, 1)) for line in handle if line.strip())
        listed = {name.strip().lstrip("*"): digest for name, digest in listed.items()}
        expected = listed.get(os.path.basename(chosen))
        if expected is None:
            raise LabError(f"{chosen} is not listed in {sums}")
        with open(chosen, "rb") as handle:
            actual = hashlib.sha256(handle.read()).hexdigest()
        if actual != expected:
            raise LabError(f"{chosen}: SHA-256 {actual} differs from {expected} in {sums}")
    return chosen


def fact_cache_dir(topo):
    """Where `configure` keeps the hosts' gathered facts between runs (a jsonfile fact cache)."""
    return os.path.join(os.path.dirname(topo["inventory"]), "facts")


def forget_facts(topo, host_name):
    """Drop a host's cached facts: a host created again must be asked again."""
    path = os.path.join(fact_cache_dir(topo), host_name)
    if os.path.exists(path):
        os.remove(path)


def container_name(topo, host):
    return f"{topo['name']}-{host['name']}"


def lab_ssh_key():
    """The path of this machine's lab key, made on first use (one writer at a time: labs start side by side)."""
    for directory in (SSH_DIR, SSH_CONTROL_DIR):
        os.makedirs(directory, mode=0o700, exist_ok=True)
    with open(os.path.join(SSH_DIR, ".lock"), "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(SSH_KEY + ".pub"):
            for path in (SSH_KEY, SSH_KEY + ".pub"):
                if os.path.exists(path):
                    os.remove(path)
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "dbops-lab", "-f", SSH_KEY],
                           check=True, stdin=subprocess.DEVNULL)
    return SSH_KEY


def close_ssh_masters(addresses):
    """End the persistent SSH connections to these addresses (their hosts were created again or removed)."""
    for address in addresses:
        control = os.path.join(SSH_CONTROL_DIR, address)
        if os.path.exists(control):
            subprocess.run(["ssh", "-o", f"ControlPath={control}", "-O", "exit", f"root@{address}"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            try:
                os.remove(control)      # a master that could not answer leaves its socket behind
            except FileNotFoundError:
                pass                    # the master removed it as it exited


def trust_host_keys(topo):
    """Write each host's own SSH host key into the lab's known_hosts under its address (read through podman,
    which reaches the container itself, so no key is taken from the network on trust)."""
    lab_ssh_key()
    names = {container_name(topo, h): h["ip"] for h in topo["hosts"]}
    keys = podman_exec_each(sorted(names), "cat", "/etc/ssh/ssh_host_ed25519_key.pub")
    missing = sorted(name for name, key in keys.items() if not key.startswith("ssh-ed25519 "))
    if missing:
        raise LabError(f"no SSH host key in: {', '.join(missing)} (is ssh.service running there?)")
    with open(os.path.join(SSH_DIR, ".lock"), "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        kept = []
        if os.path.exists(SSH_KNOWN_HOSTS):
            with open(SSH_KNOWN_HOSTS, encoding="utf-8") as handle:
                kept = [line for line in handle if line.split(" ", 1)[0] not in names.values()]
        lines = kept + [f"{names[name]} {' '.join(keys[name].split()[:2])}\n" for name in sorted(names)]
        with open(SSH_KNOWN_HOSTS + ".new", "w", encoding="utf-8") as handle:
            handle.writelines(lines)
        os.replace(SSH_KNOWN_HOSTS + ".new", SSH_KNOWN_HOSTS)


def container_states(topo):
    out = podman("ps", "-a", "--filter", f"label={LABEL}={topo['name']}", "--format", "json").stdout
    return {c["Names"][0]: c["State"] for c in json.loads(out or "[]")}


def engines():
    """The engine images lab/image/engines.txt defines, by name."""
    with open(os.path.join(LAB_DIR, "image", "engines.txt"), encoding="utf-8") as handle:
        return [line.split(":", 1)[0] for line in handle if re.match(r"^[a-z0-9_-]+:", line)]


def host_image(topo, host):
    """The image a host starts from: the lab image, or its engine image (the lab image with one engine's server
    packages installed, see lab/image/engines.txt)."""
    return f"{topo['image']}-{host['engine_image']}" if host.get("engine_image") else topo["image"]


def ensure_image(topo, force=False, all_engines=False):
    """Build the lab image when its recipe changed, then the engine images the hosts use (all: every one)."""
    env = dict(os.environ, LAB_IMAGE=topo["image"])
    if topo["image"] != "localhost/dbops-lab:trixie" and not force:
        if podman("image", "exists", topo["image"], check=False).returncode != 0:
            raise LabError(f"image {topo['image']} not found and only the default image is built here")
    else:
        cmd = [os.path.join(LAB_DIR, "image", "build.sh")] + (["--force"] if force else [])
        if subprocess.run(cmd, env=env).returncode != 0:
            raise LabError("the lab image build failed (see above)")
    used = engines() if all_engines else sorted({h["engine_image"] for h in topo["hosts"] if h.get("engine_image")})
    for engine in used:
        cmd = [os.path.join(LAB_DIR, "image", "engine.sh"), engine] + (["--force"] if force else [])
        if subprocess.run(cmd, env=env).returncode != 0:
            raise LabError(f"the engine image {engine} build failed (see above)")


def ensure_network(topo):
    net = topo["network"]
    if podman("network", "exists", net["name"], check=False).returncode == 0:
        subnets = json.loads(podman("network", "inspect", net["name"]).stdout)[0].get("subnets", [])
        if net["subnet"] not in [s.get("subnet") for s in subnets]:
            raise LabError(f"network {net['name']} exists with another subnet ({subnets}); "
                           f"run 'down' for the lab that owns it first")
        return False
    podman("network", "create", "--subnet", net["subnet"], "--label", f"{LABEL}={topo['name']}", net["name"])
    return True


def run_host(topo, host):
    args = ["run", "-d", "--name", container_name(topo, host), "--hostname", host["name"],
            "--label", f"{LABEL}={topo['name']}", "--network", topo["network"]["name"],
            "--ip", host["ip"], "--network-alias", host["name"], "--systemd", "always",
            "--stop-signal", "SIGRTMIN+3", "--tmpfs", "/tmp",
            "--volume", f"{lab_ssh_key()}.pub:/etc/ssh/lab_authorized_keys:ro"]
    for cap in CAPABILITIES:
        args += ["--cap-add", cap]
    if host.get("memory_mb"):
        # A container sees the host's whole RAM; a limit makes memory sizing matter (page cache included,
        # no swap beyond it).
        args += ["--memory", f"{host['memory_mb']}m", "--memory-swap", f"{host['memory_mb']}m"]
    for other in topo["hosts"]:
        if other is not host:
            args += ["--add-host", f"{other['name']}:{other['ip']}"]
    args += [host_image(topo, host), "/sbin/init"]
    podman(*args)


def memory_limit_mb(name):
    """The memory limit a container was created with, in MiB (None when it has none)."""
    limit = int(podman("inspect", "--format", "{{.HostConfig.Memory}}", name).stdout.strip() or 0)
    return limit // (1024 * 1024) or None


def wait_for_systemd(topo, timeout=120):
    """Wait until systemd in every host has finished booting (running or degraded)."""
    deadline = time.monotonic() + timeout
    pending = {container_name(topo, h) for h in topo["hosts"]}
    states = {}
    while pending and time.monotonic() < deadline:
        for name, output in podman_exec_each(sorted(pending), "systemctl", "is-system-running").items():
            states[name] = output.strip()
            if states[name] in ("running", "degraded"):
                pending.discard(name)
        if pending:
            time.sleep(0.5)
    if pending:
        raise LabError("systemd did not finish booting in: "
                       + ", ".join(f"{n} ({states.get(n) or 'no answer'})" for n in sorted(pending)))
    return states


def inventory(topo):
    # A host with a memory limit declares it to the roles that size servers (its own vars may still say
    # otherwise, on purpose).
    hosts = {h["name"]: {"ansible_host": h["ip"], "lab_ip": h["ip"], "lab_container": container_name(topo, h),
                         **({"dbops_memory_limit_mb": h["memory_mb"]} if h.get("memory_mb") else {}), **h["vars"]}
             for h in topo["hosts"]}
    children = {}
    for host in topo["hosts"]:
        for group in host["groups"]:
            children.setdefault(group, {"hosts": {}})["hosts"][host["name"]] = None
    # A group's settings live in the inventory, so every operations playbook sees the lab as it would a
    # user's hosts (a flavor kept in lab.yml's play vars was invisible to galera_recover.yml).
    for group, group_vars in topo["group_vars"].items():
        children[group]["vars"] = dict(group_vars)
    for group, files in topo["package_files"].items():
        children[group].setdefault("vars", {}).update(
            {var: find_package_file(pattern) for var, pattern in files.items()})
    return {"all": {
        "vars": {
            "ansible_connection": "ssh",
            "ansible_ssh_args": SSH_OPTIONS,
            "ansible_user": "root",
            "ansible_python_interpreter": "/usr/bin/python3",
            **({"lab_profile": topo["profile"]} if topo["profile"] else {}),
            **topo["vars"],
        },
        "hosts": hosts,
        "children": children,
    }}


def write_inventory(topo):
    text = ("# Written by lab/labctl.py from " + os.path.relpath(topo["path"]) + "; do not edit.\n"
            + yaml.safe_dump(inventory(topo), sort_keys=False))
    current = open(topo["inventory"], encoding="utf-8").read() if os.path.exists(topo["inventory"]) else None
    if current != text:
        os.makedirs(os.path.dirname(topo["inventory"]), exist_ok=True)
        with open(topo["inventory"], "w", encoding="utf-8") as handle:
            handle.write(text)


def cmd_up(topo, _args):
    ensure_image(topo)
    changed = []
    if ensure_network(topo):
        changed.append(f"network {topo['network']['name']}")
    states = container_states(topo)
    for host in topo["hosts"]:
        name = container_name(topo, host)
        if name not in states:
            forget_facts(topo, host["name"])
            close_ssh_masters([host["ip"]])
            run_host(topo, host)
            changed.append(f"created {name}")
            continue
        # Asked only of hosts that declare a limit, so a rerun of a topology without limits costs no call.
        limit = memory_limit_mb(name) if host.get("memory_mb") else None
        if limit != host.get("memory_mb"):
            raise LabError(f"{name} runs with memory limit {limit or 'none'} MiB, the topology says "
                           f"{host.get('memory_mb') or 'none'}: a limit is set when a container is created; "
                           f"run 'lab/lab --topology {os.path.relpath(topo['path'])} down' first")
        if states[name] != "running":
            podman("start", name)
            changed.append(f"started {name}")
    wait_for_systemd(topo)
    trust_host_keys(topo)
    write_inventory(topo)
    print("==> " + ("; ".join(changed) if changed else "lab already up, nothing changed")
          + (f" (profile {topo['profile']})" if topo["profile"] else ""))
    others = sorted(set(states) - {container_name(topo, h) for h in topo["hosts"]})
    if others:
        print(f"    not in this profile, left as they are: {', '.join(others)} (make lab-down removes them)")
    cmd_status(topo, _args)
    print(f"\nInventory: {os.path.relpath(topo['inventory'])}\n"
          f"Shell:     lab/lab shell HOST      Ansible: ansible -i {os.path.relpath(topo['inventory'])} all -m ping")


def cmd_down(topo, _args):
    names = sorted(container_states(topo))
    if names:
        # killed, not stopped: the hosts and their volumes go away, so a clean shutdown of each server would only
        # be waited for (up to 5 s a host, mostly for the database servers to flush)
        podman("rm", "-f", "-v", "-t", "0", *names)
    close_ssh_masters(h["ip"] for h in topo["hosts"])
    for volume in podman("volume", "ls", "-q", "--filter", f"label={LABEL}={topo['name']}").stdout.split():
        podman("volume", "rm", "-f", volume)
    net = topo["network"]["name"]
    if podman("network", "exists", net, check=False).returncode == 0:
        podman("network", "rm", "-f", net)
    if os.path.exists(topo["inventory"]):
        os.remove(topo["inventory"])
    shutil.rmtree(fact_cache_dir(topo), ignore_errors=True)
    print(f"==> lab {topo['name']} is down: removed {len(names)} containers and network {net}")


def cmd_status(topo, _args):
    states = container_states(topo)
    running = [container_name(topo, h) for h in topo["hosts"] if states.get(container_name(topo, h)) == "running"]
    # one exec per host: systemd's state on the first line, then the addresses (who holds a VIP)
    answers = podman_exec_each(running, "sh", "-c", "systemctl is-system-running; ip -4 -o addr show")
    systemd = {name: (answer.splitlines() or [""])[0] for name, answer in answers.items()}
    addresses = {name: "\n".join(answer.splitlines()[1:]) for name, answer in answers.items()}
    print(f"{'HOST':<12} {'ADDRESS':<16} {'CONTAINER':<28} {'STATE':<10} {'SYSTEMD':<10} GROUPS")
    for host in topo["hosts"]:
        name = container_name(topo, host)
        print(f"{host['name']:<12} {host['ip']:<16} {name:<28} {states.get(name, 'absent'):<10} "
              f"{systemd.get(name, '-'):<10} {','.join(host['groups'])}")
    for group, address in vip_addresses(topo):
        holders = [h["name"] for h in topo["hosts"] if group in h["groups"]
                   and f" {address}/" in addresses.get(container_name(topo, h), "")]
        print(f"VIP {address} ({group}): held by {' and '.join(holders) if holders else 'no host'}")


def vip_addresses(topo):
    """[(group, address)] of the keepalived_vips declared in the topology's group settings."""
    return [(group, str(vip["address"]).split("/", 1)[0])
            for group, values in sorted(topo["group_vars"].items())
            for vip in values.get("keepalived_vips") or [] if isinstance(vip, dict) and "address" in vip]


def cmd_inventory(topo, _args):
    sys.stdout.write(yaml.safe_dump(inventory(topo), sort_keys=False))


def cmd_shell(topo, args):
    host = next((h for h in topo["hosts"] if h["name"] == args.host), None)
    if host is None:
        raise LabError(f"no host {args.host} in {topo['path']}; hosts: "
                       + ", ".join(h["name"] for h in topo["hosts"]))
    os.execvp("podman", ["podman", "exec", "-it", container_name(topo, host), "bash", "-l"])


def cmd_image(topo, args):
    ensure_image(topo, force=args.force, all_engines=True)


def cmd_guide(topo, _args):
    print(topo["guide"].rstrip("\n") if topo["guide"] else f"{topo['path']} has no guide")


RECAP = re.compile(r"^(\S+)\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)")


class Lane:
    """One ansible-playbook run of the topology's playbook, limited to one lane's groups."""

    def __init__(self, name, groups, hosts, log_path):
        self.name, self.groups, self.hosts, self.log_path = name, groups, hosts, log_path
        self.play, self.task, self.tasks, self.recap = "", "", 0, {}
        self.rc, self.proc, self.thread = None, None, None


class Progress:
    """Progress lines of side-by-side lanes: plays, changes, failures, a heartbeat while a task runs."""

    def __init__(self, width, out=sys.stdout, heartbeat=20.0):
        self.start, self.width, self.out, self.heartbeat = time.monotonic(), width, out, heartbeat
        self.lock, self.last = threading.Lock(), {}

    def say(self, lane, text):
        with self.lock:
            self.out.write(f"    [{lane.name:<{self.width}} {time.monotonic() - self.start:4.0f}s] {text}\n")
            self.out.flush()
            self.last[lane.name] = time.monotonic()

    def line(self, lane, line):
        """Follow one output line of a lane's run (the default callback's format)."""
        if line.startswith("PLAY RECAP"):
            lane.task = "recap"
        elif line.startswith("PLAY ["):
            lane.play = line[6:].split("] ", 1)[0].rstrip("]").strip()
        elif line.startswith(("TASK [", "RUNNING HANDLER [")):
            if lane.play:       # a play is named when it runs a task: a play outside the limit runs none
                self.say(lane, "play: " + lane.play)
                lane.play = ""
            lane.task = line.split("[", 1)[1].rsplit("]", 1)[0]
            lane.tasks += 1
        elif lane.task == "recap" and RECAP.match(line):
            host, ok, changed, unreachable, failed = RECAP.match(line).groups()
            lane.recap[host] = {"ok": int(ok), "changed": int(changed), "unreachable": int(unreachable),
                                "failed": int(failed)}
        elif line.startswith(("changed: [", "fatal: [", "failed: [")) or "UNREACHABLE!" in line:
            what, host = line.split(": [", 1)[0], line.split("[", 1)[1].split("]", 1)[0]
            self.say(lane, f"{what:<7} {host:<8} {lane.task}")

    def beat(self, lanes):
        now = time.monotonic()
        for lane in lanes:
            if lane.rc is None and now - self.last.get(lane.name, self.start) >= self.heartbeat:
                self.say(lane, f"...     task {lane.tasks}: {lane.task or 'starting'}")


def ansible_playbook():
    beside = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
    found = beside if os.path.exists(beside) else shutil.which("ansible-playbook")
    if not found:
        raise LabError("ansible-playbook not found: run 'make deps'")
    return found


def run_lanes(lanes, command_for, env, progress):
    """Run every lane side by side until all end. Returns the lanes as they ended."""
    def start(lane):
        lane.proc = subprocess.Popen(command_for(lane), cwd=REPO_DIR, env=env, text=True, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT)
        lane.thread = threading.Thread(target=follow, args=(lane, progress), daemon=True)
        lane.thread.start()

    def wait(running):
        while any(lane.thread.is_alive() for lane in running):
            time.sleep(0.2)
            progress.beat(running)

    for lane in lanes:
        progress.say(lane, f"start   {' '.join(lane.hosts)} (--limit {':'.join(lane.groups)})")
        start(lane)
    wait(lanes)
    return lanes


def follow(lane, progress):
    with open(lane.log_path, "w", encoding="utf-8") as log:
        for line in lane.proc.stdout:
            log.write(line)
            progress.line(lane, line.rstrip("\n"))
    lane.rc = lane.proc.wait()


def cmd_configure(topo, _args):
    """Run the playbook once per lane, side by side, and print one recap."""
    if "configure" not in topo:
        raise LabError(f"{topo['path']} has no configure section")
    if not os.path.exists(topo["inventory"]):
        raise LabError(f"no inventory at {topo['inventory']}: run 'up' first")
    playbook = os.path.join(REPO_DIR, topo["configure"].get("playbook", "playbooks/lab.yml"))
    log_dir = os.path.join(os.path.dirname(topo["inventory"]), "logs")
    os.makedirs(log_dir, exist_ok=True)
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", PYTHONUNBUFFERED="1")
    env.setdefault("ANSIBLE_CONFIG", os.path.join(REPO_DIR, "ansible.cfg"))
    env.setdefault("ANSIBLE_HOME", os.path.join(REPO_DIR, ".ansible"))
    # Facts persist between runs (ansible.cfg gathers `smart`: only a host without cached facts is asked). What
    # the roles read of them (OS family and release, host name, addresses, virtualization) is fixed for a
    # container's life; `up` forgets the facts of a host it creates and `down` forgets them all. Only `make lab`
    # uses this cache: playbooks run by hand gather as ansible.cfg says.
    env.setdefault("ANSIBLE_CACHE_PLUGIN", "ansible.builtin.jsonfile")
    env.setdefault("ANSIBLE_CACHE_PLUGIN_CONNECTION", fact_cache_dir(topo))
    env.setdefault("ANSIBLE_CACHE_PLUGIN_TIMEOUT", "86400")
    groups_of = topo["configure"]["lanes"]
    lanes = [Lane(name, groups_of[name], hosts, os.path.join(log_dir, f"{name}.log"))
             for name, hosts in lane_hosts(topo).items() if hosts]
    print(f"==> configuring with {os.path.relpath(playbook, REPO_DIR)}: {len(lanes)} runs side by side "
          f"(logs: {os.path.relpath(log_dir)}/)")
    progress = Progress(max(len(lane.name) for lane in lanes))
    command = [ansible_playbook(), "-i", topo["inventory"], playbook]
    lanes = run_lanes(lanes, lambda lane: command + ["--limit", ":".join(lane.groups)], env, progress)
    return report_lanes(lanes, time.monotonic() - progress.start)


def report_lanes(lanes, elapsed, out=sys.stdout):
    """Print each host's recap and what went wrong; raise LabError when a lane failed."""
    out.write(f"==> configured in {elapsed:.0f} s\n")
    changed = {}
    for lane in lanes:
        for host, counts in sorted(lane.recap.items()):
            out.write(f"    {host:<10} ok={counts['ok']:<4} changed={counts['changed']:<4} "
                      f"unreachable={counts['unreachable']:<2} failed={counts['failed']:<2} ({lane.name})\n")
            if counts["changed"]:
                changed[host] = counts["changed"]
    failed = [lane for lane in lanes if lane.rc != 0 or not lane.recap]
    for lane in failed:
        with open(lane.log_path, encoding="utf-8") as handle:
            tail = handle.readlines()[-40:]
        out.write(f"\n--- {lane.name}: exit {lane.rc}, last lines of {os.path.relpath(lane.log_path)}:\n")
        out.write("".join(tail))
    if failed:
        raise LabError("configuring failed in " + ", ".join(lane.name for lane in failed)
                       + " (full logs above and in " + os.path.dirname(os.path.relpath(failed[0].log_path)) + ")")
    out.write("    changed=0 on every host\n" if not changed else
              "    changed: " + ", ".join(f"{h} ({n})" for h, n in sorted(changed.items())) + "\n")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--topology", default=os.environ.get("LAB_TOPOLOGY", DEFAULT_TOPOLOGY))
    parser.add_argument("--profile", default=None,
                        help="add the topology's profiles.NAME; default: none for up, the recorded one otherwise")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("up", "down", "status", "inventory", "configure", "guide"):
        sub.add_parser(name)
    shell = sub.add_parser("shell")
    shell.add_argument("host")
    image = sub.add_parser("image")
    image.add_argument("--force", action="store_true")
    args = parser.parse_args(argv)
    try:
        # up builds the profile it is given (none: the default lab); down removes every host of the lab;
        # the other commands follow the profile the last up recorded.
        profile = args.profile if args.profile is not None else {"up": "", "down": ""}.get(args.command)
        topo = load_topology(args.topology, profile)
        return globals()["cmd_" + args.command](topo, args) or 0
    except LabError as err:
        print(f"ERROR: {err}", file=sys.stderr)
        return 1
    except FileNotFoundError as err:
        print(f"ERROR: {err.filename} not found" + (": run 'make deps' to install podman" if
              err.filename == "podman" else ""), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
