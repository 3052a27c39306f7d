"""``memory-router mcp`` (harness/mcp_server.py) under the real Claude Code: ``memory-router install
--mcp`` in the lab's project (``project/.mcp.json``), a scripted ``tool_use`` of the server's
``route`` tool, and what the model receives in the next request.

``claude -p`` skips the workspace trust dialog, so the project's ``.mcp.json`` server is started
with no approval setting (no ``enableAllProjectMcpServers``, ``--mcp-config`` or
``--strict-mcp-config``); the lab passes the tool's name to ``--allowedTools`` as it does for every
tool a script calls. 2.1.328 connects MCP servers in the background and defers their tools behind
``ToolSearch`` (the tool carries ``defer_loading: true``). Marked ``realclient``: CI runs them, a
missing client fails them."""

import json

import pytest

from harness.lab import measure
from harness.lab.runner import run_session
from harness.lab.script import Script
from harness.install.mcpjson import SERVER_KEY

pytestmark = pytest.mark.realclient

ROUTE_TOOL = f"mcp__{SERVER_KEY}__route"
ROUTED = "I ran setx FOO bar in cmd but the Bash tool still says FOO is empty, do I need to restart?"


def via_tool_search():
    """What the client's system prompt tells the model: load the deferred tool, then call it."""
    return Script([
        {"when": {"after_tool_result": False}, "reply": {"tool_use": {"name": "ToolSearch",
                                                                     "input": {"query": f"select:{ROUTE_TOOL}"}}}},
        {"when": {"after_tool_result": True, "has_tool": ROUTE_TOOL},
         "reply": {"tool_use": {"name": ROUTE_TOOL, "input": {"prompt": ROUTED}}}},
        {"when": {"after_tool_result": True}, "reply": {"text": "done"}},
    ])


def direct_call():
    """The tool called in the first reply, before the client lists it (the server may still be connecting)."""
    return Script([
        {"when": {"after_tool_result": False}, "reply": {"tool_use": {"name": ROUTE_TOOL, "input": {"prompt": ROUTED}}}},
        {"when": {"after_tool_result": True}, "reply": {"text": "done"}},
    ])


def bodies_by_seq(request_log):
    return {record["seq"]: json.loads(record["body"]) for record in measure.read_log(request_log) if record["body"]}


@pytest.mark.parametrize("script", [via_tool_search, direct_call], ids=["via-ToolSearch", "direct"])
def test_route_tool_returns_the_routed_lines_to_the_model(tmp_path, claude_client, run_cli, script):
    result = run_session(tmp_path / "run", ["look up what memory says about this"], "none", script=script(),
                         claude=claude_client, hook=False, mcp=True)
    assert result.ok, result.outcomes
    exchanges = measure.tool_exchanges(measure.read_log(result.request_log))
    [route] = [e for e in exchanges if e["name"] == ROUTE_TOOL]
    assert not any(e["is_error"] for e in exchanges), exchanges
    if script is via_tool_search:
        # ToolSearch's answer loads the tool: from that request on it is offered under this name, deferred
        search = exchanges[0]
        assert search["name"] == "ToolSearch" and search["seq"] < route["seq"]
        [offered] = [t for t in bodies_by_seq(result.request_log)[search["seq"]]["tools"] if t.get("name") == ROUTE_TOOL]
        assert offered.get("defer_loading") is True and offered["input_schema"]["required"] == ["prompt"]
    else:
        assert [e["name"] for e in exchanges] == [ROUTE_TOOL]      # called unlisted, it still ran
    # the model receives the router's own decision: the object `memory-router route --json` prints
    expected = run_cli("route", "--json", ROUTED, cwd=result.paths.project,
                       env={"CLAUDE_PROJECT_DIR": result.paths.project})
    assert expected.returncode == 0, expected.stderr
    decision = json.loads(route["text"])
    assert decision == json.loads(expected.stdout)
    assert decision["routed"] and decision["lines"]
    for line in decision["lines"]:
        assert f"- {line['slug']} \u2014 {line['hook']}" in decision["additional_context"]
