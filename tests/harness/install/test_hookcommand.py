"""The hook commands: written for the user's shell, and recognised however they are written."""

import shlex

import pytest

from harness.install import hookcommand


# --------------------------------------------------------------------------- commands


def test_router_command_survives_spaces_and_quotes():
    command = hookcommand.router_hook_command(["/home/o'neil/my venv/bin/memory-router"], clusters="/data/it's here.md",
                                       windows=False)
    assert command.endswith(" # memory-router install")
    assert shlex.split(command, comments=True) == [
        "/home/o'neil/my venv/bin/memory-router", "hook", "--clusters", "/data/it's here.md"]
    assert hookcommand.command_option(command, "clusters") == "/data/it's here.md"
    assert hookcommand.runs_router_hook(command) and hookcommand.has_mark(command, hookcommand.ROUTER_MARK)


def test_windows_paths_get_forward_slashes():
    command = hookcommand.router_hook_command([r"C:\Users\me\venv\Scripts\memory-router.exe"], windows=True)
    assert command.startswith("C:/Users/me/venv/Scripts/memory-router.exe hook")


def test_sentinel_command_runs_module_with_safe_path():
    command = hookcommand.sentinel_hook_command("/v/bin/python", "/p/.claude/memory-router/f.fired", "S-1", windows=False)
    assert shlex.split(command, comments=True) == [
        "/v/bin/python", "-P", "-m", "harness.sentinel", "--flag", "/p/.claude/memory-router/f.fired", "--text", "S-1"]
    assert hookcommand.has_mark(command, hookcommand.SENTINEL_MARK) and not hookcommand.has_mark(command, hookcommand.ROUTER_MARK)


@pytest.mark.parametrize("command, expected", [
    ("/venv/bin/memory-router hook", True),
    ("'/a b/memory-router' hook --clusters /c.md # memory-router install", True),
    ("C:/Users/me/venv/Scripts/memory-router.exe hook", True),
    ("/usr/bin/python3 -P -m router hook", True),
    ("/usr/bin/python3 -P -m harness hook", True),
    ("/usr/bin/python3 -m harness slim", False),
    ("memory-router route 'x'", False),
    ("my-memory-router-wrapper hook", False),
    ("echo memory-router hook", False),
    ('cd "$CLAUDE_PROJECT_DIR" && memory-router hook', True),
    ("env MEMORY_ROUTER_LOG=/tmp/l memory-router hook --clusters c.md", True),
    ("/usr/bin/python3 -m routerx hook", False),
    ("/py -m harness.sentinel --flag f --text t", False),
    ("'unbalanced", False),
])
def test_runs_router_hook(command, expected):
    assert hookcommand.runs_router_hook(command) is expected


def test_session_start_command_and_its_recognition():
    command = hookcommand.session_start_command(["/opt/my tools/memory-router"])
    assert command.endswith(" " + hookcommand.ROUTER_MARK)
    assert hookcommand.command_words(command) == ["/opt/my tools/memory-router", "session-start"]
    assert hookcommand.runs_session_start(command) is True
    assert hookcommand.runs_router_hook(command) is False


@pytest.mark.parametrize("command, expected", [
    ("memory-router session-start", True),
    ("/usr/bin/python3 -P -m harness session-start", True),
    ("memory-router hook", False),
    ("echo memory-router session-start", False),
])
def test_runs_session_start(command, expected):
    assert hookcommand.runs_session_start(command) is expected
