"""Verify the etcd scenario against the running servers: TLS and authentication refusals, a key through one member
read on another as Patroni's user, the drills' records (rolling restart, killed leader, replaced member), and the
files the role left on the hosts."""
import json
import os
import subprocess

import pytest

from ansible_collections.dbops.clusters.plugins.module_utils.etcd import Client, EtcdError, b64, unb64

EPHEMERAL = os.environ["MOLECULE_EPHEMERAL_DIRECTORY"]
TLS = os.path.join(EPHEMERAL, "inventory", "dbops-tls")
PATRONI = ("patroni", "molecule 'patroni' \\ \"secret\"")      # molecule.yml's etcd_users
OTHER = ("other", "molecule other secret")
# after the replacement drill: e3 lost, e4 in its place
MEMBERS = ["e1", "e2", "e4"]
# A rolling restart of three members under the writer (seen: 2 failed writes, 0.3 s longest gap; the killed leader:
# 2 failed, 2.0 s): each restart may fail the writes in flight on the member
# restarted (the writer then moves on) and the leader's restart costs an election (1 s election timeout).
MAX_FAILED_WRITES = 6
MAX_WRITE_GAP_SECONDS = 5.0


def url(lab_ips, name):
    return "https://%s:2379" % lab_ips[name]


def client(lab_ips, name, user=None, cert="e1-etcd-client", timeout=5):
    return Client(url(lab_ips, name), os.path.join(TLS, "etcd-ca.pem"), os.path.join(TLS, cert + ".pem"),
                  os.path.join(TLS, cert + "-key.pem"), timeout=timeout, user=user and user[0],
                  password=user and user[1])


def get(c, key):
    kvs = c.call("/v3/kv/range", {"key": b64(key)}).get("kvs") or []
    return unb64(kvs[0]["value"]).decode() if kvs else None


def put(c, key, value):
    return c.call("/v3/kv/put", {"key": b64(key), "value": b64(value)})


def record(name):
    directory = os.path.join(EPHEMERAL, name)
    with open(os.path.join(directory, "writer.json"), encoding="utf-8") as handle:
        summary = json.load(handle)
    with open(os.path.join(directory, "acks.log"), encoding="utf-8") as handle:
        acks = [line.split() for line in handle if line.strip()]
    return directory, summary, acks


def test_the_cluster_is_the_replaced_group_with_one_leader(lab_ips):
    members = client(lab_ips, "e1", PATRONI).call("/v3/cluster/member/list", {})["members"]
    assert sorted(m["name"] for m in members) == MEMBERS
    leaders = set()
    for name in MEMBERS:
        c = client(lab_ips, name)
        assert c.call("/health", None, auth=False)["health"] in (True, "true"), name
        leaders.add(client(lab_ips, name, PATRONI).call("/v3/maintenance/status", {})["leader"])
    assert len(leaders) == 1


def test_a_key_written_through_one_member_is_read_through_another_as_patroni(lab_ips):
    put(client(lab_ips, "e1", PATRONI), "/service/verify/key", "through e1")
    assert get(client(lab_ips, "e2", PATRONI), "/service/verify/key") == "through e1"
    assert get(client(lab_ips, "e4", PATRONI), "/service/verify/key") == "through e1"


def test_a_client_without_a_certificate_is_refused_in_the_handshake(lab_ips):
    c = Client(url(lab_ips, "e1"), os.path.join(TLS, "etcd-ca.pem"), None, None, timeout=5)
    with pytest.raises(EtcdError) as refused:
        c.call("/health", None, auth=False)
    assert refused.value.status is None, "an HTTP answer means the handshake let it in: %s" % refused.value


def test_a_certificate_from_another_ca_is_refused(lab_ips, tmp_path):
    # a self-signed certificate, not from the etcd CA: refused in the handshake like none at all
    key, cert = tmp_path / "k.pem", tmp_path / "c.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=intruder"], check=True, capture_output=True)
    c = Client(url(lab_ips, "e1"), os.path.join(TLS, "etcd-ca.pem"), str(cert), str(key), timeout=5)
    with pytest.raises(EtcdError) as refused:
        c.call("/health", None, auth=False)
    assert refused.value.status is None


def test_a_client_without_a_login_may_not_read_or_write(lab_ips):
    with pytest.raises(EtcdError) as refused:
        put(client(lab_ips, "e1"), "/service/verify/anonymous", "x")
    assert refused.value.status is not None and refused.value.status >= 400
    with pytest.raises(EtcdError):
        get(client(lab_ips, "e1"), "/service/verify/key")


def test_a_user_outside_its_prefix_is_refused(lab_ips):
    with pytest.raises(EtcdError) as refused:
        put(client(lab_ips, "e1", PATRONI), "/other/verify", "x")
    assert "permission denied" in refused.value.text
    with pytest.raises(EtcdError) as refused:
        get(client(lab_ips, "e2", OTHER), "/service/verify/key")
    assert "permission denied" in refused.value.text
    put(client(lab_ips, "e2", OTHER), "/other/verify", "mine")


def test_a_wrong_password_is_refused(lab_ips):
    with pytest.raises(EtcdError) as refused:
        client(lab_ips, "e1", ("patroni", "not the password")).authenticate()
    assert "authentication failed" in refused.value.text


def test_rolling_restart_kept_the_writer_writing_and_restarted_the_leader_last(lab_ips):
    directory, summary, acks = record("drill-rolling")
    with open(os.path.join(directory, "order.json"), encoding="utf-8") as handle:
        order = json.load(handle)
    print("rolling restart: %s; leader before %s; started %s" % (summary, order["leader"], order["started"]))
    started = order["started"]
    assert order["leader"] in started and max(started, key=started.get) == order["leader"]
    assert len(set(started.values())) == 3
    assert summary["failed"] <= MAX_FAILED_WRITES, summary
    assert summary["max_gap_seconds"] <= MAX_WRITE_GAP_SECONDS, summary
    c = client(lab_ips, "e4", PATRONI)
    answer = c.call("/v3/kv/range", {"key": b64("/service/drill-rolling/"),
                                     "range_end": b64("/service/drill-rolling0"), "count_only": True})
    assert int(answer.get("count", 0)) == summary["acked"], "every acknowledged write is there, read on e4"


def test_the_other_two_wrote_while_the_leader_was_killed(lab_ips):
    directory, summary, acks = record("drill-kill")
    with open(os.path.join(directory, "killed_at"), encoding="utf-8") as handle:
        killed_at = float(handle.read())
    with open(os.path.join(directory, "back_at"), encoding="utf-8") as handle:
        back_at = float(handle.read())
    with open(os.path.join(directory, "killed"), encoding="utf-8") as handle:
        killed = handle.read().strip()
    during = [a for a in acks if killed_at + 2 < float(a[1]) < back_at]
    print("kill drill: %s killed for %.1f s; %s; %d writes acknowledged while it was down"
          % (killed, back_at - killed_at, summary, len(during)))
    assert len(during) >= 20, "the two others must go on writing while %s is down" % killed
    assert all(a[2] != url(lab_ips, killed) for a in during)
    assert summary["max_gap_seconds"] <= MAX_WRITE_GAP_SECONDS, summary
    answer = client(lab_ips, "e2", PATRONI).call("/v3/kv/range", {
        "key": b64("/service/drill-kill/"), "range_end": b64("/service/drill-kill0"), "count_only": True})
    assert int(answer.get("count", 0)) == summary["acked"], "every acknowledged write is there"


def test_the_replaced_member_is_gone_and_its_replacement_joined(lab_ips):
    with open(os.path.join(EPHEMERAL, "replace.log"), encoding="utf-8") as handle:
        log = handle.read()
    assert "Remove the member from the cluster, never below quorum - e3" in log
    assert "Add this member through the running members" in log


@pytest.mark.parametrize("name", MEMBERS)
def test_files_and_data_on_each_member(lab_hosts, name):
    host = lab_hosts[name]
    assert not host.file("/etc/etcd/dbops/initial.env").exists, "the initial settings outlive the first start"
    key = host.file("/etc/etcd/tls/host.key")
    assert (key.user, key.group, key.mode) == ("etcd", "etcd", 0o600)
    env = host.file("/etc/etcd/dbops/etcd.env")
    assert env.mode == 0o640 and "ETCD_CLIENT_CERT_AUTH=true" in env.content_string
    assert "ETCD_PEER_CLIENT_CERT_AUTH=true" in env.content_string
    assert not host.file("/var/lib/etcd/default").exists, "the package's default member's data is there"
    assert host.file("/var/lib/etcd/dbops/member").is_directory
    assert not host.file("/usr/sbin/policy-rc.d").exists
    assert host.service("etcd").is_running and host.service("etcd").is_enabled


# Runs inside a host as a Patroni process would: the client files of the `client` entry point, the user, password
# and URL read from stdin (the test feeds them with printf), a put and a get through the gateway (urllib, ssl).
CLIENT_ON_HOST = """
import base64, json, ssl, sys, urllib.request
user, password, url = sys.stdin.read().split("\\n")[:3]
ctx = ssl.create_default_context(cafile="/etc/etcd-client/ca.crt")
ctx.load_cert_chain("/etc/etcd-client/client.crt", "/etc/etcd-client/client.key")
def call(path, body, token=None):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = token
    request = urllib.request.Request(url + path, json.dumps(body).encode(), headers)
    return json.load(urllib.request.urlopen(request, context=ctx, timeout=5))
token = call("/v3/auth/authenticate", {"name": user, "password": password})["token"]
b64 = lambda s: base64.b64encode(s.encode()).decode()
call("/v3/kv/put", {"key": b64("/service/from-host"), "value": b64("ok")}, token)
kvs = call("/v3/kv/range", {"key": b64("/service/from-host")}, token)["kvs"]
print(base64.b64decode(kvs[0]["value"]).decode())
"""


@pytest.mark.parametrize("name", ["e1", "e4"])
def test_the_client_files_for_patroni_work_on_the_host(lab_hosts, lab_ips, name):
    host = lab_hosts[name]
    assert host.file("/etc/etcd-client/client.key").mode == 0o600
    subject = host.run("openssl x509 -in /etc/etcd-client/client.crt -noout -subject")
    assert subject.stdout.strip() == "subject=", "a gateway client certificate must have no common name"
    result = host.run("printf '%%s\\n%%s\\n%%s\\n' %s %s %s | python3 -c %s", PATRONI[0], PATRONI[1],
                      url(lab_ips, "e2"), CLIENT_ON_HOST)
    assert result.rc == 0 and result.stdout.strip() == "ok", result.stderr
