"""The pinned Claude Code client for every test marked ``realclient``, installed on first use.

A fresh machine runs the README's test command with no other step: before the first realclient
test of a run, the tested version (harness.lab.client.TESTED_VERSION) is npm-installed into the
lab cache under the real home (``harness.lab.client.ensure_tested_client``), once per run, and
the tests' own fixtures (tests/harness/lab/conftest.py, tests/plugin/conftest.py, the clusters
engine tests) find it there. Without npm every realclient test FAILS (never skips) with one line
saying what to install. ``$MEMORY_ROUTER_CLAUDE`` set: that client is used, nothing installed.

HOME and PATH are captured at import, before tests/conftest.py points HOME at a temp dir."""

import os

import pytest

REAL_ENV = {name: os.environ[name] for name in ("HOME", "PATH", "MEMORY_ROUTER_CLAUDE", "MEMORY_ROUTER_LAB_CACHE")
            if os.environ.get(name)}
_OUTCOME = {}


def tested_client():
    """``(path, None)`` or ``(None, one-line failure)``, worked out once per run."""
    if "result" not in _OUTCOME:
        from harness.lab.client import ClientMissingError, ensure_tested_client

        try:
            _OUTCOME["result"] = (ensure_tested_client(dict(REAL_ENV)), None)
        except ClientMissingError as err:
            _OUTCOME["result"] = (None, f"the realclient tests need the pinned Claude Code client: {err}")
    return _OUTCOME["result"]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    if item.get_closest_marker("realclient") is None:
        return
    _path, failure = tested_client()
    if failure:
        pytest.fail(failure, pytrace=False)
