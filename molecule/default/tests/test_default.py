"""Verify the default scenario (the db_host role on three lab hosts) on the real hosts."""
import json

import pytest


def test_systemd_is_pid_1_and_booted(lab_hosts):
    for name, host in lab_hosts.items():
        assert host.run("cat /proc/1/comm").stdout.strip() == "systemd", name
        state = host.run("systemctl is-system-running").stdout.strip()
        assert state == "running", f"{name}: systemd is {state}: {host.run('systemctl --failed').stdout}"


def test_fixed_addresses(lab_hosts, lab_ips):
    for name, host in lab_hosts.items():
        assert lab_ips[name] in host.interface("eth0").addresses, name


def test_hosts_reach_each_other_by_name(lab_hosts, lab_ips):
    for name, host in lab_hosts.items():
        for other, ip in lab_ips.items():
            if other == name:
                continue
            assert host.run(f"getent hosts {other}").stdout.split()[0] == ip
            assert host.run(f"ping -c1 -W2 {other}").rc == 0, f"{name} cannot reach {other}"


@pytest.mark.parametrize("module", ["pymysql", "psycopg2"])
def test_python_drivers_import(lab_hosts, module):
    for name, host in lab_hosts.items():
        result = host.run(f"python3 -c 'import {module}'")
        assert result.rc == 0, f"{name}: {result.stderr}"


def test_credentials_dir_is_root_only(lab_hosts):
    for host in lab_hosts.values():
        cred_dir = host.file("/etc/dbops")
        assert cred_dir.is_directory and cred_dir.user == "root" and cred_dir.mode == 0o700


def test_declared_memory_limits_win(lab_hosts):
    expected = {"db1": 768, "db2": 768, "db3": 512}     # group var, and a host override on db3
    for name, host in lab_hosts.items():
        facts = json.loads(host.file("/root/dbops_host_resources.json").content_string)
        assert facts["memory_mb"] == expected[name] and facts["memory_source"] == "declared", name
        assert facts["cpus"] >= 1
        assert str(expected[name]) in facts["reasons"]["memory_mb"]


def test_kernel_left_alone_in_containers(lab_hosts):
    for host in lab_hosts.values():
        assert not host.file("/etc/sysctl.d/90-dbops.conf").exists


def test_the_installed_tarball_drove_db1(lab_hosts):
    """side_effect ran postgres_tuned on db1 from the built tarball with its declared dependencies only."""
    db1 = lab_hosts["db1"]
    result = db1.run("runuser -u postgres -- psql -X -At -c 'SHOW ssl' -c 'SELECT count(*) FROM pg_database "
                     "WHERE datname = $$shop$$'")
    assert result.rc == 0, result.stderr
    assert result.stdout.split() == ["on", "1"], result.stdout
