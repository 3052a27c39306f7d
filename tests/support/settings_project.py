"""A project directory with a .claude/ folder (or a bare one, for .mcp.json), and helpers to drive
the install, doctor and sentinel commands against its settings.json and .mcp.json."""

import json

import pytest

from harness.cli import main


def cli(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def project(tmp_path):
    path = tmp_path / "project"
    (path / ".claude").mkdir(parents=True)
    return path


@pytest.fixture
def bare_project(tmp_path):
    """A project directory with nothing in it yet: where ``install --mcp`` starts."""
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def router_on_path(monkeypatch):
    """The memory-router these tests run is the one PATH finds, as after pipx install: install
    --mcp writes the shared .mcp.json's portable command only then."""
    import os

    from harness.install import hookcommand

    monkeypatch.setenv("PATH", os.path.dirname(hookcommand.router_executable()[0]) + os.pathsep
                       + os.environ.get("PATH", ""))


def mcp_file(project):
    return project / ".mcp.json"


def settings_file(project):
    return project / ".claude" / "settings.json"


def backups(project):
    folder = project / ".claude" / "memory-router" / "backups"
    return sorted(folder.iterdir()) if folder.is_dir() else []


def write_settings(project, command, timeout=5, **extra):
    data = {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": command, "timeout": timeout}]}]}}
    data.update(extra)
    settings_file(project).write_text(json.dumps(data))


def doctor(capsys, *args):
    code, out, err = cli(capsys, "doctor", "--json", *args)
    report = json.loads(out)
    return code, {c["name"]: c for c in report["checks"]}, report
