# -*- coding: utf-8 -*-
# Copyright: dbops.clusters contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The health gate every rolling operation stands on, once for every engine.

A gate polls until every condition holds or its timeout passes. Each engine's health module supplies one poll
(what it saw, and the conditions that did not hold, one sentence each) and this module does the rest, so every
gate answers in the same shape:

  ok              every condition held at the last poll
  unmet           the conditions that did not hold at the last poll (empty when ok)
  checks          how many polls were made
  waited_seconds  how long the gate waited

and follows the same rules:

- a server that does not answer yet (restarting, electing, receiving a state transfer) is an unmet condition,
  polled again until the timeout;
- a server that answered and refused (a wrong password, a missing privilege) stops the gate at once with
  Refused: waiting cannot change that, and a timeout of several minutes would hide the real error;
- in check mode the gate looks once and reports: a dry run must not stop a play that the real run would wait
  through, nor wait itself;
- a timeout of 0 also looks once; the module then fails if a condition does not hold, unless told it is a read.

Pure Python, unit tested in tests/unit/test_gate.py (the clock and the sleep are passed in).
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import time

# The options every gate takes besides its own (its timeout keeps its own default: how long a member may take
# differs by engine). Documented once in the doc fragment dbops.clusters.gate.
GATE_ARGUMENT_SPEC = dict(interval=dict(type="float", default=1))


class Refused(Exception):
    """The server answered and refused (the login, a privilege): stop waiting and fail with this message."""


def invalid_options(timeout, interval):
    """A sentence naming what is wrong with a gate's timing options, or None."""
    if timeout is None or timeout < 0:
        return "timeout must be 0 or more (seconds), got %s" % timeout
    if interval is None or interval <= 0:
        return "interval must be more than 0 (seconds), got %s" % interval
    return None


def wait(poll, timeout, interval, once=False, give_up=None, clock=time.time, sleep=time.sleep):
    """Poll until no condition is unmet, the timeout passes, or give_up says waiting is pointless.

    poll(): (seen, unmet): what the poll saw (any value, handed back as `seen`) and the unmet conditions as a
      list of sentences; it may raise Refused.
    once: look once (check mode, a read).
    give_up(seen, unmet): a sentence when waiting longer cannot help (a unit that failed to start), else None.
    Returns a dict with ok, unmet, checks, waited_seconds, seen, and `refused` / `gave_up` (a sentence or None).
    """
    started = clock()
    deadline = started + max(timeout, 0)
    checks, seen, unmet, refused, gave_up = 0, None, [], None, None
    while True:
        checks += 1
        try:
            seen, unmet = poll()
            unmet = list(unmet or [])
        except Refused as err:
            refused, unmet = str(err), [str(err)]
            break
        if not unmet or once:
            break
        gave_up = give_up(seen, unmet) if give_up else None
        now = clock()
        if gave_up or now >= deadline:
            break
        sleep(max(min(interval, deadline - now), 0))
    return dict(ok=not unmet, unmet=unmet, checks=checks, waited_seconds=round(clock() - started, 1), seen=seen,
                refused=refused, gave_up=gave_up)


def module_wait(module, poll, give_up=None, once=False):
    """wait() with a module's own timeout and interval (failing the module when they are out of range), looking
    once in check mode or when once is true."""
    problem = invalid_options(module.params["timeout"], module.params["interval"])
    if problem:
        module.fail_json(msg=problem)
    return wait(poll, module.params["timeout"], module.params["interval"], once=once or module.check_mode,
                give_up=give_up)


def failure_message(subject, outcome):
    """One sentence for a gate that did not pass: what, for how long, why."""
    if outcome["refused"]:
        return "%s: %s (waiting cannot change that)" % (subject, outcome["refused"])
    why = "; ".join(outcome["unmet"])
    if outcome["gave_up"]:
        return "%s is not healthy and will not become so (%s) after %s s: %s" % (
            subject, outcome["gave_up"], outcome["waited_seconds"], why)
    return "%s is not healthy after %s s (%d checks): %s" % (
        subject, outcome["waited_seconds"], outcome["checks"], why)


def finish(module, outcome, subject, fields, detail=None, fail_on_unmet=True):
    """Exit the module with the gate's shape plus its own fields. Fails on a refusal always, on unmet conditions
    when fail_on_unmet (never in check mode: there the gate only reports); detail is added to the failure's
    message (what the gate saw on the way, where the logs are)."""
    result = dict(fields, changed=False, ok=outcome["ok"], unmet=outcome["unmet"], checks=outcome["checks"],
                  waited_seconds=outcome["waited_seconds"])
    if outcome["refused"] or (not outcome["ok"] and fail_on_unmet and not module.check_mode):
        message = failure_message(subject, outcome)
        module.fail_json(msg="%s. %s" % (message, detail) if detail else message, **result)
    module.exit_json(**result)
