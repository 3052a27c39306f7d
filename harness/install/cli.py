"""``memory-router install | uninstall``: wire the router hook (and with ``--gate`` the citation
gate, with ``--mcp`` the MCP server) into Claude Code's settings.json or .mcp.json and take it out
again, exactly. ``harness.install.settingsfile`` does the checked writes, ``settings``,
``gate`` and ``mcpjson`` the pure transforms.
"""

import os
import sys

from harness import options
from harness.install import gate as gate_install
from harness.install import hookcommand, mcpjson, plugins
from harness.install import settings as inst
from harness.install.settingsfile import (
    ROUTER_ROLE,
    apply_add,
    apply_remove,
    carry_over,
    existing_entry,
    read_settings,
    report_write,
    target_settings,
)
from harness.project import project_dir
from router.errors import InputError

MCP_MESSAGES = {
    "added": "installed the memory-router MCP server in {path} ({detail})",
    "updated": "updated the memory-router MCP server in {path} ({detail})",
    "unchanged": "the memory-router MCP server is already in {path} ({detail}); nothing changed",
    "restore": "removed the memory-router MCP server from {path}: restored, byte for byte, the file as it was "
               "before memory-router changed it",
    "write": "removed the memory-router MCP server from {path}; every other server kept",
    "delete": "removed the memory-router MCP server: deleted {path}, which memory-router had created and nobody "
              "changed",
    "absent": "the memory-router MCP server is not in {path}; nothing changed",
}


def _require_files(args):
    for option in ("clusters", "config"):
        value = getattr(args, option, None)
        if value and not os.path.isfile(value):
            raise InputError(f"--{option} file does not exist", path=value, fix="pass an existing file")
    if args.clusters:
        from router.clusterfile import load_cluster_file

        load_cluster_file(args.clusters)  # refuse to wire a hook or server that could only fail


def cmd_install(args):
    if args.mcp:
        return cmd_install_mcp(args)
    settings_path, _level = target_settings(args.user, args.project)
    _require_files(args)
    plugins.refuse_beside_plugin(project_dir(args.project), settings_path)  # each hook wired once
    carried, timeout, notes = carry_over(settings_path, args.clusters, args.config)
    command = hookcommand.router_hook_command(hookcommand.router_executable(), as_written=carried["as_written"],
                                              clusters=carried["clusters"], config=carried["config"])
    existing = existing_entry(settings_path)
    if existing is not None and existing.command != command:
        notes.append(f"the entry's command changes from {existing.command} to {command}")
    if args.gate:
        gate_install.check_installable(settings_path)
    session_command = hookcommand.session_start_command(hookcommand.router_executable())
    action, detail, backup = apply_add(settings_path, ROUTER_ROLE, hookcommand.ROUTER_MARK, command, timeout=timeout,
                                       dry_run=args.dry_run, conflicts=hookcommand.runs_router_hook,
                                       more=((inst.SESSION_EVENT, session_command, inst.SESSION_MATCHER),))
    if action != "unchanged":
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
    if action != "dry-run":
        report_write(action, detail, backup, settings_path, "the memory-router hook")
    if args.gate:  # beside the router's entry, in the same file
        gate_action, gate_detail, gate_backup, gate_command = gate_install.install_gate(
            settings_path, args.clusters, args.config, args.dry_run)
        if gate_action != "dry-run":
            report_write(gate_action, gate_detail, gate_backup, settings_path, "the citation gate")
            if gate_action in ("added", "updated"):
                print(f"gate command: {gate_command}")
    if action == "dry-run":
        print(f"(dry run: {settings_path} not changed)", file=sys.stderr)
        return 0
    if action in ("added", "updated"):
        print(f"command: {command}")
        print(f"on compaction and /clear: {session_command}")
        print("check it with: memory-router doctor" + (
            f" --project {hookcommand.quote_for_shell(project_dir(args.project))}" if not args.user else ""))
    return 0


def cmd_uninstall(args):
    if args.mcp:
        return cmd_uninstall_mcp(args)
    settings_path, _level = target_settings(args.user, args.project)
    if args.gate:
        gate_action, gate_backup = gate_install.uninstall_gate(settings_path, args.dry_run)
        if gate_action != "dry-run":
            report_write(gate_action, "", gate_backup, settings_path, "the citation gate")
    else:
        left = gate_install.note_if_left(settings_path)
        if left:
            print(left)
    action, backup = apply_remove(settings_path, ROUTER_ROLE, hookcommand.ROUTER_MARK, dry_run=args.dry_run)
    if action == "dry-run":
        print(f"(dry run: {settings_path} not changed)", file=sys.stderr)
        return 0
    report_write(action, "", backup, settings_path, "the memory-router hook")
    if action == "absent" and os.path.isfile(settings_path):
        _snap, settings = read_settings(settings_path)
        manual = [e for e in inst.find_entries(settings, hookcommand.ROUTER_MARK, also=hookcommand.runs_router_hook)
                  if not e.marked]
        for entry in manual:
            print(f"note: {entry.where} runs the router but was not added by memory-router install; left as is: "
                  f"{entry.command}")
    note = plugins.still_enabled_note(project_dir(args.project))
    if note:
        print(note)
    return 0


# --------------------------------------------------------------------------- --mcp


def _mcp_project(args):
    if args.user:
        raise InputError("--mcp writes the project's .mcp.json; there is no user-level file for it",
                         fix="drop --user and pass --project DIR (or run in the project)")
    directory = project_dir(args.project)
    if not os.path.isdir(directory):
        raise InputError("project directory does not exist", path=directory,
                         fix="pass --project with an existing directory")
    return directory


def cmd_install_mcp(args):
    directory = _mcp_project(args)
    _require_files(args)
    entry = mcpjson.server_entry(hookcommand.router_executable(), clusters=args.clusters, config=args.config)
    path = mcpjson.mcp_json_path(directory)
    action, detail, backup = mcpjson.install(directory, entry, dry_run=args.dry_run)
    note = plugins.mcp_note(directory)
    if note:
        print(note, file=sys.stderr)
    if action == "dry-run":
        print(f"(dry run: {path} not changed)", file=sys.stderr)
        return 0
    print(MCP_MESSAGES[action].format(path=path, detail=detail))
    if backup:
        print(f"backup of the previous file: {backup}")
    if action in ("added", "updated"):
        print("server: " + " ".join([entry["command"]] + entry["args"]))
        print("Claude Code asks once whether to trust a project's .mcp.json servers; check it with: "
              f"memory-router doctor --project {hookcommand.quote_for_shell(directory)}")
    return 0


def cmd_uninstall_mcp(args):
    directory = _mcp_project(args)
    path = mcpjson.mcp_json_path(directory)
    action, backup = mcpjson.uninstall(directory, dry_run=args.dry_run)
    if action == "dry-run":
        print(f"(dry run: {path} not changed)", file=sys.stderr)
        return 0
    print(MCP_MESSAGES[action].format(path=path, detail=""))
    if backup:
        print(f"backup of the previous file: {backup}")
    if action == "absent" and os.path.isfile(path):
        _snap, doc = mcpjson.read_mcp_json(path)
        if (doc.get("mcpServers") or {}).get(mcpjson.SERVER_KEY) is not None:
            print(f"note: mcpServers.{mcpjson.SERVER_KEY} does not run memory-router mcp, so it is not ours; "
                  "left as is")
    return 0


# --------------------------------------------------------------------------- argparse


def register(subparsers):
    import argparse

    raw = argparse.RawDescriptionHelpFormatter
    install = subparsers.add_parser(
        "install", help="wire the router hook into Claude Code's settings.json (project or user)",
        description="Adds a UserPromptSubmit command hook running this memory-router by its absolute path, "
                    "with a 5 s timeout, and a SessionStart hook (matcher compact|clear) running "
                    "'memory-router session-start', which makes the router forget what a session was sent once "
                    "compaction or /clear drops it from the context, to DIR/.claude/settings.json (default: the "
                    "current directory) or, with "
                    "--user, to ~/.claude/settings.json ($CLAUDE_CONFIG_DIR/settings.json when set). Every other "
                    "key and hook is kept in order; the file is backed up to .claude/memory-router/backups/ first "
                    "and written atomically; running it twice changes nothing; a re-install keeps the "
                    "--clusters/--config and the timeout of the entry it replaces unless given again, and says "
                    "what it changes; invalid JSON is refused (exit 2) "
                    "and left untouched. The entry is marked by a trailing '# memory-router install' shell "
                    "comment in its command, which is how uninstall finds exactly it.",
        epilog="exit codes: 0 installed or already installed; 1 refused (the file changed meanwhile, or a "
               "hand-written router hook is already wired); 2 invalid settings.json or option",
        formatter_class=raw)
    where = install.add_mutually_exclusive_group()
    options.project(where)
    where.add_argument("--user", action="store_true", help="install for every project (user settings)")
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

    uninstall = subparsers.add_parser(
        "uninstall", help="remove the hooks that install added (exactly them)",
        description="Removes the handlers marked '# memory-router install' (UserPromptSubmit and SessionStart). If "
                    "settings.json is exactly what "
                    "install wrote, the bytes from before the install come back unchanged (or the file is deleted "
                    "if install created it); otherwise only our handler is removed and everything else kept. "
                    "The current file is backed up first.",
        epilog="exit codes: 0 removed or not installed; 1 refused (the file changed meanwhile); 2 invalid "
               "settings.json",
        formatter_class=raw)
    where = uninstall.add_mutually_exclusive_group()
    options.project(where)
    where.add_argument("--user", action="store_true", help="the user settings")
    options.dry_run(uninstall)
    uninstall.add_argument("--mcp", action="store_true",
                           help="instead of the hook, remove the MCP server that install --mcp added to .mcp.json")
    uninstall.add_argument("--gate", action="store_true", help="also remove the citation gate that install --gate added")
    uninstall.set_defaults(handler=cmd_uninstall)
