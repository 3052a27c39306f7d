"""``slim prune --keep N``: old render archives and pre-rollback copies go, with their integrity
records; the newest N of each kind, and everything else in the memory directory, stay."""

import json
import os

import pytest

from harness.archives import archive_record_path, write_archive
from harness.cli import main
from harness.slim import index as slim

STAMPS = ["2026-07-20T10-00-00-000Z", "2026-07-21T10-00-00-000Z", "2026-07-22T10-00-00-000Z",
          "2026-07-22T10-00-00-000Z-2"]


@pytest.fixture
def memory_dir(tmp_path):
    directory = tmp_path / "memory"
    directory.mkdir()
    (directory / "MEMORY.md").write_text("# Memory Index\n")
    (directory / "feedback_keep_me.md").write_text("a memory\n")
    for stamp in STAMPS:
        name = f"MEMORY.archive-{stamp}.md"
        (directory / name).write_text(f"flat {stamp}\n")
        (directory / f".{name}.sha256.json").write_text("{}\n")
    (directory / "MEMORY.pre-rollback-2026-07-21T00-00-00-000Z.md").write_text("slim\n")  # no record
    (directory / "MEMORY.pre-rollback-2026-07-23T00-00-00-000Z.md").write_text("slim\n")
    (directory / "MEMORY.archive-notes.md").write_text("not an archive name\n")
    return directory


def prune(memory_dir, *extra):
    return main(["slim", "prune", "--memory-dir", str(memory_dir), *map(str, extra)])


@pytest.mark.parametrize("keep, render_left, rollback_left", [
    (1, ["2026-07-22T10-00-00-000Z-2"], ["2026-07-23T00-00-00-000Z"]),
    (2, ["2026-07-22T10-00-00-000Z", "2026-07-22T10-00-00-000Z-2"], ["2026-07-21T00-00-00-000Z",
                                                                     "2026-07-23T00-00-00-000Z"]),
    (9, STAMPS, ["2026-07-21T00-00-00-000Z", "2026-07-23T00-00-00-000Z"]),
])
def test_prune_keeps_the_newest_of_each_kind_with_their_records(memory_dir, capsys, keep, render_left,
                                                                  rollback_left):
    assert prune(memory_dir, "--keep", keep) == 0
    names = set(os.listdir(memory_dir))
    assert {n for n in names if n.startswith("MEMORY.archive-2")} == {f"MEMORY.archive-{s}.md" for s in render_left}
    assert {n for n in names if n.startswith(".MEMORY.archive-")} == {f".MEMORY.archive-{s}.md.sha256.json"
                                                                     for s in render_left}
    assert {n for n in names if n.startswith("MEMORY.pre-")} == {f"MEMORY.pre-rollback-{s}.md" for s in rollback_left}
    assert {"MEMORY.md", "feedback_keep_me.md", "MEMORY.archive-notes.md"} <= names
    out = capsys.readouterr().out
    if keep == 9:
        assert "nothing to prune" in out
    else:
        assert f"kept {keep} MEMORY.archive-<stamp>.md, newest MEMORY.archive-2026-07-22T10-00-00-000Z-2.md" in out


def test_rollback_still_restores_the_newest_after_prune(memory_dir, capsys):
    newest = write_archive(str(memory_dir), slim.ARCHIVE_STEM, ".md", "# Memory Index\n- [A](a.md) \u2014 x\n"
                           .encode(), record=True)
    assert prune(memory_dir, "--keep", 1) == 0
    assert os.listdir(memory_dir).count(os.path.basename(newest)) == 1 and os.path.exists(archive_record_path(newest))
    assert main(["slim", "rollback", "--memory-dir", str(memory_dir)]) == 0
    assert (memory_dir / "MEMORY.md").read_bytes() == open(newest, "rb").read()


def test_dry_run_deletes_nothing_and_json_lists_what_would_go(memory_dir, capsys):
    before = sorted(os.listdir(memory_dir))
    assert prune(memory_dir, "--keep", 1, "--dry-run", "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert sorted(os.listdir(memory_dir)) == before and data["deleted"] == []
    archives = [os.path.basename(entry["archive"]) for entry in data["to_delete"]]
    assert archives == [f"MEMORY.archive-{s}.md" for s in STAMPS[:3]] + ["MEMORY.pre-rollback-2026-07-21T00-00-00-000Z.md"]
    assert data["to_delete"][-1]["record"] is None and data["to_delete"][0]["record"].endswith(".sha256.json")
    assert prune(memory_dir, "--keep", 1, "--dry-run") == 0
    captured = capsys.readouterr()
    assert captured.out.startswith(f"would delete {memory_dir}/MEMORY.archive-{STAMPS[0]}.md (and its record ")
    assert "dry run: nothing deleted" in captured.err


@pytest.mark.parametrize("keep", [0, -1])
def test_keep_below_one_is_refused(memory_dir, capsys, keep):
    before = sorted(os.listdir(memory_dir))
    assert prune(memory_dir, "--keep", keep) == 2
    assert "--keep must be at least 1" in capsys.readouterr().err
    assert sorted(os.listdir(memory_dir)) == before


def test_a_file_that_cannot_be_deleted_stops_prune_naming_it(memory_dir, capsys, monkeypatch):
    real_unlink = os.unlink
    victim = str(memory_dir / f"MEMORY.archive-{STAMPS[1]}.md")

    def unlink(path, *args, **kwargs):
        if str(path) == victim:
            raise PermissionError(13, "Permission denied")
        return real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", unlink)
    assert prune(memory_dir, "--keep", 1) == 1
    err = capsys.readouterr().err
    assert f"cannot delete {victim}: Permission denied; 2 file(s) were deleted before it" in err
    assert os.path.exists(victim) and os.path.exists(archive_record_path(victim))


def test_plan_prune_never_takes_the_newest(memory_dir):
    from harness.slim import live

    with pytest.raises(ValueError):
        live.plan_prune(str(memory_dir), 0)
    kept = {os.path.basename(path) for path, _record in live.plan_prune(str(memory_dir), 1)}
    assert f"MEMORY.archive-{STAMPS[-1]}.md" not in kept and "MEMORY.pre-rollback-2026-07-23T00-00-00-000Z.md" not in kept


# --------------------------------------------------------------------------- issue 30 items 2 and 3

NEWLINE_NAME = "MEMORY.archive-2026-07-01T00-00-00-000Z.md\n"


def test_a_user_file_named_like_an_archive_plus_a_newline_is_never_pruned(memory_dir, capsys):
    """`$` matched before the final newline: this file was listed as the oldest archive and
    deleted by --keep 1."""
    (memory_dir / NEWLINE_NAME).write_text("the user's own file\n")
    assert prune(memory_dir, "--keep", 1, "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert (memory_dir / NEWLINE_NAME).read_text() == "the user's own file\n"
    assert all(NEWLINE_NAME.strip() not in path for path in data["deleted"])


def test_rollback_never_restores_a_look_alike_named_with_a_newline(memory_dir, capsys):
    newest = write_archive(str(memory_dir), slim.ARCHIVE_STEM, ".md", b"# Memory Index\n- [A](a.md) \xe2\x80\x94 x\n",
                           record=True)
    (memory_dir / "MEMORY.archive-2099-01-01T00-00-00-000Z.md\n").write_text("# not an archive\n")
    assert slim.newest_archive(os.listdir(memory_dir)) == os.path.basename(newest)
    assert main(["slim", "rollback", "--memory-dir", str(memory_dir)]) == 0
    assert (memory_dir / "MEMORY.md").read_bytes() == open(newest, "rb").read()


def test_a_directory_named_like_an_archive_is_skipped_by_name_and_the_run_completes(memory_dir, capsys):
    """The dry run listed it as "would delete"; the real run deleted the older archives, then
    stopped with "Is a directory ... fix the permissions", and a rerun failed alike."""
    stray = memory_dir / "MEMORY.archive-2026-01-01T00-00-00-000Z.md"
    stray.mkdir()
    (stray / "inside.txt").write_text("kept\n")
    record_dir = memory_dir / f".MEMORY.archive-{STAMPS[0]}.md.sha256.json"
    record_dir.unlink()
    record_dir.mkdir()
    assert prune(memory_dir, "--keep", 1, "--dry-run") == 0
    out = capsys.readouterr().out
    assert f"would delete {stray}" not in out
    assert f"skipped {stray}: a directory, not a file slim render or rollback wrote" in out
    assert f"skipped {record_dir}: a directory" in out
    for _run in range(2):
        assert prune(memory_dir, "--keep", 1) == 0, capsys.readouterr().err
        out = capsys.readouterr().out
        assert f"skipped {stray}: a directory" in out
    assert (stray / "inside.txt").read_text() == "kept\n" and record_dir.is_dir()
    assert not (memory_dir / f"MEMORY.archive-{STAMPS[0]}.md").exists()
    assert (memory_dir / f"MEMORY.archive-{STAMPS[-1]}.md").exists()


def test_a_symlink_named_like_the_newest_archive_is_neither_counted_nor_restored(memory_dir, tmp_path, capsys):
    newest = write_archive(str(memory_dir), slim.ARCHIVE_STEM, ".md", b"# Memory Index\n", record=True)
    target = tmp_path / "elsewhere.md"
    target.write_text("# someone else's file\n")
    link = memory_dir / "MEMORY.archive-2099-01-01T00-00-00-000Z.md"
    link.symlink_to(target)
    assert prune(memory_dir, "--keep", 1, "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert {"path": str(link), "kind": "a symbolic link"} in data["skipped"]
    assert data["kept"]["MEMORY.archive"] == [os.path.basename(newest)]
    assert link.is_symlink() and target.exists()
    assert main(["slim", "rollback", "--memory-dir", str(memory_dir)]) == 0
    assert (memory_dir / "MEMORY.md").read_text() == "# Memory Index\n"


@pytest.mark.parametrize("code, says", [
    (13, "make the memory directory writable by you"),
    (30, "read-only file system"),
    (16, "a program is using the file"),
    (21, "look at that file (prune deletes only the regular files"),
])
def test_a_deletion_error_names_its_real_cause(memory_dir, capsys, monkeypatch, code, says):
    victim = str(memory_dir / f"MEMORY.archive-{STAMPS[0]}.md")
    real_unlink = os.unlink

    def unlink(path, *args, **kwargs):
        if str(path) == victim:
            raise OSError(code, os.strerror(code))
        return real_unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", unlink)
    assert prune(memory_dir, "--keep", 1) == 1
    err = capsys.readouterr().err
    assert f"cannot delete {victim}: {os.strerror(code)}" in err and says in err
    if code != 13:
        assert "permissions" not in err
