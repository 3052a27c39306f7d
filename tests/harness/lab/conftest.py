"""The real Claude Code client for the ``realclient`` tests.

HOME is captured here, at import, before tests/conftest.py points it at a temp dir, so the lab
cache under the developer's real home (~/.cache/memory-router-lab/claude-code/<version>/) is found.
The tested version is npm-installed into that cache before the first realclient test of a run
(tests/support/realclient.py); without npm the test FAILS (never a skip) with one line saying
what to install, and a developer who wants none of it deselects these tests with
``-m "not realclient"``.

The version matrix: ``MEMORY_ROUTER_CLAUDE_MATRIX=2.1.328,2.1.39,2.0.76,1.0.108`` (versions from
the lab cache, or client paths) runs every realclient test once per client, ids
``claude-<version>``. CI does not set it (it runs the tested version only); docs/lab.md records
what passes on each version."""

import os

import pytest

_REAL_ENV = {name: os.environ[name] for name in ("HOME", "PATH", "MEMORY_ROUTER_CLAUDE", "MEMORY_ROUTER_LAB_CACHE")
             if os.environ.get(name)}
MATRIX_ENV = "MEMORY_ROUTER_CLAUDE_MATRIX"


def matrix(value):
    """The clients named by ``MEMORY_ROUTER_CLAUDE_MATRIX``: ``[(id, version or None, path or None)]``."""
    out = []
    for item in (part.strip() for part in (value or "").split(",")):
        if not item:
            continue
        if os.sep in item:
            out.append((f"claude-{os.path.basename(os.path.dirname(os.path.dirname(os.path.dirname(item))))}",
                        None, item))
        else:
            out.append((f"claude-{item}", item, None))
    return out


def pytest_generate_tests(metafunc):
    clients = matrix(os.environ.get(MATRIX_ENV))
    if clients and "claude_client" in metafunc.fixturenames:
        metafunc.parametrize("claude_client", [(version, path) for _id, version, path in clients],
                             ids=[client_id for client_id, _v, _p in clients], indirect=True)


@pytest.fixture
def claude_client(request):
    from harness.lab.client import ClientMissingError, cached_client, find_claude, install_command

    version, explicit = getattr(request, "param", (None, None))
    if version is not None:
        # a matrix version runs exactly that version's client from the lab cache, never a fallback
        path = cached_client(version, dict(_REAL_ENV))
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            pytest.fail(f"Claude Code {version} is not in the lab cache ({path}): "
                        f"{install_command(version, dict(_REAL_ENV))}", pytrace=False)
        return path
    try:
        path, _how = find_claude(explicit, dict(_REAL_ENV))
    except ClientMissingError as err:
        pytest.fail(f"the real Claude Code client is required by the realclient tests: {err}. "
                    "Deselect them with -m 'not realclient'.", pytrace=False)
    return path
