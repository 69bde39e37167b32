"""The group_replication role's option-file template, rendered as Ansible renders it: every setting has a
reason, seeds and allowlist come from the inventory group, auto-increment is 1 in single-primary mode and a
unique offset per member in multi-primary mode, and the percona flavor renders the same settings."""
import os

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

TEMPLATE = os.path.join(os.path.dirname(__file__), "..", "..", "roles", "group_replication", "templates",
                        "gr_settings.yml.j2")
MEMBERS = ["gr1", "gr2", "gr3"]
ADDRESSES = {"gr1": "10.0.0.1", "gr2": "10.0.0.2", "gr3": "10.0.0.3"}


DEFAULTS = os.path.join(os.path.dirname(TEMPLATE), "..", "defaults", "main.yml")


def render(host="gr2", **overrides):
    # The role's defaults first, so a setting added to the template is rendered with its real default.
    with open(DEFAULTS, encoding="utf-8") as handle:
        variables = yaml.safe_load(handle)
    variables.update(
        group_replication_members=MEMBERS, group_replication_addresses=ADDRESSES,
        group_replication_single_primary=True, group_replication_auto_increment_increment=0,
        group_replication_port=33061, group_replication_group_name_effective="5b0b1a8e-6d4e-5c2a-9c1e-2f1d6a1e0c33",
        group_replication_group_name_reason="set by group_replication_group_name", group_replication_address=ADDRESSES[host],
        group_replication_group="gr", inventory_hostname=host, group_replication_member_weight=50,
        group_replication_consistency="BEFORE_ON_PRIMARY_FAILOVER", group_replication_exit_state_action="OFFLINE_MODE",
        group_replication_autorejoin_tries=3, group_replication_unreachable_majority_timeout=30,
        group_replication_clone_threshold=1000000, group_replication_transaction_size_limit=150000000,
        group_replication_flow_control_threshold=1000, group_replication_tls_dir="/etc/mysql/tls")
    variables.update(overrides)
    with open(TEMPLATE, encoding="utf-8") as handle:
        source = trust_as_template(handle.read())
    return yaml.safe_load(Templar(loader=DataLoader(), variables=variables).template(source))


def test_every_setting_has_a_reason():
    for name, setting in render().items():
        assert len(setting["reason"]) > 15, name


def test_membership_from_the_inventory_group():
    settings = render()
    assert settings["loose_group_replication_group_seeds"]["value"] == \
        "10.0.0.1:33061,10.0.0.2:33061,10.0.0.3:33061"
    assert settings["loose_group_replication_local_address"]["value"] == "10.0.0.2:33061"
    assert settings["loose_group_replication_ip_allowlist"]["value"] == "10.0.0.1,10.0.0.2,10.0.0.3,127.0.0.1"
    assert settings["report_host"]["value"] == "10.0.0.2"


def test_never_bootstraps_from_the_option_file():
    assert render()["loose_group_replication_bootstrap_group"]["value"] == "OFF"


def test_single_primary_steps_auto_increment_by_one_not_seven():
    settings = render()
    assert settings["loose_group_replication_single_primary_mode"]["value"] == "ON"
    assert settings["auto_increment_increment"]["value"] == 1
    assert settings["loose_group_replication_auto_increment_increment"]["value"] == 1
    assert settings["auto_increment_offset"]["value"] == 1


@pytest.mark.parametrize("step,expected", [(0, 3), (5, 5)])
def test_multi_primary_gives_each_member_its_own_offset(step, expected):
    rendered = [render(host, group_replication_single_primary=False,
                       group_replication_auto_increment_increment=step) for host in MEMBERS]
    assert {r["auto_increment_increment"]["value"] for r in rendered} == {expected}
    assert [r["auto_increment_offset"]["value"] for r in rendered] == [1, 2, 3]
    assert rendered[0]["loose_group_replication_enforce_update_everywhere_checks"]["value"] == "ON"


def test_consistency_and_exit_action_explain_the_stale_reads_they_prevent():
    settings = render()
    assert settings["loose_group_replication_consistency"]["value"] == "BEFORE_ON_PRIMARY_FAILOVER"
    assert "stale" in settings["loose_group_replication_consistency"]["reason"]
    assert settings["loose_group_replication_exit_state_action"]["value"] == "OFFLINE_MODE"
    assert "stale" in settings["loose_group_replication_exit_state_action"]["reason"]


def test_a_dead_primary_is_expelled_without_waiting_for_the_suspicion_thread():
    setting = render()["loose_group_replication_member_expel_timeout"]
    assert setting["value"] == 0 and setting["dynamic"]
    assert "15 s" in setting["reason"] and "autorejoin" in setting["reason"]


def test_start_on_boot_only_once_the_member_is_in_the_group():
    # Default (a member in the group): rejoin by itself after a restart.
    assert render()["loose_group_replication_start_on_boot"]["value"] == "ON"
    # New member, or gr_reboot.yml before it starts the servers: no 60 s boot-time join attempt.
    off = render(group_replication_start_on_boot=False)["loose_group_replication_start_on_boot"]
    assert off["value"] == "OFF" and "60 s" in off["reason"]


def test_clone_plugin_is_loaded():
    assert "mysql_clone.so" in render()["plugin_load_add"]["value"]


def test_percona_flavor_renders_the_same_settings_into_the_same_place():
    # Production runs Percona Server 8.4 (flavor percona), the lab MySQL 9.7 (flavor mysql), through the same
    # code: the option file must not differ, and the file and service the role writes and restarts are the
    # flavor table's, which for Percona Server are where its Debian packages put them.
    from ansible_collections.dbops.clusters.plugins.filter.mysql_flavor import mysql_flavor

    percona = render(group_replication_flavor="percona", group_replication_flavor_info=mysql_flavor("percona"))
    mysql = render(group_replication_flavor="mysql", group_replication_flavor_info=mysql_flavor("mysql"))
    assert percona == mysql
    assert "group_replication.so" in percona["plugin_load_add"]["value"]
    info = mysql_flavor("percona", "Debian")
    assert (info["config_dir"], info["service"], info["socket"]) == \
        ("/etc/mysql/mysql.conf.d", "mysql", "/run/mysqld/mysqld.sock")
    assert info["server_packages"] == ["percona-server-server", "percona-server-client"]


def test_the_role_accepts_flavor_percona_and_defaults_to_it():
    with open(DEFAULTS, encoding="utf-8") as handle:
        assert yaml.safe_load(handle)["group_replication_flavor"] == "percona"
    specs = os.path.join(os.path.dirname(TEMPLATE), "..", "meta", "argument_specs.yml")
    with open(specs, encoding="utf-8") as handle:
        options = yaml.safe_load(handle)["argument_specs"]["main"]["options"]
    assert options["group_replication_flavor"]["choices"] == ["percona", "mysql"]


def test_tls_verifies_identity_in_group_communication_and_recovery():
    settings = render()
    assert settings["loose_group_replication_ssl_mode"]["value"] == "VERIFY_IDENTITY"
    assert settings["loose_group_replication_ssl_mode"]["dynamic"] is False
    assert settings["loose_group_replication_recovery_ssl_verify_server_cert"]["value"] == "ON"
    assert settings["loose_group_replication_recovery_ssl_ca"]["value"] == "/etc/mysql/tls/ca.pem"
    plain = render(group_replication_tls=False)
    assert not [name for name in plain if "ssl_mode" in name or "ssl_verify" in name or "ssl_ca" in name], plain


# The release series Group Replication runs on: Percona Server 8.0 and 8.4 (flavor percona), MySQL 8.4 and the
# lab's 9.7 (flavor mysql). Nothing the role renders may be an option one of them removed or renamed.
TARGETS = [("percona", "8.0"), ("percona", "8.4"), ("mysql", "8.4"), ("mysql", "9.7")]


@pytest.mark.parametrize("flavor, series", TARGETS)
@pytest.mark.parametrize("variables", [{}, {"group_replication_single_primary": False},
                                       {"group_replication_tls": False, "group_replication_start_on_boot": False}])
def test_nothing_rendered_is_removed_in_any_supported_series(flavor, series, variables):
    from ansible_collections.dbops.clusters.plugins.module_utils import mysql_removed_options
    from ansible_collections.dbops.clusters.plugins.module_utils.mysql_tuning import plan_version

    settings = render(**variables)
    assert settings
    for option, setting in settings.items():
        assert mysql_removed_options.decision(option, setting["value"], flavor, plan_version(series)) is None, option
