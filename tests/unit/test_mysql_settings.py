"""Unit tests for applying settings: value comparison, option file round trip, online vs restart decisions."""
import pytest

from ansible_collections.dbops.clusters.plugins.module_utils import mysql_flavors as flavors
from ansible_collections.dbops.clusters.plugins.module_utils import mysql_settings as ms


@pytest.mark.parametrize("a, b", [
    ("134217728", "128M"), ("1G", "1073741824"), ("ON", "1"), ("off", "0"), ("O_DIRECT", "o_direct"),
    ("/etc/mysql/tls/", "/etc/mysql/tls"), ("'ROW'", "row"), ("1.5G", str(int(1.5 * 2 ** 30))),
])
def test_normalize_compares_like_the_server(a, b):
    assert ms.normalize(a) == ms.normalize(b)


def test_normalize_keeps_different_values_apart():
    assert ms.normalize("128M") != ms.normalize("129M")
    assert ms.normalize("ON") != ms.normalize("OFF")


def test_sql_value_sends_numbers_as_numbers():
    assert ms.sql_value("512M") == 512 * 2 ** 20
    assert ms.sql_value("2000") == 2000
    assert ms.sql_value("O_DIRECT") == "O_DIRECT"


@pytest.mark.parametrize("option, variable", [
    ("innodb-buffer-pool-size", "innodb_buffer_pool_size"), ("loose-group_replication_x", "group_replication_x"),
    ("Max_Connections", "max_connections")])
def test_variable_name(option, variable):
    assert ms.variable_name(option) == variable


@pytest.mark.parametrize("bad", ["x; DROP", "1abc", "a b", "max_connections=1"])
def test_validate_name_refuses_what_is_not_an_option(bad):
    with pytest.raises(ValueError):
        ms.validate_name(bad)


def test_render_puts_the_reason_above_each_setting_and_parses_back():
    settings = {"max_connections": {"value": 200, "reason": "memory left after the buffer pool"},
                "skip_name_resolve": {"value": "", "reason": "no DNS in the login path\nsecond line"}}
    text = ms.render(settings, "Managed\nby us")
    lines = text.splitlines()
    assert lines[:2] == ["# Managed", "# by us"]
    assert lines[lines.index("max_connections = 200") - 1] == "# memory left after the buffer pool"
    assert lines[lines.index("skip_name_resolve") - 1] == "# second line"
    assert ms.parse(text) == {"max_connections": "200", "skip_name_resolve": ""}
    assert ms.parse(text, section="client") == {}


def setting(value, dynamic, online=True):
    return {"value": value, "dynamic": dynamic, "online": online}


def restart_reasons(settings, previous, running):
    return ms.plan(settings, previous, running)[1]


def test_dynamic_difference_goes_online_without_restart():
    online, reasons, drift, unchecked = ms.plan({"max_connections": setting(200, True)},
                                                {"max_connections": "151"}, {"max_connections": "151"})
    assert online == [("max_connections", "max_connections", "151", 200)]
    assert reasons == [] and drift == [] and unchecked == []


def test_dynamic_setting_already_running_does_nothing():
    assert ms.plan({"max_connections": setting("200", True)}, None, {"max_connections": "200"}) == ([], [], [], [])


def test_static_change_in_the_file_forces_a_restart_naming_it():
    online, reasons, drift, unchecked = ms.plan({"table_open_cache_instances": setting(8, False)},
                                                {"table_open_cache_instances": "16"},
                                                {"table_open_cache_instances": "16"})
    assert online == [] and reasons == ["table_open_cache_instances: 16 -> 8"] and drift == [] and unchecked == []


def test_first_run_judges_static_settings_by_the_running_server():
    reasons = restart_reasons({"table_open_cache_instances": setting(16, False)}, None,
                              {"table_open_cache_instances": "16"})
    assert reasons == []
    reasons = restart_reasons({"table_open_cache_instances": setting(8, False)}, None,
                              {"table_open_cache_instances": "16"})
    assert reasons == ["table_open_cache_instances: running 16, wanted 8"]


def test_a_setting_marked_restarts_false_changes_the_file_and_never_restarts():
    # Galera's cluster address: a running member reads it only to find peers when it starts.
    address = {"value": "gcomm://a,b,c,d", "dynamic": False, "online": False, "restarts": False}
    assert restart_reasons({"wsrep_cluster_address": address}, {"wsrep_cluster_address": "gcomm://a,b,c"}, {}) == []
    assert restart_reasons({"wsrep_cluster_address": address}, {}, {}) == []
    marked = dict(address, restarts=True)
    assert restart_reasons({"wsrep_cluster_address": marked}, {"wsrep_cluster_address": "gcomm://a,b,c"}, {}) \
        == ["wsrep_cluster_address: gcomm://a,b,c -> gcomm://a,b,c,d"]


def test_static_value_adjusted_by_the_server_is_drift_not_a_restart_loop():
    online, reasons, drift, unchecked = ms.plan({"open_files_limit": setting(5000, False)},
                                                {"open_files_limit": "5000"}, {"open_files_limit": "10000"})
    assert online == [] and unchecked == [] and reasons == [] and drift == ["open_files_limit: file says 5000, server runs 10000"]


def test_removed_static_setting_forces_a_restart():
    reasons = restart_reasons({}, {"innodb_buffer_pool_instances": "4"}, {})
    assert reasons == ["innodb_buffer_pool_instances: removed (was 4)"]


def test_options_the_server_cannot_report_are_judged_by_the_file():
    settings = {"log_bin": setting("binlog", False, online=False)}
    assert ms.plan(settings, {"log_bin": "binlog"}, {"log_bin": "1"})[1] == []
    assert ms.plan(settings, {"log_bin": "mysql-bin"}, {"log_bin": "1"})[1] == ["log_bin: mysql-bin -> binlog"]
    reasons, unchecked = [ms.plan(settings, None, {"log_bin": "1"})[i] for i in (1, 3)]
    assert unchecked == ["log_bin"] and "restart to apply" in reasons[0]


def test_server_down_means_start_with_the_file():
    reasons = restart_reasons({"max_connections": setting(200, True)}, None, None)
    assert reasons == ["server not running: start it with the new configuration"]


def test_new_setting_not_in_previous_file():
    reasons = restart_reasons({"table_open_cache_instances": setting(8, False)}, {}, {"table_open_cache_instances": "8"})
    assert reasons == []
    reasons = restart_reasons({"table_open_cache_instances": setting(8, False)}, {}, {"table_open_cache_instances": "16"})
    assert reasons == ["table_open_cache_instances: set to 8 (was not configured)"]


@pytest.mark.parametrize("text, expected", [("8.4.3-3", (8, 4, 3)), ("9.7.4-2", (9, 7, 4)),
                                            ("11.8.2-MariaDB-1", (11, 8, 2)), ("8.4", (8, 4, 0))])
def test_parse_version(text, expected):
    assert flavors.parse_version(text) == expected


def test_unknown_flavor_names_the_known_ones():
    with pytest.raises(flavors.FlavorError, match="mariadb, mysql, percona"):
        flavors.flavor("oracle")


@pytest.mark.parametrize("flavor, version, change, start", [
    ("mysql", "9.7.4", "CHANGE REPLICATION SOURCE TO", "START REPLICA"),
    ("percona", "8.0.22", "CHANGE MASTER TO", "START SLAVE"),
    ("mariadb", "11.8.2", "CHANGE MASTER TO", "START REPLICA"),
    ("mariadb", "10.4.0", "CHANGE MASTER TO", "START SLAVE"),
])
def test_replication_terms_follow_the_server(flavor, version, change, start):
    terms = flavors.replication_terms(flavor, version)
    assert terms["change"] == change and terms["start"] == start
    if flavor == "mariadb":
        assert terms["auto_position"] == "MASTER_USE_GTID = slave_pos" and terms["public_key"] is None
