#!/usr/bin/env python3
"""The local podman lab: hosts with systemd as PID 1 on a podman network with fixed addresses.

    labctl.py [--topology FILE] up | down | status | inventory | shell HOST | image [--force]

A topology file names the lab, its network and its hosts (see lab/topology.yml). `up` builds the image
when needed, creates what is missing, waits until systemd is up in every host, writes the Ansible
inventory and prints the hosts; a second `up` changes nothing. `down` removes the lab's containers,
their volumes and its network. Molecule's shared create/destroy playbooks drive this same code.
"""
import argparse
import ipaddress
import json
import os
import subprocess
import sys
import time

import yaml

LAB_DIR = os.path.dirname(os.path.abspath(__file__))
DEFAULT_TOPOLOGY = os.path.join(LAB_DIR, "topology.yml")
LABEL = "dbops.lab"
# NET_ADMIN/NET_RAW for keepalived, nft and failure drills; SYS_ADMIN because units with BindPaths
# (haproxy's, for one) fail with 226/NAMESPACE without it.
CAPABILITIES = ("NET_ADMIN", "NET_RAW", "SYS_ADMIN")
PODMAN_SOCKET = "unix:///run/podman/podman.sock"


class LabError(Exception):
    """A failure with a message that says what to do."""


def podman(*args, check=True, capture=True):
    proc = subprocess.run(["podman", *args], text=True,
                          stdout=subprocess.PIPE if capture else None,
                          stderr=subprocess.PIPE if capture else None)
    if check and proc.returncode != 0:
        raise LabError(f"podman {' '.join(args)} failed: {(proc.stderr or '').strip()}")
    return proc


def load_topology(path):
    with open(path, encoding="utf-8") as handle:
        topo = yaml.safe_load(handle)
    for key in ("name", "network", "hosts"):
        if key not in topo:
            raise LabError(f"{path}: missing '{key}'")
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
    topo.setdefault("image", os.environ.get("LAB_IMAGE", "localhost/dbops-lab:trixie"))
    topo.setdefault("inventory", os.path.join(LAB_DIR, "inventory", f"{topo['name']}.yml"))
    topo.setdefault("vars", {})
    topo.setdefault("group_vars", {})
    unknown = sorted(set(topo["group_vars"]) - {g for h in topo["hosts"] for g in h["groups"]})
    if unknown:
        raise LabError(f"{path}: group_vars for groups no host is in: {', '.join(unknown)}")
    return topo


def container_name(topo, host):
    return f"{topo['name']}-{host['name']}"


def container_states(topo):
    out = podman("ps", "-a", "--filter", f"label={LABEL}={topo['name']}", "--format", "json").stdout
    return {c["Names"][0]: c["State"] for c in json.loads(out or "[]")}


def ensure_image(topo, force=False):
    if topo["image"] != "localhost/dbops-lab:trixie" and not force:
        if podman("image", "exists", topo["image"], check=False).returncode != 0:
            raise LabError(f"image {topo['image']} not found and only the default image is built here")
        return
    env = dict(os.environ, LAB_IMAGE=topo["image"])
    cmd = [os.path.join(LAB_DIR, "image", "build.sh")] + (["--force"] if force else [])
    if subprocess.run(cmd, env=env).returncode != 0:
        raise LabError("the lab image build failed (see above)")


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
            "--stop-signal", "SIGRTMIN+3", "--tmpfs", "/tmp"]
    for cap in CAPABILITIES:
        args += ["--cap-add", cap]
    for other in topo["hosts"]:
        if other is not host:
            args += ["--add-host", f"{other['name']}:{other['ip']}"]
    args += [topo["image"], "/sbin/init"]
    podman(*args)


def wait_for_systemd(topo, timeout=120):
    """Wait until systemd in every host has finished booting (running or degraded)."""
    deadline = time.monotonic() + timeout
    pending = {container_name(topo, h) for h in topo["hosts"]}
    states = {}
    while pending and time.monotonic() < deadline:
        for name in sorted(pending):
            state = podman("exec", name, "systemctl", "is-system-running", check=False).stdout.strip()
            states[name] = state
            if state in ("running", "degraded"):
                pending.discard(name)
        if pending:
            time.sleep(0.5)
    if pending:
        raise LabError("systemd did not finish booting in: "
                       + ", ".join(f"{n} ({states.get(n) or 'no answer'})" for n in sorted(pending)))
    return states


def inventory(topo):
    hosts = {h["name"]: {"ansible_host": container_name(topo, h), "lab_ip": h["ip"], **h["vars"]}
             for h in topo["hosts"]}
    children = {}
    for host in topo["hosts"]:
        for group in host["groups"]:
            children.setdefault(group, {"hosts": {}})["hosts"][host["name"]] = None
    # A group's settings live in the inventory, so every operations playbook sees the lab as it would a
    # user's hosts (a flavor kept in lab.yml's play vars was invisible to galera_recover.yml).
    for group, group_vars in topo["group_vars"].items():
        children[group]["vars"] = group_vars
    return {"all": {
        "vars": {
            "ansible_connection": "community.docker.docker_api",
            "ansible_docker_docker_host": PODMAN_SOCKET,
            # The connection's API timeout defaults to 10 s; a busy podman service on 2 cores exceeds it
            # and hosts turn UNREACHABLE in the middle of a run.
            "ansible_docker_timeout": 60,
            "ansible_user": "root",
            "ansible_python_interpreter": "/usr/bin/python3",
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
            run_host(topo, host)
            changed.append(f"created {name}")
        elif states[name] != "running":
            podman("start", name)
            changed.append(f"started {name}")
    wait_for_systemd(topo)
    write_inventory(topo)
    print("==> " + ("; ".join(changed) if changed else "lab already up, nothing changed"))
    cmd_status(topo, _args)
    print(f"\nInventory: {os.path.relpath(topo['inventory'])}\n"
          f"Shell:     lab/lab shell HOST      Ansible: ansible -i {os.path.relpath(topo['inventory'])} all -m ping")


def cmd_down(topo, _args):
    names = sorted(container_states(topo))
    if names:
        podman("rm", "-f", "-v", "-t", "5", *names)
    for volume in podman("volume", "ls", "-q", "--filter", f"label={LABEL}={topo['name']}").stdout.split():
        podman("volume", "rm", "-f", volume)
    net = topo["network"]["name"]
    if podman("network", "exists", net, check=False).returncode == 0:
        podman("network", "rm", "-f", net)
    if os.path.exists(topo["inventory"]):
        os.remove(topo["inventory"])
    print(f"==> lab {topo['name']} is down: removed {len(names)} containers and network {net}")


def cmd_status(topo, _args):
    states = container_states(topo)
    print(f"{'HOST':<12} {'ADDRESS':<16} {'CONTAINER':<28} {'STATE':<10} {'SYSTEMD':<10} GROUPS")
    for host in topo["hosts"]:
        name = container_name(topo, host)
        state = states.get(name, "absent")
        systemd = "-"
        if state == "running":
            systemd = podman("exec", name, "systemctl", "is-system-running", check=False).stdout.strip()
        print(f"{host['name']:<12} {host['ip']:<16} {name:<28} {state:<10} {systemd:<10} "
              f"{','.join(host['groups'])}")


def cmd_inventory(topo, _args):
    sys.stdout.write(yaml.safe_dump(inventory(topo), sort_keys=False))


def cmd_shell(topo, args):
    host = next((h for h in topo["hosts"] if h["name"] == args.host), None)
    if host is None:
        raise LabError(f"no host {args.host} in {topo['path']}; hosts: "
                       + ", ".join(h["name"] for h in topo["hosts"]))
    os.execvp("podman", ["podman", "exec", "-it", container_name(topo, host), "bash", "-l"])


def cmd_image(topo, args):
    ensure_image(topo, force=args.force)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--topology", default=os.environ.get("LAB_TOPOLOGY", DEFAULT_TOPOLOGY))
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("up", "down", "status", "inventory"):
        sub.add_parser(name)
    shell = sub.add_parser("shell")
    shell.add_argument("host")
    image = sub.add_parser("image")
    image.add_argument("--force", action="store_true")
    args = parser.parse_args(argv)
    try:
        topo = load_topology(args.topology)
        topo["path"] = args.topology
        globals()["cmd_" + args.command](topo, args)
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
