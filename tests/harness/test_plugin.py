"""harness.plugin (``memory-router plugin bootstrap``): the plugin's own environment in its data
folder, holding the release plugin.json pins, found by the plugin's launcher; a failed build keeps
the environment it would have replaced."""

import os
import subprocess

import pytest

from harness import plugin as plugin_cmd
from plugin.pluginfiles import LAUNCHER, PLUGIN_DIR, PLUGIN_ID, clone_head, write_records
from router.errors import InputError, MemoryRouterError


@pytest.fixture
def project(isolated_env):
    path = isolated_env / "project"
    path.mkdir()
    return path


def test_the_pin_is_the_plugins_version():
    from router import __version__

    assert plugin_cmd.pinned_spec(str(PLUGIN_DIR)) == f"memory-router[mcp]=={__version__}"
    assert plugin_cmd.pinned_spec(str(PLUGIN_DIR), extras="") == f"memory-router=={__version__}"


def test_a_plugin_without_a_version_needs_from(tmp_path):
    (tmp_path / ".claude-plugin").mkdir()
    (tmp_path / ".claude-plugin" / "plugin.json").write_text('{"name": "memory-router"}', encoding="utf-8")
    with pytest.raises(InputError, match="names no version"):
        plugin_cmd.pinned_spec(str(tmp_path))


def test_no_installed_plugin_is_an_input_error(project):
    with pytest.raises(InputError, match="no memory-router plugin is installed"):
        plugin_cmd.installed_plugin(str(project))


def test_dry_run_names_the_plugins_data_folder_and_pin(isolated_env, project, run_cli):
    write_records(isolated_env, project)
    done = run_cli("plugin", "bootstrap", "--project", project, "--dry-run")
    assert done.returncode == 0, done.stderr
    data = isolated_env / ".claude" / "plugins" / "data" / "memory-router-memory-router" / "venv"
    assert done.stdout.decode().strip() == f"would build {data} with memory-router[mcp]==0.1.0"
    assert not data.exists()


def test_a_failed_build_puts_the_old_environment_back(tmp_path):
    old = tmp_path / "venv" / "bin" / "memory-router"
    old.parent.mkdir(parents=True)
    old.write_text("#!/bin/sh\necho old\n", encoding="utf-8")
    with pytest.raises(MemoryRouterError, match="pip install"):
        plugin_cmd.bootstrap(str(tmp_path), str(tmp_path / "no-such-project"))
    assert old.read_text(encoding="utf-8") == "#!/bin/sh\necho old\n"
    assert sorted(os.listdir(tmp_path)) == ["venv"]


def test_bootstrap_builds_what_the_launcher_runs(tmp_path):
    source = clone_head(tmp_path / "memory-router")
    data = tmp_path / "data"
    exe, version = plugin_cmd.bootstrap(str(data), str(source))
    assert exe == str(data / "venv" / "bin" / "memory-router") and version.startswith("memory-router ")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CLAUDE_PLUGIN_DATA": str(data)}
    which = subprocess.run([str(LAUNCHER), "which"], capture_output=True, text=True, env=env, timeout=30)
    assert which.stdout.strip() == exe
    assert PLUGIN_ID.startswith("memory-router@")
