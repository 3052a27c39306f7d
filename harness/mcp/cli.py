"""``memory-router mcp``: run the MCP server (harness.mcp.server over harness.mcp.store) on stdin/stdout."""

import os

from harness.mcp.store import DEFAULT_MAX_RESULT_CHARS, INDEX_URI, MIN_MAX_RESULT_CHARS, TOOL_NAMES
from router.errors import InputError, MemoryRouterError

MCP_EXTRA_FIX = "pip install 'memory-router[mcp]' (the official MCP Python SDK)"


def store_from_args(args):
    """The ``MemoryStore`` a server invocation serves: cluster file and config resolved as every
    other command resolves them, the memory directory as doctor resolves it."""
    from harness.project import resolve_memory_dir
    from harness.mcp.store import MemoryStore
    from router import config as config_mod
    from harness.context import resolve_cli_clusters
    from router.configfile import load_config

    if args.max_result_chars < MIN_MAX_RESULT_CHARS:
        raise InputError(f"--max-result-chars must be at least {MIN_MAX_RESULT_CHARS}, got {args.max_result_chars}",
                         fix=f"pass --max-result-chars {DEFAULT_MAX_RESULT_CHARS}")
    config = load_config(args.config)
    path = resolve_cli_clusters(args.clusters, config)
    project_dir = config_mod.project_dirs()[0]
    memory_dir, how = resolve_memory_dir(args.memory_dir, config, project_dir)
    bundled = os.path.abspath(path) == os.path.abspath(config_mod.bundled_cluster_file())
    return MemoryStore(path, config, memory_dir, how, args.max_result_chars, bundled=bundled)


def cmd_mcp(args):
    try:
        import mcp.server.mcpserver  # noqa: F401
    except ImportError:
        raise MemoryRouterError("the MCP server needs the mcp package, which is not installed",
                                fix=MCP_EXTRA_FIX) from None
    from harness.mcp.server import serve

    serve(store_from_args(args))
    return 0


def register(subparsers):
    import argparse

    from harness.context import add_clusters_option

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
    add_clusters_option(parser)
    parser.add_argument("--memory-dir", metavar="DIR",
                        help="memory directory get_memory reads (default: memory_dir in the config, else "
                             "Claude Code's ~/.claude/projects/<project>/memory)")
    parser.add_argument("--max-result-chars", metavar="N", type=int, default=DEFAULT_MAX_RESULT_CHARS,
                        help="cap on one result's JSON; longer results are cut and say so "
                             f"(default: {DEFAULT_MAX_RESULT_CHARS})")
    parser.set_defaults(handler=cmd_mcp)
