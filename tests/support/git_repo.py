"""A project that is a new git repository (a committed README, nothing else), and its ``git status``:
how issue 22's "uninstall leaves git status as it was" is checked. Import the fixture by name
(``from support.git_repo import git_project``); a machine without git skips those tests."""

import shutil
import subprocess

import pytest

GIT_IDENTITY = ["-c", "user.name=memory-router tests", "-c", "user.email=tests@memory-router.invalid",
                "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"]


def git(repo, *args):
    done = subprocess.run(["git", *GIT_IDENTITY, "-C", str(repo), *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def git_status(repo):
    """Every change git sees, untracked files one by one (``--untracked-files=all``)."""
    return git(repo, "status", "--porcelain", "--untracked-files=all")


@pytest.fixture
def git_project(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "README.md").write_text("a project\n")
    git(repo, "add", "README.md")
    git(repo, "commit", "-q", "-m", "start")
    return repo
