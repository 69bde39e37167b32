"""postgres_tuned's bad-input battery: each input refused by type, range and meaning, naming the variable, before
anything is written; values only the host or the server can judge (memory, libraries, quoting) too."""
import os

import pytest

from ansible_collections.dbops.clusters.plugins.module_utils import postgres_inputs as pi
from ansible_collections.dbops.clusters.plugins.module_utils import postgres_settings as ps
from ansible_collections.dbops.clusters.plugins.module_utils import postgres_tuning as pt

GOOD = dict(port=5432, listen_addresses="localhost,10.0.0.5", address="10.0.0.5", max_connections=0,
            rto_minutes=5, hot_data_mb=0, wal_mb_per_hour=0, synchronous_standbys=1, max_lag_bytes=16777216,
            restart_gate_timeout=120, tls=False, tls_new_ca=False, archive_check=True, reseed=False, overrides={},
            archive_command="", replication_user="replicator",
            access=[{"database": "app", "user": "app", "address": "10.0.0.0/24"}],
            users=[{"name": "app", "password": "s3cret", "attributes": ["CREATEDB"]}],
            databases=[{"name": "app", "owner": "app"}])


def test_good_inputs_pass():
    assert pi.role_errors(GOOD) == []


@pytest.mark.parametrize("change,named", [
    ({"port": 70000}, "postgres_tuned_port=70000"),
    ({"port": 0}, "postgres_tuned_port=0"),
    ({"port": "5432x"}, "postgres_tuned_port"),
    ({"listen_addresses": "not an address;"}, "postgres_tuned_listen_addresses"),
    ({"listen_addresses": "localhost,300.1.1.1"}, "postgres_tuned_listen_addresses"),
    ({"listen_addresses": ""}, "postgres_tuned_listen_addresses"),
    ({"address": "10.0.0.5 "}, "postgres_tuned_address"),
    ({"max_connections": -1}, "postgres_tuned_max_connections=-1"),
    ({"max_connections": 300000}, "postgres_tuned_max_connections"),
    ({"rto_minutes": 0}, "postgres_tuned_rto_minutes"),
    ({"hot_data_mb": -5}, "postgres_tuned_hot_data_mb"),
    ({"synchronous_standbys": -1}, "postgres_tuned_synchronous_standbys"),
    ({"restart_gate_timeout": 0}, "postgres_tuned_restart_gate_timeout"),
    ({"tls": "maybe"}, "postgres_tuned_tls"),
    ({"overrides": ["work_mem"]}, "postgres_tuned_overrides"),
    ({"replication_user": "repl user"}, "postgres_tuned_replication_user"),
    ({"access": [{"database": "app", "user": "app", "address": "10.0.0.0/33"}]}, "postgres_tuned_access[0].address"),
    ({"access": [{"database": "app", "user": "app", "address": "10.0.0.1"}]}, "postgres_tuned_access[0].address"),
    ({"access": [{"database": "app", "user": "", "address": "10.0.0.0/24"}]}, "postgres_tuned_access[0].user"),
    ({"access": [{"database": "app", "user": "app", "address": "fd00::/129"}]}, "postgres_tuned_access[0].address"),
    ({"access": [{"database": "app", "user": "app", "address": "10.0.0.0/24", "mode": "trust"}]},
     "unknown keys mode"),
    ({"users": [{"name": "app"}]}, "postgres_tuned_users[0] (app) has no password"),
    ({"users": [{"name": "app", "password": "x", "attributes": ["SUPERUSR"]}]}, "SUPERUSR"),
    ({"users": [{"name": "app", "password": "x"}, {"name": "app", "password": "y"}]}, "listed twice"),
    ({"users": [{"name": "app; DROP", "password": "x"}]}, "postgres_tuned_users[0].name"),
    ({"users": [{"name": "app", "password": "x", "state": "gone"}]}, "postgres_tuned_users[0].state"),
    ({"databases": [{"name": "my db"}]}, "postgres_tuned_databases[0]"),
])
def test_each_bad_input_is_refused_naming_its_variable(change, named):
    inputs = dict(GOOD, **change)
    errors = pi.role_errors(inputs)
    assert errors and any(named in error for error in errors), errors


def test_no_password_is_ever_in_a_refusal():
    inputs = dict(GOOD, users=[{"name": "app", "password": "hunter2-secret", "attributes": ["NOPE"]}])
    assert not any("hunter2" in error for error in pi.role_errors(inputs))


def test_an_absent_role_needs_no_password():
    assert pi.role_errors(dict(GOOD, users=[{"name": "old", "state": "absent"}])) == []


FACTS = dict(memory_mb=1024, cpus=2, disk_type="ssd", version=17, profile="oltp", rto_minutes=5)


@pytest.mark.parametrize("value", ["64GB", "1GB", "115000"])    # 115000 blocks of 8kB = 898 MB
def test_shared_buffers_larger_than_the_host_can_give_is_refused(value):
    with pytest.raises(pt.TuningInputError) as caught:
        pt.recommend(FACTS, {"shared_buffers": value}, [], "cp %p /a/%f")
    assert caught.value.variable == "shared_buffers" and "would not start" in str(caught.value)


def test_shared_buffers_within_the_host_is_accepted():
    result = pt.recommend(FACTS, {"shared_buffers": "512MB"}, [], "cp %p /a/%f")
    assert result["settings"]["shared_buffers"]["value"] == "512MB"


@pytest.mark.parametrize("value", ["cp %p /archive/%f \\", "a\\b", "it's", "two\nlines"])
def test_quoted_values_read_back_as_written(value):
    """The server's parser: inside quotes '' is a quote and a backslash escapes the next character."""
    rendered = ps.quote_value(value)
    assert rendered.startswith("'") and rendered.endswith("'")
    body, out, i = rendered[1:-1], [], 0
    while i < len(body):
        char = body[i]
        if char == "\\":
            nxt = body[i + 1]
            out.append({"n": "\n", "r": "\r"}.get(nxt, nxt))
            i += 2
        elif char == "'":
            assert body[i + 1] == "'", "an unescaped quote ends the value early"
            out.append("'")
            i += 2
        else:
            assert char not in "\r\n"
            out.append(char)
            i += 1
    assert "".join(out) == value


def test_preload_libraries_must_exist(tmp_path):
    (tmp_path / "pg_stat_statements.so").write_text("")
    exists = os.path.exists
    good = {"shared_preload_libraries": "pg_stat_statements"}
    assert ps.library_errors(good, str(tmp_path), exists) == {}
    assert ps.library_errors({"shared_preload_libraries": "'$libdir/pg_stat_statements'".strip("'")},
                             str(tmp_path), exists) == {}
    errors = ps.library_errors({"shared_preload_libraries": "pg_stat_statments, pg_stat_statements"},
                               str(tmp_path), exists)
    assert "pg_stat_statments" in errors["shared_preload_libraries"]
    assert "pg_stat_statements," not in errors["shared_preload_libraries"]
    assert ps.library_errors({"shared_preload_libraries": ""}, str(tmp_path), exists) == {}


def test_a_smaller_member_takes_the_groups_highest_standby_minimums():
    big = pt.recommend(dict(FACTS, cpus=8, memory_mb=4096), {}, [], "cp %p /a/%f")["settings"]
    small = pt.recommend(dict(FACTS, cpus=2), {}, [], "cp %p /a/%f")["settings"]
    assert int(small["max_worker_processes"]["value"]) < int(big["max_worker_processes"]["value"])
    raised = pt.standby_floor(small, {"pg-big": big, "pg-small": small})
    assert raised["max_worker_processes"]["value"] == big["max_worker_processes"]["value"]
    assert "on pg-big, the highest in the group" in raised["max_worker_processes"]["reason"]
    assert pt.standby_floor(big, {"pg-big": big, "pg-small": small}) == {}
    # only the settings a replica needs at its primary's level move; work_mem stays this host's own
    assert set(raised) <= set(pt.STANDBY_MINIMUMS)


@pytest.mark.parametrize("changes, said", [
    ({"replica_seed": "backup"}, "replica_seed='backup' must be primary"),
    ({"replica_seed": "repository", "pgbackrest_stanza": ""}, "needs postgres_tuned_pgbackrest_stanza"),
    ({"replica_seed": "repository", "pgbackrest_stanza": "main", "ha": "patroni"}, "Patroni copies its replicas"),
])
def test_a_replica_seed_is_refused_where_it_cannot_copy_from(changes, said):
    assert any(said in error for error in pi.role_errors(dict(GOOD, **changes)))


def test_a_replica_is_seeded_from_the_primary_or_a_stanza():
    assert pi.role_errors(dict(GOOD, replica_seed="primary")) == []
    assert pi.role_errors(dict(GOOD, replica_seed="repository", pgbackrest_stanza="main", ha="manual")) == []
