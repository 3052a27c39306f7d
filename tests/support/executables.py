"""The installed ``memory-router`` console script, as Claude Code runs it (shared by every test
that starts it in a subprocess; tests/conftest.py re-exports it for ``from conftest import``)."""

import os
import shutil
import sys

import pytest


def memory_router_exe():
    """The console script beside this interpreter, else on PATH; a missing one fails the test."""
    exe = shutil.which("memory-router", path=os.path.dirname(sys.executable)) or shutil.which("memory-router")
    if exe is None:
        pytest.fail("the memory-router console script is not installed in this environment")
    return exe
