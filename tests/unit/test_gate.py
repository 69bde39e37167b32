# -*- coding: utf-8 -*-
"""The gate contract (plugins/module_utils/gate.py): when a gate polls again, when it stops, what it returns."""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.dbops.clusters.plugins.module_utils import gate


class Clock:
    """A clock that moves only when the gate sleeps (or a poll takes time)."""

    def __init__(self):
        self.now = 1000.0
        self.sleeps = []

    def time(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds


def polls(*answers, **kwargs):
    """A poll that gives the answers in turn (an exception instance is raised), each taking `cost` seconds."""
    clock, cost = kwargs["clock"], kwargs.get("cost", 0.0)
    queue = list(answers)

    def poll():
        clock.now += cost
        answer = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(answer, Exception):
            raise answer
        return answer
    return poll


def run(poll, clock, timeout=10, interval=1, **kwargs):
    return gate.wait(poll, timeout, interval, clock=clock.time, sleep=clock.sleep, **kwargs)


def test_a_gate_that_holds_at_once_polls_once_and_waits_nothing():
    clock = Clock()
    outcome = run(polls(("seen", []), clock=clock), clock)
    assert outcome == dict(ok=True, unmet=[], checks=1, waited_seconds=0.0, seen="seen", refused=None, gave_up=None)
    assert clock.sleeps == []


def test_unmet_conditions_are_polled_again_until_they_hold():
    clock = Clock()
    outcome = run(polls((1, ["not yet"]), (2, ["not yet"]), (3, []), clock=clock), clock)
    assert outcome["ok"] and outcome["checks"] == 3 and outcome["seen"] == 3 and outcome["unmet"] == []
    assert outcome["waited_seconds"] == 2.0 and clock.sleeps == [1, 1]


def test_at_the_timeout_the_last_poll_says_what_did_not_hold():
    clock = Clock()
    outcome = run(polls((1, ["a"]), (2, ["b", "c"]), clock=clock), clock, timeout=5, interval=2)
    assert not outcome["ok"] and outcome["unmet"] == ["b", "c"] and outcome["seen"] == 2
    # polls at 0, 2, 4 and at the deadline (5): the last sleep is cut to the deadline, not past it
    assert clock.sleeps == [2, 2, 1] and outcome["checks"] == 4 and outcome["waited_seconds"] == 5.0


def test_a_slow_poll_counts_against_the_timeout():
    clock = Clock()
    outcome = run(polls((1, ["slow"]), clock=clock, cost=4), clock, timeout=10, interval=1)
    assert not outcome["ok"] and outcome["waited_seconds"] <= 10 + 4 and outcome["checks"] == 3


def test_a_refusal_stops_the_gate_at_once_with_its_message():
    clock = Clock()
    outcome = run(polls((1, ["down"]), gate.Refused("access denied for dbops"), clock=clock), clock, timeout=300)
    assert outcome["refused"] == "access denied for dbops" and outcome["unmet"] == ["access denied for dbops"]
    assert not outcome["ok"] and outcome["checks"] == 2 and clock.sleeps == [1]


def test_once_looks_a_single_time_whatever_it_sees():
    clock = Clock()
    outcome = run(polls((1, ["not yet"]), clock=clock), clock, timeout=300, once=True)
    assert not outcome["ok"] and outcome["checks"] == 1 and clock.sleeps == []


def test_a_timeout_of_zero_looks_once():
    clock = Clock()
    outcome = run(polls((1, ["not yet"]), clock=clock), clock, timeout=0)
    assert outcome["checks"] == 1 and clock.sleeps == [] and not outcome["ok"]


def test_give_up_ends_the_wait_before_the_timeout_and_says_why():
    clock = Clock()
    seen_by_give_up = []

    def give_up(seen, unmet):
        seen_by_give_up.append((seen, unmet))
        return "mariadb.service is failed" if seen == 3 else None
    outcome = run(polls((1, ["x"]), (2, ["x"]), (3, ["x"]), (4, []), clock=clock), clock, timeout=300,
                  give_up=give_up)
    assert outcome["gave_up"] == "mariadb.service is failed" and outcome["checks"] == 3 and not outcome["ok"]
    assert seen_by_give_up == [(1, ["x"]), (2, ["x"]), (3, ["x"])]


@pytest.mark.parametrize("timeout, interval, problem", [
    (-1, 1, "timeout must be 0 or more"), (10, 0, "interval must be more than 0"), (10, -2, "interval"),
    (None, 1, "timeout"), (0, 0.5, None), (300, 2, None)])
def test_timing_options_are_checked(timeout, interval, problem):
    found = gate.invalid_options(timeout, interval)
    assert (found is None) if problem is None else (problem in found)


class Module:
    def __init__(self, check_mode=False):
        self.check_mode = check_mode
        self.exited = self.failed = None

    def exit_json(self, **result):
        self.exited = result

    def fail_json(self, **result):
        self.failed = result


def outcome_of(ok, unmet=(), refused=None, gave_up=None):
    return dict(ok=ok, unmet=list(unmet), checks=3, waited_seconds=2.5, seen=None, refused=refused, gave_up=gave_up)


def test_finish_returns_one_shape_with_the_module_s_own_fields():
    module = Module()
    gate.finish(module, outcome_of(True), "the group", dict(primary="gr1"))
    assert module.exited == dict(changed=False, ok=True, unmet=[], checks=3, waited_seconds=2.5, primary="gr1")


def test_finish_fails_an_unmet_gate_naming_subject_time_and_conditions():
    module = Module()
    gate.finish(module, outcome_of(False, ["gr2 is RECOVERING"]), "the group", {}, detail="It went: a -> b")
    assert module.failed["msg"] == ("the group is not healthy after 2.5 s (3 checks): gr2 is RECOVERING. "
                                    "It went: a -> b")
    assert module.failed["ok"] is False and module.failed["unmet"] == ["gr2 is RECOVERING"]


def test_in_check_mode_an_unmet_gate_only_reports_but_a_refusal_still_fails():
    module = Module(check_mode=True)
    gate.finish(module, outcome_of(False, ["not yet"]), "etcd", {})
    assert module.failed is None and module.exited["ok"] is False
    module = Module(check_mode=True)
    gate.finish(module, outcome_of(False, ["denied"], refused="denied"), "etcd", {})
    assert module.failed["msg"] == "etcd: denied (waiting cannot change that)"


def test_a_read_does_not_fail_on_health():
    module = Module()
    gate.finish(module, outcome_of(False, ["no leader"]), "the Patroni cluster", {}, fail_on_unmet=False)
    assert module.failed is None and module.exited["unmet"] == ["no leader"]


def test_give_up_is_named_in_the_failure():
    module = Module()
    gate.finish(module, outcome_of(False, ["not answering"], gave_up="mariadb.service is failed"), "the node", {})
    assert "will not become so (mariadb.service is failed)" in module.failed["msg"]


class ParamModule(Module):
    def __init__(self, timeout, interval, check_mode=False):
        super().__init__(check_mode)
        self.params = {"timeout": timeout, "interval": interval}

    def fail_json(self, **result):
        self.failed = result
        raise SystemExit(1)


def test_a_module_s_timing_options_out_of_range_fail_the_module_before_any_poll():
    polled = []
    module = ParamModule(timeout=-5, interval=1)
    with pytest.raises(SystemExit):
        gate.module_wait(module, lambda: polled.append(1) or (None, []))
    assert polled == [] and "timeout must be 0 or more" in module.failed["msg"]


def test_a_module_in_check_mode_looks_once():
    module = ParamModule(timeout=300, interval=1, check_mode=True)
    outcome = gate.module_wait(module, lambda: ("seen", ["not yet"]))
    assert outcome["checks"] == 1 and not outcome["ok"]
