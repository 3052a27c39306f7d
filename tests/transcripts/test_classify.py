"""make_entry on any JSON object a transcript line can hold: never raises, always strings where
strings are promised (issue 11: a text block that is a number was an AttributeError)."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transcripts.classify import make_entry
from transcripts.entries import META, PROMPT

KEYS = ["type", "message", "content", "text", "attachment", "hookEvent", "hookName", "stdout", "uuid",
        "isSidechain", "agentId", "promptSource", "isMeta", "subtype", "data", "role", "name", "input", "id",
        "thinking", "command", "summary", "rendered"]
LEAF = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=12),
                 st.sampled_from(["user", "assistant", "attachment", "text", "tool_result", "tool_use", "thinking",
                                  "hook_success", "hook_additional_context", "UserPromptSubmit", "{\"a\": 1}"]))
VALUE = st.recursive(LEAF, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                   st.dictionaries(st.sampled_from(KEYS), inner, max_size=5)),
                     max_leaves=30)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["user", "assistant", "attachment", "system", "progress", "summary", None, 3]),
       st.dictionaries(st.sampled_from(KEYS), VALUE, max_size=6))
def test_make_entry_never_raises_and_keeps_its_types(entry_type, fields):
    obj = dict(fields, type=entry_type)
    entry = make_entry(json.loads(json.dumps(obj)), 7)
    assert entry.line == 7 and isinstance(entry.kind, str) and isinstance(entry.text, str)
    assert all(isinstance(text, str) for text in entry.texts)


@pytest.mark.parametrize("text,kind", [
    (5, PROMPT), (None, PROMPT), ({"nested": "x"}, PROMPT), (["<local-command-stdout>"], PROMPT),
    ("<local-command-stdout>x", "local_command"),
])
def test_a_text_block_that_is_not_a_string_is_a_prompt_without_text(text, kind):
    entry = make_entry({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": text}]}}, 1)
    assert entry.kind == kind and entry.kind != META
    assert entry.text == (text if isinstance(text, str) else "")


def test_hook_stdout_nested_too_deep_is_plain_text_not_a_crash():
    deep = '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"  # valid JSON, too deep for the parser
    entry = make_entry({"type": "attachment", "attachment": {
        "type": "hook_success", "hookEvent": "UserPromptSubmit", "hookName": "UserPromptSubmit",
        "content": "", "stdout": deep}}, 1)
    assert entry.kind == "injection" and entry.text == deep
