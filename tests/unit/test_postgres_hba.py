"""pg_hba.conf under --limit: a member outside the play published no endpoint in this run, and its replication
lines must still be rendered from its inventory address (a converge with --limit once dropped them, cutting that
member's replication at the next reload).

The template is rendered by ansible-playbook itself on the controller, in a play --limit'ed to one member."""
import os

from ansible_collections.dbops.clusters.tests.unit.unreachable_playbooks import REPO, run_playbook

TEMPLATE = os.path.join(REPO, "roles", "postgres_tuned", "templates", "pg_hba.conf.j2")

INVENTORY = """
all:
  vars:
    ansible_connection: local
    postgres_tuned_tls: false
    postgres_tuned_replication_user: replicator
    postgres_tuned_access:
      - {database: app, user: app, address: 10.9.0.0/24}
  children:
    postgres:
      hosts:
        pga: {postgres_tuned_address: 10.0.0.1}
        pgb: {postgres_tuned_address: 10.0.0.2}
        pgc: {postgres_tuned_address: 10.0.0.3}
"""

PLAY = """
- hosts: postgres
  gather_facts: false
  vars:
    postgres_tuned_members: "{{ groups['postgres'] }}"
  tasks:
    - name: Publish this member's endpoint, as plan.yml does, then render the file
      ansible.builtin.set_fact:
        postgres_tuned_endpoint: {address: "{{ postgres_tuned_address }}", port: 5432}

    - ansible.builtin.copy:
        dest: "%(out)s"
        content: "{{ lookup('ansible.builtin.template', '%(template)s') }}"
        mode: "0600"
"""


def test_members_outside_the_play_keep_their_replication_lines(tmp_path):
    (tmp_path / "inventory.yml").write_text(INVENTORY)
    out = tmp_path / "pg_hba.conf"
    (tmp_path / "play.yml").write_text(PLAY % {"out": out, "template": TEMPLATE})
    result = run_playbook(tmp_path / "inventory.yml", tmp_path / "play.yml", limit="pga")
    assert result.returncode == 0, result.stdout[-3000:]
    lines = [line.split() for line in out.read_text().splitlines() if line and not line.startswith("#")]
    for address in ("10.0.0.1", "10.0.0.2", "10.0.0.3"):      # pgb and pgc are outside the play
        assert ["host", "replication", "replicator", address + "/32", "scram-sha-256"] in lines, lines
        assert ["host", "postgres", "replicator", address + "/32", "scram-sha-256"] in lines, lines
    assert ["host", "app", "app", "10.9.0.0/24", "scram-sha-256"] in lines
