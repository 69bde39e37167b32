"""Every role carries the tags of docs/roles/tags.md, and a tag run never skips a check or a fact it depends on.

Each role's tasks/main.yml is walked the way Ansible applies tags: a block's and an import's tags reach every task
under them; an include (include_tasks, include_role) is selected by its own tags, and the tasks it loads get only
its `apply` tags besides those of the blocks and imports around it. Files the role includes from other roles are
followed too (percona_server's plan.yml from group_replication, db_host from the engines). Then:

- every task a run can reach, includes too, carries a tag of the vocabulary (its own or one around it), so
  `--tags config` or `--tags users` selects it or leaves it out knowingly, never by omission: a top-level task of
  main.yml carries one itself, or it imports a file that mixes steps (a read, then a change) whose every task does;
- every task of the validation files (VALIDATION_FILES) and every assert of a tasks/main.yml runs under any tag
  (`always`): a tag run refuses bad input as a full run does;
- a task of a role's own files that runs `always` carries no other tag of the vocabulary: with
  `--skip-tags config` it would be skipped, and the checks or facts later tasks read with it;
- every task an include loads shares a tag with the include (or runs always): a task tagged `users` under an
  include tagged `config` would never run under `--tags users`;
- no file of roles/*/tasks uses a tag outside the vocabulary (a misspelt tag selects nothing);
- under each tag alone, no task that runs reads a fact (set_fact, register) that only tasks left out set, unless it
  reads it through `default` or `is defined`: `--tags users` never stops on a fact the plan did not compute.
  (Handlers are left out: they run when notified, whatever the tags, and read what their notifier's step set.)
"""
import functools
import glob
import json
import os
import re
import sys

import pytest
import yaml

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
ROLES_DIR = os.path.join(ROOT, "roles")
ROLES = sorted(os.path.basename(path) for path in glob.glob(os.path.join(ROLES_DIR, "*")) if os.path.isdir(path))

# docs/roles/tags.md: what each one runs
VOCABULARY = {"always", "packages", "tls", "config", "users", "replication", "backup"}

# Files whose every task checks input or state before the first change, or computes the facts later steps read.
VALIDATION_FILES = sorted([
    ("etcd", "validate.yml"),
    ("group_replication", "plan.yml"),
    ("keepalived", "validate.yml"),
    ("mongodb_rs", "running_member_check.yml"),
    ("mongodb_rs", "tls_mode_check.yml"),
    ("percona_server", "live_topology.yml"),
    ("percona_server", "plan.yml"),
    ("percona_server", "validate.yml"),
    ("pgbackrest", "schedule_check.yml"),
    ("pgbackrest", "validate.yml"),
    ("postgres_tuned", "plan.yml"),
    ("postgres_tuned", "tuning.yml"),
    ("proxysql", "validate.yml"),
    ("pxc_galera", "cluster_facts.yml"),
    ("pxc_galera", "plan.yml"),
    ("pxc_galera", "read_state.yml"),
])

INCLUDE_TASKS = ("ansible.builtin.include_tasks", "include_tasks")
IMPORT_TASKS = ("ansible.builtin.import_tasks", "import_tasks")
INCLUDE_ROLE = ("ansible.builtin.include_role", "include_role")
IMPORT_ROLE = ("ansible.builtin.import_role", "import_role")
ASSERT = ("ansible.builtin.assert", "assert")


def as_list(tags):
    if tags is None:
        return []
    if isinstance(tags, str):
        return [tag.strip() for tag in tags.split(",")]
    return list(tags)


@functools.lru_cache(maxsize=None)
def load_path(path):
    with open(path, encoding="utf-8") as handle:
        return yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or []


def load(role, name):
    return load_path(os.path.join(ROLES_DIR, role, "tasks", name))


def key_of(task, keys):
    return next((key for key in keys if key in task), None)


def loaded_file(role, task):
    """(role, file, apply tags, static) of what a task loads, or None for a task that loads nothing."""
    key = key_of(task, INCLUDE_TASKS + IMPORT_TASKS)
    if key:
        spec = task[key]
        name = spec.get("file") if isinstance(spec, dict) else spec
        apply = as_list((spec.get("apply") or {}).get("tags")) if isinstance(spec, dict) else []
        assert "{{" not in name, "%s: a templated file name cannot be followed: %r" % (role, name)
        return role, name, apply, key in IMPORT_TASKS
    key = key_of(task, INCLUDE_ROLE + IMPORT_ROLE)
    if key:
        spec = task[key]
        other = spec["name"].split(".")[-1]
        name = spec.get("tasks_from", "main")
        name = name if name.endswith((".yml", ".yaml")) else name + ".yml"
        return other, name, as_list((spec.get("apply") or {}).get("tags")), key in IMPORT_ROLE
    return None


class Task:
    def __init__(self, role, name, task, tags, kind):
        self.role, self.file, self.task, self.tags, self.kind = role, name, task, frozenset(tags), kind
        self.children, self.parents = [], []

    def __repr__(self):
        return "%s/tasks/%s: %r %s" % (self.role, self.file, self.task.get("name", "?"), sorted(self.tags))


def walk(role, name, inherited=frozenset(), stack=()):
    """Every task reachable from one tasks file, with the tags Ansible gives it; includes carry their children."""
    if (role, name) in stack:
        return
    yield from walk_items(role, name, load(role, name), inherited, stack + ((role, name),))


def walk_items(role, name, items, inherited, stack):
    for task in items:
        tags = inherited | set(as_list(task.get("tags")))
        if "block" in task:
            for section in ("block", "rescue", "always"):
                yield from walk_items(role, name, task.get(section) or [], tags, stack)
            continue
        loaded = loaded_file(role, task)
        if loaded is None:
            yield Task(role, name, task, tags, "task")
            continue
        other, other_name, apply, static = loaded
        if static:
            yield from walk(other, other_name, tags, stack)
        else:
            include = Task(role, name, task, tags, "include")
            include.children = list(walk(other, other_name, inherited | set(apply), stack))
            for child in include.children:
                child.parents.insert(0, include)
            yield include
            yield from include.children


def problems_of(role):
    """What breaks the rules of this module's docstring in one role, as readable lines."""
    problems = []
    tasks = list(walk(role, "main.yml"))
    for task in tasks:
        vocabulary_tags = task.tags & VOCABULARY
        if not vocabulary_tags:
            problems.append("no tag of the vocabulary: %r" % task)
        if (task.role, task.file) in VALIDATION_FILES and "always" not in task.tags:
            problems.append("a validation file's task that does not run always: %r" % task)
        if task.file == "main.yml" and key_of(task.task, ASSERT) and "always" not in task.tags:
            problems.append("an assert of main.yml that does not run always: %r" % task)
        if task.role == role and "always" in task.tags and vocabulary_tags - {"always"}:
            problems.append("always and another tag (--skip-tags would skip it): %r" % task)
        if task.kind == "include":
            selected_by = task.tags & VOCABULARY
            for child in task.children:
                child_tags = child.tags & VOCABULARY
                if "always" not in selected_by | child_tags and not child_tags & selected_by:
                    problems.append("%r never runs under --tags %s: its include %r is not selected by it"
                                    % (child, ",".join(sorted(child_tags)), task))
    return problems


def names_set_by(task):
    names = {task.task["register"]} if "register" in task.task else set()
    facts = task.task.get(key_of(task.task, ("ansible.builtin.set_fact", "set_fact")) or "", {})
    return names | (set(facts) - {"cacheable"} if isinstance(facts, dict) else set())


def names_bound_around(task):
    """Names a task gets from its own vars and loop_var, and from those of the includes that loaded it."""
    names = set()
    for each in [task] + task.parents:
        names |= set(each.task.get("vars") or {})
        names.add((each.task.get("loop_control") or {}).get("loop_var", "item"))
    return names


@functools.lru_cache(maxsize=None)
def role_defaults(roles_dir):
    names = set()
    for path in glob.glob(os.path.join(roles_dir, "*", "defaults", "main.yml")):
        with open(path, encoding="utf-8") as handle:
            names |= set(yaml.safe_load(handle) or {})
    return names


def unset_facts_read(role, tag):
    """Under --tags TAG alone: (task, name) for each fact a running task reads that only skipped tasks set."""
    tasks = list(walk(role, "main.yml"))
    selected = [task for task in tasks
                if all(each.tags & {tag, "always"} for each in [task] + task.parents)]
    set_by_selected = set().union(*(names_set_by(task) for task in selected))
    unset = set().union(*(names_set_by(task) for task in tasks)) - set_by_selected - role_defaults(ROLES_DIR)
    found = []
    for task in selected:
        text = json.dumps({key: value for key, value in task.task.items() if key != "register"})
        for name in sorted(unset - names_bound_around(task)):
            for match in re.finditer(r"\b%s\b" % re.escape(name), text):
                guarded = re.match(r"\s*(\|\s*default\b|is (not )?defined\b|', 'defined')", text[match.end():])
                if not guarded:
                    found.append("--tags %s: %r reads %s, which only tasks left out set" % (tag, task, name))
                    break
    return found


@pytest.mark.parametrize("role", ROLES)
def test_every_task_a_run_reaches_carries_a_tag_and_checks_run_always(role):
    assert not problems_of(role), "\n".join(problems_of(role))


@pytest.mark.parametrize("role", ROLES)
def test_a_tag_run_reads_only_facts_its_own_tasks_set(role):
    found = [line for tag in sorted(VOCABULARY - {"always"}) for line in unset_facts_read(role, tag)]
    assert not found, "\n".join(found)


def test_no_tag_outside_the_vocabulary():
    unknown = []
    for path in sorted(glob.glob(os.path.join(ROLES_DIR, "*", "tasks", "*.yml"))):
        role, name = path.split(os.sep)[-3], os.path.basename(path)

        def scan(items):
            for task in items or []:
                found = set(as_list(task.get("tags")))
                for key in INCLUDE_TASKS + INCLUDE_ROLE:
                    if isinstance(task.get(key), dict):
                        found |= set(as_list((task[key].get("apply") or {}).get("tags")))
                for tag in found - VOCABULARY:
                    unknown.append("%s/tasks/%s: %r uses %r" % (role, name, task.get("name", "?"), tag))
                for section in ("block", "rescue", "always"):
                    scan(task.get(section))

        scan(load(role, name))
    assert not unknown, "\n".join(unknown)


@pytest.mark.parametrize("role, name", VALIDATION_FILES, ids=["/".join(key) for key in VALIDATION_FILES])
def test_each_validation_file_is_reached_from_a_main(role, name):
    reached = {(task.role, task.file) for main in ROLES for task in walk(main, "main.yml")}
    assert (role, name) in reached, "%s/tasks/%s is not reached from any role's main.yml" % (role, name)


def test_the_docs_list_the_vocabulary():
    with open(os.path.join(ROOT, "docs", "roles", "tags.md"), encoding="utf-8") as handle:
        table = handle.read().split("| Tag | What it runs |", 1)[1].split("\n\n", 1)[0]
    assert sorted(re.findall(r"^\| `([a-z]+)` \|", table, re.MULTILINE)) == sorted(VOCABULARY)


def test_the_checker_finds_what_it_looks_for(monkeypatch, tmp_path):
    """The rules catch a task without a tag, a check that is not always, a tag unreachable through its include, and
    a fact read under a tag whose run leaves out the task that sets it."""
    tasks = tmp_path / "roles" / "demo" / "tasks"
    tasks.mkdir(parents=True)
    (tasks / "main.yml").write_text(yaml.safe_dump([
        {"name": "Refuse bad input", "ansible.builtin.assert": {"that": True}, "tags": ["config"]},
        {"name": "Untagged", "ansible.builtin.debug": {"msg": "x"}},
        {"name": "Both", "ansible.builtin.debug": {"msg": "x"}, "tags": ["always", "users"]},
        {"name": "Include", "ansible.builtin.include_tasks": "inner.yml", "tags": ["config"]},
        {"name": "Plan", "ansible.builtin.import_tasks": "plan.yml", "tags": ["users"]},
        {"name": "Decide", "ansible.builtin.set_fact": {"demo_decision": 1}, "tags": ["config"]},
        {"name": "Act", "ansible.builtin.debug": {"msg": "{{ demo_decision }}"}, "tags": ["users"]},
    ]))
    (tasks / "inner.yml").write_text(yaml.safe_dump([{"name": "Inner", "ansible.builtin.debug": {}, "tags": ["users"]}]))
    (tasks / "plan.yml").write_text(yaml.safe_dump([{"name": "Plan it", "ansible.builtin.set_fact": {"x": 1}}]))
    monkeypatch.setattr(sys.modules[__name__], "ROLES_DIR", str(tmp_path / "roles"))
    monkeypatch.setattr(sys.modules[__name__], "VALIDATION_FILES", [("demo", "plan.yml")])
    found = "\n".join(problems_of("demo"))
    assert "an assert of main.yml that does not run always: demo/tasks/main.yml: 'Refuse bad input'" in found
    assert "no tag of the vocabulary: demo/tasks/main.yml: 'Untagged'" in found
    assert "always and another tag (--skip-tags would skip it): demo/tasks/main.yml: 'Both'" in found
    assert "demo/tasks/inner.yml: 'Inner' ['users'] never runs under --tags users" in found
    assert "a validation file's task that does not run always: demo/tasks/plan.yml: 'Plan it'" in found
    assert unset_facts_read("demo", "users") == [
        "--tags users: demo/tasks/main.yml: 'Act' ['users'] reads demo_decision, which only tasks left out set"]
