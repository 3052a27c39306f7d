"""harness.install.scopes and install/uninstall --scope (issue 22 item 3): a personal command goes to
the local scope, the project scope gets a portable command and says what teammates install, a hook
in another scope is refused, doctor reports where each hook comes from."""

import json
import os

import pytest

from harness import installsource
from harness.install import hookcommand, scopes
from router.errors import InputError, RefusedError
from support.git_repo import git_project  # noqa: F401 - a fixture
from support.settings_project import cli, doctor, write_settings

EXE_DIR = os.path.dirname(hookcommand.router_executable()[0])


@pytest.fixture
def with_path(monkeypatch):
    """PATH that finds the memory-router under test (as a user's shell with it installed)."""
    monkeypatch.setenv("PATH", EXE_DIR + os.pathsep + "/usr/bin:/bin")


@pytest.fixture
def without_path(monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")


def _settings(project, name="settings.json"):
    path = project / ".claude" / name
    return json.loads(path.read_text()) if path.exists() else None


def _commands(data):
    return [h["command"] for event in (data or {}).get("hooks", {}).values() for g in event for h in g["hooks"]]


# --------------------------------------------------------------------------- the rule


def test_personal_reason_names_a_virtualenv_and_the_home_directory(tmp_path, monkeypatch):
    venv = tmp_path / "opt" / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert scopes.personal_reason(str(venv / "bin" / "memory-router")) == f"in the virtualenv {venv}"
    assert scopes.personal_reason(str(tmp_path / "home" / ".local" / "bin" / "memory-router")) == \
        "in your home directory"
    assert scopes.personal_reason(str(tmp_path / "homeless" / "memory-router")) is None  # a prefix is not a parent
    assert scopes.personal_reason("/usr/local/bin/memory-router") is None


@pytest.mark.parametrize("requested, user, exe, on_path, scope", [
    ("project", False, "venv", False, "project"),
    (None, True, "venv", False, "user"),
    (None, False, "venv", True, "local"),        # a virtualenv's path: teammates have none
    (None, False, "system", True, "project"),    # /usr/local/bin on PATH: the portable command runs the same
    (None, False, "system", False, "local"),
])
def test_choose_scope(tmp_path, monkeypatch, requested, user, exe, on_path, scope):
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("")
    system = tmp_path / "system" / "bin"
    system.mkdir(parents=True)
    for directory in (venv / "bin", system):
        (directory / "memory-router").write_text("#!/bin/sh\n")
        (directory / "memory-router").chmod(0o755)
    path = {"venv": venv / "bin", "system": system}[exe]
    monkeypatch.setenv("PATH", str(path) if on_path else "/usr/bin")
    assert scopes.choose_scope(requested, user, [str(path / "memory-router")])[0] == scope


def test_project_scope_needs_memory_router_on_path(without_path):
    with pytest.raises(RefusedError) as err:
        scopes.exe_for("project")
    assert "PATH finds no memory-router" in err.value.message and EXE_DIR in err.value.fix
    assert scopes.exe_for("local") == hookcommand.router_executable()


def test_project_scope_writes_paths_under_claude_project_dir(tmp_path):
    project = tmp_path / "p"
    (project / "brain").mkdir(parents=True)
    word = scopes.option_word("project", str(project))
    spaced = word("clusters", str(project / "brain" / "my clusters.md"))
    assert spaced == '"$CLAUDE_PROJECT_DIR"/\'brain/my clusters.md\''
    assert word("clusters", "$CLAUDE_PROJECT_DIR/brain/x.md") == '"$CLAUDE_PROJECT_DIR"/brain/x.md'
    with pytest.raises(InputError, match="outside the project"):
        word("config", str(tmp_path / "elsewhere.toml"))
    kept = scopes.option_word("local", str(project), as_written=("clusters",))
    assert kept("clusters", "$CLAUDE_PROJECT_DIR/brain/x.md") == '"$CLAUDE_PROJECT_DIR"/brain/x.md'
    assert kept("config", "rel.toml") == hookcommand.quote_for_shell(os.path.abspath("rel.toml"))


# --------------------------------------------------------------------------- install --scope


def test_a_virtualenvs_command_goes_to_the_local_scope_by_default(capsys, project):
    code, out, _err = cli(capsys, "install", "--project", project)
    assert code == 0
    assert _settings(project) is None
    local = _commands(_settings(project, "settings.local.json"))
    assert local and all(os.path.isabs(hookcommand.command_words(c)[0]) for c in local)
    assert "scope: local scope" in out and "in the virtualenv" in out


def test_project_scope_holds_no_absolute_path_and_says_what_teammates_install(capsys, project, with_path,
                                                                               example_cluster_file):
    clusters = project / "brain" / "memory-layer1-clusters.md"
    clusters.parent.mkdir()
    clusters.write_bytes(example_cluster_file.read_bytes())
    code, out, _err = cli(capsys, "install", "--project", project, "--scope", "project", "--clusters", clusters,
                          "--gate")
    assert code == 0
    text = (project / ".claude" / "settings.json").read_text()
    assert str(project) not in text and EXE_DIR not in text and "/work" not in text
    assert set(_commands(json.loads(text))) == {
        'memory-router hook --clusters "$CLAUDE_PROJECT_DIR"/brain/memory-layer1-clusters.md # memory-router install',
        "memory-router session-start # memory-router install",
        'memory-router gate --clusters "$CLAUDE_PROJECT_DIR"/brain/memory-layer1-clusters.md '
        '# memory-router gate install'}
    assert "each teammate needs memory-router on PATH" in out
    # issue 29: what teammates install is where this one came from (here the test run's checkout)
    assert installsource.teammate_command(installsource.installed_source(with_origin=True)) in out
    assert "pipx install memory-router" not in out
    code, checks, _ = doctor(capsys, "--project", project)
    assert checks["hook installed"]["hooks"][0]["scope"] == "project"
    assert checks["portable hook"]["status"] == "pass" and EXE_DIR in checks["portable hook"]["message"]
    assert checks["cluster file"]["cluster_file"] == str(clusters)
    assert checks["hook routes"]["status"] == "pass"
    assert code == 0


@pytest.mark.parametrize("argv, code, phrase", [
    (["--scope", "project"], 1, "PATH finds no memory-router"),
    (["--scope", "project", "--clusters", "{outside}"], 2, "is outside the project"),
    (["--user", "--scope", "local"], 2, "name two settings files"),
])
def test_install_refusals_write_nothing(capsys, project, tmp_path, example_cluster_file, monkeypatch, argv, code,
                                        phrase):
    if "{outside}" not in argv:
        monkeypatch.setenv("PATH", "/usr/bin:/bin")
    else:
        monkeypatch.setenv("PATH", EXE_DIR + os.pathsep + "/usr/bin:/bin")
    argv = [str(example_cluster_file) if a == "{outside}" else a for a in argv]
    where = [] if "--user" in argv else ["--project", project]
    got, _out, err = cli(capsys, "install", *where, *argv)
    assert got == code and phrase in err
    assert sorted(p.name for p in (project / ".claude").iterdir()) == []


def test_a_hook_in_another_scope_is_refused_naming_the_way_out(capsys, project, with_path):
    assert cli(capsys, "install", "--project", project)[0] == 0   # local, absolute
    before = (project / ".claude" / "settings.local.json").read_bytes()
    code, _out, err = cli(capsys, "install", "--project", project, "--scope", "project")
    assert code == 1 and "already installed in" in err and "(local scope)" in err
    assert "memory-router uninstall --scope local" in err
    assert not (project / ".claude" / "settings.json").exists()
    assert (project / ".claude" / "settings.local.json").read_bytes() == before
    # the same command in two scopes is one hook to Claude Code (it runs identical commands once)
    assert cli(capsys, "install", "--project", project, "--scope", "local")[0] == 0


def test_an_abs_path_in_the_shared_file_is_rewritten_portable_in_place(capsys, project, with_path):
    write_settings(project, hookcommand.router_hook_command(hookcommand.router_executable()))
    code, checks, _ = doctor(capsys, "--project", project)
    assert checks["portable hook"]["status"] == "warn" and "in the virtualenv" in checks["portable hook"]["message"]
    assert "install --scope project" in checks["portable hook"]["fix"]
    code, out, err = cli(capsys, "install", "--project", project, "--scope", "project")
    assert code == 0 and "changes from" in err
    assert _commands(_settings(project))[0] == "memory-router hook # memory-router install"


def test_doctor_fails_a_portable_hook_that_path_cannot_find(capsys, project, without_path):
    write_settings(project, "memory-router hook # memory-router install")
    code, checks, _ = doctor(capsys, "--project", project)
    assert code == 1
    assert checks["portable hook"]["status"] == "fail"
    # issue 29: the fix names where this memory-router was installed from, not an unpublished release
    assert installsource.teammate_command(installsource.installed_source(with_origin=True)) in \
        checks["portable hook"]["fix"]
    assert "pipx install memory-router" not in checks["portable hook"]["fix"]


def test_uninstall_cleans_both_project_files_and_one_scope_when_asked(capsys, project, with_path):
    write_settings(project, "memory-router hook # memory-router install")
    (project / ".claude" / "settings.local.json").write_text(json.dumps({"hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": "memory-router hook # memory-router install"}]}]}, "model": "x"}))
    code, out, _ = cli(capsys, "uninstall", "--project", project, "--scope", "local")
    assert code == 0 and _commands(_settings(project)) and not _commands(_settings(project, "settings.local.json"))
    assert _settings(project, "settings.local.json") == {"model": "x"}
    code, out, _ = cli(capsys, "uninstall", "--project", project)
    assert code == 0 and not _commands(_settings(project))
    code, out, _ = cli(capsys, "uninstall", "--project", project)
    assert code == 0 and "is not installed" in out


def test_a_local_file_git_does_not_ignore_is_named(capsys, git_project):
    code, _out, err = cli(capsys, "install", "--project", git_project)
    assert code == 0 and "git does not ignore" in err and "settings.local.json" in err
    cli(capsys, "uninstall", "--project", git_project)
    (git_project / ".gitignore").write_text(".claude/settings.local.json\n")
    code, _out, err = cli(capsys, "install", "--project", git_project)
    assert code == 0 and "git does not ignore" not in err
