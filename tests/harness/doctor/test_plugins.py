"""harness.doctor.plugins and doctor's report with the plugin: where each hook comes from (the
plugin's records as Claude Code 2.1.328 writes them, tests/plugin/fixtures/records), whether its
launcher finds memory-router, and the failure when a settings hook sits beside it."""

import json
import shutil

import pytest

from harness import installsource
from harness.doctor.plugins import PluginView
from plugin.pluginfiles import PLUGIN_DIR, PLUGIN_ID, memory_router_exe, write_records


@pytest.fixture
def project(isolated_env, example_cluster_file):
    path = isolated_env / "project"
    (path / "brain").mkdir(parents=True)
    shutil.copyfile(example_cluster_file, path / "brain" / "memory-layer1-clusters.md")
    return path


def by_name(checks, name):
    return [c for c in checks if c["name"] == name]


def test_the_plugin_is_reported_with_its_scope_and_hooks(isolated_env, project, monkeypatch):
    monkeypatch.setenv("MEMORY_ROUTER_BIN", memory_router_exe())
    write_records(isolated_env, project)
    checks = PluginView(str(project)).checks({})
    [plugin] = by_name(checks, "plugin")
    assert plugin["status"] == "pass" and plugin["scope"] == "user" and plugin["install_path"] == str(PLUGIN_DIR)
    assert [h["role"] for h in plugin["hooks"]] == ["prompt hook", "session reset", "citation gate"]
    assert plugin["mcp_server"] and "enabled in" in plugin["message"]
    [found] = by_name(checks, "plugin finds memory-router")
    assert found["status"] == "pass" and memory_router_exe() in found["message"]


def test_a_plugin_without_memory_router_fails_with_the_install_line(isolated_env, project, monkeypatch):
    monkeypatch.setenv("MEMORY_ROUTER_BIN", str(isolated_env / "nowhere"))
    write_records(isolated_env, project)
    [found] = by_name(PluginView(str(project)).checks({}), "plugin finds memory-router")
    assert found["status"] == "fail" and "memory-router plugin bootstrap" in found["fix"]
    # issue 29: the install it names is where this memory-router came from, with the plugin's [mcp]
    assert installsource.requirement(installsource.installed_source(), ("mcp",)) in found["fix"]
    assert "pipx install memory-router" not in found["fix"]
    assert "MEMORY_ROUTER_BIN" in found["message"]


def test_a_disabled_plugin_is_information_only(isolated_env, project):
    write_records(isolated_env, project, scope="project", disabled_locally=True)
    view = PluginView(str(project))
    checks = view.checks({"prompt hook": [("project", "p/settings.json", "hooks.UserPromptSubmit[0]", True)]})
    assert [c["status"] for c in by_name(checks, "plugin")] == ["info"]
    assert by_name(checks, "one prompt hook") == [] and view.hook_installed() is None


@pytest.mark.parametrize("role, status", [("prompt hook", "fail"), ("session reset", "fail"), ("citation gate", "warn")])
def test_a_hook_wired_in_settings_and_by_the_plugin_is_named_with_what_to_remove(isolated_env, project, role, status):
    write_records(isolated_env, project)
    settings = [("project", str(project / ".claude" / "settings.json"), "hooks.X[0].hooks[0]", True)]
    [twice] = by_name(PluginView(str(project)).checks({role: settings}, run=False), f"one {role}")
    assert twice["status"] == status
    assert PLUGIN_ID in twice["message"] and str(project / ".claude" / "settings.json") in twice["message"]
    flag = " --gate" if role == "citation gate" else ""
    assert f"memory-router uninstall --project {project}{flag}" in twice["fix"]
    assert f"claude plugin disable {PLUGIN_ID}" in twice["fix"]


def test_a_hand_written_settings_hook_is_removed_by_hand(isolated_env, project):
    write_records(isolated_env, project)
    settings = [("user", str(isolated_env / ".claude" / "settings.json"), "hooks.UserPromptSubmit[1].hooks[0]", False)]
    [twice] = by_name(PluginView(str(project)).checks({"prompt hook": settings}, run=False), "one prompt hook")
    assert "delete hooks.UserPromptSubmit[1].hooks[0]" in twice["fix"]


def doctor(run_cli, project, **env):
    done = run_cli("doctor", "--project", project, "--json", env=env)
    return done.returncode, json.loads(done.stdout)["checks"]


def test_doctor_passes_with_the_plugin_alone(isolated_env, project, run_cli):
    write_records(isolated_env, project)
    code, checks = doctor(run_cli, project, MEMORY_ROUTER_BIN=memory_router_exe())
    [installed] = by_name(checks, "hook installed")
    assert installed["status"] == "pass" and f"from the plugin {PLUGIN_ID}" in installed["message"]
    [runs] = by_name(checks, "hook runs")
    assert runs["status"] == "pass" and "memory-router-launch" in runs["command"]
    assert [c["status"] for c in by_name(checks, "hook routes")] == ["pass"]
    assert [c["status"] for c in by_name(checks, "session reset")] == ["pass"]
    assert code == 0, [c for c in checks if c["status"] == "fail"]


def test_doctor_fails_with_the_plugin_and_a_settings_hook(isolated_env, project, run_cli):
    assert run_cli("install", "--project", project).returncode == 0
    write_records(isolated_env, project)
    code, checks = doctor(run_cli, project, MEMORY_ROUTER_BIN=memory_router_exe())
    assert code == 1
    [twice] = by_name(checks, "one prompt hook")
    assert twice["status"] == "fail" and "twice" in twice["message"]
    assert f"memory-router uninstall --project {project}" in twice["fix"]


def test_doctor_trial_runs_the_plugins_mcp_server_and_its_gate(isolated_env, project, run_cli):
    """Issue 29 item 2: what the plugin provides is checked as what install wires is, never reported
    "not installed": its MCP server started, initialized and its tools listed; its gate trial-run."""
    write_records(isolated_env, project)
    code, checks = doctor(run_cli, project, MEMORY_ROUTER_BIN=memory_router_exe())
    [server] = by_name(checks, "mcp server")
    assert server["status"] == "pass" and server["plugin"] == PLUGIN_ID, server
    assert "route" in server["tools"] and f"the plugin {PLUGIN_ID}" in server["message"]
    gate = by_name(checks, "citation gate")
    assert [c["status"] for c in gate] == ["pass"] and "not installed" not in gate[0]["message"]
    assert [c["status"] for c in by_name(checks, "citation gate refuses")] == ["pass"]
    assert code == 0


def test_doctor_fails_a_plugin_mcp_server_that_cannot_start(isolated_env, project, run_cli):
    write_records(isolated_env, project)
    code, checks = doctor(run_cli, project, MEMORY_ROUTER_BIN=str(isolated_env / "no-such-memory-router"))
    [server] = by_name(checks, "mcp server")
    assert server["status"] == "fail" and "did not start" in server["message"]
    assert "plugin bootstrap" in server["fix"] and code == 1
