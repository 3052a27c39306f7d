"""Drive ``memory-router mcp`` over stdio with the official SDK's own client (``stdio_client`` +
``ClientSession``), as an MCP host does: the ``mcp_session`` fixture, shared by the server,
install and doctor tests."""

import os

import pytest

from support.executables import memory_router_exe


def session_env(project, home, **extra):
    """The server's environment: the project, and a HOME and cache of the test's own (a
    module-scoped session starts before the per-test isolation of tests/conftest.py)."""
    env = {"CLAUDE_PROJECT_DIR": str(project), "HOME": str(home),
           "MEMORY_ROUTER_CACHE_DIR": os.path.join(str(home), ".cache", "memory-router")}
    env.update({key: str(value) for key, value in extra.items()})
    return env


def run_session(args, project, home, calls=(), read=(), env=None, command=None):
    """Start the server (``memory-router ARGS``, or ``command ARGS``) in ``project``, initialize,
    list tools and resources, make each call in ``calls`` (``(label, tool, arguments)``) and read
    each URI in ``read``. Returns a dict: ``init``, ``tools``, ``resources``, ``calls`` (label ->
    CallToolResult), ``reads`` (uri -> text, or the exception raised), ``stderr``."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    errlog_path = os.path.join(str(project), "server-stderr.log")
    params = StdioServerParameters(command=command or memory_router_exe(), args=[str(a) for a in args], cwd=str(project),
                                   env=env or session_env(project, home))
    out = {"calls": {}, "reads": {}}

    async def scenario():
        with anyio.fail_after(90), open(errlog_path, "w", encoding="utf-8") as errlog:
            async with stdio_client(params, errlog=errlog) as (read_stream, write_stream):
                async with ClientSession(read_stream, write_stream) as session:
                    out["init"] = await session.initialize()
                    out["tools"] = (await session.list_tools()).tools
                    out["resources"] = (await session.list_resources()).resources
                    for label, tool, arguments in calls:
                        out["calls"][label] = await session.call_tool(tool, arguments)
                    for uri in read:
                        try:
                            out["reads"][uri] = (await session.read_resource(uri)).contents[0].text
                        except Exception as err:  # a server-side ResourceError arrives as an MCPError
                            out["reads"][uri] = err

    anyio.run(scenario)
    with open(errlog_path, encoding="utf-8") as handle:
        out["stderr"] = handle.read()
    return out


@pytest.fixture(scope="module")
def mcp_session():
    return run_session


@pytest.fixture(scope="module")
def mcp_env():
    return session_env
