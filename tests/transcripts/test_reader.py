"""The streaming reader: every real fixture parses; lines are classified as the formats doc says;
bad input (truncated tail, invalid UTF-8, blank lines, non-objects, unknown types) is counted and
never fatal; a file that is not a transcript at all is an InputError."""

import json
from collections import Counter, defaultdict

import pytest

from router.errors import InputError
from support.fixture_transcripts import (
    SCENARIOS, VERSIONS, all_files, find_line, is_injection_attachment, real_injection_line, session_file, user_text,
)
from support.fixture_transcripts import raw_lines as raw_lines_of
from transcripts.classify import make_entry
from transcripts.entries import (
    ASSISTANT, ATTACHMENT, COMPACT_SUMMARY, INJECTION, INTERRUPT, LOCAL_COMMAND, META, METADATA, PROGRESS,
    PROMPT, SYSTEM, TASK_NOTIFICATION, TOOL_RESULT, UNKNOWN,
)
from transcripts.reader import read_session, version_tuple


ROUTED_A = "I ran setx FOO bar in cmd but the Bash tool still says FOO is empty, do I need to restart?"


def router_context(prompt):
    """What the hook injects for ``prompt`` as a session's first sight of it, on the bundled
    example store (what the fixtures ran): the configured provider, then the session stage."""
    from router.store.clusterfile import load_cluster_file
    from router.config import bundled_cluster_file, default_settings
    from router.providers.provider import build_table
    from router.hooks.session import route_fresh

    table = build_table(load_cluster_file(bundled_cluster_file()))
    settings = default_settings()
    settings["utterances"] = False  # the fixtures were recorded by the lab, whose store has no utterances file
    return route_fresh(prompt, table, settings)["additional_context"]


def test_every_fixture_parses_without_bad_lines(transcript_fixtures):
    files = all_files()
    assert files == sorted(transcript_fixtures.rglob("*.jsonl")) and len(files) >= len(VERSIONS) * len(SCENARIOS)
    for path in files:
        reader = read_session(path)
        entries = list(reader)
        raw_lines = path.read_bytes().count(b"\n")
        assert reader.lines == raw_lines == len(entries), path.name
        assert (reader.bad_lines, reader.invalid_utf8_lines, reader.truncated_last_line) == (0, 0, None), path.name
        assert [e.line for e in entries] == list(range(1, raw_lines + 1))
        assert not any(e.kind == UNKNOWN for e in entries), path.name


@pytest.mark.parametrize("version", ["2.1.293", "2.1.328"])
def test_the_real_attachment_line_is_a_userpromptsubmit_injection(version):
    path = session_file(version, "routed-silent-routed")
    number, raw = find_line(path, is_injection_attachment)
    entries = {e.line: e for e in read_session(path)}
    entry = entries[number]
    assert entry.kind == INJECTION and entry.is_injection
    assert (entry.subtype, entry.hook_event, entry.hook_name) == ("hook_additional_context", "UserPromptSubmit",
                                                                  "UserPromptSubmit")
    assert entry.text == router_context(ROUTED_A)                 # the router's own text, verbatim
    assert entry.version == version and entry.stream == "main"
    assert any("UserPromptSubmit hook additional context" in t for t in entry.texts)  # the rendered reminder
    # its parentUuid leads, through the attachment lines the client writes after a prompt, to that prompt
    by_uuid = {e.uuid: e for e in entries.values() if e.uuid}
    parent = by_uuid[entry.parent_uuid]
    while parent.kind != PROMPT:
        assert parent.type == "attachment", parent.line
        parent = by_uuid[parent.parent_uuid]
    assert parent.text == ROUTED_A and parent.line < number


def test_streamed_assistant_rows_share_message_id_with_growing_output_tokens():
    """The tools session's first reply streams a text block, a pause, then a tool_use block:
    2.0.76 writes one row per block, the first with the usage known then, the last with the final."""
    rows = defaultdict(list)
    for entry in read_session(session_file("2.0.76", "tools")):
        if entry.kind == ASSISTANT:
            rows[entry.message_id].append(entry.raw["message"]["usage"]["output_tokens"])
    streamed = {mid: tokens for mid, tokens in rows.items() if len(tokens) > 1}
    assert streamed, "v2.0.76 streams responses over several rows"
    assert all(tokens == sorted(tokens) for tokens in streamed.values())
    assert any(tokens[-1] > tokens[0] for tokens in streamed.values())


def _text_is(text):
    return lambda o: o.get("type") == "user" and user_text(o) == text


def _text_starts(text):
    return lambda o: o.get("type") == "user" and user_text(o).startswith(text)


def _text_has(text):
    return lambda o: o.get("type") == "user" and text in user_text(o)


def _is_type(entry_type):
    return lambda o: o.get("type") == entry_type


def _tool_result(o):
    content = (o.get("message") or {}).get("content") if o.get("type") == "user" else None
    return isinstance(content, list) and any(b.get("type") == "tool_result" for b in content)


def _sidechain_prompt(o):
    return o.get("type") == "user" and o.get("isSidechain") is True and "report back" in user_text(o)


# Lines found by what they hold (a regeneration moves line numbers), then classified by the reader.
@pytest.mark.parametrize("version, scenario, find, kind, subtype", [
    ("1.0.98", "tools", _text_has("<command-name>/check-notes</command-name>"), PROMPT, "slash_command"),  # typed
    ("1.0.98", "tools", _text_starts("Check notes.txt for spelling"), META, None),    # the command's expanded body
    ("1.0.98", "routed-silent-routed", _text_starts("<user-prompt-submit-hook>"), META, None),  # the hook's output
    ("1.0.98", "tools", _tool_result, TOOL_RESULT, None),
    ("1.0.108", "subagent", _sidechain_prompt, PROMPT, "text"),                       # a sidechain's task prompt
    ("2.0.76", "tools", _is_type("queue-operation"), METADATA, "dequeue"),
    ("2.0.76", "tools", _text_is("make a file notes.txt with a shopping list"), PROMPT, "text"),
    ("2.0.76", "interrupt", _text_starts("[Request interrupted by user"), INTERRUPT, None),
    ("2.1.38", "tools", _text_is("fix the typo in notes.txt"), PROMPT, "text"),
    ("2.1.38", "tools", _text_starts("<local-command-caveat>"), META, None),           # isMeta
    ("2.1.38", "tools", _text_starts("<command-name>/cost"), PROMPT, "slash_command"),
    ("2.1.38", "tools", _text_starts("<local-command-stdout>"), LOCAL_COMMAND, None),
    ("2.1.39", "compact", lambda o: o.get("isCompactSummary") is True, COMPACT_SUMMARY, None),
    ("2.1.328", "subagent", _text_starts("<task-notification>"), TASK_NOTIFICATION, None),
    ("2.1.328", "tools", _is_type("last-prompt"), METADATA, None),
    ("2.1.328", "tools", _is_type("api-request"), METADATA, None),                     # new in 2.1.328
])
def test_fixture_lines_are_classified(version, scenario, find, kind, subtype):
    path = session_file(version, scenario)
    number, _obj = find_line(path, find)
    entry = next(e for e in read_session(path) if e.line == number)
    assert (entry.kind, entry.subtype) == (kind, subtype)


def test_sidechain_entries_keep_their_stream():
    path = session_file("1.0.108", "subagent")
    entries = list(read_session(path))
    sidechain = sum(1 for _n, o in raw_lines_of(path) if o.get("isSidechain") is True)
    assert sidechain >= 2
    assert Counter(e.stream for e in entries) == {"main": len(entries) - sidechain, "sidechain": sidechain}
    [sub_file] = sorted((session_file("2.1.39", "subagent").with_suffix("") / "subagents").glob("*.jsonl"))
    sub = list(read_session(sub_file))
    agent_id = sub_file.stem.removeprefix("agent-")
    assert sub and {e.stream for e in sub} == {f"sidechain:{agent_id}"}


def test_hook_progress_names_the_hook_but_carries_no_output():
    progress = [e for e in read_session(session_file("2.1.38", "tools")) if e.kind == PROGRESS]
    assert [(e.hook_event, e.hook_name) for e in progress] == [
        ("SessionStart", "SessionStart:startup"), ("SessionStart", "SessionStart:resume"),
        ("SessionStart", "SessionStart:resume"), ("SessionStart", "SessionStart:resume")]   # one per process
    assert {e.hook_command for e in progress} == {"true # fixture-session-start"}
    assert all(e.texts == () and e.text == "" for e in progress)


def _line(obj):
    return make_entry(obj, 7)


@pytest.mark.parametrize("obj, kind, subtype", [
    ({"type": "user", "message": {"role": "user", "content": "hi"}, "promptSource": "typed"}, PROMPT, "text"),
    ({"type": "user", "message": {"role": "user", "content": "hi"}, "promptSource": "sdk"}, PROMPT, "text"),
    ({"type": "user", "message": {"role": "user", "content": "Continue the task"}, "promptSource": "system"}, PROMPT, "text"),
    ({"type": "user", "message": {"role": "user", "content": "hi"}, "promptSource": "mystery"}, META, None),
    ({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "see image"},
                                                              {"type": "image", "source": {}}]}}, PROMPT, "text"),
    ({"type": "user", "message": {"role": "user", "content": "skill body"}, "isMeta": True}, META, None),
    ({"type": "user", "message": {"role": "user", "content": "summary"}, "isCompactSummary": True,
      "isVisibleInTranscriptOnly": True}, COMPACT_SUMMARY, None),
    ({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                                                              "content": "ok"}]}}, TOOL_RESULT, None),
    ({"type": "user", "message": {"role": "user", "content": "<local-command-stderr>x</local-command-stderr>"}},
     LOCAL_COMMAND, None),
    ({"type": "user", "message": {"role": "user", "content": 42}}, META, None),
    ({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "<user-prompt-submit-hook>ctx"
                                                                                       "</user-prompt-submit-hook>"}]}},
     META, None),                                                     # 1.0.x's hook line, as --resume rewrites it
    # issue 35 item 9: only 1.0.x wrote that line; a 2.x user who types the tag typed a prompt
    ({"type": "user", "version": "2.1.293", "message": {"role": "user", "content": "<user-prompt-submit-hook> is "
                                                                                  "what 1.0 wrote?"}}, PROMPT, "text"),
    ({"type": "user", "version": "2.0.76", "message": {"role": "user", "content": [
        {"type": "text", "text": "<user-prompt-submit-hook>ctx</user-prompt-submit-hook>"}]}}, PROMPT, "text"),
    ({"type": "user", "version": "1.0.108", "message": {"role": "user", "content": "<user-prompt-submit-hook>ctx"}},
     META, None),
    ({"type": "user", "message": {"role": "user", "content": "[Request interrupted by user]"}}, INTERRUPT, None),
    ({"type": "assistant", "message": {"content": [{"type": "text", "text": "hello"}]}}, ASSISTANT, None),
    ({"type": "system", "subtype": "stop_hook_summary"}, SYSTEM, "stop_hook_summary"),
    ({"type": "progress", "data": {"type": "bash_progress"}}, PROGRESS, "bash_progress"),
    ({"type": "mode", "mode": "normal"}, METADATA, None),
    ({"type": "queue-operation", "operation": "enqueue", "content": "x"}, METADATA, "enqueue"),
    ({"type": "brand-new-type"}, UNKNOWN, None),
    ({"no_type": True}, UNKNOWN, None),
])
def test_classification_rules(obj, kind, subtype):
    entry = _line(obj)
    assert (entry.kind, entry.subtype) == (kind, subtype)


@pytest.mark.parametrize("attachment, kind, text, persisted", [
    # additionalContext: a list of strings (joined with newlines), or a bare string
    ({"type": "hook_additional_context", "hookEvent": "UserPromptSubmit", "hookName": "UserPromptSubmit",
      "content": ["one", "two"]}, INJECTION, "one\ntwo", False),
    ({"type": "hook_additional_context", "hookEvent": "UserPromptSubmit", "content": "alone"}, INJECTION, "alone", False),
    # hookEvent missing: taken from hookName
    ({"type": "hook_additional_context", "hookName": "UserPromptSubmit", "content": ["x"]}, INJECTION, "x", False),
    # plain stdout
    ({"type": "hook_success", "hookEvent": "UserPromptSubmit", "content": "ctx", "stdout": "ctx"}, INJECTION, "ctx", False),
    ({"type": "hook_success", "hookEvent": "UserPromptSubmit", "content": "", "stdout": "from stdout"},
     INJECTION, "from stdout", False),
    # a <persisted-output> stub: fall back to stdout, and remember the model saw a preview
    ({"type": "hook_success", "hookEvent": "UserPromptSubmit",
      "content": "<persisted-output>Output too large (11.3KB). Full output saved to: /x</persisted-output>",
      "stdout": "the full text"}, INJECTION, "the full text", True),
    ({"type": "hook_additional_context", "hookEvent": "UserPromptSubmit",
      "content": ["<persisted-output>Output too large (52KB)</persisted-output>"]}, INJECTION,
     "<persisted-output>Output too large (52KB)</persisted-output>", True),
    # JSON stdout is the hook's raw output, not context (its additionalContext has its own line)
    ({"type": "hook_success", "hookEvent": "UserPromptSubmit", "content": "",
      "stdout": '{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "x"}}'},
     ATTACHMENT, "", False),
    # empty output, other hook events, other attachment types
    ({"type": "hook_success", "hookEvent": "UserPromptSubmit", "content": "", "stdout": ""}, ATTACHMENT, "", False),
    ({"type": "hook_additional_context", "hookEvent": "PostToolUse", "content": ["lint ok"]}, ATTACHMENT, "lint ok", False),
    ({"type": "hook_system_message", "hookEvent": "UserPromptSubmit", "content": "shown to user"},
     ATTACHMENT, "shown to user", False),
    ({"type": "skill_listing", "content": "skills"}, ATTACHMENT, "skills", False),
])
def test_attachment_rules(attachment, kind, text, persisted):
    entry = _line({"type": "attachment", "attachment": attachment, "uuid": "u"})
    assert (entry.kind, entry.text, entry.persisted_preview) == (kind, text, persisted)


def test_assistant_text_thinking_and_tool_uses():
    entry = _line({"type": "assistant", "message": {"id": "msg_1", "content": [
        {"type": "thinking", "thinking": "hmm"},
        {"type": "text", "text": "Reading it."},
        {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/m/MEMORY.md", "limit": 5}},
    ]}})
    assert entry.text == "Reading it."
    assert entry.texts == ("hmm", "Reading it.", "/m/MEMORY.md")
    (tool,) = entry.tool_uses
    assert (tool.line, tool.id, tool.name, tool.input) == (7, "toolu_1", "Read", {"file_path": "/m/MEMORY.md", "limit": 5})
    assert entry.message_id == "msg_1"


def write_lines(path, data):
    path.write_bytes(data)
    return path


def test_truncated_last_line_is_a_warning_and_the_rest_is_read(tmp_path):
    path = write_lines(tmp_path / "s.jsonl", b'{"type":"mode","mode":"normal"}\n{"type":"user","message":{"rol')
    reader = read_session(path)
    entries = list(reader)
    assert [e.line for e in entries] == [1]
    assert reader.truncated_last_line == 2 and reader.bad_lines == 0
    assert [(d.line, d.kind) for d in reader.diagnostics] == [(2, "truncated_last_line")]


def test_truncated_last_line_cut_inside_a_character_is_only_truncated(tmp_path):
    """A live session cut mid-way through a multi-byte character is a truncated tail (a warning), not
    a line of invalid UTF-8 (which `census --strict` fails on)."""
    cut = '{"type":"user","message":{"role":"user","content":"caf\u00e9'.encode()[:-1]
    path = write_lines(tmp_path / "s.jsonl", b'{"type":"mode","mode":"normal"}\n' + cut)
    reader = read_session(path)
    assert [e.line for e in reader] == [1]
    assert (reader.truncated_last_line, reader.invalid_utf8_lines, reader.bad_lines) == (2, 0, 0)
    assert [(d.line, d.kind) for d in reader.diagnostics] == [(2, "truncated_last_line")]


def test_bad_line_with_invalid_utf8_is_one_bad_line(tmp_path):
    path = write_lines(tmp_path / "s.jsonl", b'{"type":"mode"}\n{"caf\xe9\n{"type":"mode"}\n')
    reader = read_session(path)
    assert [e.line for e in reader] == [1, 3]
    assert (reader.bad_lines, reader.invalid_utf8_lines) == (1, 0)
    assert [(d.line, d.kind) for d in reader.diagnostics] == [(2, "bad_line")]


def test_attachment_texts_leave_out_the_hooks_own_command_line():
    """The command line is bookkeeping, never model-facing; the sentinel hook's holds the sentinel."""
    entry = make_entry({"type": "attachment", "attachment": {
        "type": "hook_cancelled", "hookName": "UserPromptSubmit", "hookEvent": "UserPromptSubmit",
        "command": "python -m harness.sentinel --text SENTINEL-XYZ", "timedOut": True}}, 1)
    assert entry.hook_command == "python -m harness.sentinel --text SENTINEL-XYZ"
    assert not any("SENTINEL-XYZ" in text for text in entry.texts)
    blocking = make_entry({"type": "attachment", "attachment": {
        "type": "hook_blocking_error", "hookName": "UserPromptSubmit", "hookEvent": "UserPromptSubmit",
        "blockingError": {"blockingError": "no: SECRET-1", "command": "guard.sh"},
        "content": "task text MARK-2"}}, 2)
    assert {"no: SECRET-1", "guard.sh", "task text MARK-2"} <= set(blocking.texts)


def test_last_line_without_newline_that_parses_is_fine(tmp_path):
    path = write_lines(tmp_path / "s.jsonl", b'{"type":"mode"}\n{"type":"mode"}')
    reader = read_session(path)
    assert len(list(reader)) == 2 and reader.truncated_last_line is None and not reader.diagnostics


def test_invalid_utf8_is_decoded_with_replacement_and_warned(tmp_path):
    bad = b'{"type":"user","message":{"role":"user","content":"caf\xe9 ok"}}\n'
    path = write_lines(tmp_path / "s.jsonl", b'{"type":"mode"}\n' + bad)
    reader = read_session(path)
    entries = list(reader)
    assert entries[1].text == "caf\ufffd ok" and entries[1].kind == PROMPT
    assert reader.invalid_utf8_lines == 1
    assert [(d.line, d.kind) for d in reader.diagnostics] == [(2, "invalid_utf8")]


def test_blank_lines_bad_lines_and_non_objects_are_counted(tmp_path):
    data = b'\n{"type":"mode"}\n   \n{not json}\n[1, 2]\r\n\t\n{"type":"mode"}\r\n'
    reader = read_session(write_lines(tmp_path / "s.jsonl", data))
    assert [e.line for e in reader] == [2, 7]
    assert (reader.blank_lines, reader.bad_lines, reader.lines) == (3, 2, 7)
    assert [(d.line, d.kind) for d in reader.diagnostics] == [(4, "bad_line"), (5, "not_an_object")]
    assert "column" in reader.diagnostics[0].message


def test_byte_order_mark_is_tolerated(tmp_path):
    reader = read_session(write_lines(tmp_path / "s.jsonl", b'\xef\xbb\xbf{"type":"mode"}\n'))
    assert [e.type for e in reader] == ["mode"]


def test_unknown_types_are_yielded_not_fatal(tmp_path):
    path = write_lines(tmp_path / "s.jsonl", b'{"type":"hologram","x":1}\n{"type":"mode"}\n')
    assert [(e.type, e.kind) for e in read_session(path)] == [("hologram", UNKNOWN), ("mode", METADATA)]


@pytest.mark.parametrize("make, message", [
    (lambda tmp: tmp / "missing.jsonl", "no such transcript file"),
    (lambda tmp: tmp, "is a directory"),
    (lambda tmp: write_lines(tmp / "bin.jsonl", b"\x00\x01garbage\n\xff\xfe more\n"), "not a Claude Code transcript"),
])
def test_unreadable_files_raise_input_error(tmp_path, make, message):
    with pytest.raises(InputError) as caught:
        list(read_session(make(tmp_path)))
    assert message in str(caught.value) and caught.value.exit_code == 2


def test_empty_file_reads_as_no_entries(tmp_path):
    reader = read_session(write_lines(tmp_path / "s.jsonl", b""))
    assert list(reader) == [] and reader.lines == 0


def test_reader_streams_one_line_at_a_time(tmp_path, session):
    """Stopping early reads no further: the generator holds one line, not the file."""
    builder = session()
    for i in range(50):
        builder.prompt(f"prompt {i}")
    path = builder.write(tmp_path / "s.jsonl")
    reader = read_session(path)
    iterator = iter(reader)
    first = next(iterator)
    assert first.line == 1 and reader.entries == 1
    iterator.close()
    assert reader.lines == 1


@pytest.mark.parametrize("text, expected", [
    ("2.1.293", (2, 1, 293)), ("1.0.98", (1, 0, 98)), ("2.1.40-beta", (2, 1, 40)), ("x.y", None), (None, None),
])
def test_version_tuple(text, expected):
    assert version_tuple(text) == expected


def test_synthetic_session_uses_the_real_line_shape(session):
    real = real_injection_line()
    builder = session()
    builder.prompt("hello")
    builder.injection("context")
    built = json.loads(builder.lines[1])
    assert list(built) == list(real)
    assert list(built["attachment"]) == list(real["attachment"])


def test_warnings_past_the_stored_limit_are_counted_not_lost(tmp_path):
    from transcripts.entries import MAX_STORED_DIAGNOSTICS
    from transcripts.reader import read_session

    path = tmp_path / "s.jsonl"
    good = json.dumps({"type": "user", "message": {"role": "user", "content": "hi"}, "uuid": "u"})
    path.write_text(good + "\n" + "not json\n" * (MAX_STORED_DIAGNOSTICS + 5))
    reader = read_session(path)
    assert len(list(reader)) == 1
    assert len(reader.diagnostics) == MAX_STORED_DIAGNOSTICS
    assert reader.summary()["unlisted_warnings"] == 5 and reader.summary()["bad_lines"] == MAX_STORED_DIAGNOSTICS + 5


def test_a_line_nested_too_deep_is_one_bad_line_with_its_column(tmp_path):
    path = tmp_path / "deep.jsonl"
    deep = '{"type": "user", "message": ' + "[" * 100_000 + "]" * 100_000 + "}"
    path.write_text('{"type": "user", "message": {"role": "user", "content": "hi"}}\n' + deep + "\n"
                    + '{"type": "assistant", "message": {"content": "ok"}}\n')
    reader = read_session(path)
    kinds = [e.kind for e in reader]
    assert kinds == [PROMPT, ASSISTANT] and reader.bad_lines == 1
    (diagnostic,) = reader.diagnostics
    assert diagnostic.line == 2 and "nested too deep" in diagnostic.message and "column 428" in diagnostic.message  # 28 + 400


def test_a_line_not_utf8_and_nested_too_deep_is_one_bad_line_not_a_crash(tmp_path):
    path = tmp_path / "deep.jsonl"
    deep = b'{"type": "user", "note": "caf\xe9", "message": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    path.write_bytes(b'{"type": "user", "message": {"role": "user", "content": "hi"}}\n' + deep + b"\n"
                     + b'{"type": "assistant", "message": {"content": "ok"}}\n')
    reader = read_session(path)
    assert [e.kind for e in reader] == [PROMPT, ASSISTANT]
    assert reader.bad_lines == 1 and reader.invalid_utf8_lines == 0
    (diagnostic,) = reader.diagnostics
    assert diagnostic.line == 2 and diagnostic.kind == "bad_line" and "nested too deep" in diagnostic.message
