"""harness.lab.requestbody: reading one request body as the real client sent it."""

import pytest

from harness.lab.requestbody import ends_with_tool_result


TOOL_RESULT = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]}
SYSTEM_NOTE = {"role": "system", "content": [{"type": "text", "text": "deferred tools are now available"}]}
PROMPT = {"role": "user", "content": "next prompt"}


@pytest.mark.parametrize("messages, expected", [
    ([TOOL_RESULT], True),
    ([TOOL_RESULT, SYSTEM_NOTE], True),              # 2.1.328 after ToolSearch loaded an MCP tool; 2.1.293's <total_tokens>
    ([TOOL_RESULT, SYSTEM_NOTE, SYSTEM_NOTE], True),
    ([TOOL_RESULT, PROMPT], False),                  # a new prompt after the result
    ([PROMPT, SYSTEM_NOTE], False),                  # a hook context after a prompt
    ([SYSTEM_NOTE], False),
    ([], False),
], ids=["result", "result+system", "result+2 system", "result+prompt", "prompt+system", "system only", "empty"])
def test_ends_with_tool_result_passes_over_trailing_system_messages(messages, expected):
    assert ends_with_tool_result({"messages": messages}) is expected
