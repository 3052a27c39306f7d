"""harness.project: where a project's files are, and the one memory-dir resolution with its policy
(--memory-dir, the config's memory_dir, a memory/ beside the input, Claude Code's default for a
project that reads, else an error)."""

import os

import pytest

from harness import project as proj
from router.errors import InputError
from router.memorystore import project_key


def test_project_dir_defaults_to_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert proj.project_dir() == str(tmp_path)
    assert proj.project_dir("~") == os.path.expanduser("~")


def test_settings_locations_in_claude_codes_order(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    assert proj.settings_locations(tmp_path / "p") == [
        ("project", str(tmp_path / "p" / ".claude" / "settings.json")),
        ("project local", str(tmp_path / "p" / ".claude" / "settings.local.json")),
        ("user", str(tmp_path / "cfg" / "settings.json")),
    ]
    assert proj.project_state_dir(tmp_path / "p") == str(tmp_path / "p" / ".claude" / "memory-router")


@pytest.fixture
def dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    (tmp_path / "beside").mkdir()
    return tmp_path


@pytest.mark.parametrize("explicit, config, beside, project, expected, how", [
    ("given", {"memory_dir": "cfg-dir", "source": "t.toml"}, "beside", "p", "given", "--memory-dir"),
    (None, {"memory_dir": "cfg-dir", "source": "t.toml"}, "beside", "p", "cfg-dir", "memory_dir in t.toml"),
    (None, None, "beside", "p", "beside", "beside the transcript"),
    (None, None, "missing", "p", "default", "Claude Code's default location"),   # a memory/ that is not there
    (None, {"source": "t.toml"}, None, "p", "default", "Claude Code's default location"),
])
def test_resolve_memory_dir_policy_in_order(dirs, explicit, config, beside, project, expected, how):
    if config and "memory_dir" in config:
        config = dict(config, memory_dir=str(dirs / config["memory_dir"]))
    found, said = proj.resolve_memory_dir(str(dirs / explicit) if explicit else None, config,
                                          str(dirs / project) if project else None,
                                          beside=str(dirs / beside) if beside else None)
    want = {"given": dirs / "given", "cfg-dir": dirs / "cfg-dir", "beside": dirs / "beside",
            "default": dirs / "cfg" / "projects" / project_key(str(dirs / "p")) / "memory"}[expected]
    assert (found, said) == (str(want), how)


def test_a_writer_never_guesses_a_memory_dir():
    with pytest.raises(InputError, match="no memory directory given") as err:
        proj.resolve_memory_dir(None, {"source": "t.toml"})
    assert "--memory-dir" in err.value.fix
    assert proj.resolve_memory_dir(None, None, required=False) == (None, "unknown")
