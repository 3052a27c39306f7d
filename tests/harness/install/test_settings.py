"""The pure settings.json transforms: parse, add, remove, minimal-edit rendering, uninstall plans."""

import json

import pytest

from harness.install import hookcommand
from harness.install import jsonedit
from harness.install import settings as inst
from harness.fileops import sha256_bytes
from router.errors import InputError
from harness import project
from support.settings_data import FOREIGN_HANDLER, OURS, dumps, settings_with_foreign_hooks


# --------------------------------------------------------------------------- parsing


@pytest.mark.parametrize("data, line, column", [
    (b'{\n  "hooks": {\n    "UserPromptSubmit": [\n  }\n}\n', 4, 3),
    (b'{"a": 1,}', 1, 9),
    (b'{\n  "a": tru\n}', 2, 8),
])
def test_invalid_json_names_file_line_and_column(data, line, column):
    with pytest.raises(InputError) as info:
        inst.parse_settings(data, "/p/.claude/settings.json")
    assert info.value.exit_code == 2
    assert str(info.value).startswith(f"/p/.claude/settings.json:{line}:{column}: invalid JSON")
    assert "nothing was changed" in str(info.value)


@pytest.mark.parametrize("data, message", [
    (b"[1, 2]", "must be a JSON object"),
    (b'{"hooks": []}', '"hooks" must be an object'),
    (b'{"hooks": {"UserPromptSubmit": {"hooks": []}}}', "must be a list of matcher groups"),
    (b'{"hooks": {"UserPromptSubmit": ["x"]}}', 'must be an object with a "hooks" list'),
    (b'{"hooks": {"UserPromptSubmit": [{"hooks": "cmd"}]}}', 'must be an object with a "hooks" list'),
    (b'{"a": "\xff"}', "not valid UTF-8"),
])
def test_misshapen_settings_are_refused(data, message):
    with pytest.raises(InputError, match=message):
        inst.parse_settings(data, "settings.json")


@pytest.mark.parametrize("data", [b"", b"  \n", b"\xef\xbb\xbf"])
def test_empty_file_reads_as_empty_object(data):
    assert inst.parse_settings(data, "s.json") == {}


@pytest.mark.parametrize("data, style", [
    (b'{\n  "a": 1\n}\n', jsonedit.JsonStyle(indent=2)),
    (b'{\n    "a": 1\n}', jsonedit.JsonStyle(indent=4, trailing_newline=False)),
    (b'{\n\t"a": 1\n}\n', jsonedit.JsonStyle(indent="\t")),
    (b'{"a": 1}\n', jsonedit.JsonStyle(indent=None)),
    (b'{\r\n  "a": 1\r\n}\r\n', jsonedit.JsonStyle(indent=2, newline="\r\n")),
    (b'\xef\xbb\xbf{\n  "a": 1\n}\n', jsonedit.JsonStyle(indent=2, bom=True)),
    (b'{\n  "a": "\\u00e9"\n}\n', jsonedit.JsonStyle(indent=2, ascii_only=True)),
])
def test_detect_style(data, style):
    assert jsonedit.detect_style(data) == style


# --------------------------------------------------------------------------- add / remove


def test_add_to_settings_without_hooks_appends_hooks_last_and_keeps_key_order():
    original = {"model": "opus", "permissions": {"allow": []}}
    change = inst.add_entry(original, OURS, hookcommand.ROUTER_MARK)
    assert change.action == "added"
    assert list(change.settings) == ["model", "permissions", "hooks"]
    assert change.settings["hooks"] == {"UserPromptSubmit": [{"hooks": [hookcommand.handler(OURS)]}]}
    assert original == {"model": "opus", "permissions": {"allow": []}}  # pure: input untouched


def test_add_keeps_foreign_hooks_and_adds_own_group():
    original = settings_with_foreign_hooks()
    change = inst.add_entry(original, OURS, hookcommand.ROUTER_MARK)
    groups = change.settings["hooks"]["UserPromptSubmit"]
    assert groups[0] == {"hooks": [FOREIGN_HANDLER]}
    assert groups[1] == {"hooks": [{"type": "command", "command": OURS, "timeout": 5}]}
    assert change.settings["hooks"]["PreToolUse"] == original["hooks"]["PreToolUse"]
    assert list(change.settings) == list(original)
    assert change.detail == "hooks.UserPromptSubmit[1].hooks[0]"


def test_second_add_is_unchanged():
    first = inst.add_entry(settings_with_foreign_hooks(), OURS, hookcommand.ROUTER_MARK)
    second = inst.add_entry(first.settings, OURS, hookcommand.ROUTER_MARK)
    assert second.action == "unchanged"
    assert second.settings is first.settings


def test_add_with_another_command_updates_in_place():
    first = inst.add_entry(settings_with_foreign_hooks(), OURS, hookcommand.ROUTER_MARK).settings
    moved = "/new/venv/bin/memory-router hook --clusters /c.md # memory-router install"
    change = inst.add_entry(first, moved, hookcommand.ROUTER_MARK)
    assert change.action == "updated"
    groups = change.settings["hooks"]["UserPromptSubmit"]
    assert len(groups) == 2 and groups[1]["hooks"][0]["command"] == moved


def test_duplicate_own_handlers_collapse_to_one_on_update():
    doubled = {"hooks": {"UserPromptSubmit": [{"hooks": [hookcommand.handler(OURS)]}, {"hooks": [hookcommand.handler(OURS)]}]}}
    change = inst.add_entry(doubled, OURS, hookcommand.ROUTER_MARK)
    assert change.action == "updated"
    assert change.settings == {"hooks": {"UserPromptSubmit": [{"hooks": [hookcommand.handler(OURS)]}]}}


def test_hand_written_router_hook_is_a_conflict():
    manual = {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "memory-router hook"}]}]}}
    change = inst.add_entry(manual, OURS, hookcommand.ROUTER_MARK, conflicts=hookcommand.runs_router_hook)
    assert change.action == "conflict"
    assert "hooks.UserPromptSubmit[0].hooks[0]" in change.detail
    assert change.settings is manual


def test_remove_takes_exactly_our_handler():
    shared_group = settings_with_foreign_hooks()
    shared_group["hooks"]["UserPromptSubmit"][0]["hooks"].append(hookcommand.handler(OURS))
    change = inst.remove_entries(shared_group, hookcommand.ROUTER_MARK)
    assert change.action == "removed"
    assert change.settings == settings_with_foreign_hooks()


def test_remove_drops_only_what_it_emptied():
    added = inst.add_entry({"model": "x"}, OURS, hookcommand.ROUTER_MARK).settings
    assert inst.remove_entries(added, hookcommand.ROUTER_MARK).settings == {"model": "x"}
    other_event = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "s.sh"}]}]}}
    added = inst.add_entry(other_event, OURS, hookcommand.ROUTER_MARK).settings
    assert inst.remove_entries(added, hookcommand.ROUTER_MARK).settings == other_event


def test_remove_when_absent():
    change = inst.remove_entries(settings_with_foreign_hooks(), hookcommand.ROUTER_MARK)
    assert change.action == "absent"


def test_sentinel_and_router_marks_do_not_collide():
    both = inst.add_entry({}, OURS, hookcommand.ROUTER_MARK).settings
    sentinel = "/py -P -m harness.sentinel --flag /f --text T # memory-router sentinel install"
    both = inst.add_entry(both, sentinel, hookcommand.SENTINEL_MARK).settings
    assert [e.command for e in inst.find_entries(both, hookcommand.ROUTER_MARK)] == [OURS]
    assert [e.command for e in inst.find_entries(both, hookcommand.SENTINEL_MARK)] == [sentinel]
    only_router = inst.remove_entries(both, hookcommand.SENTINEL_MARK).settings
    assert only_router == inst.add_entry({}, OURS, hookcommand.ROUTER_MARK).settings


# --------------------------------------------------------------------------- locations


def test_user_settings_path_honours_claude_config_dir(tmp_path):
    assert project.user_settings_path({"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")}) == str(tmp_path / "cfg" / "settings.json")
    assert project.user_settings_path({"HOME": str(tmp_path)}) == str(tmp_path / ".claude" / "settings.json")


# --------------------------------------------------------------------------- uninstall plans


def installed_bytes(original):
    before = inst.parse_settings(original, "s") if original is not None else {}
    change = inst.add_entry(before, OURS, hookcommand.ROUTER_MARK)
    if original is None:
        return jsonedit.render_settings(change.settings)
    return jsonedit.render_change(original, before, change.settings)


def test_plan_restores_backup_bytes_when_file_is_what_install_wrote():
    # An empty UserPromptSubmit list cannot come back structurally; the record brings it back.
    original = b'{\n  "hooks": {"UserPromptSubmit": []},\n  "z": 1\n}\n'
    new = installed_bytes(original)
    record = inst.new_record("/p/s.json", "router", original, new, "/b/s-1.json", OURS)
    action, data = inst.plan_uninstall(new, inst.parse_settings(new, "s"), hookcommand.ROUTER_MARK, record,
                                       [("/b/s-1.json", original)])
    assert (action, data) == ("restore", original)


def test_plan_deletes_a_file_install_created_and_nobody_changed():
    new = installed_bytes(None)
    record = inst.new_record("/p/s.json", "router", None, new, None, OURS)
    assert inst.plan_uninstall(new, inst.parse_settings(new, "s"), hookcommand.ROUTER_MARK, record, []) == ("delete", None)


def test_plan_after_a_hand_edit_keeps_the_edit():
    original = dumps(settings_with_foreign_hooks())
    new = installed_bytes(original)
    record = inst.new_record("/p/s.json", "router", original, new, "/b/s-1.json", OURS)
    edited = new.replace(b'"model": "opus"', b'"model": "sonnet"')
    action, data = inst.plan_uninstall(edited, inst.parse_settings(edited, "s"), hookcommand.ROUTER_MARK, record,
                                       [("/b/s-1.json", original)])
    assert action == "write"
    assert data == original.replace(b'"model": "opus"', b'"model": "sonnet"')


def test_plan_restores_a_backup_whose_data_matches():
    original = b'{"hooks":{"UserPromptSubmit":[]}}'
    new = installed_bytes(original)
    reformatted = dumps(inst.parse_settings(new, "s"), 8)  # someone re-indented the whole file
    action, data = inst.plan_uninstall(reformatted, inst.parse_settings(reformatted, "s"), hookcommand.ROUTER_MARK,
                                       None, [("/b/old.json", original)])
    # Structural removal drops the emptied list, so it matches no backup: written structurally.
    assert action == "write" and json.loads(data) == {}
    same = dumps({"x": 1})
    new = installed_bytes(same)
    reformatted = dumps(inst.parse_settings(new, "s"), 8)
    assert inst.plan_uninstall(reformatted, inst.parse_settings(reformatted, "s"), hookcommand.ROUTER_MARK, None,
                               [("/b/old.json", b"not json"), ("/b/x.json", same)]) == ("restore", same)


def test_plan_when_not_installed():
    data = dumps(settings_with_foreign_hooks())
    assert inst.plan_uninstall(data, inst.parse_settings(data, "s"), hookcommand.ROUTER_MARK, None, []) == ("absent", None)


def test_record_notes_hashes():
    record = inst.new_record("s.json", "router", b"a", b"b", "bk", "cmd", {"text": "T"})
    assert record["original_sha256"] == sha256_bytes(b"a") and record["written_sha256"] == sha256_bytes(b"b")
    assert record["text"] == "T" and record["original_existed"] is True


# --------------------------------------------------------------------------- the SessionStart handler (issue 13)

SESSION = "/venv/bin/memory-router session-start # memory-router install"


def test_add_to_another_event_with_a_matcher_and_remove_both():
    first = inst.add_entry(settings_with_foreign_hooks(), OURS, hookcommand.ROUTER_MARK)
    second = inst.add_entry(first.settings, SESSION, hookcommand.ROUTER_MARK, event=inst.SESSION_EVENT,
                            matcher=inst.SESSION_MATCHER)
    assert second.action == "added" and second.detail == "hooks.SessionStart[0].hooks[0]"
    assert second.settings["hooks"]["SessionStart"] == [{"matcher": "compact|clear",
                                                         "hooks": [hookcommand.handler(SESSION)]}]
    both = inst.combine(first, second)
    assert both.action == "added" and both.settings is second.settings
    # each event keeps its own handler: our UserPromptSubmit one is not "updated" into SessionStart's
    assert [e.command for e in inst.find_entries(both.settings, hookcommand.ROUTER_MARK)] == [OURS]
    removed = inst.remove_entries(both.settings, hookcommand.ROUTER_MARK)
    assert removed.settings == settings_with_foreign_hooks()
    assert "hooks.SessionStart[0].hooks[0]" in removed.detail


@pytest.mark.parametrize("actions, expected", [
    (("unchanged", "unchanged"), "unchanged"),
    (("unchanged", "added"), "added"),
    (("updated", "unchanged"), "updated"),
    (("updated", "added"), "added"),
    (("conflict", "added"), "conflict"),
])
def test_combine(actions, expected):
    first, second = (inst.Change({}, action, f"d{i}") for i, action in enumerate(actions))
    assert inst.combine(first, second).action == expected


def test_a_misshapen_session_start_list_is_refused():
    with pytest.raises(InputError, match="hooks.SessionStart"):
        inst.parse_settings(b'{"hooks": {"SessionStart": {"hooks": []}}}', "s.json")


@pytest.mark.parametrize("settings", [{"hooks": None}, {"hooks": {"UserPromptSubmit": None}}, {"hooks": {}}])
def test_add_treats_null_hooks_as_none(settings):
    # "hooks": null was an AttributeError (issue 11 fuzzing); null means no hooks, as a missing key does.
    change = inst.add_entry(settings, "memory-router hook # memory-router", hookcommand.ROUTER_MARK)
    assert change.action == "added"
    assert change.settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"].startswith("memory-router hook")


@pytest.mark.parametrize("text,line,column,word", [
    ('{\n  "a": NaN\n}', 2, 8, "NaN"),
    ('{"hooks": {"UserPromptSubmit": Infinity}}', 1, 32, "Infinity"),
    ('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", 1, 406, "nested more than"),
])
def test_nan_infinity_and_deep_nesting_are_refused_with_line_and_column(text, line, column, word):
    with pytest.raises(InputError) as info:
        inst.parse_settings(text.encode(), "settings.json")
    assert (info.value.line, info.value.column) == (line, column) and word in info.value.message
