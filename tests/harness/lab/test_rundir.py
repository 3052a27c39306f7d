"""harness.lab.rundir, without a client: the run directory a session starts from."""

import json
import os

import pytest

from harness.lab import rundir
from router.errors import InputError


def test_slim_run_dir_has_hook_cluster_file_and_slim_index(tmp_path):
    paths, text = rundir.prepare_run_dir(tmp_path / "run", "slim")
    settings = json.loads(open(os.path.join(paths.project, rundir.SETTINGS_FILE)).read())
    [group] = settings["hooks"]["UserPromptSubmit"]
    assert "memory-router" in group["hooks"][0]["command"] and "hook" in group["hooks"][0]["command"]
    assert not os.path.exists(os.path.join(paths.project, ".claude", "settings.json"))  # nothing to commit
    assert os.path.isfile(paths.cluster_file)
    assert os.listdir(paths.memory_dir) == ["MEMORY.md"]
    assert "## Cluster router (routed on demand)" in text
    import re

    assert paths.memory_dir == os.path.join(paths.home, ".claude", "projects",
                                            re.sub("[^A-Za-z0-9]", "-", paths.project), "memory")


def test_flat_and_none(tmp_path, example_flat_index):
    _paths, text = rundir.prepare_run_dir(tmp_path / "flat", "flat", hook=False)
    assert text == example_flat_index.read_text(encoding="utf-8")
    paths, text = rundir.prepare_run_dir(tmp_path / "none", "none", hook=False)
    assert text is None and not os.path.exists(paths.memory_file)
    assert not os.path.exists(os.path.join(paths.project, rundir.SETTINGS_FILE))
    assert not os.path.exists(os.path.join(paths.project, ".claude", "settings.json"))


@pytest.mark.parametrize("memory", ["fat", ""])
def test_unknown_memory_mode(tmp_path, memory):
    with pytest.raises(InputError):
        rundir.prepare_run_dir(tmp_path / "run", memory)


def test_a_run_never_overwrites_another(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "x").write_text("")
    with pytest.raises(InputError) as err:
        rundir.prepare_run_dir(tmp_path / "run", "slim")
    assert "not empty" in str(err.value)


def test_client_env_is_rebuilt_not_inherited(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "secret")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", "/somewhere")
    paths = rundir.make_paths(tmp_path / "run")
    env = rundir.client_env(paths, "http://127.0.0.1:9")
    assert env["HOME"] == paths.home and env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"
    assert "ANTHROPIC_AUTH_TOKEN" not in env and "CLAUDE_CONFIG_DIR" not in env


def test_gate_and_mcp_are_installed_in_the_project(tmp_path):
    paths, _text = rundir.prepare_run_dir(tmp_path / "run", "none", gate=True, mcp=True)
    settings = json.loads(open(os.path.join(paths.project, rundir.SETTINGS_FILE)).read())
    [router_group] = settings["hooks"]["UserPromptSubmit"]
    [gate_group] = settings["hooks"]["PreToolUse"]
    assert gate_group["matcher"] == "Write|Edit|MultiEdit"
    assert gate_group["hooks"][0]["command"].split(" # ")[0].endswith(" gate")
    assert router_group["hooks"][0]["command"].split(" # ")[0].endswith(" hook")
    servers = json.loads(open(os.path.join(paths.project, ".mcp.json")).read())["mcpServers"]
    assert list(servers) == ["memory-router"] and servers["memory-router"]["args"] == ["mcp"]


def test_neither_gate_nor_mcp_by_default(tmp_path):
    paths, _text = rundir.prepare_run_dir(tmp_path / "run", "none")
    settings = json.loads(open(os.path.join(paths.project, rundir.SETTINGS_FILE)).read())
    assert "PreToolUse" not in settings["hooks"]
    assert not os.path.exists(os.path.join(paths.project, ".mcp.json"))


def test_the_gate_needs_the_router_hook(tmp_path):
    with pytest.raises(InputError) as err:
        rundir.prepare_run_dir(tmp_path / "run", "none", hook=False, gate=True)
    assert "hook=True" in str(err.value)
    assert not os.path.exists(tmp_path / "run")
