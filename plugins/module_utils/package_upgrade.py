# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every rolling package upgrade decides per member from apt_package_versions' answer, in one place.

Debian's version order, and one member's step: the packages to move (installed -> target), or skip when every
package is on the target, and the refusals (a package not installed, a target the package source does not have,
a downgrade). The Galera (galera_upgrade.py) and Group Replication (gr_upgrade.py) plans share it. Pure logic,
unit tested in tests/unit/test_galera_upgrade.py and tests/unit/test_gr_upgrade.py.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re


# ------------------------------------------------------------------------------------ Debian versions

def _split(version):
    """'1:11.8.9+ds-4' -> (1, '11.8.9+ds', '4'), as dpkg reads epoch, upstream version and revision."""
    version = str(version).strip()
    epoch = 0
    if ":" in version:
        head, version = version.split(":", 1)
        epoch = int(head) if head.isdigit() else 0
    revision = "0"
    if "-" in version:
        version, revision = version.rsplit("-", 1)
    return epoch, version, revision


def upstream_version(version):
    """The upstream part of a Debian version: '1:9.7.4-2' -> '9.7.4', '8.4.3-3-1.trixie' -> '8.4.3-3'."""
    return _split(version)[1]


def _order(char):
    if char == "~":
        return -1
    if char.isalpha():
        return ord(char)
    return ord(char) + 256


def _compare_part(left, right):
    """dpkg's verrevcmp: non-digit runs by character order (~ before everything), digit runs as numbers."""
    while left or right:
        left_text = re.match(r"^[^0-9]*", left).group(0)
        right_text = re.match(r"^[^0-9]*", right).group(0)
        for index in range(max(len(left_text), len(right_text))):
            left_char = _order(left_text[index]) if index < len(left_text) else 0
            right_char = _order(right_text[index]) if index < len(right_text) else 0
            if left_char != right_char:
                return -1 if left_char < right_char else 1
        left, right = left[len(left_text):], right[len(right_text):]
        left_digits = re.match(r"^[0-9]*", left).group(0)
        right_digits = re.match(r"^[0-9]*", right).group(0)
        if int(left_digits or 0) != int(right_digits or 0):
            return -1 if int(left_digits or 0) < int(right_digits or 0) else 1
        left, right = left[len(left_digits):], right[len(right_digits):]
    return 0


def compare_versions(left, right):
    """-1, 0 or 1 as Debian orders two package versions (epoch, then upstream version, then revision)."""
    left_epoch, left_upstream, left_revision = _split(left)
    right_epoch, right_upstream, right_revision = _split(right)
    if left_epoch != right_epoch:
        return -1 if left_epoch < right_epoch else 1
    return _compare_part(left_upstream, right_upstream) or _compare_part(left_revision, right_revision)


# ------------------------------------------------------------------------------------ one member's step

def member_step(member, packages, names, versions_variable=None):
    """('upgrade'|'skip', {package: [installed, target]}, refusals) for one member.

    packages: apt_package_versions' answer ({name: {installed, target, wanted, available}}); names: the packages
    the upgrade replaces. versions_variable: the playbook's variable of exact versions, named in the refusals of
    a version it asked for (None: the messages name none).
    A version asked for that is older than the installed one is a downgrade whether or not the source has it:
    that is the reason to give, not the source's list.
    """
    refusals, changes = [], {}
    asked = (" (%s)" % versions_variable) if versions_variable else ""
    for name in names:
        info = packages.get(name) or {}
        installed, target, wanted = info.get("installed"), info.get("target"), info.get("wanted")
        if not installed:
            refusals.append("%s: %s is not installed (the upgrade replaces installed packages; converge the "
                            "member with the role first)" % (member, name))
        elif wanted and not target and compare_versions(installed, wanted) > 0:
            refusals.append("%s: %s %s is newer than the version asked for, %s%s: a downgrade, refused (restore "
                            "from a backup or rebuild the member instead)" % (member, name, installed, wanted, asked))
        elif not target:
            refusals.append("%s: the package source has no %s %s%s (available: %s)" % (
                member, name, wanted or "candidate for the requested release", asked if wanted else "",
                ", ".join(info.get("available") or []) or "none"))
        elif compare_versions(installed, target) > 0:
            refusals.append("%s: %s %s is newer than the target %s%s: a downgrade, refused (restore from a "
                            "backup or rebuild the member instead)" % (member, name, installed, target,
                                                                       asked if wanted else ""))
        elif compare_versions(installed, target) < 0:
            changes[name] = [installed, target]
    return ("upgrade" if changes else "skip"), changes, refusals


def outside_play_refusal(outside, group_variable, group, whole="cluster"):
    """The refusal of members of the inventory group that the play does not hold (--limit, unreachable)."""
    if not outside:
        return None
    return ("%s (members of %s=%s) are outside the play (--limit or unreachable): an upgrade runs over the whole "
            "%s, one member at a time, and skips members already upgraded; run it without --limit"
            % (", ".join(outside), group_variable, group, whole))
