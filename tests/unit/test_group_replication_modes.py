"""gr_member's topology step (single <-> multi-primary, set_primary) against a fake session: the statement it
runs each way, nothing run when the group is already in the requested mode, check mode predicting without
waiting, and refusals (set_primary in multi-primary mode, an unknown primary_uuid, a member not ONLINE)."""
import pytest

from ansible_collections.dbops.clusters.plugins.modules import gr_member

A, B, C = "aaaaaaaa-0000-0000-0000-000000000001", "bbbbbbbb-0000-0000-0000-000000000002", "cccccccc-0000-0000-0000-000000000003"


class Failed(Exception):
    pass


class FakeModule(object):
    def __init__(self, action, primary_uuid=None, check_mode=False):
        self.params = {"action": action, "primary_uuid": primary_uuid, "timeout": 5, "interval": 0.1}
        self.check_mode = check_mode

    def fail_json(self, msg, **kwargs):
        raise Failed(msg)


class FakeSession(object):
    def __init__(self):
        self.queries = []

    def execute(self, query, args=None):
        self.queries.append((query, args))


def state(single_primary=True, primary=A, member_state="ONLINE"):
    roles = dict((m, "PRIMARY" if (not single_primary or m == primary) else "SECONDARY") for m in (A, B, C))
    return {"member_state": member_state, "member_role": roles[A], "single_primary_mode": single_primary,
            "view": [{"member_id": m, "host": m[:1], "state": "ONLINE", "role": roles[m]} for m in (A, B, C)]}


def run(action, current, primary_uuid=None, check_mode=True):
    module, session, result = FakeModule(action, primary_uuid, check_mode), FakeSession(), {}
    gr_member.topology(module, session, current, result)
    return result, [entry[0] for entry in session.queries], session.queries


def test_single_to_multi_primary_runs_the_groups_function():
    result, queries = run("multi_primary", state())[:2]
    assert result["changed"] and queries == ["SELECT group_replication_switch_to_multi_primary_mode()"]


def test_multi_to_single_primary_with_a_named_primary():
    result, queries, raw = run("single_primary", state(single_primary=False), primary_uuid=B.upper())
    assert result["changed"] and queries == ["SELECT group_replication_switch_to_single_primary_mode(%s)"]
    assert raw[0][1] == [B]


def test_multi_to_single_primary_letting_the_group_elect():
    result, queries = run("single_primary", state(single_primary=False))[:2]
    assert result["changed"] and queries == ["SELECT group_replication_switch_to_single_primary_mode()"]


@pytest.mark.parametrize("action,single", [("multi_primary", False), ("single_primary", True)])
def test_already_in_the_requested_mode_changes_nothing(action, single):
    result, queries = run(action, state(single_primary=single))[:2]
    assert not result["changed"] and queries == []


def test_a_switch_waits_until_the_group_applied_it_outside_check_mode(monkeypatch):
    seen = []

    def fake_wait(module, predicate, what):
        applied = dict(state(single_primary=False), member_role="PRIMARY")
        seen.append((predicate(state()), predicate(applied), what))
        return applied, 1.5

    monkeypatch.setattr(gr_member, "wait_for", fake_wait)
    result = run("multi_primary", state(), check_mode=False)[0]
    assert seen == [(False, True, "the group to apply multi_primary")]
    assert result["waited_seconds"] == 1.5


def test_set_primary_is_refused_in_multi_primary_mode():
    with pytest.raises(Failed, match="single-primary"):
        run("set_primary", state(single_primary=False), primary_uuid=B)


def test_unknown_primary_and_a_member_not_online_are_refused():
    with pytest.raises(Failed, match="not in the group's view"):
        run("single_primary", state(single_primary=False), primary_uuid="dddddddd-0000-0000-0000-000000000004")
    with pytest.raises(Failed, match="needs an ONLINE member"):
        run("multi_primary", state(member_state="RECOVERING"))


class ChannelSession(FakeSession):
    """Holds the recovery channel's stored credentials, as mysql.slave_master_info does."""

    def __init__(self, stored):
        super(ChannelSession, self).__init__()
        self.stored = stored

    def fetch(self, query, args=None):
        assert "mysql.slave_master_info" in query
        return [dict(user=self.stored[0], password=self.stored[1])] if self.stored else []


@pytest.mark.parametrize("stored, changed, reason", [
    (("gr_recovery", "new-secret"), False, "already holds these credentials"),
    (("gr_recovery", "old-secret"), True, "changed (a new password)"),
    (("repl", "new-secret"), True, "changed (user repl -> gr_recovery)"),
    (None, True, "were set"),
])
def test_the_recovery_channel_takes_rotated_credentials_only_when_they_differ(stored, changed, reason):
    module = FakeModule("credentials")
    module.params.update(recovery_user="gr_recovery", recovery_password="new-secret")
    session, result = ChannelSession(stored), {}
    gr_member.credentials(module, session, result)
    assert result["changed"] is changed and reason in result["reason"], result
    statements = [query for query, dummy in session.queries]
    assert statements == (["CHANGE REPLICATION SOURCE TO SOURCE_USER = %s, SOURCE_PASSWORD = %s "
                           "FOR CHANNEL 'group_replication_recovery'"] if changed else [])
    # the password travels as a parameter, never inside the statement or the reason
    assert all("new-secret" not in query for query in statements) and "new-secret" not in result["reason"]
