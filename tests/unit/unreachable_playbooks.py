"""Run a playbook with the repository's configuration (run_playbook), most often against an inventory whose hosts
cannot be reached (write_inventory).

There each host points SSH at a closed port on 127.0.0.1, so any task that contacts a host ends UNREACHABLE at once: a
check that must refuse before any host is contacted shows no UNREACHABLE, and one that passes shows the next
play's first contact as UNREACHABLE."""
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

INVENTORY = """
all:
  vars:
    ansible_connection: ssh
    ansible_host: 127.0.0.1
    ansible_port: 1
    ansible_ssh_common_args: -o ConnectTimeout=2 -o BatchMode=yes
%(vars)s
  children:
    %(group)s:
      hosts: {%(members)s}
    other:
      hosts: {web1: {}}
"""


def write_inventory(tmp_path, group, members, all_vars=None):
    """inventory.yml in tmp_path: `group` holds `members`, `other` holds web1; all_vars go in all.vars."""
    lines = "".join("    %s: %s\n" % item for item in (all_vars or {}).items())
    path = tmp_path / "inventory.yml"
    path.write_text(INVENTORY % {"vars": lines.rstrip("\n"), "group": group,
                                 "members": ", ".join("%s: {}" % member for member in members)})
    return path


def run_playbook(inventory, playbook, limit=None, extra=None):
    """ansible-playbook with the repository's configuration and collection; `playbook` is a file name under
    playbooks/ or a path, `extra` the extra variables ({name: value})."""
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".collections"))
    command = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory),
               os.path.join(REPO, "playbooks", str(playbook))]
    if limit:
        command += ["--limit", limit]
    if extra:
        command += ["-e", json.dumps(extra)]        # JSON keeps a mapping or a number what it is
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False)
