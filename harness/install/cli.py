"""``memory-router install``: wire the router hook (and with ``--gate`` the citation gate, with
``--mcp`` the MCP server) into Claude Code's settings.json or .mcp.json (``uninstall``, which takes
them out again exactly, is ``harness.uninstall``). ``harness.install.settingsfile`` does the
checked writes, ``settings``, ``gate`` and ``mcpjson`` the pure transforms.
"""

import sys

from harness import options, printedcommands
from harness.install import extras, hooks, mcpjson, plugins, scopes
from harness.install import gate as gate_install


def _print(lines):
    for stream, line in lines:
        print(line, file=sys.stderr if stream == "err" else sys.stdout)


def cmd_install(args):
    scopes.check_scope_options(args.user, args.scope)
    if args.mcp:
        return cmd_install_mcp(args)
    result = hooks.install_router(args.project, args.scope, args.user, args.clusters, args.config, args.gate,
                                  args.dry_run)
    _print(hooks.install_lines(result))
    return 0


# --------------------------------------------------------------------------- --mcp


def cmd_install_mcp(args):
    directory = mcpjson.mcp_project(args.project, args.user, args.scope)
    hooks.require_files(args.clusters, args.config)
    extras.require_extra("mcp", "the server install --mcp wires could not start")
    # .mcp.json is shared: the portable command, and paths from the project's root (or refused)
    entry = mcpjson.server_entry(mcpjson.shared_executable(), clusters=args.clusters, config=args.config,
                                 path_word=lambda option, value: mcpjson.shared_path(option, value, directory))
    path = mcpjson.mcp_json_path(directory)
    action, detail, backup = mcpjson.install(directory, entry, dry_run=args.dry_run)
    note = plugins.mcp_note(directory)
    if note:
        print(note, file=sys.stderr)
    if action == "dry-run":
        print(f"(dry run: {path} not changed)", file=sys.stderr)
        return 0
    print(mcpjson.MESSAGES[action].format(path=path, detail=detail))
    if backup:
        print(f"backup of the previous file: {backup}")
    if action in ("added", "updated"):
        print("server: " + " ".join([entry["command"]] + entry["args"]))
        print("each teammate needs memory-router on PATH for this server to start "
              f"({scopes.install_hint()}); memory-router doctor checks it")
        print("Claude Code asks once whether to trust a project's .mcp.json servers; check it with: "
              + printedcommands.memory_router("doctor", "--project", directory))
    return 0


# --------------------------------------------------------------------------- argparse


def register(subparsers):
    import argparse

    raw = argparse.RawDescriptionHelpFormatter
    install = subparsers.add_parser(
        "install", help="wire the router hook into Claude Code's settings (local, project or user scope)",
        description="Adds a UserPromptSubmit command hook running memory-router, with a 5 s timeout, and a "
                    "SessionStart hook (matcher compact|clear) running 'memory-router session-start', which makes "
                    "the router forget what a session was sent once compaction or /clear drops it.\n\n"
                    "Where (--scope): 'local' is DIR/.claude/settings.local.json (this checkout's, not committed); "
                    "'project' is DIR/.claude/settings.json (committed: it gets the portable command "
                    "'memory-router hook', and each teammate installs memory-router); 'user' is "
                    "~/.claude/settings.json ($CLAUDE_CONFIG_DIR/settings.json when set). Default: local when the "
                    "command names a personal path (a virtualenv, your home directory), else project.\n\n"
                    "A router hook of ours in another scope with another command is refused (Claude Code would "
                    "run both). Every other key and hook is kept in order; the file is backed up to "
                    ".claude/memory-router/backups/ first and written atomically; running it twice changes "
                    "nothing. A re-install keeps the --clusters/--config and the timeout of the entry it replaces "
                    "unless given again, and says what it changes. Invalid JSON is refused (exit 2) and left "
                    "untouched; so is a provider_timeout_ms the hook's timeout cannot hold.\n\n"
                    "The entry is marked by a trailing '# memory-router install' shell comment in its command, "
                    "which is how uninstall finds exactly it. --mcp writes the server into the shared .mcp.json "
                    "as the portable 'memory-router mcp' instead.",
        epilog="exit codes: 0 installed or already installed; 1 refused (the file changed meanwhile, a "
               "hand-written router hook or one in another scope is already wired, no memory-router on PATH for "
               "--scope project, or the mcp extra missing for --mcp); 2 invalid settings.json, config or option",
        formatter_class=raw)
    where = install.add_mutually_exclusive_group()
    options.project(where)
    where.add_argument("--user", action="store_true", help="install for every project (the same as --scope user)")
    install.add_argument("--scope", choices=scopes.SCOPES,
                         help="settings file to write (default: local when the command names a personal path, "
                              "else project)")
    install.add_argument("--clusters", metavar="FILE", help="cluster file the hook reads (written into the command)")
    install.add_argument("--config", metavar="FILE", help="config file the hook reads (written into the command)")
    options.dry_run(install)
    install.add_argument("--mcp", action="store_true",
                         help="instead of the hook, add the MCP server (memory-router mcp) to the project's .mcp.json "
                              "(docs/mcp.md)")
    install.add_argument(
        "--gate", action="store_true",
        help=f"also wire the citation gate: a PreToolUse hook (matcher {gate_install.GATE_MATCHER}, "
             f"{gate_install.GATE_TIMEOUT_SECONDS} s timeout) refusing writes that cite decision ids or memories "
             "that do not exist (docs/citation-gate.md)")
    install.set_defaults(handler=cmd_install)
