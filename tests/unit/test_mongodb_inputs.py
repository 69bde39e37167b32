"""The mongodb_rs role's input checks (module_utils/mongodb_inputs.py): every bad input refused with its variable
named, good inputs accepted, and what a running member cannot take refused naming the procedure."""
import pytest

from ansible_collections.dbops.clusters.plugins.module_utils import mongodb_inputs as inputs

GOOD = {"port": 27017, "set_name": "rs0", "bind_ip": "0.0.0.0", "settings": {}, "member": {},
        "members": [{"host": "10.0.0.1:27017"}, {"host": "10.0.0.2:27017"}, {"host": "10.0.0.3:27017"}],
        "cache_size_gb": 0, "gate_timeout": 300, "max_lag_seconds": 10}


def errors_for(**changes):
    return inputs.role_errors(dict(GOOD, **changes))


def test_defaults_and_good_values_pass():
    assert errors_for() == []
    assert errors_for(port="27018", set_name="ledger-rs_1.a", bind_ip="127.0.0.1,10.0.0.5, db1.example.com,::1",
                      settings={"electionTimeoutMillis": 5000, "chainingAllowed": False,
                                "catchUpTimeoutMillis": -1},
                      member={"priority": 2, "votes": 1, "tags": {"dc": "a"}}, cache_size_gb=0.25) == []
    assert errors_for(bind_ip=["127.0.0.1", "db1"]) == []


BAD = [
    ("port", 70000, "mongodb_rs_port"),
    ("port", 0, "mongodb_rs_port"),
    ("port", "27o17", "mongodb_rs_port"),
    ("port", True, "mongodb_rs_port"),
    ("set_name", "rs/0", "mongodb_rs_set_name"),
    ("set_name", "rs,0", "mongodb_rs_set_name"),
    ("set_name", "rs 0", "mongodb_rs_set_name"),
    ("set_name", "", "mongodb_rs_set_name"),
    ("bind_ip", "0.0.0.0: {x", "mongodb_rs_bind_ip"),
    ("bind_ip", "127.0.0.1 # open", "mongodb_rs_bind_ip"),
    ("bind_ip", "10.0.0.300", "mongodb_rs_bind_ip"),
    ("bind_ip", "127.0.0.1,,db1", "mongodb_rs_bind_ip"),
    ("bind_ip", {"a": 1}, "mongodb_rs_bind_ip"),
    ("settings", {"electionTimeoutMilis": 5000}, "mongodb_rs_settings"),
    ("settings", {"heartbeatTimeoutSecs": 0}, "mongodb_rs_settings.heartbeatTimeoutSecs"),
    ("settings", {"chainingAllowed": "no"}, "mongodb_rs_settings.chainingAllowed"),
    ("settings", {"replicaSetId": "x"}, "mongodb_rs_settings"),
    ("settings", ["electionTimeoutMillis"], "mongodb_rs_settings"),
    ("cache_size_gb", -1, "mongodb_rs_cache_size_gb"),
    ("cache_size_gb", 0.1, "mongodb_rs_cache_size_gb"),
    ("cache_size_gb", "lots", "mongodb_rs_cache_size_gb"),
    ("member", {"votes": 2}, "mongodb_rs_member.votes"),
    ("member", {"priority": -1}, "mongodb_rs_member.priority"),
    ("member", {"priority": 1001}, "mongodb_rs_member.priority"),
    ("member", {"prority": 2}, "mongodb_rs_member"),
    ("member", {"hidden": "yes"}, "mongodb_rs_member.hidden"),
    ("member", {"tags": {"dc": 1}}, "mongodb_rs_member.tags"),
    ("gate_timeout", 0, "mongodb_rs_gate_timeout"),
    ("max_lag_seconds", -5, "mongodb_rs_max_lag_seconds"),
]


@pytest.mark.parametrize("key,value,named", BAD, ids=["%s=%r" % (k, v) for k, v, _n in BAD])
def test_bad_input_is_refused_naming_the_variable(key, value, named):
    errors = errors_for(**{key: value})
    assert len(errors) == 1, errors
    assert errors[0].startswith(named), errors


def test_misspelt_key_names_the_close_one():
    error = errors_for(settings={"electionTimeoutMilis": 5000})[0]
    assert "'electionTimeoutMilis'" in error and "did you mean 'electionTimeoutMillis'" in error


def test_member_list_rules_across_hosts():
    members = [{"host": "a:1", "votes": 0}, {"host": "b:1", "votes": 0, "priority": 0}]
    # a's default priority with votes 0 is 0 (not electable), b is not electable either: no electable member.
    errors = errors_for(members=members)
    assert len(errors) == 1 and "no electable member" in errors[0] and "mongodb_rs_member" in errors[0]
    hidden_with_priority = [{"host": "a:1"}, {"host": "b:1", "hidden": True, "priority": 1}]
    errors = errors_for(members=hidden_with_priority)
    assert len(errors) == 1 and "priority must be 0 for a hidden member" in errors[0]
    eight_voters = [{"host": "h%d:1" % i} for i in range(8)]
    assert "at most 7 may vote" in errors_for(members=eight_voters)[0]
    # Another host's bad field is named with that host.
    errors = errors_for(members=[{"host": "a:1"}, {"host": "b:1", "votes": 2}])
    assert errors == ["mongodb_rs_member (member b:1).votes must be from 0 to 1, got 2"]


RUNNING = {"host": "m3", "set_name": "rs0", "keyfile_checksum": "abc", "package_version": "8.0.0"}
ASKED = {"set_name": "rs0", "keyfile_checksum": "abc", "package_version": "",
         "package_file": "/srv/debs/mongodb-double_8.0.0_all.deb"}


def test_running_member_that_gets_what_it_has_passes():
    assert inputs.running_member_errors(RUNNING, ASKED) == []
    assert inputs.running_member_errors(RUNNING, dict(ASKED, package_file="", package_version="8.0.0")) == []
    # A member not installed yet (no version, no keyfile, no set) takes anything.
    assert inputs.running_member_errors({"host": "m1"}, dict(ASKED, set_name="other")) == []


def test_new_set_name_for_a_running_set_is_refused_naming_the_procedure():
    errors = inputs.running_member_errors(RUNNING, dict(ASKED, set_name="rs1"))
    assert len(errors) == 1
    assert errors[0].startswith("mongodb_rs_set_name: m3 runs replica set rs0, this run asks for rs1")
    assert "rename-unsharded-replica-set" in errors[0]


def test_changed_keyfile_is_refused_naming_the_rotation():
    errors = inputs.running_member_errors(RUNNING, dict(ASKED, keyfile_checksum="def"))
    assert len(errors) == 1 and errors[0].startswith("mongodb_rs_keyfile_content")
    assert "playbooks/rotate_keyfile_mongodb.yml" in errors[0]
    # a sharded cluster's key is every process's: MongoDB's procedure, not the replica set playbook
    errors = inputs.running_member_errors(RUNNING, dict(ASKED, keyfile_checksum="def", cluster_role="shardsvr"))
    assert "rotate-key-sharded-cluster" in errors[0] and "rotate_keyfile_mongodb" not in errors[0]


def test_version_change_is_refused_naming_the_upgrade_playbook():
    errors = inputs.running_member_errors(RUNNING, dict(ASKED, package_file="/x/mongodb-double_7.0.0_all.deb"))
    assert len(errors) == 1 and errors[0].startswith("mongodb_rs_package_file: m3 runs 8.0.0 and this run asks for "
                                                     "7.0.0") and "playbooks/rolling_upgrade_rs.yml" in errors[0]
    # a member of a sharded cluster is upgraded with the cluster (config servers first, the balancer stopped)
    errors = inputs.running_member_errors(RUNNING, dict(ASKED, package_file="", package_version="8.0.4",
                                                        cluster_role="shardsvr"))
    assert len(errors) == 1 and "use playbooks/rolling_upgrade.yml," in errors[0]
    errors = inputs.running_member_errors(RUNNING, dict(ASKED, package_file="", package_version="8.0.4"))
    assert len(errors) == 1 and errors[0].startswith("mongodb_rs_package_version: m3 runs 8.0.0")
    errors = inputs.running_member_errors(RUNNING, dict(ASKED, package_file="/x/server.deb"))
    assert len(errors) == 1 and "NAME_VERSION_ARCH.deb" in errors[0]


def test_package_file_version_follows_debian_names():
    assert inputs.package_file_version("/a/mongodb-org-server_8.0.4_amd64.deb") == "8.0.4"
    assert inputs.package_file_version("/a/b_c/pkg_1:2.0-1_all.deb") == "1:2.0-1"
    assert inputs.package_file_version("server.deb") is None


def test_the_roles_keyfile_checksum_is_the_written_files():
    """running_member_check.yml compares the keyfile's sha1 on the host with the one of the content
    server_files.yml writes (the content and a newline): rendered by Ansible's templar as the role does."""
    import hashlib
    import os

    import yaml
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar, trust_as_template

    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(repo, "roles", "mongodb_rs", "tasks", "running_member_check.yml")) as handle:
        tasks = yaml.safe_load(handle)
    check = next(task for task in tasks[0]["block"] if "mongodb_rs_keyfile_sha1" in task.get("vars", {}))
    content = "bW9sZWN1bGUtb25seS10ZXN0LWtleWZpbGUtY29udGVudA=="
    templar = Templar(loader=DataLoader(), variables={"mongodb_rs_keyfile_content": content})
    rendered = templar.template(trust_as_template(check["vars"]["mongodb_rs_keyfile_sha1"]))
    assert rendered == hashlib.sha1((content + "\n").encode()).hexdigest()
