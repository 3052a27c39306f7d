"""router.removal: the one place that deletes. Each rule fed the case that breaks it."""

import hashlib
import os

import pytest

from router.removal import CHANGED, remove_built_tree, remove_owned


def test_a_regular_file_inside_is_deleted_and_absence_is_fine(tmp_path):
    path = tmp_path / "a.json"
    path.write_text("{}")
    assert remove_owned(path, tmp_path) is None and not path.exists()
    assert remove_owned(path, tmp_path) is None


def test_outside_the_folders_nothing_is_deleted(tmp_path):
    inside, outside = tmp_path / "project", tmp_path / "elsewhere.txt"
    inside.mkdir()
    outside.write_text("mine")
    for named in (outside, inside / ".." / "elsewhere.txt"):
        why = remove_owned(named, inside)
        assert why.startswith("it is outside") and why.error is None
    assert outside.exists()
    assert remove_owned(inside, inside, directory=True).startswith("it is outside")   # the folder itself
    assert inside.is_dir()


def test_a_folder_symlinked_out_of_the_project_is_outside(tmp_path):
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    (elsewhere / "x.tsv").write_text("rows")
    (project / "brain").symlink_to(elsewhere)
    assert remove_owned(project / "brain" / "x.tsv", project).startswith("it is outside")
    assert (elsewhere / "x.tsv").exists()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_a_symlink_and_a_directory_are_kept_by_name(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "target").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "target")
    (tmp_path / "dir").mkdir()
    assert remove_owned(tmp_path / "pipe", tmp_path) == "it is a named pipe (FIFO), not a regular file memory-router wrote"
    assert remove_owned(tmp_path / "link", tmp_path).startswith("it is a symlink")
    assert remove_owned(tmp_path / "dir", tmp_path).startswith("it is a directory")
    assert all((tmp_path / n).exists() for n in ("pipe", "link", "target", "dir"))


def test_a_hash_mismatch_keeps_the_file_byte_for_byte(tmp_path):
    path = tmp_path / "utterances.tsv"
    path.write_bytes(b"edited by hand\n")
    why = remove_owned(path, tmp_path, sha256=hashlib.sha256(b"as written\n").hexdigest())
    assert why == CHANGED and path.read_bytes() == b"edited by hand\n"
    assert [p.name for p in tmp_path.iterdir()] == ["utterances.tsv"]   # no aside left
    assert remove_owned(path, tmp_path, sha256=hashlib.sha256(b"edited by hand\n").hexdigest()) is None
    assert not path.exists()


def test_only_an_empty_directory_goes(tmp_path):
    full = tmp_path / "full"
    full.mkdir()
    (full / "yours.md").write_text("x")
    assert remove_owned(full, tmp_path, directory=True).startswith("it is not empty")
    assert remove_owned(full / "yours.md", tmp_path, directory=True).startswith("it is a regular file")
    (tmp_path / "empty").mkdir()
    assert remove_owned(tmp_path / "empty", tmp_path, directory=True) is None and not (tmp_path / "empty").exists()


def test_a_refusal_by_the_file_system_carries_its_error(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root ignores directory permissions")
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "a").write_text("x")
    folder.chmod(0o500)
    try:
        why = remove_owned(folder / "a", tmp_path)
    finally:
        folder.chmod(0o700)
    assert why.error is not None and "Permission denied" in why


def test_a_built_tree_goes_whole_without_following_its_links(tmp_path):
    data, keep = tmp_path / "data", tmp_path / "keep"
    keep.mkdir()
    (keep / "precious").write_text("x")
    (data / "venv" / "bin").mkdir(parents=True)
    (data / "venv" / "bin" / "python").symlink_to(keep)
    assert remove_built_tree(data / "venv", data) is None and not (data / "venv").exists()
    assert (keep / "precious").exists()
    assert remove_built_tree(keep, data).startswith("it is outside") and keep.exists()
