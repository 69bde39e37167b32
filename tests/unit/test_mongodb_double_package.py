"""The double packaged as a Debian package (built here with dpkg-deb): metadata, files, and that the
packaged mongod starts from a mongod.conf and reports its package's release."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

pymongo = pytest.importorskip("pymongo")

HERE = os.path.dirname(__file__)
BUILD = os.path.join(HERE, "..", "doubles", "mongodb", "packaging", "build-deb.sh")
sys.path.insert(0, os.path.join(HERE, "..", "doubles", "mongodb"))
from harness import free_port, wait_until  # noqa: E402  pylint: disable=wrong-import-position

pytestmark = pytest.mark.skipif(shutil.which("dpkg-deb") is None, reason="dpkg-deb is not installed")


def build(release, outdir):
    return subprocess.run(["bash", BUILD, release, str(outdir)], capture_output=True, text=True, check=True,
                          timeout=60).stdout.strip()


@pytest.mark.parametrize("release", ["7.0", "8.0"])
def test_package_metadata_and_files(release, tmp_path):
    deb = build(release, tmp_path)
    assert os.path.basename(deb) == "mongodb-double_%s.0_all.deb" % release

    def field(name):
        return subprocess.run(["dpkg-deb", "-f", deb, name], capture_output=True, text=True, check=True).stdout.strip()
    assert field("Package") == "mongodb-double" and field("Version") == release + ".0"
    # pymongo for bson; no YAML library: the double reads mongod.conf itself, like mongod
    assert "python3-pymongo" in field("Depends") and "yaml" not in field("Depends")
    listing = subprocess.run(["dpkg-deb", "-c", deb], capture_output=True, text=True, check=True).stdout
    for path in ("./usr/bin/mongod", "./usr/bin/mongos", "./lib/systemd/system/mongod.service",
                 "./lib/systemd/system/mongos.service", "./usr/lib/mongodb-double/VERSION"):
        assert path in listing


def test_packaged_mongod_runs_from_mongod_conf(tmp_path):
    deb = build("7.0", tmp_path / "debs")
    root = tmp_path / "root"
    subprocess.run(["dpkg-deb", "-x", deb, str(root)], check=True)
    unit = (root / "lib/systemd/system/mongod.service").read_text()
    assert "ExecStart=/usr/bin/mongod --config /etc/mongod.conf" in unit and "User=mongodb" in unit
    port = free_port()
    conf = tmp_path / "mongod.conf"
    conf.write_text("# managed\nstorage:\n  dbPath: %s\nnet:\n  port: %d\n  bindIp: 127.0.0.1\nreplication:\n"
                    "  replSetName: \"pkg\"  # quoted\n" % (tmp_path / "data", port))
    process = subprocess.Popen([sys.executable, str(root / "usr/lib/mongodb-double/mongod_double.py"),
                                "--config", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        client = pymongo.MongoClient("127.0.0.1", port, directConnection=True, serverSelectionTimeoutMS=5000)
        info = wait_until(lambda: client.admin.command("buildInfo"), timeout=10, what="the packaged mongod")
        assert info["version"].startswith("7.0")
        assert client.admin.command("hello")["setName"] == "pkg"
    finally:
        process.kill()
        process.wait()
