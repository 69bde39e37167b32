"""PgBouncer in front of every member (postgres_tuned_pgbouncer, on by default under Patroni): clients reach the
leader's pooler through HAProxy and the VIP, many clients share few server connections, logins are checked against
the server's own roles, and what must not pass the pooler is refused."""
import os

import psycopg2
import pytest

MEMBERS = ("pg1", "pg2", "pg3")
PROXIES = ("px1", "px2")
VIP = "10.89.241.100"
APP = {"user": "app", "password": "molecule-app-secret", "dbname": "app"}      # molecule.yml
# molecule.yml declares max_connections 40; the pooler keeps 3 superuser slots and 10 for connections outside it
POOLER_SHARE = 40 - 3 - 10


def connect(port=5000, sslmode="require", **login):
    return psycopg2.connect(host=VIP, port=port, sslmode=sslmode, connect_timeout=5, **dict(APP, **login))


def console(host, command):
    result = host.run("runuser -u postgres -- psql -X -At -F '|' -p 6432 -d pgbouncer -c %s", command)
    assert result.rc == 0, result.stderr
    return [line.split("|") for line in result.stdout.strip().splitlines()]


def leader(lab_hosts):
    for member in MEMBERS:
        result = lab_hosts[member].run("runuser -u postgres -- psql -X -At -c 'SELECT pg_is_in_recovery()'")
        if result.stdout.strip() == "f":
            return member
    raise AssertionError("no member runs as the primary")


def test_writes_through_the_vip_reach_the_leaders_pooler(lab_hosts, lab_ips):
    name = leader(lab_hosts)
    with connect() as connection, connection.cursor() as cursor:
        # the server sees a local-socket client (PgBouncer), not the proxy's address
        cursor.execute("SELECT inet_server_addr(), pg_is_in_recovery(), "
                       "(SELECT client_addr FROM pg_stat_activity WHERE pid = pg_backend_pid())")
        assert cursor.fetchone() == (None, False, None)
        # and the leader's pooler has this client, coming from a proxy
        clients = console(lab_hosts[name], "SHOW CLIENTS")
        proxies = {lab_ips[p] for p in PROXIES}
        assert any(row[1] == "app" and row[2] == "app" and row[5] in proxies for row in clients), clients


MEMBER_ADDRESS = ("SELECT pg_is_in_recovery(), "
                  "substring(current_setting('listen_addresses') from '[0-9]+[.][0-9]+[.][0-9]+[.][0-9]+')")


def test_every_new_connection_lands_where_its_port_says(lab_hosts, lab_ips):
    # HAProxy chooses per connection: a check of the port alone (not Patroni's role) would send a share of the
    # write port's connections to replicas, and reads to the leader
    name = leader(lab_hosts)
    replicas = {lab_ips[m] for m in MEMBERS if m != name}
    seen = {5000: [], 5001: []}
    for port in (5000, 5001) * 6:
        with connect(port=port) as connection, connection.cursor() as cursor:
            cursor.execute(MEMBER_ADDRESS)
            seen[port].append(cursor.fetchone())
    assert seen[5000] == [(False, lab_ips[name])] * 6, seen
    assert all(in_recovery and address in replicas for in_recovery, address in seen[5001]), seen
    assert len({address for dummy, address in seen[5001]}) == 2, seen      # round robin over both replicas


def test_many_clients_share_a_few_server_connections(lab_hosts):
    name = leader(lab_hosts)
    clients = [connect() for _ in range(30)]
    try:
        for client in clients:
            with client.cursor() as cursor:
                cursor.execute("SELECT 1")
            client.commit()
        pools = [row for row in console(lab_hosts[name], "SHOW POOLS") if row[0] == "app" and row[1] == "app"]
        assert pools and pools[0][-2] == "transaction", pools
        result = lab_hosts[name].run(
            "runuser -u postgres -- psql -X -At -c \"SELECT count(*) FROM pg_stat_activity WHERE usename = 'app' "
            "AND backend_type = 'client backend'\"")
        # 30 connected clients, idle between transactions: the server holds at most the pool (derived: 2 per CPU,
        # at least 5, within the pooler's share of max_connections) plus its reserve
        servers = int(result.stdout.strip())
        assert 1 <= servers <= 7, servers
    finally:
        for client in clients:
            client.close()


@pytest.mark.parametrize("login, refusal", [
    ({"password": "not-the-password"}, "SASL authentication failed"),
    ({"user": "postgres", "password": "x", "dbname": "postgres"}, "login rejected"),       # no superuser here
    ({"user": "replicator", "password": "molecule-repl-secret"}, "no such user"),       # nor replication roles
    ({"sslmode": "disable"}, "SSL required"),
])
def test_the_pooler_refuses(login, refusal):
    with pytest.raises(psycopg2.OperationalError) as raised:
        connect(**login).close()
    assert refusal in str(raised.value)


@pytest.mark.parametrize("member", MEMBERS)
def test_the_pool_sizes_come_with_their_reasons(lab_hosts, member):
    host = lab_hosts[member]
    ini = host.file("/etc/pgbouncer/pgbouncer.ini")
    assert ini.mode == 0o640 and ini.user == "postgres"
    lines = ini.content_string.splitlines()
    settings = {line.split(" = ")[0]: line.split(" = ", 1)[1] for line in lines if " = " in line
                and not line.startswith(";")}
    assert settings["max_db_connections"] == str(POOLER_SHARE)
    assert settings["pool_mode"] == "transaction" and settings["server_login_retry"] == "1"
    for name in ("default_pool_size", "max_db_connections", "server_login_retry", "pool_mode"):
        index = next(i for i, line in enumerate(lines) if line.startswith(name + " = "))
        assert lines[index - 1].startswith(";; "), name
    # what the running pooler uses is what the file says
    running = {row[0]: row[1] for row in console(host, "SHOW CONFIG")}
    for name in ("default_pool_size", "max_db_connections", "pool_mode", "max_client_conn", "listen_port"):
        assert running[name] == (settings.get(name) or "6432"), name
    assert host.service("pgbouncer").is_running and host.service("pgbouncer").is_enabled
    assert "molecule-" not in ini.content_string and "molecule-" not in host.file(
        "/etc/pgbouncer/userlist.txt").content_string


@pytest.mark.parametrize("proxy", PROXIES)
def test_haproxy_sends_clients_to_the_poolers(lab_hosts, lab_ips, proxy):
    config = lab_hosts[proxy].file("/etc/haproxy/haproxy.cfg").content_string
    for member in MEMBERS:
        assert "server %s %s:6432 check port 8008" % (member, lab_ips[member]) in config
