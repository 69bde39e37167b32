"""Shared testinfra fixtures for every scenario's verify.

Hosts are reached with testinfra's podman:// backend (one `podman exec` per check) rather than through
Ansible, which made each check an Ansible run. The instance config written by molecule/_shared/create.yml
maps molecule's instance names to container names and addresses.
"""
import os

import pytest
import testinfra
import yaml


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
