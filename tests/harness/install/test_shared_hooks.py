"""Issue 35 item 4: hooks shared between projects. A user-scope hook project A's init installed is
not project B's to remove; removing a user-scope router while any project on the machine has a
slim MEMORY.md that relies on it is refused, naming the projects, wherever it is run from
(``--force`` overrides); a hook whose command cannot run, and ``"disableAllHooks": true``, count
as no router for ``slim render``, ``uninstall`` and doctor."""

import json
import os
import pathlib
import shutil

import pytest

from harness.install import hookcommand
from router.store.memorystore import default_memory_dir
from support.git_repo import git
from support.settings_project import cli

REPO = pathlib.Path(__file__).resolve().parents[3]
HELDOUT2_MEMORY = REPO / "benchmarks" / "heldout2" / "memory"
EXE_DIR = os.path.dirname(hookcommand.router_executable()[0])


def _repo(path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    path.mkdir()
    git(path, "init", "-q")
    shutil.copytree(HELDOUT2_MEMORY, default_memory_dir(str(path)))
    return path


@pytest.fixture
def two_projects(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", EXE_DIR + os.pathsep + "/usr/bin:/bin")
    return _repo(tmp_path / "project-a"), _repo(tmp_path / "project-b")


def user_settings():
    return pathlib.Path(os.environ["HOME"]) / ".claude" / "settings.json"


def memory_md(project):
    return pathlib.Path(default_memory_dir(str(project))) / "MEMORY.md"


def _a_slim_on_the_user_hook(capsys, monkeypatch, a):
    monkeypatch.chdir(a)
    assert cli(capsys, "init", "--yes", "--scope", "user")[0] == 0
    assert cli(capsys, "slim", "render")[0] == 0


def test_b_does_not_record_or_remove_the_user_hook_a_installed(capsys, monkeypatch, two_projects):
    a, b = two_projects
    _a_slim_on_the_user_hook(capsys, monkeypatch, a)
    hook = user_settings().read_bytes()
    monkeypatch.chdir(b)
    code, out, err = cli(capsys, "init", "--yes")
    assert code == 0, out + err
    record = json.loads((b / ".claude" / "memory-router" / "init.json").read_text())
    assert "user" not in record["scopes"]
    code, out, err = cli(capsys, "uninstall", "--all")
    assert code == 0, out + err
    assert user_settings().read_bytes() == hook


def test_removing_the_user_hook_a_relies_on_is_refused_from_anywhere(capsys, monkeypatch, two_projects, tmp_path):
    a, b = two_projects
    _a_slim_on_the_user_hook(capsys, monkeypatch, a)
    hook = user_settings().read_bytes()
    for where in (b, tmp_path):
        monkeypatch.chdir(where)
        code, _out, err = cli(capsys, "uninstall", "--user")
        assert code == 1, err
        assert str(memory_md(a)) in err and "--force" in err
        assert user_settings().read_bytes() == hook
    code, _out, err = cli(capsys, "uninstall", "--user", "--force")
    assert code == 0, err
    assert str(memory_md(a)) in err


def test_a_dead_hook_in_another_scope_is_no_router(capsys, monkeypatch, two_projects, tmp_path):
    a, _b = two_projects
    monkeypatch.chdir(a)
    assert cli(capsys, "init", "--yes")[0] == 0   # the project scope
    dead = f"{tmp_path / 'gone-venv' / 'bin' / 'memory-router'} hook  {hookcommand.ROUTER_MARK}"
    user_settings().parent.mkdir(parents=True, exist_ok=True)
    user_settings().write_text(json.dumps(
        {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": dead}]}]}}))
    assert cli(capsys, "slim", "render")[0] == 0
    settings = (a / ".claude" / "settings.json").read_bytes()
    code, _out, err = cli(capsys, "uninstall")
    assert code == 1 and "is a slim index" in err, err
    assert (a / ".claude" / "settings.json").read_bytes() == settings
    # doctor: with only the dead hook left, the slim index has no router
    assert cli(capsys, "uninstall", "--force")[0] == 0
    code, out, _err = cli(capsys, "doctor", "--json")
    slim = next(c for c in json.loads(out)["checks"] if c["name"] == "slim index")
    assert code == 1 and slim["status"] == "fail" and "no router" in slim["message"]


def test_disable_all_hooks_is_no_router_for_slim_render_and_uninstall(capsys, monkeypatch, two_projects):
    a, _b = two_projects
    monkeypatch.chdir(a)
    assert cli(capsys, "init", "--yes")[0] == 0
    local = a / ".claude" / "settings.local.json"
    local.write_text(json.dumps({"disableAllHooks": True}))
    flat = memory_md(a).read_bytes()
    code, _out, err = cli(capsys, "slim", "render")
    assert code == 1 and "disableAllHooks" in err, err
    assert memory_md(a).read_bytes() == flat
    local.write_text("{}")
    assert cli(capsys, "slim", "render")[0] == 0
    local.write_text(json.dumps({"disableAllHooks": True}))
    code, out, _err = cli(capsys, "doctor", "--json")
    slim = next(c for c in json.loads(out)["checks"] if c["name"] == "slim index")
    assert slim["status"] == "fail" and "disableAllHooks" in slim["message"]
