"""The MCP face of ``harness.mcp.store.MemoryStore``: an ``MCPServer`` of the official SDK whose
four tools and one resource call the store, and ``serve``, which runs it on stdin/stdout.

Apart from the store because this is the one module that needs the SDK (``mcp``): the store
is plain Python, testable and usable without the ``mcp`` extra. A ``MemoryRouterError`` from the
store becomes a tool error (``isError``) or a resource error carrying its one-line message."""

from harness.mcp.store import INDEX_URI, SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT
from router.agenttext import tool_error
from router.errors import MemoryRouterError

SERVER_NAME = "memory-router"

INSTRUCTIONS = (
    "This project's memory store. Call `route` with the user's request, or with the sub-task you are "
    "working on, to get the memory lines that apply (the same lines the prompt hook would inject); "
    "`search_memory` to look further; `get_memory` for one memory's full text. When learning is on, "
    "`record_feedback` says whether a memory was useful for a request, so later requests worded the "
    "same way find it.")


def build_server(store):
    """An ``MCPServer`` (official SDK) exposing ``store``'s tools and its cluster index."""
    from typing import Annotated, Any

    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError, ToolError
    from mcp.types import ToolAnnotations
    from pydantic import Field

    from router import __version__

    server = MCPServer(SERVER_NAME, version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    read_only = ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False)

    def run(call, *args):
        try:
            return call(*args)
        except MemoryRouterError as err:
            raise ToolError(tool_error(err)) from None

    @server.tool(annotations=read_only)
    def route(prompt: Annotated[str, Field(description="the request to route, in the user's words")]
              ) -> dict[str, Any]:
        """Route a request to this project's memory clusters: the same decision the prompt hook makes
        (scores, the clusters chosen, their member lines and the exact context it would inject)."""
        return run(store.route, prompt)

    @server.tool(annotations=read_only)
    def search_memory(query: Annotated[str, Field(description="words to look for")],
                      limit: Annotated[int, Field(description=f"most results, 1 to {SEARCH_MAX_LIMIT}")]
                      = SEARCH_DEFAULT_LIMIT) -> dict[str, Any]:
        """Search every memory's one-line hook across all clusters; ranked member lines with the words
        that matched (cluster tags, the memory's own words, learned words, its utterances)."""
        return run(store.search, query, limit)

    @server.tool(annotations=read_only)
    def get_memory(slug: Annotated[str, Field(description="a memory slug from route or search_memory")]
                   ) -> dict[str, Any]:
        """The full text of one memory file (its front matter fields and body)."""
        return run(store.get_memory, slug)

    @server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=False,
                                             openWorldHint=False))
    def record_feedback(prompt: Annotated[str, Field(description="the request the memory was (not) useful for")],
                        slug: Annotated[str, Field(description="the memory's slug")],
                        useful: Annotated[bool, Field(description="true: it answered the request; false: it did not")]
                        ) -> dict[str, Any]:
        """Record whether a memory was useful for a request: useful adds the request's words as learned
        terms of that memory (capped per cluster, hand tags never overridden); not useful removes them.
        Refused unless learning = true in the config."""
        return run(store.record_feedback, prompt, slug, useful)

    @server.resource(INDEX_URI, name="clusters", title="Memory cluster index", mime_type="text/markdown",
                     description="one line per cluster: id, size, tags and label")
    def cluster_index() -> str:
        try:
            return store.cluster_index()
        except MemoryRouterError as err:
            raise ResourceError(tool_error(err)) from None

    return server


def serve(store):
    """Serve ``store`` on stdin/stdout until the client closes the connection."""
    build_server(store).run("stdio")
