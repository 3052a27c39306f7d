"""harness.lab.client: which claude the lab runs, in the documented order, and how it says so."""

import os

import pytest

from harness.lab import client


def fake_claude(directory, version="2.1.328"):
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "claude"
    path.write_text(f"#!/bin/sh\necho '{version} (Claude Code)'\n")
    path.chmod(0o755)
    return str(path)


def env_for(tmp_path, **extra):
    env = {"HOME": str(tmp_path / "home"), "PATH": str(tmp_path / "empty-bin")}
    env.update(extra)
    return env


def test_explicit_path_wins(tmp_path):
    explicit = fake_claude(tmp_path / "a")
    other = fake_claude(tmp_path / "b")
    env = env_for(tmp_path, MEMORY_ROUTER_CLAUDE=other)
    assert client.find_claude(explicit, env) == (explicit, "--claude")


def test_env_var_then_cache_then_path(tmp_path):
    in_env = fake_claude(tmp_path / "env")
    env = env_for(tmp_path, MEMORY_ROUTER_CLAUDE=in_env)
    assert client.find_claude(None, env) == (in_env, "$MEMORY_ROUTER_CLAUDE")

    env = env_for(tmp_path, MEMORY_ROUTER_LAB_CACHE=str(tmp_path / "cache"))
    cached = fake_claude(tmp_path / "cache" / client.TESTED_VERSION / "node_modules" / ".bin")
    assert client.find_claude(None, env) == (cached, "lab cache")

    on_path = fake_claude(tmp_path / "bin")
    env = env_for(tmp_path, PATH=str(tmp_path / "bin"))
    assert client.find_claude(None, env) == (on_path, "PATH")


def test_default_cache_is_under_home(tmp_path):
    env = env_for(tmp_path)
    assert client.cached_client("1.2.3", env) == os.path.join(
        str(tmp_path / "home"), ".cache", "memory-router-lab", "claude-code", "1.2.3", "node_modules", ".bin", "claude")


def test_nothing_found_is_one_error_with_the_install_command(tmp_path):
    with pytest.raises(client.ClientMissingError) as err:
        client.find_claude(None, env_for(tmp_path))
    message = str(err.value)
    assert "\n" not in message and f"npm install @anthropic-ai/claude-code@{client.TESTED_VERSION}" in message
    assert err.value.exit_code == 2


@pytest.mark.parametrize("where", ["explicit", "env"])
def test_a_path_that_is_not_executable_is_refused(tmp_path, where):
    missing = str(tmp_path / "nope" / "claude")
    with pytest.raises(client.ClientMissingError):
        if where == "explicit":
            client.find_claude(missing, env_for(tmp_path))
        else:
            client.find_claude(None, env_for(tmp_path, MEMORY_ROUTER_CLAUDE=missing))


def test_version_is_read_and_an_untested_one_warns(tmp_path):
    assert client.client_version(fake_claude(tmp_path / "a", "2.1.328")) == "2.1.328"
    assert client.client_version(fake_claude(tmp_path / "b", "2.0.76")) == "2.0.76"
    assert client.version_warning("2.1.328") is None
    assert "2.0.76 is not the tested version" in client.version_warning("2.0.76")
    assert "unknown version" in client.version_warning(None)
