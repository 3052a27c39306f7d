"""Minimal edits of a settings.json keep every untouched byte, and fall back to a full render."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.install import hookcommand, jsonedit
from harness.install import settings as inst
from support.settings_data import OURS, dumps, settings_with_foreign_hooks


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
    change = inst.add_entry(before, OURS, hookcommand.ROUTER_MARK)
    new = jsonedit.render_change(original, before, change.settings)
    assert jsonedit.same_data(inst.parse_settings(new, "s"), change.settings)
    # The bytes before our group are the original's, byte for byte, up to the list's last item.
    head = original[: original.index(b"inject.sh")]
    assert new.startswith(head)
    assert new.startswith(b"\xef\xbb\xbf") == original.startswith(b"\xef\xbb\xbf")
    assert (b"\r\n" in new) == (b"\r\n" in original)
    # And removing our handler structurally gives back the original bytes exactly.
    action, data = inst.plan_uninstall(new, inst.parse_settings(new, "s"), hookcommand.ROUTER_MARK, None, [])
    assert (action, data) == ("write", original)


def test_update_edits_only_the_command_line():
    original = dumps(settings_with_foreign_hooks(), 2)
    before = inst.parse_settings(original, "s")
    installed = jsonedit.render_change(original, before, inst.add_entry(before, OURS, hookcommand.ROUTER_MARK).settings)
    current = inst.parse_settings(installed, "s")
    moved = "/moved/memory-router hook # memory-router install"
    updated = jsonedit.render_change(installed, current, inst.add_entry(current, moved, hookcommand.ROUTER_MARK).settings)
    old_lines, new_lines = installed.splitlines(), updated.splitlines()
    assert len(old_lines) == len(new_lines)
    assert [i for i, (a, b) in enumerate(zip(old_lines, new_lines)) if a != b] == \
        [next(i for i, line in enumerate(old_lines) if OURS.encode() in line)]


def test_render_change_falls_back_on_duplicate_keys():
    original = b'{"a": 1, "a": 2}'
    before = inst.parse_settings(original, "s")
    change = inst.add_entry(before, OURS, hookcommand.ROUTER_MARK)
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
    change = inst.add_entry(before, OURS, hookcommand.ROUTER_MARK)
    new = jsonedit.render_change(original, before, change.settings)
    assert jsonedit.same_data(inst.parse_settings(new, "s"), change.settings)
    action, data = inst.plan_uninstall(new, inst.parse_settings(new, "s"), hookcommand.ROUTER_MARK, None, [])
    assert action == "write"
    assert jsonedit.same_data(inst.parse_settings(data, "s"), before) or not before.get("hooks")
    emptied = isinstance(before.get("hooks"), dict) and (not before["hooks"])
    if not emptied:
        assert data == original
