"""The changelog is antsibull-changelog's: every fragment in changelogs/fragments/ passes its lint, CHANGELOG.md is
what `make changelog` (changelogs/generate.py) writes from changelogs/, and the build ships changelogs/."""
import difflib
import fnmatch
import glob
import importlib.util
import os
import re
import subprocess
import sys

import pytest
import yaml

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The .venv's antsibull-changelog (requirements.txt): the one `make changelog` uses.
ANTSIBULL_CHANGELOG = os.path.join(os.path.dirname(sys.executable), "antsibull-changelog")


def _generator():
    spec = importlib.util.spec_from_file_location("changelog_generate", os.path.join(REPO, "changelogs", "generate.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def antsibull_changelog():
    assert os.access(ANTSIBULL_CHANGELOG, os.X_OK), (
        "%s missing: antsibull-changelog is in requirements.txt, run `make deps`" % ANTSIBULL_CHANGELOG)
    return ANTSIBULL_CHANGELOG


def _version(text):
    return tuple(int(part) for part in re.match(r"(\d+)\.(\d+)\.(\d+)", str(text)).groups())


def test_every_fragment_passes_antsibull_changelog_lint(antsibull_changelog):
    """`antsibull-changelog lint` prints one line per problem, each naming the fragment: any output fails."""
    result = subprocess.run([antsibull_changelog, "lint"], cwd=REPO, capture_output=True, text=True, check=False)
    assert result.returncode == 0 and not result.stdout.strip() and not result.stderr.strip(), (
        "antsibull-changelog lint (exit %d):\n%s%s" % (result.returncode, result.stdout, result.stderr))
    result = subprocess.run([antsibull_changelog, "lint-changelog-yaml", "changelogs/changelog.yaml"], cwd=REPO,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0 and not result.stdout.strip(), (
        "antsibull-changelog lint-changelog-yaml (exit %d):\n%s%s"
        % (result.returncode, result.stdout, result.stderr))


def test_changelog_md_is_what_the_fragments_generate(antsibull_changelog):  # pylint: disable=unused-argument
    """Generated in a scratch copy (changelogs/generate.py): a fragment added, changed or removed without
    `make changelog`, or a plugin added or described anew, leaves CHANGELOG.md stale."""
    expected = _generator().render(REPO)
    with open(os.path.join(REPO, "CHANGELOG.md")) as handle:
        current = handle.read()
    diff = "".join(list(difflib.unified_diff(current.splitlines(True), expected.splitlines(True),
                                             "CHANGELOG.md", "generated from changelogs/", n=1))[:60])
    assert current == expected, "CHANGELOG.md is not what changelogs/ generates: run `make changelog`\n" + diff


def test_no_plugin_is_added_in_a_version_after_galaxy_yml():
    """antsibull-changelog lists a module or plugin as new in the release its version_added names: one newer than
    galaxy.yml's version would be listed in no release (and ansible-doc would show a version that does not exist)."""
    with open(os.path.join(REPO, "galaxy.yml")) as handle:
        version = yaml.safe_load(handle)["version"]
    late = []
    for path in sorted(glob.glob(os.path.join(REPO, "plugins", "*", "*.py"))):
        with open(path) as handle:
            for found in re.findall(r"^\s*version_added:\s*['\"]?([0-9][^'\"\s]*)", handle.read(), re.MULTILINE):
                if _version(found) > _version(version):
                    late.append("%s: version_added %s" % (os.path.relpath(path, REPO), found))
    assert not late, "after galaxy.yml's version %s:\n%s" % (version, "\n".join(late))


def test_the_collection_build_ships_changelogs():
    """Galaxy shows changelogs/changelog.yaml from the tarball: no build_ignore pattern may drop it."""
    with open(os.path.join(REPO, "galaxy.yml")) as handle:
        ignored = yaml.safe_load(handle).get("build_ignore") or []
    for path in ("changelogs", "changelogs/changelog.yaml", "changelogs/config.yaml", "changelogs/fragments"):
        dropping = [pattern for pattern in ignored if fnmatch.fnmatch(path, pattern)]
        assert not dropping, "galaxy.yml build_ignore %s drops %s" % (dropping, path)
