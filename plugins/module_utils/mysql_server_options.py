# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The option names a MySQL-family server binary accepts, asked from the binary itself.

`mysqld --verbose --help` (MySQL, Percona Server) and `mariadbd --verbose --help` (MariaDB) list every option
the binary would accept at startup, built-in plugins included, without starting a server or reading a data
directory. A name not on that list stops the server at startup ("unknown variable"), so it is refused before
it is written. Parsing is in mysql_settings.parse_help_options (pure, unit tested).
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.dbops.clusters.plugins.module_utils import mysql_settings


def known_options(module, binary):
    """The set of option names `binary` lists, or None when it is not installed (yet). Fails when it lists none."""
    if not binary or not os.path.exists(binary):
        return None
    # --no-defaults: the list must not depend on (or fail on) the option files being checked.
    rc, out, err = module.run_command([binary, "--no-defaults", "--verbose", "--help"])
    known = mysql_settings.parse_help_options(out)
    if not known:
        module.fail_json(msg="%s --verbose --help listed no options (rc=%s): %s" % (binary, rc, err.strip()[-500:]))
    return known


def refusal(variable, names, known, binary):
    """A message naming each option the binary does not know (with the closest known name), or None."""
    unknown = mysql_settings.unknown_options(names, known)
    if not unknown:
        return None
    hints = []
    for option in unknown:
        near = mysql_settings.closest(option, known)
        hints.append("%s%s" % (option, " (did you mean %s?)" % near if near else ""))
    return ("%s: %s not known to %s; the server would refuse to start with %s. Nothing was written. Fix the "
            "name, or prefix it with loose- for the option of a plugin that is not loaded yet."
            % (variable, ", ".join(hints), binary, "it" if len(unknown) == 1 else "them"))
