import os
import stat

import pytest

from harness import fileops
from router.errors import RefusedError


def test_atomic_write_replaces_whole_and_keeps_mode(tmp_path):
    path = tmp_path / "f.md"
    path.write_text("old")
    os.chmod(path, 0o640)
    fileops.atomic_write(path, "new text")
    assert path.read_text() == "new text"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["f.md"]  # no temp file left behind


def test_atomic_write_new_file_follows_umask(tmp_path):
    old = os.umask(0o022)
    try:
        fileops.atomic_write(tmp_path / "new.md", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.md").stat().st_mode) == 0o644


def test_failed_rename_leaves_the_old_file_whole(tmp_path, monkeypatch):
    path = tmp_path / "f.md"
    path.write_bytes(b"precious")

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fileops.os, "replace", broken_replace)
    with pytest.raises(OSError):
        fileops.atomic_write(path, b"new")
    assert path.read_bytes() == b"precious"
    assert [p.name for p in tmp_path.iterdir()] == ["f.md"]


@pytest.mark.parametrize("change", ["content", "delete", "create"])
def test_snapshot_detects_changes(tmp_path, change):
    path = tmp_path / "f.md"
    if change != "create":
        path.write_bytes(b"one")
    snap = fileops.Snapshot(path)
    assert snap.unchanged()
    if change == "content":
        path.write_bytes(b"two")
    elif change == "delete":
        path.unlink()
    else:
        path.write_bytes(b"appeared")
    assert not snap.unchanged()
    with pytest.raises(RefusedError):
        snap.require_unchanged()


def test_snapshot_same_size_same_mtime_rewrite_is_still_detected(tmp_path):
    path = tmp_path / "f.md"
    path.write_bytes(b"aaaa")
    st = path.stat()
    snap = fileops.Snapshot(path)
    path.write_bytes(b"bbbb")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert not snap.unchanged()


def test_write_archive_never_overwrites(tmp_path, monkeypatch):
    monkeypatch.setattr(fileops, "utc_stamp", lambda now=None: "2026-07-22T05-25-01-376Z")
    first = fileops.write_archive(tmp_path, "MEMORY.archive", ".md", b"one")
    second = fileops.write_archive(tmp_path, "MEMORY.archive", ".md", b"two")
    assert first != second
    assert open(first, "rb").read() == b"one" and open(second, "rb").read() == b"two"
    assert os.path.basename(first) == "MEMORY.archive-2026-07-22T05-25-01-376Z.md"


def test_write_archive_refuses_on_os_error(tmp_path):
    with pytest.raises(RefusedError) as info:
        fileops.write_archive(tmp_path / "missing-dir", "MEMORY.archive", ".md", b"x")
    assert "cannot write an archive" in str(info.value)


def test_utc_stamp_format():
    assert fileops.utc_stamp(0.5) == "1970-01-01T00-00-00-500Z"
