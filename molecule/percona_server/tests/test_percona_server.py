"""Verify the single-server scenario against the running MySQL: tuning, option file, accounts, TLS, baseline."""
import glob
import json
import os

import pymysql
import pytest

from ansible_collections.dbops.clusters.plugins.module_utils.mysql_settings import normalize, variable_name

APP_PASSWORD = "molecule 'app' \\ \"secret\""     # the scenario's test account (molecule.yml): quotes, backslash, spaces


@pytest.fixture(scope="module")
def ps1(lab_hosts):
    return lab_hosts["ps1"]


@pytest.fixture(scope="module")
def ca_file():
    found = glob.glob(os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "**", "dbops-tls", "ca.pem"),
                      recursive=True)
    assert found, "the role's CA is not on the controller"
    return found[0]


def test_running_server_reports_the_tuned_values(ps1, sql):
    report = json.loads(ps1.file("/root/dbops-tuning.json").content_string)
    running = dict(sql(ps1, "SHOW GLOBAL VARIABLES"))
    mismatches = {}
    for option, setting in report.items():
        name = variable_name(option)
        if name not in running:
            mismatches[option] = "not a variable on this server"
        elif normalize(running[name]) != normalize(setting["value"]):
            mismatches[option] = "running %s, report %s" % (running[name], setting["value"])
    assert not mismatches
    # side_effect's overrides are live: one applied online, one after a restart
    assert running["max_connections"] == "77"
    assert running["table_open_cache_instances"] == "3"


def test_option_file_explains_every_setting(ps1):
    lines = ps1.file("/etc/mysql/mysql.conf.d/zz-dbops.cnf").content_string.splitlines()
    body = lines[lines.index("[mysqld]") + 1:]
    for number, line in enumerate(body):
        if line and not line.startswith("#"):
            assert body[number - 1].startswith("# "), "no reason above: " + line
    assert any(line.startswith("# override by user") for line in body), "the overrides do not say so"


def test_app_account_works_over_verified_tls(ca_file, lab_ips):
    connection = pymysql.connect(host=lab_ips["ps1"], user="app", password=APP_PASSWORD, database="app",
                                 ssl_ca=ca_file, ssl_verify_cert=True, ssl_verify_identity=True)
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE IF NOT EXISTS t (id INT PRIMARY KEY)")
        cursor.execute("REPLACE INTO t VALUES (1)")
        cursor.execute("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
        assert cursor.fetchone()[1], "the session is not encrypted"
    connection.close()


def test_app_account_refused_without_tls(lab_ips):
    with pytest.raises(pymysql.err.OperationalError) as refused:
        pymysql.connect(host=lab_ips["ps1"], user="app", password=APP_PASSWORD, ssl_disabled=True)
    assert refused.value.args[0] == 1045


@pytest.mark.parametrize("user", ["", "root"])
def test_no_anonymous_or_remote_root_login(lab_ips, user):
    with pytest.raises(pymysql.err.OperationalError) as refused:
        pymysql.connect(host=lab_ips["ps1"], user=user, password="", ssl_disabled=True, connect_timeout=5)
    assert refused.value.args[0] in (1045, 1130)


def test_baseline(ps1, sql):
    # prepare.yml seeded ''@localhost, ''@'%', root@'%', the test schema and anonymous grants on test and test_%
    assert sql(ps1, "SELECT COUNT(*) FROM mysql.user WHERE user = ''") == [["0"]]
    assert sql(ps1, "SELECT COUNT(*) FROM mysql.db WHERE user = '' OR db IN ('test', 'test\\\\_%')") == [["0"]]
    assert sql(ps1, "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = 'test'") == [["0"]]
    assert sql(ps1, "SELECT COUNT(*) FROM mysql.user WHERE user = 'root' "
                    "AND host NOT IN ('localhost', '127.0.0.1', '::1')") == [["0"]]
    assert sql(ps1, "SELECT plugin FROM mysql.user WHERE user = 'root' AND host = 'localhost'") == [["auth_socket"]]
    assert sql(ps1, "SHOW DATABASES LIKE 'test'") == []
