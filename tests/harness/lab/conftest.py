"""The real Claude Code client for the ``realclient`` tests.

HOME is captured here, at import, before tests/conftest.py points it at a temp dir, so the lab
cache under the developer's real home (~/.cache/memory-router-lab/claude-code/<version>/) is found.
A missing client FAILS the test (never a skip): CI installs it (.ci/run); a developer without it
deselects these tests with ``-m "not realclient"``."""

import os

import pytest

_REAL_ENV = {name: os.environ[name] for name in ("HOME", "PATH", "MEMORY_ROUTER_CLAUDE", "MEMORY_ROUTER_LAB_CACHE")
             if os.environ.get(name)}


@pytest.fixture
def claude_client():
    from harness.lab.client import ClientMissingError, find_claude

    try:
        path, _how = find_claude(None, dict(_REAL_ENV))
    except ClientMissingError as err:
        pytest.fail(f"the real Claude Code client is required by the realclient tests: {err}. "
                    "Deselect them with -m 'not realclient'.", pytrace=False)
    return path
