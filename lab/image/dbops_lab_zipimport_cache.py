"""Lab hosts only: keep the code Python compiles from zip archives, so the next run reuses it.

Every Ansible module runs from a zip payload that zipimport compiles from source on each run (it cannot write
.pyc files into the zip): ansible.module_utils.basic and its imports cost about 0.25 s of CPU per module run,
most of a lab host's CPU during a converge. This hook keeps each compiled module keyed by its source and its
path inside the zip, and points the code at the current payload's path so tracebacks stay exact. The code that
runs is the one the source compiles to: only the compile step is skipped.
"""
import marshal
import os
import sys
import zipimport

# The unit tests' `-c local` plays use the hook too (tests/unit/zipimport_cache), with a cache of their own.
CACHE_DIR = os.environ.get("DBOPS_ZIPIMPORT_CACHE_DIR", "/var/cache/dbops-lab/zipimport")
_compile_source = zipimport._compile_source  # pylint: disable=protected-access


def _retarget(code, filename):
    consts = tuple(_retarget(const, filename) if isinstance(const, type(code)) else const
                   for const in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


def _compile_source_cached(pathname, source):
    import hashlib  # here, not at the top: every python3 start on a lab host imports this file
    inner = pathname.rsplit(".zip" + os.sep, 1)[-1]
    key = hashlib.sha256(b"\0".join((sys.version.encode(), inner.encode(), source))).hexdigest()
    path = os.path.join(CACHE_DIR, key)
    try:
        with open(path, "rb") as cached:
            return _retarget(marshal.load(cached), pathname)
    except (OSError, EOFError, ValueError, TypeError):
        pass
    code = _compile_source(pathname, source)
    try:
        partial = "%s.%d" % (path, os.getpid())
        with open(partial, "wb") as out:
            marshal.dump(code, out)
        os.replace(partial, path)
    except OSError:
        pass            # not root (a module run as another user): compile as usual
    return code


zipimport._compile_source = _compile_source_cached  # pylint: disable=protected-access
