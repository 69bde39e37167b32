"""Handlers hold only what Ansible runs in a handler: no include_role/import_role (refused at run time: "Using
'include_role' as a handler is not supported") and no block with rescue or always (the rescue does not run when a
handler's task fails). And no database role restarts a member from a handler: a configuration change restarts
members through the role's one inline restart path (its rolling_restart.yml, last in its main.yml), which drains
them on the proxies through the proxysql role; a handler could not include that role (pxc_galera's restart path
once did and failed on the first static change)."""
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


DATABASE_ROLES = ("percona_server", "pxc_galera", "group_replication", "postgres_tuned", "mongodb_rs")


@pytest.mark.parametrize("role", DATABASE_ROLES)
def test_no_database_role_restarts_members_from_a_handler(role):
    assert not os.path.exists(os.path.join(ROOT, "roles", role, "handlers")), (
        "%s has handlers: its restarts belong in its inline rolling restart" % role)


@pytest.mark.parametrize("role", ["pxc_galera", "group_replication"])
def test_the_inline_restart_path_is_the_last_step_of_the_role(role):
    with open(os.path.join(ROOT, "roles", role, "tasks", "main.yml"), encoding="utf-8") as handle:
        steps = yaml.safe_load(handle)
    assert steps[-1].get("ansible.builtin.import_tasks") == "rolling_restart.yml", steps[-1]
