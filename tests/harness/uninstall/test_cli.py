"""memory-router uninstall: a slim index is never left without a router (refused unless --rollback or
--force), and --all undoes init (issue 29 items 3 and 5): git status as before init, changed files
kept and named."""

import json
import os
import pathlib
import shutil

import pytest

from harness.install import hookcommand
from router.store.memorystore import default_memory_dir
from support.git_repo import git, git_project, git_status  # noqa: F401 - a fixture
from support.settings_project import cli

REPO = pathlib.Path(__file__).resolve().parents[3]
HELDOUT2_MEMORY = REPO / "benchmarks" / "heldout2" / "memory"
EXE_DIR = os.path.dirname(hookcommand.router_executable()[0])


@pytest.fixture
def project(git_project, monkeypatch):
    """A new git repository whose Claude Code memory directory (under the test's HOME) is a copy of
    benchmarks/heldout2/memory; memory-router on PATH, the commands run in the project."""
    shutil.copytree(HELDOUT2_MEMORY, default_memory_dir(str(git_project)))
    monkeypatch.setenv("PATH", EXE_DIR + os.pathsep + "/usr/bin:/bin")
    monkeypatch.chdir(git_project)
    return git_project


def memory_md(project):
    return pathlib.Path(default_memory_dir(str(project))) / "MEMORY.md"


def test_uninstall_all_leaves_git_status_as_before_init(capsys, project):
    before = git_status(project)
    assert cli(capsys, "init", "--yes")[0] == 0
    assert git_status(project) != before
    code, out, err = cli(capsys, "uninstall", "--all")
    assert code == 0, err
    assert git_status(project) == before == ""
    assert "deleted " + str(project / "memory-router.toml") in out
    assert "deleted " + str(project / "brain" / "memory-layer1-clusters.md") in out
    assert "removed " + str(project / ".claude" / "memory-router") in out
    assert "backup of the previous file" not in out  # it went with the state folder
    # nothing of ours left, not even ignored: the state folder, brain/ and .claude/ are gone
    assert sorted(p.name for p in project.iterdir()) == [".git", "README.md"]


def test_uninstall_all_never_deletes_a_file_it_did_not_write_in_its_state_folders(capsys, project):
    assert cli(capsys, "init", "--yes")[0] == 0
    backups = project / ".claude" / "memory-router" / "backups"
    backups.mkdir(parents=True, exist_ok=True)
    mine = backups / "my-notes.txt"
    mine.write_text("keep me\n")
    ours = backups / "settings.local-2026-12-01T00-00-00-000Z.json"
    ours.write_text("{}\n")
    code, out, err = cli(capsys, "uninstall", "--all")
    assert code == 0, err
    assert mine.read_text() == "keep me\n" and not ours.exists()
    assert "my-notes.txt" in out + err


def test_uninstall_all_keeps_and_names_a_file_changed_since_init(capsys, project):
    assert cli(capsys, "init", "--yes")[0] == 0
    tsv = project / "brain" / "memory-layer1-clusters.tsv"
    tsv.write_text(tsv.read_text() + "# my note\n")
    code, out, err = cli(capsys, "uninstall", "--all")
    assert code == 0
    assert f"kept {tsv}: changed since init wrote it" in out and str(tsv) in err
    assert tsv.exists() and not (project / "brain" / "memory-layer1-clusters.md").exists()
    assert git_status(project) == "?? brain/memory-layer1-clusters.tsv\n"


def test_uninstall_all_gives_an_edited_config_its_original_bytes(capsys, project):
    original = b"# mine\nlearning = false\n"
    (project / "memory-router.toml").write_bytes(original)
    git(project, "add", "memory-router.toml")
    git(project, "commit", "-q", "-m", "config")
    assert cli(capsys, "init", "--yes")[0] == 0
    assert (project / "memory-router.toml").read_bytes() != original
    code, out, _err = cli(capsys, "uninstall", "--all")
    assert code == 0 and "restored the original of" in out
    assert (project / "memory-router.toml").read_bytes() == original and git_status(project) == ""


def test_uninstall_all_dry_run_changes_nothing(capsys, project):
    assert cli(capsys, "init", "--yes")[0] == 0
    files = {p: p.read_bytes() for p in project.rglob("*") if p.is_file() and ".git" not in p.parts}
    code, out, _err = cli(capsys, "uninstall", "--all", "--dry-run")
    assert code == 0 and "would delete" in out and "would remove" in out
    assert {p: p.read_bytes() for p in project.rglob("*") if p.is_file() and ".git" not in p.parts} == files


def test_uninstall_while_the_index_is_slim_is_refused_then_rollback_does_both(capsys, project):
    flat = memory_md(project).read_bytes()
    assert cli(capsys, "init", "--yes")[0] == 0
    assert cli(capsys, "slim", "render")[0] == 0
    settings = (project / ".claude" / "settings.json").read_bytes()
    code, _out, err = cli(capsys, "uninstall")
    assert code == 1 and "is a slim index" in err and "--rollback" in err and "--force" in err
    assert (project / ".claude" / "settings.json").read_bytes() == settings
    code, out, _err = cli(capsys, "uninstall", "--rollback")
    assert code == 0 and "rolled back" in out
    assert memory_md(project).read_bytes() == flat and not (project / ".claude" / "settings.json").exists()


def test_uninstall_force_leaves_the_slim_index_and_says_what_it_risks(capsys, project):
    assert cli(capsys, "init", "--yes")[0] == 0
    assert cli(capsys, "slim", "render")[0] == 0
    slim = memory_md(project).read_bytes()
    code, _out, err = cli(capsys, "uninstall", "--force")
    assert code == 0 and "reach no prompt" in err and "slim rollback" in err
    assert memory_md(project).read_bytes() == slim


def test_a_router_left_elsewhere_is_enough(capsys, project):
    assert cli(capsys, "init", "--yes")[0] == 0
    # a hook someone wrote by hand in the local settings: uninstall never touches it, so it still routes
    command = " ".join(hookcommand.router_executable() + ["hook"])
    (project / ".claude" / "settings.local.json").write_text(json.dumps(
        {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": command}]}]}}))
    assert cli(capsys, "slim", "render")[0] == 0
    slim = memory_md(project).read_bytes()
    code, out, err = cli(capsys, "uninstall")
    assert code == 0, err
    assert "runs the router but was not added by memory-router install" in out
    assert memory_md(project).read_bytes() == slim


def test_uninstall_all_rolls_a_slim_index_back_first(capsys, project):
    flat = memory_md(project).read_bytes()
    before = git_status(project)
    assert cli(capsys, "init", "--yes")[0] == 0
    assert cli(capsys, "slim", "render")[0] == 0
    code, out, _err = cli(capsys, "uninstall", "--all")
    assert code == 0 and out.startswith("rolled back ")
    assert memory_md(project).read_bytes() == flat and git_status(project) == before


def test_the_init_record_names_what_init_wrote(capsys, project):
    assert cli(capsys, "init", "--yes")[0] == 0
    record = json.loads((project / ".claude" / "memory-router" / "init.json").read_text())
    assert {os.path.basename(e["path"]) for e in record["files"]} == {
        "memory-router.toml", "memory-layer1-clusters.md", "memory-layer1-clusters.tsv"}
    assert all(e["created"] and len(e["sha256"]) == 64 for e in record["files"])
    assert record["scopes"] == ["project"] and str(project / "brain") in record["dirs"]


def test_an_edited_record_cannot_make_uninstall_delete_a_file_outside_the_project(capsys, project, tmp_path):
    assert cli(capsys, "init", "--yes")[0] == 0
    elsewhere = tmp_path / "precious.txt"
    elsewhere.write_text("mine\n")
    record_file = project / ".claude" / "memory-router" / "init.json"
    record = json.loads(record_file.read_text())
    from harness.fileops import sha256_bytes

    record["files"].append({"path": str(elsewhere), "created": True, "sha256": sha256_bytes(elsewhere.read_bytes()),
                            "original_sha256": None, "original": None})
    record_file.write_text(json.dumps(record))
    code, out, _err = cli(capsys, "uninstall", "--all")
    assert code == 0 and f"kept {elsewhere}: outside the project" in out
    assert elsewhere.read_text() == "mine\n"


# --------------------------------------------------------------------------- issue 35 item 3: deletes

def _edit_record(project, change):
    record_file = project / ".claude" / "memory-router" / "init.json"
    record = json.loads(record_file.read_text())
    change(record)
    record_file.write_text(json.dumps(record))


def test_recorded_dirs_outside_the_project_are_never_removed(capsys, project, tmp_path):
    """An edited record listing an empty directory outside the project (absolute, or `..`): it used
    to be removed; now it is named and kept, and the rest of the undo completes."""
    assert cli(capsys, "init", "--yes")[0] == 0
    outside = tmp_path / "empty-elsewhere"
    outside.mkdir()
    climbing = project / "brain" / ".." / ".." / "empty-sibling"
    (tmp_path / "empty-sibling").mkdir()
    _edit_record(project, lambda r: r["dirs"].extend([str(outside), str(climbing), "/"]))
    code, out, err = cli(capsys, "uninstall", "--all")
    assert code == 0, err
    assert outside.is_dir() and (tmp_path / "empty-sibling").is_dir()
    assert f"kept {outside}: it is outside {project}" in out
    assert f"kept {climbing}: it is outside" in out
    assert sorted(p.name for p in project.iterdir()) == [".git", "README.md"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_in_the_record_is_named_and_kept_and_the_undo_completes(capsys, project):
    """A record entry naming a FIFO (with no hash, or with the hash of what was there) stopped
    uninstall --all half way, hooks already gone, and every rerun stopped there."""
    assert cli(capsys, "init", "--yes")[0] == 0
    pipe = project / "brain" / "named.pipe"
    os.mkfifo(pipe)
    _edit_record(project, lambda r: r["files"].insert(0, {"path": str(pipe), "created": True, "sha256": None,
                                                           "original_sha256": None, "original": None}))
    code, out, err = cli(capsys, "uninstall", "--all")
    assert code == 0, err
    assert f"kept {pipe}: it is a named pipe (FIFO), not a regular file" in out
    assert "deleted " + str(project / "memory-router.toml") in out
    assert not (project / "memory-router.toml").exists() and not (project / ".claude").exists()
    assert pipe.exists() and sorted(p.name for p in (project / "brain").iterdir()) == ["named.pipe"]


def test_a_recorded_file_swapped_for_a_symlink_out_of_the_project_is_kept(capsys, project, tmp_path):
    assert cli(capsys, "init", "--yes")[0] == 0
    config = project / "memory-router.toml"
    target = tmp_path / "shared-config.toml"
    target.write_bytes(config.read_bytes())   # the same bytes: the hash matches through the link
    config.unlink()
    config.symlink_to(target)
    code, out, err = cli(capsys, "uninstall", "--all")
    assert code == 0, err
    assert target.read_bytes() and config.is_symlink()
    assert f"kept {config}: " in out


def test_uninstall_where_no_settings_file_exists_says_so(capsys, project):
    # the plugin route: init installs no settings hook, and uninstall --all said only "the hook is not
    # installed in <project>/.claude/settings.json", a file the user never had
    code, out, err = cli(capsys, "uninstall")
    settings = project / ".claude" / "settings.json"
    assert code == 0 and not settings.exists()
    assert f"is not installed in {settings} (there is no such file); nothing changed" in out
    settings.parent.mkdir()
    settings.write_text("{}\n")
    code, out, err = cli(capsys, "uninstall")
    assert code == 0 and f"is not installed in {settings}; nothing changed" in out
