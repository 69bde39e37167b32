"""Verify the single-server scenario against the running PostgreSQL: tuning, configuration file, six rules."""
import json

import psycopg2
import pytest

from ansible_collections.dbops.clusters.plugins.module_utils.postgres_settings import normalize

APP_PASSWORD = "molecule-app-secret"     # the scenario's test role (molecule.yml)
CONF = "/etc/postgresql/17/main/conf.d/50-dbops.conf"
# A self-signed CA that did not sign the server's certificate (its key was thrown away when it was made).
OTHER_CA = """-----BEGIN CERTIFICATE-----
MIIDKzCCAhOgAwIBAgIUMAUQV1qSQmzIqVViQvrWUAaFwDMwDQYJKoZIhvcNAQEL
BQAwJDEiMCAGA1UEAwwZbm90IHRoZSBkYm9wcy5jbHVzdGVycyBDQTAgFw0yNjEx
MjQwNzQ3NTVaGA8yMTI2MTAzMTA3NDc1NVowJDEiMCAGA1UEAwwZbm90IHRoZSBk
Ym9wcy5jbHVzdGVycyBDQTCCASIwDQYJKoZIhvcNAQEBBQADggEPADCCAQoCggEB
APSVch9JsmxX7oQmZVDZ2tIgtLOU1kFh9+SzH3U8ObPUXUOp83JCG6taa/BS17/1
djap5WweH62HyOONPstsHUrWq1n9wfXE3G1DUVtrg0Bc9njFpaNXYP02b4mhE2wn
1ahcH+Vl/qBrGq9KNVZFX5LSOkMzxhGukcGqwHKCUvjJjb6c1jGzepZnX5nHKM4r
Nnba2hXaHI0NM6ru3uVFXA1D9NmkLXqTrwbtZUJ06A9aQHUJHVWMFZKK8sYeGxh7
cxaRhs6NAoAOXfQ/jAvRTJ7CrLID8RpebU5Un0xIHhhRikNicWA5amjNnnwpAjLO
BkKhdukL2x/KenLTfyi46/UCAwEAAaNTMFEwHQYDVR0OBBYEFOhKtpkByxqvdRCC
lPm/lVtDOVGFMB8GA1UdIwQYMBaAFOhKtpkByxqvdRCClPm/lVtDOVGFMA8GA1Ud
EwEB/wQFMAMBAf8wDQYJKoZIhvcNAQELBQADggEBAES2bAmowRlbDOFdYKj12ePH
p7e0pYpO4Qjjj7yIroCUu8cDmsd5QE1b1PLS/840HlWT03jtQLrVBtvvCf5oCuca
bRh8cBw+G08Nr7N/AtIXV0VcUZYCRomzdNUrY9wUrFc4NZB/0RlocGt80Gk0vd9m
MQOtdk45pUNnRDlIUNkbypSYyfmxr/tZ75eVOaPI26qdjEatkGMxgeAb+rzuGJyZ
MDufptPd+fhsm37DIdim1LtojSOWUEjMf5mdl1VH/LdFmI+dk1svE3n1NMJQyldz
nktY5kHWU3SfyD6Sfgh9OotreOV6nklLfyHQ8ag4xOV17SdT0W0G+6yvT35YSWQ=
-----END CERTIFICATE-----
"""


@pytest.fixture(scope="module")
def pg1(lab_hosts):
    return lab_hosts["pg1"]


@pytest.fixture(scope="module")
def catalogue(pg1):
    """{name: pg_settings row} read as the postgres superuser on the socket."""
    query = ("SELECT json_object_agg(name, json_build_object('setting', setting, 'unit', unit, 'vartype', vartype, "
             "'context', context, 'pending_restart', pending_restart)) FROM pg_settings")
    result = pg1.run("runuser -u postgres -- psql -X -At -c %s", query)
    assert result.rc == 0, result.stderr
    return json.loads(result.stdout)


def test_running_server_reports_the_tuned_values(pg1, catalogue):
    report = json.loads(pg1.file("/root/dbops-tuning.json").content_string)
    mismatches = {}
    for name, setting in report.items():
        row = catalogue[name]
        if normalize(name, row["setting"], row) != normalize(name, setting["value"], row):
            mismatches[name] = "running %s %s, report %s" % (row["setting"], row["unit"] or "", setting["value"])
    assert not mismatches
    assert not [name for name, row in catalogue.items() if row["pending_restart"]]
    # side_effect's overrides are live: one applied with a reload, one after a restart
    assert catalogue["work_mem"]["setting"] == str(6 * 1024)
    assert catalogue["max_worker_processes"]["setting"] == "9"
    # shared_buffers follows the hot-data rule, not PostgreSQL's 128MB default
    assert report["shared_buffers"]["value"] != "128MB" and "fits in memory" in report["shared_buffers"]["reason"]


@pytest.mark.parametrize("name,allowed", [
    ("fsync", {"on"}), ("full_page_writes", {"on"}), ("synchronous_commit", {"on", "local", "remote_write",
                                                                             "remote_apply"}),
    ("autovacuum", {"on"}), ("track_counts", {"on"}), ("wal_level", {"replica", "logical"}),
    ("archive_mode", {"on", "always"}), ("data_checksums", {"on"}), ("password_encryption", {"scram-sha-256"}),
])
def test_six_rules_hold(catalogue, name, allowed):
    assert catalogue[name]["setting"] in allowed


def test_archive_receives_wal(pg1, lab_hosts):
    """pg1 archives to the pgBackRest stanza: the last segment it archived is in bk1's repository, encrypted."""
    archived = pg1.run("runuser -u postgres -- psql -X -At -c %s",
                       "SELECT archived_count, last_archived_wal, last_failed_time < last_archived_time "
                       "OR last_failed_time IS NULL FROM pg_stat_archiver")
    count, last, healthy = archived.stdout.strip().split("|")
    assert int(count) > 0 and healthy == "t"
    # the last file archived may be a backup's history file (000000010000000000000009.000000D8.backup, after a
    # backup): its segment was archived before it
    segment = last[:24]
    found = lab_hosts["bk1"].run("ls /var/lib/pgbackrest/archive/main/17-1/%s/" % segment[:16])
    names = [name for name in found.stdout.split() if name.startswith(segment + "-")]
    assert len(names) == 1, found.stdout
    head = lab_hosts["bk1"].run("head -c 8 /var/lib/pgbackrest/archive/main/17-1/%s/%s" % (segment[:16], names[0]))
    assert head.stdout == "Salted__"   # openssl's header of an aes-256-cbc file: the repository is encrypted


def test_configuration_file_explains_every_setting(pg1):
    lines = pg1.file(CONF).content_string.splitlines()
    settings = [n for n, line in enumerate(lines) if line and not line.startswith("#")]
    assert len(settings) > 30
    for number in settings:
        assert lines[number - 1].startswith("# "), "no reason above: " + lines[number]
    assert any(line.startswith("# override by user; the engine would set") for line in lines)


def test_app_role_logs_in_with_scram_over_tcp(pg1, lab_ips):
    connection = psycopg2.connect(host=lab_ips["pg1"], user="app", password=APP_PASSWORD, dbname="app",
                                  connect_timeout=5)
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_user")
        assert cursor.fetchone()[0] == "app"
    connection.close()
    stored = pg1.run("runuser -u postgres -- psql -X -At -c %s",
                     "SELECT rolpassword LIKE 'SCRAM-SHA-256$%' FROM pg_authid WHERE rolname = 'app'")
    assert stored.stdout.strip() == "t"


@pytest.mark.parametrize("user,password", [("app", "wrong"), ("postgres", ""), ("app", "")])
def test_wrong_or_missing_password_refused(lab_ips, user, password):
    with pytest.raises(psycopg2.OperationalError):
        psycopg2.connect(host=lab_ips["pg1"], user=user, password=password, dbname="app", connect_timeout=5)


def test_no_trust_and_no_peer_except_the_superuser(pg1):
    rules = pg1.run("runuser -u postgres -- psql -X -At -c %s",
                    "SELECT type, user_name, auth_method FROM pg_hba_file_rules")
    for line in rules.stdout.splitlines():
        kind, users, method = line.split("|")
        assert method != "trust"
        if method == "peer":
            assert kind == "local" and users == "{postgres}"
        else:
            assert method == "scram-sha-256"


@pytest.fixture(scope="module")
def collection_ca(pg1, tmp_path_factory):
    """The CA certificate as installed on the server by the role (a copy of the controller's CA)."""
    path = tmp_path_factory.mktemp("tls") / "pg-ca.pem"
    path.write_bytes(pg1.file("/etc/postgresql/17/main/ca.crt").content)
    return str(path)


def test_client_verifying_the_server_certificate_connects_over_tls(lab_ips, collection_ca):
    # verify-full: the server's certificate must chain to the collection's CA and name the address dialled
    connection = psycopg2.connect(host=lab_ips["pg1"], user="app", password=APP_PASSWORD, dbname="app",
                                  sslmode="verify-full", sslrootcert=collection_ca, connect_timeout=5)
    with connection.cursor() as cursor:
        cursor.execute("SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
        ssl, version = cursor.fetchone()
    connection.close()
    assert ssl is True and version in ("TLSv1.2", "TLSv1.3")


def test_server_certificate_fails_verification_against_another_ca(lab_ips, tmp_path):
    other_ca = tmp_path / "other-ca.pem"
    other_ca.write_text(OTHER_CA)
    with pytest.raises(psycopg2.OperationalError, match="certificate verify failed"):
        psycopg2.connect(host=lab_ips["pg1"], user="app", password=APP_PASSWORD, dbname="app",
                         sslmode="verify-full", sslrootcert=str(other_ca), connect_timeout=5)


def test_client_without_tls_is_refused(lab_ips):
    # with postgres_tuned_tls the access entries are hostssl: the right password over plain TCP is refused
    with pytest.raises(psycopg2.OperationalError, match="no encryption"):
        psycopg2.connect(host=lab_ips["pg1"], user="app", password=APP_PASSWORD, dbname="app", sslmode="disable",
                         connect_timeout=5)


def test_pgdg_check_mode_left_the_fresh_host_untouched(lab_hosts):
    """side_effect ran the PGDG path in check mode on pgdg1 (pgdg_check.yml): nothing of it may be there."""
    fresh = lab_hosts["pgdg1"]
    for path in ("/usr/share/keyrings/pgdg.asc", "/etc/apt/sources.list.d/pgdg.list", "/etc/postgresql",
                 "/var/lib/postgresql"):
        assert not fresh.file(path).exists, path
    assert not fresh.package("postgresql-common").is_installed
    assert not fresh.package("postgresql-16").is_installed
