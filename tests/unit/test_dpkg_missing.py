"""The dpkg_missing filter: which packages the roles still hand to apt after asking dpkg (lab speed-up)."""
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.dbops.clusters.plugins.filter.dpkg_missing import dpkg_missing

# Real output of dpkg-query --show --showformat='${Package}:${db:Status-Status},' on a lab host (an unknown
# name is only reported on stderr).
LAB = "galera-4:installed,mariadb-server:installed,python3-pymysql:installed,"


def test_nothing_missing_when_dpkg_reports_every_package_installed():
    assert dpkg_missing(["mariadb-server", "galera-4", "python3-pymysql"], LAB) == []


def test_unknown_packages_are_missing_in_their_order():
    assert dpkg_missing(["socat", "mariadb-server", "rsync"], LAB) == ["socat", "rsync"]


@pytest.mark.parametrize("status", ["half-installed", "unpacked", "half-configured", "config-files",
                                    "not-installed", "triggers-pending", ""])
def test_a_package_not_fully_installed_is_left_to_apt(status):
    assert dpkg_missing(["keepalived"], "keepalived:%s," % status) == ["keepalived"]


def test_no_output_means_everything_is_missing():
    # dpkg-query failed (no dpkg, or every name unknown): apt decides, as before the check existed.
    assert dpkg_missing(["keepalived", "mariadb-client-core"], "") == ["keepalived", "mariadb-client-core"]
    assert dpkg_missing(["keepalived"], None) == ["keepalived"]


def test_only_exact_names_count():
    # A versioned or architecture-qualified name is never matched by dpkg's plain package name.
    assert dpkg_missing(["mysql-server=9.7*", "libc6:amd64"], "mysql-server:installed,libc6:installed,") == \
        ["mysql-server=9.7*", "libc6:amd64"]


def test_newlines_separate_entries_too():
    assert dpkg_missing(["a", "b"], "a:installed\nb:installed\n") == []


def test_refuses_a_string():
    with pytest.raises(AnsibleFilterError):
        dpkg_missing("keepalived", LAB)
