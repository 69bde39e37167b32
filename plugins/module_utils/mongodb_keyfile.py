# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A MongoDB replica set's keyfile and the rotation of its key without downtime (playbooks/rotate_keyfile_mongodb.yml,
MongoDB's https://www.mongodb.com/docs/manual/tutorial/rotate-key-replica-set/): members authenticate to each other
while their keyfiles share at least one key, so every keyfile first holds the old key and the new one (a rolling
restart), then the new one alone (a second rolling restart). At every moment of either roll, the restarted members
and the others share a key. Pure; no key ever appears in a reason."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# What the mongodb_rs role accepts as mongodb_rs_keyfile_content (tasks/main.yml checks the same pattern).
KEY_PATTERN = re.compile(r"^[A-Za-z0-9+/=\s]{6,1024}$")
BOTH, NEW = "both", "new"


def keys_of(text):
    """The keys of a keyfile as mongod reads one: a single key string, or (MongoDB 4.2 and later) a YAML sequence of
    key strings, each optionally quoted; whitespace inside a key is ignored, so a key may span lines."""
    lines = [line for line in (text or "").splitlines() if line.strip() and line.strip() != "---"]
    if not lines:
        return []
    if not lines[0].lstrip().startswith("- "):
        return ["".join("".join(lines).split()).strip("'\"")]
    items = []
    for line in lines:
        if line.lstrip().startswith("- "):
            items.append(line.lstrip()[2:])
        elif items:
            items[-1] += line
    return ["".join(item.split()).strip("'\"") for item in items]


def single_key_file(key):
    """The keyfile the mongodb_rs role writes for a key (its content and a newline): what the last step leaves, so
    a converge with the new key in the inventory finds the file it would write."""
    return key + "\n"


def both_keys_file(old, new):
    """The first step's keyfile: the old key first, then the new one (a YAML sequence, each key on one line)."""
    return "- %s\n- %s\n" % ("".join(old.split()), "".join(new.split()))


def rotation_plan(files, new_key, pending, until=NEW):
    """What the rotation does from the members' keyfiles as they are.

    files: {member: its keyfile's text, None when it has none}; new_key: the key to end with (the inventory's
    mongodb_rs_keyfile_content); pending: {member: the restart reasons its mongodb_rs_restart_pending_file holds
    (a keyfile written, by the rotation or the role, names the keyfile; the roll's gate-after clears them)}; until: NEW (the
    whole rotation) or BOTH (stop once every member runs both keys).

    Returns {refusals, steps (BOTH and/or NEW, in order), write_both and write_new (the members whose file each step
    rewrites), the two files' contents (both_content, new_content: secrets), why}. A run stopped anywhere resumes:
    a member whose file holds the new key but owes a restart (its pending reason) may still run its old file, so
    the second step waits until the first step's restarts are done, and a step with nothing to write still rolls
    while a member owes its restart."""
    members = sorted(files)
    plan = {"refusals": [], "steps": [], "write_both": [], "write_new": [], "both_content": "",
            "new_content": "", "why": ""}
    if not isinstance(new_key, str) or not KEY_PATTERN.match(new_key):
        plan["refusals"].append("mongodb_rs_keyfile_content: the new key must be 6 to 1024 base64 characters")
        return plan
    new = "".join(new_key.split())
    missing = [member for member in members if files[member] is None]
    if missing:
        plan["refusals"].append("%s: no keyfile (/etc/mongodb/keyfile) to rotate; converge %s with the mongodb_rs "
                                "role first" % (", ".join(missing), "them" if len(missing) > 1 else "it"))
        return plan
    keys = dict((member, keys_of(files[member])) for member in members)
    olds = sorted(set(key for member in members for key in keys[member] if key != new))
    if len(olds) > 1:
        plan["refusals"].append(
            "the members' keyfiles hold %d different keys besides the new one (%s): which one each member runs "
            "cannot be told; make them agree on the running key first" % (len(olds), ", ".join(
                "%s: %d key(s)" % (member, len(keys[member])) for member in members)))
        return plan
    old = olds[0] if olds else None
    owes = [member for member in members if any("keyfile" in reason for reason in pending.get(member, []))]
    plan["new_content"] = single_key_file(new_key)
    if all(keys[member] == [new] for member in members) and not owes:
        plan["why"] = "every member's keyfile holds the new key alone and no member owes a restart: nothing to do"
        return plan
    # The first step is done once every member's file holds the new key and every member that still holds the old
    # one runs its file (owes no restart); a member on the new key alone is already in the second step.
    first_done = all(new in keys[member] for member in members) and all(
        keys[member] == [new] for member in owes)
    if not first_done:
        if old is None:
            plan["refusals"].append("no member holds a key besides the new one, yet not every keyfile holds it")
            return plan
        plan["steps"].append(BOTH)
        plan["both_content"] = both_keys_file(old, new)
        plan["write_both"] = [member for member in members if keys[member] != [old, new]]
    if until == NEW:
        plan["steps"].append(NEW)
        # after the first step every file holds both keys; else the ones not yet on the new key alone
        plan["write_new"] = members if BOTH in plan["steps"] else [
            member for member in members if files[member] != plan["new_content"]]
    plan["why"] = "; ".join(describe(step, plan["write_" + step], owes) for step in plan["steps"])
    if until == BOTH:
        plan["why"] = ("%s; then it stops" % plan["why"] if plan["why"] else "every member runs both keys already") + (
            " (until=both): a run without it finishes the rotation")
    return plan


def describe(step, written, owes):
    what = "both keys" if step == BOTH else "the new key alone"
    if written:
        return "%s into the keyfile of %s, then a rolling restart" % (what, ", ".join(written))
    return "%s already written; a rolling restart for %s, which owe%s it" % (
        what, ", ".join(owes), "" if len(owes) > 1 else "s")
