"""``memory-router init``: the face. From a project to a working install in one command: the memory
directory found, the cluster file built, a hot strip proposed and confirmed, memory-router.toml
written, the hooks installed, doctor run, the next three commands printed. The model is
``harness.init.setup``; the proposal ``harness.init.hotstrip``."""

import os
import sys
import time

from harness import options
from harness.init import hotstrip, setup
from harness import setuprecord
from router.errors import InputError, RefusedError


class _Say:
    """Human lines, unless --json (then nothing but the JSON object reaches stdout)."""

    def __init__(self, quiet):
        self.quiet = quiet

    def __call__(self, text="", err=False):
        if not self.quiet:
            print(text, file=sys.stderr if err else sys.stdout, flush=True)


PLACEHOLDER_NAMES = ("cluster names: placeholders, two of each cluster's own words (layer1_<word>_<word>), with no "
                     "label; to have your model label and tag each cluster, run memory-router clusters build --engine "
                     "claude (the ids stay: suites and learned terms refer to them)")


def _engine_stage(args, plan, say):
    if not args.engine:
        return None
    import types

    from harness.clusters.build_engine import EngineStage
    from harness.clusters.enrich_cli import engine_from
    from harness.clusters.enrich_protocol import DEFAULT_PER_MEMORY

    wanted = types.SimpleNamespace(engine=args.engine, model=args.model, command=args.command, timeout=None,
                                   per_memory=DEFAULT_PER_MEMORY)
    return EngineStage(engine_from(wanted, plan["config"]), DEFAULT_PER_MEMORY, args.dry_run, args.json, args.yes,
                       say=say)


def _ask_hot_strip(proposal, memories, say):
    """The hot strip the user settles on (the face's one question), asked until it parses."""
    hooks = {m.slug: m.hook for m in memories}
    say(f"hot strip: {len(proposal)} memories proposed to stay always loaded in the slim MEMORY.md "
        "(corrections and gotchas whose plausible answer is wrong; the rest is routed per prompt):")
    import shutil
    import textwrap

    # Each memory on its own lines, wrapped by words under its number; a long hook shortened at a
    # word, never cut inside one
    width = min(shutil.get_terminal_size((80, 24)).columns, 100)
    for number, slug in enumerate(proposal, 1):
        hook = textwrap.shorten(hooks.get(slug, ""), width=140, placeholder=" ...")
        for line in textwrap.wrap(f"{number:2d}. {slug} \u2014 {hook}", width=width, initial_indent="  ",
                                  subsequent_indent="      ", break_long_words=False, break_on_hyphens=False):
            say(line)
    while True:
        print("Keep these? Enter: yes; numbers or slugs: only those; -: none > ", end="", file=sys.stderr,
              flush=True)
        answer = sys.stdin.readline()
        if not answer:  # end of input: take nothing unasked
            raise RefusedError("no answer to the hot-strip question; nothing more was written",
                               fix="run memory-router init again (or pass --yes to accept the proposal)")
        try:
            return hotstrip.parse_answer(answer, proposal, set(hooks))
        except ValueError as err:
            print(f"  {err}", file=sys.stderr)


def cmd_init(args):
    from harness.install import hooks
    from harness.install.scopes import exe_for
    from harness.output import print_json
    from harness.project import project_dir

    started = time.perf_counter()
    say = _Say(args.json)
    directory = project_dir(args.project)
    if not os.path.isdir(directory):
        raise InputError("project directory does not exist", path=directory, fix="pass --project with an existing "
                                                                                 "directory")
    plan = setup.plan_init(directory, args.memory_dir)
    asks = plan["hot_strip"] is None and not args.yes and not args.dry_run
    if asks and (args.json or not sys.stdin.isatty()):
        raise RefusedError("the proposed hot strip needs your confirmation and there is no terminal to ask on; "
                           "nothing was written", fix="pass --yes to accept the proposal, or set hot_strip in "
                                                     "memory-router.toml and run memory-router init again")
    plugin = None if args.scope else setup.plugin_running_hooks(directory)
    if plugin is not None:
        scope, why = None, f"the {plugin.where()} runs them"   # a settings hook as well would run twice
    else:
        scope, why = (args.scope, f"--scope {args.scope}") if args.scope else setup.default_scope(directory)
        exe_for(scope)  # a project scope PATH cannot serve is refused before anything is written
    say(f"memory-router init{' (dry run: nothing is written)' if args.dry_run else ''}: {directory}")
    say(f"memory directory: {plan['memory_dir']} ({plan['memory_how']}): {len(plan['memories'])} memories")

    report = {"project": directory, "dry_run": bool(args.dry_run), "seconds": {}}
    # What the project holds before init writes, so uninstall --all can undo exactly what it wrote.
    before = None if args.dry_run else setuprecord.before(*setup.written_paths(plan))
    stage = _engine_stage(args, plan, say)
    index = None
    if plan["cluster_exists"]:
        say(f"cluster file: {plan['cluster_path']} ({plan['cluster_how']}): kept")
        report["cluster_file"] = {"path": plan["cluster_path"], "action": "kept"}
        if stage is not None:
            report["cluster_file"]["enrich"] = setup.enrich_existing(plan, stage, say)
    else:
        summary, seconds = setup.build_clusters(plan, args.dry_run, stage)
        report["seconds"]["build"] = round(seconds, 3)
        check = summary["self_routing"]
        say(f"cluster file: {'would build' if args.dry_run else 'built'} {plan['cluster_path']}: "
            f"{len(summary['clusters'])} clusters from {summary['memories']} memories; {check['share']:.0%} of them "
            f"reach their own cluster from their own hook ({seconds:.1f} s)")
        report["cluster_file"] = {"path": plan["cluster_path"], "action": "dry-run" if args.dry_run else "built",
                                  "clusters": len(summary["clusters"]), "memories": summary["memories"],
                                  "self_routing": check["share"], "enrich": summary.get("enrich"),
                                  "names": "engine" if stage is not None else "placeholders"}
        if stage is None:
            # the agent reads these names in the slim index: say what they are and how to better them
            say(PLACEHOLDER_NAMES)
        index = setup.planned_index(plan, args.dry_run)

    if before is not None:
        # What the build (and an engine's enrichment) wrote is recorded before the question below:
        # Ctrl-C there leaves a store uninstall --all can still take out.
        setuprecord.write(directory, before, None)
    hot, hot_action = plan["hot_strip"], "kept"
    if hot is None:
        proposal = setup.propose_hot_strip(plan, index)
        if args.yes or args.dry_run:
            hot, hot_action = proposal, "proposed"
        else:
            hot, hot_action = _ask_hot_strip(proposal, plan["memories"], say), "confirmed"
    listed = ": " + ", ".join(hot) if hot and hot_action != "confirmed" else ""
    say(f"hot strip: {len(hot)} memories ({hot_action}){listed}")
    report["hot_strip"] = {"slugs": hot, "action": hot_action}

    changes = setup.config_changes(plan, hot if hot_action != "kept" else None, bool(args.memory_dir))
    action, diff = setup.write_config(plan, changes, args.dry_run)
    say(f"config: {plan['config_path']}: " + ({"unchanged": "nothing to change", "dry-run": "would set ",
                                                "written": "set ", "created": "created with "}[action]
                                               + ", ".join(changes)))
    if action == "dry-run" and diff:
        say(diff.rstrip("\n"))
    report["config"] = {"path": plan["config_path"], "action": action, "keys": sorted(changes)}

    import io

    if plugin is not None:
        say(f"hooks: the plugin {plugin.plugin_id} runs them (nothing installed in a settings file)")
        install = {"settings": None, "scope": "plugin", "command": None, "action": "plugin"}
    else:
        install = hooks.install_router(directory, scope, dry_run=args.dry_run,
                                       out=io.StringIO() if args.json else None)
        for stream, line in hooks.install_lines(install):
            if not line.startswith("check it with:"):  # init runs doctor itself, below
                say(line, err=stream == "err")
    install["scope_why"] = why
    report["install"] = {key: install[key] for key in ("settings", "scope", "scope_why", "command", "action")}
    if before is not None:
        report["record"] = setuprecord.record_path(directory)
        # A scope is init's own only when init wrote the hook there: one found in place (another
        # project's user-scope hook) is not this project's to remove on uninstall --all.
        setuprecord.write(directory, before, scope if install["action"] == "added" else None)

    ok = True
    if not args.dry_run:
        # The hook's table, compiled now: the first prompt pays no build (router.hooks.compiled).
        from harness.context import compile_hook_table
        from harness.project import project_config

        report["compiled"] = compile_hook_table(plan["cluster_path"], project_config(directory))
        checks, failed, warned, seconds = setup.doctor_summary(directory)
        ok = not failed
        report["seconds"]["doctor"] = round(seconds, 3)
        store = next((c["store"] for c in checks if c["name"] == "store"), None)
        report["store"] = store
        report["doctor"] = {"ok": ok, "checks": len(checks), "failed": failed, "warned": warned}
        counted = sum(c["status"] != "info" for c in checks)  # as doctor counts them
        say(f"doctor: {counted} checks, " + (f"{len(failed)} failed" if failed else "all passed")
            + (f", {len(warned)} warning(s)" if warned else "") + f" ({seconds:.1f} s)")
        for item in failed + warned:
            say(f"  {item['status'].upper()} {item['name']}: {item['message']}"
                + (f" (fix: {item['fix']})" if item.get("fix") else ""))
        report["next"] = setup.next_commands(checks)
        say("next:")
        for command in report["next"]:
            say(f"  {command}")
    report["seconds"]["total"] = round(time.perf_counter() - started, 3)
    report["ok"] = ok
    if args.json:
        print_json(report)
    return 0 if ok else 1


def register(subparsers):
    import argparse

    from harness.install.scopes import SCOPES

    init = subparsers.add_parser(
        "init", help="set memory-router up in a project: store, config, hot strip, hooks, doctor",
        description="In a project (default: the current directory): finds Claude Code's memory directory for it "
                    "(~/.claude/projects/<project path, non-alphanumerics as ->/memory, or --memory-dir), builds "
                    "brain/memory-layer1-clusters.md from it if there is no cluster file (with --engine, names the "
                    "clusters and enriches the store, as clusters build --engine does), proposes a hot strip "
                    "(corrections and environment gotchas whose plausible answer is wrong) for you to confirm or "
                    "edit, writes memory_dir, clusters and hot_strip to memory-router.toml (where missing), "
                    "installs the hooks (in the scope they are already in, else the project scope with the "
                    "portable 'memory-router hook' when PATH finds memory-router, else the local scope), runs "
                    "doctor and prints the next three commands. Running it again changes nothing. docs/init.md.",
        epilog="exit codes: 0 set up and doctor passed; 1 doctor failed, a write was refused, or the hot strip "
               "was not confirmed; 2 invalid input (no memory directory, a broken config or settings file)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    options.project(init)
    options.memory_dir(init, default="memory_dir in the config, else Claude Code's "
                                     "~/.claude/projects/<project>/memory")
    init.add_argument("--scope", choices=SCOPES,
                      help="where the hooks go (default: where they already are, else project when memory-router "
                           "is on PATH, else local)")
    init.add_argument("--engine", metavar="NAME",
                      help="name the clusters and enrich the store with this engine (claude, anthropic, command; "
                           "docs/enrich.md); default: zero-AI")
    init.add_argument("--command", metavar="'PROGRAM ARGS'",
                      help="with --engine command: the program (docs/enrich.md); with claude: the claude executable")
    init.add_argument("--model", metavar="MODEL", help="with --engine: the model it uses (default: its small one)")
    init.add_argument("--yes", "-y", action="store_true",
                      help="accept the proposed hot strip (and the engine's estimate) without asking")
    options.dry_run(init, "say what would be done and show the diffs; write nothing")
    options.json_output(init)
    init.set_defaults(handler=cmd_init)
