"""transcripts.replay: sessions chosen, read and replayed through the router as the hook would."""

import json
import os

import pytest

from harness.context import context_for
from router.errors import InputError
from support.replay_sessions import write_session
from transcripts import replay as rp
from transcripts.evidence import session_evidence, session_transcripts

SETX = "I ran setx FOO bar in cmd but the Bash tool still says FOO is empty, do I need to restart?"
SETX_SLUG = "env_bash_tool_env_var_caching"
QUIET = "can you explain what a closure is in JavaScript?"
# A prompt the bundled store does not route: the memory read after it is a miss.
UNROUTED = "thanks, that worked!"
CLOUDFLARE = "the Cloudflare Workers build says PUBLIC_API_URL is undefined but I set it as a secret"


@pytest.fixture
def ctx():
    return context_for(None, None, quiet=True)


def replay(path, ctx):
    slugs = {m.slug for m in ctx.index.members}
    session = session_evidence(path, slugs, scored_chars=ctx.settings["max_prompt_chars"])
    return rp.replay_session(session, ctx.table, ctx.settings, ctx.cluster_path)


def test_a_memory_sent_at_its_prompt_meets_the_need(tmp_path, ctx):
    path = write_session(tmp_path, "s-sent", [(SETX, [SETX_SLUG])])
    _session, prompts = replay(path, ctx)
    [prompt] = prompts
    assert SETX_SLUG in prompt.sent
    assert [(n.slug, n.how, n.met) for n in prompt.needs] == [(SETX_SLUG, "read", rp.SENT)]
    assert prompt.sent_bytes > 0 and prompt.sent_lines == len(prompt.sent)


def test_a_memory_sent_earlier_is_held_until_a_compaction(tmp_path, ctx):
    # Sent at prompt 1; prompt 2 does not route but reads it: held. After /compact the last routed
    # prompt's lines are sent again by SessionStart, so it is still held; a compaction after a
    # prompt that routed nothing (no pending lines) forgets it.
    path = write_session(tmp_path, "s-held", [(SETX, []), (UNROUTED, [SETX_SLUG])])
    _session, prompts = replay(path, ctx)
    assert prompts[1].routed == () and [n.met for n in prompts[1].needs] == [rp.HELD]

    path = write_session(tmp_path, "s-compact", [(SETX, []), (UNROUTED, []), "compact", (UNROUTED, [SETX_SLUG])])
    session, prompts = replay(path, ctx)
    assert [t.compacted for t in session.turns] == [False, True, False, False]
    assert session.skipped_turns == 1          # /compact is a slash command: not routed
    assert [n.met for n in prompts[-1].needs] == [None]


def test_after_a_compaction_the_pending_lines_are_held_again(tmp_path, ctx):
    path = write_session(tmp_path, "s-resent", [(SETX, []), (SETX, []), "compact", (UNROUTED, [SETX_SLUG])])
    session, prompts = replay(path, ctx)
    # Prompt 2 found its lines held (pending); SessionStart sends them again after the compaction.
    assert session.turns[1].compacted and session.turns[1].resent_bytes > 0
    assert [n.met for n in prompts[-1].needs] == [rp.HELD]


def test_a_memory_never_routed_is_a_miss_with_the_routers_why(tmp_path, ctx):
    path = write_session(tmp_path, "s-miss", [(UNROUTED, [SETX_SLUG])])
    _session, [prompt] = replay(path, ctx)
    assert prompt.routed == () and [n.met for n in prompt.needs] == [None]
    assert prompt.explanation     # route's one-line why


def test_calls_are_the_sessions_own(tmp_path, ctx):
    # One reply call per prompt, plus one per Read: the transcript's distinct message ids.
    path = write_session(tmp_path, "s-calls", [(SETX, [SETX_SLUG, "env_windows_runner_shell_default"]), (QUIET, [])])
    session, _prompts = replay(path, ctx)
    assert [t.calls for t in session.turns] == [3, 1]


def test_calls_of_a_real_2_1_328_session(transcript_fixtures):
    session = session_evidence(transcript_fixtures / "v2.1.328-tools.jsonl", set())
    # msg_lab0001..0004 answer the first prompt (a text row and a tool_use row share 0001 and 0002).
    assert [p.calls for p in session.prompts][:2] == [4, 3]
    # /cost's "No response requested." is a <synthetic> reply Claude Code wrote itself: no call.
    assert [p.calls for p in session_evidence(transcript_fixtures / "v2.1.39-tools.jsonl", set()).prompts] == [4, 3, 0, 1]
    compacted = session_evidence(transcript_fixtures / "v2.1.328-compact.jsonl", set())
    assert [p.compacted for p in compacted.prompts] == [True, False, False]
    assert compacted.cwd == "/home/dev/code/demo"


def test_a_long_prompt_is_kept_as_the_router_scores_it(tmp_path, ctx):
    long = "setx " + "x" * 30000 + " Bash tool"
    path = write_session(tmp_path, "s-long", [(long, [])])
    kept = session_evidence(path, set(), scored_chars=200).prompts[0].prompt
    assert kept == long[:100] + "\n" + long[-100:]
    assert session_evidence(path, set()).prompts[0].prompt == long[:8000]   # learn's cut is unchanged


def test_selection_by_session_since_and_limit(tmp_path, ctx):
    old = write_session(tmp_path, "aaaa-old", [(SETX, [])], start=1700000000.0)
    new = write_session(tmp_path, "bbbb-new", [(QUIET, [])], start=1800000000.0)
    os.utime(old, (1, 1))
    files = session_transcripts(tmp_path)
    slugs = {m.slug for m in ctx.index.members}

    def ids(**kw):
        return [s.session_id for s in rp.read_sessions(files, slugs, **kw)]

    assert ids() == ["aaaa-old", "bbbb-new"]                      # oldest first
    assert ids(session="bbbb") == ["bbbb-new"]
    assert ids(since=rp.parse_since("2025-01-01")) == ["bbbb-new"]
    assert ids(limit=1) == ["bbbb-new"]
    with pytest.raises(InputError, match="--since"):
        rp.parse_since("last tuesday")
    with pytest.raises(InputError, match="--limit"):
        ids(limit=0)


def test_a_renamed_session_file_is_found_by_the_id_inside(tmp_path, ctx):
    path = write_session(tmp_path, "cafe-1234", [(SETX, [])])
    path.rename(tmp_path / "copy.jsonl")
    found = list(rp.read_sessions([str(tmp_path / "copy.jsonl")], set(), session="cafe"))
    assert [s.session_id for s in found] == ["cafe-1234"]


def test_a_damaged_line_is_counted_and_named_by_line(tmp_path, ctx):
    path = write_session(tmp_path, "s-damaged", [(SETX, []), (QUIET, [])])
    lines = path.read_text().splitlines()
    lines[2] = '{"type": "user", broken'
    path.write_text("\n".join(lines) + "\n")
    session, prompts = replay(path, ctx)
    assert session.reader["bad_lines"] == 1
    assert [(d.line, d.kind) for d in session.diagnostics] == [(3, "bad_line")]
    assert len(prompts) == 1          # the damaged line was the first prompt; the second is read


def test_a_file_that_is_no_transcript_is_skipped_with_why(tmp_path, ctx):
    junk = tmp_path / "junk.jsonl"
    junk.write_text("not json\n")
    skipped = []
    assert list(rp.read_sessions([str(junk)], set(), skipped=skipped)) == []
    assert skipped and skipped[0][0] == str(junk) and "not a Claude Code transcript" in skipped[0][1]


def test_transcript_files_default_is_the_projects_directory(tmp_path, monkeypatch):
    project = tmp_path / "proj"
    project.mkdir()
    config = tmp_path / "claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    with pytest.raises(InputError, match="no Claude Code transcripts for this project"):
        rp.transcript_files([], str(project))
    key_dir = config / "projects" / str(project).replace("/", "-").replace(".", "-").replace("_", "-")
    key_dir.mkdir(parents=True)
    write_session(key_dir, "s1", [(SETX, [])])
    files, read = rp.transcript_files([], str(project))
    assert [os.path.basename(f) for f in files] == ["s1.jsonl"] and read == [str(key_dir)]


def test_needs_leave_out_what_the_hook_of_the_time_injected(tmp_path):
    # A memory the old hook injected for the prompt and the agent then named is not a need.
    lines = [{"type": "user", "message": {"role": "user", "content": SETX}, "uuid": "u1", "sessionId": "s",
              "version": "2.1.328", "timestamp": "2026-11-30T17:16:32.108Z"},
             {"type": "attachment", "attachment": {"type": "hook_additional_context", "hookEvent": "UserPromptSubmit",
                                                   "hookName": "UserPromptSubmit",
                                                   "content": [f"Routed memory cluster: c\n- {SETX_SLUG} \u2014 x"]}},
             {"type": "assistant", "message": {"id": "m1", "role": "assistant",
                                               "content": [{"type": "text", "text": f"See {SETX_SLUG}."}]}}]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    session = session_evidence(path, {SETX_SLUG})
    assert rp.needs_of(session.prompts[0]) == []


def test_replay_sends_what_the_hook_sends(tmp_path, ctx):
    """The same prompts typed into the real hook (router.hooks.hook.decide, with its session record
    file in the test's cache directory) send the same lines, prompt by prompt."""
    from router.hooks.hook import decide
    from transcripts.sightings import injected_slugs

    steps = [(SETX, []), (SETX, []), (CLOUDFLARE, []), (QUIET, []), (SETX + " again", []), (CLOUDFLARE, [])]
    path = write_session(tmp_path, "hook-same", steps)
    _session, prompts = replay(path, ctx)
    slugs = {m.slug for m in ctx.index.members}
    for step, replayed in zip(steps, prompts):
        out = decide({"prompt": step[0], "session_id": "hook-same", "cwd": str(tmp_path)},
                     {"clusters": str(ctx.cluster_path)})
        text = out["hookSpecificOutput"]["additionalContext"] if out else ""
        assert tuple(injected_slugs(text, slugs)) == replayed.sent, step[0]
    assert any(p.sent for p in prompts) and any(p.held and not p.sent for p in prompts)


def test_every_fixture_version_replays_and_1_0_x_is_named_for_compaction(capsys, transcript_fixtures):
    from harness.cli import main

    assert main(["replay", str(transcript_fixtures), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    versions = set(report["transcripts"]["claude_code_versions"])
    assert {"1.0.98", "1.0.108", "2.0.76", "2.1.38", "2.1.39", "2.1.293", "2.1.328"} <= versions
    named = {os.path.basename(p).split("-")[0] for p in report["transcripts"]["no_compaction_recorded"]}
    assert named == {"v1.0.98", "v1.0.108"}
    assert report["prompts"] > 0 and report["transcripts"]["skipped_files"] == []
