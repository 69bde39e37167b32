# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Decisions of a PostgreSQL major upgrade (playbooks/pg_upgrade_major.yml), from what the servers said.

Pure functions: the playbook reads every member with postgres_member_state and apt's candidate version, and these
decide what each member needs (the primary through pg_upgrade --link, each replica copied again from the upgraded
primary) or refuse before anything changes. The same states decide a second run after a stop: a member already on
the target is skipped.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

PLAYBOOK = "playbooks/pg_upgrade_major.yml"
MIN_MAJOR = 13          # the oldest major the collection plans for (postgres_tuning.MIN_VERSION)

UPGRADE_PRIMARY = "upgrade_primary"
REBUILD_REPLICA = "rebuild_replica"
DONE = "done"

# Column options a source build keeps for itself that the target's pg_dump carries and the target's server refuses
# ("unrecognized parameter"), failing pg_upgrade while it restores the schema, after the primary stopped and after
# pg_upgrade --check passed. Debian's PostgreSQL 17.12 (trixie) stores pg_attver on every column; its own pg_dump
# leaves it out, 18's does not. The source server runs without it (it is not a setting of the column's).
SOURCE_ONLY_ATTRIBUTE_OPTIONS = {17: ("pg_attver",)}
FIRST_USER_OID = 16384          # FirstNormalObjectId: below it, the catalogs initdb made (never dumped)

_CANDIDATE_RE = re.compile(r"^\s*Candidate:\s*(\S+)\s*$", re.MULTILINE)


def major_of(version_num):
    """server_version_num (170012) or a PG_VERSION file's text ('17') -> the major as an int, or None."""
    if version_num in (None, ""):
        return None
    text = str(version_num).strip()
    if not text.isdigit():
        return None
    number = int(text)
    return number // 10000 if number >= 100000 else number


def apt_candidate(policy_text):
    """The candidate version in `apt-cache policy PACKAGE`'s output, or None when apt has none to install."""
    match = _CANDIDATE_RE.search(policy_text or "")
    if not match or match.group(1) == "(none)":
        return None
    return match.group(1)


def target_error(target):
    """Why pg_upgrade_target is not a major to upgrade to, or ''."""
    if isinstance(target, bool) or not str(target).strip().isdigit():
        return "pg_upgrade_target=%r: must be a PostgreSQL major version, a whole number such as 18" % (target,)
    if int(str(target).strip()) < MIN_MAJOR + 1:
        return "pg_upgrade_target=%s: must be %d or later (the collection runs PostgreSQL %d and later)" % (
            target, MIN_MAJOR + 1, MIN_MAJOR)
    return ""


def _candidate_on(candidate, host):
    return candidate.get(host) if isinstance(candidate, dict) else candidate


def plan(members, target, candidate=None):
    """What each member needs to reach the target major, or why not.

    members: {host: state} with state as postgres_member_state returns it (running, in_recovery, major).
    target: the major to reach (pg_upgrade_target). candidate: the version apt would install for the target's
    server package (apt_candidate), None when apt cannot find one; or {host: that version} read on each member.
    Every member with something to do needs one.
    Returns {'error': str, 'primary', 'source', 'target', 'actions': {host: action}, 'reason': str}. The error
    names what is wrong; nothing may change when it is not empty.
    """
    result = dict(error="", primary=None, source=None, target=None, actions={}, reason="")
    error = target_error(target)
    if error:
        result["error"] = error
        return result
    target = int(str(target).strip())
    result["target"] = target
    if not members:
        result["error"] = "no member to upgrade (postgres_tuned_group matches no host)"
        return result
    primaries = sorted(host for host, state in members.items() if state.get("running") and not state.get("in_recovery"))
    silent = sorted(host for host, state in members.items() if not state.get("running"))
    if len(primaries) != 1:
        result["error"] = ("expected exactly one primary (a running server not in recovery), found %s: the cluster "
                           "is not healthy; nothing was changed" % (", ".join(primaries) or "none"))
        return result
    primary = primaries[0]
    result["primary"] = primary
    primary_major = major_of(members[primary].get("major"))
    if primary_major is None:
        result["error"] = "%s (the primary) did not report its major version" % primary
        return result
    newer = sorted(host for host, state in members.items() if (major_of(state.get("major")) or 0) > target)
    if newer:
        result["error"] = ("pg_upgrade_target=%d is older than what %s run%s: a major version is never downgraded "
                           "(restore a backup taken before the upgrade instead)"
                           % (target, ", ".join("%s (%s)" % (h, major_of(members[h]["major"])) for h in newer),
                              "s" if len(newer) == 1 else ""))
        return result
    if primary_major < target - 1:
        result["error"] = ("pg_upgrade_target=%d skips a major: the primary %s runs %d; upgrade one major at a time "
                           "(first pg_upgrade_target=%d)" % (target, primary, primary_major, primary_major + 1))
        return result
    actions = {}
    if primary_major == target - 1:
        # Before the primary is upgraded every member must serve on the source major: pg_upgrade stops the only
        # copy that takes writes, and the replicas are what serves reads meanwhile and the way back.
        if silent:
            result["error"] = ("%s do%s not answer: the cluster is not healthy; start %s before the upgrade, "
                               "nothing was changed" % (", ".join(silent), "es" if len(silent) == 1 else "",
                                                        "it" if len(silent) == 1 else "them"))
            return result
        ahead = sorted(h for h in members if h != primary and major_of(members[h].get("major")) != primary_major)
        if ahead:
            result["error"] = ("%s run%s another major than the primary %s (%d): a replica is rebuilt only from the "
                               "upgraded primary; nothing was changed"
                               % (", ".join("%s (%s)" % (h, major_of(members[h].get("major"))) for h in ahead),
                                  "s" if len(ahead) == 1 else "", primary, primary_major))
            return result
        actions[primary] = UPGRADE_PRIMARY
        reason = "the primary %s runs %d: pg_upgrade --link to %d, then every replica copied again from it" % (
            primary, primary_major, target)
    else:
        actions[primary] = DONE
        reason = "the primary %s already runs %d (a run that stopped after the primary was upgraded)" % (
            primary, target)
    result["source"] = target - 1
    for host in sorted(members):
        if host == primary:
            continue
        state = members[host]
        # A replica on the target that is running and in recovery was rebuilt by an earlier run; anything else
        # (still on the source major, stopped halfway through its copy) is copied again from the primary, which
        # holds everything: a replica's own data is never the only copy.
        on_target = state.get("running") and state.get("in_recovery") and major_of(state.get("major")) == target
        actions[host] = DONE if on_target and primary_major == target else REBUILD_REPLICA
    lacking = sorted(h for h, a in actions.items() if a != DONE and not _candidate_on(candidate, h))
    if lacking:
        result["error"] = ("apt finds no package postgresql-%d to install on %s (pg_upgrade_target=%d): add the "
                           "repository that carries it (postgres_tuned_apt_release names a release to take it "
                           "from); nothing was changed" % (target, ", ".join(lacking), target))
        return result
    result["actions"] = actions
    todo = sorted(h for h, a in actions.items() if a != DONE)
    result["reason"] = reason + ("; to do: %s" % ", ".join(todo) if todo else "; nothing left to do")
    return result


def role_major_refusal(state, version, member):
    """Why postgres_tuned must not run on a member whose running major differs from postgres_tuned_version, or ''.

    The role configures one major: pointed at a newer one than runs, it would install the new server beside the
    running one and create an empty cluster; at an older one, it would write settings for the wrong server. A
    change of major goes through the upgrade playbook, which keeps the data.
    """
    running = major_of((state or {}).get("major")) if (state or {}).get("running") else None
    if running is None or running == int(version):
        return ""
    if int(version) < running:
        return ("%s runs PostgreSQL %d but postgres_tuned_version is %s: the role never changes the major of a "
                "running server, and a major is never downgraded; set postgres_tuned_version to %d"
                % (member, running, version, running))
    return ("%s runs PostgreSQL %d but postgres_tuned_version is %s: the role never changes the major of a running "
            "server; upgrade with %s -e pg_upgrade_target=%s, then run the role with postgres_tuned_version=%s"
            % (member, running, version, PLAYBOOK, version, version))


def source_only_options(source):
    """The column options of the source major that must not reach the target's pg_restore."""
    return SOURCE_ONLY_ATTRIBUTE_OPTIONS.get(int(source), ())


def strip_options_sql(options):
    """An UPDATE that removes the given options from the user's columns (attoptions) in one database, or ''.

    The options are constants of this module, never the user's input; the query names them as literals.
    """
    if not options:
        return ""
    patterns = " AND ".join("o NOT LIKE '%s=%%'" % name for name in options)
    matches = " OR ".join("o LIKE '%s=%%'" % name for name in options)
    return ("UPDATE pg_catalog.pg_attribute a SET attoptions = NULLIF(ARRAY(SELECT o FROM unnest(a.attoptions) o "
            "WHERE %s), '{}'::text[]) WHERE a.attrelid >= %d AND EXISTS (SELECT 1 FROM unnest(a.attoptions) o "
            "WHERE %s)" % (patterns, FIRST_USER_OID, matches))
