"""harness.lab.measure over synthetic request logs shaped like Claude Code 2.1.328's requests."""

import json

import pytest

from harness.lab import measure
from harness.lab.requestbody import digest

MAIN_SYSTEM = ["x-anthropic-billing-header: cc_version=2.1.328.aaa", "You are the main agent."]
SUB_SYSTEM = ["x-anthropic-billing-header: cc_version=2.1.328.bbb", "You are an agent for Claude Code."]
MEMORY = "# Memory\n- alpha \u2014 first fact\n- beta \u2014 second fact"
CTX_A = "Routed memory cluster: layer1_01\n- env_a \u2014 the first routed line\n- env_b \u2014 another"
CTX_B = "Routed memory cluster: layer1_02\n- env_c \u2014 a line of the second cluster"
MARK = "UserPromptSubmit hook additional context: "


def memory_reminder(text=MEMORY):
    return {"type": "text", "text": "<system-reminder>\nCodebase and user instructions are shown below.\n\n"
                                    "Contents of /h/.claude/projects/-p/memory/MEMORY.md (user's auto-memory, "
                                    f"persists across conversations):\n\n{text}\n</system-reminder>"}


def first_messages(prompt, context=None, memory=MEMORY):
    user = [memory_reminder(memory)] if memory is not None else []
    env = "# Environment\nstuff" + (f"\n\n{MARK}{context}" if context else "") + "\n\nToday's date is 2026-11-30."
    return [{"role": "user", "content": user + [{"type": "text", "text": prompt}]},
            {"role": "system", "content": [{"type": "text", "text": env}]}]


def later_prompt(prompt, context=None):
    out = [{"role": "user", "content": prompt}]
    if context:
        out.append({"role": "system", "content": [{"type": "text", "text": MARK + context}]})
    return out


def reply(text):
    return [{"role": "assistant", "content": [{"type": "text", "text": text}]}]


def record(seq, prompt_index, messages, system=MAIN_SYSTEM):
    body = {"model": "m", "system": [{"type": "text", "text": t} for t in system], "messages": messages,
            "stream": True}
    raw = json.dumps(body, ensure_ascii=False)
    return {"seq": seq, "method": "POST", "path": "/v1/messages?beta=true", "prompt_index": prompt_index,
            "bytes": len(raw.encode()), "reply": {"kind": "text"}, "body": raw}


def routed_silent_routed():
    """Three prompts: routed (A), silent, routed (B); history re-sent on every call."""
    m1 = first_messages("p1", CTX_A)
    m2 = m1 + reply("r1") + later_prompt("p2")
    m3 = m2 + reply("r2") + later_prompt("p3", CTX_B)
    return [record(1, 0, m1), record(2, 1, m2), record(3, 2, m3)]


def mbytes(text):
    return len(text.encode("utf-8"))


def test_routed_silent_routed_each_context_new_once_then_history():
    analysis = measure.analyze_requests(routed_silent_routed())
    calls = analysis["calls"]
    assert [c["new_contexts"] for c in calls] == [["c1"], [], ["c2"]]
    assert [c["history_contexts"] for c in calls] == [[], ["c1"], ["c1"]]
    assert [c["routed_new_bytes"] for c in calls] == [mbytes(CTX_A), 0, mbytes(CTX_B)]
    assert calls[2]["routed_history_bytes"] == mbytes(CTX_A)
    assert measure.check_once_as_new(analysis) == []
    assert [p["new_contexts"] for p in analysis["prompts"]] == [["c1"], [], ["c2"]]
    assert {c["id"]: (c["new"], c["history"]) for c in analysis["contexts"]} == {"c1": (1, 2), "c2": (1, 0)}


def test_memory_md_section_is_counted_on_every_call_with_its_header():
    analysis = measure.analyze_requests(routed_silent_routed())
    header = ("Contents of /h/.claude/projects/-p/memory/MEMORY.md (user's auto-memory, persists across "
              "conversations):\n\n")
    expected = mbytes(header + MEMORY)
    assert [c["memory_md_bytes"] for c in analysis["calls"]] == [expected] * 3
    assert analysis["memory_md"]["body"] == MEMORY
    assert analysis["calls"][2]["memory_bytes"] == expected + mbytes(CTX_A) + mbytes(CTX_B)
    assert analysis["totals"]["last_call_memory_bytes"] == analysis["calls"][2]["memory_bytes"]


def test_no_memory_md_and_no_hook_measures_zero():
    m1 = first_messages("p1", memory=None)
    analysis = measure.analyze_requests([record(1, 0, m1)])
    assert analysis["calls"][0]["memory_bytes"] == 0 and analysis["contexts"] == []


@pytest.mark.parametrize("warning", [
    "> WARNING: MEMORY.md is 400 lines (limit: 200). Only part of it was loaded: 200 of 400 lines were cut off",
    "> WARNING: MEMORY.md is 28.4KB (limit: 24.4KB) \u2014 index entries are too long. Only part of it was loaded",
])
def test_truncation_warning_is_reported(warning):
    body = MEMORY + "\n\n" + warning
    analysis = measure.analyze_requests([record(1, 0, first_messages("p", memory=body))])
    assert analysis["memory_md"]["truncation"] == warning
    assert measure.analyze_requests([record(1, 0, first_messages("p"))])["memory_md"]["truncation"] is None


def test_a_retried_request_shows_the_context_new_twice_and_fails():
    m1 = first_messages("p1", CTX_A)
    analysis = measure.analyze_requests([record(1, 0, m1), record(2, 0, m1)])
    problems = measure.check_once_as_new(analysis)
    assert problems and "2 times for prompt 0" in problems[0]


def test_a_context_seen_only_as_history_fails():
    # The context sits before the last assistant message of the only request: never new.
    messages = later_prompt("p0", CTX_A) + reply("r0") + later_prompt("p1")
    analysis = measure.analyze_requests([record(1, 1, messages)])
    assert analysis["calls"][0]["history_contexts"] == ["c1"]
    assert any("never reached the model as new" in p for p in measure.check_once_as_new(analysis))


def test_same_text_routed_again_for_a_later_prompt_counts_as_new_again():
    m1 = first_messages("p1", CTX_A)
    m2 = m1 + reply("r1") + later_prompt("p2 same topic", CTX_A)
    analysis = measure.analyze_requests([record(1, 0, m1), record(2, 1, m2)])
    assert analysis["calls"][1]["new_contexts"] == ["c1"] and analysis["calls"][1]["history_contexts"] == ["c1"]
    assert measure.check_once_as_new(analysis) == []


def test_tool_round_trip_re_sends_the_context_as_history():
    m1 = first_messages("p1", CTX_A)
    tool = [{"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Write", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}]
    analysis = measure.analyze_requests([record(1, 0, m1), record(2, 0, m1 + tool)])
    assert [c["new_contexts"] for c in analysis["calls"]] == [["c1"], []]
    assert analysis["prompts"][0]["calls"] == 2
    assert measure.check_once_as_new(analysis) == []


def test_subagent_requests_are_another_thread_and_a_context_there_is_a_leak():
    clean = measure.analyze_requests([record(1, 0, first_messages("p1", CTX_A)),
                                      record(2, 0, first_messages("sub task"), system=SUB_SYSTEM)])
    assert [c["thread"] for c in clean["calls"]] == ["main", "other"]
    assert clean["leaks"] == [] and clean["totals"]["other_calls"] == 1
    leaky = measure.analyze_requests([record(1, 0, first_messages("p1", CTX_A)),
                                      record(2, 0, first_messages("sub task", CTX_A), system=SUB_SYSTEM)])
    assert leaky["leaks"] == [{"seq": 2, "context": "c1"}]


COMPACT_ASK = "Your task is to create a detailed summary of the conversation so far."


def compaction_log(carry):
    m1 = first_messages("p1", CTX_A)
    summary_request = m1 + reply("r1") + [{"role": "user", "content": COMPACT_ASK}]
    summary_text = "Summary: the user asked p1." + (f"\n{CTX_A}" if carry else "")
    after = [{"role": "user", "content": summary_text}] + reply("r-summary") + later_prompt("p3", CTX_B)
    return [record(1, 0, m1), record(2, 1, summary_request), record(3, 2, after)]


@pytest.mark.parametrize("carry, expected", [(False, []), (True, ["c1"])])
def test_compaction_reports_whether_earlier_contexts_are_gone(carry, expected):
    analysis = measure.analyze_requests(compaction_log(carry))
    assert analysis["calls"][1]["compaction"] is True
    [compaction] = analysis["compactions"]
    assert compaction["contexts_before"] == ["c1"] and compaction["carried_after"] == expected


def test_audit_agreement_and_both_kinds_of_disagreement():
    analysis = measure.analyze_requests(routed_silent_routed())
    a, b = digest(CTX_A), digest(CTX_B)
    assert measure.compare_with_audit(analysis, [a, b])["agree"] is True
    missing = measure.compare_with_audit(analysis, [a])
    assert not missing["agree"] and missing["missing_in_audit"] == ["c2"]
    twice = measure.compare_with_audit(analysis, [a, a, b])
    assert not twice["agree"] and twice["extra_in_audit"] == ["c1"]
    unknown = measure.compare_with_audit(analysis, [a, b, digest("something else")])
    assert not unknown["agree"] and unknown["extra_in_audit"][0].startswith("audit-only:")


def test_hook_success_plain_text_is_found_too():
    m1 = first_messages("p1")
    m1[1]["content"][0]["text"] += "\n\nUserPromptSubmit hook success: plain words from a hook"
    analysis = measure.analyze_requests([record(1, 0, m1)])
    assert analysis["calls"][0]["new_contexts"] == ["c1"]
    assert analysis["contexts"][0]["marker"] == "UserPromptSubmit hook success:"


def test_records_that_are_not_messages_calls_are_skipped_with_a_reason():
    records = [{"seq": 1, "path": "/v1/messages/count_tokens", "body": "{}"},
               {"seq": 2, "path": "/v1/messages", "body": "not json"},
               record(3, 0, first_messages("p"))]
    analysis = measure.analyze_requests(records)
    assert [s["seq"] for s in analysis["skipped"]] == [1, 2] and len(analysis["calls"]) == 1


def test_read_log_names_the_bad_line(tmp_path):
    from router.errors import InputError

    path = tmp_path / "requests.jsonl"
    path.write_text(json.dumps(record(1, 0, first_messages("p"))) + "\n{broken\n")
    with pytest.raises(InputError) as err:
        measure.read_log(path)
    assert f"{path}:2:" in str(err.value)


def test_legacy_user_prompt_submit_hook_tags_are_contexts():
    """Claude Code 1.0.x: the hook's output rides in the user message inside tags."""
    m1 = [{"role": "user", "content": [{"type": "text", "text": "p1"},
                                       {"type": "text", "text": f"<user-prompt-submit-hook>{CTX_A}</user-prompt-submit-hook>"}]}]
    m2 = m1 + reply("r1") + later_prompt("p2")
    analysis = measure.analyze_requests([record(1, 0, m1), record(2, 1, m2)])
    assert [c["new_contexts"] for c in analysis["calls"]] == [["c1"], []]
    assert analysis["calls"][1]["history_contexts"] == ["c1"]
    assert analysis["contexts"][0]["sha256"] == digest(CTX_A)


def test_tool_less_warmup_requests_do_not_define_the_main_thread():
    """Claude Code 2.0.x sends tool-less "Warmup" requests for its agents before the first call."""
    warmup = record(1, 0, [{"role": "user", "content": "Warmup"}], system=SUB_SYSTEM)
    main = record(2, 0, first_messages("p1", CTX_A))
    main_body = json.loads(main["body"])
    main_body["tools"] = [{"name": "Agent"}]
    main["body"] = json.dumps(main_body)
    analysis = measure.analyze_requests([warmup, main])
    assert [c["thread"] for c in analysis["calls"]] == ["other", "main"]
    assert measure.injections_from_requests(analysis) == [(digest(CTX_A), 0)]


def test_a_summary_request_with_its_own_system_prompt_is_still_the_main_threads_compaction():
    log = compaction_log(carry=False)
    body = json.loads(log[1]["body"])
    body["system"] = [{"type": "text", "text": t} for t in SUB_SYSTEM]     # 2.1.39: no tools, own prompt
    log[1]["body"] = json.dumps(body)
    analysis = measure.analyze_requests(log)
    assert analysis["calls"][1]["thread"] == "main" and analysis["calls"][1]["compaction"] is True
    assert analysis["compactions"][0]["carried_after"] == [] and analysis["leaks"] == []


def tool_use(use_id, name, **tool_input):
    return {"role": "assistant", "content": [{"type": "tool_use", "id": use_id, "name": name, "input": tool_input}]}


def tool_result(use_id, content, is_error=None):
    block = {"type": "tool_result", "tool_use_id": use_id, "content": content}
    if is_error is not None:
        block["is_error"] = is_error
    return {"role": "user", "content": [block]}


def test_tool_exchanges_pair_each_result_with_its_call_once():
    prompt = {"role": "user", "content": "go"}
    write = tool_use("t1", "Write", file_path="/p/a.md", content="x")
    refused = tool_result("t1", "PreToolUse:Write hook error: no", is_error=True)
    edit = tool_use("t2", "Edit", file_path="/p/b.md", old_string="a", new_string="b")
    done = tool_result("t2", [{"type": "text", "text": "updated"}, {"type": "image"}, {"type": "text", "text": "!"}])
    records = [record(1, 0, [prompt]),
               record(2, 0, [prompt, write, refused]),
               record(3, 0, [prompt, write, refused, edit, done]),          # t1 again, as history
               {"seq": 4, "prompt_index": 0, "body": "not json"}]
    assert measure.tool_exchanges(records) == [
        {"seq": 2, "id": "t1", "name": "Write", "input": {"file_path": "/p/a.md", "content": "x"}, "is_error": True,
         "text": "PreToolUse:Write hook error: no"},
        {"seq": 3, "id": "t2", "name": "Edit", "input": {"file_path": "/p/b.md", "old_string": "a", "new_string": "b"},
         "is_error": False, "text": "updated\n!"},
    ]


def test_tool_exchanges_a_result_without_its_call_has_no_name():
    records = [record(1, 0, [{"role": "user", "content": "go"}, tool_result("lost", "ok", is_error=False)])]
    [exchange] = measure.tool_exchanges(records)
    assert exchange["name"] is None and exchange["input"] is None and exchange["text"] == "ok"
