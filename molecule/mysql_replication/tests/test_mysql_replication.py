"""Verify asynchronous GTID replication: rows written on the source arrive on every replica."""
import time
import uuid

import pytest


def replica_status(host):
    result = host.run("mysql -E -e 'SHOW REPLICA STATUS'")
    assert result.rc == 0, result.stderr
    fields = (line.strip().partition(":") for line in result.stdout.splitlines() if ":" in line)
    return {key: value.strip() for key, _, value in fields}


@pytest.mark.parametrize("replica", ["rep1", "rep2"])
def test_replica_runs_with_gtid_auto_position(lab_hosts, lab_ips, replica):
    status = replica_status(lab_hosts[replica])
    assert status["Source_Host"] == lab_ips["src"]
    assert status["Replica_IO_Running"] == "Yes" and status["Replica_SQL_Running"] == "Yes"
    assert status["Auto_Position"] == "1"


@pytest.mark.parametrize("replica", ["rep1", "rep2"])
def test_replica_verifies_the_source_certificate(lab_hosts, replica):
    status = replica_status(lab_hosts[replica])
    assert status["Source_SSL_Allowed"] == "Yes"
    assert status["Source_SSL_Verify_Server_Cert"] == "Yes"
    assert status["Source_SSL_CA_File"].endswith("/ca.pem")


def test_row_written_on_source_is_read_on_both_replicas(lab_hosts, sql):
    marker = uuid.uuid4().hex
    sql(lab_hosts["src"], "CREATE DATABASE IF NOT EXISTS verify; "
                          "CREATE TABLE IF NOT EXISTS verify.t (id VARCHAR(32) PRIMARY KEY); "
                          "INSERT INTO verify.t VALUES ('%s')" % marker)
    for replica in ("rep1", "rep2"):
        deadline = time.time() + 20
        rows = []
        while time.time() < deadline:
            rows = sql(lab_hosts[replica], "SELECT id FROM verify.t WHERE id = '%s'" % marker)
            if rows:
                break
            time.sleep(0.5)
        assert rows == [[marker]], "%s did not receive the row" % replica


@pytest.mark.parametrize("replica", ["rep1", "rep2"])
def test_replicas_refuse_writes(lab_hosts, replica):
    result = lab_hosts[replica].run("mysql -e %s", "CREATE DATABASE must_not_exist")
    assert result.rc != 0 and "super-read-only" in result.stderr


def test_server_ids_are_unique(lab_hosts, sql):
    # every server the role set up (mbk1, the backup host, and mpx1, the proxy, run none)
    ids = {name: sql(host, "SELECT @@server_id")[0][0] for name, host in lab_hosts.items()
           if name not in ("mbk1", "mpx1")}
    assert len(ids) == 4 and len(set(ids.values())) == len(ids), ids
