# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Text files written whole and atomically, shared by the modules that keep configuration and credential files."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import grp
import os
import pwd
import re
import tempfile

OCTAL_MODE = re.compile(r"^0?[0-7]{3,4}$")


def read_text(path):
    """The file's text, or None when it does not exist. Bytes that are not UTF-8 read as U+FFFD: such a file
    differs from any text we would write, and it is replaced instead of stopping the module."""
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read()


def mode_error(name, mode):
    """A sentence naming `name` when `mode` is not an octal file mode given as a string, else None."""
    if not isinstance(mode, str) or not OCTAL_MODE.match(mode):
        return "%s %r is not an octal file mode such as '0644' (quote it in YAML)" % (name, mode)
    return None


def owner_ids(owner, group):
    """(uid, gid) of the names; None for a name not given. Raises KeyError naming what is unknown."""
    uid = gid = None
    if owner is not None:
        try:
            uid = pwd.getpwnam(owner).pw_uid
        except KeyError:
            raise KeyError("user %s does not exist on this host" % owner)
    if group is not None:
        try:
            gid = grp.getgrnam(group).gr_gid
        except KeyError:
            raise KeyError("group %s does not exist on this host" % group)
    return uid, gid


def write_atomically(path, text, mode, owner=None, group=None, check=None):
    """Write `text` to a temporary file beside `path` with its final mode and owner, then rename it over `path`:
    readers never see half a file, and the new file is never readable by more than `mode` allows. (Ansible's
    atomic_move first copies the old file's mode and owner onto the new one, which would briefly widen a secret
    whose old file was wider.) `check(tmp_path)`, when given, runs on the complete temporary file before the
    rename and may raise to keep the old file."""
    directory = os.path.dirname(path) or "."
    if not os.path.isdir(directory):
        raise OSError("directory %s does not exist" % directory)
    uid, gid = owner_ids(owner, group)
    handle, tmp = tempfile.mkstemp(prefix=".dbops-", dir=directory)  # created 0600
    try:
        with os.fdopen(handle, "w") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(tmp, int(mode, 8))
        if uid is not None or gid is not None:
            os.chown(tmp, -1 if uid is None else uid, -1 if gid is None else gid)
        if check is not None:
            check(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
