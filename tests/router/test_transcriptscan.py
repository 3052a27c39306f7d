"""Reading the transcript back (router/store/transcriptscan.py): compaction boundaries after the last
injection, whether that injection was recorded, and every case where it cannot tell."""

import json

import pytest

from router.store import transcriptscan
from support.session_transcript import BOUNDARY, RECORDED, append_entries


def test_scan_transcript_sees_a_boundary_after_the_offset_only(tmp_path):
    path = tmp_path / "t.jsonl"
    append_entries(path, {"type": "user", "message": {"content": "hi"}}, BOUNDARY)
    offset = path.stat().st_size
    assert transcriptscan.scan_transcript(str(path), offset)[0] is None
    append_entries(path, {"type": "user", "message": {"content": "talking about compact_boundary entries"}})
    assert transcriptscan.scan_transcript(str(path), offset)[0] is None
    append_entries(path, {"type": "user", "message": {"content": "x" * 600_000}}, BOUNDARY,
            {"type": "user", "message": {"content": "y" * 600_000}})
    why, size, _recorded = transcriptscan.scan_transcript(str(path), offset)
    assert "compact_boundary" in why and size == path.stat().st_size


def test_scan_transcript_allows_the_boundary_of_the_compaction_that_wrote_the_record(tmp_path):
    path = tmp_path / "t.jsonl"
    append_entries(path, RECORDED)
    offset = path.stat().st_size
    append_entries(path, BOUNDARY, {"type": "user", "message": {"content": "z" * 300_000}})
    assert transcriptscan.scan_transcript(str(path), offset)[0] is not None
    assert transcriptscan.scan_transcript(str(path), offset, boundaries_allowed=1)[0] is None
    append_entries(path, BOUNDARY)
    assert "compact_boundary" in transcriptscan.scan_transcript(str(path), offset, boundaries_allowed=1)[0]


def test_a_boundary_on_a_read_edge_is_counted_once(tmp_path, monkeypatch):
    monkeypatch.setattr(transcriptscan, "_SCAN_CHUNK", 64)
    path = tmp_path / "t.jsonl"
    line = (json.dumps(BOUNDARY) + "\n").encode()
    # each read of 64 bytes: some start exactly at a line's start, some inside one
    path.write_bytes(b"".join([line, (json.dumps({"type": "user", "message": {"content": "x" * 50}}) + "\n").encode()]))
    assert transcriptscan.scan_transcript(str(path), 0, boundaries_allowed=1)[0] is None
    path.write_bytes(line * 2)
    assert transcriptscan.scan_transcript(str(path), 0, boundaries_allowed=1)[0] is not None
    padded = b"{}\n" * 3 + line
    path.write_bytes(padded)
    assert transcriptscan.scan_transcript(str(path), 0, boundaries_allowed=0)[0] is not None
    assert transcriptscan.scan_transcript(str(path), 0, boundaries_allowed=1)[0] is None


def test_scan_transcript_says_whether_an_injection_was_recorded_since_the_offset(tmp_path):
    path = tmp_path / "t.jsonl"
    append_entries(path, RECORDED)
    offset = path.stat().st_size
    append_entries(path, {"type": "user", "message": {"content": "a prompt naming hook_additional_context"}})
    assert transcriptscan.scan_transcript(str(path), offset) == (None, path.stat().st_size, False)
    # far behind the end, across the read chunks
    append_entries(path, RECORDED, {"type": "user", "message": {"content": "z" * 700_000}})
    assert transcriptscan.scan_transcript(str(path), offset) == (None, path.stat().st_size, True)


@pytest.mark.parametrize("setup,why", [
    ("shrank", "shrank"),
    ("too much", "over the"),
    ("gone", "gone"),
])
def test_scan_transcript_doubts_when_it_cannot_tell(tmp_path, setup, why):
    path = tmp_path / "t.jsonl"
    append_entries(path, {"type": "user", "message": {"content": "z" * 5000}})
    offset = 100
    limit = transcriptscan.TRANSCRIPT_SCAN_BYTES
    if setup == "shrank":
        offset = path.stat().st_size + 10
    elif setup == "too much":
        limit = 1000
    else:
        path.unlink()
    reason, _size, _recorded = transcriptscan.scan_transcript(str(path), offset, limit)
    assert why in reason


def test_a_missing_transcript_at_offset_zero_is_no_doubt(tmp_path):
    assert transcriptscan.scan_transcript(str(tmp_path / "later.jsonl"), 0) == (None, 0, False)
