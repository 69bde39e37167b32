"""Unit tests for the host resource rules: which limit binds, and how the data disk is found."""
import os

import pytest

from ansible_collections.dbops.clusters.plugins.module_utils import host_resources as hr

MEMINFO = "MemTotal:       24683520 kB\nMemFree:        22000000 kB\n"
MOUNTINFO = (
    "22 1 253:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
    "30 22 0:26 / /proc rw - proc proc rw\n"
    "40 22 8:17 / /var/lib/mysql rw,noatime - xfs /dev/sdb1 rw\n"
    "41 22 0:45 / /var/lib/my\\040data rw - tmpfs tmpfs rw\n"
)


def test_meminfo_total_in_mib():
    assert hr.meminfo_total_mb(MEMINFO) == 24105


def test_meminfo_without_total_fails():
    with pytest.raises(ValueError):
        hr.meminfo_total_mb("MemFree: 1 kB\n")


@pytest.mark.parametrize("v2, v1, expected", [
    ("max\n", None, None),
    ("2147483648\n", None, 2048),
    (None, "9223372036854771712\n", None),   # cgroup v1's "unlimited"
    (None, "1073741824\n", 1024),
    (None, None, None),
])
def test_cgroup_memory_limit(v2, v1, expected):
    assert hr.cgroup_memory_limit_mb(v2, v1) == expected


@pytest.mark.parametrize("v2, quota, period, expected", [
    ("max 100000\n", None, None, None),
    ("150000 100000\n", None, None, 1.5),
    (None, "-1\n", "100000\n", None),
    (None, "200000\n", "100000\n", 2.0),
    (None, None, None, None),
])
def test_cgroup_cpu_limit(v2, quota, period, expected):
    assert hr.cgroup_cpu_limit(v2, quota, period) == expected


def test_declared_memory_wins_over_cgroup_and_host():
    assert hr.effective_memory(24105, 4096, 1024)[:2] == (1024, "declared")


def test_cgroup_memory_binds_only_below_host():
    assert hr.effective_memory(24105, 4096)[:2] == (4096, "cgroup")
    assert hr.effective_memory(2048, 4096)[:2] == (2048, "meminfo")


def test_non_positive_declared_memory_is_refused():
    with pytest.raises(ValueError, match="memory_limit_mb"):
        hr.effective_memory(24105, None, 0)


def test_cpu_quota_rounds_down_but_never_below_one():
    assert hr.effective_cpus(8, 2.5)[:2] == (2, "cgroup")
    assert hr.effective_cpus(8, 0.5)[:2] == (1, "cgroup")
    assert hr.effective_cpus(2, None)[:2] == (2, "affinity")
    assert hr.effective_cpus(8, 4.0, 3)[:2] == (3, "declared")
    with pytest.raises(ValueError, match="cpu_limit"):
        hr.effective_cpus(8, None, 0)


@pytest.mark.parametrize("path, expected", [
    ("/var/lib/mysql", ("8:17", "/var/lib/mysql", "xfs")),
    ("/var/lib/mysql/ibdata1", ("8:17", "/var/lib/mysql", "xfs")),
    ("/var/lib/mysqlx", ("253:0", "/", "ext4")),          # a prefix of a name is not a parent
    ("/var/lib/my data/x", ("0:45", "/var/lib/my data", "tmpfs")),
    ("/", ("253:0", "/", "ext4")),
])
def test_mount_device_picks_longest_containing_mount(path, expected):
    assert hr.mount_device(MOUNTINFO, path) == expected


def test_disk_kind():
    assert hr.disk_kind("8:17", "1\n", "/data", "xfs")[0] is True
    assert hr.disk_kind("8:17", "0\n", "/data", "xfs")[0] is False
    rotational, reason = hr.disk_kind("0:45", None, "/", "overlay")
    assert rotational is None and "declare it" in reason
    assert hr.disk_kind("8:17", None, "/data", "xfs")[0] is None


def test_rotational_of_a_partition_is_read_from_its_disk(tmp_path):
    disk = tmp_path / "devices" / "sdb"
    (disk / "queue").mkdir(parents=True)
    (disk / "queue" / "rotational").write_text("1\n")
    (disk / "sdb1").mkdir()
    (tmp_path / "dev" / "block").mkdir(parents=True)
    os.symlink(disk / "sdb1", tmp_path / "dev" / "block" / "8:17")
    assert hr.rotational_file_text("8:17", str(tmp_path)) == "1\n"


def test_gather_on_a_fake_host(tmp_path):
    proc = tmp_path / "proc"
    (proc / "self").mkdir(parents=True)
    (proc / "meminfo").write_text(MEMINFO)
    (proc / "self" / "mountinfo").write_text(MOUNTINFO)
    sys_root = tmp_path / "sys"
    (sys_root / "fs" / "cgroup").mkdir(parents=True)
    (sys_root / "fs" / "cgroup" / "memory.max").write_text("4294967296\n")
    result = hr.gather("/", proc_root=str(proc), sys_root=str(sys_root))
    assert result["memory_mb"] == 4096 and result["memory_source"] == "cgroup"
    assert result["disk"]["device"] == "253:0" and result["disk"]["rotational"] is None
    assert set(result["reasons"]) == {"memory_mb", "cpus", "disk"}
