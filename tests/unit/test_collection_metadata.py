"""What an installed collection declares: every collection the roles and playbooks call is a dependency in
galaxy.yml, and every module sharing an engine's login options is in that engine's module_defaults group."""
import glob
import os
import re

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FQCN = re.compile(r"\b((?:community|ansible|containers|cisco|amazon)\.[a-z_]+)\.[a-z_]+\b")
NOT_COLLECTIONS = {"ansible.builtin", "ansible.module_utils", "ansible.plugins", "ansible.errors", "ansible.utils",
                   "ansible.parsing", "ansible.template", "ansible.vars", "ansible.cli", "ansible.executor",
                   "ansible.inventory", "ansible.playbook", "ansible.release", "ansible.constants"}


def shipped_files():
    for pattern in ("roles/**/*.yml", "roles/**/*.j2", "playbooks/**/*.yml", "plugins/**/*.py"):
        yield from glob.glob(os.path.join(REPO, pattern), recursive=True)


def test_every_collection_called_is_a_declared_dependency():
    with open(os.path.join(REPO, "galaxy.yml")) as handle:
        declared = set((yaml.safe_load(handle)["dependencies"] or {}).keys())
    used = {}
    for path in shipped_files():
        with open(path) as handle:
            for match in FQCN.finditer(handle.read()):
                if match.group(1) not in NOT_COLLECTIONS:
                    used.setdefault(match.group(1), os.path.relpath(path, REPO))
    missing = dict((name, where) for name, where in used.items() if name not in declared)
    assert not missing, "called but not in galaxy.yml dependencies: %s" % missing
    unused = declared - set(used)
    assert not unused, "declared in galaxy.yml but never called: %s" % sorted(unused)


def test_each_engines_modules_share_one_module_defaults_group():
    with open(os.path.join(REPO, "meta", "runtime.yml")) as handle:
        groups = yaml.safe_load(handle)["action_groups"]
    for engine in ("mysql", "postgres", "mongodb", "etcd"):
        fragment = "dbops.clusters.%s_login" % engine
        expected = []
        for path in sorted(glob.glob(os.path.join(REPO, "plugins", "modules", "*.py"))):
            with open(path) as handle:
                if fragment in handle.read():
                    expected.append(os.path.basename(path)[:-3])
        assert sorted(groups[engine]) == expected, engine


def _role_includes(node):
    """(role, tasks_from, vars) of every include_role/import_role with tasks_from under a parsed YAML node."""
    if isinstance(node, list):
        for item in node:
            yield from _role_includes(item)
    elif isinstance(node, dict):
        for key in ("ansible.builtin.include_role", "ansible.builtin.import_role", "include_role", "import_role"):
            call = node.get(key)
            if isinstance(call, dict) and call.get("tasks_from"):
                yield call["name"].split(".")[-1], call["tasks_from"], node.get("vars") or {}
        for value in node.values():
            yield from _role_includes(value)


def _outside_includes():
    for pattern in ("roles/**/*.yml", "playbooks/**/*.yml", "molecule/**/*.yml"):
        for path in sorted(glob.glob(os.path.join(REPO, pattern), recursive=True)):
            with open(path) as handle:
                document = yaml.safe_load(handle)
            where = os.path.relpath(path, REPO)
            for role, tasks_from, passed in _role_includes(document):
                if not where.startswith("roles/%s/" % role):
                    yield where, role, tasks_from, passed


def test_every_task_file_included_from_outside_its_role_is_a_declared_entry_point():
    """A role's doors are its meta/argument_specs.yml entry points: a task file another role, a playbook or a
    scenario includes is declared there (ansible-core then validates what the caller passes), and every
    variable of that role the caller passes with vars: is one of the entry point's options."""
    includes = list(_outside_includes())
    assert includes, "the scan found no include_role with tasks_from: the scan is broken"
    problems = []
    for where, role, tasks_from, passed in includes:
        with open(os.path.join(REPO, "roles", role, "meta", "argument_specs.yml")) as handle:
            specs = yaml.safe_load(handle)["argument_specs"]
        entry = os.path.splitext(tasks_from)[0]
        if entry not in specs:
            problems.append("%s includes %s tasks_from %s, not an entry point of roles/%s/meta/argument_specs.yml"
                            % (where, role, tasks_from, role))
            continue
        options = specs[entry].get("options") or {}
        undeclared = sorted(name for name in passed if name.startswith(role + "_") and name not in options)
        if undeclared:
            problems.append("%s passes %s to %s.%s, not among its options" % (where, undeclared, role, entry))
    assert not problems, "\n".join(problems)


def test_no_role_reads_another_roles_files_by_path():
    """Layers use each other through entry points, never by reaching into a sibling's directory (the collection's
    own plugins/module_utils, which a host-side agent runs, is no role's)."""
    offenders = []
    for path in shipped_files():
        with open(path) as handle:
            if re.search(r"role_path\s*~\s*['\"]/\.\./(?!\.\./plugins/module_utils/)", handle.read()):
                offenders.append(os.path.relpath(path, REPO))
    assert not offenders, offenders
