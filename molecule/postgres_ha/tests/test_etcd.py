"""The etcd Patroni keeps its keys in, after the drills (pg3's member replaced by px1): the members and their
leader, Patroni's own keys read through each member as Patroni's user, TLS and authentication refusals, each user
kept to its prefix, the files the role left on each member, Patroni's etcd client files used from inside each
PostgreSQL host as the postgres user, and what check mode predicted on the fresh hosts (prepare.yml)."""
import json
import os
import re
import subprocess

import pytest

from ansible_collections.dbops.clusters.plugins.module_utils.etcd import Client, EtcdError, b64, unb64

EPHEMERAL = os.environ["MOLECULE_EPHEMERAL_DIRECTORY"]
TLS = os.path.join(EPHEMERAL, "inventory", "dbops-tls")
# molecule.yml's etcd_users
PATRONI = ("patroni", "molecule-etcd-patroni-secret")
OTHER = ("other", "molecule 'other' \\ \"secret\"")
# after the replacement drill: pg3's member lost, px1 in its place (molecule.yml's group etcd_after)
MEMBERS = ["pg1", "pg2", "px1"]
POSTGRES = ["pg1", "pg2", "pg3"]
SCOPE = "postgres"          # postgres_tuned_patroni_scope: the inventory group's name


def url(lab_ips, name):
    return "https://%s:2379" % lab_ips[name]


def client(lab_ips, name, user=None, cert="pg1-etcd-client", timeout=5):
    return Client(url(lab_ips, name), os.path.join(TLS, "etcd-ca.pem"), os.path.join(TLS, cert + ".pem"),
                  os.path.join(TLS, cert + "-key.pem"), timeout=timeout, user=user and user[0],
                  password=user and user[1])


def get(c, key):
    kvs = c.call("/v3/kv/range", {"key": b64(key)}).get("kvs") or []
    return unb64(kvs[0]["value"]).decode() if kvs else None


def put(c, key, value):
    return c.call("/v3/kv/put", {"key": b64(key), "value": b64(value)})


def psql(host, query):
    result = host.run("runuser -u postgres -- psql -X -At -c %s", query)
    assert result.rc == 0, result.stderr
    return result.stdout.strip()


def test_the_members_are_the_replaced_group_with_one_leader(lab_ips):
    members = client(lab_ips, "pg1", PATRONI).call("/v3/cluster/member/list", {})["members"]
    assert sorted(m["name"] for m in members) == MEMBERS
    leaders = set()
    for name in MEMBERS:
        assert client(lab_ips, name).call("/health", None, auth=False)["health"] in (True, "true"), name
        leaders.add(client(lab_ips, name, PATRONI).call("/v3/maintenance/status", {})["leader"])
    assert len(leaders) == 1 and leaders <= {m["ID"] for m in members}, leaders


def test_the_lost_member_runs_no_etcd_and_pg3_still_runs_postgresql_under_patroni(lab_hosts):
    host = lab_hosts["pg3"]
    assert not host.service("etcd").is_running
    assert not host.file("/var/lib/etcd/dbops/member").exists
    assert host.service("patroni@17-main").is_running
    assert psql(host, "SELECT pg_is_in_recovery()") in ("t", "f")


def test_patronis_leader_key_read_through_each_member_as_patroni_names_the_primary(lab_hosts, lab_ips):
    primaries = [m for m in POSTGRES if psql(lab_hosts[m], "SELECT pg_is_in_recovery()") == "f"]
    assert len(primaries) == 1, primaries
    for name in MEMBERS:
        c = client(lab_ips, name, PATRONI)
        assert get(c, "/service/%s/leader" % SCOPE) == primaries[0], name
        # the key Patroni wrote when it created the cluster, before px1 joined, is on px1 too
        assert get(c, "/service/%s/initialize" % SCOPE), name


def test_a_key_written_through_one_member_is_read_through_the_others_as_patroni(lab_ips):
    put(client(lab_ips, "px1", PATRONI), "/service/verify/key", "through px1")
    assert get(client(lab_ips, "pg1", PATRONI), "/service/verify/key") == "through px1"
    assert get(client(lab_ips, "pg2", PATRONI), "/service/verify/key") == "through px1"


def test_a_client_without_a_certificate_is_refused_in_the_handshake(lab_ips):
    c = Client(url(lab_ips, "pg1"), os.path.join(TLS, "etcd-ca.pem"), None, None, timeout=5)
    with pytest.raises(EtcdError) as refused:
        c.call("/health", None, auth=False)
    assert refused.value.status is None, "an HTTP answer means the handshake let it in: %s" % refused.value


def test_a_certificate_from_another_ca_is_refused(lab_ips, tmp_path):
    # a self-signed certificate, not from the etcd CA: refused in the handshake like none at all
    key, cert = tmp_path / "k.pem", tmp_path / "c.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=intruder"], check=True, capture_output=True)
    c = Client(url(lab_ips, "px1"), os.path.join(TLS, "etcd-ca.pem"), str(cert), str(key), timeout=5)
    with pytest.raises(EtcdError) as refused:
        c.call("/health", None, auth=False)
    assert refused.value.status is None


def test_the_postgresql_ca_grants_nothing_here(lab_ips):
    # pg1's PostgreSQL certificate is from the collection's PostgreSQL CA (pg-ca): refused like any other CA's
    c = Client(url(lab_ips, "pg2"), os.path.join(TLS, "etcd-ca.pem"), os.path.join(TLS, "pg1-pg.pem"),
               os.path.join(TLS, "pg1-pg-key.pem"), timeout=5)
    with pytest.raises(EtcdError) as refused:
        c.call("/health", None, auth=False)
    assert refused.value.status is None


def test_a_client_without_a_login_may_not_read_or_write(lab_ips):
    with pytest.raises(EtcdError) as refused:
        put(client(lab_ips, "pg1"), "/service/verify/anonymous", "x")
    assert refused.value.status is not None and refused.value.status >= 400
    with pytest.raises(EtcdError):
        get(client(lab_ips, "pg1"), "/service/%s/leader" % SCOPE)


def test_a_user_outside_its_prefix_is_refused(lab_ips):
    with pytest.raises(EtcdError) as refused:
        put(client(lab_ips, "pg1", PATRONI), "/other/verify", "x")
    assert "permission denied" in refused.value.text
    with pytest.raises(EtcdError) as refused:
        get(client(lab_ips, "px1", OTHER), "/service/%s/leader" % SCOPE)
    assert "permission denied" in refused.value.text
    put(client(lab_ips, "px1", OTHER), "/other/verify", "mine")
    assert get(client(lab_ips, "pg2", OTHER), "/other/verify") == "mine"


def test_a_wrong_password_is_refused(lab_ips):
    with pytest.raises(EtcdError) as refused:
        client(lab_ips, "pg1", ("patroni", "not the password")).authenticate()
    assert "authentication failed" in refused.value.text


@pytest.mark.parametrize("name", MEMBERS)
def test_files_and_data_on_each_member(lab_hosts, name):
    host = lab_hosts[name]
    assert not host.file("/etc/etcd/dbops/initial.env").exists, "the initial settings outlive the first start"
    key = host.file("/etc/etcd/tls/host.key")
    assert (key.user, key.group, key.mode) == ("etcd", "etcd", 0o600)
    env = host.file("/etc/etcd/dbops/etcd.env")
    assert env.mode == 0o640 and "ETCD_CLIENT_CERT_AUTH=true" in env.content_string
    assert "ETCD_PEER_CLIENT_CERT_AUTH=true" in env.content_string
    assert "ETCD_NAME=%s\n" % name in env.content_string
    assert not host.file("/var/lib/etcd/default").exists, "the package's default member's data is there"
    assert host.file("/var/lib/etcd/dbops/member").is_directory
    assert not host.file("/usr/sbin/policy-rc.d").exists
    assert host.service("etcd").is_running and host.service("etcd").is_enabled


# Runs inside a PostgreSQL host as Patroni's etcd client does: Patroni's etcd client files (the etcd role's client
# entry point, owned by postgres), the user, password and URL read from stdin (the test feeds them with printf), a
# put and a get through the gateway (urllib, ssl).
CLIENT_ON_HOST = """
import base64, json, ssl, sys, urllib.request
user, password, url = sys.stdin.read().split("\\n")[:3]
ctx = ssl.create_default_context(cafile="/etc/patroni/etcd/ca.crt")
ctx.load_cert_chain("/etc/patroni/etcd/client.crt", "/etc/patroni/etcd/client.key")
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


@pytest.mark.parametrize("name", POSTGRES)
def test_patronis_etcd_client_files_work_on_the_host_as_postgres(lab_hosts, lab_ips, name):
    host = lab_hosts[name]
    key = host.file("/etc/patroni/etcd/client.key")
    assert (key.user, key.group, key.mode) == ("postgres", "postgres", 0o600)
    subject = host.run("openssl x509 -in /etc/patroni/etcd/client.crt -noout -subject")
    assert subject.stdout.strip() == "subject=", "a gateway client certificate must have no common name"
    # through px1, the member that replaced pg3
    result = host.run("printf '%%s\\n%%s\\n%%s\\n' %s %s %s | runuser -u postgres -- python3 -c %s", PATRONI[0],
                      PATRONI[1], url(lab_ips, "px1"), CLIENT_ON_HOST)
    assert result.rc == 0 and result.stdout.strip() == "ok", result.stderr


def test_check_mode_on_the_fresh_hosts_predicted_the_cluster(lab_ips):
    # prepare.yml ran the role with --check on etcd_after's fresh hosts and asserted that nothing changed
    with open(os.path.join(EPHEMERAL, "etcd-check-mode.log"), encoding="utf-8") as handle:
        log = handle.read()
    recap = dict(re.findall(r"^(\S+)\s+:\s+(ok=.*)$", log, re.M))
    print("check mode: %s" % json.dumps(recap))
    assert sorted(recap) == MEMBERS, recap
    assert all("failed=0" in line and "unreachable=0" in line for line in recap.values()), recap
    # px1 has nothing installed: apt's check mode names the packages; pg1 and pg2 have them (the PostgreSQL
    # image). No host has its certificate yet: the files and the formation are predicted, then the authentication.
    flat = " ".join(log.split())        # the yaml callback folds long messages
    assert "NEW packages will be installed: etcd-client etcd-server" in flat
    assert flat.count("then form the cluster") == 3
    assert "would create root and patroni, other, grant each user READWRITE on its prefix" in flat
