"""Issue 36 item 1: after the README's Quick start, with or without enrich (and learn),
``uninstall --all`` gives ``git status`` back as it was before init: the utterances, near-misses
and learned files memory-router wrote are recorded when written, with their hash, and deleted
when nobody changed them since (a changed one is named and kept). A failed enrich writes no file
and never says it wrote one."""

import os
import pathlib
import shutil
import sys

import pytest

from harness.install import hookcommand
from router.config import learned_path, nearmisses_path, utterances_path
from router.store.memorystore import default_memory_dir
from support.git_repo import git_project, git_status  # noqa: F401 - a fixture
from support.replay_sessions import write_session
from support.settings_project import cli

REPO = pathlib.Path(__file__).resolve().parents[3]
HELDOUT2_MEMORY = REPO / "benchmarks" / "heldout2" / "memory"
EXE_DIR = os.path.dirname(hookcommand.router_executable()[0])
FAKE_ENGINE = REPO / "tests" / "harness" / "clusters" / "fake_engine.py"
RESUME = "my sedge run failed halfway, how do I relaunch it without recomputing the alignment?"


@pytest.fixture
def project(git_project, monkeypatch):
    shutil.copytree(HELDOUT2_MEMORY, default_memory_dir(str(git_project)))
    monkeypatch.setenv("PATH", EXE_DIR + os.pathsep + "/usr/bin:/bin")
    monkeypatch.chdir(git_project)
    return git_project


def cluster_file(project):
    return str(project / "brain" / "memory-layer1-clusters.md")


def engine(mode):
    return ["--engine", "command", "--command", f"{sys.executable} {FAKE_ENGINE} {mode}"]


def test_quick_start_with_enrich_and_learn_then_uninstall_all_leaves_git_status_as_before(capsys, project, tmp_path):
    before = git_status(project)
    assert cli(capsys, "init", "--yes")[0] == 0
    code, out, err = cli(capsys, "clusters", "enrich", "--yes", *engine("good"))
    assert code == 0, out + err
    assert os.path.isfile(utterances_path(cluster_file(project))) and os.path.isfile(
        nearmisses_path(cluster_file(project)))
    # learn, with learning switched on in a config outside the project (the project's stays init's)
    config = tmp_path / "learning.toml"
    config.write_text(f'clusters = "{cluster_file(project)}"\nlearning = true\n')
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    write_session(sessions, "aaaa-1", [(RESUME, ["feedback_always_resume", "env_scratch_purge_30_days"])])
    code, out, err = cli(capsys, "learn", "--config", config, sessions)
    assert code == 0, out + err
    assert os.path.isfile(learned_path(cluster_file(project))), out
    assert cli(capsys, "slim", "render")[0] == 0
    code, out, err = cli(capsys, "uninstall", "--all")
    assert code == 0, out + err
    # each line names the command that wrote the file (it said "init created it" for enrich's)
    for written, by in ((utterances_path(cluster_file(project)), "clusters enrich"),
                        (nearmisses_path(cluster_file(project)), "clusters enrich"),
                        (learned_path(cluster_file(project)), "learn"), (cluster_file(project), "init")):
        assert f"deleted {written}: {by} created it and nobody changed it" in out
    assert git_status(project) == before == ""
    assert sorted(p.name for p in project.iterdir()) == [".git", "README.md"]


def test_init_advice_clusters_build_engine_then_uninstall_all_leaves_git_status_as_before(capsys, project):
    """init advises ``clusters build --engine claude`` to name the clusters; following it (here with
    a command engine) rewrote init's cluster files, archived them and enriched the store, and
    uninstall --all kept all of it: the rewritten files as "changed since init wrote it", the
    archives, utterances and near-misses unnamed."""
    before = git_status(project)
    code, out, err = cli(capsys, "init", "--yes")
    assert code == 0 and "clusters build --engine claude" in out
    code, out, err = cli(capsys, "clusters", "build", "--yes", *engine("good"))
    assert code == 0, out + err
    assert os.path.isfile(utterances_path(cluster_file(project))) and any(
        p.name.startswith("memory-layer1-clusters.archive-") for p in (project / "brain").iterdir())
    code, out, err = cli(capsys, "uninstall", "--all")
    assert code == 0, out + err
    assert f"deleted {cluster_file(project)}: init created it and nobody changed it" in out
    assert f"deleted {utterances_path(cluster_file(project))}: clusters build created it" in out
    assert git_status(project) == before == "", out + err


def test_the_step_by_step_route_clusters_build_then_uninstall_all_leaves_nothing(capsys, project):
    """docs/init.md's "Step by step, without init": clusters build, install; uninstall --all then
    took the hooks out but said "no init record" and left brain/ (the built files and the folder)."""
    memory = default_memory_dir(str(project))
    assert cli(capsys, "clusters", "build", "--memory-dir", memory)[0] == 0
    assert cli(capsys, "install", "--project", ".")[0] == 0
    code, out, err = cli(capsys, "uninstall", "--all")
    assert code == 0, out + err
    assert f"deleted {cluster_file(project)}: clusters build created it and nobody changed it" in out
    assert git_status(project) == "" and not (project / "brain").exists()


def test_an_enrich_file_changed_since_is_named_and_kept(capsys, project):
    assert cli(capsys, "init", "--yes")[0] == 0
    assert cli(capsys, "clusters", "enrich", "--yes", *engine("good"))[0] == 0
    utterances = pathlib.Path(utterances_path(cluster_file(project)))
    edited = utterances.read_text(encoding="utf-8") + "# my own note\n"
    utterances.write_text(edited, encoding="utf-8")
    code, out, err = cli(capsys, "uninstall", "--all")
    assert code == 0, err
    assert f"kept {utterances}: changed since clusters enrich wrote it" in out
    # the closing warning named init as the writer of enrich's file
    assert f"1 file(s) memory-router wrote were changed since and are yours now, so they stay: {utterances}" in err
    assert utterances.read_text(encoding="utf-8") == edited
    assert not os.path.exists(nearmisses_path(cluster_file(project)))


def test_a_failed_enrich_writes_no_file_and_says_it_wrote_none(capsys, project):
    assert cli(capsys, "init", "--yes")[0] == 0
    code, out, err = cli(capsys, "clusters", "enrich", "--yes", *engine("crash"))
    assert code == 1
    assert not os.path.exists(utterances_path(cluster_file(project)))
    assert not os.path.exists(nearmisses_path(cluster_file(project)))
    assert "wrote" not in out
    assert cli(capsys, "uninstall", "--all")[0] == 0
    assert git_status(project) == ""


# --------------------------------------------------------------------------- issue 36 item 6, item 3's gate hint

@pytest.mark.parametrize("order", [("hooks", "gate"), ("gate", "hooks"), ("all",)])
def test_a_settings_file_init_created_goes_when_nothing_of_ours_is_left_in_any_order(capsys, project, order):
    before = git_status(project)
    assert cli(capsys, "init", "--yes")[0] == 0
    # install --gate right after init follows the scope init put the hooks in (it was refused)
    code, out, err = cli(capsys, "install", "--gate")
    assert code == 0, out + err
    assert "memory-router gate" in (project / ".claude" / "settings.json").read_text()
    steps = {"hooks": ["uninstall"], "gate": ["uninstall", "--gate"], "all": ["uninstall", "--all", "--gate"]}
    for step in order:
        code, out, err = cli(capsys, *steps[step])
        assert code == 0, out + err
    assert not (project / ".claude" / "settings.json").exists()
    if order == ("all",):
        assert git_status(project) == before == ""


def test_a_gate_and_mcp_server_left_by_uninstall_all_are_taken_out_whole_later(capsys, project):
    """uninstall --all leaves a gate and an MCP server you added (README); it used to delete their
    install records with the state folder, so the later uninstall --gate / --mcp left a settings.json
    and a .mcp.json memory-router had created, holding {}."""
    before = git_status(project)
    assert cli(capsys, "init", "--yes")[0] == 0
    for step in (["install", "--gate"], ["install", "--mcp"], ["uninstall", "--all"], ["uninstall", "--gate"],
                 ["uninstall", "--mcp"]):
        code, out, err = cli(capsys, *step)
        assert code == 0, (step, out + err)
    assert not (project / ".claude" / "settings.json").exists() and not (project / ".mcp.json").exists()
    assert git_status(project) == before == ""
