"""harness.lab.report: the requests beside the transcript audit; disagreement is exit 1."""

import json

import pytest

from harness.lab import report as lab_report

CTX_A = "Routed memory cluster: layer1_01\n- env_a \u2014 the first routed line\n- env_b \u2014 another"
CTX_B = "Routed memory cluster: layer1_02\n- env_c \u2014 a line of the second cluster"
MARK = "UserPromptSubmit hook additional context: "
SYSTEM = [{"type": "text", "text": "billing"}, {"type": "text", "text": "main"}]


def body(messages):
    return {"model": "m", "system": SYSTEM, "messages": messages, "stream": True}


def log_records(contexts):
    """One request per prompt; prompt i carries contexts[i] (or nothing) as new text."""
    messages, records = [], []
    for i, context in enumerate(contexts):
        if i:
            messages.append({"role": "assistant", "content": [{"type": "text", "text": f"r{i}"}]})
        messages.append({"role": "user", "content": f"prompt {i}"})
        if context:
            messages.append({"role": "system", "content": [{"type": "text", "text": MARK + context}]})
        raw = json.dumps(body(list(messages)))
        records.append({"seq": i + 1, "path": "/v1/messages?beta=true", "prompt_index": i, "bytes": len(raw),
                        "body": raw})
    return records


def transcript_lines(contexts, session="s1", version="2.1.328"):
    lines, parent = [], None
    for i, context in enumerate(contexts):
        uuid = f"u{i}"
        lines.append({"type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": session, "version": version,
                      "isSidechain": False, "promptId": f"p{i}", "message": {"role": "user", "content": f"prompt {i}"}})
        parent = uuid
        if context:
            lines.append({"type": "attachment", "uuid": f"a{i}", "parentUuid": parent, "sessionId": session,
                          "version": version, "isSidechain": False,
                          "attachment": {"type": "hook_additional_context", "content": [context],
                                         "hookName": "UserPromptSubmit", "toolUseID": f"hook-{i}",
                                         "hookEvent": "UserPromptSubmit"}})
            parent = f"a{i}"
        lines.append({"type": "assistant", "uuid": f"r{i}", "parentUuid": parent, "sessionId": session,
                      "version": version, "isSidechain": False,
                      "message": {"id": f"msg{i}", "role": "assistant", "model": "m",
                                  "content": [{"type": "text", "text": f"r{i + 1}"}],
                                  "usage": {"input_tokens": 1, "output_tokens": 1}}})
        parent = f"r{i}"
    return lines


def make_run(directory, memory, sent, recorded, version="2.1.328"):
    directory.mkdir(parents=True)
    transcript = directory / "s1.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in transcript_lines(recorded, version=version)))
    (directory / "requests.jsonl").write_text("".join(json.dumps(r) + "\n" for r in log_records(sent)))
    manifest = {"format": 1, "memory": memory, "hook": memory == "slim", "client": "/x/claude",
                "client_version": "2.1.328", "session_id": "s1", "transcript": str(transcript),
                "subagent_transcripts": [], "prompts": [f"prompt {i}" for i in range(len(sent))],
                "outcomes": [{"index": i, "exit_code": 0} for i in range(len(sent))]}
    (directory / "run.json").write_text(json.dumps(manifest))
    return directory


def test_agreeing_session_exits_0(tmp_path):
    run = make_run(tmp_path / "run", "slim", [CTX_A, None, CTX_B], [CTX_A, None, CTX_B])
    report = lab_report.build_report(run)
    [session] = report["sessions"]
    assert session["agreement"]["agree"] and session["audit"]["status"] == "pass"
    assert session["agreement"]["requests"] == 2 and session["audit"]["injections"] == 2
    assert session["problems"] == [] and lab_report.report_exit_code(report) == 0
    assert session["label"] == "request bytes measured from the real client"


@pytest.mark.parametrize("sent, recorded, key", [
    ([CTX_A, None, CTX_B], [CTX_A, None, None], "missing_in_audit"),       # an injection the audit did not see
    ([CTX_A, None, None], [CTX_A, CTX_A, None], "extra_in_audit"),          # one it counts twice
])
def test_disagreement_exits_1(tmp_path, sent, recorded, key):
    run = make_run(tmp_path / "run", "slim", sent, recorded)
    report = lab_report.build_report(run)
    agreement = report["sessions"][0]["agreement"]
    assert not agreement["agree"] and agreement[key]
    assert lab_report.report_exit_code(report) == 1


def test_an_audit_that_cannot_show_injections_is_unknown_not_a_disagreement(tmp_path):
    run = make_run(tmp_path / "run", "slim", [CTX_A, None], [None, None], version="2.1.39")
    report = lab_report.build_report(run)
    agreement = report["sessions"][0]["agreement"]
    assert agreement["agree"] is None and "cannot show injections" in agreement["note"]
    assert agreement["requests"] == 1 and lab_report.report_exit_code(report) == 0


def test_missing_transcript_is_a_disagreement(tmp_path):
    run = make_run(tmp_path / "run", "slim", [CTX_A], [CTX_A])
    (run / "s1.jsonl").unlink()
    report = lab_report.build_report(run)
    assert report["sessions"][0]["audit"] is None and lab_report.report_exit_code(report) == 1


def test_flat_and_slim_sessions_are_compared(tmp_path):
    make_run(tmp_path / "run" / "flat", "flat", [None, None], [None, None])
    make_run(tmp_path / "run" / "slim", "slim", [CTX_A, CTX_B], [CTX_A, CTX_B])
    report = lab_report.build_report(tmp_path / "run")
    assert [s["memory"] for s in report["sessions"]] == ["flat", "slim"]
    comparison = report["comparison"]
    assert comparison["prompts"] == 2 and comparison["crossing_prompt"] == 1   # flat carries no MEMORY.md here
    assert set(lab_report.series_for_plot(report)) == {"flat MEMORY.md", "slim + router"}
    section = lab_report.tokens_section(tmp_path / "run")
    assert section["method"] == "measured" and [s["memory"] for s in section["sessions"]] == ["flat", "slim"]


def test_not_a_run_directory(tmp_path):
    from router.errors import InputError

    with pytest.raises(InputError):
        lab_report.build_report(tmp_path)
