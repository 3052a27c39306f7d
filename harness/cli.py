"""The one command line, ``memory-router``, with subcommands: the composition root of harness.

Each command's face (``harness.<package>.cli``, or the one module of a command that is only a
face) is imported here and nowhere else (an import-linter contract, pyproject.toml).
``main(argv) -> int`` returns the exit code. ``memory-router hook`` is dispatched before
argparse is even imported, because it is the hot path. Every other subcommand is registered
by a module in ``COMMAND_MODULES`` exposing ``register(subparsers)``, which adds its parsers
and sets ``handler=<function(args) -> int>``. ``MemoryRouterError`` is turned into a one-line
message and its exit code here, and only here.
"""

import sys

COMMAND_MODULES = (
    "harness.route",          # route
    "harness.clusters.cli",   # clusters check/convert/build
    "harness.canary.cli",     # canary run/eval/fit/verdict, checklist
    "harness.transcript",     # transcript audit/locate/census
    "harness.slim.cli",       # slim render/rollback
    "harness.tokens.cli",     # tokens report
    "harness.install.cli",    # install (--gate, --mcp)
    "harness.uninstall.cli",  # uninstall (--gate, --mcp, --rollback, --all)
    "harness.doctor.cli",     # doctor
    "harness.mcp.cli",        # mcp (the MCP server)
    "harness.sentinel.cli",   # sentinel install/uninstall/check/hook
    "harness.gate",           # gate check (the gate hook itself is dispatched in main)
    "harness.lab.cli",        # lab run/report/serve/client
    "harness.learn",          # learn (learned terms from session transcripts)
    "harness.plugin",         # plugin bootstrap (the Claude Code plugin's own environment)
    "harness.init.cli",       # init (one command from a project to a working install)
    "harness.replay.cli",     # replay (the router on the prompts you really typed)
)

EXIT_CODES = """exit codes:
  0  success: every check passed, or the command did what it said
  1  a check failed, or a write was refused to protect your data
  2  invalid input: a cluster, suite, config or transcript file that cannot be read or parsed, or a bad command line
  memory-router hook always exits 0 (exit 2 would erase the user's prompt); so does memory-router gate, which \
refuses a write through PreToolUse JSON (see memory-router gate --help)"""


def build_parser():
    import argparse
    import importlib

    from router import __version__
    from router.config import describe_defaults

    parser = argparse.ArgumentParser(
        prog="memory-router",
        description="Route Claude Code memory clusters into each prompt instead of re-sending "
                    "the whole MEMORY.md index on every call.",
        epilog="routing defaults (override in memory-router.toml or [tool.memory-router]):\n"
               + describe_defaults() + "\n\n" + EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"memory-router {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    hook = subparsers.add_parser(
        "hook", help="the UserPromptSubmit hook: reads the payload on stdin, prints context or nothing",
        description="Reads a UserPromptSubmit payload (JSON) on stdin. When a cluster fires, prints "
                    '{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": ...}}; '
                    "otherwise prints nothing. Always exits 0. Cluster file: --clusters, then "
                    "$MEMORY_ROUTER_CLUSTERS, then the config file, then "
                    "$CLAUDE_PROJECT_DIR/brain/memory-layer1-clusters.md (or .tsv), then the same under the "
                    "payload's cwd. Diagnostics go only to the file named by $MEMORY_ROUTER_LOG.")
    hook.add_argument("--clusters", metavar="FILE", help="cluster file (.md or .tsv)")
    hook.add_argument("--config", metavar="FILE", help="config file (memory-router.toml or pyproject.toml)")
    subparsers.add_parser(
        "session-start", help="the SessionStart hook: forgets what a session was sent after compaction or /clear",
        description="Reads a SessionStart payload (JSON) on stdin. When its source is compact or clear, deletes "
                    "the session's record of injected member lines (in the cache directory), so the next prompt "
                    "sends again the facts the compacted context no longer holds. Prints nothing; always exits 0. "
                    "memory-router install adds it with the matcher compact|clear.")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as err:
            # A module still being written; tests/test_cli.py requires every one to exist.
            if err.name != name:
                raise
            continue
        module.register(subparsers)
    from harness import options

    return options.apply_help_formatter(parser)


def main(argv=None):
    if argv is None:
        argv = sys.argv[1:]
    argv = list(argv)
    if argv[:1] == ["hook"] and "-h" not in argv and "--help" not in argv:
        from router.hooks.hook import run_hook

        return run_hook(argv[1:])
    if argv[:1] == ["gate"] and argv[1:2] != ["check"] and "-h" not in argv and "--help" not in argv:
        # The PreToolUse citation gate: a hook like `hook`, so no argparse on its path either.
        from router.gate.gate import run_gate

        return run_gate(argv[1:])
    if argv[:1] == ["session-start"] and "-h" not in argv and "--help" not in argv:
        from router.hooks.hook import run_session_start

        return run_session_start(argv[1:])
    from router.errors import MemoryRouterError

    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help/--version exit 0, usage errors exit 2
        return int(exc.code or 0)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
        from harness.context import require_valid_config

        require_valid_config(getattr(args, "config", None), getattr(args, "project", None))
        return int(handler(args) or 0)
    except MemoryRouterError as err:
        print(f"memory-router: error: {err}", file=sys.stderr)
        return err.exit_code
    except RecursionError:
        # Each reader names the file and line of what nests too deep; this is the net under them.
        print("memory-router: error: an input nests too deep to process (fix: flatten it, or report which "
              "file it was)", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except OSError as err:
        # A path the tool could not open, read or write (a directory, a symlink loop, a permission):
        # the readers turn the expected ones into InputError; this is the net under them.
        where = f"{err.filename}: " if err.filename else ""
        print(f"memory-router: error: {where}{err.strerror or err} (fix: pass a readable regular file, in a "
              "writable directory for outputs)", file=sys.stderr)
        return 2
    except KeyboardInterrupt as interrupt:
        print("memory-router: interrupted", file=sys.stderr)
        # SIGTERM and SIGHUP during an engine run arrive as an interrupt carrying 128 + the signal
        # (harness.clusters.engine_process); Ctrl-C is 130.
        return getattr(interrupt, "exit_code", 130)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
