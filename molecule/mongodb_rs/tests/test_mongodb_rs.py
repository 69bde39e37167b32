"""Verify the 3-member set of mongod doubles: mongod runs under systemd as mongodb, authentication is
enforced, one PRIMARY and two SECONDARY, and a majority write on the primary is read on both secondaries."""
import json
import uuid

NODES = ("m1", "m2", "m3")

# Runs on a member; the credentials come from the role's 0600 file, never from the command line.
PROBE = r"""
import json, sys, pymongo
creds = dict(line.split(": ", 1) for line in open("/etc/dbops/mongodb-admin.yml").read().splitlines() if ": " in line)
action = sys.argv[1]
auth = dict(username=creds["user"], password=creds["password"]) if action != "anonymous" else {}
client = pymongo.MongoClient("localhost", 27017, directConnection=True, serverSelectionTimeoutMS=5000, **auth)
if action == "anonymous":
    try:
        client.admin.command("replSetGetStatus")
        print(json.dumps({"refused": False}))
    except pymongo.errors.OperationFailure as err:
        print(json.dumps({"refused": True, "code": err.code}))
elif action == "status":
    status = client.admin.command("replSetGetStatus")
    print(json.dumps({"me": client.admin.command("hello")["me"], "members": [
        {"name": m["name"], "state": m["stateStr"]} for m in status["members"]]}))
elif action == "write":
    client.test.get_collection("probe", write_concern=pymongo.WriteConcern(w="majority", wtimeout=10000)).insert_one(
        {"_id": sys.argv[2]})
    print(json.dumps({"ok": True}))
elif action == "read":
    import time
    deadline = time.time() + 10
    doc = None
    while doc is None and time.time() < deadline:
        doc = client.test.probe.with_options(
            read_preference=pymongo.ReadPreference.SECONDARY_PREFERRED).find_one({"_id": sys.argv[2]})
        time.sleep(0.2)
    print(json.dumps({"found": doc is not None}))
"""


def probe(host, *args):
    result = host.run("python3 -c %s %s" % (_quote(PROBE), " ".join(args)))
    assert result.rc == 0, result.stderr
    return json.loads(result.stdout)


def _quote(text):
    return "'" + text.replace("'", "'\"'\"'") + "'"


def test_mongod_runs_under_systemd_as_mongodb(lab_hosts):
    for node in NODES:
        host = lab_hosts[node]
        assert host.service("mongod").is_running and host.service("mongod").is_enabled
        assert host.process.get(comm="python3", user="mongodb")
        assert host.file("/etc/mongodb/keyfile").mode == 0o400
        assert host.file("/etc/dbops/mongodb-admin.yml").mode == 0o600


def test_authentication_is_enforced(lab_hosts):
    assert probe(lab_hosts["m1"], "anonymous") == {"refused": True, "code": 13}


def test_one_primary_two_secondaries(lab_hosts):
    status = probe(lab_hosts["m1"], "status")
    states = sorted(m["state"] for m in status["members"])
    assert states == ["PRIMARY", "SECONDARY", "SECONDARY"]


def test_majority_write_is_read_on_every_secondary(lab_hosts):
    status = probe(lab_hosts["m1"], "status")
    primary = next(m["name"] for m in status["members"] if m["state"] == "PRIMARY")
    by_name = {probe(lab_hosts[n], "status")["me"]: n for n in NODES}
    marker = uuid.uuid4().hex
    assert probe(lab_hosts[by_name[primary]], "write", marker) == {"ok": True}
    for name, node in by_name.items():
        if name != primary:
            assert probe(lab_hosts[node], "read", marker) == {"found": True}, node
