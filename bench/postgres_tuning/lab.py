#!/usr/bin/env python3
"""lab/labctl.py with one addition for benchmarks: a host with `memory: 2g` in the topology is created with
`podman run --memory 2g --memory-swap 2g` (a cgroup limit that counts the page cache, so a data set larger than
the limit is really not cached). Everything else (image, network, inventory, down) is labctl's own code."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "lab"))
import labctl  # noqa: E402  pylint: disable=wrong-import-position

_run_host = labctl.run_host
_podman = labctl.podman


def run_host(topo, host):
    memory = host.get("memory")
    if not memory:
        return _run_host(topo, host)

    def podman(*args, **kwargs):
        if args and args[0] == "run":
            args = ("run", "--memory", memory, "--memory-swap", memory) + args[1:]
        return _podman(*args, **kwargs)

    labctl.podman = podman
    try:
        return _run_host(topo, host)
    finally:
        labctl.podman = _podman


labctl.run_host = run_host

if __name__ == "__main__":
    sys.exit(labctl.main(sys.argv[1:]))
