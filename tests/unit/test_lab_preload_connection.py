"""lab/plugins/callback/dbops_preload_connection.py: the controller imports the docker_api connection once, so
forked workers do not each import it again (about 45 ms of CPU per task per host, measured).

Forked workers send their stdio to /dev/null, so the count comes from an audit hook (a sitecustomize on
PYTHONPATH) that writes the pid of every process that opens the plugin's code."""
import os
import subprocess
import sys

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ANSIBLE_PLAYBOOK = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")

SITECUSTOMIZE = """
import os, sys
def _hook(event, args):
    if event == "open" and args and isinstance(args[0], str) \\
            and os.sep.join(("connection", "")) in args[0] and "docker_api" in os.path.basename(args[0]):
        with open(os.environ["PRELOAD_IMPORT_LOG"], "a") as log:
            log.write("%d\\n" % os.getpid())
sys.addaudithook(_hook)
"""

# Tasks that never connect: the hosts do not exist, and the workers still load the host's connection plugin.
PLAYBOOK = [{"hosts": "all", "gather_facts": False, "tasks": [
    {"ansible.builtin.assert": {"that": [True]}},
    {"ansible.builtin.set_fact": {"answered": True}},
    {"ansible.builtin.assert": {"that": ["answered"]}},
    {"ansible.builtin.debug": {"msg": "no connection needed"}},
]}]
INVENTORY = {"all": {"hosts": {"h1": {}, "h2": {}, "h3": {}},
                     "vars": {"ansible_connection": "community.docker.docker_api"}}}


def processes_that_import_the_connection(tmp_path, **env):
    (tmp_path / "sitecustomize.py").write_text(SITECUSTOMIZE)
    (tmp_path / "playbook.yml").write_text(yaml.safe_dump(PLAYBOOK))
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(INVENTORY))
    log = tmp_path / "imports.log"
    log.write_text("")
    run_env = dict(os.environ, PYTHONPATH=str(tmp_path), PRELOAD_IMPORT_LOG=str(log),
                   ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_HOME=str(tmp_path / "home"), **env)
    run = subprocess.run([ANSIBLE_PLAYBOOK, "-i", str(tmp_path / "inventory.yml"), str(tmp_path / "playbook.yml")],
                         env=run_env, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "ok=4" in run.stdout, run.stdout
    return len(set(log.read_text().split()))


def test_the_repository_configuration_imports_the_connection_once_for_every_task_and_host(tmp_path):
    assert processes_that_import_the_connection(tmp_path) == 1


def test_without_the_callback_every_worker_imports_it_again(tmp_path):
    # The case the callback exists for: 4 tasks x 3 hosts, each in its own forked worker.
    without = {"ANSIBLE_CALLBACKS_ENABLED": "ansible.builtin.tree", "ANSIBLE_CALLBACK_TREE_DIR": str(tmp_path / "tree")}
    assert processes_that_import_the_connection(tmp_path, **without) >= 12


def test_molecule_scenarios_enable_it_too():
    config = yaml.safe_load(open(os.path.join(ROOT, ".config", "molecule", "config.yml"), encoding="utf-8"))
    defaults = config["provisioner"]["config_options"]["defaults"]
    assert defaults["callbacks_enabled"] == "dbops_preload_connection"
    assert defaults["callback_plugins"] == "${MOLECULE_PROJECT_DIRECTORY}/lab/plugins/callback"
    assert os.path.isfile(os.path.join(ROOT, "lab", "plugins", "callback", "dbops_preload_connection.py"))
