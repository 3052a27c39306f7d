"""``memory-router mcp``: run the MCP server (harness.mcp.server over harness.mcp.store) on stdin/stdout."""

from harness import options
from harness.mcp.store import DEFAULT_MAX_RESULT_CHARS, INDEX_URI, TOOL_NAMES
from router.errors import MemoryRouterError



def mcp_extra_fix():
    """How to add the mcp extra (the official MCP Python SDK) to this memory-router: installed again
    from where it came from (harness.installsource), since the index may have no such release."""
    import sys

    from harness import installsource

    return installsource.extra_hint("mcp", installsource.installed_source(), sys.executable)


def cmd_mcp(args):
    try:
        import mcp.server.mcpserver  # noqa: F401
    except ImportError:
        raise MemoryRouterError("the MCP server needs the mcp package, which is not installed",
                                fix=mcp_extra_fix()) from None
    from harness.mcp.server import serve
    from harness.mcp.store import store_for

    serve(store_for(args.clusters, args.config, args.memory_dir, args.max_result_chars))
    return 0


def register(subparsers):
    import argparse

    parser = subparsers.add_parser(
        "mcp", help="serve the memory store to MCP hosts over stdio (route, search, get, feedback)",
        description="Runs an MCP server on stdin/stdout (official Python SDK) serving the configured store: "
                    f"tools {', '.join(TOOL_NAMES)}; resource {INDEX_URI}. The cluster file and config are "
                    "found as for every other command (with $CLAUDE_PROJECT_DIR, which Claude Code sets for "
                    "MCP servers); the cluster file is re-read when it changes. Read-only except "
                    "record_feedback, which writes the learned-terms file only when the config says "
                    "learning = true. No network. See docs/mcp.md for host configuration.",
        epilog="exit codes: 0 the client closed the connection; 1 the mcp package is missing; 2 invalid "
               "config or option",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    options.clusters_and_config(parser)
    options.memory_dir(parser, options.MEMORY_DIR_GUESSED, what="memory directory get_memory reads")
    parser.add_argument("--max-result-chars", metavar="N", type=int, default=DEFAULT_MAX_RESULT_CHARS,
                        help="cap on one result's JSON; longer results are cut and say so "
                             f"(default: {DEFAULT_MAX_RESULT_CHARS})")
    parser.set_defaults(handler=cmd_mcp)
