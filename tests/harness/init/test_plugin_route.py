"""Issue 36 item 2: with the memory-router plugin enabled, init treats the hook step as done by
the plugin ("hooks: the plugin memory-router@memory-router runs them"), runs doctor, exits 0 and
records what it wrote, so uninstall --all then takes out brain/ and the config again."""

import json
import os
import pathlib
import shutil

from harness.install import hookcommand
from plugin.pluginfiles import PLUGIN_ID, memory_router_exe, write_records
from router.store.memorystore import default_memory_dir
from support.git_repo import git_project, git_status  # noqa: F401 - a fixture
from support.settings_project import cli

REPO = pathlib.Path(__file__).resolve().parents[3]
HELDOUT2_MEMORY = REPO / "benchmarks" / "heldout2" / "memory"
EXE_DIR = os.path.dirname(hookcommand.router_executable()[0])


def test_init_with_the_plugin_enabled_leaves_the_hooks_to_it_and_passes(capsys, git_project, monkeypatch,
                                                                         isolated_env):
    shutil.copytree(HELDOUT2_MEMORY, default_memory_dir(str(git_project)))
    monkeypatch.setenv("PATH", EXE_DIR + os.pathsep + "/usr/bin:/bin")
    monkeypatch.setenv("MEMORY_ROUTER_BIN", memory_router_exe())
    monkeypatch.chdir(git_project)
    write_records(isolated_env, git_project)          # enabled in the user scope
    user_settings = (isolated_env / ".claude" / "settings.json").read_bytes()
    before = git_status(git_project)
    code, out, err = cli(capsys, "init", "--yes")
    assert code == 0, out + err
    assert f"hooks: the plugin {PLUGIN_ID} runs them" in out
    assert "doctor: " in out and "all passed" in out
    assert not (git_project / ".claude" / "settings.json").exists()
    assert not (git_project / ".claude" / "settings.local.json").exists()
    assert (isolated_env / ".claude" / "settings.json").read_bytes() == user_settings
    record = json.loads((git_project / ".claude" / "memory-router" / "init.json").read_text())
    assert record["scopes"] == [] and {os.path.basename(e["path"]) for e in record["files"]} >= {
        "memory-router.toml", "memory-layer1-clusters.md"}
    code, out, err = cli(capsys, "uninstall", "--all")
    assert code == 0, out + err
    assert git_status(git_project) == before == ""
    assert (isolated_env / ".claude" / "settings.json").read_bytes() == user_settings
