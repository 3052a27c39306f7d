"""The injection audit over sessions built in the 2.1.293 shape (tests/support/transcript_sessions.py),
and over the real fixtures. Every check is fed its failing case as well as its passing one."""

import json

import pytest

from support.fixture_transcripts import real_injection_line, session_file
from transcripts.audit import (
    FAIL,
    NA,
    NOT_RECORDED,
    PASS,
    RECORDED,
    UNCERTAIN,
    UNKNOWN,
    audit_path,
    audit_session,
    capability_of,
    result_to_dict,
    sentinel_check,
)
from transcripts.reader import read_session


def statuses(result, stream="main"):
    return {c.id: c.status for c in result.stream(stream).checks}


def evidence_lines(result, check_id, stream="main"):
    return [e.line for e in result.check(check_id, stream).evidence]


def run(builder, tmp_path, sentinel=None, name="session.jsonl"):
    return audit_path(builder.write(tmp_path / name), sentinel)


def prompt_with_context(builder, prompt, body, env=True):
    """A prompt, the environment/skill attachments 2.1.293 writes after it, then the injection."""
    builder.prompt(prompt)
    prompt_line = builder.line
    if env:
        builder.attachment({"type": "environment", "content": "cwd: /home/user/proj"})
        builder.attachment({"type": "skill_listing", "content": "- commit: make a commit"})
    builder.injection(body)
    return prompt_line, builder.line


def assistant_turn(builder, tool_output="file contents"):
    builder.assistant("Let me look.")
    builder.tool_call("Read", {"file_path": "/home/user/proj/README.md"}, tool_output)
    builder.assistant("Done.")


# --------------------------------------------------------------------------- passing sessions


def test_one_injection_on_one_prompt_passes(tmp_path, session, bodies):
    s = session()
    prompt_line, inj_line = prompt_with_context(s, "why can't bash see my setx variable?", bodies["setx"])
    assistant_turn(s)
    result = run(s, tmp_path)
    assert result.capability == RECORDED and result.status == PASS
    assert statuses(result) == {"a": PASS, "b": PASS, "c": NA, "d": PASS, "e": NA, "f": PASS}
    (prompt,) = result.stream().prompts
    assert (prompt.line, prompt.source, prompt.form) == (prompt_line, "typed", "text")
    (inj,) = prompt.injections
    assert (inj.line, inj.prompt_line, inj.anchor) == (inj_line, prompt_line, "parent")
    assert inj.cluster_ids == ("env-vars",)
    assert (inj.lines, inj.member_lines, inj.chars) == (3, 2, len(bodies["setx"]))
    assert inj.attachment_type == "hook_additional_context" and inj.hook_event == "UserPromptSubmit"


def test_several_prompts_with_injections_on_some_pass(tmp_path, session, bodies):
    s = session()
    p1, i1 = prompt_with_context(s, "setx question", bodies["setx"])
    assistant_turn(s)
    s.prompt("refactor this loop")            # the router stays silent: no attachment line at all
    p2 = s.line
    assistant_turn(s)
    p3, i3 = prompt_with_context(s, "cloudflare pages env var for the build?", bodies["cloudflare"], env=False)
    assistant_turn(s)
    result = run(s, tmp_path)
    assert result.status == PASS
    assert statuses(result) == {"a": PASS, "b": PASS, "c": NA, "d": PASS, "e": NA, "f": PASS}
    prompts = result.stream().prompts
    assert [(p.line, [i.line for i in p.injections]) for p in prompts] == [(p1, [i1]), (p2, []), (p3, [i3])]
    assert prompts[2].injections[0].cluster_ids == ("cloudflare", "deploy")
    assert "2 injection(s) on 2 prompt(s)" in result.check("b").message


def compaction(builder):
    """What 2.1.328 writes when the context is compacted: the boundary, then the summary."""
    obj = builder.envelope("system")
    obj.update({"subtype": "compact_boundary", "content": "Conversation compacted", "level": "info",
                "compactMetadata": {"trigger": "manual", "preTokens": 41000}})
    builder._add(obj)
    summary = builder.envelope("user")
    summary.update({"isCompactSummary": True, "isVisibleInTranscriptOnly": True,
                    "message": {"role": "user", "content": "This session is being continued from a previous one."}})
    builder._add(summary)


def test_issue24_item23_member_lines_routed_at_two_prompts_are_the_router_repeating_itself(tmp_path, session, bodies):
    """Item 23: the same member lines routed at two different prompts are not the client re-sending
    one injection (b passes); they are the router repeating itself, check (f)."""
    s = session()
    _p1, i1 = prompt_with_context(s, "setx question", bodies["setx"])
    assistant_turn(s)
    _p2, i2 = prompt_with_context(s, "and again: why is my setx var missing in bash?", bodies["setx"])
    assistant_turn(s)
    result = run(s, tmp_path)
    assert statuses(result) == {"a": PASS, "b": PASS, "c": NA, "d": PASS, "e": NA, "f": FAIL}
    assert result.status == FAIL
    (evidence,) = result.check("f").evidence
    assert evidence.line == i2 and "2 member line(s) already injected in this context" in evidence.note
    assert f"setx-bash-visibility (line {i1})" in evidence.note and "the router repeated itself" in evidence.note
    assert result.check("f").name == "the router repeats no member line in one context"


def test_one_line_of_a_cluster_sent_again_is_the_router_repeating_itself_even_among_new_ones(tmp_path, session,
                                                                                           bodies):
    from support.transcript_sessions import router_body

    s = session()
    prompt_with_context(s, "setx question", bodies["setx"])
    assistant_turn(s)
    again = router_body(["env-vars"], [("path-order", "Git Bash puts /usr/bin before the Windows PATH"),
                                       ("msys-paths", "MSYS rewrites /c/ paths in arguments")])
    _p2, i2 = prompt_with_context(s, "why does git bash mangle my paths?", again)
    result = run(s, tmp_path)
    assert (statuses(result)["b"], statuses(result)["f"]) == (PASS, FAIL) and evidence_lines(result, "f") == [i2]
    assert "1 member line(s)" in result.check("f").evidence[0].note and "path-order" in result.check("f").evidence[0].note


def test_a_router_text_inside_a_later_router_injection_is_the_router_repeating_itself(tmp_path, session):
    """An earlier router text found whole inside a later router injection at a new prompt is the
    hook's own output again: (f), not (b)."""
    from support.transcript_sessions import router_body

    s = session()
    first = router_body(["env-vars"], [("setx-bash-visibility", "setx writes the registry; a reboot didn't fix it")])
    _p1, i1 = prompt_with_context(s, "setx question", first)
    assistant_turn(s)
    _p2, i2 = prompt_with_context(s, "setx and msys?", first + "\n- msys-paths \u2014 MSYS rewrites /c/ paths")
    result = run(s, tmp_path)
    assert (statuses(result)["b"], statuses(result)["f"]) == (PASS, FAIL)
    notes = [e.note for e in result.check("f").evidence if e.line == i2]
    assert any(f"repeats the router text injected at line {i1}" in note for note in notes)


def test_a_client_re_sending_a_router_injection_still_fails_b_not_f(tmp_path, session, bodies):
    """(b) stays about the client: the router's text repeated in a later user line is a re-send,
    and the router did not repeat itself."""
    s = session()
    prompt_with_context(s, "setx question", bodies["setx"])
    assistant_turn(s)
    s.prompt("quoting the context back: " + bodies["setx"])
    line = s.line
    result = run(s, tmp_path)
    assert (statuses(result)["b"], statuses(result)["f"]) == (FAIL, PASS)
    assert line in evidence_lines(result, "b")


def test_no_router_injection_leaves_f_not_applicable(tmp_path, session):
    s = session()
    prompt_with_context(s, "first", "git status: clean working tree on branch main, nothing to commit")
    result = run(s, tmp_path)
    assert statuses(result)["f"] == NA


def test_the_same_lines_after_a_compaction_pass(tmp_path, session, bodies):
    s = session()
    prompt_with_context(s, "setx question", bodies["setx"])
    assistant_turn(s)
    compaction(s)
    prompt_with_context(s, "and again: why is my setx var missing in bash?", bodies["setx"])
    assistant_turn(s)
    result = run(s, tmp_path)
    assert statuses(result) == {"a": PASS, "b": PASS, "c": NA, "d": PASS, "e": NA, "f": PASS}


def test_a_deduplicated_session_passes(tmp_path, session):
    """What the router sends with session de-duplication: new lines only, the header saying how
    many the session already holds; a repeat question gets no attachment at all."""
    from support.transcript_sessions import router_body

    s = session()
    first = router_body(["env-vars"], [("setx-bash-visibility", "setx writes the registry; a reboot didn't fix it"),
                                       ("path-order", "Git Bash puts /usr/bin before the Windows PATH")])
    prompt_with_context(s, "setx question", first)
    assistant_turn(s)
    s.prompt("why is my setx var missing in bash, again?")     # every chosen line held: nothing sent
    assistant_turn(s)
    second = router_body(["env-vars (2 already sent in this session)"],
                         [("msys-paths", "MSYS rewrites /c/ paths in arguments")])
    prompt_with_context(s, "and why are my /c/ paths rewritten?", second, env=False)
    assistant_turn(s)
    result = run(s, tmp_path)
    assert statuses(result) == {"a": PASS, "b": PASS, "c": NA, "d": PASS, "e": NA, "f": PASS}
    assert "2 injection(s) on 2 prompt(s)" in result.check("b").message


def test_another_hooks_text_injected_again_for_a_new_prompt_passes(tmp_path, session):
    s = session()
    status = "git status: clean working tree on branch main, nothing to commit, 3 commits ahead of origin"
    prompt_with_context(s, "first", status)
    assistant_turn(s)
    _p2, i2 = prompt_with_context(s, "second", status)
    result = run(s, tmp_path)
    assert statuses(result)["b"] == PASS
    assert any(f"line {i2}" in note and "allowed" in note for note in result.stream().notes)


def test_the_real_2_1_293_line_after_its_prompt_passes(tmp_path, session):
    """A real injection line 2.1.293 wrote for our hook, verbatim, hanging off a prompt that carries its parentUuid."""
    real = real_injection_line()
    s = session()
    s.prompt("setx question", uid=real["parentUuid"])
    s.raw(json.dumps(real, ensure_ascii=False))
    result = run(s, tmp_path, sentinel="env_bash_tool_env_var_caching")   # the member line the router showed
    assert result.status == PASS
    assert statuses(result) == {"a": PASS, "b": PASS, "c": PASS, "d": PASS, "e": NA, "f": PASS}
    assert result.stream().prompts[0].injections[0].cluster_ids == ("layer1_project_memory_router",)


@pytest.mark.parametrize("version", ["2.1.293", "2.1.328"])
@pytest.mark.parametrize("scenario", ["routed-silent-routed", "compact"])
def test_real_attachment_era_sessions_pass(version, scenario):
    """Whole sessions the real clients wrote with our hook: every injection once, at its own prompt."""
    result = audit_path(session_file(version, scenario))
    assert result.can_show_injections and result.status == PASS
    checks = statuses(result)
    assert (checks["a"], checks["b"], checks["d"]) == (PASS, PASS, PASS)
    expected = {"routed-silent-routed": [1, 0, 1], "compact": [1, 0, 1]}[scenario]
    assert [len(p.injections) for p in result.stream().prompts] == expected


def test_missing_parent_falls_back_to_order_at_the_prompt(tmp_path, session, bodies):
    s = session()
    s.prompt("setx question")
    s.injection(bodies["setx"], parent=None)
    assistant_turn(s)
    result = run(s, tmp_path)
    (inj,) = result.stream().injections
    assert (inj.anchor, inj.prompt_line, result.status) == ("order", 1, PASS)


def test_plain_stdout_injection_counts(tmp_path, session, bodies):
    s = session()
    s.prompt("setx question")
    s.hook_success(bodies["setx"], command="memory-router hook")
    assistant_turn(s)
    result = run(s, tmp_path)
    (inj,) = result.stream().injections
    assert (inj.attachment_type, inj.command, inj.cluster_ids) == ("hook_success", "memory-router hook", ("env-vars",))
    assert result.status == PASS


def test_hooks_of_other_events_are_not_injections(tmp_path, session, bodies):
    s = session()
    s.prompt("setx question")
    s.assistant("Let me check.")
    s.injection("PostToolUse lint said everything is fine here", hook_event="PostToolUse")
    s.hook_success(bodies["setx"], hook_event="PreToolUse", command="guard.sh")
    result = run(s, tmp_path)
    assert result.stream().injections == () and statuses(result)["a"] == NA and result.status == PASS


# --------------------------------------------------------------------------- re-sending fails


@pytest.mark.parametrize("parent", ["tool_result", "assistant", "none"])
def test_same_text_reattached_after_tool_results_without_a_new_prompt_fails(tmp_path, session, bodies, parent):
    s = session()
    p1, i1 = prompt_with_context(s, "setx question", bodies["setx"])
    s.assistant("Let me look.")
    tool_result = s.tool_call("Bash", {"command": "echo $FOO"}, "")
    tool_result_line = s.line
    if parent == "assistant":
        s.assistant("Still empty; checking the registry.")
    hangs_off = s.line
    s.injection(bodies["setx"], parent={"tool_result": tool_result, "assistant": s.last_uuid, "none": None}[parent])
    again = s.line
    s.assistant("Here is why.")
    result = run(s, tmp_path)
    assert result.status == FAIL
    assert statuses(result)["a"] == FAIL and statuses(result)["b"] == FAIL
    assert evidence_lines(result, "a") == [again]
    assert f"line {i1}" in result.check("a").evidence[0].note
    assert evidence_lines(result, "b") == [again]
    note = result.check("b").evidence[0].note
    if parent == "none":
        assert f"line {tool_result_line - 1}" in note or "already gone on" in note
    else:
        assert f"line {hangs_off}" in note
    assert [i.line for i in result.stream().unanchored] == [again]
    assert [i.line for i in result.stream().prompts[0].injections] == [i1]


def test_reattached_on_every_later_turn_names_every_line(tmp_path, session, bodies):
    """What the spec §3 test guards against: the context re-sent on each later assistant turn."""
    s = session()
    prompt_with_context(s, "setx question", bodies["setx"])
    resent = []
    for _ in range(3):
        s.tool_call("Bash", {"command": "ls"}, "a b c")
        s.injection(bodies["setx"])
        resent.append(s.line)
    result = run(s, tmp_path)
    assert evidence_lines(result, "a") == resent
    assert evidence_lines(result, "b") == resent


@pytest.mark.parametrize("hangs_off", ["first_injection", "prompt"])
def test_same_text_reattached_later_with_a_chain_back_to_its_prompt_fails_b(tmp_path, session, hangs_off):
    """Compared by content, not by where its parentUuid points: the same text attached again after
    tool results and an assistant turn is a re-send for (b) too, from a hook the audit cannot tell
    apart from others (hook_additional_context lines carry no command)."""
    s = session()
    prompt = s.prompt("hello")
    first = s.injection("context from a project hook, long enough to attribute")
    s.assistant("Let me look.")
    s.tool_call("Bash", {"command": "ls"}, "a b c")
    s.assistant("Still looking.")
    s.injection("context from a project hook, long enough to attribute",
                parent={"first_injection": first, "prompt": prompt}[hangs_off])
    again = s.line
    result = run(s, tmp_path)
    assert result.status == FAIL
    assert statuses(result)["a"] == FAIL and evidence_lines(result, "a") == [again]
    assert statuses(result)["b"] == FAIL and evidence_lines(result, "b") == [again]
    assert "line 2" in result.check("b").evidence[0].note


@pytest.mark.parametrize("where", ["assistant", "tool_result", "prompt", "attachment"])
def test_injected_text_embedded_in_a_later_entry_fails(tmp_path, session, bodies, where):
    s = session()
    prompt_with_context(s, "setx question", bodies["setx"])
    s.assistant("Let me look.")
    wrapped = "earlier context:\n" + bodies["setx"] + "\n(end)"
    if where == "assistant":
        s.assistant(wrapped)
    elif where == "tool_result":
        s.tool_call("Bash", {"command": "cat notes"}, wrapped)
    elif where == "prompt":
        s.prompt(wrapped)
    else:
        s.attachment({"type": "task_reminder", "content": [wrapped]})
    embedded = s.line
    result = run(s, tmp_path)
    assert statuses(result)["b"] == FAIL and statuses(result)["a"] == PASS
    assert evidence_lines(result, "b") == [embedded]
    assert "repeats the text injected at line" in result.check("b").evidence[0].note


def test_same_text_twice_for_one_prompt_fails_a(tmp_path, session, bodies):
    s = session()
    p1, i1 = prompt_with_context(s, "setx question", bodies["setx"])
    s.injection(bodies["setx"])
    second = s.line
    result = run(s, tmp_path)
    assert evidence_lines(result, "a") == [second]
    assert f"same prompt (line {p1})" in result.check("a").evidence[0].note
    assert evidence_lines(result, "b") == [second]


def test_two_router_injections_for_one_prompt_fail_b(tmp_path, session, bodies):
    s = session()
    p1, i1 = prompt_with_context(s, "setx and cloudflare", bodies["setx"])
    s.injection(bodies["cloudflare"])
    second = s.line
    result = run(s, tmp_path)
    assert statuses(result)["a"] == PASS and statuses(result)["b"] == FAIL
    assert evidence_lines(result, "b") == [second]
    assert "second injection from the memory router" in result.check("b").evidence[0].note


def test_two_different_hooks_on_one_prompt_pass(tmp_path, session, bodies):
    s = session()
    prompt_with_context(s, "setx question", bodies["setx"])
    s.hook_success("[dynamic-context hook]\nOpenSpec change 12 is in progress", command="ctx.sh")
    result = run(s, tmp_path)
    assert result.status == PASS and len(result.stream().prompts[0].injections) == 2


def test_injection_before_any_prompt_fails_b(tmp_path, session, bodies):
    s = session()
    s.injection(bodies["setx"], parent=None)
    result = run(s, tmp_path)
    assert statuses(result)["b"] == FAIL
    assert "no prompt comes before it" in result.check("b").evidence[0].note


# --------------------------------------------------------------------------- (c) sentinel


SENTINEL = "SENTINEL-7f3c-0042"


def test_sentinel_once_at_its_prompt_passes(tmp_path, session):
    s = session()
    prompt_with_context(s, "hello", f"sentinel hook: {SENTINEL}")
    assistant_turn(s)
    s.prompt("second turn")
    assistant_turn(s)
    result = run(s, tmp_path, sentinel=SENTINEL)
    assert statuses(result)["c"] == PASS and result.status == PASS
    assert evidence_lines(result, "c") == [4]


@pytest.mark.parametrize("second_place", ["reattached", "tool_result", "assistant"])
def test_sentinel_seen_twice_fails(tmp_path, session, second_place):
    s = session()
    _, first = prompt_with_context(s, "hello", f"sentinel hook: {SENTINEL}")
    s.assistant("ok")
    if second_place == "reattached":
        s.injection(f"sentinel hook: {SENTINEL}")
    elif second_place == "tool_result":
        s.tool_call("Bash", {"command": "env"}, f"X={SENTINEL}")
    else:
        s.assistant(f"I was told {SENTINEL}")
    second = s.line
    result = run(s, tmp_path, sentinel=SENTINEL)
    assert statuses(result)["c"] == FAIL and result.status == FAIL
    assert evidence_lines(result, "c") == [first, second]


def test_sentinel_absent_fails_and_sentinel_outside_an_injection_fails(tmp_path, session):
    s = session()
    s.prompt("hello")
    assistant_turn(s)
    absent = run(s, tmp_path, sentinel=SENTINEL)
    assert statuses(absent)["c"] == FAIL and "appears nowhere" in absent.check("c").message
    s.prompt(f"I paste {SENTINEL} myself")
    pasted = run(s, tmp_path, sentinel=SENTINEL, name="pasted.jsonl")
    assert statuses(pasted)["c"] == FAIL and "not an injection at a prompt" in pasted.check("c").message


def test_the_sentinel_hooks_own_command_on_its_attachment_lines_is_not_an_appearance(tmp_path, session):
    """Claude Code records a hook's ``command`` on hook_success/hook_cancelled/error lines; the sentinel
    hook's command holds the sentinel (``--text``), but the model never sees it."""
    command = (f"/venv/bin/python -P -m harness.sentinel --flag /p/.claude/memory-router/sentinel-{SENTINEL}.fired "
               f"--text {SENTINEL} # memory-router sentinel install")
    s = session()
    _, injected = prompt_with_context(s, "hello", f"sentinel hook: {SENTINEL}")
    assistant_turn(s)
    s.prompt("second turn")
    s.attachment({"type": "hook_cancelled", "hookName": "UserPromptSubmit", "hookEvent": "UserPromptSubmit",
                  "command": command, "timedOut": True, "timeoutMs": 5000})
    s.attachment({"type": "hook_non_blocking_error", "hookName": "UserPromptSubmit", "hookEvent": "UserPromptSubmit",
                  "command": command, "stderr": "Failed with non-blocking status code: 1", "exitCode": 1})
    assistant_turn(s)
    s.prompt("third turn")
    assistant_turn(s)
    result = run(s, tmp_path, sentinel=SENTINEL)
    assert statuses(result)["c"] == PASS and result.status == PASS
    assert evidence_lines(result, "c") == [injected]


def test_sentinel_once_outside_an_injection_in_a_pre_attachment_transcript_is_unknown(tmp_path, session):
    """Such a transcript cannot record injections, so a single appearance elsewhere is no evidence
    either way: unknown, neither pass nor fail."""
    s = session(version="2.0.76")
    s.prompt(f"<user-prompt-submit-hook>{SENTINEL}</user-prompt-submit-hook> hi")
    s.assistant("hello")
    s.prompt("again")
    s.assistant("hi")
    result = run(s, tmp_path, sentinel=SENTINEL)
    check_c = result.check("c")
    assert check_c.status == UNKNOWN and "cannot show injections" in check_c.message
    assert [e.line for e in check_c.evidence] == [1]
    assert result.status == UNKNOWN


def test_sentinel_check_helper(tmp_path, session):
    s = session()
    prompt_with_context(s, "hello", f"sentinel hook: {SENTINEL}")
    path = s.write(tmp_path / "s.jsonl")
    assert sentinel_check(path, SENTINEL).status == PASS
    assert sentinel_check(str(path), "NOT-THERE").status == FAIL
    assert sentinel_check(read_session(path), SENTINEL).status == PASS


# --------------------------------------------------------------------------- (d) size


@pytest.mark.parametrize("chars, status", [(10_000, PASS), (10_001, FAIL), (25_000, FAIL)])
def test_injection_over_10000_characters_is_flagged(tmp_path, session, chars, status):
    s = session()
    header = "Routed memory cluster: big\n"
    s.prompt("big one")
    s.injection(header + "- x \u2014 " + "y" * (chars - len(header) - 6))
    result = run(s, tmp_path)
    assert result.stream().injections[0].chars == chars
    assert statuses(result)["d"] == status
    if status == FAIL:
        assert evidence_lines(result, "d") == [2] and f"{chars:,} characters" in result.check("d").evidence[0].note


def test_persisted_preview_is_flagged(tmp_path, session):
    s = session()
    s.prompt("big one")
    s.attachment({"type": "hook_success", "hookName": "UserPromptSubmit", "hookEvent": "UserPromptSubmit",
                  "content": "<persisted-output>Output too large (11.3KB). Full output saved to: /t/hook-1.txt"
                             "</persisted-output>", "stdout": "", "command": "digest.sh"})
    result = run(s, tmp_path)
    assert statuses(result)["d"] == FAIL and "preview" in result.check("d").evidence[0].note


# --------------------------------------------------------------------------- (e) sidechains


def test_injection_only_in_a_subagent_file_is_reported_separately(tmp_path, session, bodies):
    main = session()
    main.prompt("explore the repo with an agent")
    main.assistant(tool=("Task", {"prompt": "explore", "subagent_type": "Explore"}, "toolu_task1"))
    main.tool_result("toolu_task1", "the agent's report")
    main_path = main.write(tmp_path / "proj" / f"{main.session_id}.jsonl")
    agent = session(session_id=main.session_id, sidechain=True, agent_id="a77")
    agent.prompt("explore", parent=None)
    agent.injection(bodies["setx"])
    agent.assistant("reading")
    agent_path = agent.write(tmp_path / "proj" / main.session_id / "subagents" / "agent-a77.jsonl")

    main_result = audit_path(main_path, subagent_files=[agent_path])
    assert main_result.stream().injections == ()
    assert statuses(main_result) == {"a": NA, "b": NA, "c": NA, "d": NA, "e": PASS, "f": NA}
    assert "1 subagent file(s)" in main_result.check("e").message

    agent_result = audit_path(agent_path)
    assert agent_result.role == "subagent" and [s.stream for s in agent_result.streams] == ["sidechain:a77"]
    assert len(agent_result.stream("sidechain:a77").injections) == 1
    assert statuses(agent_result, "sidechain:a77") == {"a": PASS, "b": PASS, "c": NA, "d": PASS, "e": PASS, "f": PASS}


def test_sidechain_lines_in_the_main_file_are_their_own_stream(tmp_path, session, bodies):
    s = session()
    prompt_with_context(s, "setx question", bodies["setx"])
    s.assistant("delegating")
    side = session(session_id=s.session_id, sidechain=True)
    side.prompt("sub task", parent=None)
    side.injection(bodies["cloudflare"])
    for line in side.lines:
        s.raw(line)
    s.last_uuid = None
    result = run(s, tmp_path)
    assert [st.stream for st in result.streams] == ["main", "sidechain"]
    assert len(result.stream("main").injections) == 1 and len(result.stream("sidechain").injections) == 1
    assert result.check("e").status == PASS and "1 sidechain stream(s)" in result.check("e").message


def test_injection_chained_across_streams_fails_e(tmp_path, session, bodies):
    s = session()
    s.prompt("main prompt")
    side = session(session_id=s.session_id, sidechain=True)
    side_prompt = side.prompt("sub task", parent=None)
    for line in side.lines:
        s.raw(line)
    s.injection(bodies["setx"], parent=side_prompt)   # a main-stream line hanging off the sidechain
    result = run(s, tmp_path)
    assert statuses(result)["e"] == FAIL and evidence_lines(result, "e") == [3]


# --------------------------------------------------------------------------- versions, truncation


def test_truncated_last_line_warns_and_is_still_audited(tmp_path, session, bodies):
    s = session()
    prompt_with_context(s, "setx question", bodies["setx"])
    assistant_turn(s)
    path = s.write(tmp_path / "s.jsonl", tail='{"parentUuid":"x","type":"assistant","message":{"content":[{"ty')
    result = audit_path(path)
    assert result.status == PASS and len(result.stream().injections) == 1
    assert [(w.line, w.kind) for w in result.warnings] == [(s.line + 1, "truncated_last_line")]
    assert result.read["truncated_last_line"] == s.line + 1


@pytest.mark.parametrize("fixture", [
    "v2.1.38-tools.jsonl", "v2.1.39-compact.jsonl", "v2.1.39-routed-silent-routed.jsonl",
    "v2.0.76-routed-silent-routed.jsonl", "v1.0.98-routed-silent-routed.jsonl", "v1.0.108-routed-silent-routed.jsonl",
])
def test_pre_attachment_fixtures_cannot_show_injections(transcript_fixtures, fixture):
    """The hook injected on two prompts of each routed session; these versions do not record it
    where the audit can count it (1.0.x: inside user lines; 2.0.76-2.1.39: nowhere)."""
    result = audit_path(transcript_fixtures / fixture, sentinel=SENTINEL)
    assert result.capability == NOT_RECORDED and not result.can_show_injections
    assert "cannot show injections" in result.capability_note
    checks = statuses(result)
    assert checks["a"] == UNKNOWN and checks["b"] == UNKNOWN and checks["d"] == UNKNOWN and checks["c"] == UNKNOWN
    assert checks["f"] == UNKNOWN
    assert result.status == UNKNOWN   # exit 0, but nothing claimed as passed, overall or per check
    assert PASS not in (checks["a"], checks["b"], checks["c"], checks["d"])


def test_pre_attachment_session_names_its_userpromptsubmit_progress_lines(tmp_path, session):
    s = session(version="2.1.38")
    s.prompt("hello")
    obj = s.envelope("progress")
    obj["data"] = {"type": "hook_progress", "hookEvent": "UserPromptSubmit", "hookName": "UserPromptSubmit",
                   "command": "memory-router hook"}
    s._add(obj)
    assistant_turn(s)
    result = run(s, tmp_path)
    check_a = result.check("a")
    assert check_a.status == UNKNOWN and "progress lines 2" in check_a.message
    assert [e.line for e in result.stream().hook_progress] == [2]


def test_sentinel_repeated_in_a_pre_attachment_transcript_still_fails(tmp_path, session):
    s = session(version="2.0.76")
    s.prompt(f"<user-prompt-submit-hook>{SENTINEL}</user-prompt-submit-hook> hi")
    s.assistant(f"noted {SENTINEL}")
    result = run(s, tmp_path, sentinel=SENTINEL)
    assert statuses(result)["c"] == FAIL and statuses(result)["a"] == UNKNOWN
    assert any("legacy" in note for note in result.stream().notes)


@pytest.mark.parametrize("versions, saw_attachment, expected", [
    ({"2.1.293": 3}, False, RECORDED),
    ({"2.1.81": 1}, False, RECORDED),
    ({"2.1.60": 1}, False, UNCERTAIN),
    ({"2.1.60": 1}, True, RECORDED),
    ({"2.1.39": 1}, False, NOT_RECORDED),
    ({"1.0.98": 1, "1.0.108": 1}, False, NOT_RECORDED),
    ({}, False, UNCERTAIN),
])
def test_capability_by_version(versions, saw_attachment, expected):
    assert capability_of(versions, saw_attachment)[0] == expected


def test_empty_transcript_has_nothing_to_audit(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    result = audit_path(path)
    assert result.streams == () and result.status == PASS


# --------------------------------------------------------------------------- helpers for other modules


def test_result_to_dict_is_json_serialisable(tmp_path, session, bodies):
    s = session()
    prompt_with_context(s, "setx", bodies["setx"])
    data = result_to_dict(audit_session(read_session(s.write(tmp_path / "s.jsonl")), SENTINEL, path="x.jsonl"))
    text = json.dumps(data)
    assert json.loads(text)["streams"][0]["prompts"][0]["injections"][0]["cluster_ids"] == ["env-vars"]
    assert [c["id"] for c in data["streams"][0]["checks"]] == ["a", "b", "c", "d", "e", "f"]


@pytest.mark.parametrize("body, flagged", [
    ("short hook context: BLUE-42 x", True),        # 29 chars: searched (keyed by itself)
    ("ctx BLUE-42", False),                          # under MIN_RESEND_CHARS: too common to attribute
])
def test_short_injected_texts_embedded_later(tmp_path, session, body, flagged):
    s = session()
    s.prompt("hello")
    s.injection(body)
    s.assistant(f"As noted: {body}.")
    result = run(s, tmp_path)
    assert (statuses(result)["b"] == FAIL) is flagged
    if flagged:
        assert evidence_lines(result, "b") == [3]


def test_many_injections_memory_is_digests_not_texts(tmp_path, session):
    """Later lines are checked against every earlier injection, found by content."""
    s = session()
    for i in range(40):
        s.prompt(f"prompt {i}")
        s.injection(f"Routed memory cluster: c{i}\n- slug-{i} \u2014 fact number {i} " + "x" * 80)
        s.assistant("ok")
    s.tool_call("Bash", {"command": "cat"}, "noise\nRouted memory cluster: c17\n- slug-17 \u2014 fact number 17 "
                + "x" * 80 + "\nmore noise")
    result = run(s, tmp_path)
    assert statuses(result)["a"] == PASS
    assert evidence_lines(result, "b") == [s.line]
    assert "injected at line 53" in result.check("b").evidence[0].note


# One line as 2.1.328 writes it when its own memory selector recalled a topic file (shortened body;
# the same shape tests/harness/doctor/test_selector.py uses).
SELECTOR_LINE = {"parentUuid": "a1", "isSidechain": False, "type": "attachment", "uuid": "b2", "version": "2.1.328",
                 "attachment": {"type": "relevant_memories", "memories": [{
                     "path": "/h/.claude/projects/-p/memory/env_bash_tool_env_var_caching.md",
                     "content": "---\nname: env_bash_tool_env_var_caching\n---\nsetx never reaches the Bash tool\n",
                     "mtimeMs": 1796160623297.3225, "header": "Memory: /h/.claude/projects/-p/memory/x.md"}]}}


@pytest.mark.parametrize("with_selector", [False, True], ids=["router-alone", "selector-beside-router"])
def test_the_audit_warns_when_claude_codes_own_memory_selector_ran_beside_the_router(tmp_path, with_selector):
    """Issue 23 item 4: a session where the built-in selector ran (its relevant_memories attachment)
    beside the router gets one warning naming how to turn one off; the checks themselves are unchanged."""
    real = session_file("2.1.328", "routed-silent-routed").read_text(encoding="utf-8")
    path = tmp_path / "session.jsonl"
    path.write_text(real + (json.dumps(SELECTOR_LINE) + "\n" if with_selector else ""), encoding="utf-8")
    result = audit_path(path)
    found = [w for w in result.warnings if w.kind == "memory_selector"]
    assert result.status == PASS
    if with_selector:
        assert len(found) == 1 and found[0].line == real.count("\n") + 1
        assert "CLAUDE_MEMORY_STORES" in found[0].message and "memory-router uninstall" in found[0].message
        assert result_to_dict(result)["warnings"][-1]["kind"] == "memory_selector"
    else:
        assert found == []
