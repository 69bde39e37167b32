"""Render tests of the pxc_galera role's templates, for the percona flavor (PXC 8.4, which cannot run here:
no Percona repository is reachable) and for mariadb (the lab's stand-in, for comparison).

The template is rendered by Ansible itself (ansible-playbook, template lookup, the role's defaults), then
turned into the option file exactly as mysql_config writes it (module_utils/mysql_settings.render)."""
import json
import os
import subprocess
import sys

import pytest
import yaml

from ansible_collections.dbops.clusters.plugins.module_utils import mysql_settings

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROLE = os.path.join(REPO, "roles", "pxc_galera")
MEMBERS = {"n1": "10.1.0.11", "n2": "10.1.0.12", "n3": "10.1.0.13", "n4": "10.1.0.14", "n5": "10.1.0.15"}


def render(tmp_path, flavor, **overrides):
    """{option: {value, online, reason}} of wsrep_settings.yml.j2 for member n2 of a 5-member cluster."""
    out = tmp_path / "rendered.json"
    variables = {"pxc_galera_flavor": flavor, "pxc_galera_members": list(MEMBERS),
                 "pxc_galera_member_addresses": MEMBERS, "pxc_galera_address": MEMBERS["n2"],
                 "pxc_galera_gcache_mb": 256, "pxc_galera_gcache_reason": "test reason",
                 "db_host_resources": {"cpus": 2, "memory_mb": 768}}
    variables.update(overrides)
    (tmp_path / "vars.json").write_text(json.dumps(variables))
    play = tmp_path / "play.yml"
    play.write_text(yaml.safe_dump([{
        "hosts": "n2", "gather_facts": False, "vars_files": [os.path.join(ROLE, "defaults", "main.yml")],
        "tasks": [
            {"name": "Read the flavor", "ansible.builtin.set_fact": {
                "pxc_galera_flavor_info": "{{ pxc_galera_flavor | dbops.clusters.mysql_flavor }}"}},
            {"name": "Render", "ansible.builtin.copy": {
                "dest": str(out), "mode": "0600",
                "content": "{{ lookup('ansible.builtin.template', '%s') | from_yaml | to_json }}" % os.path.join(
                    ROLE, "templates", "wsrep_settings.yml.j2")}}]}]))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".collections"))
    result = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i",
                             ",".join(MEMBERS) + ",", "-c", "local", "-e", "@%s" % (tmp_path / "vars.json"),
                             str(play)], cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stdout[-3000:]
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def percona(tmp_path_factory):
    return render(tmp_path_factory.mktemp("percona"), "percona")


def option_file(settings):
    return mysql_settings.parse(mysql_settings.render(settings, "test"))


def test_percona_every_setting_is_a_valid_option_with_a_reason_and_restarts(percona):
    for option, setting in percona.items():
        mysql_settings.validate_name(option)
        assert setting["reason"], option
        assert setting["online"] is False, option


def test_percona_values(percona):
    written = option_file(percona)
    assert written["wsrep_provider"] == "/usr/lib/galera4/libgalera_smm.so"
    assert written["wsrep_sst_method"] == "xtrabackup-v2"
    assert "wsrep_sst_auth" not in written, "PXC 8 uses its internal SST user: no password to store"
    assert written["wsrep_applier_threads"] == "4" and "wsrep_slave_threads" not in written
    assert written["pxc_strict_mode"] == "ENFORCING"
    assert written["pxc_encrypt_cluster_traffic"] == "ON"
    assert (written["ssl_ca"], written["ssl_cert"], written["ssl_key"]) == (
        "/etc/mysql/tls/ca.pem", "/etc/mysql/tls/server-cert.pem", "/etc/mysql/tls/server-key.pem")
    assert written["wsrep_node_address"] == "10.1.0.12" and written["wsrep_node_name"] == "n2"
    assert written["wsrep_cluster_name"] == "dbops_galera"


def test_percona_cluster_address_lists_every_member_of_the_inventory_group(percona):
    assert option_file(percona)["wsrep_cluster_address"] == "gcomm://" + ",".join(MEMBERS.values())


def test_a_change_of_the_cluster_address_alone_restarts_nothing(tmp_path, percona):
    """A member added to the group changes every member's cluster address: written, never a restart reason
    (a running member reads it only to find peers when it starts). Any other wsrep change still restarts."""
    three = render(tmp_path, "percona", pxc_galera_members=["n1", "n2", "n3"])
    before = option_file(three)
    assert before["wsrep_cluster_address"] != option_file(percona)["wsrep_cluster_address"]
    assert mysql_settings.plan(percona, before, {})[1] == []
    renamed = dict(percona, wsrep_node_name=dict(percona["wsrep_node_name"], value="n2b"))
    assert mysql_settings.plan(renamed, before, {})[1] == ["wsrep_node_name: n2 -> n2b"]


def test_percona_provider_options_are_one_quoted_string(percona):
    value = option_file(percona)["wsrep_provider_options"]
    assert value == '"gcache.size=256M; gcs.fc_limit=100; evs.inactive_check_period=PT1S"'


def test_percona_without_cluster_traffic_encryption(tmp_path):
    written = option_file(render(tmp_path, "percona", pxc_galera_encrypt_cluster_traffic=False))
    assert written["pxc_encrypt_cluster_traffic"] == "OFF"
    assert not {"ssl_ca", "ssl_cert", "ssl_key"} & set(written)


def test_percona_extra_provider_options_are_appended(tmp_path):
    written = option_file(render(tmp_path, "percona", pxc_galera_extra_provider_options={"gcs.fc_factor": "0.8"}))
    assert written["wsrep_provider_options"].endswith('; gcs.fc_factor=0.8"')


def test_mariadb_differs_only_in_the_flavor_rows(tmp_path, percona):
    mariadb = option_file(render(tmp_path, "mariadb"))
    assert mariadb["wsrep_provider"] == "/usr/lib/galera/libgalera_smm.so"
    assert mariadb["wsrep_sst_method"] == "mariabackup" and mariadb["wsrep_sst_auth"] == "mysql:"
    assert mariadb["wsrep_slave_threads"] == "4"
    assert not {"pxc_strict_mode", "pxc_encrypt_cluster_traffic", "ssl_ca"} & set(mariadb)
    shared = set(option_file(percona)) & set(mariadb)
    assert {"wsrep_cluster_address", "wsrep_provider_options", "wsrep_cluster_name", "innodb_autoinc_lock_mode",
            "bind_address", "wsrep_on"} <= shared


@pytest.mark.parametrize("series", ["8.0", "8.4"])
def test_percona_renders_nothing_pxc_80_or_84_removed(tmp_path, percona, series):
    """PXC 8.0 and 8.4 (pxc_galera_version): no wsrep setting and no tuning setting of that series is an option the
    series removed or renamed (module_utils/mysql_removed_options.py)."""
    from ansible_collections.dbops.clusters.plugins.module_utils import mysql_removed_options
    from ansible_collections.dbops.clusters.plugins.module_utils.mysql_tuning import plan_version, recommend

    plain = render(tmp_path, "percona", pxc_galera_encrypt_cluster_traffic=False)
    tuning = recommend({"memory_mb": 768, "cpus": 2, "flavor": "percona", "version": series})["settings"]
    for settings in (percona, plain, tuning):
        for option, setting in settings.items():
            assert mysql_removed_options.decision(option, setting["value"], "percona", plan_version(series)) is None, \
                option
