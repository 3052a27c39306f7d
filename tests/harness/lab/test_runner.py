"""harness.lab.runner without a client: a session needs prompts."""

import pytest

from harness.lab import runner
from router.errors import InputError


def test_run_session_needs_prompts(tmp_path):
    with pytest.raises(InputError):
        runner.run_session(tmp_path / "run", [], claude="/bin/true")
