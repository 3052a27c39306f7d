"""The census of every committed real transcript (tests/fixtures/transcripts/, written by real
clients under the lab: tests/fixtures/README.md) agrees with an independent count made with plain
``json``, and holds what its scenario must hold on its client version; --strict's failure reasons
each have a failing case."""

from collections import Counter

import pytest

from support.fixture_transcripts import (
    ATTACHMENT_ERA, FIXTURES, VERSIONS, all_files, index, raw_lines, session_file, user_text, vtuple,
)
from transcripts.census import census_entries, combine, strict_failures
from transcripts.reader import read_session

SESSIONS = sorted(index().values(), key=lambda e: (vtuple(e["version"]), e["scenario"]))
FILES = [str(p.relative_to(FIXTURES)) for p in all_files()]


def independent_census(path):
    """What the census must say, counted from the raw JSON without the reader."""
    objs = [obj for _n, obj in raw_lines(path)]
    attachments = [o["attachment"] for o in objs if o.get("type") == "attachment" and isinstance(o.get("attachment"), dict)]
    hook_events = Counter()
    for att in attachments:
        event = att.get("hookEvent") or (att.get("hookName") or "").split(":", 1)[0]
        if event:
            hook_events[f"attachment:{event}"] += 1
    for o in objs:
        data = o.get("data") if o.get("type") == "progress" else None
        if isinstance(data, dict) and data.get("hookEvent"):
            hook_events[f"progress:{data['hookEvent']}"] += 1
    return dict(
        lines=len(objs),
        entry_types=Counter(o.get("type") for o in objs),
        versions=Counter(o["version"] for o in objs if o.get("version")),
        sidechain=sum(1 for o in objs if o.get("isSidechain") is True),
        attachments=Counter(a.get("type") for a in attachments),
        system=Counter(o.get("subtype") for o in objs if o.get("type") == "system"),
        progress=Counter(o["data"].get("type") for o in objs if o.get("type") == "progress"),
        hook_events=hook_events,
    )


@pytest.mark.parametrize("name", FILES)
def test_fixture_census_matches_an_independent_count(name):
    path = FIXTURES / name
    expected = independent_census(path)
    census = census_entries(read_session(path))
    assert census.lines == census.entries == expected["lines"]
    assert census.entry_types == expected["entry_types"]
    assert census.versions == expected["versions"]
    assert census.sidechain_entries == expected["sidechain"]
    assert census.attachment_types == expected["attachments"]
    assert census.system_subtypes == expected["system"]
    assert census.progress_types == expected["progress"]
    assert census.hook_events == expected["hook_events"]
    assert (census.bad_lines, census.unknown_types, census.truncated_last_line) == (0, {}, None)


def kinds_of(path):
    return census_entries(read_session(path)).kinds


def user_texts(path):
    return [user_text(o) for _n, o in raw_lines(path) if o.get("type") == "user"]


def tool_calls(path, sidechain=False):
    return [block["name"] for _n, o in raw_lines(path) if o.get("type") == "assistant"
            and bool(o.get("isSidechain")) == sidechain
            for block in o["message"]["content"] if block.get("type") == "tool_use"]


@pytest.mark.parametrize("entry", SESSIONS, ids=[e["file"] for e in SESSIONS])
def test_fixture_holds_what_its_scenario_does_on_its_version(entry):
    """Each session as its client version wrote it (tests/fixtures/README.md says why each differs)."""
    version, scenario = entry["version"], entry["scenario"]
    path = session_file(version, scenario)
    assert entry["client_version"] == version
    if scenario != "interrupt":                                    # an interrupted 2.1.328 turn exits 1
        assert set(entry["exit_codes"]) == {0}
    census = census_entries(read_session(path))
    assert set(census.versions) == {version}                      # every versioned line is this client's
    kinds = census.kinds
    attachment_era = vtuple(version) >= ATTACHMENT_ERA
    if scenario == "routed-silent-routed":
        assert kinds["prompt"] == 3                                # three typed prompts, nothing else as one
        hooks = [t for t in user_texts(path) if t.startswith("<user-prompt-submit-hook>")]
        if attachment_era:
            assert census.attachment_types["hook_additional_context"] == 2 and kinds["injection"] == 2
            assert census.hook_events["attachment:UserPromptSubmit"] >= 2 and hooks == []
        elif version.startswith("1.0."):
            assert len(hooks) == 2 and kinds.get("injection", 0) == 0   # in user lines, never attachments
        else:                                                      # 2.0.76-2.1.39: not recorded at all
            assert hooks == [] and "Routed memory cluster" not in path.read_text(encoding="utf-8")
    elif scenario == "tools":
        assert tool_calls(path) == ["Write", "Read", "Bash", "Read", "Edit"]
        assert kinds["tool_result"] == 5
        # the project command /check-notes: typed as a slash command, its body a meta line
        slash = [t for t in user_texts(path) if "<command-name>/check-notes</command-name>" in t]
        assert len(slash) == 1 and "Check notes.txt for spelling mistakes.\n" in user_texts(path)
        cost = [t for t in user_texts(path) if "<command-name>/cost</command-name>" in t
                or "<command-name>/usage</command-name>" in t]
        if version.startswith("1.0."):                             # 1.0.x runs no built-in command under -p
            assert cost == [] and "local_command" not in kinds
        elif attachment_era:                                       # /cost is /usage; its output a system line
            assert len(cost) == 1 and census.system_subtypes["local_command"] == 1
        else:                                                      # its output a <local-command-stdout> user line
            assert len(cost) == 1 and kinds["local_command"] >= 1
    elif scenario == "compact":
        if vtuple(version) >= (2, 0, 76):
            assert census.system_subtypes == {"compact_boundary": 1} and kinds["compact_summary"] == 1
        else:                                                      # 1.0.x keeps no trace of /compact here
            assert "compact_boundary" not in census.system_subtypes and "compact_summary" not in kinds
    elif scenario == "subagent":
        tool = "Agent" if attachment_era else "Task"
        assert tool_calls(path) == [tool] and kinds["tool_result"] >= 1
        if version.startswith("1.0."):                             # inline sidechain lines
            assert census.sidechain_entries >= 2 and tool_calls(path, sidechain=True) == []
        if attachment_era:                                         # the result comes back as its own turn
            assert kinds["task_notification"] == 1
    elif scenario == "interrupt":
        assert kinds["interrupt"] >= 1
    else:
        raise AssertionError(f"unknown scenario {scenario}")


@pytest.mark.parametrize("version", ["2.1.38", "2.1.39"])
def test_hook_progress_names_the_session_start_hook_of_each_process(version):
    """Under ``-p`` these versions write hook_progress for SessionStart only (tool hooks write it
    interactively): one per client process, ``startup`` then ``resume``."""
    names = [e.hook_name for e in read_session(session_file(version, "tools")) if e.subtype == "hook_progress"]
    assert names == ["SessionStart:startup"] + ["SessionStart:resume"] * 3


def test_all_fixtures_pass_strict():
    on_disk = sorted(FIXTURES.rglob("*.jsonl"))
    assert on_disk == all_files()                                  # index.json lists every committed file
    census = combine([census_entries(read_session(p)) for p in on_disk])
    assert census.totals["files"] == len(FILES) and census.totals["lines"] == sum(
        independent_census(p)["lines"] for p in on_disk)
    assert list(census.totals["versions"]) == list(VERSIONS)
    assert {(e["version"], e["scenario"]) for e in SESSIONS} == {
        (v, s) for v in VERSIONS for s in ("routed-silent-routed", "tools", "compact", "subagent", "interrupt")}
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
