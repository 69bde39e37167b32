"""Loaded by every Python the unit tests start (conftest.py puts this directory on PYTHONPATH): the module runs
of their `-c local` plays reuse the code compiled from Ansible's module payloads, through the lab image's hook
(lab/image/dbops_lab_zipimport_cache.py). Only the compile step is skipped; the code that runs is the same."""
import importlib.util
import os

_HOOK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "lab", "image",
                     "dbops_lab_zipimport_cache.py")
_SPEC = importlib.util.spec_from_file_location("dbops_lab_zipimport_cache", _HOOK)
_SPEC.loader.exec_module(importlib.util.module_from_spec(_SPEC))
