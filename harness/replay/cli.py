"""``memory-router replay [TRANSCRIPT|DIR ...]``: what the router would have done on the prompts
you really typed (``harness.replay.report`` builds the report; this module reads the options and
prints it)."""

import os

from harness import options, printedcommands

# Rows of each list the rich output shows; --json lists every one.
SHOWN_ROWS = 15
PROMPT_WIDTH = 60


def _pct(value):
    return "-" if value is None else f"{value:.1%}"


def _short(text, width=PROMPT_WIDTH):
    return text if len(text) <= width else text[:width - 1] + "\u2026"


def _bytes(value):
    return f"{value:,}"


def _say(out, text, indent=0, hang=4):
    """Print ``text`` wrapped by words to the console's width, continuation lines indented under it:
    wrapped here, not by rich, so a wrapped line keeps its indent (a word longer than the width
    stays whole on a line of its own)."""
    import textwrap

    lines = textwrap.wrap(text, width=max(out.width, 40), initial_indent=" " * indent,
                          subsequent_indent=" " * (indent + hang), break_long_words=False, break_on_hyphens=False)
    for line in lines or [""]:
        out.print(line, markup=False, soft_wrap=True, highlight=False)


def build(args):
    """``(report dict, suite writer or None, snapshot or None)`` for the parsed options."""
    from harness.context import context_for
    from harness.project import project_dir, resolve_memory_dir
    from harness.replay import cost
    from transcripts import replay as history
    from harness.replay.report import run_replay

    since = history.parse_since(args.since)
    directory = project_dir(args.project)
    skipped = []  # a FIFO or device among the transcripts: named in the report, never opened
    files, read_from = history.transcript_files(args.paths, directory, skipped=skipped)
    writer = snapshot = None
    # --project DIR replays DIR's history on DIR's store, wherever this runs; the bundled example,
    # when DIR has none, is said on stderr even under --json (the report names the file too)
    ctx = context_for(args.clusters, args.config, dirs=[directory] if args.project else None, command="replay")
    if args.suite:
        from harness.fileops import Snapshot
        from harness.replay.suite import SuiteWriter, check_target

        check_target(args.suite)
        # Read before the run: a file changed while the history is replayed is not overwritten.
        snapshot = Snapshot(args.suite, "suite file")
        writer = SuiteWriter(args.suite, ctx.cluster_path, ctx.index, args.quiet_as_silent)
    memory_dir, _how = resolve_memory_dir(args.memory_dir, ctx.config, directory)
    sizes, problem = cost.index_sizes(memory_dir, ctx.cluster_path, args.config)
    tally = run_replay(files, ctx.table, ctx.settings, ctx.cluster_path, session=args.session, since=since,
                       limit=args.limit, sizes=sizes, sizes_problem=problem, sink=writer,
                       slugs={member.slug for member in ctx.index.members})
    tally.skipped_files[:0] = skipped
    report = tally.to_json([os.path.abspath(p) for p in read_from], "memory-router replay")
    return report, writer, snapshot


def cmd_replay(args):
    from harness.output import print_json

    report, writer, snapshot = build(args)
    if writer is not None and not writer.cases:
        from router.errors import RefusedError

        # A suite of no case is one canary run refuses: write nothing, and say what would make one
        hint = "" if args.quiet_as_silent else (
            "; --quiet-as-silent writes the prompts with no evidence as silent cases (the router should "
            "send nothing for them)")
        raise RefusedError(f"no prompt had memory evidence (the agent read, fetched or named no memory of "
                           f"the store after any of the {report['prompts']} prompts), so there is no case to "
                           f"write; {writer.path} was not written",
                           fix="replay more sessions (--since, more transcript folders)" + hint)
    if writer is not None:
        from harness.replay.suite import write_suite

        archived = write_suite(snapshot, writer.render())
        report["suite"] = {"path": writer.path, "cases": len(writer.cases), "repeats_dropped": writer.repeats,
                           "archived": archived, "quiet_as_silent": writer.quiet_as_silent}
    if args.json:
        print_json(report)
    else:
        print_report(report)
    return 0


def print_report(report):
    from harness.output import console, table, terminal_text
    from harness.replay.report import short_session

    # Prompts and file names come from the user's files: no escape sequence, control or bidi
    # character of theirs reaches the terminal (--json keeps the exact text)
    report = terminal_text(report)
    out = console()
    span = report["span"]
    when = f" from {span['first'][:10]} to {span['last'][:10]}" if span["first"] else ""
    _say(out, f"replayed {report['sessions']} sessions, {report['prompts']} typed prompts{when}")
    for path in report["read"]:
        print(f"transcripts: {path}")
    print(f"cluster file: {report['cluster_file']}")
    routed = report["routed"]
    line = f"routed: {routed['prompts']} of {report['prompts']} prompts ({_pct(routed['share'])})"
    if routed["prompts"]:
        line += (f"; {routed['lines_per_routed_prompt']} lines, {routed['bytes_per_routed_prompt']:,.0f} bytes sent "
                 "per routed prompt")
    _say(out, line)
    evidence = report["evidence"]
    _say(out, f"evidence recall: {_pct(evidence['recall'])} ({evidence['met']} of {evidence['needs']} memories the "
              f"agent needed after {evidence['prompts']} prompts: {evidence['sent']} sent at the prompt, "
              f"{evidence['held']} held from an earlier one)")
    quiet = report["quiet"]
    _say(out, f"quiet prompts routed: {quiet['routed']} of {quiet['prompts']} prompts with no memory evidence were "
              "sent something")
    total = report["cost"]["total"]
    if total:
        _say(out, f"cost: {_bytes(total['flat_bytes'])} bytes of memory flat against {_bytes(total['slim_bytes'])} "
                  f"slim + router ({total['ratio']:.2f} of flat) over {total['calls']:,} API calls and "
                  f"{total['compactions']} compaction(s)")
    else:
        _say(out, f"cost: not computed: {report['cost']['problem']}")

    misses = evidence["misses"]
    if misses:
        # Blocks, not a table: a file:line, a prompt, two slug lists and a reason do not fit five
        # columns of 80 without cutting slugs; here each is on its own line and wraps by words.
        out.print("\nMisses, worst first (the memory the agent then needed, neither sent nor held):", markup=False)
        for miss in misses[:SHOWN_ROWS]:
            _say(out, f"{miss['at']}  needed {miss['memory']} ({miss['how']}; missed {miss['misses_of_memory']}x in "
                      "all)", 2)
            _say(out, f"\"{_short(miss['prompt'])}\"", 4)
            _say(out, f"sent instead: {', '.join(miss['sent_instead']) or 'nothing'}; why: {miss['why']}", 4)
        _more(out, len(misses))
    if quiet["listed"]:
        out.print("\nQuiet prompts routed (no memory evidence, something sent):", markup=False)
        for item in quiet["listed"][:SHOWN_ROWS]:
            _say(out, f"{item['at']}  {item['bytes']:,} bytes: {', '.join(item['sent'])}", 2)
            _say(out, f"\"{_short(item['prompt'])}\"", 4)
        _more(out, len(quiet["listed"]))
        _say(out, f"({quiet['note']})", 0, 1)
    costs = report["cost"]["per_session"]
    if costs:
        rows = [(short_session(c["path"]), f"{c['calls']:,}", str(c["compactions"]),
                 _bytes(c["flat_bytes"]), _bytes(c["slim_bytes"]),
                 f"{c['slim_bytes'] / c['flat_bytes']:.2f}" if c["flat_bytes"] else "-")
                for c in costs[-SHOWN_ROWS:]]
        out.print(table("Memory bytes per session: flat against slim + router (newest last)",
                        ["session", "calls", "compactions", "flat", "slim + router", "ratio"], rows,
                        no_wrap=("session", "calls", "flat", "slim + router", "ratio")))
        _more(out, len(costs))
    transcripts = report["transcripts"]
    damaged = transcripts["damaged"]
    if damaged["bad_lines"] or damaged["truncated_last_lines"] or damaged["invalid_utf8_lines"]:
        _say(out, f"damaged lines skipped: {damaged['bad_lines']} not JSON, {damaged['truncated_last_lines']} cut-off "
                  f"last lines; {damaged['invalid_utf8_lines']} not UTF-8 (read with replacement characters)",
                  )
        for item in damaged["listed"][:SHOWN_ROWS]:
            print(f"  {item['at']}: {item['message']}")
    for item in transcripts["skipped_files"]:
        print(f"not a transcript, skipped: {item['path']}: {item['why']}")
    if transcripts["no_compaction_recorded"]:
        _say(out, f"{len(transcripts['no_compaction_recorded'])} sessions were written by a Claude Code that records "
                  "no compaction (1.0.x): their cost assumes none")
    if report.get("suite"):
        suite = report["suite"]
        print(f"wrote {suite['path']} ({suite['cases']} cases)"
              + (f"; the file it replaced is kept as {suite['archived']}" if suite["archived"] else ""))
        print("check your store on it: " + printedcommands.memory_router("canary", "run", suite["path"]))


def _more(out, count):
    if count > SHOWN_ROWS:
        _say(out, f"... and {count - SHOWN_ROWS} more (--json lists them all)", 2)


def register(subparsers):
    import argparse

    replay = subparsers.add_parser(
        "replay", help="what the router would do on the prompts you really typed: recall, quiet routes, cost",
        description="Reads your Claude Code session transcripts (default: this project's, under "
                    "~/.claude/projects/<project key>/) and routes every typed prompt through the current store, "
                    "config and provider as the hook would, keeping each session's record in memory (a line sent "
                    "once is held until a compaction). --project DIR replays DIR's history on DIR's store.\n\n"
                    "Reports the prompts routed; evidence recall: of the memories the agent read, fetched "
                    "(get_memory) or named after a prompt, the share the router sends at that prompt or holds from "
                    "an earlier one, with the misses worst first; the quiet prompts (no memory evidence) it sends "
                    "something; and the memory bytes of each session flat against slim + router, with the "
                    "session's real API calls and compactions.\n\n"
                    "Writes nothing, except the suite --suite names (and not that when no prompt had memory "
                    "evidence: --quiet-as-silent makes cases of the quiet prompts).",
        epilog="exit codes: 0 replayed (whatever the figures); 1 refused (a --suite path inside an installed "
               "package, changed during the run, or no case to write); 2 no transcripts, or a transcript, "
               "cluster or config file that cannot be read",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    replay.add_argument("paths", nargs="*", metavar="TRANSCRIPT|DIR",
                        help="session transcript(s) or directories (default: this project's transcript directory)")
    options.clusters_and_config(replay)
    options.memory_dir(replay, options.MEMORY_DIR_GUESSED, "memory directory whose MEMORY.md is the flat index")
    options.project(replay)
    replay.add_argument("--since", metavar="DATE", help="only sessions whose first prompt is on or after DATE "
                                                        "(YYYY-MM-DD, UTC)")
    replay.add_argument("--session", metavar="ID", help="only the session whose id (or file name) starts with ID")
    replay.add_argument("--limit", metavar="N", type=int, help="only the N newest sessions (by file time)")
    replay.add_argument("--suite", metavar="FILE",
                        help="also write a canary suite of the evidenced prompts to FILE (each case injects the "
                             "memories the agent needed and routes to their clusters); check it with "
                             "memory-router canary run FILE")
    replay.add_argument("--quiet-as-silent", action="store_true",
                        help="with --suite: prompts with no memory evidence become silent: true cases")
    options.json_output(replay)
    replay.set_defaults(handler=cmd_replay)
