"""The recovery account's password rotated by a converge (clone_drill.yml): every member's recovery channel holds
the new password, the old one is discarded, the new one logs in and the old one no longer does. The drills after
it (the outage and gr_reboot.yml) recover members through that channel, so they pass only with the new password."""
import json
import os

import pytest

NEW, OLD = "molecule-recovery-rotated", "molecule-recovery-secret"


@pytest.fixture(scope="module")
def rotation():
    with open(os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "drill", "rotation.json"),
              encoding="utf-8") as handle:
        return json.load(handle)


def test_every_members_recovery_channel_holds_the_new_password(rotation):
    assert sorted(rotation) == ["gr1", "gr2", "gr3"], rotation
    for member, (channel, dummy) in rotation.items():
        assert channel.split("\t") == ["gr_recovery", "1"], (member, channel)


def test_the_old_password_was_discarded(rotation):
    assert all(secondary == "0" for dummy, secondary in rotation.values()), rotation


@pytest.mark.parametrize("password, accepted", [(NEW, True), (OLD, False)])
def test_only_the_new_password_logs_in(lab_hosts, lab_ips, password, accepted):
    # the password reaches the client through its environment, not its command line
    result = lab_hosts["gr1"].run(
        "MYSQL_PWD=%s mysql --ssl-mode=REQUIRED -h %s -u gr_recovery -N -B -e 'SELECT CURRENT_USER()'",
        password, lab_ips["gr2"])
    assert (result.rc == 0) == accepted, result.stderr
    if not accepted:
        assert "Access denied" in result.stderr
