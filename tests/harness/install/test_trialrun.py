"""The judgement of one trial run of a hook command (doctor and slim render run them)."""

import pytest

from harness.install import trialrun as probes


# --------------------------------------------------------------------------- hook output


@pytest.mark.parametrize("code, stdout, ok, phrase", [
    (0, b"", True, "printed nothing"),
    (0, b'{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "x"}}', True,
     "additionalContext (1 chars)"),
    (0, b'{"additionalContext": "x"}', False, "ignores it"),
    (0, b'{"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "x"}}', False, "ignores it"),
    (0, b"hello", False, "plain text"),
    (0, b"{not json", False, "invalid JSON"),
    (2, b"", False, "erase the user's prompt"),
    (127, b"", False, "command not found"),
    (1, b"", False, "exited 1"),
])
def test_judge_hook_output(code, stdout, ok, phrase):
    result, message = probes.judge_hook_output(code, stdout, b"boom\n")
    assert result is ok
    assert phrase in message
