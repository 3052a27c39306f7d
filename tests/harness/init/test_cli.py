"""memory-router init, driven through the CLI. The first test is issue 22's done-when: init on a copy
of benchmarks/heldout2/memory in a new git repository leaves a working install whose doctor passes,
whose canary run of a suite without clusters: checks that store, whose .claude/settings.json holds
no absolute path, and whose uninstall restores git status."""

import io
import json
import os
import pathlib
import re
import shutil
import sys

import pytest

from harness.install import hookcommand
from router.store.memorystore import default_memory_dir
from support.git_repo import git, git_project, git_status  # noqa: F401 - a fixture
from support.settings_project import cli

REPO = pathlib.Path(__file__).resolve().parents[3]
HELDOUT2_MEMORY = REPO / "benchmarks" / "heldout2" / "memory"
EXE_DIR = os.path.dirname(hookcommand.router_executable()[0])
FAKE_ENGINE = REPO / "tests" / "harness" / "clusters" / "fake_engine.py"
# members of heldout2 only: the bundled example store holds neither
SUITE = """\
cases:
  - id: resume
    prompt: "my sedge run failed halfway, how do I relaunch it without recomputing the alignment?"
    injects: [feedback_always_resume]
  - id: scratch
    prompt: "how long do files survive on /scratch before the purge?"
    injects: [env_scratch_purge_30_days]
"""


@pytest.fixture
def heldout2_project(git_project, monkeypatch):
    """A new git repository whose Claude Code memory directory (where Claude Code keeps it for
    this project, under the test's HOME) is a copy of benchmarks/heldout2/memory; memory-router
    on PATH, the command run in the project."""
    shutil.copytree(HELDOUT2_MEMORY, default_memory_dir(str(git_project)))
    monkeypatch.setenv("PATH", EXE_DIR + os.pathsep + "/usr/bin:/bin")
    monkeypatch.chdir(git_project)
    return git_project


def _words(settings_text):
    data = json.loads(settings_text)
    return [word for event in data["hooks"].values() for group in event for handler in group["hooks"]
            for word in hookcommand.command_words(handler["command"])]


def test_init_on_heldout2_in_a_git_repository_done_when(capsys, heldout2_project, tmp_path):
    before = git_status(heldout2_project)
    code, out, err = cli(capsys, "init", "--yes")
    assert code == 0, out + err
    assert "doctor: " in out and "all passed" in out
    # a working install whose doctor passes
    code, doctor_out, _ = cli(capsys, "doctor", "--json")
    report = json.loads(doctor_out)
    assert code == 0 and report["ok"], [c for c in report["checks"] if c["status"] == "fail"]
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["hook routes"]["status"] == "pass" and checks["portable hook"]["status"] == "pass"
    assert checks["MEMORY.md size"]["memory_md"] == str(pathlib.Path(default_memory_dir(str(heldout2_project)))
                                                         / "MEMORY.md")
    # the committed scope holds no absolute path
    shared = (heldout2_project / ".claude" / "settings.json").read_text()
    assert _words(shared) and not [w for w in _words(shared) if os.path.isabs(w) or w.startswith("~")]
    assert str(tmp_path) not in shared and EXE_DIR not in shared
    # canary run of a suite without clusters: checks the project's store
    suite = tmp_path / "my-canaries.yaml"
    suite.write_text(SUITE)
    code, run_out, _ = cli(capsys, "canary", "run", "--json", suite)
    run = json.loads(run_out)
    assert code == 0 and run["ok"] and run["totals"]["pass"] == 2
    assert run["suites"][0]["clusters"] == str(heldout2_project / "brain" / "memory-layer1-clusters.md")
    # nothing but what init made is in git status (no lock file, no state folder)
    assert git_status(heldout2_project).splitlines() == [
        "?? .claude/settings.json", "?? brain/memory-layer1-clusters.md", "?? brain/memory-layer1-clusters.tsv",
        "?? memory-router.toml"]
    # uninstall restores git status: as it was before the install (init's store and config are the user's)
    git(heldout2_project, "add", "memory-router.toml", "brain")
    git(heldout2_project, "commit", "-q", "-m", "memory-router store")
    assert cli(capsys, "uninstall")[0] == 0
    assert git_status(heldout2_project) == before == ""


def test_a_second_init_changes_nothing_and_says_so(capsys, heldout2_project):
    assert cli(capsys, "init", "--yes")[0] == 0
    files = {p: p.read_bytes() for p in heldout2_project.rglob("*") if p.is_file() and ".git" not in p.parts}
    code, out, _ = cli(capsys, "init", "--yes")
    assert code == 0
    assert ": kept" in out and "(kept)" in out and "nothing to change" in out and "nothing changed" in out
    assert {p: p.read_bytes() for p in files} == files


def test_without_a_terminal_the_hot_strip_is_not_taken_unasked(capsys, heldout2_project, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    before = git_status(heldout2_project)
    code, _out, err = cli(capsys, "init")
    assert code == 1 and "pass --yes" in err
    assert git_status(heldout2_project) == before and not (heldout2_project / ".claude").exists()


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_the_user_edits_the_proposal_and_the_config_holds_the_answer(capsys, heldout2_project, monkeypatch):
    monkeypatch.setattr(sys, "stdin", _Terminal("7 nope\n2 1 feedback_always_resume\n"))
    code, out, err = cli(capsys, "init")
    assert code == 0 and "is no memory of this store" in err
    import tomllib

    config = tomllib.loads((heldout2_project / "memory-router.toml").read_text())
    proposal = re.findall(r"^ +\d+\. (\S+) \u2014", out, re.M)
    assert config["hot_strip"] == [proposal[1], proposal[0], "feedback_always_resume"]
    assert "(confirmed)" in out


def test_a_dry_run_writes_nothing_and_shows_what_it_would(capsys, heldout2_project):
    before = git_status(heldout2_project)
    code, out, _err = cli(capsys, "init", "--dry-run")
    assert code == 0
    assert "would build" in out and "would set memory_dir, clusters, hot_strip" in out and "+++" in out
    assert git_status(heldout2_project) == before
    assert not (heldout2_project / ".claude").exists() and not (heldout2_project / "brain").exists()


def test_json_says_which_store_it_set_up(capsys, heldout2_project):
    code, out, _ = cli(capsys, "init", "--yes", "--json")
    report = json.loads(out)
    assert code == 0 and report["ok"]
    assert report["store"]["cluster_file"] == str(heldout2_project / "brain" / "memory-layer1-clusters.md")
    assert report["store"]["memory_dir"] == default_memory_dir(str(heldout2_project))
    assert report["install"]["scope"] == "project" and len(report["next"]) == 3
    assert report["cluster_file"]["action"] == "built" and report["hot_strip"]["action"] == "proposed"


def test_without_memory_router_on_path_init_installs_locally_and_says_how_to_share(capsys, heldout2_project,
                                                                                 monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    code, out, err = cli(capsys, "init", "--yes")
    assert code == 0
    assert "local scope" in out and (heldout2_project / ".claude" / "settings.local.json").is_file()
    assert not (heldout2_project / ".claude" / "settings.json").exists()
    assert "git does not ignore" in err


def test_no_memory_directory_is_exit_2_naming_where_it_looked(capsys, git_project, monkeypatch):
    monkeypatch.chdir(git_project)
    code, _out, err = cli(capsys, "init", "--yes")
    assert code == 2 and default_memory_dir(str(git_project)) in err and "--memory-dir" in err


def test_init_with_an_engine_names_and_enriches_the_store(capsys, heldout2_project, tmp_path):
    from router.config import utterances_path

    log = tmp_path / "asked.jsonl"
    command = f"{sys.executable} {FAKE_ENGINE} good --log {log}"
    code, out, err = cli(capsys, "init", "--yes", "--engine", "command", "--command", command)
    assert code == 0, out + err
    kinds = [json.loads(line)["protocol"] for line in log.read_text().splitlines()]
    assert "memory-router.label/1" in kinds and "memory-router.enrich/2" in kinds
    assert os.path.isfile(utterances_path(str(heldout2_project / "brain" / "memory-layer1-clusters.md")))
    log.unlink()
    code, out, _ = cli(capsys, "init", "--yes", "--engine", "command", "--command", command)
    assert code == 0 and "is current" in out and not log.exists()   # nothing asked twice


def test_a_project_scope_path_cannot_serve_is_refused_before_anything_is_written(capsys, heldout2_project,
                                                                                monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    code, _out, err = cli(capsys, "init", "--yes", "--scope", "project")
    assert code == 1 and "PATH finds no memory-router" in err
    assert git_status(heldout2_project) == "" and not (heldout2_project / ".claude").exists()


def test_the_hot_strip_question_fits_80_columns_and_cuts_no_word(capsys, heldout2_project, monkeypatch):
    # issue 36 item 8: each proposed memory's hook line was cut at 90 characters, mid-word
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setattr(sys, "stdin", _Terminal("\n"))
    code, out, _err = cli(capsys, "init")
    assert code == 0
    start = out.index("hot strip:")
    listing = out[start:out.index("hot strip:", start + 1)].splitlines()[1:]
    assert listing and all(len(line) <= 80 for line in listing), listing
    from router.store.clusterfile import load_cluster_file

    hooks = {m.slug: m.hook for m in load_cluster_file(str(heldout2_project / "brain" /
                                                           "memory-layer1-clusters.md")).members}
    words = {word for hook in hooks.values() for word in hook.split()}
    shown = " ".join(listing).split()
    # every word shown is a whole word of a hook (or a slug, a number, the dash, the ellipsis)
    cut = [w for w in shown if w not in words and w.rstrip(".") not in hooks and not re.fullmatch(r"\d+\.|\u2014|\.\.\.", w)]
    assert not cut, cut


class _InterruptedTerminal(_Terminal):
    """A terminal whose user presses Ctrl-C at the question."""

    def readline(self, *args):
        raise KeyboardInterrupt


def test_ctrl_c_at_the_hot_strip_question_leaves_nothing_unrecorded(capsys, heldout2_project, monkeypatch):
    """Issue 36 item 6: init built brain/ before it asked, and Ctrl-C there left a store no later
    uninstall --all removed; the build is recorded before the question now."""
    before = git_status(heldout2_project)
    monkeypatch.setattr(sys, "stdin", _InterruptedTerminal(""))
    code, _out, _err = cli(capsys, "init")   # the CLI turns Ctrl-C into exit 130
    assert code == 130 and (heldout2_project / "brain").is_dir()
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    code, out, err = cli(capsys, "uninstall", "--all")
    assert code == 0, out + err
    assert git_status(heldout2_project) == before == ""
