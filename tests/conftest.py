"""Shared fixtures. Every test runs with HOME, the cache and Claude Code's env vars pointed
into a temp dir, so no test can read or touch the user's own files."""

import os
import pathlib
import subprocess
import sys

import pytest

# Fixtures shared by several test modules (a canary store and suite writer; sessions in the
# 2.1.293 transcript shape; a project with a .claude/ folder), loaded as plugins so all see them;
# support.realclient installs the pinned Claude Code before the first realclient test.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from support.executables import memory_router_exe  # noqa: E402,F401 - `from conftest import` it

pytest_plugins = ["support.canary_store", "support.transcript_sessions", "support.settings_project",
                  "support.mcp_session", "support.realclient"]

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
# Real Claude Code transcripts written by the real clients under the lab (tests/fixtures/README.md).
TRANSCRIPT_FIXTURES = REPO_ROOT / "tests" / "fixtures" / "transcripts"


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MEMORY_ROUTER_CACHE_DIR", str(home / ".cache" / "memory-router"))
    for name in ("CLAUDE_PROJECT_DIR", "CLAUDE_CONFIG_DIR", "MEMORY_ROUTER_CLUSTERS", "MEMORY_ROUTER_LOG",
                 "MEMORY_ROUTER_NO_CACHE", "XDG_CACHE_HOME", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(home)
    return home


@pytest.fixture
def example_cluster_file():
    from router.config import bundled_cluster_file

    return pathlib.Path(bundled_cluster_file())


@pytest.fixture
def example_flat_index():
    from router.config import bundled_flat_index

    return pathlib.Path(bundled_flat_index())


@pytest.fixture
def transcript_fixtures():
    if not TRANSCRIPT_FIXTURES.is_dir():
        pytest.fail(f"real Claude Code fixtures missing at {TRANSCRIPT_FIXTURES}: run tests/fixtures/regenerate.py")
    return TRANSCRIPT_FIXTURES


@pytest.fixture
def run_cli():
    """Run the installed ``memory-router`` executable; returns CompletedProcess (bytes)."""

    def run(*args, input=b"", env=None, cwd=None, timeout=60):
        full_env = dict(os.environ)
        if env:
            full_env.update(env)
        return subprocess.run([memory_router_exe(), *map(str, args)], input=input, capture_output=True,
                              env=full_env, cwd=cwd, timeout=timeout)

    return run


@pytest.fixture
def spec_provider(monkeypatch):
    """Pin spec §10's scorer as the default provider, in this process: for tests whose stores and
    expectations are written in its integer scores (the canary harness tests). Subprocesses read
    DEFAULTS afresh; give them a memory-router.toml with provider = "spec" instead."""
    from router import config

    monkeypatch.setitem(config.DEFAULTS, "provider", "spec")
