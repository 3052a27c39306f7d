"""The pure settings.json transforms: parse, add, remove, minimal-edit rendering, uninstall plans."""

import json
import shlex

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import doctor
from harness import hookcommand
from harness import jsonedit
from harness import install as inst
from harness.fileops import sha256_bytes
from router.errors import InputError

OURS = "/venv/bin/memory-router hook # memory-router install"
FOREIGN_HANDLER = {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/inject.sh", "timeout": 10}


def settings_with_foreign_hooks():
    return {
        "permissions": {"allow": ["Bash(ls:*)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "check.sh"}]}],
            "UserPromptSubmit": [{"hooks": [dict(FOREIGN_HANDLER)]}],
        },
        "model": "opus",
    }


def dumps(obj, indent=2):
    return (json.dumps(obj, indent=indent) + "\n").encode()


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
    change = inst.add_entry(original, OURS, inst.ROUTER_MARK)
    assert change.action == "added"
    assert list(change.settings) == ["model", "permissions", "hooks"]
    assert change.settings["hooks"] == {"UserPromptSubmit": [{"hooks": [hookcommand.handler(OURS)]}]}
    assert original == {"model": "opus", "permissions": {"allow": []}}  # pure: input untouched


def test_add_keeps_foreign_hooks_and_adds_own_group():
    original = settings_with_foreign_hooks()
    change = inst.add_entry(original, OURS, inst.ROUTER_MARK)
    groups = change.settings["hooks"]["UserPromptSubmit"]
    assert groups[0] == {"hooks": [FOREIGN_HANDLER]}
    assert groups[1] == {"hooks": [{"type": "command", "command": OURS, "timeout": 5}]}
    assert change.settings["hooks"]["PreToolUse"] == original["hooks"]["PreToolUse"]
    assert list(change.settings) == list(original)
    assert change.detail == "hooks.UserPromptSubmit[1].hooks[0]"


def test_second_add_is_unchanged():
    first = inst.add_entry(settings_with_foreign_hooks(), OURS, inst.ROUTER_MARK)
    second = inst.add_entry(first.settings, OURS, inst.ROUTER_MARK)
    assert second.action == "unchanged"
    assert second.settings is first.settings


def test_add_with_another_command_updates_in_place():
    first = inst.add_entry(settings_with_foreign_hooks(), OURS, inst.ROUTER_MARK).settings
    moved = "/new/venv/bin/memory-router hook --clusters /c.md # memory-router install"
    change = inst.add_entry(first, moved, inst.ROUTER_MARK)
    assert change.action == "updated"
    groups = change.settings["hooks"]["UserPromptSubmit"]
    assert len(groups) == 2 and groups[1]["hooks"][0]["command"] == moved


def test_duplicate_own_handlers_collapse_to_one_on_update():
    doubled = {"hooks": {"UserPromptSubmit": [{"hooks": [hookcommand.handler(OURS)]}, {"hooks": [hookcommand.handler(OURS)]}]}}
    change = inst.add_entry(doubled, OURS, inst.ROUTER_MARK)
    assert change.action == "updated"
    assert change.settings == {"hooks": {"UserPromptSubmit": [{"hooks": [hookcommand.handler(OURS)]}]}}


def test_hand_written_router_hook_is_a_conflict():
    manual = {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "memory-router hook"}]}]}}
    change = inst.add_entry(manual, OURS, inst.ROUTER_MARK, conflicts=hookcommand.runs_router_hook)
    assert change.action == "conflict"
    assert "hooks.UserPromptSubmit[0].hooks[0]" in change.detail
    assert change.settings is manual


def test_remove_takes_exactly_our_handler():
    shared_group = settings_with_foreign_hooks()
    shared_group["hooks"]["UserPromptSubmit"][0]["hooks"].append(hookcommand.handler(OURS))
    change = inst.remove_entries(shared_group, inst.ROUTER_MARK)
    assert change.action == "removed"
    assert change.settings == settings_with_foreign_hooks()


def test_remove_drops_only_what_it_emptied():
    added = inst.add_entry({"model": "x"}, OURS, inst.ROUTER_MARK).settings
    assert inst.remove_entries(added, inst.ROUTER_MARK).settings == {"model": "x"}
    other_event = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "s.sh"}]}]}}
    added = inst.add_entry(other_event, OURS, inst.ROUTER_MARK).settings
    assert inst.remove_entries(added, inst.ROUTER_MARK).settings == other_event


def test_remove_when_absent():
    change = inst.remove_entries(settings_with_foreign_hooks(), inst.ROUTER_MARK)
    assert change.action == "absent"


def test_sentinel_and_router_marks_do_not_collide():
    both = inst.add_entry({}, OURS, inst.ROUTER_MARK).settings
    sentinel = "/py -P -m harness.sentinel --flag /f --text T # memory-router sentinel install"
    both = inst.add_entry(both, sentinel, inst.SENTINEL_MARK).settings
    assert [e.command for e in inst.find_entries(both, inst.ROUTER_MARK)] == [OURS]
    assert [e.command for e in inst.find_entries(both, inst.SENTINEL_MARK)] == [sentinel]
    only_router = inst.remove_entries(both, inst.SENTINEL_MARK).settings
    assert only_router == inst.add_entry({}, OURS, inst.ROUTER_MARK).settings


@pytest.mark.parametrize("command, expected", [
    ("/venv/bin/memory-router hook", True),
    ("'/a b/memory-router' hook --clusters /c.md # memory-router install", True),
    ("C:/Users/me/venv/Scripts/memory-router.exe hook", True),
    ("/usr/bin/python3 -P -m router hook", True),
    ("/usr/bin/python3 -P -m harness hook", True),
    ("/usr/bin/python3 -m harness slim", False),
    ("memory-router route 'x'", False),
    ("my-memory-router-wrapper hook", False),
    ("echo memory-router hook", False),
    ('cd "$CLAUDE_PROJECT_DIR" && memory-router hook', True),
    ("env MEMORY_ROUTER_LOG=/tmp/l memory-router hook --clusters c.md", True),
    ("/usr/bin/python3 -m routerx hook", False),
    ("/py -m harness.sentinel --flag f --text t", False),
    ("'unbalanced", False),
])
def test_runs_router_hook(command, expected):
    assert hookcommand.runs_router_hook(command) is expected


# --------------------------------------------------------------------------- commands


def test_router_command_survives_spaces_and_quotes():
    command = hookcommand.router_hook_command(["/home/o'neil/my venv/bin/memory-router"], clusters="/data/it's here.md",
                                       windows=False)
    assert command.endswith(" # memory-router install")
    assert shlex.split(command, comments=True) == [
        "/home/o'neil/my venv/bin/memory-router", "hook", "--clusters", "/data/it's here.md"]
    assert hookcommand.command_option(command, "clusters") == "/data/it's here.md"
    assert hookcommand.runs_router_hook(command) and hookcommand.has_mark(command, inst.ROUTER_MARK)


def test_windows_paths_get_forward_slashes():
    command = hookcommand.router_hook_command([r"C:\Users\me\venv\Scripts\memory-router.exe"], windows=True)
    assert command.startswith("C:/Users/me/venv/Scripts/memory-router.exe hook")


def test_sentinel_command_runs_module_with_safe_path():
    command = hookcommand.sentinel_hook_command("/v/bin/python", "/p/.claude/memory-router/f.fired", "S-1", windows=False)
    assert shlex.split(command, comments=True) == [
        "/v/bin/python", "-P", "-m", "harness.sentinel", "--flag", "/p/.claude/memory-router/f.fired", "--text", "S-1"]
    assert hookcommand.has_mark(command, inst.SENTINEL_MARK) and not hookcommand.has_mark(command, inst.ROUTER_MARK)


def test_user_settings_path_honours_claude_config_dir(tmp_path):
    assert inst.user_settings_path({"CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")}) == str(tmp_path / "cfg" / "settings.json")
    assert inst.user_settings_path({"HOME": str(tmp_path)}) == str(tmp_path / ".claude" / "settings.json")


# --------------------------------------------------------------------------- minimal edits


FORMATS = {
    "two-space": lambda o: dumps(o, 2),
    "four-space-no-newline": lambda o: json.dumps(o, indent=4).encode(),
    "tabs": lambda o: dumps(o, "\t"),
    "one-line": lambda o: json.dumps(o).encode(),
    "crlf": lambda o: dumps(o, 2).replace(b"\n", b"\r\n"),
    "bom": lambda o: b"\xef\xbb\xbf" + dumps(o, 2),
    "hand-mixed": lambda o: b'{\n    "permissions": {"allow": ["Bash(ls:*)"]},\n    "hooks": {\n'
                            b'        "PreToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", '
                            b'"command": "check.sh"}]}],\n        "UserPromptSubmit": [{"hooks": [{"type": "command", '
                            b'"command": "\\"$CLAUDE_PROJECT_DIR\\"/.claude/hooks/inject.sh", "timeout": 10}]}]\n'
                            b'    },\n    "model": "opus"\n}\n',
}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_install_edit_keeps_every_untouched_line(fmt):
    original = FORMATS[fmt](settings_with_foreign_hooks())
    before = inst.parse_settings(original, "s")
    change = inst.add_entry(before, OURS, inst.ROUTER_MARK)
    new = jsonedit.render_change(original, before, change.settings)
    assert jsonedit.same_data(inst.parse_settings(new, "s"), change.settings)
    # The bytes before our group are the original's, byte for byte, up to the list's last item.
    head = original[: original.index(b"inject.sh")]
    assert new.startswith(head)
    assert new.startswith(b"\xef\xbb\xbf") == original.startswith(b"\xef\xbb\xbf")
    assert (b"\r\n" in new) == (b"\r\n" in original)
    # And removing our handler structurally gives back the original bytes exactly.
    action, data = inst.plan_uninstall(new, inst.parse_settings(new, "s"), inst.ROUTER_MARK, None, [])
    assert (action, data) == ("write", original)


def test_update_edits_only_the_command_line():
    original = dumps(settings_with_foreign_hooks(), 2)
    before = inst.parse_settings(original, "s")
    installed = jsonedit.render_change(original, before, inst.add_entry(before, OURS, inst.ROUTER_MARK).settings)
    current = inst.parse_settings(installed, "s")
    moved = "/moved/memory-router hook # memory-router install"
    updated = jsonedit.render_change(installed, current, inst.add_entry(current, moved, inst.ROUTER_MARK).settings)
    old_lines, new_lines = installed.splitlines(), updated.splitlines()
    assert len(old_lines) == len(new_lines)
    assert [i for i, (a, b) in enumerate(zip(old_lines, new_lines)) if a != b] == \
        [next(i for i, line in enumerate(old_lines) if OURS.encode() in line)]


def test_render_change_falls_back_on_duplicate_keys():
    original = b'{"a": 1, "a": 2}'
    before = inst.parse_settings(original, "s")
    change = inst.add_entry(before, OURS, inst.ROUTER_MARK)
    new = jsonedit.render_change(original, before, change.settings)
    assert json.loads(new) == change.settings


json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.text(max_size=8))
json_values = st.recursive(json_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)), max_leaves=8)
handlers = st.fixed_dictionaries({"type": st.just("command"), "command": st.text(min_size=1, max_size=20)},
                                 optional={"timeout": st.integers(1, 60)})
groups = st.fixed_dictionaries({"hooks": st.lists(handlers, max_size=2)}, optional={"matcher": st.text(max_size=5)})


@st.composite
def settings_objects(draw):
    obj = draw(st.dictionaries(st.text(max_size=8).filter(lambda k: k != "hooks"), json_values, max_size=4))
    if draw(st.booleans()):
        events = draw(st.dictionaries(st.sampled_from(["PreToolUse", "Stop", "SessionStart"]),
                                      st.lists(groups, max_size=2), max_size=2))
        if draw(st.booleans()):
            events["UserPromptSubmit"] = draw(st.lists(groups, min_size=1, max_size=2))
        obj["hooks"] = events
    return obj


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(obj=settings_objects(), indent=st.sampled_from([None, 2, 4, "\t"]), crlf=st.booleans())
def test_install_then_structural_uninstall_round_trips(obj, indent, crlf):
    original = json.dumps(obj, indent=indent).encode()
    if crlf:
        original = original.replace(b"\n", b"\r\n")
    before = inst.parse_settings(original, "s")
    change = inst.add_entry(before, OURS, inst.ROUTER_MARK)
    new = jsonedit.render_change(original, before, change.settings)
    assert jsonedit.same_data(inst.parse_settings(new, "s"), change.settings)
    action, data = inst.plan_uninstall(new, inst.parse_settings(new, "s"), inst.ROUTER_MARK, None, [])
    assert action == "write"
    assert jsonedit.same_data(inst.parse_settings(data, "s"), before) or not before.get("hooks")
    emptied = isinstance(before.get("hooks"), dict) and (not before["hooks"])
    if not emptied:
        assert data == original


# --------------------------------------------------------------------------- uninstall plans


def installed_bytes(original):
    before = inst.parse_settings(original, "s") if original is not None else {}
    change = inst.add_entry(before, OURS, inst.ROUTER_MARK)
    if original is None:
        return jsonedit.render_settings(change.settings)
    return jsonedit.render_change(original, before, change.settings)


def test_plan_restores_backup_bytes_when_file_is_what_install_wrote():
    # An empty UserPromptSubmit list cannot come back structurally; the record brings it back.
    original = b'{\n  "hooks": {"UserPromptSubmit": []},\n  "z": 1\n}\n'
    new = installed_bytes(original)
    record = inst.new_record("/p/s.json", "router", original, new, "/b/s-1.json", OURS)
    action, data = inst.plan_uninstall(new, inst.parse_settings(new, "s"), inst.ROUTER_MARK, record,
                                       [("/b/s-1.json", original)])
    assert (action, data) == ("restore", original)


def test_plan_deletes_a_file_install_created_and_nobody_changed():
    new = installed_bytes(None)
    record = inst.new_record("/p/s.json", "router", None, new, None, OURS)
    assert inst.plan_uninstall(new, inst.parse_settings(new, "s"), inst.ROUTER_MARK, record, []) == ("delete", None)


def test_plan_after_a_hand_edit_keeps_the_edit():
    original = dumps(settings_with_foreign_hooks())
    new = installed_bytes(original)
    record = inst.new_record("/p/s.json", "router", original, new, "/b/s-1.json", OURS)
    edited = new.replace(b'"model": "opus"', b'"model": "sonnet"')
    action, data = inst.plan_uninstall(edited, inst.parse_settings(edited, "s"), inst.ROUTER_MARK, record,
                                       [("/b/s-1.json", original)])
    assert action == "write"
    assert data == original.replace(b'"model": "opus"', b'"model": "sonnet"')


def test_plan_restores_a_backup_whose_data_matches():
    original = b'{"hooks":{"UserPromptSubmit":[]}}'
    new = installed_bytes(original)
    reformatted = dumps(inst.parse_settings(new, "s"), 8)  # someone re-indented the whole file
    action, data = inst.plan_uninstall(reformatted, inst.parse_settings(reformatted, "s"), inst.ROUTER_MARK,
                                       None, [("/b/old.json", original)])
    # Structural removal drops the emptied list, so it matches no backup: written structurally.
    assert action == "write" and json.loads(data) == {}
    same = dumps({"x": 1})
    new = installed_bytes(same)
    reformatted = dumps(inst.parse_settings(new, "s"), 8)
    assert inst.plan_uninstall(reformatted, inst.parse_settings(reformatted, "s"), inst.ROUTER_MARK, None,
                               [("/b/old.json", b"not json"), ("/b/x.json", same)]) == ("restore", same)


def test_plan_when_not_installed():
    data = dumps(settings_with_foreign_hooks())
    assert inst.plan_uninstall(data, inst.parse_settings(data, "s"), inst.ROUTER_MARK, None, []) == ("absent", None)


def test_record_notes_hashes():
    record = inst.new_record("s.json", "router", b"a", b"b", "bk", "cmd", {"text": "T"})
    assert record["original_sha256"] == sha256_bytes(b"a") and record["written_sha256"] == sha256_bytes(b"b")
    assert record["text"] == "T" and record["original_existed"] is True


# --------------------------------------------------------------------------- hook output


@pytest.mark.parametrize("code, stdout, ok, phrase", [
    (0, b"", True, "printed nothing"),
    (0, b'{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "x"}}', True,
     "additionalContext (1 chars)"),
    (0, b'{"additionalContext": "x"}', False, "ignores it"),
    (0, b'{"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "x"}}', False, "ignores it"),
    (0, b"hello", False, "plain text"),
    (0, b"{not json", False, "invalid JSON"),
    (2, b"", False, "erase the user's prompt"),
    (127, b"", False, "command not found"),
    (1, b"", False, "exited 1"),
])
def test_judge_hook_output(code, stdout, ok, phrase):
    result, message = doctor.judge_hook_output(code, stdout, b"boom\n")
    assert result is ok
    assert phrase in message
