"""Shared testinfra fixtures for every scenario's verify.

Hosts are reached with testinfra's podman:// backend (one `podman exec` per check) rather than through
Ansible, which made each check an Ansible run. The instance config written by molecule/_shared/create.yml
maps molecule's instance names to container names and addresses. The collection's own module_utils are
importable (ansible_collections.dbops.clusters...) so tests compare values the way the modules do.
"""
import os
import sys

import pytest
import testinfra
import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ".collections"))


def _instances():
    with open(os.environ["MOLECULE_INSTANCE_CONFIG"], encoding="utf-8") as handle:
        return yaml.safe_load(handle) or []


@pytest.fixture(scope="session")
def lab_hosts():
    """{instance name: testinfra host} for every host of the scenario."""
    return {i["instance"]: testinfra.get_host("podman://" + i["address"]) for i in _instances()}


@pytest.fixture(scope="session")
def lab_ips():
    """{instance name: fixed address on the scenario's network}."""
    return {i["instance"]: i["ip"] for i in _instances()}
