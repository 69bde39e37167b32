"""The repository host's pgbackrest.conf (roles/pgbackrest/templates/pgbackrest.conf.j2): with a streaming standby
among the database hosts, backups copy the data files from it (backup-standby); with one database host the line
is left out (pgBackRest would warn on every backup that it found no standby)."""
import os

import jinja2
import pytest

TEMPLATE = os.path.join(os.path.dirname(__file__), "..", "..", "roles", "pgbackrest", "templates", "pgbackrest.conf.j2")


def render(database_hosts, **extra):
    with open(TEMPLATE, encoding="utf-8") as handle:
        template = jinja2.Environment(undefined=jinja2.StrictUndefined).from_string(handle.read())
    values = {"ansible_managed": "managed", "pgbackrest_side": "repository", "pgbackrest_stanza": "main",
              "pgbackrest_repository_path": "/var/lib/pgbackrest", "pgbackrest_retention_full": 2,
              "pgbackrest_cipher_pass": "secret", "pgbackrest_backup_standby": "prefer",
              "pgbackrest_database_hosts": database_hosts, "pgbackrest_restore_hosts": [],
              "pgbackrest_tls_port": 8432, "pgbackrest_pg_path": "/var/lib/postgresql/17/main",
              "pgbackrest_pg_port": 5432, "pgbackrest_repository_host": "bk1",
              "pgbackrest_pg_socket_dir": "/var/run/postgresql",
              "hostvars": {host: {} for host in database_hosts + ["bk1"]}}
    values.update(extra)
    return template.render(values)


def test_two_database_hosts_back_up_from_the_standby():
    conf = render(["pg1", "pgs1"])
    assert "\nbackup-standby=prefer\n" in conf
    assert "pg1-host=pg1\n" in conf and "pg2-host=pgs1\n" in conf
    assert "backup-standby=y\n" in render(["pg1", "pgs1"], pgbackrest_backup_standby="y")


@pytest.mark.parametrize("side", ["database", "restore"])
def test_only_the_repository_host_and_only_with_a_standby_to_use(side):
    assert "backup-standby" not in render(["pg1"])
    assert "backup-standby" not in render(["pg1", "pgs1"], pgbackrest_side=side)
