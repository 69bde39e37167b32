"""One ansible-playbook run of a role's task file for many bad-input cases at once, read through the json callback.

Starting ansible-playbook and the role's dependencies cost 12-19 s a run, so the refusal tests put each case in
an inventory group or host of its own, next to control hosts with nothing bad, and run the task file once. Each
host's failures are read from the json report: a message counts for the host that failed with it, never because
it is somewhere in the output."""
import json
import os
import subprocess
import sys

import pytest
import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_role_batch(tmp_path, inventory, role, tasks_from, extra_vars, timeout=600):
    """Runs dbops.clusters.<role>'s tasks_from on every host of inventory (the YAML inventory as a dict), on the
    controller (-c local), with extra_vars as extra variables. The checks under test must not be run_once or
    any_errors_fatal, so that a failed host stops only itself.

    Returns the run, each host's failures as (task, message) and the last task's report."""
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inventory))
    (tmp_path / "vars.json").write_text(json.dumps(extra_vars))
    (tmp_path / "play.yml").write_text(yaml.safe_dump([{"hosts": "all", "gather_facts": False, "tasks": [
        {"name": "Run the role's tasks", "ansible.builtin.include_role": {
            "name": "dbops.clusters." + role, "tasks_from": tasks_from}}]}]))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".collections"),
               ANSIBLE_STDOUT_CALLBACK="ansible.posix.json")
    command = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(tmp_path / "inventory.yml"),
               "-c", "local", "-e", "@%s" % (tmp_path / "vars.json"), str(tmp_path / "play.yml")]
    result = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    try:
        tasks = json.loads(result.stdout)["plays"][0]["tasks"]
    except (ValueError, KeyError, IndexError):
        pytest.fail("no json report (rc %d):\n%s\n%s" % (result.returncode, result.stdout[-2500:],
                                                         result.stderr[-2500:]))
    failures = {}
    for task in tasks:
        for host, outcome in task["hosts"].items():
            if outcome.get("failed") or outcome.get("unreachable"):
                msg = outcome.get("msg")
                failures.setdefault(host, []).append((task["task"]["name"], msg if isinstance(msg, str)
                                                      else "\n".join(map(str, msg or []))))
    return {"run": result, "failures": failures, "last": tasks[-1]}


def assert_control_passed(batch, control, role, tasks_from):
    """The control hosts pass the whole task file in the same run as the cases (which made it exit 2): the cases'
    failures come from their variables, and stopped no other host."""
    control = sorted(control)
    assert batch["run"].returncode == 2, batch["run"].stderr[-2500:]
    assert not set(control) & set(batch["failures"]), {h: batch["failures"].get(h) for h in control}
    with open(os.path.join(REPO, "roles", role, "tasks", tasks_from), encoding="utf-8") as handle:
        last_task = yaml.safe_load(handle)[-1]["name"]
    last = batch["last"]
    assert last["task"]["name"].endswith(" : " + last_task), last["task"]
    passed = sorted(h for h, outcome in last["hosts"].items() if h in control and not outcome.get("failed"))
    assert passed == control, last["hosts"]
