"""Every copy of MySQL-family data the playbooks stream (percona_server's stream.yml) travels in TLS that verifies
both ends by inventory name with the copy CA (copy_tls.yml), rendered from the task file as the play runs it."""
import os
import re

import jinja2
import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TASKS = os.path.join(REPO, "roles", "percona_server", "tasks")


def load(path):
    with open(path) as handle:
        return yaml.safe_load(handle)


def commands():
    """{task name: the socat command line it runs}, rendered for a copy from db2 (10.0.0.2) to mbk (10.0.0.9)."""
    role_vars = load(os.path.join(REPO, "roles", "percona_server", "vars", "main.yml"))
    env = jinja2.Environment()
    values = {"percona_server_copy_tls_dir": role_vars["percona_server_copy_tls_dir"],
              "percona_server_stream_from": "db2", "percona_server_stream_from_address": "10.0.0.2",
              "percona_server_stream_to": "mbk", "percona_server_stream_to_address": "10.0.0.9",
              "percona_server_stream_port": 4456, "percona_server_stream_send": "tar -cf - .",
              "percona_server_stream_receive": "tar -x", "percona_server_stream_what": "a copy"}
    values["percona_server_stream_tls"] = env.from_string(role_vars["percona_server_stream_tls"]).render(values)
    found = {}
    tasks = load(os.path.join(TASKS, "stream.yml"))
    for task in tasks + [t for block in tasks for t in block.get("block", [])]:
        shell = task.get("ansible.builtin.shell")
        if shell:
            found[task["name"]] = " ".join(env.from_string(shell["cmd"]).render(values).split())
    return tasks, found


def socat_options(command, address_type):
    match = re.search(r"%s:(\S+)" % address_type, command)
    assert match, (address_type, command)
    return match.group(1).split(",")


def test_the_stream_is_tls_and_each_end_verifies_the_other_by_name():
    tasks, found = commands()
    assert tasks[0]["ansible.builtin.include_tasks"] == "copy_tls.yml"
    assert tasks[0]["vars"]["percona_server_copy_tls_hosts"] == ["{{ percona_server_stream_from }}",
                                                                 "{{ percona_server_stream_to }}"]
    listener = next(c for n, c in found.items() if n.startswith("Listen"))
    sender = next(c for n, c in found.items() if n.startswith("Send"))
    tls = ["cert=/etc/dbops/copy-tls/cert.pem", "key=/etc/dbops/copy-tls/key.pem", "cafile=/etc/dbops/copy-tls/ca.pem",
           "verify=1"]
    listen = socat_options(listener, "OPENSSL-LISTEN")
    assert set(tls + ["range=10.0.0.2/32", "commonname=db2"]) <= set(listen), listen
    send = socat_options(sender, "OPENSSL")
    assert send[0] == "10.0.0.9:4456" and set(tls + ["commonname=mbk"]) <= set(send), send
    assert "TCP" not in listener and "TCP" not in sender


def test_copy_certificates_name_the_host_and_come_from_their_own_ca():
    tasks = load(os.path.join(TASKS, "copy_tls.yml"))
    issue = next(t for t in tasks if "ansible.builtin.include_role" in t)
    assert issue["vars"]["tls_certificate_ca_name"] == "copy-ca"
    assert issue["vars"]["tls_certificate_subject_alt_names"] == ["DNS:{{ item.item }}"]
    assert issue["ansible.builtin.include_role"]["apply"] == {"run_once": True} and issue["run_once"] is True
    install = next(t for t in tasks if "dbops.clusters.text_files" in t)
    key = next(f for f in install["dbops.clusters.text_files"]["files"] if f["path"].endswith("key.pem"))
    assert key["mode"] == "0600" and key["secret"] is True
