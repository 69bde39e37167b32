"""The etcd role's input checks (module_utils/etcd_inputs.py): each refusal names its variable, never a password."""
import pytest

from ansible_collections.dbops.clusters.plugins.module_utils.etcd_inputs import role_errors

GOOD = {"members": ["e1", "e2", "e3"], "addresses": {"e1": "10.0.0.1", "e2": "10.0.0.2", "e3": "10.0.0.3"},
        "single_member_lab": False, "client_port": 2379, "peer_port": 2380, "data_dir": "/var/lib/etcd/dbops",
        "cluster_token": "dbops-etcd", "heartbeat_interval_ms": 100, "election_timeout_ms": 1000,
        "snapshot_count": 10000, "quota_backend_bytes": 2147483648, "auto_compaction_mode": "periodic",
        "auto_compaction_retention": "1h", "log_level": "info", "health_timeout": 120,
        "root_password": "a secret root password",
        "users": [{"name": "patroni", "password": "p4ss word", "prefix": "/service/"}]}


def errors(**changes):
    inputs = dict(GOOD)
    inputs.update(changes)
    return role_errors(inputs)


def test_good_inputs_pass():
    assert errors() == []


@pytest.mark.parametrize("members", [["e1", "e2"], ["e1", "e2", "e3", "e4"], ["e%d" % i for i in range(11)]])
def test_an_even_or_too_small_or_too_big_group_is_refused(members):
    found = errors(members=members, addresses=dict((m, "10.0.0.%d" % (i + 1)) for i, m in enumerate(members)))
    assert len(found) == 1 and "etcd_group has %d members" % len(members) in found[0]


def test_one_member_only_when_asked_for():
    found = errors(members=["e1"], addresses={"e1": "10.0.0.1"})
    assert "etcd_single_member_lab=true" in found[0]
    assert errors(members=["e1"], addresses={"e1": "10.0.0.1"}, single_member_lab=True) == []


def test_five_members_pass():
    members = ["e%d" % i for i in range(5)]
    assert errors(members=members, addresses=dict((m, "10.0.0.%d" % (i + 1)) for i, m in enumerate(members))) == []


def test_addresses_must_be_distinct_ip_addresses():
    found = errors(addresses={"e1": "10.0.0.1", "e2": "db2.example", "e3": "10.0.0.1"})
    assert any("etcd_address of e2 is 'db2.example'" in e for e in found)
    assert any("etcd_address 10.0.0.1 is both e1's and e3's" in e for e in found)
    assert errors(addresses={"e1": "", "e2": "10.0.0.2", "e3": "0.0.0.0"})


def test_ports():
    assert any("etcd_client_port=0" in e for e in errors(client_port=0))
    assert any("etcd_peer_port='x'" in e for e in errors(peer_port="x"))
    assert any("both 2379" in e for e in errors(peer_port=2379))
    assert errors(client_port="2379") == []
    assert errors(client_port=True)


def test_the_packages_default_data_dir_or_a_relative_one_is_refused():
    assert any("Debian package's default" in e for e in errors(data_dir="/var/lib/etcd/default/"))
    assert any("absolute path" in e for e in errors(data_dir="var/lib/etcd"))
    assert any("absolute path" in e for e in errors(data_dir="/"))


def test_election_timeout_at_least_five_heartbeats():
    assert any("less than 5 heartbeats" in e for e in errors(election_timeout_ms=400))
    assert errors(election_timeout_ms=500) == []
    assert any("etcd_election_timeout_ms=60000" in e for e in errors(election_timeout_ms=60000))
    assert any("etcd_heartbeat_interval_ms=5" in e for e in errors(heartbeat_interval_ms=5))


def test_other_ranges_and_choices():
    assert errors(snapshot_count=10) and errors(quota_backend_bytes=1) and errors(quota_backend_bytes=2 ** 34)
    assert errors(auto_compaction_mode="daily") and errors(auto_compaction_retention="1 day")
    assert errors(log_level="trace") and errors(cluster_token="a b") and errors(health_timeout=-1)


@pytest.mark.parametrize("password", [None, "", "short", "two\nlines", 12345678])
def test_the_root_password_is_required_and_never_shown(password):
    found = errors(root_password=password)
    assert len(found) == 1 and found[0].startswith("etcd_root_password is required")
    assert str(password) not in found[0] or password in (None, "")


def test_users():
    assert any("etcd_users[0] is root" in e for e in errors(users=[{"name": "root", "password": "x", "prefix": "/"}]))
    found = errors(users=[{"name": "patroni", "password": "", "prefix": "service"},
                          {"name": "patroni", "password": "secret words", "prefix": "/x/", "role": "r"}])
    assert any("etcd_users[0] (patroni) needs a password" in e for e in found)
    assert any("prefix 'service'" in e for e in found)
    assert any("etcd_users[1] name patroni is listed twice" in e for e in found)
    assert any("unknown keys role" in e for e in found)
    assert not any("secret words" in e for e in found)
    assert errors(users="patroni") == ["etcd_users must be a list of {name, password, prefix}"]
