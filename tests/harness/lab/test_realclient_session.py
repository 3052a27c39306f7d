"""Session de-duplication (issue 13) under the real Claude Code: the spec's setx case.

The setx question asked twice in one session, then ``/compact``, then asked again. Judged from
what the client sent (``harness.lab.measure`` and the request bodies) beside the transcript audit.
The fact line is counted inside hook contexts only: the bundled slim MEMORY.md carries the same
line in its hot strip, and a hook context of any event counts (after a compaction the line comes
back as a ``SessionStart`` context, which ``measure`` does not list among routed contexts).

The second test runs the same session with the session record deleted before every prompt, so
the hook cannot know what the session holds, and shows the same check then sees the fact twice.
Marked ``realclient``: CI runs them, a missing client fails them."""

import json
import shutil

import pytest

from harness.lab import measure
from harness.lab.requestbody import last_assistant_index, message_texts
from harness.lab.report import build_report, report_exit_code
from harness.lab.runner import run_session
from transcripts.audit import audit_path, result_to_dict

pytestmark = pytest.mark.realclient

SETX = "I set an environment variable with setx but the Bash tool still can't see it"
FACT_SLUG = "env_bash_tool_env_var_caching"
HOOK_CONTEXT = "hook additional context: "


def fact_line():
    """The member line as the hook sends it (``- slug — hook``), read from the bundled store."""
    from router.store.clusterfile import load_cluster_file
    from router.config import bundled_cluster_file

    _cluster, member = load_cluster_file(bundled_cluster_file()).find_member(FACT_SLUG)
    return f"- {member.slug} \u2014 {member.hook}"


def fact_as_new(request_log, line):
    """Per main-thread, non-compaction request: ``(prompt_index, [hook event, ...])``, one event
    name per time ``line`` appears inside a hook context placed after the last assistant message,
    i.e. text the model has not seen before."""
    records = measure.read_log(request_log)
    analysis = measure.analyze_requests(records)
    out = []
    # analyze_requests keeps the Messages calls it can parse, in order: the same filter pairs them
    for record, call in zip((r for r in records if _is_call(r)), analysis["calls"], strict=True):
        if call["thread"] != measure.MAIN or call["compaction"]:
            continue
        messages = json.loads(record["body"])["messages"]
        events = []
        for message in messages[last_assistant_index(messages) + 1:]:
            for text in message_texts(message):
                for start in _find_all(text, HOOK_CONTEXT):
                    event = text[:start].rsplit("\n", 1)[-1].split(" hook", 1)[0].strip()
                    end = text.find("\n\n", start)
                    context = text[start:] if end == -1 else text[start:end]
                    events.extend([event] * context.count(line))
        out.append((call["prompt_index"], events))
    return out


def _is_call(record):
    path = str(record.get("path", ""))
    return "/messages" in path and "count_tokens" not in path and measure.parse_record(record)[0] is not None


def _find_all(text, marker):
    start = text.find(marker)
    while start != -1:
        yield start
        start = text.find(marker, start + 1)


def sends_before_and_after(per_call, compact_index):
    before = sum(len(events) for index, events in per_call if index < compact_index)
    after = sum(len(events) for index, events in per_call if index > compact_index)
    return before, after


@pytest.mark.parametrize("session", ["resume", "stream"])
def test_setx_twice_reaches_the_model_once(tmp_path, claude_client, session):
    # /compact is a slash command: only resumed -p prompts run it (harness.lab.runner)
    prompts = [SETX, SETX] + (["/compact", SETX] if session == "resume" else [])
    result = run_session(tmp_path / "run", prompts, "slim", claude=claude_client, session=session)
    assert result.ok, result.outcomes
    line = fact_line()
    per_call = fact_as_new(result.request_log, line)
    assert per_call[:2] == [(0, ["UserPromptSubmit"]), (1, [])]
    analysis = measure.analyze_requests(measure.read_log(result.request_log))
    calls = [c for c in analysis["calls"] if not c["compaction"]]
    assert calls[1]["new_contexts"] == [] and calls[1]["history_contexts"] == ["c1"]   # nothing new, c1 as history
    assert measure.check_once_as_new(analysis) == []
    if session == "resume":
        assert sends_before_and_after(per_call, 2) == (1, 1)
        # after the compaction the fact comes back once (as the SessionStart context: the record's
        # pending line), and nothing from before the compaction rides along
        assert [events for index, events in per_call if index == 3] == [["SessionStart"]]
        [compaction] = analysis["compactions"]
        assert compaction["contexts_before"] == ["c1"] and compaction["carried_after"] == []
        assert calls[-1]["history_contexts"] == []
    report = build_report(result.run_dir)
    [run] = report["sessions"]
    assert run["audit"]["status"] == "pass" and run["agreement"]["agree"], run["agreement"]
    assert report_exit_code(report) == 0


def test_without_the_session_record_the_check_sees_the_fact_twice(tmp_path, claude_client):
    run_dir = tmp_path / "run"
    sessions = run_dir / "home" / ".cache" / "memory-router" / "sessions"
    deleted = []

    def forget(index, _total, _prompt):
        if sessions.exists():
            deleted.append((index, sorted(p.name for p in sessions.iterdir())))
            shutil.rmtree(sessions)

    result = run_session(run_dir, [SETX, SETX, "/compact", SETX], "slim", claude=claude_client, on_prompt=forget)
    assert result.ok, result.outcomes
    # a record existed before each later prompt but the compaction (which found none to reset)
    assert [index for index, names in deleted if names] == [1, 2]
    per_call = fact_as_new(result.request_log, fact_line())
    assert sends_before_and_after(per_call, 2) == (2, 1)
    assert [events for index, events in per_call if index == 1] == [["UserPromptSubmit"]]
    # the audit sees the router send the same line twice in one context (check f: the router
    # repeating itself; the client re-sent nothing, so check b passes) and agrees
    # with the requests on what was injected, so the harness itself passes
    report = build_report(result.run_dir)
    [run] = report["sessions"]
    assert run["audit"]["status"] == "fail"
    audit = result_to_dict(audit_path(result.transcript))
    failed = {c["id"] for stream in audit["streams"] for c in stream["checks"] if c["status"] == "fail"}
    assert failed == {"f"}
    assert run["agreement"]["agree"] and run["agreement"]["requests"] == 3, run["agreement"]
    assert report_exit_code(report) == 0
