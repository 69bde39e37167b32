# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure planning for MongoDB replica sets: member validation, reconfiguration steps, health verdicts and
the order of rolling restarts and upgrades. No I/O here; the modules feed it what the server said.

Rules followed (MongoDB manual):
- replica-configuration: votes 0 or 1; a non-voting, hidden or arbiter member has priority 0; at most 7
  voting and 50 members; https://www.mongodb.com/docs/manual/reference/replica-configuration/
- replSetReconfig: a reconfig may add or remove at most one voting member, and the previous config must be
  committed first; https://www.mongodb.com/docs/manual/reference/command/replSetReconfig/
- upgrades: config servers first, then shards (secondaries, then the stepped-down primary), then mongos,
  with the balancer stopped; one major release at a time, FCV at the old release before the binaries move;
  https://www.mongodb.com/docs/manual/release-notes/8.0-upgrade-sharded-cluster/
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dbops.clusters.plugins.module_utils.rolling import rolling_order

MAX_VOTING = 7
MAX_MEMBERS = 50
MEMBER_FIELDS = ("host", "priority", "votes", "hidden", "arbiterOnly", "tags", "secondaryDelaySecs",
                 "buildIndexes")
HEALTHY_STATES = ("PRIMARY", "SECONDARY", "ARBITER")
RELEASES = ("6.0", "7.0", "8.0")


# Module argument spec of one member, shared by mongodb_rs_initiate and mongodb_rs_reconfigure.
MEMBER_SPEC = dict(
    host=dict(type="str", required=True),
    priority=dict(type="float"),
    votes=dict(type="int", default=1),
    hidden=dict(type="bool", default=False),
    arbiter_only=dict(type="bool", default=False),
    tags=dict(type="dict"),
    secondary_delay_secs=dict(type="int", default=0),
)


def members_from_params(members):
    """Module `members` entries (snake_case options) as server-style member dicts."""
    out = []
    for member in members:
        item = dict(host=member["host"], votes=member.get("votes", 1), hidden=member.get("hidden", False),
                    arbiterOnly=member.get("arbiter_only", False), tags=member.get("tags") or {},
                    secondaryDelaySecs=member.get("secondary_delay_secs", 0))
        if member.get("priority") is not None:
            item["priority"] = member["priority"]
        out.append(item)
    return out


class PlanError(Exception):
    """The desired state is invalid or cannot be reached safely; the message names the option."""


def normalize_member(member):
    """A member dict with the server's defaults filled in, without server-managed fields (newlyAdded)."""
    arbiter = bool(member.get("arbiterOnly", member.get("arbiter_only", False)))
    votes = member.get("votes", 1)
    default_priority = 0 if arbiter or not votes or member.get("hidden") else 1
    normal = {
        "host": member["host"],
        "priority": float(member.get("priority", default_priority)),
        "votes": int(votes),
        "hidden": bool(member.get("hidden", False)),
        "arbiterOnly": arbiter,
        "tags": dict(member.get("tags") or {}),
        "secondaryDelaySecs": int(member.get("secondaryDelaySecs", member.get("secondary_delay_secs", 0))),
        "buildIndexes": bool(member.get("buildIndexes", member.get("build_indexes", True))),
    }
    if "_id" in member:
        normal["_id"] = int(member["_id"])
    return normal


def validate_members(members, name="members"):
    """Normalized members, or PlanError naming the first offending entry."""
    if not members:
        raise PlanError("%s must list at least one member" % name)
    normal, hosts = [], set()
    for index, raw in enumerate(members):
        where = "%s[%d]" % (name, index)
        if not isinstance(raw, dict) or not raw.get("host"):
            raise PlanError("%s.host is required" % where)
        host = raw["host"]
        port = host.rsplit(":", 1)[-1] if ":" in host else ""
        if not port.isdigit():
            raise PlanError("%s.host must be host:port, got %r" % (where, host))
        if host in hosts:
            raise PlanError("%s.host %s is listed twice" % (where, host))
        hosts.add(host)
        member = normalize_member(raw)
        if member["votes"] not in (0, 1):
            raise PlanError("%s.votes must be 0 or 1" % where)
        if not 0 <= member["priority"] <= 1000:
            raise PlanError("%s.priority must be between 0 and 1000" % where)
        for flag, reason in (("votes", "a non-voting member"), ("hidden", "a hidden member"),
                             ("arbiterOnly", "an arbiter")):
            restricted = member[flag] == 0 if flag == "votes" else member[flag]
            if restricted and member["priority"] > 0:
                raise PlanError("%s.priority must be 0 for %s" % (where, reason))
        if member["secondaryDelaySecs"] and member["priority"] > 0:
            raise PlanError("%s.priority must be 0 for a delayed member" % where)
        normal.append(member)
    if len(normal) > MAX_MEMBERS:
        raise PlanError("%s has %d entries; a replica set has at most %d" % (name, len(normal), MAX_MEMBERS))
    voting = sum(1 for m in normal if m["votes"])
    if voting > MAX_VOTING:
        raise PlanError("%s has %d voting members; at most %d may vote" % (name, voting, MAX_VOTING))
    if not any(electable(m) for m in normal):
        raise PlanError("%s has no electable member (priority > 0, votes 1, not hidden, not an arbiter)" % name)
    return normal


def initiate_decision(set_name, answers, local=None):
    """Whether replSetInitiate may run, from what every listed member answered to `hello`.

    answers: {host: hello reply, or an error message (str) when the member did not answer}; local: the
    member replSetInitiate would run on. Returns {"action": "initiate" | "exists" | "refuse", "reason",
    "source"}: "exists" names in "source" the member to read the set from (its primary when one is known).

    Initiating is safe only when every listed member answered and none has a config: one initiated member
    means the set exists (initiating another member would start a second set with the same name), and a
    member that did not answer may be the one that has it. The manual says to run replSetInitiate "on only
    one of the mongod instances for the replica set":
    https://www.mongodb.com/docs/manual/reference/command/replSetInitiate/
    """
    foreign = sorted(host for host, seen in answers.items()
                     if isinstance(seen, dict) and seen.get("setName") and seen["setName"] != set_name)
    if foreign:
        return {"action": "refuse", "source": None, "reason": "%s run%s with another replSetName (%s), not %s" % (
            ", ".join(foreign), "s" if len(foreign) == 1 else "",
            ", ".join(sorted(set(answers[h]["setName"] for h in foreign))), set_name)}
    initiated = sorted(host for host, seen in answers.items() if isinstance(seen, dict) and "setVersion" in seen)
    if initiated:
        # Read the set from its primary (which may be a member leaving the list) unless it did not answer.
        primaries = sorted(set(answers[h].get("primary") for h in initiated if answers[h].get("primary")))
        answered = len(primaries) == 1 and isinstance(answers.get(primaries[0], {}), dict)
        source = primaries[0] if answered else initiated[0]
        return {"action": "exists", "source": source,
                "reason": "%s is initiated already (seen on %s)" % (set_name, ", ".join(initiated))}
    silent = sorted(host for host, seen in answers.items() if not isinstance(seen, dict))
    if silent:
        reason = ("no member has a config, but %s did not answer (%s): it may belong to an initiated %s, and "
                  "initiating now could start a second set; start it or remove it from the members"
                  % (", ".join(silent), "; ".join(str(answers[h]) for h in silent), set_name))
        return {"action": "refuse", "source": None, "reason": reason}
    return {"action": "initiate", "source": local,
            "reason": "none of the %d members has a config" % len(answers)}


def electable(member):
    return member["priority"] > 0 and member["votes"] == 1 and not member["hidden"] and not member["arbiterOnly"]


def _comparable(member):
    return dict((key, member[key]) for key in MEMBER_FIELDS)


def _server_member(member):
    """The member as sent to replSetReconfig: every field explicit, so the server's defaults never matter."""
    out = {"_id": member["_id"]}
    out.update(_comparable(member))
    return out


def plan_reconfig(current_members, desired_members, primary=None):
    """Steps from the current member list to the desired one.

    Each step is a dict: {"members": [...full member list to send...], "summary": "..."} or
    {"stepdown": host, "summary": ...} when the primary itself must lose electability or leave. A step
    changes at most one voting member; attribute changes that keep the voting set come first; then voting
    members are added and removed alternately, an addition first (so fault tolerance never drops below
    that of the smaller of the two sets), except when the 7-voter limit forces a removal first. Raises PlanError on invalid input.
    """
    desired = validate_members(desired_members)
    current = [normalize_member(m) for m in current_members]
    if primary and not any(m["host"] == primary and electable(m) for m in desired):
        # A primary cannot make itself unelectable or leave: it steps down first, and the rest is planned
        # again against the new primary. Other members that will not be electable either get priority 0
        # first (a step that keeps the voting set), so the step-down hands over to a member that stays.
        keep = set(m["host"] for m in desired if electable(m))
        state, lowered = [], []
        for member in (normalize_member(m) for m in current_members):
            if member["host"] != primary and electable(member) and member["host"] not in keep:
                member = dict(member, priority=0.0)
                lowered.append(member["host"])
            state.append(member)
        steps = []
        if lowered:
            steps.append({"members": [_server_member(m) for m in state], "summary": "priority 0 for %s before %s "
                          "steps down (not electable in the desired config)" % (", ".join(lowered), primary)})
        return steps + [{"stepdown": primary, "summary": "step down %s: the desired config makes it unelectable "
                         "or removes it" % primary}] + plan_reconfig(state, desired_members)
    by_host = dict((m["host"], m) for m in current)
    used_ids = set(m["_id"] for m in current if "_id" in m)
    next_id = 0
    for member in desired:
        if member["host"] in by_host:
            member["_id"] = by_host[member["host"]]["_id"]
        else:
            if member.get("_id") is not None and member["_id"] not in used_ids:
                used_ids.add(member["_id"])
                continue
            while next_id in used_ids:
                next_id += 1
            member["_id"] = next_id
            used_ids.add(next_id)
    desired_by_host = dict((m["host"], m) for m in desired)

    steps = []
    state = [dict(m) for m in current]

    def emit(summary):
        steps.append({"members": [_server_member(m) for m in state], "summary": summary})

    def voting(member):
        return member["votes"] == 1

    # Step 1: every change that keeps the set of voting members: attributes of members that stay and vote
    # the same, and non-voting members joining or leaving.
    changed = []
    for index, member in enumerate(state):
        want = desired_by_host.get(member["host"])
        if want is not None and voting(want) == voting(member) and _comparable(want) != _comparable(member):
            state[index] = dict(want)
            changed.append("update %s" % member["host"])
    for member in desired:
        if member["host"] not in by_host and not voting(member):
            state.append(dict(member))
            changed.append("add non-voting %s" % member["host"])
    for member in list(state):
        if member["host"] not in desired_by_host and not voting(member):
            state.remove(member)
            changed.append("remove non-voting %s" % member["host"])
    if changed:
        emit("; ".join(changed))

    additions = [m for m in desired if voting(m) and (m["host"] not in by_host or not voting(by_host[m["host"]]))]
    removals = [m for m in current
                if voting(m) and (m["host"] not in desired_by_host or not voting(desired_by_host[m["host"]]))]
    # Remove the least useful voters first: unelectable ones, then by name.
    removals.sort(key=lambda m: (electable(m), m["host"]))
    added_last = False
    while additions or removals:
        voters = sum(1 for m in state if voting(m))
        # Alternate: add one, remove one, so the set is never more than one voter above its size.
        if additions and (not removals or (not added_last and voters < MAX_VOTING)):
            added_last = True
            member = additions.pop(0)
            existing = [i for i, m in enumerate(state) if m["host"] == member["host"]]
            if existing:
                state[existing[0]] = dict(member)
                emit("make %s a voting member" % member["host"])
            else:
                state.append(dict(member))
                emit("add voting member %s" % member["host"])
            continue
        added_last = False
        member = removals.pop(0)
        want = desired_by_host.get(member["host"])
        index = [i for i, m in enumerate(state) if m["host"] == member["host"]][0]
        if want is None:
            del state[index]
            emit("remove voting member %s" % member["host"])
        else:
            state[index] = dict(want)
            emit("make %s non-voting" % member["host"])
    return steps


def members_match(current_members, desired_members):
    desired = dict((m["host"], _comparable(m)) for m in validate_members(desired_members))
    current = dict((m["host"], _comparable(normalize_member(m))) for m in current_members)
    return desired == current


def configured_delays(config_members):
    """{host: secondaryDelaySecs} of the config's delayed members (slaveDelay before MongoDB 5.0)."""
    delays = {}
    for member in config_members or []:
        delay = member.get("secondaryDelaySecs", member.get("slaveDelay", 0)) or 0
        if delay:
            delays[member.get("host")] = float(delay)
    return delays


def health_problems(status, max_lag_seconds, expected_members=None, config_committed=None, config_members=None):
    """Unmet health conditions, one sentence each, from replSetGetStatus; empty when healthy.

    Every member PRIMARY, SECONDARY or ARBITER, exactly one PRIMARY, every data-bearing secondary within
    max_lag_seconds of the primary's last applied operation, the config committed when known. A delayed member
    (secondaryDelaySecs in config_members) applies each operation that many seconds late by design
    (https://www.mongodb.com/docs/manual/core/replica-set-delayed-member/): its lag is judged against its delay
    plus max_lag_seconds, so a healthy delayed member passes and one stuck further behind still fails.
    """
    problems = []
    members = status.get("members") or []
    delays = configured_delays(config_members)
    if expected_members is not None and len(members) != expected_members:
        problems.append("the config has %d members, expected %d" % (len(members), expected_members))
    primaries = [m for m in members if m.get("stateStr") == "PRIMARY"]
    if len(primaries) != 1:
        problems.append("%d members are PRIMARY, expected exactly 1" % len(primaries))
    for member in members:
        state = member.get("stateStr")
        if state not in HEALTHY_STATES:
            problems.append("%s is %s" % (member.get("name"), state))
    if len(primaries) == 1:
        primary_time = primaries[0].get("optimeDate")
        for member in members:
            if member.get("stateStr") != "SECONDARY" or primary_time is None or member.get("optimeDate") is None:
                continue
            lag = (primary_time - member["optimeDate"]).total_seconds()
            delay = delays.get(member.get("name"), 0)
            if lag > max_lag_seconds + delay:
                problems.append("%s lags the primary by %.1fs (limit %ss%s)" % (
                    member["name"], lag, max_lag_seconds,
                    " beyond its secondaryDelaySecs of %gs" % delay if delay else ""))
    if config_committed is False:
        problems.append("the current replica set config is not committed on a majority yet")
    return problems


def optime_key(optime):
    """An optime ({ts, t}) as a sortable (term, timestamp) pair; (-1, 0, 0) when unknown."""
    if not optime:
        return (-1, 0, 0)
    ts = optime.get("ts")
    return (int(optime.get("t", -1)), getattr(ts, "time", 0), getattr(ts, "inc", 0))


def caught_up_problem(status, target, config_members=None, max_lag_seconds=0):
    """None when the member answering replSetGetStatus (the one marked self) has applied up to `target`
    (an optime key), else a sentence saying how far it is. Used after a restart: the member must have
    applied what the primary had when the gate started, not only be SECONDARY (a restarted member is
    SECONDARY before it has caught up). A delayed member (secondaryDelaySecs in config_members) reaches that
    point only its delay later: it is caught up when it is within its delay plus max_lag_seconds of the
    primary's last applied operation."""
    me = next((m for m in status.get("members") or [] if m.get("self")), None)
    if me is None:
        return "the member answering is not in its own config"
    if me.get("stateStr") not in ("PRIMARY", "SECONDARY"):
        return "%s is %s" % (me.get("name"), me.get("stateStr"))
    delay = configured_delays(config_members).get(me.get("name"), 0)
    if delay:
        primary = next((m for m in status.get("members") or [] if m.get("stateStr") == "PRIMARY"), None)
        if primary is None or primary.get("optimeDate") is None or me.get("optimeDate") is None:
            return "no primary's last applied time to judge the delayed member %s by" % me.get("name")
        lag = (primary["optimeDate"] - me["optimeDate"]).total_seconds()
        if lag > delay + max_lag_seconds:
            return "%s (delayed %gs) is %.1fs behind the primary, more than its delay plus %ss" % (
                me.get("name"), delay, lag, max_lag_seconds)
        return None
    if optime_key(me.get("optime")) < target:
        return "%s has applied up to %s, not yet the primary's %s from when the gate started" % (
            me.get("name"), optime_key(me.get("optime")), target)
    return None


def primary_optime(status):
    """The primary's optime key as the answering member sees it, or None when no primary is known."""
    primary = next((m for m in status.get("members") or [] if m.get("stateStr") == "PRIMARY"), None)
    if primary is None or optime_key(primary.get("optime"))[0] < 0:
        return None
    return optime_key(primary.get("optime"))


ALLOW_DOWNTIME_VARIABLE = "mongodb_rs_allow_downtime"


def can_take_over(member):
    """Whether a member could become primary when the primary steps down: SECONDARY now, and electable in the
    config (priority > 0, a vote, not hidden, not an arbiter, no secondaryDelaySecs). `member` is a
    replSetGetStatus entry, with the config's fields merged in when known (merge_config)."""
    if member.get("stateStr") != "SECONDARY":
        return False
    normal = normalize_member(dict(member, host=member.get("name") or member.get("host")))
    return electable(normal) and not normal["secondaryDelaySecs"]


def merge_config(status_members, config_members):
    """replSetGetStatus members with their config entry's priority, votes, hidden, arbiterOnly and
    secondaryDelaySecs (matched by host), so that the planners know who can take over from the primary."""
    by_host = dict((m.get("host"), m) for m in config_members or [])
    merged = []
    for member in status_members:
        item = dict(member)
        config = by_host.get(member.get("name"))
        if config is not None:
            for key in ("priority", "votes", "hidden", "arbiterOnly", "secondaryDelaySecs"):
                if key in config:
                    item[key] = config[key]
        merged.append(item)
    return merged


def no_handover_reason(members, primary):
    """Why the primary cannot hand over (None when a member can take over)."""
    if any(can_take_over(m) for m in members if m["name"] != primary):
        return None
    others = [m for m in members if m["name"] != primary]
    if not others:
        return "%s is the set's only member" % primary
    return "no other member can become primary (%s)" % ", ".join(
        "%s: %s" % (m["name"], _why_not_electable(m)) for m in sorted(others, key=lambda m: m["name"]))


def _why_not_electable(member):
    if member.get("stateStr") == "ARBITER" or member.get("arbiterOnly"):
        return "arbiter"
    if member.get("stateStr") != "SECONDARY":
        return member.get("stateStr") or "state unknown"
    normal = normalize_member(dict(member, host=member["name"]))
    for flag, text in (("hidden", "hidden"), ("secondaryDelaySecs", "delayed")):
        if normal[flag]:
            return text
    if not normal["votes"]:
        return "non-voting"
    return "priority 0"


def restart_order(members, allow_downtime=False, set_name=None):
    """Rolling order for one replica set from replSetGetStatus members (config fields merged in by
    merge_config when known): non-primaries first (by name, for a stable plan), the primary last after a
    step-down. Returns a list of {"host", "stepdown", "in_place"}.

    The step-down needs a member that can take over (replSetStepDown fails otherwise:
    https://www.mongodb.com/docs/manual/reference/command/replSetStepDown/). When none exists (a one-member
    set, or the others are arbiters, hidden, delayed, priority 0 or not SECONDARY), restarting the primary
    leaves the set without a primary - no writes, no majority reads - until it is back and elected again:
    PlanError naming that downtime, unless allow_downtime, in which case the primary is restarted in place
    ({"stepdown": False, "in_place": True}) and the caller gates after it as for any member."""
    primaries = [m["name"] for m in members if m.get("stateStr") == "PRIMARY"]
    if len(primaries) != 1:
        raise PlanError("a rolling operation needs exactly one PRIMARY, found %d" % len(primaries))
    primary = primaries[0]
    others = rolling_order(sorted(m["name"] for m in members), last=primary)[:-1]
    order = [{"host": h, "stepdown": False, "in_place": False} for h in others]
    reason = no_handover_reason(members, primary)
    if reason is None:
        return order + [{"host": primary, "stepdown": True, "in_place": False}]
    if not allow_downtime:
        raise PlanError("%sthe primary %s cannot be stepped down: %s. Restarting it in place leaves the set "
                        "without a primary (no writes, no majority reads) until it is back and elected again. Add "
                        "an electable member first, or accept that downtime with %s=true"
                        % ("replica set %s: " % set_name if set_name else "", primary, reason,
                           ALLOW_DOWNTIME_VARIABLE))
    return order + [{"host": primary, "stepdown": False, "in_place": True}]


def restart_plan(status_members, config_members, allow_downtime=False, set_name=None):
    """restart_order on replSetGetStatus members merged with the config's, as a dict for playbooks:
    {"order", "primary", "primary_in_place", "error"} (error: the refusal, order empty)."""
    try:
        order = restart_order(merge_config(status_members, config_members), allow_downtime, set_name)
    except PlanError as err:
        return {"order": [], "primary": None, "primary_in_place": False, "error": str(err)}
    return {"order": order, "primary": order[-1]["host"], "primary_in_place": order[-1]["in_place"],
            "error": None}


def upgrade_path(current, target):
    """Major releases to pass through, one step at a time (7.0 -> 8.0); PlanError on a downgrade or an
    unknown release."""
    for name, value in (("current", current), ("target", target)):
        if value not in RELEASES:
            raise PlanError("%s release %r is not one of %s" % (name, value, ", ".join(RELEASES)))
    start, end = RELEASES.index(current), RELEASES.index(target)
    if end < start:
        raise PlanError("a downgrade from %s to %s is not a rolling upgrade" % (current, target))
    return list(RELEASES[start + 1:end + 1])


def upgrade_order(config_servers, shards, routers, allow_downtime=False):
    """The order of a sharded cluster's binary upgrade (one release step).

    config_servers: replSetGetStatus members of the config server replica set; shards: {name: members};
    routers: mongos host names. Returns steps {"action": ..., ...}: balancer stop, each config server
    member (secondaries, then the primary after a step-down), each shard likewise in name order, each
    mongos, balancer start. A set whose primary cannot hand over is refused (restart_order) unless
    allow_downtime, when its primary is upgraded in place: {"action": "upgrade", ..., "in_place": True}, no
    step-down step before it.
    """
    steps = [{"action": "balancer_stop"}]
    for component, members in [("config", config_servers)] + sorted(shards.items()):
        for item in restart_order(members, allow_downtime, set_name=component):
            if item["stepdown"]:
                steps.append({"action": "stepdown", "replica_set": component, "host": item["host"]})
            step = {"action": "upgrade", "replica_set": component, "host": item["host"]}
            if item["in_place"]:
                step["in_place"] = True
            steps.append(step)
    for router in sorted(routers):
        steps.append({"action": "upgrade", "replica_set": None, "host": router})
    steps.append({"action": "balancer_start"})
    return steps


def plan_upgrade(config_servers, shards, routers, current, target, fcv, raise_fcv, allow_downtime=False):
    """The whole rolling upgrade of a sharded cluster from release `current` to `target`, one major release
    at a time, as a list of steps (upgrade_order's, each tagged with its "release", plus {"action": "fcv",
    "version": R} steps).

    Each release step follows the manual: balancer off, config servers, shards, mongos, balancer on, then
    setFeatureCompatibilityVersion to that release
    (https://www.mongodb.com/docs/manual/release-notes/8.0-upgrade-sharded-cluster/). The binaries of release
    R need FCV at R's predecessor, so `fcv` must equal `current` before anything starts, and an intermediate
    release's FCV is always raised (the next step needs it); the last one only when raise_fcv (the user
    decides when the cluster leaves the point where a binary downgrade is still simple).
    """
    path = upgrade_path(current, target)
    if not path:
        # The binaries are there already: only FCV may be left to raise, when the user asks.
        if not raise_fcv or fcv == target:
            return []
        if not fcv_allows_binary(fcv, target):
            raise PlanError("featureCompatibilityVersion %s cannot be raised to %s in one step" % (fcv, target))
        return [{"action": "fcv", "version": target, "release": target}]
    if fcv != current:
        raise PlanError("featureCompatibilityVersion is %s but the binaries run %s: set it to %s before upgrading "
                        "(the %s binaries need FCV %s)" % (fcv, current, current, path[0], current))
    steps = []
    for release in path:
        for step in upgrade_order(config_servers, shards, routers, allow_downtime):
            steps.append(dict(step, release=release))
        if release != target or raise_fcv:
            steps.append({"action": "fcv", "version": release, "release": release})
    return steps


def fcv_allows_binary(fcv, binary_release):
    """A binary runs on data whose FCV is its own release or the one before:
    https://www.mongodb.com/docs/manual/reference/command/setFeatureCompatibilityVersion/"""
    index = RELEASES.index(binary_release)
    return fcv == binary_release or (index > 0 and fcv == RELEASES[index - 1])


RAISE_FCV_VARIABLE = "mongodb_rs_upgrade_raise_fcv"


def release_of(version):
    """The major release of a server version ("7.0.14" -> "7.0")."""
    return ".".join(str(version).split(".")[:2])


def plan_set_upgrade(status_members, config_members, versions, fcv, target, raise_fcv=False,
                     allow_downtime=False, set_name=None, inventory_members=None):
    """The rolling binary upgrade of one plain replica set to release `target`, one major release per run.

    status_members: replSetGetStatus members ({"name", "stateStr"}); config_members: the config's members;
    versions: {host:port: buildInfo version} of every member; fcv: the set's featureCompatibilityVersion;
    inventory_members: the host:port of every member of the inventory group in the group's order, when known.

    Refused before any change (PlanError naming the reason): a member not PRIMARY, SECONDARY or ARBITER, not
    exactly one primary, a member of the config outside the inventory group (or one of the group outside the
    config), a member whose version was not read, a downgrade, a jump of more than one major release (the
    supported path is named: each intermediate release's binaries, then its FCV, before the next; the manual:
    https://www.mongodb.com/docs/manual/release-notes/8.0-upgrade-replica-set/), FCV not at the running release
    (the new binaries need it, fcv_allows_binary), and a primary that cannot hand over unless allow_downtime
    (restart_order). The current release is the oldest binary, so a run that stopped half way plans the rest;
    members already on `target` are skipped.

    Returns {"current", "target", "fcv", "order" (restart_order's items, each with "skip": already on target),
    "steps" (what the run does, in order, each {"action": "skip" | "upgrade" | "stepdown" | "fcv" | "fcv_kept",
    "host", "reason"}), "raise_fcv" (whether the run ends by setting FCV to target)}.
    """
    problems = []
    for member in status_members:
        if member.get("stateStr") not in HEALTHY_STATES:
            problems.append("%s is %s" % (member.get("name"), member.get("stateStr")))
    hosts = sorted(m.get("name") for m in status_members)
    if inventory_members is not None:
        outside = sorted(set(hosts) - set(inventory_members))
        if outside:
            problems.append("%s %s in the set's config but not in the inventory group (the play cannot upgrade "
                            "%s)" % (", ".join(outside), "is" if len(outside) == 1 else "are",
                                     "it" if len(outside) == 1 else "them"))
        missing = sorted(set(inventory_members) - set(hosts))
        if missing:
            problems.append("%s of the inventory group %s not in the set's config" % (
                ", ".join(missing), "is" if len(missing) == 1 else "are"))
    unread = [h for h in hosts if not versions.get(h)]
    if unread:
        problems.append("no version read from %s" % ", ".join(unread))
    if problems:
        raise PlanError("%snot ready for a rolling upgrade: %s" % (
            "replica set %s is " % set_name if set_name else "the set is ", "; ".join(problems)))
    releases = dict((h, release_of(versions[h])) for h in hosts)
    unknown = sorted(h for h, r in releases.items() if r not in RELEASES)
    if unknown:
        raise PlanError("unknown releases: %s (known: %s)" % (
            ", ".join("%s %s" % (h, versions[h]) for h in unknown), ", ".join(RELEASES)))
    current = min(releases.values(), key=RELEASES.index)
    path = upgrade_path(current, target)
    if len(path) > 1:
        raise PlanError("%s to %s is more than one major release: MongoDB upgrades one major release at a time. "
                        "Supported path: %s; run the upgrade once per release (target %s first), and raise "
                        "featureCompatibilityVersion to each intermediate release (%s=true) before the next"
                        % (current, target, " -> ".join([current] + path), path[0], RAISE_FCV_VARIABLE))
    if path and fcv != current:
        raise PlanError("featureCompatibilityVersion is %s but the binaries run %s: set it to %s before upgrading "
                        "(the %s binaries need FCV %s)" % (fcv, current, current, target, current))
    if not path and raise_fcv and fcv != target and not fcv_allows_binary(fcv, target):
        raise PlanError("featureCompatibilityVersion %s cannot be raised to %s in one step" % (fcv, target))
    pending = [h for h in hosts if releases[h] != target]
    steps, order = [], []
    if pending:
        order = restart_order(merge_config(status_members, config_members), allow_downtime, set_name)
        if inventory_members:
            # The members before the primary in the order the play visits them (the inventory group's, serial 1):
            # any order of them is safe one at a time, and the prediction then says what the run will do.
            rank = dict((host, index) for index, host in enumerate(inventory_members))
            order = sorted(order[:-1], key=lambda item: rank.get(item["host"], len(rank))) + order[-1:]
    for item in order:
        item["skip"] = releases[item["host"]] == target
        if item["skip"]:
            steps.append({"action": "skip", "host": item["host"], "reason": "runs %s already" % versions[item["host"]]})
            continue
        if item["stepdown"]:
            steps.append({"action": "stepdown", "host": item["host"],
                          "reason": "the primary hands over to a caught-up electable secondary"})
        steps.append({"action": "upgrade", "host": item["host"], "reason": "%s -> %s%s" % (
            versions[item["host"]], target, ", in place: the set has no primary meanwhile (%s)"
            % ALLOW_DOWNTIME_VARIABLE if item["in_place"] else "")})
    if not pending:
        steps = [{"action": "skip", "host": h, "reason": "runs %s already" % versions[h]} for h in hosts]
    do_fcv = bool(raise_fcv) and fcv != target
    if do_fcv:
        steps.append({"action": "fcv", "host": None, "reason": "featureCompatibilityVersion %s -> %s (%s)" % (
            fcv, target, RAISE_FCV_VARIABLE)})
    else:
        steps.append({"action": "fcv_kept", "host": None, "reason": "featureCompatibilityVersion stays %s%s" % (
            fcv, "" if fcv == target else " (raise it with %s=true once the set runs well on %s)"
            % (RAISE_FCV_VARIABLE, target))})
    return {"current": current, "target": target, "fcv": fcv, "order": order, "steps": steps,
            "raise_fcv": do_fcv}


def set_upgrade_plan(status_members, config_members, versions, fcv, target, raise_fcv=False, allow_downtime=False,
                     set_name=None, inventory_members=None):
    """plan_set_upgrade as a dict for playbooks, with "error" (the refusal, None when planned)."""
    try:
        result = plan_set_upgrade(status_members, config_members, versions, fcv, target, raise_fcv,
                                  allow_downtime, set_name, inventory_members)
    except PlanError as err:
        return {"error": str(err), "order": [], "steps": [], "raise_fcv": False}
    result["error"] = None
    return result
