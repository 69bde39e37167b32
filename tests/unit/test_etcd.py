"""etcd: the health verdict, the member change plan (quorum refusals), the permission plan, the gateway client
against a fake opener, and the modules' behaviour through it."""
import json

import pytest

from ansible_collections.dbops.clusters.plugins.module_utils import etcd
from ansible_collections.dbops.clusters.plugins.module_utils.etcd import (
    Client, EtcdError, health_verdict, initial_cluster, member_change_plan, normalize_members, prefix_range_end,
    role_permission_plan, wanted_permission)


def member(mid, name, peer, client=None, learner=False):
    return {"id": mid, "name": name, "peer_urls": [peer], "client_urls": [client] if client else [],
            "learner": learner, "started": bool(name)}


THREE = [member("1", "e1", "https://10.0.0.1:2380", "https://10.0.0.1:2379"),
         member("2", "e2", "https://10.0.0.2:2380", "https://10.0.0.2:2379"),
         member("3", "e3", "https://10.0.0.3:2380", "https://10.0.0.3:2379")]


def healthy(leader="1"):
    return {"health": True, "reason": "", "leader": leader, "errors": []}


# --- prefix ranges -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("prefix,end", [("/service/", b"/service0"), ("a", b"b"), ("a\xff".encode("latin-1"), b"b"),
                                        (b"\xff\xff", b"\0")])
def test_prefix_range_end_is_etcds(prefix, end):
    assert prefix_range_end(prefix) == end


# --- health verdict ------------------------------------------------------------------------------------------

def test_a_whole_cluster_with_one_leader_passes():
    verdict = health_verdict(THREE, {"1": healthy(), "2": healthy(), "3": healthy()}, ["e1", "e2", "e3"])
    assert verdict["ok"] and verdict["leader"] == "e1" and verdict["reasons"] == []


def test_a_member_not_answering_fails_naming_it():
    verdict = health_verdict(THREE, {"1": healthy(), "2": healthy(), "3": {"health": None, "reason": "refused"}})
    assert not verdict["ok"] and verdict["unhealthy"] == ["e3"]
    assert any("e3" in r and "refused" in r for r in verdict["reasons"])


def test_a_member_missing_from_the_answers_fails():
    verdict = health_verdict(THREE, {"1": healthy(), "2": healthy()})
    assert not verdict["ok"] and "member e3 did not answer" in verdict["reasons"][0]


def test_members_disagreeing_on_the_leader_fail():
    verdict = health_verdict(THREE, {"1": healthy("1"), "2": healthy("2"), "3": healthy("1")})
    assert not verdict["ok"] and any("disagree" in r for r in verdict["reasons"])


def test_no_leader_fails():
    verdict = health_verdict(THREE, {"1": healthy("0"), "2": healthy("0"), "3": healthy("0")})
    assert not verdict["ok"] and "no leader" in verdict["reasons"]


def test_expected_members_are_compared_by_name():
    verdict = health_verdict(THREE, {"1": healthy(), "2": healthy(), "3": healthy()}, ["e1", "e2", "e4"])
    assert not verdict["ok"]
    assert "expected members missing from the member list: e4" in verdict["reasons"]
    assert "members not expected: e3" in verdict["reasons"]


def test_an_unstarted_member_or_a_learner_fails():
    members = THREE[:2] + [member("4", "", "https://10.0.0.4:2380")]
    verdict = health_verdict(members, {"1": healthy(), "2": healthy(), "4": {"health": None, "reason": "x"}})
    assert not verdict["ok"] and any("has not started" in r for r in verdict["reasons"])
    members = THREE[:2] + [member("3", "e3", "https://10.0.0.3:2380", learner=True)]
    verdict = health_verdict(members, {"1": healthy(), "2": healthy(), "3": healthy()})
    assert any("learner" in r for r in verdict["reasons"])


def test_an_alarm_fails():
    verdict = health_verdict(THREE, {"1": healthy(), "2": healthy(), "3": dict(healthy(), errors=["NOSPACE"])})
    assert not verdict["ok"] and any("NOSPACE" in r for r in verdict["reasons"])


def test_no_member_list_fails():
    assert not health_verdict([], {})["ok"]


# --- member changes ------------------------------------------------------------------------------------------

def test_removing_a_dead_member_of_three_keeps_quorum():
    plan = member_change_plan(THREE, {"1", "2"}, "absent", "e3", [])
    assert plan["action"] == "remove" and plan["refusal"] is None and plan["member"]["id"] == "3"


def test_removing_a_healthy_member_while_another_is_down_is_refused():
    plan = member_change_plan(THREE, {"1", "2"}, "absent", "e2", [])
    assert plan["action"] == "none" and "quorum" in plan["refusal"]


def test_removing_the_only_healthy_member_is_refused():
    two = THREE[:2]
    plan = member_change_plan(two, {"1"}, "absent", "e1", [])
    assert "only healthy member" in plan["refusal"]


def test_removing_the_only_member_is_refused():
    plan = member_change_plan(THREE[:1], {"1"}, "absent", "e1", [])
    assert "only member" in plan["refusal"]


def test_removing_an_absent_member_changes_nothing():
    plan = member_change_plan(THREE, {"1", "2", "3"}, "absent", "e9", [])
    assert plan["action"] == "none" and plan["refusal"] is None


def test_adding_to_a_whole_cluster_is_allowed():
    plan = member_change_plan(THREE, {"1", "2", "3"}, "present", "e4", ["https://10.0.0.4:2380"])
    assert plan["action"] == "add"


def test_adding_when_the_bigger_cluster_would_lack_quorum_is_refused():
    # 4 voters need 3 healthy; only 2 are
    plan = member_change_plan(THREE, {"1", "2"}, "present", "e4", ["https://10.0.0.4:2380"])
    assert plan["action"] == "none" and "quorum" in plan["refusal"]


def test_adding_after_removing_the_dead_one_is_allowed():
    plan = member_change_plan(THREE[:2], {"1", "2"}, "present", "e4", ["https://10.0.0.4:2380"])
    assert plan["action"] == "add"


def test_a_member_added_but_not_started_counts_as_present():
    members = THREE[:2] + [member("4", "", "https://10.0.0.4:2380")]
    plan = member_change_plan(members, {"1", "2"}, "present", "e4", ["https://10.0.0.4:2380"])
    assert plan["action"] == "none" and plan["refusal"] is None and not plan["member"]["started"]


def test_a_peer_url_of_another_member_or_a_name_with_other_urls_is_refused():
    plan = member_change_plan(THREE, {"1", "2", "3"}, "present", "e4", ["https://10.0.0.3:2380"])
    assert "belongs to member e3" in plan["refusal"]
    plan = member_change_plan(THREE, {"1", "2", "3"}, "present", "e3", ["https://10.0.0.9:2380"])
    assert "remove it first" in plan["refusal"]


def test_initial_cluster_for_a_joining_member():
    members = THREE[:2] + [member("4", "", "https://10.0.0.4:2380")]
    assert initial_cluster(members, "e4", ["https://10.0.0.4:2380"]) == \
        "e1=https://10.0.0.1:2380,e2=https://10.0.0.2:2380,e4=https://10.0.0.4:2380"


def test_normalize_members_reads_the_gateways_names():
    answer = {"members": [{"ID": "123", "name": "e1", "peerURLs": ["p"], "clientURLs": ["c"]},
                          {"ID": "456", "peerURLs": ["q"], "isLearner": True}]}
    assert normalize_members(answer) == [
        {"id": "123", "name": "e1", "peer_urls": ["p"], "client_urls": ["c"], "learner": False, "started": True},
        {"id": "456", "name": "", "peer_urls": ["q"], "client_urls": [], "learner": True, "started": False}]


# --- permissions ---------------------------------------------------------------------------------------------

def test_a_role_with_exactly_the_permission_needs_nothing():
    assert role_permission_plan([wanted_permission("/service/")], "/service/") == ([], [])


def test_a_role_with_another_permission_loses_it_and_gets_its_own():
    other = {"type": "READ", "key": b"/", "range_end": b"\0"}
    revoke, grant = role_permission_plan([other], "/service/")
    assert revoke == [other] and grant == [wanted_permission("/service/")]


def test_permissions_read_from_the_gateway_default_to_read():
    perms = etcd.normalize_permissions([{"key": etcd.b64("/a"), "range_end": etcd.b64("/b")},
                                        {"permType": "READWRITE", "key": etcd.b64("/service/"),
                                         "range_end": etcd.b64("/service0")}])
    assert perms[0]["type"] == "READ" and perms[1] == wanted_permission("/service/")


# --- the client ----------------------------------------------------------------------------------------------

class FakeServer(object):
    """An opener that answers gateway paths from a dict, recording each request (path, body, token)."""

    def __init__(self, answers, token="tok"):
        self.answers = answers
        self.requests = []
        self.token = token

    def __call__(self, request, timeout):
        body = json.loads(request.data.decode()) if request.data else None
        path = request.full_url.split(":2379", 1)[1]
        self.requests.append((path, body, request.headers.get("Authorization")))
        if path == "/v3/auth/authenticate":
            if body["password"] != "right":
                raise EtcdError("x", status=401, body={"error": "etcdserver: authentication failed, invalid user ID "
                                                                "or password"})
            return {"token": self.token}
        answer = self.answers[path]
        if isinstance(answer, Exception):
            raise answer
        return answer


def test_the_client_logs_in_once_and_sends_the_token():
    server = FakeServer({"/v3/kv/put": {}})
    c = Client("https://h:2379", None, None, None, user="patroni", password="right", opener=server)
    c.call("/v3/kv/put", {"key": "a"})
    c.call("/v3/kv/put", {"key": "b"})
    assert [r[0] for r in server.requests] == ["/v3/auth/authenticate", "/v3/kv/put", "/v3/kv/put"]
    assert server.requests[1][2] == "tok" and server.requests[0][1]["password"] == "right"


def test_a_wrong_password_is_an_authentication_failure():
    c = Client("https://h:2379", None, None, None, user="patroni", password="wrong", opener=FakeServer({}))
    with pytest.raises(EtcdError) as failed:
        c.call("/v3/kv/put", {})
    assert etcd.is_auth_failed(failed.value)


def test_ask_any_moves_past_members_that_do_not_answer():
    def opener(request, timeout):
        if "10.0.0.1" in request.full_url:
            raise EtcdError("refused")
        return {"members": []}
    answer, endpoint = etcd.ask_any({"connect_timeout": 1}, ["https://10.0.0.1:2379", "https://10.0.0.2:2379"],
                                    "/v3/cluster/member/list", {}, opener=opener)
    assert endpoint == "https://10.0.0.2:2379"


def test_ask_any_does_not_retry_a_refusal():
    def opener(request, timeout):
        raise EtcdError("denied", status=403, body={"error": "etcdserver: permission denied"})
    with pytest.raises(EtcdError):
        etcd.ask_any({"connect_timeout": 1}, ["https://a:2379", "https://b:2379"], "/x", {}, opener=opener)


def test_survey_reads_every_member_and_its_health():
    def opener(request, timeout):
        path = request.full_url.split(":2379", 1)[1]
        host = request.full_url.split("//")[1].split(":")[0]
        if path == "/v3/cluster/member/list":
            return {"members": [{"ID": "1", "name": "e1", "peerURLs": ["https://a:2380"], "clientURLs": ["https://a:2379"]},
                                {"ID": "2", "name": "e2", "peerURLs": ["https://b:2380"], "clientURLs": ["https://b:2379"]}]}
        if path == "/v3/maintenance/status":
            if host == "b":
                raise EtcdError("refused")
            return {"header": {"member_id": "1"}, "leader": "1", "raftTerm": "3"}
        if path == "/health":
            return {"health": "true"}
        raise AssertionError(path)
    members, statuses, seen = etcd.survey({"endpoints": ["https://a:2379"], "connect_timeout": 1}, opener=opener)
    assert [m["name"] for m in members] == ["e1", "e2"]
    assert statuses["1"]["health"] is True and statuses["2"]["health"] is None
    verdict = health_verdict(members, statuses)
    assert not verdict["ok"] and verdict["unhealthy"] == ["e2"]


def test_a_login_is_skipped_while_authentication_is_off():
    """With root's password given before authentication is on (the first run), requests go without a token."""
    def opener(request, timeout):
        path = request.full_url.split(":2379", 1)[1]
        if path == "/v3/auth/authenticate":
            raise EtcdError("x", status=400, body={"code": 9, "message": "etcdserver: authentication is not enabled"})
        assert request.headers.get("Authorization") is None
        return {"members": []}
    c = Client("https://h:2379", None, None, None, user="root", password="pw", opener=opener)
    assert c.call("/v3/cluster/member/list", {}) == {"members": []}
    assert c.auth_off
