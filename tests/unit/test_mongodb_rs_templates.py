"""Render tests of mongod.conf and mongos.conf: net.tls as MongoDB's configuration file page names it
(https://www.mongodb.com/docs/manual/reference/configuration-options/#net-options), read back both as YAML and
by the test double's own parser (the double reads the file the role writes, as mongod does)."""
import os
import sys

import jinja2
import pytest
import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TEMPLATES = os.path.join(REPO, "roles", "mongodb_rs", "templates")
sys.path.insert(0, os.path.join(REPO, "tests", "doubles", "mongodb"))
import mongod_double  # noqa: E402  pylint: disable=wrong-import-position

BASE = {"ansible_managed": "managed", "mongodb_rs_dbpath": "/var/lib/mongodb", "mongodb_rs_port": 27017,
        "mongodb_rs_bind_ip": "0.0.0.0", "mongodb_rs_set_name": "rs0", "mongodb_rs_cluster_role": "",
        "mongodb_rs_config_group": "cfg", "mongodb_rs_config_db": "cfg/10.0.0.1:27017",
        "mongodb_rs_tls": False, "mongodb_rs_tls_mode": "requireTLS", "mongodb_rs_tls_client_certificates": "optional",
        "mongodb_rs_tls_dir": "/etc/mongodb/tls", "mongodb_rs_cache_size_gb": 0}


def render(name, **overrides):
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), undefined=jinja2.StrictUndefined,
                             trim_blocks=True)
    text = env.get_template(name).render(dict(BASE, **overrides))
    parsed = yaml.safe_load(text)
    assert mongod_double.read_conf(text) == parsed, "the double reads the file otherwise than YAML does"
    return parsed


@pytest.mark.parametrize("name", ["mongod.conf.j2", "mongos.conf.j2"])
def test_no_tls_section_unless_asked(name):
    assert "tls" not in render(name)["net"]


@pytest.mark.parametrize("name", ["mongod.conf.j2", "mongos.conf.j2"])
def test_require_tls_with_the_collections_files(name):
    tls = render(name, mongodb_rs_tls=True)["net"]["tls"]
    assert tls == {"mode": "requireTLS", "certificateKeyFile": "/etc/mongodb/tls/server.pem",
                   "CAFile": "/etc/mongodb/tls/ca.pem", "allowConnectionsWithoutCertificates": True}


@pytest.mark.parametrize("mode", ["allowTLS", "preferTLS", "requireTLS"])
def test_each_step_of_the_move_to_tls_and_required_client_certificates(mode):
    tls = render("mongod.conf.j2", mongodb_rs_tls=True, mongodb_rs_tls_mode=mode,
                 mongodb_rs_tls_client_certificates="required")["net"]["tls"]
    assert tls["mode"] == mode and "allowConnectionsWithoutCertificates" not in tls


def test_the_double_starts_with_the_rendered_tls_settings(tmp_path):
    """The options the double takes from the rendered file are the ones mongod would (net.tls.*)."""
    path = tmp_path / "mongod.conf"
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), trim_blocks=True)
    path.write_text(env.get_template("mongod.conf.j2").render(dict(BASE, mongodb_rs_tls=True)), encoding="utf-8")
    options = mongod_double.parse_args(["--config", str(path)])
    assert (options.tls_mode, options.tls_certificate_key_file, options.tls_ca_file,
            options.tls_allow_without_certificates) == ("requireTLS", "/etc/mongodb/tls/server.pem",
                                                        "/etc/mongodb/tls/ca.pem", True)


def test_cache_size_only_when_set():
    """0 leaves MongoDB's default (no key, so existing files stay byte for byte the same); a size is written as
    storage.wiredTiger.engineConfig.cacheSizeGB."""
    assert "wiredTiger" not in render("mongod.conf.j2")["storage"]
    assert render("mongod.conf.j2", mongodb_rs_cache_size_gb=1.5)["storage"]["wiredTiger"] == {
        "engineConfig": {"cacheSizeGB": 1.5}}
