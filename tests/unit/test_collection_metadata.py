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
    for engine in ("mysql", "postgres", "mongodb"):
        fragment = "dbops.clusters.%s_login" % engine
        expected = []
        for path in sorted(glob.glob(os.path.join(REPO, "plugins", "modules", "*.py"))):
            with open(path) as handle:
                if fragment in handle.read():
                    expected.append(os.path.basename(path)[:-3])
        assert sorted(groups[engine]) == expected, engine
