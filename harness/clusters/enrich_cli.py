"""``memory-router clusters enrich``: the face (options, the estimate and the confirmation, the
progress bar, one line per cluster, --json). The model is ``harness.clusters.enrich``.

The engine options (``--engine --command --model --timeout --per-memory --yes``) are also those of
``clusters build --engine`` (``add_engine_options``, ``engine_from``, ``confirm``)."""

import os
import sys

from router import config as config_mod

DEFAULT_ENGINE = "claude"


def add_engine_options(parser, engine_help=None):
    from harness.clusters.enrich_protocol import DEFAULT_NEAR_MISSES, DEFAULT_PER_MEMORY, MAX_NEAR_MISSES, MAX_PER_MEMORY

    parser.add_argument("--engine", metavar="NAME",
                        help=engine_help or f"who writes the utterances: claude (your Claude Code CLI, headless), "
                                            f"anthropic (the SDK: pip install 'memory-router[enrich]'), command "
                                            f"(any program), or a plugin's (default: enrich_engine in the config, "
                                            f"else {DEFAULT_ENGINE})")
    parser.add_argument("--command", metavar="'PROGRAM ARGS'",
                        help="for --engine command: the program (one JSON request on stdin, one JSON answer on "
                             "stdout; docs/enrich.md); for claude: the claude executable (default: enrich_command "
                             "in the config, else claude on PATH)")
    parser.add_argument("--model", metavar="MODEL",
                        help="model the engine uses (default: enrich_model in the config, else the engine's small "
                             "one: haiku for claude, claude-haiku-5-5 for anthropic)")
    parser.add_argument("--per-memory", metavar="N", type=int, default=DEFAULT_PER_MEMORY,
                        help=f"utterances asked per memory, 1 to {MAX_PER_MEMORY} (default: {DEFAULT_PER_MEMORY})")
    parser.add_argument("--near-misses", metavar="K", type=int, default=DEFAULT_NEAR_MISSES,
                        help=f"near-misses asked per cluster, 0 to {MAX_NEAR_MISSES}: requests that graze its words "
                             f"but need no memory, which keep the router quiet on them (0: none; default: "
                             f"{DEFAULT_NEAR_MISSES})")
    parser.add_argument("--timeout", metavar="SECONDS", type=float, default=None,
                        help="per request (default: fitted to each request's answer, 30 s plus 1 s per 20 "
                             "answer tokens for claude, 20 s plus that for anthropic, 60 s plus 1 s per 5 for "
                             "command; docs/enrich.md)")
    parser.add_argument("--yes", "-y", action="store_true", help="send without asking for confirmation")


def register_enrich(clusters_subparsers):
    from harness import options

    enrich = clusters_subparsers.add_parser(
        "enrich", help="ask a model, once, what users will type when each memory is the one they need",
        description="Writes <cluster file stem>.utterances.tsv beside the cluster file: for each memory, "
                    "short things a user might type when it is the one they need, written by the engine you "
                    "choose, one request per cluster (its members together), from the hook lines and the "
                    "topic files of the memory directory; and <stem>.nearmisses.tsv: per cluster, requests "
                    "that graze its words but need no memory (--near-misses). After writing, every "
                    "utterance is routed with the veto on: a near-miss that silences a member's own "
                    "utterances is dropped and named; self-routing before and after is printed. Only memories without rows or whose text changed "
                    "are asked; rows of memories that left are dropped; rows you wrote (memory_hash -) stay. "
                    "Shows an estimate first and asks before sending (--yes: don't ask). The file is written "
                    "after every finished cluster: an interrupted run keeps them and the next one resumes. "
                    "Utterances are used for matching only; they never reach the model's context. "
                    "Your memories leave this machine only through the engine you chose, and only now. "
                    "See docs/enrich.md.",
        epilog="exit codes: 0 done (or nothing to ask); 1 a cluster failed (the others are kept), nothing was "
               "confirmed, or a write was refused; 2 bad input (a damaged utterances file is never rewritten); "
               "130 interrupted (finished clusters are kept)")
    options.clusters_and_config(enrich)
    options.memory_dir(enrich, default=options.MEMORY_DIR_GUESSED + " (topic-file bodies; without one, hook "
                                                                   "lines only)")
    add_engine_options(enrich)
    enrich.add_argument("--force", action="store_true", help="ask again for every memory (rows you wrote stay)")
    options.dry_run(enrich, "ask the engine but write nothing; print the diff of the utterances file")
    options.json_output(enrich)
    enrich.set_defaults(handler=cmd_clusters_enrich)


def engine_from(args, config):
    """The engine the options and the config name (CLI options win)."""
    from harness.clusters.engines import create_engine
    from harness.clusters.enrich_protocol import MAX_PER_MEMORY
    from router.errors import InputError

    config = config or {}
    if not 1 <= args.per_memory <= MAX_PER_MEMORY:
        raise InputError(f"--per-memory {args.per_memory} is out of range", fix=f"pass 1 to {MAX_PER_MEMORY}")
    from harness.clusters.enrich_protocol import MAX_NEAR_MISSES

    if not 0 <= getattr(args, "near_misses", 0) <= MAX_NEAR_MISSES:
        raise InputError(f"--near-misses {args.near_misses} is out of range", fix=f"pass 0 to {MAX_NEAR_MISSES}")
    if args.timeout is not None and not args.timeout > 0:
        raise InputError(f"--timeout {args.timeout} is not a positive number of seconds", fix="pass --timeout 300")
    name = args.engine or config.get("enrich_engine") or DEFAULT_ENGINE
    return create_engine(name, model=args.model or config.get("enrich_model") or None,
                         command=args.command or config.get("enrich_command") or None, timeout=args.timeout)


def confirm(question, yes, stream=None):
    """True when the user said yes (or passed --yes). Without a terminal to ask on, a
    ``RefusedError``: nothing is sent unasked."""
    from router.errors import RefusedError

    if yes:
        return True
    stream = stream or sys.stdin
    if not stream.isatty():
        raise RefusedError("not confirmed (no terminal to ask on); nothing was sent", fix="pass --yes")
    print(f"{question} [y/N] ", end="", file=sys.stderr, flush=True)
    reply = stream.readline().strip().lower()
    if reply not in ("y", "yes"):
        raise RefusedError("not confirmed; nothing was sent", fix="answer y, or pass --yes")
    return True


def estimate_line(figure, engine):
    return (f"{figure.requests} request(s) to {engine.describe()}: about {figure.input_tokens:,} input and "
            f"{figure.output_tokens:,} output tokens (estimated at 4 bytes a token)")


def progress_bar(disabled):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from harness.output import console

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    return Progress(*columns, console=console(stderr=True), transient=True, disable=disabled)


def run_with_progress(run, total, quiet, label="enrich", lines=True):
    """Run ``run(on_event)`` under a progress bar (one step per cluster); print each cluster's line
    (unless ``lines`` is false: the caller prints its own)."""
    from harness.clusters.engine_process import ending_engines_on_signals
    from harness.clusters.enrich import summary_line

    # SIGTERM and SIGHUP end the run as Ctrl-C does (killing the engine's process group first):
    # the clusters that finished are already written
    with ending_engines_on_signals(), progress_bar(quiet or not total) as progress:
        task = progress.add_task(label, total=total)

        def on_event(event):
            if event.kind == "start":
                progress.update(task, description=f"{label} {event.cluster_id}")
            elif event.kind == "retry" and not quiet:
                progress.console.print(f"{event.cluster_id}: {event.detail}", markup=False, highlight=False,
                                       soft_wrap=True)
            elif event.kind == "done":
                progress.advance(task)
                if not quiet and lines:
                    progress.console.print(summary_line(event.detail), markup=False, highlight=False, soft_wrap=True,
                                           style="red" if event.detail.error else None)
            elif event.kind == "stopped" and not quiet:
                progress.console.print(event.detail, markup=False, highlight=False, soft_wrap=True, style="red")
        return run(on_event)


def plan_index(cluster_path):
    from router.store.clusterfile import load_cluster_file

    return load_cluster_file(cluster_path)


def check_written_store(cluster_path, writer, settings, before, build, route):
    """After a run that wrote: the veto's self-check (near-misses that silence a member's own
    utterances are dropped from the file and named) and self-routing before and after."""
    from harness.clusters import selfcheck

    index = plan_index(cluster_path)
    utterances, near_misses, near_rows = selfcheck.read_store_files(cluster_path)
    kept, dropped = selfcheck.veto_self_check(index, utterances, near_misses, settings, build, route)
    if dropped and writer.near is not None:
        gone = {(cluster_id, text) for cluster_id, texts in dropped.items() for text in texts}
        writer.near.write([row for row in near_rows if (row.key, row.text) not in gone])
    after = selfcheck.self_routing(index, build(utterances, kept), settings, utterances, route)
    return {"dropped_near_misses": dropped, "before": before, "after": after,
            "lost": selfcheck.lost_families(before, after)}


def self_check_lines(check):
    """``[(line, to stderr)]`` of the self-check: one per cluster that lost near-misses, the
    self-routing before and after, a warning per family that routes less than before."""
    from harness.clusters.enrich_answers import show

    lines = []
    for cluster_id, texts in sorted(check["dropped_near_misses"].items()):
        lines.append((f"{cluster_id}: dropped {len(texts)} near-miss(es) that silenced the cluster's own "
                      "utterances: " + ", ".join(show(t, 50) for t in texts[:3]) + (", ..." if len(texts) > 3 else ""),
                      False))
    parts = []
    for family, now in check["after"].items():
        then = check["before"].get(family, {"hit": 0, "total": 0})
        parts.append(f"{family} {now['hit']}/{now['total']} (before {then['hit']}/{then['total']})")
    lines.append(("self-routing: " + "; ".join(parts), False))
    for family in check["lost"]:
        lines.append((f"memory-router: warning: fewer {family} route to their own memory than before this run "
                      "(memory-router route PROMPT shows why; edit or delete the rows that took them)", True))
    return lines


def cmd_clusters_enrich(args):
    from harness.clusters import enrich
    from harness.context import is_bundled, resolve_cli_clusters
    from harness.output import print_json
    from harness.project import resolve_memory_dir
    from router.configfile import load_config
    from router.errors import RefusedError

    config = load_config(args.config)
    cluster_path = resolve_cli_clusters(args.clusters, config, quiet=args.json)
    if is_bundled(cluster_path) and not args.dry_run:
        raise RefusedError("the cluster file is the bundled example store; utterances are never written inside "
                           "the installed package", fix="pass --clusters with your own cluster file (or --dry-run)")
    memory_dir, _how = resolve_memory_dir(args.memory_dir, config, directory=os.getcwd(), required=False)
    if memory_dir and not os.path.isdir(memory_dir) and not args.memory_dir:
        memory_dir = None            # a guessed location that does not exist: hook lines only
    engine = engine_from(args, config)
    plan, writer = enrich.prepare(cluster_path, memory_dir, force=args.force, dry_run=args.dry_run,
                                  near_misses=args.near_misses)
    requests = enrich.job_requests(plan.jobs, args.per_memory)
    figure = enrich.estimate(requests, engine)
    say = (lambda text: None) if args.json else (lambda text: print(text, flush=True))
    reasons = list(plan.reasons.values())
    say(f"{cluster_path}: {len(plan.store)} memories; utterances in {writer.path}")
    say(f"memory text: hook lines and topic files of {memory_dir}" if memory_dir else
        "memory text: hook lines only (no memory directory; pass --memory-dir for the topic files)")
    if plan.dropped:
        say(f"dropping the rows of {len(plan.dropped)} memories no longer in the store: {', '.join(plan.dropped)}")
    if requests:
        say(f"to ask: {len(reasons)} memories in {len(plan.jobs)} cluster(s) ({reasons.count('new')} new, "
            f"{reasons.count('changed')} changed, {reasons.count('forced')} forced)")
        say(f"estimate: {estimate_line(figure, engine)}")
        engine.check()
        confirm(f"Send {figure.requests} request(s) to {engine.describe()}?", args.yes)
    else:
        say("nothing to ask: every memory's utterances are current (--force asks again)")
    done = []
    if not args.dry_run and (requests or plan.dropped or plan.near_dropped):
        # self-routing as the store is now, to compare with after the run (selfcheck)
        from harness.clusters import selfcheck

        settings = config_mod.settings_of(config)
        index_now = plan_index(cluster_path)
        build, route = selfcheck.store_tables(index_now)
        utterances_then, near_then, _rows = selfcheck.read_store_files(cluster_path)
        before = selfcheck.self_routing(index_now, build(utterances_then, near_then), settings, utterances_then,
                                        route)

    def run(on_event):
        def tracked(event):
            if event.kind == "done":
                done.append(event)
            on_event(event)

        return enrich.run_enrich(plan, engine, args.per_memory, writer, on_event=tracked)

    from harness import setuprecord
    from harness.project import project_dir

    writers = [w for w in (writer, writer.near) if w is not None]
    # What the run writes in the project is recorded with its hash as it is written (even when it
    # fails or is interrupted), so uninstall --all takes it out again if nobody changed it since.
    with setuprecord.recording(project_dir(None), [w.path for w in writers], "clusters enrich") as recorded:
        try:
            result = run_with_progress(run, len(requests), args.json)
        except KeyboardInterrupt as interrupt:
            kept = sum(1 for e in done if not e.detail.error)
            print(f"memory-router: interrupted; {kept} finished cluster(s) are kept in {writer.path}; run the "
                  "command again to ask the rest", file=sys.stderr)
            return getattr(interrupt, "exit_code", 130)
        finally:
            engine.close()
            for archived in (w.archived for w in writers if w.archived):
                recorded["files"].setdefault(os.path.abspath(archived), (False, None, None))
    failures = enrich.failed(result.outcomes)
    report = {
        "cluster_file": os.path.abspath(cluster_path), "utterances_file": os.path.abspath(writer.path),
        "memory_dir": memory_dir, "engine": engine.name, "model": engine.model, "per_memory": args.per_memory,
        "dry_run": bool(args.dry_run), "force": bool(args.force),
        "memories": len(plan.store), "asked": dict(sorted(plan.reasons.items())), "dropped": plan.dropped,
        "estimate": figure._asdict(), "clusters": [o._asdict() for o in result.outcomes],
        "failed": len(failures), "written": result.written, "archived": result.archived, "rows": len(result.rows),
    }
    if args.dry_run:
        report["diff"] = writer.diff()
    elif result.written:
        report["self_check"] = check_written_store(cluster_path, writer, settings, before, build, route)
        # The hook reads a compiled table: build it now, not inside the next prompt.
        from harness.context import compile_hook_table

        report["compiled"] = compile_hook_table(cluster_path, config)
    if args.json:
        print_json(report)
    else:
        if args.dry_run:
            sys.stdout.write(report["diff"] or "(no change to the utterances file)\n")
            say(f"dry run: nothing written ({len(result.rows)} rows would be in {writer.path})")
        elif result.written:
            if result.archived:
                say(f"archived the previous file to {result.archived}")
            for written in writers:   # only the files this run wrote: a failed cluster writes none
                if written.writes:
                    say(f"wrote {written.path} ({written.rows} rows)")
            for line, to_stderr in self_check_lines(report["self_check"]):
                if to_stderr:
                    print(line, file=sys.stderr)
                else:
                    say(line)
            if report.get("compiled", {}).get("entry"):
                say(f"compiled the hook's routing table ({report['compiled']['seconds']:.2f} s)")
        if failures:
            not_asked = sum(1 for o in failures if o.attempts == 0)     # after a stop (StopPolicy)
            print(f"{len(failures) - not_asked} of {len(result.outcomes)} cluster(s) failed"
                  + (f" and {not_asked} were not asked" if not_asked else "")
                  + "; their memories keep the rows they had and are asked again next run", file=sys.stderr)
    return 1 if failures else 0
