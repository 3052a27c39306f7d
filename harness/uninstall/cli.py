"""``memory-router uninstall``: take out the hooks that install (or init) added, exactly them;
never leaving a slim MEMORY.md without a router (refused unless ``--rollback`` or ``--force``);
with ``--all``, undo ``init`` in the project. The hooks' removal is ``harness.install.hooks``, the
rest ``harness.uninstall.undo``."""

import os
import sys

from harness import options, printedcommands
from harness import setuprecord
from harness.install import hooks, mcpjson, scopes
from harness.project import project_dir
from harness.uninstall import undo
from router.errors import InputError, RefusedError


def _print(lines):
    for stream, line in lines:
        print(line, file=sys.stderr if stream == "err" else sys.stdout)


def _warn(message):
    print(f"memory-router: warning: {message}", file=sys.stderr)


def cmd_uninstall(args):
    scopes.check_scope_options(args.user, args.scope)
    if args.mcp:
        if args.all or args.rollback:
            raise InputError("--mcp removes only the MCP server; --all and --rollback are about the hooks",
                             fix="run them as two commands")
        return cmd_uninstall_mcp(args)
    if args.all and (args.scope or args.user):
        raise InputError("--all undoes init in every scope it wrote", fix="drop --scope/--user")
    directory = project_dir(args.project)
    record = setuprecord.read(directory) if args.all else None
    asked = hooks.uninstall_scopes(args.scope, args.user)
    if args.all:
        asked += [scope for scope in (record or {}).get("scopes") or [] if scope not in asked]

    if "user" in asked:
        _guard_other_projects(directory, args.force)
    live = undo.live_index(directory)
    if live["slim"] and (args.rollback or args.all):
        if args.dry_run:
            print(f"would roll back {live['path']} (a slim index) to its newest render archive first",
                  file=sys.stderr)
        else:
            restored, saved = undo.rollback(live["memory_dir"])
            print(f"rolled back {live['path']} from {restored} (the slim index is kept in {saved})")
    elif live["slim"] and undo.stranded(directory, asked) is not None:
        if not args.force:
            undo.refuse_stranding(live, "this uninstall")
        _warn(f"--force: {live['path']} stays a slim index with no router hook for this project: the memories it "
              f"routes reach no prompt until you run "
              + printedcommands.memory_router("slim", "rollback", "--memory-dir", live["memory_dir"]))

    if args.all:
        lines = hooks.uninstall_router(directory, gate=args.gate, dry_run=args.dry_run)  # the project's two
        if "user" in asked:
            lines += hooks.uninstall_router(directory, "user", gate=args.gate, dry_run=args.dry_run)
        # the project's backups go with its state folder below: a path to one would point at nothing
        state = os.path.join(directory, ".claude", "")
        _print([(stream, line) for stream, line in lines
                if not (line.startswith("backup of the previous file: ") and state in line)])
        return _undo_init(directory, record, args.dry_run, args.gate)
    _print(hooks.uninstall_router(args.project, args.scope, args.user, args.gate, args.dry_run))
    return 0


def _guard_other_projects(directory, force):
    """Refuse to remove the user-scope router while another project's slim MEMORY.md relies on it
    (issue 35 item 4), wherever this runs; ``--force`` removes it anyway, naming them."""
    from harness.install import routes

    reliant = routes.projects_relying_on("user", exclude=directory)
    if not reliant:
        return
    named = "; ".join(f"{r.project or 'a project'} ({r.memory_md})" for r in reliant)
    if not force:
        raise RefusedError(f"the user-scope router hook is the only router of {len(reliant)} other project(s) whose "
                           f"MEMORY.md is a slim index: {named}; removing it would leave the memories they moved "
                           "out reaching no prompt; nothing was written",
                           fix="run memory-router slim rollback in each of them first (or install the hook in "
                               "their project scope), or pass --force to remove it anyway")
    _warn(f"--force: these slim indexes are left with no router: {named}; their memories reach no prompt until "
          "memory-router slim rollback there")


def _undo_init(directory, record, dry_run, gate=False):
    if record is None:
        print(f"no init record in {setuprecord.record_path(directory)} (init was not run here, or by an older "
              "memory-router): the config and cluster files are left as they are")
    result = undo.undo_init(directory, record, dry_run, gate)
    verbs = {"delete": ("deleted", "would delete"), "restore": ("restored the original of", "would restore"),
             "keep": ("kept", "would keep")}
    for path, action, why in result["files"]:
        if action in verbs:
            print(f"{verbs[action][1 if dry_run else 0]} {path}: {why}")
    kept = [path for path, action, why in result["files"] if action == "keep" and why.startswith("changed")]
    if result["state_kept"]:
        print(f"kept {result['state_dir']}: it still holds " + ", ".join(
            name if "(" in name else f"{name} (not written by memory-router)" for name in result["state_kept"]))
    elif result["state_removed"]:
        print(f"{'would remove' if dry_run else 'removed'} {result['state_dir']} (records, backups, locks)")
    for directory, why in result.get("dirs_kept") or []:
        print(f"kept {directory}: {why}")
    if kept:
        _warn(f"{len(kept)} file(s) memory-router wrote were changed since and are yours now, so they stay: " + ", ".join(kept))
    return 0


def cmd_uninstall_mcp(args):
    directory = mcpjson.mcp_project(args.project, args.user, args.scope)
    path = mcpjson.mcp_json_path(directory)
    action, backup = mcpjson.uninstall(directory, dry_run=args.dry_run)
    if action == "dry-run":
        print(f"(dry run: {path} not changed)", file=sys.stderr)
        return 0
    print(mcpjson.MESSAGES[action].format(path=path, detail=""))
    if backup:
        print(f"backup of the previous file: {backup}")
    if action == "absent" and os.path.isfile(path):
        _snap, doc = mcpjson.read_mcp_json(path)
        if (doc.get("mcpServers") or {}).get(mcpjson.SERVER_KEY) is not None:
            print(f"note: mcpServers.{mcpjson.SERVER_KEY} does not run memory-router mcp, so it is not ours; "
                  "left as is")
    return 0


def register(subparsers):
    import argparse

    uninstall = subparsers.add_parser(
        "uninstall", help="remove the hooks that install added (exactly them); --all undoes init",
        description="Removes the handlers marked '# memory-router install' (UserPromptSubmit and SessionStart) "
                    "from the project's .claude/settings.json and .claude/settings.local.json (--scope: one of "
                    "them, or the user settings). If a file is exactly what install wrote, the bytes from before "
                    "the install come back unchanged (or the file is deleted if install created it); otherwise "
                    "only our handler is removed and everything else kept. The current file is backed up first, "
                    "into .claude/memory-router/, which git ignores: git status is as it was before install. "
                    "While the live MEMORY.md is a slim index, taking away the last router hook (no other scope, "
                    "no plugin) is refused: the memories it moved out would reach no prompt; --rollback restores "
                    "the flat MEMORY.md first (slim rollback), --force uninstalls anyway. --all undoes init: rolls "
                    "a slim index back, removes the hooks from every scope init wrote, deletes the config, "
                    "cluster, utterances and learned files init wrote that nobody changed since (a changed one is "
                    "kept and named; a config init edited gets its original back), the directories it created "
                    "when empty, and .claude/memory-router/.",
        epilog="exit codes: 0 removed or not installed; 1 refused (the file changed meanwhile, or a slim index "
               "would be left without a router); 2 invalid settings.json",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    where = uninstall.add_mutually_exclusive_group()
    options.project(where)
    where.add_argument("--user", action="store_true", help="the user settings (the same as --scope user)")
    uninstall.add_argument("--scope", choices=scopes.SCOPES,
                           help="the one settings file to clean (default: the project's two, shared and local)")
    options.dry_run(uninstall)
    uninstall.add_argument("--mcp", action="store_true",
                           help="instead of the hook, remove the MCP server that install --mcp added to .mcp.json")
    uninstall.add_argument("--gate", action="store_true", help="also remove the citation gate that install --gate added")
    uninstall.add_argument("--rollback", action="store_true",
                           help="when MEMORY.md is a slim index, restore the flat one first (slim rollback)")
    uninstall.add_argument("--force", action="store_true",
                           help="uninstall even if that leaves a slim MEMORY.md with no router")
    uninstall.add_argument("--all", action="store_true",
                           help="undo init here: hooks, config, built cluster files, state folder; a slim index is "
                                "rolled back first")
    uninstall.set_defaults(handler=cmd_uninstall)
