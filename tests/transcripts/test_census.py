"""The census of each real fixture matches what ../shared/fixtures/README.md (and the formats doc
§3/§6) says of it; --strict's failure reasons each have a failing case."""

import pytest

from transcripts.census import census_entries, combine, strict_failures
from transcripts.reader import read_session

# What the fixtures README says each file shows, as census facts.
# v1.0.98-init-command: the README also lists a `summary` entry, but this file (1af7fc5e-…) has none;
# the `summary` line is in its sibling fe5e1c67-… (formats doc §6), which is not among the fixtures.
EXPECTED = {
    "v1.0.98-init-command.jsonl": dict(
        lines=29, entry_types={"user": 14, "assistant": 15}, versions={"1.0.98": 29}, sidechain=0,
        kinds_at_least={"prompt": 1, "meta": 1}, attachments={}, system={}, progress={}),
    "v1.0.108-slash-command-sidechains.jsonl": dict(
        lines=53, entry_types={"user": 25, "assistant": 28}, versions={"1.0.108": 53}, sidechain=22,
        kinds_at_least={"prompt": 3, "meta": 1}, attachments={}, system={}, progress={}),
    "v2.0.76-long-session-stop-hooks.jsonl": dict(
        lines=536, entry_types={"assistant": 326, "user": 170, "file-history-snapshot": 24, "system": 16},
        versions={"2.0.76": 512}, sidechain=0, kinds_at_least={"prompt": 18},
        attachments={}, system={"stop_hook_summary": 16}, progress={}),
    "v2.1.38-short-hook-progress.jsonl": dict(
        lines=15, entry_types={"file-history-snapshot": 1, "progress": 3, "user": 4, "assistant": 5, "system": 2},
        versions={"2.1.38": 14}, sidechain=0, kinds_at_least={"prompt": 1}, attachments={},
        system={"local_command": 2}, progress={"hook_progress": 3},
        hook_events={"progress:SessionStart": 2, "progress:PreToolUse": 1}),
    "v2.1.38-tool-heavy.jsonl": dict(
        lines=39, entry_types={"file-history-snapshot": 3, "progress": 10, "user": 13, "assistant": 9,
                               "queue-operation": 2, "system": 2},
        versions={"2.1.38": 34}, sidechain=0, kinds_at_least={"tool_result": 6}, attachments={},
        system={"local_command": 2}, progress={"hook_progress": 10}),
    "v2.1.39-compaction-queue-ops.jsonl": dict(
        lines=1512, entry_types={"file-history-snapshot": 14, "progress": 1083, "user": 154, "assistant": 254,
                                 "system": 6, "queue-operation": 1},
        versions={"2.1.39": 1497}, sidechain=0, kinds_at_least={"compact_summary": 1},
        attachments={}, system={"stop_hook_summary": 3, "turn_duration": 2, "compact_boundary": 1},
        progress={"hook_progress": 852, "bash_progress": 163, "agent_progress": 67, "waiting_for_task": 1}),
    "v2.1.39-compaction-queue-ops/subagents/agent-a2898e3.jsonl": dict(
        lines=144, entry_types={"user": 34, "assistant": 40, "progress": 70}, versions={"2.1.39": 144},
        sidechain=144, kinds_at_least={"prompt": 1}, attachments={}, system={}, progress={"hook_progress": 70}),
    "v2.1.293-userpromptsubmit-additional-context-line.jsonl": dict(
        lines=1, entry_types={"attachment": 1}, versions={"2.1.293": 1}, sidechain=0,
        kinds_at_least={"injection": 1}, attachments={"hook_additional_context": 1}, system={}, progress={},
        hook_events={"attachment:UserPromptSubmit": 1}),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_census_matches_the_readme(transcript_fixtures, name):
    expected = EXPECTED[name]
    census = census_entries(read_session(transcript_fixtures / name))
    assert census.lines == census.entries == expected["lines"]
    assert census.entry_types == expected["entry_types"]
    assert census.versions == expected["versions"]
    assert census.sidechain_entries == expected["sidechain"]
    assert census.attachment_types == expected["attachments"]
    assert census.system_subtypes == expected["system"]
    assert census.progress_types == expected["progress"]
    for kind, least in expected["kinds_at_least"].items():
        assert census.kinds.get(kind, 0) >= least, kind
    if "hook_events" in expected:
        assert census.hook_events == expected["hook_events"]
    assert (census.bad_lines, census.unknown_types, census.truncated_last_line) == (0, {}, None)


def test_spotter_hook_progress_counts_match_the_formats_doc(transcript_fixtures):
    """Formats doc §3: PreToolUse:Bash 268, PostToolUse:Edit 224, PostToolUse:Bash 124, PreToolUse:Edit 64,
    PostToolUse:Write 49, PreToolUse:Write 14, Stop 12."""
    from collections import Counter

    names = Counter(e.hook_name for e in read_session(transcript_fixtures / "v2.1.39-compaction-queue-ops.jsonl")
                    if e.subtype == "hook_progress")
    assert {k: names[k] for k in ("PreToolUse:Bash", "PostToolUse:Edit", "PostToolUse:Bash", "PreToolUse:Edit",
                                  "PostToolUse:Write", "PreToolUse:Write", "Stop")} == {
        "PreToolUse:Bash": 268, "PostToolUse:Edit": 224, "PostToolUse:Bash": 124, "PreToolUse:Edit": 64,
        "PostToolUse:Write": 49, "PreToolUse:Write": 14, "Stop": 12}


def test_all_fixtures_pass_strict(transcript_fixtures):
    files = [census_entries(read_session(p)) for p in sorted(transcript_fixtures.rglob("*.jsonl"))]
    census = combine(files)
    assert census.totals["files"] == 8 and census.totals["lines"] == sum(e["lines"] for e in EXPECTED.values())
    assert list(census.totals["versions"]) == ["1.0.98", "1.0.108", "2.0.76", "2.1.38", "2.1.39", "2.1.293"]
    assert strict_failures(census) == []


def write(tmp_path, data, name="s.jsonl"):
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("data, reason", [
    (b'{"type":"hologram"}\n', "unknown entry type 'hologram'"),
    (b'{"type":"attachment","attachment":{"type":"hook_new_thing"}}\n', "unknown hook attachment type 'hook_new_thing'"),
    (b'{"type":"mode"}\n{broken\n', "1 bad line(s)"),
    (b'{"type":"mode","x":"\xff"}\n', "1 line(s) of invalid UTF-8"),
])
def test_strict_fails_on_unknown_types_and_bad_lines(tmp_path, data, reason):
    census = combine([census_entries(read_session(write(tmp_path, data)))])
    assert any(item.startswith(reason) for item in strict_failures(census))


@pytest.mark.parametrize("data", [
    b'{"type":"mode"}\n{"type":"mo',                                                  # truncated tail: a live session
    b'{"type":"mode"}\n{"type":"user","message":{"content":"caf\xc3',                # ... cut inside a character
    b'{"type":"attachment","attachment":{"type":"brand_new_listing"}}\n',             # open-ended, non-hook list
])
def test_strict_tolerates_a_truncated_tail_and_new_non_hook_attachments(tmp_path, data):
    census = combine([census_entries(read_session(write(tmp_path, data)))])
    assert strict_failures(census) == []


def test_census_counts_unknown_attachment_types(tmp_path):
    census = census_entries(read_session(write(tmp_path, b'{"type":"attachment","attachment":{"type":"brand_new"}}\n')))
    assert census.unknown_attachment_types == {"brand_new": 1} and census.attachment_types == {"brand_new": 1}
