"""The behavioural verdict on sessions built in the 2.1.293 shape, and on the real fixtures.

The attachment lines are copies of a real 2.1.293 UserPromptSubmit line (the first
``hook_additional_context`` line of tests/fixtures/transcripts/v2.1.293-routed-silent-routed.jsonl,
same keys in the same order) carrying the text the router really emits for the case's prompt; typed prompt
lines follow claude-code-formats.md §2.4; assistant lines carry message.content text blocks.
"""

import pytest

from canaries.verdict import (
    FAIL,
    INCONCLUSIVE,
    PASS,
    HotStripEvidence,
    first_turn_entries,
    judge,
)
from support.verdict_sessions import (
    CASE,
    CLEAN,
    CWD,
    MEMORY_DIR,
    REAL_LINE,
    RIGHT,
    SLIM,
    SLUG,
    WRONG,
    Session,
    entries_of,
    lines_of,
    router_context,
    standard,
    verdict_of,
)
from transcripts.reader import read_session


# --------------------------------------------------------------------------- shape of the built lines


def test_built_attachment_line_has_the_real_lines_keys(tmp_path):
    session = standard()
    assert list(session.lines[1]) == list(REAL_LINE)
    assert list(session.lines[1]["attachment"]) == list(REAL_LINE["attachment"])
    entries = entries_of(session, tmp_path)
    assert [e.kind for e in entries] == ["prompt", "injection", "assistant"]
    assert SLUG in entries[1].text and entries[1].text.startswith("Routed memory cluster")


# --------------------------------------------------------------------------- PASS / FAIL


def test_pass(tmp_path):
    result = verdict_of(standard(), tmp_path)
    assert result.verdict == PASS and result.exit_code == 0
    assert result.version == "2.1.293" and result.session_id == "d6b06b53-fc7b-4a57-9e93-333e04c29f19"
    evidence = lines_of(result)
    assert evidence[1] == "first typed prompt"
    assert SLUG in evidence[2] and "carries" in evidence[2]
    assert "expected 'Text'" in evidence[3] or "expected 'Plaintext'" in evidence[3]
    assert result.details["injection"]["parent_matches"] is True


def test_pass_with_reflowed_prompt_and_harmless_tools(tmp_path):
    session = Session()
    session.prompt("  " + CASE.prompt.replace(" ", "\n", 3) + "\n")
    session.injection(router_context())
    session.tool_use("Read", {"file_path": f"{CWD}/wrangler.toml"})
    session.tool_result("[vars]\nPUBLIC_API = ''")
    session.reply(RIGHT)
    session.tool_use("Read", {"file_path": f"{MEMORY_DIR}/MEMORY.md"})  # after the answer: does not matter
    assert verdict_of(session, tmp_path).verdict == PASS


def test_fail_on_the_confabulation(tmp_path):
    result = verdict_of(standard(reply=WRONG), tmp_path)
    assert result.verdict == FAIL and result.exit_code == 1
    assert "confabulation" in result.reasons[0] and "'use a Secret'" in result.reasons[0]
    assert lines_of(result)[3] == "reply says forbidden 'use a Secret'"


def test_confabulation_stays_fail_even_when_contaminated(tmp_path):
    hot = HotStripEvidence(MEMORY_DIR + "/MEMORY.md", SLIM + f"- {SLUG} \u2014 x\n")
    assert verdict_of(standard(reply=WRONG), tmp_path, hot=hot).verdict == FAIL


def test_fail_without_router_injection(tmp_path):
    session = Session()
    session.prompt(CASE.prompt)
    session.reply(RIGHT)
    result = verdict_of(session, tmp_path)
    assert result.verdict == FAIL and "did not deliver" in result.reasons[0]


def test_fail_when_injection_misses_the_fact(tmp_path):
    session = Session()
    session.prompt(CASE.prompt)
    session.injection(router_context("I set an environment variable with setx but the Bash tool still can't "
                                     "see it").replace(f"- {SLUG} ", "- someone_else "))
    session.reply(RIGHT)
    result = verdict_of(session, tmp_path)
    assert result.verdict == FAIL and "not to the fact" in result.reasons[0]


def test_fail_without_an_expected_phrase(tmp_path):
    result = verdict_of(standard(reply="Hard to say; check the Cloudflare dashboard logs."), tmp_path)
    assert result.verdict == FAIL and "none of the expected phrases" in result.reasons[0]


# --------------------------------------------------------------------------- INCONCLUSIVE


@pytest.mark.parametrize("hot, phrase", [
    (HotStripEvidence(MEMORY_DIR + "/MEMORY.md", SLIM.replace("- env_bash_tool_env_var_caching", f"- {SLUG}")),
     "names env_cloudflare"),
    (HotStripEvidence(MEMORY_DIR + "/MEMORY.md", SLIM, config_hot=(SLUG,)), "configured hot_strip"),
    (HotStripEvidence(MEMORY_DIR + "/MEMORY.md", SLIM, flagged_hot=(SLUG,)), "hot: true"),
    (HotStripEvidence(MEMORY_DIR + "/MEMORY.md", SLIM + "- cf \u2014 a PUBLIC_ build-time variable set as a Secret "
                      "is undefined in the Workers build: set its type to Text (Plaintext)\n"), "hook text"),
])
def test_inconclusive_on_hot_strip_leak(tmp_path, hot, phrase):
    result = verdict_of(standard(), tmp_path, hot=hot)
    assert result.verdict == INCONCLUSIVE and result.exit_code == 3
    assert "always loaded" in result.reasons[0]
    assert any(phrase in e.what for e in result.evidence)


@pytest.mark.parametrize("hot, phrase", [
    (HotStripEvidence(), "no MEMORY.md found"),
    (HotStripEvidence(MEMORY_DIR + "/MEMORY.md", SLIM, changed_after=True), "changed after the session started"),
])
def test_inconclusive_when_the_loaded_index_is_unknown(tmp_path, hot, phrase):
    result = verdict_of(standard(), tmp_path, hot=hot)
    assert result.verdict == INCONCLUSIVE and phrase in result.reasons[0]


@pytest.mark.parametrize("name, tool_input, result_text, phrase", [
    ("Read", {"file_path": f"{MEMORY_DIR}/{SLUG}.md"}, "---\nname: cf\n---\nUse Text.", "names the fact's slug"),
    ("Read", {"file_path": f"{MEMORY_DIR}/MEMORY.md"}, SLIM, "touches the memory store"),
    ("Grep", {"pattern": "PUBLIC_", "path": MEMORY_DIR}, "no matches", "touches the memory store"),
    ("Bash", {"command": "cat ~/.claude/projects/-home-marek-aria/memory/*.md"}, "...", "touches the memory store"),
    ("Read", {"file_path": "C:\\Users\\marek\\.claude\\projects\\C--aria\\memory\\MEMORY.md"}, "...",
     "touches the memory store"),
    ("Grep", {"pattern": "PUBLIC_", "path": CWD}, f"brain/memory-layer1-clusters.md:88:- {SLUG} \u2014 use Text",
     "a tool result names the fact's slug"),
    ("Task", {"description": "research", "prompt": "why is PUBLIC_ undefined?"}, "Use Text.", "subagent call"),
    ("Agent", {"prompt": "look it up"}, "Use Text.", "subagent call"),
    ("WebSearch", {"query": "cloudflare workers build env var secret undefined"}, "...", "web lookup"),
])
def test_inconclusive_when_the_fact_could_arrive_another_way(tmp_path, name, tool_input, result_text, phrase):
    session = Session()
    session.prompt(CASE.prompt)
    session.injection(router_context())
    use_line = session.tool_use(name, tool_input)
    session.tool_result(result_text)
    session.reply(RIGHT)
    result = verdict_of(session, tmp_path)
    assert result.verdict == INCONCLUSIVE
    assert "another way" in result.reasons[0]
    hits = [e for e in result.evidence if phrase in e.what]
    assert hits and hits[0].line in (use_line, use_line + 1)


def test_router_raw_json_line_is_not_another_way(tmp_path):
    session = Session()
    session.prompt(CASE.prompt)
    session.hook_success_json(router_context())
    session.injection(router_context())
    session.reply(RIGHT)
    assert verdict_of(session, tmp_path).verdict == PASS


def test_another_hook_naming_the_fact_is_another_way(tmp_path):
    session = Session()
    session.prompt(CASE.prompt)
    session.injection(router_context())
    session.injection(f"project notes: see {SLUG}")
    session.reply(RIGHT)
    result = verdict_of(session, tmp_path)
    assert result.verdict == INCONCLUSIVE and lines_of(result)[3].startswith("another UserPromptSubmit hook")


def test_inconclusive_when_injection_only_in_a_sidechain(tmp_path):
    session = Session()
    session.prompt(CASE.prompt)
    side = session.injection(router_context(), sidechain=True, agent_id="a2898e3")
    session.reply(RIGHT)
    result = verdict_of(session, tmp_path)
    assert result.verdict == INCONCLUSIVE and "only in a sidechain" in result.reasons[0]
    assert "sidechain:a2898e3" in lines_of(result)[side]


def test_inconclusive_when_injection_only_in_a_subagent_file(tmp_path):
    main_session = Session()
    main_session.prompt(CASE.prompt)
    main_session.reply(RIGHT)
    sub = Session()
    sub.prompt("sub-task")
    sub.injection(router_context(), sidechain=True, agent_id="b1")
    sub_entries = list(read_session(sub.write(tmp_path / "agent-b1.jsonl")))
    result = verdict_of(main_session, tmp_path, subagent_entries=sub_entries)
    assert result.verdict == INCONCLUSIVE and "only in a sidechain" in result.reasons[0]


def test_inconclusive_when_the_injection_comes_only_after_the_answer(tmp_path):
    """A router injection recorded after the reply already stated the fact cannot be its source."""
    session = Session()
    session.prompt(CASE.prompt)
    answer = session.reply(RIGHT)
    late = session.injection(router_context())
    result = verdict_of(session, tmp_path)
    assert result.verdict == INCONCLUSIVE and result.exit_code == 3
    assert result.details["injection"]["late"] is True
    assert any(f"(line {answer}) before the injection" in reason for reason in result.reasons)
    assert "comes after the reply's first expected phrase" in lines_of(result)[late]
    # The same lines with the injection before the answer are a PASS (the control).
    assert verdict_of(standard(), tmp_path).verdict == PASS


def test_inconclusive_on_a_pre_attachment_transcript(tmp_path):
    session = Session(version="2.1.38")
    session.prompt(CASE.prompt)
    session.hook_progress()
    session.reply(RIGHT)
    result = verdict_of(session, tmp_path)
    assert result.verdict == INCONCLUSIVE and "cannot show injections" in result.reasons[0]
    assert result.details["injections_visible"] == "not-recorded"


def test_inconclusive_in_the_uncertain_version_band(tmp_path):
    session = Session(version="2.1.60")
    session.prompt(CASE.prompt)
    session.reply(RIGHT)
    assert verdict_of(session, tmp_path).verdict == INCONCLUSIVE


@pytest.mark.parametrize("build, phrase", [
    (lambda s: (s.prompt("hello"), s.reply("hi"), s.prompt(CASE.prompt), s.injection(router_context()),
                s.reply(RIGHT)), "not the case's prompt"),
    (lambda s: (s.prompt(CASE.prompt), s.injection(router_context())), "no assistant reply"),
    (lambda s: None, "no typed prompt"),
])
def test_inconclusive_when_not_a_run_of_this_case(tmp_path, build, phrase):
    session = Session()
    build(session)
    if not session.lines:
        session.hook_progress()
    result = verdict_of(session, tmp_path)
    assert result.verdict == INCONCLUSIVE and phrase in result.reasons[0]


def test_inconclusive_when_the_forbidden_phrase_is_negated(tmp_path):
    reply = "Don't use a Secret for build-time values: set its type to Text instead."
    result = verdict_of(standard(reply=reply), tmp_path)
    assert result.verdict == INCONCLUSIVE and "only after a negation" in result.reasons[0]
    assert result.details["reply"]["forbidden_negated"] == {"use a Secret": 3}


def test_real_fixtures_are_never_pass(transcript_fixtures):
    for path in sorted(transcript_fixtures.glob("*.jsonl")):
        result = judge(first_turn_entries(read_session(path)), CASE, hot=CLEAN)
        assert result.verdict == INCONCLUSIVE, path.name
