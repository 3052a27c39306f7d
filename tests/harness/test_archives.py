"""harness.archives: an archive never overwrites another, reaches its name only whole, and is
checked against its record before it is restored."""

import os

import pytest

from harness import archives, fileops
from router.errors import RefusedError


def test_write_archive_never_overwrites(tmp_path, monkeypatch):
    monkeypatch.setattr(archives, "archive_stamp", lambda now=None: "2026-07-22T05-25-01-376Z")
    first = archives.write_archive(tmp_path, "MEMORY.archive", ".md", b"one")
    second = archives.write_archive(tmp_path, "MEMORY.archive", ".md", b"two")
    assert first != second
    assert open(first, "rb").read() == b"one" and open(second, "rb").read() == b"two"
    assert os.path.basename(first) == "MEMORY.archive-2026-07-22T05-25-01-376Z.md"


def test_write_archive_refuses_on_os_error(tmp_path):
    with pytest.raises(RefusedError) as info:
        archives.write_archive(tmp_path / "missing-dir", "MEMORY.archive", ".md", b"x")
    assert "cannot write an archive" in str(info.value)


def test_archive_stamp_format():
    assert archives.archive_stamp(0.5) == "1970-01-01T00-00-00-500Z"


@pytest.mark.parametrize("now, expected", [
    (5.9996, "1970-01-01T00-00-05-999Z"),
    (5.9999999, "1970-01-01T00-00-05-999Z"),
    (5.0, "1970-01-01T00-00-05-000Z"),
])
def test_archive_stamp_truncates_milliseconds_so_names_never_sort_backwards(now, expected):
    # Rounding 5.9996 up to "-000Z" without carrying the second would name an archive written
    # later than one at 5.5 ("-500Z") as the older one, and rollback would pick the wrong file.
    assert archives.archive_stamp(now) == expected


def test_archive_stamp_order_follows_time():
    times = [1_753_161_901 + i / 10_000 for i in range(0, 20_000, 7)]
    stamps = [archives.archive_stamp(t) for t in times]
    assert stamps == sorted(stamps)


@pytest.mark.parametrize("failing", ["write", "fsync"])
def test_write_archive_that_fails_midway_leaves_no_partial_archive(tmp_path, monkeypatch, failing):
    # A truncated MEMORY.archive-<stamp>.md left behind would be the newest archive, and a later
    # 'slim rollback' would restore it over the live index.
    def no_space(*_args, **_kwargs):
        raise OSError(28, "No space left on device")

    if failing == "fsync":
        monkeypatch.setattr(archives.os, "fsync", no_space)
    else:
        real_write = os.write

        def half_then_full_disk(fd, data):
            real_write(fd, bytes(data[: len(data) // 2]))
            no_space()

        monkeypatch.setattr(archives.os, "write", half_then_full_disk)
    with pytest.raises(RefusedError) as info:
        archives.write_archive(tmp_path, "MEMORY.archive", ".md", b"precious flat index\n" * 50)
    assert "cannot write an archive" in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_write_archive_that_reads_back_differently_is_removed(tmp_path, monkeypatch):
    real_read = archives.read_regular_bytes
    monkeypatch.setattr(archives, "read_regular_bytes", lambda path: real_read(path)[:-1])
    with pytest.raises(RefusedError) as info:
        archives.write_archive(tmp_path, "MEMORY.archive", ".md", b"abc")
    monkeypatch.undo()
    assert "did not read back identically" in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_write_archive_failure_keeps_an_existing_archive_of_the_same_name(tmp_path, monkeypatch):
    monkeypatch.setattr(archives, "archive_stamp", lambda now=None: "2026-07-22T05-25-01-376Z")
    first = archives.write_archive(tmp_path, "MEMORY.archive", ".md", b"one")

    def no_space(*_args, **_kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(archives.os, "fsync", no_space)
    with pytest.raises(RefusedError):
        archives.write_archive(tmp_path, "MEMORY.archive", ".md", b"two")
    assert [p.name for p in tmp_path.iterdir()] == [os.path.basename(first)]
    assert open(first, "rb").read() == b"one"


# --------------------------------------------------------------------------- killed archive writes

KILL_AT_FIRST = """
import os, sys
from harness import archives

def die(*_args, **_kwargs):
    os._exit(9)

setattr(archives.os, sys.argv[2], die)
archives.write_archive(sys.argv[1], "MEMORY.archive", ".md", b"precious flat index\\n" * 5000, record=True)
"""


@pytest.mark.parametrize("step", ["write", "fsync", "link", "unlink", "replace"])
def test_archive_killed_at_any_step_is_absent_or_whole_under_its_final_name(tmp_path, step):
    """Issue 11, class 1: a render killed while writing its archive left a 0-byte or part-written
    MEMORY.archive-<stamp>.md, which rollback then restored. ``replace`` is the record's rename."""
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", KILL_AT_FIRST, str(tmp_path), step], capture_output=True,
                            timeout=60)
    assert result.returncode == 9, result.stderr
    visible = [p for p in tmp_path.iterdir() if not p.name.startswith(".")]
    for archive in visible:
        assert archive.read_bytes() == b"precious flat index\n" * 5000
    assert len(visible) == (1 if step in ("unlink", "replace") else 0)


def test_archive_record_names_size_and_sha256_and_verifies(tmp_path):
    path = archives.write_archive(tmp_path, "MEMORY.archive", ".md", b"flat\n", record=True)
    record = archives.archive_record_path(path)
    assert os.path.basename(record) == "." + os.path.basename(path) + ".sha256.json"
    import json

    assert json.loads(open(record, "rb").read()) == {
        "archive": os.path.basename(path), "bytes": 5, "sha256": fileops.sha256_bytes(b"flat\n")}
    assert archives.read_verified_archive(path) == (b"flat\n", True)


@pytest.mark.parametrize("damage", [b"", b"fla", b"flat\nmore\n", b"FLAT\n"])
def test_an_archive_that_differs_from_its_record_is_refused_naming_it(tmp_path, damage):
    path = archives.write_archive(tmp_path, "MEMORY.archive", ".md", b"flat\n", record=True)
    with open(path, "wb") as handle:
        handle.write(damage)
    with pytest.raises(RefusedError) as info:
        archives.read_verified_archive(path)
    assert path in str(info.value) and "damaged" in str(info.value)


def test_a_damaged_record_is_refused(tmp_path):
    path = archives.write_archive(tmp_path, "MEMORY.archive", ".md", b"flat\n", record=True)
    with open(archives.archive_record_path(path), "wb") as handle:
        handle.write(b'{"bytes": 5, "sha')
    with pytest.raises(RefusedError, match="integrity record .* is damaged"):
        archives.read_verified_archive(path)


def test_an_unrecorded_archive_reads_as_unverified(tmp_path):
    path = tmp_path / "MEMORY.archive-2026-01-01T00-00-00-000Z.md"
    path.write_bytes(b"by hand\n")
    assert archives.read_verified_archive(path) == (b"by hand\n", False)




def test_list_archives_oldest_first_by_stamp_then_clash_counter(tmp_path):
    from harness.archives import list_archives

    names = ["MEMORY.archive-2026-07-22T05-25-01-376Z-2.md", "MEMORY.archive-2026-07-22T05-25-01-376Z.md",
             "MEMORY.archive-2025-12-31T23-59-59-999Z.md", "MEMORY.archive-2026-07-22T05-25-01-376Z-10.md",
             ".MEMORY.archive-2025-12-31T23-59-59-999Z.md.sha256.json", "MEMORY.archive-latest.md",
             "MEMORY.pre-rollback-2026-01-01T00-00-00-000Z.md", "MEMORY.archive-2026-07-22T05-25-01-376Z.tsv"]
    for name in names:
        (tmp_path / name).write_text("x")
    assert list_archives(tmp_path, "MEMORY.archive", ".md") == [
        "MEMORY.archive-2025-12-31T23-59-59-999Z.md", "MEMORY.archive-2026-07-22T05-25-01-376Z.md",
        "MEMORY.archive-2026-07-22T05-25-01-376Z-2.md", "MEMORY.archive-2026-07-22T05-25-01-376Z-10.md"]
    assert list_archives(tmp_path, "MEMORY.pre-rollback", ".md") == ["MEMORY.pre-rollback-2026-01-01T00-00-00-000Z.md"]
    assert list_archives(tmp_path / "missing", "MEMORY.archive", ".md") == []


def test_list_archives_lists_what_write_archive_writes(tmp_path):
    from harness.archives import list_archives, write_archive

    written = [os.path.basename(write_archive(str(tmp_path), "settings", ".json", b"{}")) for _ in range(3)]
    assert list_archives(tmp_path, "settings", ".json") == written


def test_list_archives_takes_whole_names_and_regular_files_only(tmp_path):
    """issue 30 item 2: `$` matched before a final newline, so a user's file named like an
    archive plus a newline was listed (and pruned); a directory of the name was listed too."""
    from harness.archives import list_archives, scan_archives

    (tmp_path / "MEMORY.archive-2026-01-01T00-00-00-000Z.md").write_text("a\n")
    (tmp_path / "MEMORY.archive-2026-01-02T00-00-00-000Z.md\n").write_text("user\n")
    (tmp_path / "MEMORY.archive-2026-01-03T00-00-00-000Z.md").mkdir()
    assert list_archives(tmp_path, "MEMORY.archive", ".md") == ["MEMORY.archive-2026-01-01T00-00-00-000Z.md"]
    assert scan_archives(tmp_path, "MEMORY.archive", ".md")[1] == [
        ("MEMORY.archive-2026-01-03T00-00-00-000Z.md", "a directory")]
