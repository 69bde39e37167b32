"""The key rotation's plan (module_utils/mongodb_keyfile.py): two steps, resumable from any stop, refusals first."""
from ansible_collections.dbops.clusters.plugins.module_utils.mongodb_keyfile import (
    BOTH, NEW, both_keys_file, keys_of, rotation_plan, single_key_file)

OLD_KEY, NEW_KEY = "b2xkIGtleSBvZiB0aGUgc2V0", "bmV3IGtleSBvZiB0aGUgc2V0"
MEMBERS = ["m1", "m2", "m3"]
PENDING = "/etc/mongodb/keyfile changed (key rotation)"


def files(*contents):
    return dict(zip(MEMBERS, contents))


def test_keys_are_read_as_mongod_reads_them():
    assert keys_of("abc def\nghi\n") == ["abcdefghi"]
    assert keys_of("- abc\n- 'def'\n") == ["abc", "def"]
    assert keys_of("---\n- ab\n  cd\n- ef\n") == ["abcd", "ef"]
    assert keys_of(both_keys_file("a b", "c")) == ["ab", "c"]
    assert keys_of(single_key_file("x y")) == ["xy"]
    assert keys_of("") == [] and keys_of(None) == []


def test_a_set_on_the_old_key_takes_both_steps_writing_every_file():
    old = single_key_file(OLD_KEY)
    plan = rotation_plan(files(old, old, old), NEW_KEY, {})
    assert plan["refusals"] == [] and plan["steps"] == [BOTH, NEW]
    assert plan["write_both"] == MEMBERS and plan["write_new"] == MEMBERS
    assert keys_of(plan["both_content"]) == [OLD_KEY, NEW_KEY]
    assert plan["new_content"] == NEW_KEY + "\n"          # what the role writes: its checksum then matches
    assert OLD_KEY not in plan["why"] and NEW_KEY not in plan["why"]


def test_until_both_stops_after_the_first_step():
    old = single_key_file(OLD_KEY)
    plan = rotation_plan(files(old, old, old), NEW_KEY, {}, until=BOTH)
    assert plan["steps"] == [BOTH] and plan["write_new"] == []
    assert "a run without it finishes" in plan["why"]
    both = both_keys_file(OLD_KEY, NEW_KEY)
    plan = rotation_plan(files(both, both, both), NEW_KEY, {}, until=BOTH)
    assert plan["steps"] == [] and "runs both keys already" in plan["why"]


def test_a_first_step_stopped_before_its_restarts_ends_resumes_there():
    # every file written, m1 restarted (its pending reason cleared), m2 and m3 still run the old key alone
    both = both_keys_file(OLD_KEY, NEW_KEY)
    plan = rotation_plan(files(both, both, both), NEW_KEY, {"m2": [PENDING], "m3": [PENDING]})
    assert plan["steps"] == [BOTH, NEW] and plan["write_both"] == []
    assert "a rolling restart for m2, m3, which owe it" in plan["why"]
    # a file not written yet
    plan = rotation_plan(files(both, both, single_key_file(OLD_KEY)), NEW_KEY, {"m2": [PENDING]})
    assert plan["steps"] == [BOTH, NEW] and plan["write_both"] == ["m3"]


def test_a_second_step_stopped_halfway_finishes_it_alone():
    both, new = both_keys_file(OLD_KEY, NEW_KEY), single_key_file(NEW_KEY)
    # m1 restarted on the new key, m2 written but not restarted, m3 not written
    plan = rotation_plan(files(new, new, both), NEW_KEY, {"m2": [PENDING]})
    assert plan["steps"] == [NEW] and plan["write_new"] == ["m3"]
    # every file written, m3 not restarted yet: nothing to write, one more roll
    plan = rotation_plan(files(new, new, new), NEW_KEY, {"m3": [PENDING]})
    assert plan["steps"] == [NEW] and plan["write_new"] == [] and "m3, which owes it" in plan["why"]


def test_a_rotated_set_has_nothing_to_do():
    new = single_key_file(NEW_KEY)
    plan = rotation_plan(files(new, new, new), NEW_KEY, {"m1": ["mongod.conf changed"]})
    assert plan["steps"] == [] and "nothing to do" in plan["why"]


def test_a_member_put_on_the_new_key_alone_too_early_gets_both_keys_again():
    old, new = single_key_file(OLD_KEY), single_key_file(NEW_KEY)
    plan = rotation_plan(files(old, old, new), NEW_KEY, {"m3": [PENDING]})
    assert plan["steps"] == [BOTH, NEW] and plan["write_both"] == MEMBERS


def test_refusals_come_before_any_plan():
    old = single_key_file(OLD_KEY)
    assert "6 to 1024 base64" in rotation_plan(files(old, old, old), "short", {})["refusals"][0]
    assert "6 to 1024 base64" in rotation_plan(files(old, old, old), "not;base64!", {})["refusals"][0]
    assert "m2: no keyfile" in rotation_plan(files(old, None, old), NEW_KEY, {})["refusals"][0]
    # two different old keys: which one runs is unknown
    other = single_key_file("YW5vdGhlciBvbGQga2V5")
    refusal = rotation_plan(files(old, other, old), NEW_KEY, {})["refusals"][0]
    assert "2 different keys" in refusal and OLD_KEY not in refusal
    for plan in (rotation_plan(files(old, None, old), NEW_KEY, {}),):
        assert plan["steps"] == [] and plan["both_content"] == ""
