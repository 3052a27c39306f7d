"""The behavioural verdict on sessions built in the 2.1.293 shape, and on the real fixtures.

The attachment lines are copies of the one real 2.1.293 UserPromptSubmit line
(../shared/fixtures/transcripts/v2.1.293-userpromptsubmit-additional-context-line.jsonl, same keys
in the same order) carrying the text the router really emits for the case's prompt; typed prompt
lines follow claude-code-formats.md §2.4; assistant lines carry message.content text blocks.
"""

import copy
import functools
import json
import os
import pathlib
import uuid

import pytest

from canaries.suite import load_suite
from canaries.verdict import (
    FAIL,
    INCONCLUSIVE,
    PASS,
    HotStripEvidence,
    find_phrases,
    first_turn_entries,
    forbidden_hits,
    judge,
    member_line,
)
from harness.verdict_cli import append_record
from harness.cli import main
from router.clusterfile import load_cluster_file
from router.config import bundled_cluster_file, default_settings
from router.score import build_routing_table, route_prompt
from transcripts.reader import read_session

FIXTURES = pathlib.Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "transcripts"
REAL_LINE = json.loads((FIXTURES / "v2.1.293-userpromptsubmit-additional-context-line.jsonl").read_text())
SPEC = pathlib.Path(__file__).resolve().parents[2] / "canaries" / "spec.yaml"
CASE = load_suite(SPEC).behavioural_case("cloudflare-cold")
SLUG = CASE.fact
CWD = "/home/marek/aria"
MEMORY_DIR = "/home/marek/.claude/projects/-home-marek-aria/memory"
RIGHT = "Because Secrets are not visible at build time. Fix: set that variable's type to Text (or Plaintext) " \
        "instead of Secret, then redeploy."
WRONG = "Build-time variables must be encrypted: use a Secret and read it with env.PUBLIC_X in the build."
SLIM = "# Memory Index\n\n## Always-loaded (confabulation catchers)\n\n- env_bash_tool_env_var_caching \u2014 " \
       "setx vars never reach the Bash tool\n\n## Cluster router (routed on demand)\n\n" \
       "- layer1_project_memory_router (9) \u2014 behaviour, caching \u2014 memory router saga\n"


@functools.lru_cache(maxsize=None)
def router_context(prompt=CASE.prompt):
    table = build_routing_table(load_cluster_file(bundled_cluster_file()))
    return route_prompt(prompt, table, default_settings())["additional_context"]


class Session:
    """Lines of one session; each method appends one line and returns its 1-based number."""

    def __init__(self, version="2.1.293", session_id="d6b06b53-fc7b-4a57-9e93-333e04c29f19"):
        self.version = version
        self.session_id = session_id
        self.lines = []
        self.last = None
        self.clock = 0

    def _envelope(self, kind, sidechain=False, agent_id=None, parent=None):
        self.clock += 1
        line = {"parentUuid": parent if parent is not None else self.last, "isSidechain": sidechain}
        if agent_id:
            line["agentId"] = agent_id
        line.update({"type": kind, "uuid": str(uuid.uuid4()),
                     "timestamp": f"2026-10-08T11:{self.clock // 60:02d}:{self.clock % 60:02d}.000Z",
                     "userType": "external", "entrypoint": "cli", "cwd": CWD, "sessionId": self.session_id,
                     "version": self.version, "gitBranch": "main"})
        return line

    def _add(self, line):
        self.lines.append(line)
        if not line.get("isSidechain"):
            self.last = line["uuid"]
        return len(self.lines)

    def prompt(self, text):
        line = self._envelope("user")
        line.update({"promptId": str(uuid.uuid4()), "message": {"role": "user", "content": text},
                     "permissionMode": "default", "promptSource": "typed"})
        return self._add(line)

    def injection(self, text, sidechain=False, agent_id=None):
        line = copy.deepcopy(REAL_LINE)
        envelope = self._envelope("attachment", sidechain, agent_id)
        for key in ("parentUuid", "isSidechain", "uuid", "timestamp", "sessionId", "version"):
            line[key] = envelope[key]
        line["cwd"] = CWD
        if agent_id:
            line["agentId"] = agent_id
        line["attachment"]["content"] = [text]
        line["attachment"]["toolUseID"] = f"hook-{uuid.uuid4()}"
        line["rendered"] = [{"content": f"<system-reminder>\nUserPromptSubmit hook additional context: {text}\n"
                                        "</system-reminder>"}]
        return self._add(line)

    def hook_success_json(self, context):
        line = self._envelope("attachment")
        stdout = json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": context}})
        line["attachment"] = {"type": "hook_success", "hookName": "UserPromptSubmit", "toolUseID": "hook-1",
                              "hookEvent": "UserPromptSubmit", "content": "", "stdout": stdout, "stderr": "",
                              "exitCode": 0, "command": "/v/bin/memory-router hook", "durationMs": 40}
        return self._add(line)

    def _assistant(self, block, sidechain=False, agent_id=None):
        line = self._envelope("assistant", sidechain, agent_id)
        line.update({"message": {"model": "claude-opus-4-5-20251101", "id": f"msg_{uuid.uuid4().hex[:20]}",
                                 "type": "message", "role": "assistant", "content": [block], "stop_reason": None,
                                 "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 40}},
                     "requestId": f"req_{uuid.uuid4().hex[:20]}"})
        return self._add(line)

    def reply(self, text, **kw):
        return self._assistant({"type": "text", "text": text}, **kw)

    def tool_use(self, name, tool_input):
        self.tool_id = f"toolu_{uuid.uuid4().hex[:20]}"
        return self._assistant({"type": "tool_use", "id": self.tool_id, "name": name, "input": tool_input})

    def tool_result(self, content):
        line = self._envelope("user")
        line.update({"message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": self.tool_id, "content": content}]},
            "toolUseResult": {"stdout": content}, "sourceToolAssistantUUID": self.last})
        return self._add(line)

    def hook_progress(self):
        line = self._envelope("progress")
        line.update({"data": {"type": "hook_progress", "hookEvent": "UserPromptSubmit",
                              "hookName": "UserPromptSubmit", "command": "memory-router hook"},
                     "parentToolUseID": "x", "toolUseID": "x"})
        return self._add(line)

    def write(self, path):
        path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in self.lines), encoding="utf-8")
        return path


def entries_of(session, tmp_path):
    return list(read_session(session.write(tmp_path / f"{session.session_id}.jsonl")))


CLEAN = HotStripEvidence(memory_path=MEMORY_DIR + "/MEMORY.md", memory_text=SLIM)


def standard(session=None, reply=RIGHT):
    session = session or Session()
    session.prompt(CASE.prompt)
    session.injection(router_context())
    session.reply(reply)
    return session


def verdict_of(session, tmp_path, hot=CLEAN, **kw):
    return judge(entries_of(session, tmp_path), CASE, hot=hot, watch_paths=(MEMORY_DIR,), **kw)


def lines_of(result):
    return {e.line: e.what for e in result.evidence if e.line is not None}


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


# --------------------------------------------------------------------------- phrase matching


@pytest.mark.parametrize("phrases, text, found", [
    (["Text"], "set it to text", ["Text"]),
    (["Text"], "the build context is empty; plaintext too", []),
    (["Plaintext"], "use Plaintext.", ["Plaintext"]),
    (["reboot didn't fix"], "even a full reboot didn\u2019t fix it", ["reboot didn't fix"]),
    (["user-opened terminal"], "check in a user-opened\nterminal", ["user-opened terminal"]),
    (["user-opened terminal"], "check in a user opened terminal", []),
    (["restart the session"], "just restart the\nsession", ["restart the session"]),
])
def test_find_phrases(phrases, text, found):
    assert find_phrases(phrases, text) == found


@pytest.mark.parametrize("text, negated", [
    ("You should restart the session.", False),
    ("You don't need to restart the session.", True),
    ("No. Restart the session.", False),
    ("Rather than restart the session, open a new terminal.", True),
    ("Never restart the session for this. Then restart the session anyway.", False),
])
def test_forbidden_hits_negation(text, negated):
    assert forbidden_hits(["restart the session"], text) == {"restart the session": negated}


def test_member_line():
    text = router_context()
    line, hook = member_line(text, SLUG)
    assert line.startswith(f"- {SLUG} \u2014 ") and hook in line
    assert member_line(text, "env_cloudflare") is None


# --------------------------------------------------------------------------- the CLI


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def write_project_session(tmp_path, session, memory_text=SLIM):
    """Claude Code's layout: <config>/projects/<key>/<session>.jsonl beside <key>/memory/MEMORY.md."""
    folder = tmp_path / "claude" / "projects" / "-home-marek-aria"
    (folder / "memory").mkdir(parents=True)
    (folder / "memory" / "MEMORY.md").write_text(memory_text)
    stamp = 1_790_000_000  # 2026-09-21, before the built session's timestamps
    os.utime(folder / "memory" / "MEMORY.md", (stamp, stamp))
    return session.write(folder / f"{session.session_id}.jsonl")


@pytest.mark.parametrize("reply, memory_text, code, verdict", [
    (RIGHT, SLIM, 0, "PASS"),
    (WRONG, SLIM, 1, "FAIL"),
    (RIGHT, SLIM + f"- {SLUG} \u2014 x\n", 3, "INCONCLUSIVE"),
])
def test_cli_exit_codes_and_record(capsys, tmp_path, reply, memory_text, code, verdict):
    transcript = write_project_session(tmp_path, standard(reply=reply), memory_text)
    record = tmp_path / "records" / "behavioural.jsonl"
    result, out, _ = run(capsys, "canary", "verdict", transcript, "--case", "cloudflare-cold", "--record", record)
    assert result == code and verdict in out
    result, out, _ = run(capsys, "canary", "verdict", transcript, "--case", "cloudflare-cold", "--record", record,
                         "--json")
    report = json.loads(out)
    assert result == code and report["verdict"] == verdict and report["exit_code"] == code
    assert report["memory_dir"] == str(transcript.parent / "memory")
    import jsonlines

    with jsonlines.open(record) as reader:  # the record is valid JSONL, one object per line
        lines = list(reader)
    assert len(lines) == 2
    for line in lines:
        assert {"date", "case", "verdict", "claude_code_version", "session_id"} <= set(line)
        assert (line["case"], line["verdict"], line["claude_code_version"]) == ("cloudflare-cold", verdict, "2.1.293")
        assert line["session_id"] == "d6b06b53-fc7b-4a57-9e93-333e04c29f19"
        assert line["date"].endswith("Z") and line["evidence"]


def test_cli_memory_dir_option_and_changed_memory(capsys, tmp_path):
    transcript = write_project_session(tmp_path, standard())
    os.utime(transcript.parent / "memory" / "MEMORY.md")  # touched now: after the session started
    code, out, _ = run(capsys, "canary", "verdict", transcript, "--case", "cloudflare-cold", "--json")
    assert code == 3 and "changed after the session started" in json.loads(out)["reasons"][0]
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "MEMORY.md").write_text(SLIM)
    os.utime(other / "MEMORY.md", (1_790_000_000, 1_790_000_000))
    code, out, _ = run(capsys, "canary", "verdict", transcript, "--case", "cloudflare-cold", "--memory-dir", other)
    assert code == 0


def test_cli_finds_subagent_files(capsys, tmp_path):
    session = Session()
    session.prompt(CASE.prompt)
    session.reply(RIGHT)
    transcript = write_project_session(tmp_path, session)
    sub = Session()
    sub.prompt("sub-task")
    sub.injection(router_context(), sidechain=True, agent_id="c3")
    folder = transcript.with_suffix("") / "subagents"
    folder.mkdir(parents=True)
    sub.write(folder / "agent-c3.jsonl")
    code, out, _ = run(capsys, "canary", "verdict", transcript, "--case", "cloudflare-cold")
    assert code == 3 and "sidechain" in out


@pytest.mark.parametrize("args, phrase", [
    (["--case", "nope"], "cloudflare-cold"),
    (["--case", "cloudflare-cold", "--suite", "/nonexistent/suite.yaml"], "suite.yaml"),
])
def test_cli_input_errors(capsys, tmp_path, args, phrase):
    transcript = write_project_session(tmp_path, standard())
    code, _, err = run(capsys, "canary", "verdict", transcript, *args)
    assert code == 2 and phrase in err


def test_cli_missing_transcript(capsys, tmp_path):
    code, _, err = run(capsys, "canary", "verdict", tmp_path / "none.jsonl", "--case", "cloudflare-cold")
    assert code == 2 and "none.jsonl" in err


@pytest.mark.parametrize("where", ["a-directory", "under-a-file"])
def test_cli_unwritable_record_is_input_error_not_a_traceback(capsys, tmp_path, where):
    transcript = write_project_session(tmp_path, standard())
    blocker = tmp_path / "blocker"
    if where == "a-directory":
        blocker.mkdir()
        record = blocker
    else:
        blocker.write_text("keep me\n")
        record = blocker / "records.jsonl"
    code, _, err = run(capsys, "canary", "verdict", transcript, "--case", "cloudflare-cold", "--record", record)
    assert code == 2  # never 1, which would read as a FAIL verdict
    assert f"{record}: cannot append the verdict (PASS)" in err and "fix:" in err and "Traceback" not in err
    if where == "under-a-file":
        assert blocker.read_text() == "keep me\n"


def test_append_record_repairs_a_cut_last_line(tmp_path):
    record = tmp_path / "r.jsonl"
    record.write_bytes(b'{"verdict": "PASS"}\n{"verdict": "FA')
    append_record(record, {"verdict": "FAIL"})
    lines = record.read_bytes().split(b"\n")
    assert lines[:2] == [b'{"verdict": "PASS"}', b'{"verdict": "FA']
    assert json.loads(lines[2]) == {"verdict": "FAIL"} and lines[3] == b""
