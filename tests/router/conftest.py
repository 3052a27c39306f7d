"""Citation gate test material: the fixture ledger, the ids it holds (read at run time, never
hard-coded) and every write payload shape the gate must read."""

import pathlib
import re
import shutil

import pytest

GATE_FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "citation-gate"
FIXTURE_LEDGER = GATE_FIXTURES / ".wolf" / "decisions.md"
DEAD_WORDS = ("REVOKED", "SUPERSEDED", "AMENDED", "RETIRED", "MOOT")

# Deliberately simpler than the parser under test, so a parser bug cannot pick the test's ids.
_FIXTURE_ENTRY_RE = re.compile(r"^(?:##|-)\s+(D-\d+)\s*[:\u2014]\s*(\w+)")


def fixture_ledger_ids():
    """``{"live": [...], "dead": {word: id}, "all": [...]}`` from the fixture ledger."""
    live, dead, every = [], {}, []
    for line in FIXTURE_LEDGER.read_text(encoding="utf-8").splitlines():
        found = _FIXTURE_ENTRY_RE.match(line)
        if not found:
            continue
        entry_id, word = found.groups()
        every.append(entry_id)
        if word in DEAD_WORDS:
            dead.setdefault(word, entry_id)
        else:
            live.append(entry_id)
    return {"live": live, "dead": dead, "all": every}


def fabricated_id(ids):
    """An id the ledger does not hold: one past the highest, written the ledger's way."""
    return f"D-{max(int(i[2:]) for i in ids['all']) + 900:03d}"


def write_payloads(text, file_path, cwd=None):
    """``{shape: payload}``: the same added ``text`` in every shape a write guard must read."""
    common = {"session_id": "s", "transcript_path": "/t.jsonl", "cwd": str(cwd or pathlib.Path(file_path).parent),
              "hook_event_name": "PreToolUse", "tool_use_id": "toolu_1"}
    file_path = str(file_path)
    return {
        "claude-write": {**common, "tool_name": "Write", "tool_input": {"file_path": file_path, "content": text}},
        "claude-edit": {**common, "tool_name": "Edit", "tool_input": {
            "file_path": file_path, "old_string": "placeholder", "new_string": text, "replace_all": False}},
        "claude-multiedit": {**common, "tool_name": "MultiEdit", "tool_input": {"file_path": file_path, "edits": [
            {"old_string": "a", "new_string": "unrelated first edit"},
            {"old_string": "b", "new_string": text, "replace_all": False}]}},
        "cursor-flat-edits": {"hook_event_name": "afterFileEdit", "workspace_roots": [common["cwd"]],
                              "file_path": file_path, "edits": [{"old_string": "a", "new_string": text}]},
        "claude-notebookedit": {**common, "tool_name": "NotebookEdit", "tool_input": {
            "notebook_path": file_path, "new_source": text, "cell_id": "c1", "edit_mode": "replace"}},
    }


SHAPES = tuple(write_payloads("x", "/p/f.md"))


def pytest_generate_tests(metafunc):
    # Every test taking ``shape`` runs once per payload shape.
    if "shape" in metafunc.fixturenames:
        metafunc.parametrize("shape", SHAPES)


@pytest.fixture
def ledger_ids():
    ids = fixture_ledger_ids()
    assert ids["live"] and set(ids["dead"]) == set(DEAD_WORDS), "the fixture ledger lost its test entries"
    ids["fabricated"] = fabricated_id(ids)
    return ids


@pytest.fixture
def payloads():
    return write_payloads


@pytest.fixture
def gate_project(tmp_path):
    """A git project whose ``.wolf/decisions.md`` is the fixture ledger; returns its path."""
    project = tmp_path / "project"
    (project / ".wolf").mkdir(parents=True)
    (project / ".git").mkdir()
    shutil.copyfile(FIXTURE_LEDGER, project / ".wolf" / "decisions.md")
    (project / "docs").mkdir()
    return project


@pytest.fixture
def fixture_ledger():
    return FIXTURE_LEDGER
