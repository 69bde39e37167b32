"""MongoDB's OS settings: the documented rules per release (module_utils/mongodb_os.py) and the module's
read / compare / apply / report logic on a fake /sys and /proc tree, including a read-only file system."""

from __future__ import annotations

import builtins
import errno
import importlib
import io
import json
import contextlib
import os

import pytest

from ansible_collections.dbops.clusters.plugins.module_utils import mongodb_os as rules

LIMITS_20000 = """Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max file size             unlimited            unlimited            bytes
Max address space         unlimited            unlimited            bytes
Max locked memory         8388608              8388608              bytes
Max open files            20000                20000                files
Max processes             32768                32768                processes
"""


@pytest.mark.parametrize("release, arch, enabled, defrag, ptes, glibc", [
    ("8.0", "x86_64", "always", "defer+madvise", 0, True),
    ("8.0", "aarch64", "always", "defer+madvise", 0, True),
    ("8.0", "ppc64le", "never", "never", None, False),    # legacy TCMalloc there: disable THP
    ("8.0", "s390x", "never", "never", None, False),
    ("7.0", "x86_64", "never", "never", None, False),
    ("6.0", "x86_64", "never", "never", None, False),
])
def test_thp_follows_the_release_and_the_architecture(release, arch, enabled, defrag, ptes, glibc):
    wanted = rules.recommended(release, arch)
    assert (wanted["thp"]["enabled"], wanted["thp"]["defrag"], wanted["thp"]["max_ptes_none"]) == (enabled, defrag, ptes)
    assert ("GLIBC_TUNABLES" in wanted["environment"]) == glibc
    overcommit = [r for r in wanted["sysctl"] if r["name"] == "vm.overcommit_memory"]
    assert bool(overcommit) == glibc
    assert wanted["thp"]["source"].startswith("https://www.mongodb.com/docs/")


def test_documented_values():
    wanted = rules.recommended("8.0", "x86_64")
    values = dict((r["name"], (r["value"], r["compare"])) for r in wanted["sysctl"])
    assert values == {"vm.overcommit_memory": (1, "exact"), "vm.swappiness": (1, "exact"),
                      "vm.zone_reclaim_mode": (0, "exact"), "vm.max_map_count": (102400, "min"),
                      "fs.file-max": (98000, "min"), "kernel.pid_max": (64000, "min"),
                      "kernel.threads-max": (64000, "min"), "net.ipv4.tcp_keepalive_time": (120, "max")}
    assert dict((k, v["value"]) for k, v in wanted["limits"].items()) == {
        "LimitFSIZE": "infinity", "LimitCPU": "infinity", "LimitAS": "infinity", "LimitMEMLOCK": "infinity",
        "LimitNOFILE": 64000, "LimitNPROC": 64000}
    assert wanted["readahead_sectors"]["value"] == 32
    with pytest.raises(rules.OsSettingsError):
        rules.recommended("8", "x86_64")


@pytest.mark.parametrize("text, release", [("8.0.4", "8.0"), ("1:8.0.4-1", "8.0"), ("mongodb-double_7.0.0_all.deb", "7.0"),
                                           ("/srv/mongodb-org-server_8.0.12_amd64.deb", "8.0"), ("", None), ("x", None)])
def test_release_of(text, release):
    assert rules.release_of(text) == release


def test_compare_and_persist_never_lower_a_larger_default():
    assert rules.selected("always [madvise] never") == "madvise" and rules.selected("0") == "0"
    assert rules.satisfied("1", 1) and not rules.satisfied("60", 1)
    assert rules.satisfied("9223372036854775807", 98000, "min") and not rules.satisfied("65530", 102400, "min")
    assert rules.satisfied("120", 120, "max") and not rules.satisfied("7200", 120, "max")
    assert rules.persisted_value("9223372036854775807", 98000, "min") == 9223372036854775807
    assert rules.persisted_value("65530", 102400, "min") == 102400
    assert rules.persisted_value("60", 1, "exact") == 1


def test_limits_are_capped_to_pid1_only_without_cap_sys_resource():
    pid1 = rules.parse_proc_limits(LIMITS_20000)
    assert pid1["LimitNOFILE"] == (20000, 20000) and pid1["LimitCPU"] == (None, None)
    desired = {"LimitNOFILE": 64000, "LimitNPROC": 64000, "LimitCPU": "infinity", "LimitMEMLOCK": "infinity"}
    container = rules.effective_limits(desired, pid1, pid1_can_raise=False)
    assert container["LimitNOFILE"]["value"] == 20000 and container["LimitNOFILE"]["capped"]
    assert container["LimitNPROC"]["value"] == 32768 and container["LimitNPROC"]["capped"]
    assert container["LimitMEMLOCK"]["value"] == 8388608 and "CAP_SYS_RESOURCE" in container["LimitMEMLOCK"]["reason"]
    assert container["LimitCPU"] == {"value": "infinity", "desired": "infinity", "capped": False, "reason": "as documented"}
    host = rules.effective_limits(desired, pid1, pid1_can_raise=True)
    assert not any(v["capped"] for v in host.values()) and host["LimitNOFILE"]["value"] == 64000
    assert rules.has_capability("CapEff:\t000001ffffffffff\n", 24)
    assert not rules.has_capability("CapEff:\t00000000a80425fb\n", 24)   # podman's default set


def test_limit_problems_compare_soft_and_hard():
    observed = rules.parse_proc_limits(LIMITS_20000)
    assert rules.limit_problems({"LimitNOFILE": 20000, "LimitCPU": "infinity"}, observed) == []
    problems = rules.limit_problems({"LimitNOFILE": 64000, "LimitMEMLOCK": "infinity"}, observed)
    assert problems == ["LimitMEMLOCK: the process has 8388608/8388608 (soft/hard), expected infinity",
                        "LimitNOFILE: the process has 20000/20000 (soft/hard), expected 64000"]


# The module on a fake tree: THP and sysctl paths redirected into tmp_path; one directory read-only.

def run(tmp_path, monkeypatch, read_only=(), check=False, **args):
    from ansible.module_utils import basic
    module = importlib.import_module("ansible_collections.dbops.clusters.plugins.modules.mongodb_os_settings")
    root = str(tmp_path)
    monkeypatch.setattr(rules, "THP_DIR", root + "/sys/kernel/mm/transparent_hugepage")
    monkeypatch.setattr(rules, "sysctl_path", lambda name: root + "/proc/sys/" + name.replace(".", "/"))
    real_open, real_access = builtins.open, os.access

    def fake_open(path, mode="r", *a, **k):
        path = str(path)
        if path.startswith("/proc/1/"):
            path = root + path
        if "w" in mode and any(path.startswith(root + p) for p in read_only):
            raise OSError(errno.EROFS, "Read-only file system", path)
        return real_open(path, mode, *a, **k)

    def fake_access(path, how):
        if how == os.W_OK and any(str(path).startswith(root + p) for p in read_only):
            return False
        return real_access(path, how)
    monkeypatch.setattr(module, "open", fake_open, raising=False)
    monkeypatch.setattr(os, "access", fake_access)
    args = dict(args, _ansible_check_mode=check)
    basic._ANSIBLE_ARGS = json.dumps({"ANSIBLE_MODULE_ARGS": args}).encode()  # pylint: disable=protected-access
    basic._ANSIBLE_PROFILE = "legacy"  # pylint: disable=protected-access
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        with pytest.raises(SystemExit):
            module.main()
    return json.loads(out.getvalue())


def tree(tmp_path, thp="always madvise [never]", defrag="always defer defer+madvise [madvise] never", swappiness="60"):
    files = {"sys/kernel/mm/transparent_hugepage/enabled": thp,
             "sys/kernel/mm/transparent_hugepage/defrag": defrag,
             "sys/kernel/mm/transparent_hugepage/khugepaged/max_ptes_none": "511",
             "proc/sys/vm/overcommit_memory": "0", "proc/sys/vm/swappiness": swappiness,
             "proc/sys/vm/zone_reclaim_mode": "0", "proc/sys/vm/max_map_count": "65530",
             "proc/sys/fs/file-max": "9223372036854775807", "proc/sys/kernel/pid_max": "4194304",
             "proc/sys/kernel/threads-max": "190000", "proc/sys/net/ipv4/tcp_keepalive_time": "7200",
             "proc/1/limits": LIMITS_20000, "proc/1/status": "CapEff:\t00000000a80425fb\n"}
    for name, text in files.items():
        os.makedirs(os.path.dirname(str(tmp_path / name)), exist_ok=True)
        (tmp_path / name).write_text(text + "\n")


def by_name(result):
    return dict((s["name"], s) for s in result["settings"])


def test_module_applies_what_is_writable_and_is_idempotent(tmp_path, monkeypatch):
    tree(tmp_path)
    first = run(tmp_path, monkeypatch, release="8.0", readahead_sectors=0)
    assert first["changed"] and not first.get("failed"), first
    seen = by_name(first)
    assert seen["THP enabled"]["status"] == "changed" and seen["THP enabled"]["current"] == "never"
    assert seen["vm.swappiness"]["status"] == "changed" and seen["fs.file-max"]["status"] == "ok"
    assert seen["vm.max_map_count"]["status"] == "changed" and seen["net.ipv4.tcp_keepalive_time"]["status"] == "changed"
    assert (tmp_path / "proc/sys/vm/swappiness").read_text().strip() == "1"
    assert (tmp_path / "sys/kernel/mm/transparent_hugepage/defrag").read_text().strip() == "defer+madvise"
    assert first["sysctl_persist"]["fs.file-max"] == 9223372036854775807   # never lowered
    assert first["limits"]["LimitNOFILE"]["value"] == 20000 and first["limits"]["LimitNOFILE"]["capped"]
    assert first["environment"] == {"GLIBC_TUNABLES": "glibc.pthread.rseq=0"}
    # The fake kernel files now hold the plain values; a second run finds everything in place.
    (tmp_path / "sys/kernel/mm/transparent_hugepage/enabled").write_text("[always] madvise never\n")
    (tmp_path / "sys/kernel/mm/transparent_hugepage/defrag").write_text("always defer [defer+madvise] madvise never\n")
    again = run(tmp_path, monkeypatch, release="8.0", readahead_sectors=0)
    assert not again["changed"] and set(s["status"] for s in again["settings"]) == {"ok"}, again


def test_check_mode_predicts_without_writing(tmp_path, monkeypatch):
    tree(tmp_path)
    result = run(tmp_path, monkeypatch, check=True, read_only=("/sys",), release="7.0", readahead_sectors=0)
    seen = by_name(result)
    assert seen["vm.swappiness"]["status"] == "would change" and seen["THP enabled"]["status"] == "ok"
    assert seen["THP defrag"]["status"] == "read-only"
    assert (tmp_path / "proc/sys/vm/swappiness").read_text().strip() == "60"


def test_read_only_files_are_reported_and_fatal_only_with_enforce(tmp_path, monkeypatch):
    tree(tmp_path)
    relaxed = run(tmp_path, monkeypatch, read_only=("/sys", "/proc/sys/vm"), release="8.0", readahead_sectors=0)
    assert not relaxed.get("failed"), relaxed
    seen = by_name(relaxed)
    assert seen["THP enabled"]["status"] == "read-only" and seen["vm.swappiness"]["status"] == "read-only"
    assert seen["net.ipv4.tcp_keepalive_time"]["status"] == "changed"
    assert any("THP enabled" in line and "not settable here" in line for line in relaxed["not_settable"])
    assert any(line.startswith("LimitNOFILE: capped to 20000") for line in relaxed["not_settable"])
    assert (tmp_path / "proc/sys/vm/swappiness").read_text().strip() == "60"
    strict = run(tmp_path, monkeypatch, read_only=("/sys", "/proc/sys/vm"), release="8.0", readahead_sectors=0,
                 enforce=True)
    assert strict["failed"] and "enforce is on" in strict["msg"] and "THP enabled" in strict["msg"]


def test_overrides_and_inputs(tmp_path, monkeypatch):
    tree(tmp_path, thp="[always] madvise never")
    result = run(tmp_path, monkeypatch, release="8.0", thp_enabled="madvise", readahead_sectors=0,
                 sysctl={"vm.swappiness": 10, "kernel.pid_max": None}, limits={"LimitNOFILE": 10000})
    seen = by_name(result)
    assert seen["THP enabled"]["status"] == "changed" and seen["vm.swappiness"]["desired"] == 10
    assert "kernel.pid_max" not in seen and "set by the inventory" in seen["THP enabled"]["reason"]
    assert result["limits"]["LimitNOFILE"] == {"value": 10000, "desired": 10000, "capped": False, "reason": "as documented"}
    bad = run(tmp_path, monkeypatch, release="8.0", limits={"LimitNOFILES": 1})
    assert bad["failed"] and "unknown limit LimitNOFILES" in bad["msg"]
    assert run(tmp_path, monkeypatch, release="eight")["failed"]


def test_readahead_is_not_applicable_without_a_block_device(tmp_path, monkeypatch):
    tree(tmp_path, thp="[never]", defrag="[never]")
    monkeypatch.setattr(os, "stat", lambda path: os.stat_result((0o40755, 1, os.makedev(0, 42), 1, 0, 0, 0, 0, 0, 0)))
    result = run(tmp_path, monkeypatch, release="7.0", path="/var/lib/mongodb")
    item = by_name(result)["readahead of /var/lib/mongodb's block device"]
    assert item["status"] == "not applicable" and "without a block device" in item["error"]
    assert result["readahead_kb"] is None
