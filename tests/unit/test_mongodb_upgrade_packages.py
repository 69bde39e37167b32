"""The MongoDB upgrade playbooks refuse, before any change, a package they could not upgrade the set with: a
package file that is not on the controller or is of another release, and a repository version a member's package
source does not have (asked on every member first, so a missing repository never stops a run half-way)."""
import sys

import pytest

from ansible_collections.dbops.clusters.plugins.module_utils import mongodb_inputs as inputs
from ansible_collections.dbops.clusters.tests.unit.unreachable_playbooks import run_playbook, write_inventory


def errors(packages, target="8.0", files=()):
    return inputs.upgrade_package_errors(packages, target, lambda path: path in files)


def test_a_file_of_the_target_release_on_the_controller_and_a_repository_version_pass():
    assert errors({"8.0": "/srv/mongodb-org-server_8.0.4_amd64.deb"},
                  files=("/srv/mongodb-org-server_8.0.4_amd64.deb",)) == []
    assert errors({"8.0": "8.0.4"}) == []
    assert errors({"8.0": "1:8.0.4-1"}) == []        # a Debian epoch comes before the release
    assert errors({"7.0": "7.0.14"}) == []           # no entry for the target: refused later, if a member needs it


@pytest.mark.parametrize("packages, words", [
    ({"8.0": "/srv/mongodb-org-server_8.0.4_amd64.deb"},
     "mongodb_rs_upgrade_packages[8.0]: /srv/mongodb-org-server_8.0.4_amd64.deb is not a file on the controller"),
    ({"8.0": "/srv/mongodb-org-server_7.0.14_amd64.deb"}, "version 7.0.14 is not of release 8.0"),
    ({"8.0": "/srv/mongodb-server.deb"}, "is not named NAME_VERSION_ARCH.deb"),
    ({"8.0": "7.0.14"}, "mongodb_rs_upgrade_packages[8.0]: version 7.0.14 is not of release 8.0"),
    ({"8.0": "8.04"}, "version 8.04 is not of release 8.0"),
    ("8.0.4", "mongodb_rs_upgrade_packages must be a mapping"),
])
def test_a_package_that_cannot_upgrade_to_the_target_is_refused_naming_it(packages, words):
    found = errors(packages, files=("/srv/mongodb-org-server_7.0.14_amd64.deb", "/srv/mongodb-server.deb"))
    assert len(found) == 1 and words in found[0], found


def run_upgrade(packages, inventory):
    result = run_playbook(inventory, "rolling_upgrade_rs.yml",
                          extra={"mongodb_rs_upgrade_target": "8.0", "mongodb_rs_upgrade_packages": packages})
    return result, " ".join(result.stdout.split())      # the yaml callback folds long messages


def test_a_package_file_missing_on_the_controller_is_refused_before_any_host_is_contacted(tmp_path):
    missing = str(tmp_path / "mongodb-org-server_8.0.4_amd64.deb")
    result, output = run_upgrade({"8.0": missing}, write_inventory(tmp_path, "mongodb", ["n1", "n2"]))
    assert result.returncode != 0
    assert "%s is not a file on the controller" % missing in output, result.stdout[-3000:]
    assert "UNREACHABLE" not in output


def test_a_version_the_package_source_lacks_is_refused_before_a_member_is_read(tmp_path):
    """The member is this machine (-c local), whose apt sources have no MongoDB: the version is refused, naming
    the member, before the play reads any mongod."""
    inventory = tmp_path / "inventory.yml"
    inventory.write_text("all:\n  children:\n    mongodb:\n      hosts:\n        n1: {ansible_connection: local,"
                         " ansible_python_interpreter: %s}\n" % sys.executable)
    result, output = run_upgrade({"8.0": "8.0.4"}, inventory)
    assert result.returncode != 0
    assert ("mongodb_rs_upgrade_packages[8.0]=8.0.4: the package source of n1 has no mongodb-org-server 8.0.4"
            in output), result.stdout[-3000:]
    assert "Read this member's state" not in output, result.stdout[-3000:]


def test_the_sharded_upgrade_asks_every_member_and_router_before_any_change(tmp_path):
    """rolling_upgrade.yml asks the package source of every config server, shard member and router (the same
    entry point as the replica set's, delegated from the first mongos): each one lacking the version is named, and
    the run stops before the cluster is read. Every host is this machine, whose apt sources have no MongoDB."""
    local = "{ansible_connection: local, ansible_python_interpreter: %s}" % sys.executable
    inventory = tmp_path / "inventory.yml"
    inventory.write_text("all:\n  children:\n"
                         "    mongodb_mongos:\n      hosts:\n        r1: %s\n"
                         "    mongodb_config:\n      hosts:\n        c1: %s\n"
                         "    shard_a:\n      hosts:\n        a1: %s\n        a2: %s\n" % ((local,) * 4))
    result = run_playbook(inventory, "rolling_upgrade.yml",
                          extra={"mongodb_rs_upgrade_target": "8.0", "mongodb_rs_upgrade_packages": {"8.0": "8.0.4"},
                                 "mongodb_rs_shard_groups": ["shard_a"]})
    output = " ".join(result.stdout.split())
    assert result.returncode != 0
    assert ("mongodb_rs_upgrade_packages[8.0]=8.0.4: the package source of c1, a1, a2, r1 has no mongodb-org-server "
            "8.0.4" in output), result.stdout[-3000:]
    assert "Upgrade the cluster from this mongos" not in output, result.stdout[-3000:]
