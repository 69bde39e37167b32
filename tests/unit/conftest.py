"""Shared by the unit tests: how pytest-xdist spreads them, and a compile cache for the plays some of them run."""
import os
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def pytest_configure(config):  # pylint: disable=unused-argument
    # Many tests run ansible-playbook with `-c local`; each module run compiles ansible.module_utils from its zip
    # payload. The lab image's compile cache, loaded through sitecustomize, keeps that code between runs.
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(HERE, "zipimport_cache")] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    os.environ.setdefault("DBOPS_ZIPIMPORT_CACHE_DIR",
                          os.path.join(tempfile.gettempdir(), "dbops-unit-zipimport-%d" % os.getuid()))
    os.makedirs(os.environ["DBOPS_ZIPIMPORT_CACHE_DIR"], exist_ok=True)


def pytest_collection_modifyitems(items):
    # run_all.sh uses --dist loadgroup: tests are spread one by one, except a file whose tests share a
    # module-scoped fixture (a MongoDB double's set, initiated by its first test and used by the next), which
    # stays on one worker, in order.
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        definitions = getattr(item, "_fixtureinfo", None)
        shared = definitions is not None and any(
            definition.scope in ("module", "session") and definition.baseid == path
            for same_name in definitions.name2fixturedefs.values() for definition in same_name)
        if shared:
            item.add_marker(pytest.mark.xdist_group(name=path))
