"""``memory-router install | uninstall``: wire the router hook into Claude Code's settings.json and
take it out again, exactly (``harness.install.settingsfile`` does the checked writes, ``harness.install.settings``
the pure transforms). ``doctor`` is in ``harness.doctor.cli``, ``sentinel`` in
``harness.sentinel.cli``, ``checklist`` in ``harness.canary.checklist``.
"""

import os
import sys

from harness.install import hookcommand
from harness.install import settings as inst
from harness.project import project_dir_of
from harness.install.settingsfile import (
    ROUTER_ROLE,
    apply_add,
    apply_remove,
    read_settings,
    report_write,
    router_executable,
    target_settings,
)
from router.errors import InputError


def cmd_install(args):
    if getattr(args, "mcp", False):
        from harness.install.mcpjson import cmd_install_mcp

        return cmd_install_mcp(args)
    settings_path, _level = target_settings(args)
    for option in ("clusters", "config"):
        value = getattr(args, option, None)
        if value and not os.path.isfile(value):
            raise InputError(f"--{option} file does not exist", path=value, fix="pass an existing file")
    if args.clusters:
        from router.clusterfile import load_cluster_file

        load_cluster_file(args.clusters)  # refuse to wire a hook that would only ever fail open
    options, timeout, notes = _carry_over(settings_path, args)
    command = hookcommand.router_hook_command(router_executable(), as_written=options["as_written"],
                                              clusters=options["clusters"], config=options["config"])
    existing = _existing_entry(settings_path)
    if existing is not None and existing.command != command:
        notes.append(f"the entry's command changes from {existing.command} to {command}")
    if getattr(args, "gate", False):
        from harness.install import gate as gate_install

        gate_install.check_installable(settings_path)
    session_command = hookcommand.session_start_command(router_executable())
    action, detail, backup = apply_add(settings_path, ROUTER_ROLE, hookcommand.ROUTER_MARK, command, timeout=timeout,
                                       dry_run=args.dry_run, conflicts=hookcommand.runs_router_hook,
                                       more=((inst.SESSION_EVENT, session_command, inst.SESSION_MATCHER),))
    if action != "unchanged":
        for note in notes:
            print(f"note: {note}", file=sys.stderr)
    if action != "dry-run":
        report_write(action, detail, backup, settings_path, "the memory-router hook")
    if getattr(args, "gate", False):
        from harness.install import gate as gate_install

        gate_install.install_gate(args, settings_path)  # beside the router's entry, in the same file
    if action == "dry-run":
        print(f"(dry run: {settings_path} not changed)", file=sys.stderr)
        return 0
    if action in ("added", "updated"):
        print(f"command: {command}")
        print(f"on compaction and /clear: {session_command}")
        print("check it with: memory-router doctor" + (f" --project {hookcommand.quote_for_shell(project_dir_of(args))}"
                                                      if not args.user else ""))
    return 0


def _existing_entry(settings_path):
    """Our entry already in ``settings_path`` (the first), or ``None``; an unreadable file is
    left for ``apply_add`` to report."""
    from router.errors import MemoryRouterError

    if not os.path.lexists(settings_path):
        return None
    try:
        _snap, settings = read_settings(settings_path)
    except MemoryRouterError:
        return None
    found = inst.find_entries(settings, hookcommand.ROUTER_MARK)
    return found[0] if found else None


def _carry_over(settings_path, args):
    """What a re-install keeps from the entry it replaces, so it never silently reverts a hand
    edit: ``--clusters``/``--config`` not given again, and a timeout the user changed. Returns
    ``(options, timeout, notes)``; the notes say what was kept and what changes."""
    options = {"clusters": args.clusters, "config": args.config, "as_written": ()}
    timeout = hookcommand.HOOK_TIMEOUT_SECONDS
    notes = []
    existing = _existing_entry(settings_path)
    if existing is None:
        return options, timeout, notes
    kept = []
    for name in ("clusters", "config"):
        old = hookcommand.command_option(existing.command, name)
        if old and not options[name]:
            options[name] = old
            kept.append(name)
            notes.append(f"kept --{name} {old} from the existing entry (pass --{name} to change it)")
        elif old and os.path.abspath(options[name]) != os.path.abspath(old):
            notes.append(f"--{name} changes from {old} to {os.path.abspath(options[name])}")
    options["as_written"] = tuple(kept)
    if isinstance(existing.timeout, (int, float)) and not isinstance(existing.timeout, bool) \
            and existing.timeout > 0 and existing.timeout != timeout:
        timeout = existing.timeout
        notes.append(f"kept the entry's timeout of {existing.timeout} s (the default is {hookcommand.HOOK_TIMEOUT_SECONDS} s)")
    return options, timeout, notes


def cmd_uninstall(args):
    if getattr(args, "mcp", False):
        from harness.install.mcpjson import cmd_uninstall_mcp

        return cmd_uninstall_mcp(args)
    from harness.install import gate as gate_install

    settings_path, _level = target_settings(args)
    if getattr(args, "gate", False):
        gate_install.uninstall_gate(args, settings_path)
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
        manual = [e for e in inst.find_entries(settings, hookcommand.ROUTER_MARK, also=hookcommand.runs_router_hook) if not e.marked]
        for entry in manual:
            print(f"note: {entry.where} runs the router but was not added by memory-router install; left as is: "
                  f"{entry.command}")
    return 0


def register(subparsers):
    import argparse

    raw = argparse.RawDescriptionHelpFormatter
    install = subparsers.add_parser(
        "install", help="wire the router hook into Claude Code's settings.json (project or user)",
        description="Adds a UserPromptSubmit command hook running this memory-router by its absolute path, "
                    "with a 5 s timeout, and a SessionStart hook (matcher compact|clear) running "
                    "'memory-router session-start', which makes the router forget what a session was sent once "
                    "compaction or /clear drops it from the context, to DIR/.claude/settings.json (default: the current directory) or, with "
                    "--user, to ~/.claude/settings.json ($CLAUDE_CONFIG_DIR/settings.json when set). Every other "
                    "key and hook is kept in order; the file is backed up to .claude/memory-router/backups/ first "
                    "and written atomically; running it twice changes nothing; a re-install keeps the --clusters/--config "
                    "and the timeout of the entry it replaces unless given again, and says what it changes; "
                    "invalid JSON is refused (exit 2) "
                    "and left untouched. The entry is marked by a trailing '# memory-router install' shell "
                    "comment in its command, which is how uninstall finds exactly it.",
        epilog="exit codes: 0 installed or already installed; 1 refused (the file changed meanwhile, or a "
               "hand-written router hook is already wired); 2 invalid settings.json or option",
        formatter_class=raw)
    where = install.add_mutually_exclusive_group()
    where.add_argument("--project", metavar="DIR", help="project directory (default: the current directory)")
    where.add_argument("--user", action="store_true", help="install for every project (user settings)")
    install.add_argument("--clusters", metavar="FILE", help="cluster file the hook reads (written into the command)")
    install.add_argument("--config", metavar="FILE", help="config file the hook reads (written into the command)")
    install.add_argument("--dry-run", action="store_true", help="print the diff; change nothing")
    install.add_argument("--mcp", action="store_true",
                         help="instead of the hook, add the MCP server (memory-router mcp) to the project's .mcp.json "
                              "(docs/mcp.md)")
    install.set_defaults(handler=cmd_install)

    uninstall = subparsers.add_parser(
        "uninstall", help="remove the hooks that install added (exactly them)",
        description="Removes the handlers marked '# memory-router install' (UserPromptSubmit and SessionStart). If settings.json is exactly what "
                    "install wrote, the bytes from before the install come back unchanged (or the file is deleted "
                    "if install created it); otherwise only our handler is removed and everything else kept. "
                    "The current file is backed up first.",
        epilog="exit codes: 0 removed or not installed; 1 refused (the file changed meanwhile); 2 invalid "
               "settings.json",
        formatter_class=raw)
    where = uninstall.add_mutually_exclusive_group()
    where.add_argument("--project", metavar="DIR", help="project directory (default: the current directory)")
    where.add_argument("--user", action="store_true", help="the user settings")
    uninstall.add_argument("--dry-run", action="store_true", help="print the diff; change nothing")
    uninstall.add_argument("--mcp", action="store_true",
                           help="instead of the hook, remove the MCP server that install --mcp added to .mcp.json")
    uninstall.set_defaults(handler=cmd_uninstall)
    from harness.install import gate as gate_install

    gate_install.add_arguments(install, uninstall)
