"""Shared by the unit tests: a compile cache for the plays some of them run."""
import os
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def pytest_configure(config):  # pylint: disable=unused-argument
    # Many tests run ansible-playbook with `-c local`; each module run compiles ansible.module_utils from its zip
    # payload. The lab image's compile cache, loaded through sitecustomize, keeps that code between runs.
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(HERE, "zipimport_cache")] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    os.environ.setdefault("DBOPS_ZIPIMPORT_CACHE_DIR",
                          os.path.join(tempfile.gettempdir(), "dbops-unit-zipimport-%d" % os.getuid()))
    os.makedirs(os.environ["DBOPS_ZIPIMPORT_CACHE_DIR"], exist_ok=True)
    # Tests read what ansible-playbook prints (some its json report, whole): tests/run_all.sh enables profile_tasks
    # for the molecule logs, and its lines would be mixed into that output.
    os.environ.pop("ANSIBLE_CALLBACKS_ENABLED", None)
