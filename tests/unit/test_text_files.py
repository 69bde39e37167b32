"""dbops.clusters.text_files: several files in one module run, atomically, secrets kept out of the result."""
import grp
import json
import os
import pwd

import pytest

from ansible.module_utils.testing import patch_module_args
from ansible_collections.dbops.clusters.plugins.modules import text_files

ME = pwd.getpwuid(os.getuid()).pw_name
MY_GROUP = grp.getgrgid(os.getgid()).gr_name


def run(args, capsys, check_mode=False, diff=False):
    if check_mode:
        args = dict(args, _ansible_check_mode=True)
    if diff:
        args = dict(args, _ansible_diff=True)
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            text_files.main()
    return json.loads(capsys.readouterr().out)


def entry(path, content, mode="0644", **more):
    return dict(dict(path=str(path), content=content, mode=mode, owner=ME, group=MY_GROUP), **more)


def mode_of(path):
    return oct(path.stat().st_mode & 0o777)


def test_writes_every_file_then_changes_nothing(tmp_path, capsys):
    directory = tmp_path / "tls"
    args = {"directories": [dict(path=str(directory), mode="0750", owner=ME, group=MY_GROUP)],
            "files": [entry(directory / "ca.pem", "CA\n"), entry(directory / "key.pem", "KEY\n", "0600")]}
    first = run(args, capsys)
    assert first["changed"] and first["created_directories"] == [str(directory)]
    assert first["written"] == [str(directory / "ca.pem"), str(directory / "key.pem")]
    assert (directory / "key.pem").read_text() == "KEY\n"
    assert (mode_of(directory), mode_of(directory / "ca.pem"), mode_of(directory / "key.pem")) == (
        "0o750", "0o644", "0o600")
    second = run(args, capsys)
    assert not second["changed"], second
    assert sorted(p.name for p in directory.iterdir()) == ["ca.pem", "key.pem"], "a temporary file was left"


def test_a_wider_mode_is_narrowed_without_rewriting(tmp_path, capsys):
    path = tmp_path / "key.pem"
    path.write_text("KEY\n")
    path.chmod(0o644)
    result = run({"files": [entry(path, "KEY\n", "0600")]}, capsys)
    assert result["changed"] and result["attributes_changed"] == [str(path)] and result["written"] == []
    assert mode_of(path) == "0o600"


def test_check_mode_predicts_and_changes_nothing(tmp_path, capsys):
    directory = tmp_path / "new"
    old = tmp_path / "old.cnf"
    old.write_text("a = 1\n")
    result = run({"directories": [dict(path=str(directory), mode="0750", owner=ME, group=MY_GROUP)],
                  "files": [entry(directory / "x.cnf", "x\n"), entry(old, "a = 2\n")]}, capsys,
                 check_mode=True, diff=True)
    assert result["changed"] and result["written"] == [str(directory / "x.cnf"), str(old)]
    assert not directory.exists() and old.read_text() == "a = 1\n"
    assert [(d["before"], d["after"]) for d in result["diff"]] == [("", "x\n"), ("a = 1\n", "a = 2\n")]


def test_a_secret_stays_out_of_the_result_and_the_diff(tmp_path, capsys):
    path = tmp_path / "login.cnf"
    path.write_text("password = old-secret\n")
    result = run({"files": [entry(path, "password = new-secret\n", "0600", secret=True)]}, capsys, diff=True)
    text = json.dumps(result)
    assert result["written"] == [str(path)]
    assert "new-secret" not in text and "old-secret" not in text
    assert result["diff"][0]["after"] == text_files.SECRET_SHOWN_AS
    assert path.read_text() == "password = new-secret\n" and mode_of(path) == "0o600"


def test_create_only_keeps_an_existing_file(tmp_path, capsys):
    path = tmp_path / "admin.cnf"
    path.write_text("kept\n")
    path.chmod(0o640)
    result = run({"files": [entry(path, "new\n", "0600", create_only=True)]}, capsys)
    assert not result["changed"] and path.read_text() == "kept\n" and mode_of(path) == "0o640"
    fresh = tmp_path / "fresh.cnf"
    result = run({"files": [entry(fresh, "new\n", "0600", create_only=True)]}, capsys)
    assert result["written"] == [str(fresh)] and fresh.read_text() == "new\n"


@pytest.mark.parametrize("mode, words", [(420, "quote it"), ("644x", "not an octal"), ("rw-r--r--", "not an octal")])
def test_a_bad_mode_is_refused_naming_the_file_before_any_change(tmp_path, capsys, mode, words):
    good, bad = tmp_path / "a.cnf", tmp_path / "b.cnf"
    result = run({"files": [entry(good, "a\n"), entry(bad, "b\n", mode)]}, capsys)
    assert result["failed"] and words in result["msg"] and "files[1] (%s)" % bad in result["msg"]
    assert not good.exists(), "a file was written before the bad input was refused"


def test_an_unknown_owner_is_refused_in_a_run_and_a_warning_in_check_mode(tmp_path, capsys, monkeypatch):
    # Recorded at the call: where a module's warnings go depends on what the test process imported before
    # (once controller code is loaded, Ansible prints them instead of returning them).
    warned = []
    monkeypatch.setattr(text_files.AnsibleModule, "warn", lambda module, message, *a, **k: warned.append(message))
    path = tmp_path / "a.cnf"
    args = {"files": [entry(path, "a\n", owner="no-such-user-dbops")]}
    result = run(args, capsys)
    assert result["failed"] and "user no-such-user-dbops does not exist" in result["msg"] and not path.exists()
    predicted = run(args, capsys, check_mode=True)
    assert not predicted.get("failed") and predicted["written"] == [str(path)]
    assert any("no-such-user-dbops does not exist" in message for message in warned), warned


def test_a_missing_directory_is_named(tmp_path, capsys):
    path = tmp_path / "nowhere" / "a.cnf"
    result = run({"files": [entry(path, "a\n")]}, capsys)
    assert result["failed"] and "directory of %s does not exist" % path in result["msg"]


def test_relative_and_repeated_paths_are_refused(tmp_path, capsys):
    result = run({"files": [entry("rel.cnf", "a\n"), entry(tmp_path / "x", "1\n"), entry(tmp_path / "x", "2\n")]},
                 capsys)
    assert result["failed"] and "must be absolute" in result["msg"] and "given twice" in result["msg"]


def test_validate_checks_the_new_content_and_keeps_the_old_file_when_it_fails(tmp_path, capsys):
    path = tmp_path / "keepalived.conf"
    path.write_text("good old\n")
    refused = run({"files": [entry(path, "bad new\n", validate="grep -q good %s")]}, capsys)
    assert refused["failed"] and "was not replaced" in refused["msg"] and "grep -q good %s exited 1" in refused["msg"]
    assert path.read_text() == "good old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["keepalived.conf"], "a temporary file was left"
    accepted = run({"files": [entry(path, "good new\n", validate="grep -q good %s")]}, capsys)
    assert accepted["written"] == [str(path)] and path.read_text() == "good new\n"


def test_validate_needs_the_placeholder(tmp_path, capsys):
    result = run({"files": [entry(tmp_path / "a.conf", "a\n", validate="true")]}, capsys)
    assert result["failed"] and "validate must contain %s" in result["msg"]


def test_missing_parents_are_created_like_mkdir_p(tmp_path, capsys):
    tls = tmp_path / "etc" / "mongodb" / "tls"
    args = {"directories": [dict(path=str(tls), mode="0750", owner=ME, group=MY_GROUP)],
            "files": [entry(tls / "ca.pem", "CA\n")]}
    predicted = run(args, capsys, check_mode=True)
    assert predicted["created_directories"] == [str(tmp_path / "etc"), str(tmp_path / "etc" / "mongodb"), str(tls)]
    assert not (tmp_path / "etc").exists()
    result = run(args, capsys)
    assert result["created_directories"] == predicted["created_directories"]
    assert (mode_of(tmp_path / "etc"), mode_of(tls)) == ("0o755", "0o750") and (tls / "ca.pem").read_text() == "CA\n"


def test_a_file_that_is_not_utf8_is_replaced(tmp_path, capsys):
    path = tmp_path / "a.cnf"
    path.write_bytes(b"\xff\xfe old\n")
    result = run({"files": [entry(path, "new\n")]}, capsys, diff=True)
    assert result["written"] == [str(path)] and path.read_text() == "new\n"
