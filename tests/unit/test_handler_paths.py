"""Task files a role's handlers reach (include_tasks/import_tasks, followed through the role's own files) hold only
what Ansible runs in a handler: no include_role/import_role (refused at run time: "Using 'include_role' as a
handler is not supported") and no block with rescue or always (the rescue does not run when a handler's task
fails). A configuration change restarts members through these files, so a mistake here shows only on a real
change: pxc_galera's restart path once included the proxysql role and failed on the first static change."""
import glob
import os

import pytest
import yaml

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
ROLE_HANDLERS = sorted(glob.glob(os.path.join(ROOT, "roles", "*", "handlers", "main.yml")))


def tasks_in(items):
    for item in items or []:
        yield item
        for key in ("block", "rescue", "always"):
            yield from tasks_in(item.get(key))


def included_files(role_dir, task):
    for key in ("ansible.builtin.include_tasks", "include_tasks", "ansible.builtin.import_tasks", "import_tasks"):
        name = task.get(key)
        if isinstance(name, dict):
            name = name.get("file")
        if isinstance(name, str) and "{{" not in name:
            yield os.path.join(role_dir, "tasks", name)


def reachable(handlers_file):
    role_dir = os.path.dirname(os.path.dirname(handlers_file))
    seen, todo = set(), [handlers_file]
    while todo:
        path = os.path.normpath(todo.pop())
        if path in seen:
            continue
        seen.add(path)
        with open(path, encoding="utf-8") as handle:
            for task in tasks_in(yaml.safe_load(handle)):
                todo.extend(included_files(role_dir, task))
    return sorted(seen)


@pytest.mark.parametrize("handlers_file", ROLE_HANDLERS, ids=lambda p: p.split(os.sep)[-3])
def test_handler_paths_hold_only_what_a_handler_can_run(handlers_file):
    problems = []
    for path in reachable(handlers_file):
        with open(path, encoding="utf-8") as handle:
            for task in tasks_in(yaml.safe_load(handle)):
                name = task.get("name", "?")
                if any(key.endswith(("include_role", "import_role")) for key in task):
                    problems.append("%s: %r includes a role" % (os.path.relpath(path, ROOT), name))
                if task.get("rescue") or task.get("always"):
                    problems.append("%s: %r has a rescue or always section" % (os.path.relpath(path, ROOT), name))
    assert not problems, problems


def test_the_restart_paths_are_among_those_checked():
    files = set()
    for handlers_file in ROLE_HANDLERS:
        files.update(os.path.relpath(path, ROOT) for path in reachable(handlers_file))
    for expected in ("roles/group_replication/tasks/restart_member.yml", "roles/group_replication/tasks/proxies.yml",
                     "roles/pxc_galera/tasks/restart_node.yml", "roles/pxc_galera/tasks/proxies.yml"):
        assert expected in files, sorted(files)
