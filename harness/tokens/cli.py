"""``memory-router tokens report``: what the slim index saves, net of what the hook injects.

Every token figure says how it was obtained; the report is built by ``harness.tokens.report``
(see there for its five parts) with a counter from ``harness.tokens.counts``, and printed here.
"""

from harness import options
from harness.tokens import counts as tk
from harness.tokens.report import DEFAULT_TURNS, build_report
from harness.tokens.sessionmodel import AUTOCOMPACT_AT, BASE_CONTEXT, CONTEXT_PER_PROMPT
from router.errors import InputError


def _fmt(value):
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def print_report(report):
    from harness.output import console, table

    out = console()
    method = report["tokenizer"]["method"]
    out.print(f"tokens: [bold]{method}[/bold] ({report['tokenizer']['detail']})")
    store = report.get("store")
    if store:
        # Plain print: a path must stay whole and copyable.
        print(f"cluster file: {store['cluster_file'] or 'none'} ({store['cluster_file_from']})\n"
              f"memory directory: {store['memory_dir'] or 'none'} ({store['memory_dir_from']})")
    loaded = report["always_loaded"]
    rows = []
    for name in ("flat", "slim"):
        figures = loaded[name]
        rows.append((name, _fmt(figures["bytes"]), _fmt(figures["lines"]), _fmt(figures["tokens"]),
                     "yes" if figures["truncated"] else "no"))
    saved = loaded["saved"]
    rows.append(("saved", _fmt(saved["bytes"]), _fmt(saved["lines"]), _fmt(saved["tokens"]),
                 f"cut {saved['cut_percent']}%"))
    out.print(table(f"(a) always loaded on every API call (tokens: {method})",
                    ["index", "bytes", "lines", "tokens", "truncated"], rows))
    # Paths printed plainly: a table would wrap them into something uncopyable.
    print(f"flat: {loaded['flat']['path']}\nslim: {loaded['slim']['path']}")

    injections = report["injections"]
    if injections:
        chars, toks = injections["chars"], injections["tokens"]
        rows = [(label, _fmt(chars[key]), _fmt(toks[key]))
                for label, key in (("mean", "mean"), ("p50", "p50"), ("p95", "p95"), ("max", "max"),
                                   ("mean when injecting", "mean_when_injecting"))]
        out.print(table(f"(b) injection per prompt (tokens: {toks['method']})", ["", "chars", "tokens"], rows))
        out.print(f"{injections['prompts']} prompts, {injections['injecting']} inject "
                  f"({injections['share_injecting']:.1%}); silent prompts count as 0; tokens include the "
                  "system-reminder wrapper Claude Code adds")
        # The figures describe this store; a suite without clusters: falls back to another one.
        print(f"prompts: {PROMPT_SETS[injections['prompt_set']['kind']]}: {', '.join(injections['prompt_set']['from'])}"
              f"\nrouted with: {injections['cluster_file']}")
    session = report["session"]
    if session:
        print_session(out, session)
    transcripts = report["transcripts"]
    if transcripts:
        rows = []
        for name in ("before", "after"):
            call = transcripts[name]
            if call:
                rows.append((name, _fmt(call["input_tokens"]), _fmt(call["cache_creation_input_tokens"]),
                             _fmt(call["cache_read_input_tokens"]), _fmt(call["total_input_tokens"]),
                             _fmt(call["output_tokens"]), _fmt(call["api_calls"])))
        delta = transcripts["delta"]
        if delta:
            rows.append(("delta", _fmt(delta["input_tokens"]), _fmt(delta["cache_creation_input_tokens"]),
                         _fmt(delta["cache_read_input_tokens"]), _fmt(delta["total_input_tokens"]), "", ""))
        out.print(table("(d) first API call of each session (measured: transcript usage)",
                        ["", "input", "cache write", "cache read", "total in", "output", "calls"], rows))
        for name in ("before", "after"):
            call = transcripts[name]
            if call:
                print(f"{name}: {call['transcript']} (first call {call['message_id']} at line {call['line']}; "
                      f"{call['duplicate_rows_dropped']} repeated streamed rows folded)")
    if report.get("lab"):
        from harness.lab.report import print_tokens_section

        print_tokens_section(report["lab"])
    for note in report["notes"]:
        out.print(f"note: {note}")


SCENARIOS = (("routed", "routed"), ("worst", "worst"))
# Where (b)'s prompts came from, as the report says it.
PROMPT_SETS = {"suite": "the suite's", "history": "typed in your sessions (--history)",
               "utterances": "the store's own utterances (no --suite)"}


def print_session(out, session):
    """(c): one column per scenario (a row per figure, so it fits 80 columns), then the chart."""
    from harness.output import table

    scenarios = session["scenarios"]

    def row(label, figure):
        return (label, *[figure(scenarios[name]) for name, _short in SCENARIOS])

    rows = [
        row("flat total", lambda sc: _fmt(sc["flat_total"])),
        row("slim total", lambda sc: _fmt(sc["slim_total"])),
        row("share of flat", lambda sc: "-" if sc["share_of_flat"] is None else f"{sc['share_of_flat']:.3f}"),
        row("net saving", lambda sc: _fmt(sc["net_saving"])),
        row("saving", lambda sc: "-" if sc["saving_percent"] is None else f"{sc['saving_percent']}%"),
        row("compactions", lambda sc: _fmt(sc["compactions"])),
        row("break-even (prompts)", lambda sc: _fmt(sc["break_even_prompts"]) if sc["break_even_prompts"]
            else f"never in {sc['horizon']:,}"),
        row("first heavier call", lambda sc: _fmt(sc["first_heavier_call_prompt"])
            if sc["first_heavier_call_prompt"] else f"never in {sc['horizon']:,}"),
    ]
    calls = session["calls_per_prompt"]
    calls = f"{calls} API call(s) each" if isinstance(calls, int) else "API calls " + calls
    out.print(table(f"(c) modelled session: {session['turns']} prompts, {calls} (tokens: {session['tokens_method']})", ["", *[short for _name, short in SCENARIOS]], rows,
                    no_wrap=tuple(short for _name, short in SCENARIOS)))
    out.print(f"modelled (estimates, not a measured session): {session['modelled']}. routed: the hook's own route and session stage (a line the "
              "session holds is never sent twice; after a compaction the SessionStart hook sends again what the "
              "last prompt relied on); worst: every prompt sends the longest lines not yet held that one "
              "injection can carry. break-even: the session length from which slim's total exceeds flat's; "
              "heavier call: the first prompt whose calls carry more under slim than under flat.")
    if session.get("curve"):
        print_chart(out, session["curve"], session["tokens_method"])


CHART_SERIES = (("flat", "flat", "cyan"), ("slim_routed", "slim (routed)", "magenta"),
                ("slim_worst", "slim (worst)", "red"))


def print_chart(out, curve, method, height=16):
    """The session curve: input tokens sent so far after each prompt, drawn in text."""
    from rich.text import Text

    from harness.tokens import chart

    series = [curve["series"][key] for key, _label, _style in CHART_SERIES]
    top_label = chart.short_number(max(max(values) for values in series))
    margin = max(len(top_label), 2) + 2
    width = max(20, min(out.width, 100) - margin - 1)
    cells, top = chart.grid(series, width, height)
    out.print(f"input tokens sent so far, after each prompt (tokens: {method})", markup=False)
    for index, row in enumerate(cells):
        label = top_label if index == 0 else chart.short_number(top / 2) if index == height // 2 else ""
        line = Text(f"{label:>{margin - 2}} {'┤' if label else '│'}")
        for cell in row:
            if cell is None:
                line.append(" ")
            elif cell == -1:
                line.append(chart.OVERLAP, style="bold")
            else:
                line.append(chart.MARKERS[cell], style=CHART_SERIES[cell][2])
        out.print(line, no_wrap=True, crop=True)
    out.print(f"{'0':>{margin - 2}} └" + "─" * width, markup=False)
    prompts = curve["prompts"]
    marks = [(1, "1")]
    if curve["turns"] < prompts:
        marks.append((curve["turns"], f"{curve['turns']} (--turns)"))
    for key, short in (("slim_worst", "worst"), ("slim_routed", "routed")):
        at = curve["break_even"].get(key)
        if at and at <= prompts:
            marks.append((at, f"{at} {short} break-even"))
    marks.append((prompts, str(prompts)))
    marks.sort()
    out.print(" " * margin + chart.axis_labels(marks, width, prompts), markup=False)
    legend = Text(" " * margin + "prompts;  ")
    for index, (_key, label, style) in enumerate(CHART_SERIES):
        legend.append(f"{chart.MARKERS[index]} ", style=style)
        legend.append(f"{label}  ")
    legend.append(f"{chart.OVERLAP} both")
    out.print(legend)


def cmd_tokens_report(args):
    from harness.output import print_json

    if args.turns < 1:
        raise InputError("--turns must be at least 1", fix="pass --turns 20")
    if args.calls_per_prompt < 1:
        raise InputError("--calls-per-prompt must be at least 1", fix="pass --calls-per-prompt 1")
    if args.plot:
        from harness.tokens.plot import check_plot_path

        check_plot_path(args.plot)
    counter = tk.make_counter(args.tokenizer, args.model, args.ctok_version)
    if args.context_per_prompt < 0 or args.base_context < 0:
        raise InputError("--context-per-prompt and --base-context cannot be negative",
                         fix=f"pass --context-per-prompt {CONTEXT_PER_PROMPT} (0: no compaction)")
    compaction = {"threshold": AUTOCOMPACT_AT, "base": args.base_context, "per_prompt": args.context_per_prompt}
    report = build_report(counter, args.flat, args.slim, args.memory_dir, args.suite, args.clusters, args.config,
                          args.turns, args.calls_per_prompt, args.before, args.after, args.lab, args.history,
                          compaction)
    if args.plot and report["session"] is None:
        raise InputError("--plot draws the modelled session, which needs a prompt set",
                         fix="add --suite SUITE or --history, or give the store an utterances file (clusters enrich)")
    if args.plot:
        from harness.tokens.plot import plot_session

        report["plot"] = plot_session(report["session"]["curve"], args.plot, report["session"]["tokens_method"])
    if args.json:
        print_json(report)
    else:
        print_report(report)
        if args.plot:
            print(f"plot: {report['plot']}")
    return 0


def register(subparsers):
    tokens = subparsers.add_parser(
        "tokens", help="token-delta report: slim vs flat, net of injections",
        description="Phase 2's token delta: what the flat and the slim MEMORY.md cost on every API "
                    "call, what the router injects per prompt, and a modelled session that keeps each "
                    "injection in the history. 'report' prints it.")
    sub = tokens.add_subparsers(dest="tokens_command", metavar="ACTION", required=True)
    report = sub.add_parser(
        "report", help="always-loaded size, per-prompt injections, the modelled session and measured usage",
        description="(a) bytes, lines and tokens always loaded, flat vs slim (only what Claude Code "
                    "loads: the first 200 lines / 25 KB). (b) the injection each prompt of a prompt set gets "
                    "from the router in a new session (--suite's prompts; --history: the prompts typed in your "
                    "sessions; else the store's own utterances). (c) a modelled session over that set, run "
                    "through the hook's own route and session stage: a line is paid from the prompt that "
                    "sends it until the next compaction, never twice; compactions where Claude Code makes "
                    "them (--history: where your sessions had them); and the worst this router can do on "
                    "this store; with the break-even session length. (d) with --before/--after, the first "
                    "API call's tokens from real transcripts. Token figures are labelled measured, api, "
                    "offline or estimate.")
    report.add_argument("--memory-dir", metavar="DIR",
                        help="the memory directory after slim render: its newest MEMORY.archive-<stamp>.md is "
                             "the flat index and its MEMORY.md the slim one (default: memory_dir from the config "
                             "file, when --flat and --slim are not both given)")
    report.add_argument("--flat", metavar="FILE", help="the flat MEMORY.md (e.g. an archive; default: from --memory-dir)")
    report.add_argument("--slim", metavar="FILE", help="the slim MEMORY.md (default: from --memory-dir)")
    report.add_argument("--suite", metavar="SUITE", help="canary suite whose prompts are routed for (b) and (c) "
                                                         "(default: the store's own utterances, "
                                                         "<cluster stem>.utterances.tsv beside the cluster file)")
    report.add_argument("--history", nargs="*", metavar="DIR",
                        help="route the prompts you typed instead: the session transcripts under DIR (none given: "
                             "this project's, ~/.claude/projects/<project key>/), read as memory-router replay reads "
                             "them")
    report.add_argument("--clusters", metavar="FILE", help="cluster file to route with (default: the suite's)")
    report.add_argument("--config", metavar="FILE", help="config file for routing settings")
    report.add_argument("--turns", metavar="N", type=int, default=DEFAULT_TURNS,
                        help=f"prompts in the modelled session (default {DEFAULT_TURNS})")
    report.add_argument("--calls-per-prompt", metavar="K", type=int, default=1,
                        help="API calls per prompt (tool use makes several; default 1). Scales both totals "
                             "alike, so it never moves the break-even")
    report.add_argument("--context-per-prompt", metavar="TOKENS", type=int, default=CONTEXT_PER_PROMPT,
                        help="(c) how many tokens each prompt adds to the context (replies, tool output), for "
                             f"when Claude Code compacts: at {AUTOCOMPACT_AT:,} tokens (default "
                             f"{CONTEXT_PER_PROMPT:,}; 0: never; --history uses the sessions' own compactions)")
    report.add_argument("--base-context", metavar="TOKENS", type=int, default=BASE_CONTEXT,
                        help=f"(c) the context a session starts with besides MEMORY.md (default {BASE_CONTEXT:,})")
    report.add_argument("--before", metavar="T1", help="a session transcript (.jsonl) from before the slim render")
    report.add_argument("--after", metavar="T2", help="a session transcript (.jsonl) from after the slim render")
    report.add_argument("--lab", metavar="RUN_DIR", help="(e) a memory-router lab run directory: request bytes "
                                                        "measured from the real client, per session")
    report.add_argument("--tokenizer", choices=("auto", "estimate", "offline", "api"), default="auto",
                        help="auto (default): offline if ctok is installed, else estimate; estimate: "
                             f"{tk.ESTIMATE_RULE}; offline: the ctok package; api: Anthropic count_tokens "
                             "(needs ANTHROPIC_API_KEY)")
    report.add_argument("--model", metavar="MODEL", default=tk.DEFAULT_API_MODEL,
                        help=f"model for --tokenizer api (default {tk.DEFAULT_API_MODEL})")
    report.add_argument("--ctok-version", metavar="VERSION",
                        help="ctok model family for --tokenizer offline, e.g. 4.7 (default: ctok's own)")
    report.add_argument("--plot", metavar="FILE", help="also draw (c)'s session curve as FILE (.png or .svg; needs "
                                                     "matplotlib: memory-router's lab extra)")
    options.json_output(report)
    report.set_defaults(handler=cmd_tokens_report)
