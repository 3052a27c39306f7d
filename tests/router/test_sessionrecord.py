"""The per-session record (router/hooks/sessionrecord.py): its bound, the checks it must pass to be
trusted, its file (path, read, atomic write, crash) and the pruning of old records."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid

import pytest

from router.hooks import sessionrecord
from router.routing.injection import line_key


def test_record_keeps_only_the_newest_lines_past_its_bound(monkeypatch):
    monkeypatch.setattr(sessionrecord, "MAX_HELD_LINES", 3)
    record = sessionrecord.new_record("s1", ["/x", 1, 2])
    lines = [{"cluster_id": "c1", "slug": f"s{i}", "hook": "h"} for i in range(5)]
    record = sessionrecord.record_injection(record, lines, now=1.0)
    assert record["held"] == [line_key(f"s{i}", "h") for i in (2, 3, 4)]


# --------------------------------------------------------------------------- the record's checks

STORE = ["/store/clusters.md", 100, 5]
GOOD = {"version": 1, "session_id": "s1", "store": STORE, "updated": 1000.0, "transcript": None,
        "transcript_size": 0, "persisted": False, "after_compaction": False, "held": ["a|1:0:0"],
        "pending": [["c1", "a", "hook"]]}


@pytest.mark.parametrize("change,why", [
    ({"version": 2}, "version"),
    ({"session_id": "s2"}, "another session"),
    ({"store": ["/other/clusters.md", 100, 5]}, "another cluster file"),
    ({"store": ["/store/clusters.md", 101, 5]}, "another cluster file"),
    ({"held": "a"}, "damaged"),
    ({"held": [1]}, "damaged"),
    ({"updated": "yesterday"}, "no valid time"),
    ({"updated": 1000.0 + 3600}, "future"),
    ({"transcript_size": -1}, "transcript position"),
    ({"transcript": 5}, "transcript position"),
    ({"persisted": None}, "transcript position"),
    ({"after_compaction": 1}, "transcript position"),
    ({"pending": [["c1", "a"]]}, "pending lines are damaged"),
    ({"pending": "x"}, "pending lines are damaged"),
])
def test_a_record_in_doubt_is_not_trusted(change, why):
    record, reason = sessionrecord.check_record(dict(GOOD, **change), "s1", STORE, now=1000.0)
    assert record is None and why in reason


def test_a_good_record_is_trusted():
    assert sessionrecord.check_record(dict(GOOD), "s1", STORE, now=1000.0) == (GOOD, None)
    assert sessionrecord.check_record([GOOD], "s1", STORE, now=1000.0)[0] is None


@pytest.mark.parametrize("content,why", [
    (b"{not json", "damaged"),
    (b"\xff\xfe", "damaged"),
    (b" " * (sessionrecord.MAX_RECORD_BYTES + 1), "over"),
])
def test_read_record_refuses_what_it_cannot_trust(tmp_path, content, why):
    path = tmp_path / "r.json"
    path.write_bytes(content)
    data, reason = sessionrecord.read_record(str(path))
    assert data is None and why in reason


def test_read_record_of_a_missing_file_is_no_record(tmp_path):
    assert sessionrecord.read_record(str(tmp_path / "none.json")) == (None, None)


def test_read_record_refuses_a_directory(tmp_path):
    (tmp_path / "d.json").mkdir()
    data, reason = sessionrecord.read_record(str(tmp_path / "d.json"))
    assert data is None and reason


@pytest.mark.parametrize("session_id", ["../../etc/passwd", ".hidden", "a/b", "", "x" * 200, "\u00e9t\u00e9"])
def test_record_path_stays_in_the_sessions_dir(tmp_path, session_id):
    path = sessionrecord.record_path(session_id, str(tmp_path))
    assert os.path.dirname(path) == str(tmp_path) and not os.path.basename(path).startswith(".")


def test_record_path_keeps_a_uuid():
    sid = str(uuid.uuid4())
    assert os.path.basename(sessionrecord.record_path(sid, "/d")) == sid + ".json"


# --------------------------------------------------------------------------- writes, prune, crash


def test_write_record_replaces_atomically_and_leaves_no_temp(tmp_path):
    path = str(tmp_path / "s" / "a.json")
    assert sessionrecord.write_record(path, dict(GOOD))
    assert json.loads(open(path, encoding="utf-8").read()) == GOOD
    assert os.listdir(tmp_path / "s") == ["a.json"]


def test_a_failed_rename_leaves_the_old_record(tmp_path, monkeypatch):
    path = str(tmp_path / "a.json")
    sessionrecord.write_record(path, dict(GOOD))

    def broken(src, dst):
        raise OSError("disk gone")

    monkeypatch.setattr(sessionrecord.os, "replace", broken)
    with pytest.raises(OSError):
        sessionrecord.write_record(path, dict(GOOD, held=["new|1:0:0"]))
    assert json.loads(open(path, encoding="utf-8").read()) == GOOD
    assert os.listdir(tmp_path) == ["a.json"]


CRASH_WRITER = textwrap.dedent("""
    import sys
    from router.hooks import sessionrecord
    path = sys.argv[1]
    records = [dict(sessionrecord.new_record("s", ["/x", 1, 2]), held=[f"{tag}{i}|1:0:0" for i in range(3000)])
               for tag in ("old", "new")]
    n = 0
    print("ready", flush=True)
    while True:
        sessionrecord.write_record(path, records[n % 2])
        n += 1
""")


def test_a_crash_mid_write_leaves_the_old_record_or_the_new(tmp_path):
    path = str(tmp_path / "r.json")
    for attempt in range(5):
        child = subprocess.Popen([sys.executable, "-c", CRASH_WRITER, path], stdout=subprocess.PIPE)
        assert child.stdout.readline() == b"ready\n"
        time.sleep(0.05 + 0.03 * attempt)
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
        data, why = sessionrecord.read_record(path)
        assert why is None, why
        assert data["held"][0] in ("old0|1:0:0", "new0|1:0:0") and len(data["held"]) == 3000


def test_prune_keeps_the_newest_records_and_drops_old_ones_and_stale_temps(tmp_path):
    now = time.time()
    for i in range(6):
        target = tmp_path / f"s{i}.json"
        target.write_text("{}")
        os.utime(target, (now - 100 + i, now - 100 + i))
    ancient = tmp_path / "ancient.json"
    ancient.write_text("{}")
    os.utime(ancient, (now - 30 * 86400,) * 2)
    temp = tmp_path / "s9.json.1.2.tmp"
    temp.write_text("")
    os.utime(temp, (now - 3600,) * 2)
    keep = tmp_path / "current.json"
    keep.write_text("{}")
    sessionrecord.prune_sessions(str(tmp_path), keep=str(keep), now=now, max_sessions=4)
    assert sorted(os.listdir(tmp_path)) == ["current.json", "s3.json", "s4.json", "s5.json"]


def test_a_first_write_prunes_only_a_crowded_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(sessionrecord, "MAX_SESSIONS", 3)
    monkeypatch.setattr(sessionrecord, "PRUNED_SESSIONS", 2)
    ancient = tmp_path / "ancient.json"
    ancient.write_text("{}")
    os.utime(ancient, (time.time() - 30 * 86400,) * 2)
    sessionrecord.write_record(str(tmp_path / "a.json"), dict(GOOD))
    assert sorted(os.listdir(tmp_path)) == ["a.json", "ancient.json"]   # two entries: nothing stat'ed
    sessionrecord.write_record(str(tmp_path / "b.json"), dict(GOOD))
    assert sorted(os.listdir(tmp_path)) == ["a.json", "ancient.json", "b.json"]   # three: still not crowded
    os.utime(tmp_path / "a.json", (time.time() - 10,) * 2)
    sessionrecord.write_record(str(tmp_path / "c.json"), dict(GOOD))
    assert sorted(os.listdir(tmp_path)) == ["b.json", "c.json"]   # four: pruned to two, the oldest went
