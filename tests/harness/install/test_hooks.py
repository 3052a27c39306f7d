"""harness.install.hooks: install and uninstall as values in, a result out. Leaving nothing behind
(issue 22 item 4: git status after uninstall is git status before install) and the provider budget
against the timeout the entry gets (router.providerbudget, H's request 3)."""

import json
import os

import pytest

from harness.install import hookcommand, hooks
from support.git_repo import git_project, git_status  # noqa: F401 - a fixture
from support.settings_project import cli

EXE_DIR = os.path.dirname(hookcommand.router_executable()[0])


@pytest.mark.parametrize("scope", ["local", "project"])
def test_uninstall_leaves_git_status_as_it_was_before_install(capsys, git_project, monkeypatch, scope):
    monkeypatch.setenv("PATH", EXE_DIR + os.pathsep + os.environ.get("PATH", ""))
    before = git_status(git_project)
    assert cli(capsys, "install", "--project", git_project, "--scope", scope, "--gate")[0] == 0
    assert cli(capsys, "install", "--mcp", "--project", git_project)[0] == 0
    assert cli(capsys, "install", "--project", git_project, "--scope", scope)[0] == 0   # again: nothing changes
    during = git_status(git_project)
    wrote = ".claude/settings.json" if scope == "project" else ".claude/settings.local.json"
    assert during.splitlines() == sorted([f"?? {wrote}", "?? .mcp.json"])  # no lock file, no state folder
    assert cli(capsys, "uninstall", "--project", git_project, "--gate")[0] == 0
    assert cli(capsys, "uninstall", "--mcp", "--project", git_project)[0] == 0
    assert git_status(git_project) == before
    state = git_project / ".claude" / "memory-router"
    assert (state / ".gitignore").is_file() and (state / "backups").is_dir()  # kept, and ignored
    assert not list(git_project.rglob("*.memory-router.lock"))


def test_uninstall_restores_a_committed_settings_file_byte_for_byte(capsys, git_project):
    from support.git_repo import git

    shared = git_project / ".claude" / "settings.local.json"
    shared.parent.mkdir()
    shared.write_text('{\n  "model": "opus"\n}\n')
    git(git_project, "add", "-f", ".claude/settings.local.json")
    git(git_project, "commit", "-q", "-m", "settings")
    assert cli(capsys, "install", "--project", git_project)[0] == 0
    assert git_status(git_project) == " M .claude/settings.local.json\n"
    assert cli(capsys, "uninstall", "--project", git_project)[0] == 0
    assert git_status(git_project) == ""


@pytest.mark.parametrize("budget_ms, kept_timeout, code", [
    (4000, None, 0),    # fits the 5 s install writes
    (3500, 3, 2),       # a re-install keeps the entry's 3 s, which cannot hold it
    (2000, 3, 0),
])
def test_a_provider_budget_the_hook_timeout_cannot_hold_is_refused(capsys, project, budget_ms, kept_timeout, code):
    (project / "memory-router.toml").write_text(f"provider_timeout_ms = {budget_ms}\n")
    local = project / ".claude" / "settings.local.json"
    if kept_timeout:
        local.write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [{
            "type": "command", "command": hookcommand.router_hook_command(hookcommand.router_executable()),
            "timeout": kept_timeout}]}]}}))
    before = local.read_bytes() if local.exists() else None
    got, _out, err = cli(capsys, "install", "--project", project)
    assert got == code, err
    if code:
        assert f"{project / 'memory-router.toml'}: provider_timeout_ms = 3500 does not fit the hook's 3 s" in err
        assert "set provider_timeout_ms to at most 2000" in err and "nothing was written" in err
        assert local.read_bytes() == before


def test_install_lines_of_a_dry_run_say_nothing_was_changed(project):
    result = hooks.install_router(str(project), dry_run=True, out=open(os.devnull, "w"))
    assert result["action"] == "dry-run" and not os.path.exists(result["settings"])
    assert hooks.install_lines(result)[-1] == ("err", f"(dry run: {result['settings']} not changed)")


def test_uninstall_scopes():
    assert hooks.uninstall_scopes() == ["project", "local"]
    assert hooks.uninstall_scopes(user=True) == ["user"]
    assert hooks.uninstall_scopes("local") == ["local"]
