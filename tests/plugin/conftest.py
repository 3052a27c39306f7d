"""The real Claude Code client for the plugin's ``realclient`` tests.

HOME and PATH are captured at import, before tests/conftest.py points HOME at a temp dir, so the
lab cache under the developer's real home is found (as tests/harness/lab/conftest.py does). A
missing client FAILS a realclient test, never skips it."""

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
