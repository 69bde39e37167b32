# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which server version jumps MySQL upgrades in place: the rule every MySQL rolling upgrade applies before any
change (Group Replication, module_utils/gr_upgrade.py; async source and replicas, module_utils/mysql_upgrade.py).

MySQL 8.4 Reference Manual, 3.2 Upgrade Paths (upgrade-paths.html): in place within an LTS series (8.4.0 ->
8.4.4) and from one LTS series to the next (8.0 -> 8.4 LTS); a jump past an LTS is not supported. Targets in an
Innovation series, and sources in one, are refused (they would have to land on an LTS first), and so is a series
this module does not know. Percona Server follows the same series.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbops.clusters.plugins.module_utils.mysql_flavors import FlavorError, parse_version
from ansible_collections.dbops.clusters.plugins.module_utils.package_upgrade import upstream_version

# MySQL's long-term series in order. 8.0 is the last bugfix series; the upgrade-paths table treats it as an LTS
# (8.0 -> 8.4 LTS is supported in place).
LTS_SERIES = ((8, 0), (8, 4), (9, 7))
DOCS = "MySQL 8.4 Reference Manual, 3.2 Upgrade Paths"


def version_of(text):
    """(major, minor, patch) of a server or package version, or None when it cannot be read."""
    if not text:
        return None
    try:
        return parse_version(str(text))
    except FlavorError:
        return None


def package_version(debian_version):
    """(major, minor, patch) of a Debian package version ('1:11.8.9+ds-4' -> (11, 8, 9)), or None."""
    return version_of(upstream_version(debian_version)) if debian_version else None


def dotted(version):
    return ".".join(str(part) for part in version)


def jump_refusal(current, target, variables):
    """Why MySQL does not support moving a server from version `current` to `target` in place, or None.

    current, target: (major, minor, patch); variables: the playbook's variables that chose the target, named in
    the message. Within a series, or from an LTS series to the next LTS: supported. A lower target is a
    downgrade (refused by the package check, which names the package)."""
    if current is None or target is None or target <= current or target[:2] == current[:2]:
        return None
    source, goal = current[:2], target[:2]
    where = "%s -> %s (%s)" % (dotted(current), dotted(target), variables)
    lts = "LTS series %s" % " -> ".join(dotted(series) for series in LTS_SERIES)
    if source not in LTS_SERIES:
        return ("%s: the servers run %s, not an LTS series this playbook knows (%s); MySQL upgrades in place within "
                "an LTS series or from one LTS series to the next (%s)" % (where, dotted(source), lts, DOCS))
    if goal not in LTS_SERIES:
        return ("%s: %s is not an LTS series this playbook knows (%s); a rolling upgrade here stays within an LTS "
                "series or goes to the next LTS series (%s)" % (where, dotted(goal), lts, DOCS))
    position = LTS_SERIES.index(source) + 1
    following = LTS_SERIES[position] if position < len(LTS_SERIES) else None
    if goal != following:
        return ("%s skips the LTS series between them: MySQL upgrades in place from one LTS series to the next only "
                "(%s; %s); upgrade to %s first" % (where, lts, DOCS, dotted(following)))
    return None
