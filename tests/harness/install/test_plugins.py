"""harness.install.plugins: the plugin records Claude Code 2.1.328 writes (tests/plugin/fixtures/
records), read for a project: which plugin is enabled in which scope, where it runs from, which of
our hooks it wires, and install's refusal beside it."""

import json
import pathlib
import shutil

import pytest

from harness.install import plugins
from plugin.pluginfiles import PLUGIN_DIR, PLUGIN_ID, REPO_ROOT, write_records
from router.errors import RefusedError


@pytest.fixture
def project(isolated_env):
    path = isolated_env / "project"
    path.mkdir()
    return path


def only(project_dir):
    [plugin] = plugins.router_plugins(str(project_dir))
    return plugin


@pytest.mark.parametrize("scope", ["user", "project"])
def test_an_installed_plugin_is_enabled_in_its_scope_and_runs_from_the_marketplace_folder(isolated_env, project, scope):
    write_records(isolated_env, project, scope=scope)
    plugin = only(project)
    assert plugin.plugin_id == PLUGIN_ID and plugin.enabled and plugin.scope == scope and plugin.problem is None
    label = "user" if scope == "user" else "project"
    assert plugin.decided_by[0] == label
    # a directory marketplace's plugin runs in place (the client's readFromFolder), not from installPath
    assert plugin.install_path == str(PLUGIN_DIR)
    assert [(h.role, h.event, h.matcher) for h in plugin.hooks] == [
        ("prompt hook", "UserPromptSubmit", None), ("session reset", "SessionStart", "compact|clear"),
        ("citation gate", "PreToolUse", "Write|Edit|MultiEdit|NotebookEdit")]
    assert plugin.hooks[0].argv == (str(PLUGIN_DIR / "scripts" / "memory-router-launch"), "hook")
    assert plugin.mcp_server


def test_a_local_false_overrides_a_project_true(isolated_env, project):
    write_records(isolated_env, project, scope="project", disabled_locally=True)
    plugin = only(project)
    assert not plugin.enabled and plugin.decided_by[0] == "project local"
    assert plugins.enabled_with(str(project), "prompt hook") == []


def test_a_project_install_of_another_project_does_not_apply(isolated_env, project):
    other = isolated_env / "other"
    other.mkdir()
    write_records(isolated_env, other, scope="project")
    assert plugins.router_plugins(str(project)) == []


def test_without_a_directory_marketplace_the_installed_copy_is_read(isolated_env, project):
    write_records(isolated_env, project)
    (isolated_env / ".claude" / "plugins" / "known_marketplaces.json").write_text("{}", encoding="utf-8")
    plugin = only(project)
    assert plugin.install_path.startswith(str(isolated_env / ".claude" / "plugins" / "cache"))
    assert plugin.roles() == {"prompt hook", "session reset", "citation gate"}


def test_enabled_but_not_installed_is_a_problem_not_a_crash(isolated_env, project):
    write_records(isolated_env, project, copy=False)
    (isolated_env / ".claude" / "plugins" / "installed_plugins.json").unlink()
    plugin = only(project)
    assert plugin.enabled and plugin.hooks == () and "not installed" in plugin.problem


def test_a_damaged_hooks_file_is_a_problem(isolated_env, project, tmp_path):
    market = tmp_path / "market"
    shutil.copytree(REPO_ROOT / ".claude-plugin", market / ".claude-plugin")
    shutil.copytree(PLUGIN_DIR, market / "plugins" / "memory-router")
    (market / "plugins" / "memory-router" / "hooks" / "hooks.json").write_text("{not json", encoding="utf-8")
    write_records(isolated_env, project, repo=market)
    plugin = only(project)
    assert plugin.hooks == () and "cannot be read" in plugin.problem


def test_other_plugins_are_not_ours(isolated_env, project):
    settings = isolated_env / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"enabledPlugins": {"formatter@tools": True}}), encoding="utf-8")
    assert plugins.router_plugins(str(project)) == []


@pytest.mark.parametrize("handler, subcommand", [
    ({"command": "${CLAUDE_PLUGIN_ROOT}/scripts/memory-router-launch", "args": ["hook"]}, "hook"),
    ({"command": "/opt/bin/memory-router", "args": ["gate"]}, "gate"),
    ({"command": "'/home/me/.venv/bin/memory-router' session-start # memory-router install"}, "session-start"),
    ({"command": "cd x && memory-router hook"}, "hook"),
    ({"command": "python3 -P -m harness mcp"}, "mcp"),
    ({"command": "${CLAUDE_PLUGIN_ROOT}/scripts/format.sh", "args": ["hook"]}, None),
    ({"command": "echo memory-router hook"}, None),
    ({"args": ["hook"]}, None),
])
def test_which_handlers_run_memory_router(handler, subcommand):
    assert plugins.runs_memory_router(handler) == subcommand


def test_install_refuses_beside_an_enabled_plugin(isolated_env, project):
    write_records(isolated_env, project)
    with pytest.raises(RefusedError) as caught:
        plugins.refuse_beside_plugin(str(project), str(project / ".claude" / "settings.json"))
    message = str(caught.value)
    assert PLUGIN_ID in message and "twice" in message
    assert "claude plugin disable memory-router@memory-router --scope user" in message


def test_install_goes_ahead_when_the_plugin_is_disabled_or_absent(isolated_env, project):
    plugins.refuse_beside_plugin(str(project), "x")
    write_records(isolated_env, project, scope="project", disabled_locally=True)
    plugins.refuse_beside_plugin(str(project), "x")
    assert plugins.still_enabled_note(str(project)) is None


def test_the_note_after_uninstall_names_the_plugin(isolated_env, project):
    write_records(isolated_env, project)
    assert f"claude plugin uninstall {PLUGIN_ID}" in plugins.still_enabled_note(str(project))


def test_shell_command_sets_the_plugin_variables(isolated_env, project):
    write_records(isolated_env, project)
    hook = only(project).hooks[0]
    command = plugins.shell_command(PLUGIN_ID, hook)
    assert command.startswith(f"CLAUDE_PLUGIN_ROOT={PLUGIN_DIR} CLAUDE_PLUGIN_DATA=")
    assert command.endswith(f"{PLUGIN_DIR}/scripts/memory-router-launch hook")
    assert plugins.data_dir(PLUGIN_ID).endswith("/plugins/data/memory-router-memory-router")


def test_claude_config_dir_moves_the_records(isolated_env, project, monkeypatch, tmp_path):
    write_records(isolated_env, project)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "elsewhere"))
    assert plugins.router_plugins(str(project)) == []
    assert pathlib.Path(plugins.plugins_dir()) == tmp_path / "elsewhere" / "plugins"


def test_mcp_note_names_the_plugins_server(isolated_env, project):
    assert plugins.mcp_note(str(project)) is None
    write_records(isolated_env, project)
    assert "mcp__plugin_memory-router_memory-router__*" in plugins.mcp_note(str(project))


def test_install_cli_refuses_and_writes_nothing(isolated_env, project, run_cli):
    write_records(isolated_env, project)
    done = run_cli("install", "--project", project)
    assert done.returncode == 1
    assert b"already runs the memory-router prompt hook" in done.stderr
    assert not (project / ".claude" / "settings.json").exists()


def test_uninstall_cli_says_the_plugin_still_runs_the_hooks(isolated_env, project, run_cli):
    assert run_cli("install", "--project", project).returncode == 0
    write_records(isolated_env, project)
    done = run_cli("uninstall", "--project", project)
    assert done.returncode == 0 and f"claude plugin uninstall {PLUGIN_ID}".encode() in done.stdout
