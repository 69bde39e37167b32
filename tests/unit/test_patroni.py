"""Patroni (postgres_tuned_ha: patroni): the REST API's decisions (plugins/module_utils/patroni_api.py), the
high-availability inputs of postgres_tuned, and the pg_haproxy role's inputs."""
import pytest

from ansible_collections.dbops.clusters.plugins.filter.pg_haproxy_input_errors import input_errors as haproxy_errors
from ansible_collections.dbops.clusters.plugins.module_utils.patroni_api import (
    cluster_verdict,
    config_patch,
    leader_of,
    same_value,
    summary,
)
from ansible_collections.dbops.clusters.plugins.module_utils.postgres_inputs import patroni_errors


def member(name, role="replica", state="streaming", lag=0, **extra):
    return dict(name=name, role=role, state=state, lag=lag, timeline=3, host="10.0.0.1", api_url="https://x/patroni",
                **extra)


HEALTHY = {"members": [member("pg1", role="leader", state="running", lag=None), member("pg2"),
                       member("pg3", role="quorum_standby")]}


def test_one_running_leader_and_streaming_replicas_pass_the_gate():
    assert cluster_verdict(HEALTHY, ["pg1", "pg2", "pg3"], 1024) == (True, [])
    assert leader_of(HEALTHY) == "pg1"
    assert summary(HEALTHY)["leader"] == "pg1"


@pytest.mark.parametrize("members, reason", [
    ([member("pg2"), member("pg3")], "leaders: none (one expected)"),
    ([member("pg1", role="leader", state="running"), member("pg2", role="leader", state="running")],
     "leaders: pg1, pg2 (one expected)"),
    ([member("pg1", role="leader", state="starting"), member("pg2")], "leader pg1 is starting"),
    ([member("pg1", role="leader", state="running"), member("pg2", state="stopped")], "pg2 is stopped"),
    ([member("pg1", role="leader", state="running"), member("pg2", lag="unknown")], "pg2 has no known lag"),
    ([member("pg1", role="leader", state="running"), member("pg2", lag=4096)], "pg2 lags 4096 bytes (at most 1024)"),
])
def test_the_gate_names_what_is_wrong(members, reason):
    healthy, reasons = cluster_verdict({"members": members}, max_lag_bytes=1024)
    assert not healthy and reason in reasons, reasons


def test_a_missing_member_and_a_paused_cluster_fail_the_gate():
    healthy, reasons = cluster_verdict(dict(HEALTHY, pause=True), ["pg1", "pg2", "pg3", "pg4"])
    assert not healthy
    assert "pg4 is not a member" in reasons
    assert "Patroni is paused (maintenance mode): it would not fail over" in reasons


def test_a_replica_left_out_is_not_judged_but_the_leader_always_is():
    broken = {"members": [member("pg1", role="leader", state="running", lag=None), member("pg2"),
                          member("pg3", state="start failed", lag="unknown")]}
    assert not cluster_verdict(broken, ["pg1", "pg2", "pg3"], 1024)[0]
    assert cluster_verdict(broken, ["pg1", "pg2", "pg3"], 1024, leave_out=["pg3"]) == (True, [])
    gone = {"members": broken["members"][:2]}
    assert cluster_verdict(gone, ["pg1", "pg2", "pg3"], 1024, leave_out=["pg3"]) == (True, [])
    # another member's trouble still fails the gate
    other = {"members": [broken["members"][0], member("pg2", state="stopped"), broken["members"][2]]}
    assert cluster_verdict(other, ["pg1", "pg2", "pg3"], 1024, leave_out=["pg3"]) == (False, ["pg2 is stopped"])
    healthy, reasons = cluster_verdict(HEALTHY, ["pg1", "pg2", "pg3"], 1024, leave_out=["pg1"])
    assert not healthy and reasons == ["pg1 leads: the leader cannot be left out of the gate"]


def test_the_patch_holds_only_what_differs_and_compares_as_patroni_stores():
    current = {"ttl": 30, "loop_wait": 10, "synchronous_mode": False,
               "postgresql": {"use_slots": True, "parameters": {"max_connections": "100", "wal_level": "replica",
                                                                "hot_standby": "on"}}}
    desired = {"ttl": 20, "loop_wait": "10", "synchronous_mode": "quorum",
               "postgresql": {"use_slots": "true", "parameters": {"max_connections": 40, "wal_level": "replica",
                                                                  "hot_standby": True}}}
    patch, changed = config_patch(current, desired)
    assert patch == {"ttl": 20, "synchronous_mode": "quorum", "postgresql": {"parameters": {"max_connections": 40}}}
    assert changed == ["postgresql.parameters.max_connections", "synchronous_mode", "ttl"]
    assert config_patch(current, {"ttl": 30, "postgresql": {"parameters": {"hot_standby": "on"}}}) == ({}, [])


def test_a_null_removes_a_key_only_where_it_is():
    assert config_patch({"a": 1}, {"a": None, "b": None}) == ({"a": None}, ["a"])


@pytest.mark.parametrize("have, want, same", [
    (True, "on", True), ("off", False, True), (False, "off", True), ("on", "true", True), ("1", 1, True),
    ("on", False, False), (None, "x", False), ("quorum", True, False),
])
def test_values_compare_as_patroni_stores_them(have, want, same):
    assert same_value(have, want) is same


def patroni_inputs(**changes):
    inputs = dict(ha="patroni", patroni_etcd_user="patroni", patroni_etcd_password="x", patroni_rest_user="patroni",
                  patroni_rest_password="y", patroni_scope="postgres", patroni_namespace="/service/",
                  patroni_rest_port=8008, port=5432, patroni_ttl=20, patroni_loop_wait=2,
                  patroni_retry_timeout=5, patroni_maximum_lag_on_failover=1048576, patroni_watchdog="automatic",
                  patroni_etcd_group="etcd", patroni_etcd_hosts=["e1", "e2", "e3"])
    inputs.update(changes)
    return inputs


def test_good_patroni_inputs_pass():
    assert patroni_errors(patroni_inputs()) == []
    assert patroni_errors({"ha": "manual"}) == []


@pytest.mark.parametrize("changes, error", [
    ({"ha": "auto"}, "postgres_tuned_ha='auto' must be patroni or manual"),
    ({"patroni_rest_password": ""}, "postgres_tuned_patroni_rest_password is required with postgres_tuned_ha=patroni"),
    ({"patroni_etcd_password": None}, "postgres_tuned_patroni_etcd_password is required"),
    ({"patroni_ttl": 10}, "postgres_tuned_patroni_ttl=10 must be from 20 to 3600 (Patroni's minimum is 20)"),
    ({"patroni_loop_wait": 10, "patroni_retry_timeout": 10},
     "postgres_tuned_patroni_loop_wait + 2 * postgres_tuned_patroni_retry_timeout (30) must not exceed"),
    ({"patroni_rest_port": 5432}, "postgres_tuned_patroni_rest_port and postgres_tuned_port must differ"),
    ({"patroni_watchdog": "yes"}, "postgres_tuned_patroni_watchdog='yes' must be off, automatic or required"),
    ({"patroni_etcd_hosts": []}, "postgres_tuned_patroni_etcd_group='etcd' names no inventory host"),
    ({"patroni_namespace": "service"}, "postgres_tuned_patroni_namespace='service' must be a key prefix"),
    ({"patroni_scope": "my cluster"}, "postgres_tuned_patroni_scope='my cluster' must be a plain name"),
])
def test_bad_patroni_inputs_are_refused_naming_the_variable(changes, error):
    errors = patroni_errors(patroni_inputs(**changes))
    assert any(error in e for e in errors), errors


def haproxy_inputs(**changes):
    inputs = dict(members=["pg1"], postgres_group="postgres", postgres_port=5432, patroni_rest_port=8008,
                  write_port=5000, read_port=5001, tls=True, check_interval_ms=1000, check_fall=2, check_rise=2,
                  maxconn=1000, pgbouncer=True, pgbouncer_port=6432)
    inputs.update(changes)
    return inputs


@pytest.mark.parametrize("changes, error", [
    ({}, None),
    ({"members": []}, "pg_haproxy_postgres_group='postgres' names no inventory host"),
    ({"read_port": 5000}, "pg_haproxy_write_port and pg_haproxy_read_port must differ"),
    ({"write_port": 70000}, "pg_haproxy_write_port=70000 must be from 1 to 65535"),
    ({"tls": "maybe"}, "pg_haproxy_tls='maybe' must be true or false"),
    ({"check_interval_ms": 10}, "pg_haproxy_check_interval_ms=10 must be from 100 to 60000"),
    ({"check_fall": 0}, "pg_haproxy_check_fall=0 must be from 1 to 100"),
    ({"pgbouncer": "sometimes"}, "pg_haproxy_pgbouncer='sometimes' must be true or false"),
    ({"pgbouncer_port": 0}, "pg_haproxy_pgbouncer_port=0 must be from 1 to 65535"),
])
def test_pg_haproxy_inputs(changes, error):
    errors = haproxy_errors(haproxy_inputs(**changes))
    assert (errors == []) if error is None else any(error in e for e in errors), errors


class FakeApi:
    """Answers GET /patroni of a member with the start times given, one per call (the last one repeats)."""

    def __init__(self, *starts):
        self.starts = list(starts)

    def call(self, url, method='GET', body=None, timeout=None):
        assert url == "https://pg3:8008/patroni" and method == 'GET'
        start = self.starts.pop(0) if len(self.starts) > 1 else self.starts[0]
        return 200, {"state": "running", "postmaster_start_time": start}


def test_a_reinit_is_done_only_once_a_server_started_after_it_streams():
    from ansible_collections.dbops.clusters.plugins.modules.patroni_member import rebuilt
    streaming = {"members": [member("pg1", role="leader", state="running"),
                             dict(member("pg3"), api_url="https://pg3:8008/patroni")]}
    creating = {"members": [streaming["members"][0], dict(streaming["members"][1], state="creating replica")]}
    done = rebuilt(FakeApi("2026-11-30 06:00:00", "2026-11-30 06:05:00"), "pg3", "2026-11-30 06:00:00")
    # the old server still streams (Patroni has not begun): not done; then rebuilding; then the new server streams
    assert not done(streaming)
    assert not done(creating)
    assert done(streaming)
    # a member that did not run before (broken): any server that streams is the rebuilt one
    assert rebuilt(FakeApi("2026-11-30 06:05:00"), "pg3", None)(streaming)
