"""The table of options MySQL and Percona Server removed or renamed (module_utils/mysql_removed_options.py) and what
the plan does with each: every entry refused or translated from its release on (the reason naming the release and
the replacement), accepted before it; the same decisions in the role's input checks, the tuning plan and
mysql_config; and the table checked against a real server, the lab's MySQL 9.7.4 (its option list in
tests/unit/data/mysqld-9.7.4-options.txt)."""
import importlib
import os
import re

import pytest

from ansible_collections.dbops.clusters.plugins.module_utils import mysql_inputs
from ansible_collections.dbops.clusters.plugins.module_utils import mysql_removed_options as ro
from ansible_collections.dbops.clusters.plugins.module_utils import mysql_tuning as mt
from ansible_collections.dbops.clusters.plugins.module_utils.mysql_tuning import TuningInputError

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "mysqld-9.7.4-options.txt")
MYSQL_974 = frozenset(line.strip() for line in open(DATA, encoding="utf-8")
                      if line.strip() and not line.startswith("#"))
LAB = {"memory_mb": 2048, "cpus": 2, "disk_type": "ssd"}
# Options a plugin or component defines: mysqld --help lists them only with the plugin loaded.
PLUGIN_OPTIONS = ("group_replication_", "keyring_", "authentication_", "mysql_native_password")

ENTRIES = sorted(ro.REMOVED_OPTIONS)
REFUSED = [name for name in ENTRIES if not ro.REMOVED_OPTIONS[name][3]]
TRANSLATED = [name for name in ENTRIES if ro.REMOVED_OPTIONS[name][3]]


def before(release):
    """The newest release of the series before `release` (5.7 for 8.0)."""
    if release == (8, 0, 0):
        return (5, 7, 44)
    if release[1] == 0:
        return (release[0] - 1, 9, mt.SERIES_CURRENT)
    return (release[0], release[1] - 1, mt.SERIES_CURRENT)


def release_text(entry):
    removed, flavors = entry[0], entry[1]
    return "%s %s" % ("Percona Server" if flavors == ("percona",) else "MySQL",
                      "8.0" if removed == (8, 0, 0) else ".".join(map(str, removed)))


def test_the_table_decides_refusals_and_renames_knowingly():
    # A translation is for a rename with exactly the same meaning: the plan writes the new name. The rest refuse.
    assert TRANSLATED == ["group_replication_ip_whitelist", "tx_isolation", "tx_read_only"]
    assert {"expire_logs_days", "default_authentication_plugin", "skip_host_cache", "master_info_repository",
            "binlog_transaction_dependency_tracking", "keyring_file_data", "mysql_native_password"} <= set(REFUSED)


@pytest.mark.parametrize("name", ENTRIES)
def test_every_entry_has_a_release_sources_and_a_reason(name):
    removed, flavors, replacement, translate, why, sources = ro.REMOVED_OPTIONS[name]
    assert isinstance(removed, tuple) and len(removed) == 3 and removed >= (8, 0, 0)
    assert flavors in (ro.MYSQL_FAMILY, ro.PERCONA)
    assert why and sources and set(sources) <= set(ro.SOURCES), name
    assert not translate or re.match(r"^[a-z_]+$", replacement), "a translation names one option"


@pytest.mark.parametrize("name", ENTRIES)
def test_every_entry_is_accepted_before_its_release_and_decided_from_it_on(name):
    entry = ro.REMOVED_OPTIONS[name]
    removed, flavors, replacement, translate = entry[:4]
    for flavor in flavors:
        assert ro.decision(name, "1", flavor, before(removed)) is None, (name, flavor)
        for version in (removed, (9, 7, 4)):
            found = ro.decision(name, "1", flavor, version)
            assert found["action"] == ("translate" if translate else "refuse"), (name, version)
            assert release_text(entry) in found["reason"], found["reason"]
            assert found["release"] in found["reason"]
            if replacement:
                assert replacement in found["reason"], found["reason"]
            else:
                assert "no replacement" in found["reason"], found["reason"]
            assert found["to"] == (replacement if translate else None)
    assert ro.decision(name, "1", "mariadb", (11, 8, 2)) is None, "MariaDB's removals are another family's"


@pytest.mark.parametrize("name", [name for name in ENTRIES if ro.REMOVED_OPTIONS[name][1] == ro.PERCONA])
def test_percona_servers_own_options_are_not_judged_for_oracle_mysql(name):
    assert ro.decision(name, "1", "mysql", (9, 7, 4)) is None
    assert ro.decision(name, "1", "percona", (8, 4, 3))["action"] == "refuse"


@pytest.mark.parametrize("written, key", [
    ("loose-group-replication-ip-whitelist", "group_replication_ip_whitelist"),
    ("skip-character-set-client-handshake", "character_set_client_handshake"),
    ("skip_host_cache", "skip_host_cache"), ("loose_skip-host-cache", "skip_host_cache"),
    ("disable-log-bin-use-v1-row-events", "log_bin_use_v1_row_events"), ("Expire_Logs_Days", "expire_logs_days"),
    ("skip_name_resolve", "skip_name_resolve"), ("max_connections", "max_connections"),
])
def test_options_are_looked_up_as_the_server_reads_them(written, key):
    assert ro.option_key(written) == key


def test_a_translation_keeps_the_loose_prefix():
    found = ro.decision("loose-group_replication_ip_whitelist", "10.0.0.0/8", "percona", (8, 4, 3))
    assert found["to"] == "loose_group_replication_ip_allowlist"
    assert "written as loose_group_replication_ip_allowlist" in found["reason"]


@pytest.mark.parametrize("option, value, flavor, refused_from, allowed_at", [
    ("authentication_policy", "mysql_native_password,,", "mysql", (9, 0, 0), (8, 4, 3)),
    ("authentication_policy", "*,,", "mysql", None, (9, 7, 4)),
    ("early_plugin_load", "keyring_file.so", "percona", (8, 4, 0), (8, 0, 40)),
    ("early_plugin_load", "keyring_encrypted_file.so", "mysql", (8, 4, 0), (8, 0, 40)),
    ("early_plugin_load", "keyring_vault.so", "percona", (8, 1, 0), (8, 0, 40)),
    ("early_plugin_load", "keyring_vault.so", "mysql", None, (9, 7, 4)),
    ("plugin_load_add", "authentication_fido.so", "mysql", (8, 4, 0), (8, 0, 40)),
    ("plugin_load_add", "group_replication.so;mysql_clone.so", "percona", None, (9, 7, 4)),
])
def test_values_that_name_a_removed_plugin_are_refused(option, value, flavor, refused_from, allowed_at):
    assert ro.decision(option, value, flavor, allowed_at) is None
    if refused_from:
        found = ro.decision(option, value, flavor, refused_from)
        assert found["action"] == "refuse" and ".".join(map(str, refused_from)) in found["reason"]
        assert found["replacement"] in found["reason"]


def test_the_table_agrees_with_a_real_mysql_974():
    """What the table says is gone by 9.7.4 is absent from the lab's MySQL 9.7.4, and what it names instead is
    there (plugin options aside: --help lists them only with the plugin loaded)."""
    for name in ENTRIES:
        removed, flavors, replacement = ro.REMOVED_OPTIONS[name][:3]
        if "mysql" not in flavors:
            continue
        assert removed <= (9, 7, 4)
        assert name not in MYSQL_974, "%s is in the table but MySQL 9.7.4 still knows it" % name
        option = (replacement or "").split("=")[0]
        if re.match(r"^[a-z_]+$", option) and not option.startswith(PLUGIN_OPTIONS):
            assert option in MYSQL_974, "%s names %s, which MySQL 9.7.4 does not know" % (name, option)
    # Only deprecated, so not in the table: MySQL 9.7.4 still starts with them.
    for alias in ("slave_parallel_workers", "log_slave_updates", "slave_preserve_commit_order", "sync_master_info",
                  "master_verify_checksum", "skip_slave_start", "slave_net_timeout", "binlog_format"):
        assert alias in MYSQL_974 and alias not in ro.REMOVED_OPTIONS


# ------------------------------------------------------------------------------------------------------------
# The same decisions in the plan (mysql_tuning), the role's input checks (mysql_inputs) and mysql_config


@pytest.mark.parametrize("name", REFUSED)
def test_the_plan_refuses_a_removed_override_naming_release_and_replacement(name):
    entry = ro.REMOVED_OPTIONS[name]
    for flavor in entry[1]:
        for version in (".".join(map(str, entry[0])), "9.7.4"):
            with pytest.raises(TuningInputError) as err:
                mt.recommend(dict(LAB, flavor=flavor, version=version), {name: "1"})
            assert err.value.variable == name
            assert release_text(entry) in str(err.value)
            assert (entry[2] or "no replacement") in str(err.value)
        # The series before its removal plans it as given.
        older = dict(LAB, flavor=flavor, version=".".join(map(str, before(entry[0])[:2])))
        assert mt.recommend(older, {name: "1"})["settings"][name]["source"] == "override"


@pytest.mark.parametrize("name", TRANSLATED)
def test_the_plan_writes_a_renamed_override_under_its_new_name_and_says_so(name):
    new = ro.REMOVED_OPTIONS[name][2]
    value = "10.0.3.0/24" if name == "group_replication_ip_whitelist" else "ON"
    result = mt.recommend(dict(LAB, flavor="percona", version="8.4"), {name: value})
    assert name not in result["settings"]
    setting = result["settings"][new]
    assert setting["value"] == value and setting["source"] == "override"
    assert setting["reason"].startswith("override by user as %s (%s was removed in MySQL" % (name, name))
    assert "written as %s" % new in setting["reason"]
    assert result["translated"] == {name: new}
    assert any(warning.startswith("override %s is written as %s" % (name, new)) for warning in result["warnings"])
    # Given under both names, the same variable twice.
    with pytest.raises(TuningInputError) as err:
        mt.recommend(dict(LAB, flavor="percona", version="8.4"), {name: value, new: value})
    assert "given twice" in str(err.value)


def test_an_override_valid_in_80_is_planned_for_80_and_refused_for_84():
    overrides = {"binlog_transaction_dependency_tracking": "WRITESET", "expire_logs_days": 7}
    settings = mt.recommend(dict(LAB, flavor="percona", version="8.0"), overrides)["settings"]
    assert settings["binlog_transaction_dependency_tracking"]["value"] == "WRITESET"
    assert settings["expire_logs_days"]["value"] == "7"
    with pytest.raises(TuningInputError) as err:
        mt.recommend(dict(LAB, flavor="percona", version="8.4"), overrides)
    assert "MySQL 8.2.0" in str(err.value) or "MySQL 8.4.0" in str(err.value)


def test_a_series_plans_for_its_current_releases():
    # 8.0 is what ps-80 installs today (8.0.4x): the redo log is innodb_redo_log_capacity, binlog_format is left
    # to its default (deprecated from 8.0.34); 8.0.29 given exactly still gets the old redo settings.
    current = mt.recommend(dict(LAB, flavor="percona", version="8.0"))
    assert current["inputs"]["version"] == "8.0"
    assert "innodb_redo_log_capacity" in current["settings"] and "innodb_log_file_size" not in current["settings"]
    assert "binlog_format" not in current["settings"]
    old = mt.recommend(dict(LAB, flavor="percona", version="8.0.29"))["settings"]
    assert "innodb_log_file_size" in old and "innodb_redo_log_capacity" not in old
    assert mt.plan_version("8.4") == (8, 4, mt.SERIES_CURRENT) and mt.plan_version("8.4.3-3") == (8, 4, 3)


@pytest.mark.parametrize("prefix, flavor, version", [
    ("percona_server_", "percona", "8.4"), ("percona_server_", "percona", ""), ("pxc_galera_", "percona", "8.4"),
    ("percona_server_", "mysql", "9.7"), ("percona_server_", "mysql", ""),
])
def test_the_roles_input_checks_refuse_removed_overrides_before_any_change(prefix, flavor, version):
    overrides = {"expire_logs_days": 7, "loose-keyring_file_data": "/var/lib/mysql-keyring/keyring",
                 "group_replication_ip_whitelist": "AUTOMATIC", "max_connections": 100}
    errors = mysql_inputs.role_errors({"family": "mysql", "flavor": flavor, "version": version,
                                       "overrides": overrides}, prefix)
    assert errors == [
        "%soverrides.expire_logs_days: expire_logs_days was removed in MySQL 8.2.0 (binlog_expire_logs_seconds "
        "counts seconds, not days, and the roles set it from percona_server_binlog_expire_seconds); use "
        "binlog_expire_logs_seconds instead" % prefix,
        "%soverrides.loose-keyring_file_data: keyring_file_data was removed in MySQL 8.4.0 (the keyring_file plugin "
        "was removed); use the component_keyring_file component instead" % prefix,
    ], "the rename is translated by the plan, not refused; max_connections is fine"


def test_the_roles_input_checks_accept_what_the_series_still_has():
    overrides = {"expire_logs_days": 7, "binlog_transaction_dependency_tracking": "WRITESET"}
    assert mysql_inputs.role_errors({"family": "mysql", "flavor": "percona", "version": "8.0",
                                     "overrides": overrides}) == []
    assert mysql_inputs.role_errors({"family": "mariadb", "flavor": "mariadb", "version": "",
                                     "overrides": {"expire_logs_days": 7}}) == []
    assert mysql_inputs.role_errors({"family": "mysql", "overrides": overrides}) == [], "no flavor: not judged"
    assert mysql_inputs.role_errors({"family": "mysql", "flavor": "percona", "version": "eight",
                                     "overrides": overrides}) == [
        "percona_server_version='eight': cannot read a version from 'eight'"]


def test_mysql_config_refuses_a_removed_setting_before_writing():
    module = importlib.import_module("ansible_collections.dbops.clusters.plugins.modules.mysql_config")
    settings = {"loose_group_replication_ip_whitelist": {"value": "AUTOMATIC"}, "max_connections": {"value": 10},
                "default_authentication_plugin": {"value": "caching_sha2_password"}}
    assert module.removed_settings("percona", "8.0", settings) == []
    assert module.removed_settings("percona", "", settings) == [], "nothing to judge without a version"
    assert module.removed_settings("percona", "8.4", settings) == [
        "settings.default_authentication_plugin: default_authentication_plugin was removed in MySQL 8.4.0 "
        "(authentication_policy takes a list of factors, for example 'caching_sha2_password,,'); use "
        "authentication_policy instead",
        "settings.loose_group_replication_ip_whitelist: group_replication_ip_whitelist was removed in MySQL 8.3.0 "
        "(renamed group_replication_ip_allowlist in 8.0.22, same values); write loose_group_replication_ip_allowlist"]
