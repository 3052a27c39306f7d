"""harness.plugin (``memory-router plugin bootstrap``): the plugin's own environment in its data
folder, holding the release plugin.json pins, found by the plugin's launcher; a failed build keeps
the environment it would have replaced."""

import os
import subprocess

import pytest

from harness import installsource
from harness import plugin as plugin_cmd
from plugin.pluginfiles import LAUNCHER, PLUGIN_DIR, PLUGIN_ID, REPO_ROOT, clone_head, write_records
from router import __version__
from router.errors import InputError, MemoryRouterError


@pytest.fixture
def project(isolated_env):
    path = isolated_env / "project"
    path.mkdir()
    return path


def test_the_pin_is_the_plugins_version():
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


def test_dry_run_names_the_plugins_data_folder_and_where_this_one_came_from(isolated_env, project, run_cli):
    # issue 29: not memory-router[mcp]==0.1.0 (no such release on the index) but the source this
    # memory-router was installed from (the test run's checkout), with the mcp extra
    write_records(isolated_env, project)
    done = run_cli("plugin", "bootstrap", "--project", project, "--dry-run")
    assert done.returncode == 0, done.stderr
    data = isolated_env / ".claude" / "plugins" / "data" / "memory-router-memory-router" / "venv"
    first, second = done.stdout.decode().strip().splitlines()
    assert first == f"would build {data} with {REPO_ROOT}[mcp]"
    # editable in a developer's venv, a plain copy of the checkout in CI's (pip install '.[test]')
    assert second in (f"(where this memory-router came from: the checkout {REPO_ROOT} (editable))",
                      f"(where this memory-router came from: the checkout {REPO_ROOT})")
    assert not data.exists()


def test_dry_run_from_a_checkout_keeps_the_mcp_extra(isolated_env, project, run_cli, tmp_path):
    """issue 29 item 2: --from <checkout> built an environment without mcp, so the plugin's MCP
    server failed to connect."""
    write_records(isolated_env, project)
    checkout = tmp_path / "memory-router"
    checkout.mkdir()
    done = run_cli("plugin", "bootstrap", "--project", project, "--from", checkout, "--dry-run")
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().splitlines()[0].endswith(f" with {checkout}[mcp]")


def test_from_the_index_the_default_is_the_release_the_plugin_pins():
    index = installsource.InstallSource("index", "9.9.9")
    assert plugin_cmd.default_spec(index, str(PLUGIN_DIR)) == f"memory-router[mcp]=={__version__}"
    git = installsource.InstallSource("git", "0.1.0", url="https://github.com/example/memory-router", commit="abc")
    assert plugin_cmd.default_spec(git, str(PLUGIN_DIR)) == \
        "memory-router[mcp] @ git+https://github.com/example/memory-router@abc"


@pytest.mark.parametrize("spec, expected", [
    ("memory-router", "memory-router[mcp]"),
    ("memory-router==0.1.0", "memory-router[mcp]==0.1.0"),
    ("memory_router[enrich]>=0.1", "memory_router[enrich,mcp]>=0.1"),
    ("memory-router[mcp]", "memory-router[mcp]"),
    ("memory-router @ git+https://x.example/m@c", "memory-router[mcp] @ git+https://x.example/m@c"),
    ("git+https://x.example/memory-router@abc", "memory-router[mcp] @ git+https://x.example/memory-router@abc"),
    ("https://x.example/memory_router-0.1.0-py3-none-any.whl",
     "memory-router[mcp] @ https://x.example/memory_router-0.1.0-py3-none-any.whl"),
    ("/src/memory-router", "/src/memory-router[mcp]"),
    ("./clone[enrich]", "{cwd}/clone[enrich,mcp]"),
    (".", "{cwd}[mcp]"),
    ("memory-router-main", "{cwd}/memory-router-main[mcp]"),      # a folder, not the name
    ("memory-router", "{cwd}/memory-router[mcp]"),                # ... once a clone by that name is here
])
def test_from_always_carries_the_mcp_extra(tmp_path, spec, expected):
    cwd = tmp_path / "here"
    cwd.mkdir()
    if expected.startswith("{cwd}/memory-router["):
        (cwd / "memory-router").mkdir()
    assert plugin_cmd.with_mcp(spec, cwd=str(cwd)) == expected.format(cwd=cwd)


def test_a_failed_build_puts_the_old_environment_back_and_names_the_fix(tmp_path):
    old = tmp_path / "venv" / "bin" / "memory-router"
    old.parent.mkdir(parents=True)
    old.write_text("#!/bin/sh\necho old\n", encoding="utf-8")
    with pytest.raises(MemoryRouterError, match="pip install") as raised:
        plugin_cmd.bootstrap(str(tmp_path), str(tmp_path / "no-such-project"))
    assert "--from takes a memory-router checkout, a git URL" in raised.value.fix
    assert old.read_text(encoding="utf-8") == "#!/bin/sh\necho old\n"
    assert sorted(os.listdir(tmp_path)) == ["venv"]


def test_an_index_release_that_is_not_there_names_from_as_the_fix():
    checkout = installsource.InstallSource("checkout", "0.1.0", url="file:///home/ann/memory-router")
    fix = plugin_cmd.install_fix("memory-router[mcp]==0.1.0", checkout)
    assert fix.startswith("memory-router is not on the package index yet") and "--from /home/ann/memory-router" in fix
    git = installsource.InstallSource("checkout", "0.1.0", url="file:///home/ann/memory-router",
                                      origin="https://github.com/example/memory-router", commit="abc")
    assert "--from git+https://github.com/example/memory-router@abc" in plugin_cmd.install_fix(
        "memory-router[mcp]==0.1.0", git)


def test_bootstrap_builds_what_the_launcher_runs_with_the_mcp_sdk(tmp_path):
    source = clone_head(tmp_path / "memory-router")
    data = tmp_path / "data"
    exe, version = plugin_cmd.bootstrap(str(data), plugin_cmd.with_mcp(str(source)))
    sdk = subprocess.run([str(data / "venv" / "bin" / "python"), "-c", "import mcp.server.mcpserver"],
                         capture_output=True, text=True, timeout=60)
    assert sdk.returncode == 0, sdk.stderr
    assert exe == str(data / "venv" / "bin" / "memory-router") and version.startswith("memory-router ")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CLAUDE_PLUGIN_DATA": str(data)}
    which = subprocess.run([str(LAUNCHER), "which"], capture_output=True, text=True, env=env, timeout=30)
    assert which.stdout.strip() == exe
    assert PLUGIN_ID.startswith("memory-router@")


def test_an_environment_without_the_mcp_sdk_does_not_replace_the_old_one(tmp_path, monkeypatch):
    """The SDK check runs after --version; failing it keeps the old environment and names [mcp]."""
    old = tmp_path / "venv" / "bin" / "memory-router"
    old.parent.mkdir(parents=True)
    old.write_text("old", encoding="utf-8")
    ran = []

    def fake_run(argv, what, fix=None):
        ran.append(what)
        if "import mcp.server.mcpserver" in argv:
            raise MemoryRouterError(f"{what} failed (exit 1): ModuleNotFoundError: No module named 'mcp'", fix=fix)
        return "memory-router 0.1.0\n"

    monkeypatch.setattr(plugin_cmd, "_run", fake_run)
    with pytest.raises(MemoryRouterError, match="MCP SDK check") as raised:
        plugin_cmd.bootstrap(str(tmp_path), "/src/memory-router")
    assert ran == ["python -m venv", "pip install /src/memory-router", "the new memory-router",
                   "the MCP SDK check (the plugin's MCP server needs it)"]
    assert "[mcp]" in raised.value.fix
    assert old.read_text(encoding="utf-8") == "old" and sorted(os.listdir(tmp_path)) == ["venv"]
