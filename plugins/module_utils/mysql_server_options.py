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
import shutil
import tempfile

from ansible_collections.dbops.clusters.plugins.module_utils import mysql_settings


def read_binary(module, binary):
    """(the set of option names `binary` lists, the version it names, the flavor it is), or (None, None, None)
    when it is not installed (yet). Fails when it lists no option."""
    if not binary or not os.path.exists(binary):
        return None, None, None
    # --no-defaults: the list must not depend on (or fail on) the option files being checked.
    rc, out, err = module.run_command([binary, "--no-defaults", "--verbose", "--help"])
    known = mysql_settings.parse_help_options(out)
    if not known:
        module.fail_json(msg="%s --verbose --help listed no options (rc=%s): %s" % (binary, rc, err.strip()[-500:]))
    return known, mysql_settings.parse_help_version(out), mysql_settings.parse_help_flavor(out)


def known_options(module, binary):
    """The set of option names `binary` lists, or None when it is not installed (yet)."""
    return read_binary(module, binary)[0]


# How a server of an async topology moves to another series; the cluster roles name their own path.
ASYNC_UPGRADE_PATH = ("one server at a time, the replicas first and the source last after a hand-over, with "
                      "playbooks/rolling_upgrade_mysql.yml (docs/upgrades.md)")


def series_refusal(series, installed, binary, flavor=None, installed_flavor=None, variable="percona_server_version",
                   upgrade_path=None):
    """Why the role must not plan for `series` ('8.4') on a host whose `binary` is version `installed` ('9.7.4'),
    or None. The role plans and writes for one series and never changes a server's version: planning for
    another series than the installed one would write options the installed server may not know. Judged only when
    the installed server is of the flavor asked for: another flavor's binary is the install the role would replace
    (the percona flavor's path predicted in check mode on a MySQL host). `variable` is the role variable that
    asked for the series, `upgrade_path` how the role's topology moves to another series."""
    if not installed or not series or (flavor and installed_flavor and flavor != installed_flavor):
        return None
    wanted = str(series).split(".")[:2]
    have = str(installed).split(".")[:2]
    if wanted == have:
        return None
    older = tuple(int(part) for part in wanted if part.isdigit()) < tuple(int(part) for part in have if part.isdigit())
    move = ("a running server is never moved to an older series (restore a backup of that series, or rebuild the "
            "server)" if older else "or move the server to %s %s" % (series, upgrade_path or ASYNC_UPGRADE_PATH))
    return ("%s asks for series %s, but %s is %s: the role plans for the installed series and never changes a "
            "server's version. Nothing was written. Set %s to %s (empty means the flavor's default series); %s."
            % (variable, series, binary, installed, variable, ".".join(have), move))


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


def value_refusals(module, binary, settings, known, override_variable="overrides"):
    """Sentences refusing values `binary` would not start with, checked by the binary itself, or [].

    Why this check: `--verbose --help` parses every option the way a start does (the same option parser, the
    same enum lists, bounds and size suffixes), prints the value it would run with, and starts nothing: no data
    directory, no running server, no change (SET PERSIST_ONLY would write mysqld-auto.cnf; SET SESSION cannot
    test global-only or static variables; --validate-config exists on MySQL only, not on MariaDB). The
    candidate values go in a 0600 --defaults-file in a private directory, never on the command line (a value
    may be a secret, such as wsrep_sst_auth).
    """
    checked = dict((option, setting) for option, setting in settings.items()
                   if mysql_settings.value_checked(option, known))
    if not checked:
        return []
    directory = tempfile.mkdtemp(prefix="dbops-mysql-check-")
    try:
        path = os.path.join(directory, "candidate.cnf")
        with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as handle:
            handle.write(mysql_settings.render(checked, "candidate values checked by dbops.clusters"))
        rc, out, err = module.run_command([binary, "--defaults-file=%s" % path, "--verbose", "--help"])
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return mysql_settings.value_refusals(checked, rc, err, mysql_settings.parse_help_values(out),
                                         override_variable)
