"""The citation gate (router/gate/gate.py) under the real Claude Code: ``memory-router install --gate``
in the lab's project, a fixture ledger in ``project/.wolf/``, scripted Write and Edit calls.

What is judged: the file on disk, and what the model receives in the next request (the
``tool_result`` the client sent back, from ``harness.lab.measure.tool_exchanges``). The ids come
from the fixture ledger and the slugs from the bundled cluster file at run time. Marked
``realclient``: CI runs them, a missing client fails them."""

import pathlib
import re
import shutil

import pytest

from harness.lab import measure
from harness.lab.runner import run_session
from harness.lab.script import Script

pytestmark = pytest.mark.realclient

FIXTURE_LEDGER = pathlib.Path(__file__).resolve().parents[2] / "fixtures" / "citation-gate" / ".wolf" / "decisions.md"
DEAD_WORDS = ("REVOKED", "SUPERSEDED", "AMENDED", "RETIRED", "MOOT")


def ledger_ids():
    """(a live id, an id the ledger lacks), read with a regex simpler than the parser under test."""
    found = re.findall(r"^(?:##|-)\s+(D-\d+)\s*[:\u2014]\s*(\w+)", FIXTURE_LEDGER.read_text(encoding="utf-8"), re.M)
    live = [entry_id for entry_id, word in found if word not in DEAD_WORDS]
    assert live, "the fixture ledger lost its live entries"
    return live[0], f"D-{max(int(entry_id[2:]) for entry_id, _ in found) + 900:03d}"


def cluster_slugs(cluster_file):
    """The member slugs of a cluster file (``- slug - type; hook`` lines)."""
    return re.findall(r"^- ([a-z0-9_]+) - ", pathlib.Path(cluster_file).read_text(encoding="utf-8"), re.M)


def with_ledger(paths):
    (pathlib.Path(paths.project) / ".wolf").mkdir()
    shutil.copyfile(FIXTURE_LEDGER, pathlib.Path(paths.project) / ".wolf" / "decisions.md")
    (pathlib.Path(paths.project) / "notes.md").write_text("Retention: to be decided.\n", encoding="utf-8")


def calls_in_turn(*tool_uses):
    """A script making ``tool_uses`` one after another in the first prompt's turn, then ending it."""
    rules = [{"when": {"after_tool_result": False}, "reply": {"tool_use": tool_uses[0]}}]
    rules += [{"when": {"after_tool_result": True}, "reply": {"tool_use": use}} for use in tool_uses[1:]]
    return Script(rules + [{"when": {"after_tool_result": True}, "reply": {"text": "done"}}])


def run_gated(tmp_path, claude_client, *tool_uses):
    result = run_session(tmp_path / "run", ["write the retention notes"], "none", script=calls_in_turn(*tool_uses),
                         claude=claude_client, gate=True, prepare=with_ledger)
    assert result.ok, result.outcomes
    exchanges = measure.tool_exchanges(measure.read_log(result.request_log))
    assert [e["name"] for e in exchanges] == [use["name"] for use in tool_uses]
    return result, exchanges


def assert_refused(exchange, *phrases):
    assert exchange["is_error"], exchange
    assert exchange["text"].startswith(f"PreToolUse:{exchange['name']} hook error: "), exchange["text"]
    for phrase in phrases:
        assert phrase in exchange["text"], (phrase, exchange["text"])


def test_fabricated_decision_id_is_refused_and_a_real_one_goes_through(tmp_path, claude_client):
    live, fabricated = ledger_ids()
    project = tmp_path / "run" / "project"
    invented = project / "retention.md"
    notes = project / "notes.md"
    result, (write, edit) = run_gated(
        tmp_path, claude_client,
        {"name": "Write", "input": {"file_path": str(invented), "content": f"Retention is 14 days per {fabricated}.\n"}},
        {"name": "Edit", "input": {"file_path": str(notes), "old_string": "to be decided",
                                   "new_string": f"see {live}"}})
    # the refusal is what the model reads, and it says how to recover
    assert_refused(write, f"BLOCKED: {fabricated} is not in the decision ledger",
                   str(project / ".wolf" / "decisions.md"), "refresh the ledger from main",
                   "Do not substitute a lower id")
    assert not invented.exists()
    # the real citation is not in the way: the edit lands and the model is told so
    assert not edit["is_error"] and "updated successfully" in edit["text"], edit
    assert notes.read_text(encoding="utf-8") == f"Retention: see {live}.\n"
    assert write["seq"] < edit["seq"]


def test_absent_memory_citation_is_refused_and_a_stored_one_goes_through(tmp_path, claude_client):
    from router.config import bundled_cluster_file

    slugs = cluster_slugs(bundled_cluster_file())
    stored_slug = slugs[0]
    absent_slug = stored_slug + "_old"             # a near miss, so the refusal can name the real one
    assert absent_slug not in slugs
    project = tmp_path / "run" / "project"
    cited_absent = project / "absent.md"
    cited_stored = project / "stored.md"
    _result, (absent, stored) = run_gated(
        tmp_path, claude_client,
        {"name": "Write", "input": {"file_path": str(cited_absent),
                                    "content": f"Verified first (memory: {absent_slug}).\n"}},
        {"name": "Write", "input": {"file_path": str(cited_stored), "content": f"Verified first (memory: {stored_slug}).\n"}})
    assert_refused(absent, f"BLOCKED: memory {absent_slug} is in neither the memory directory nor the cluster file",
                   "nearest existing: ")
    assert stored_slug in absent["text"].split("nearest existing: ")[1].split(".")[0]
    assert not cited_absent.exists()
    assert not stored["is_error"], stored
    assert cited_stored.read_text(encoding="utf-8") == f"Verified first (memory: {stored_slug}).\n"
