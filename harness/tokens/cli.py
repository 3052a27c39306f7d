"""``memory-router tokens report``: what the slim index saves, net of what the hook injects.

(a) always-loaded bytes, lines and tokens, flat vs slim; (b) per-prompt injection sizes over a
suite's prompts; (c) the modelled session (harness.tokens.counts.session_scenarios); (d) the first API
call's input tokens measured in real transcripts; (e) with ``--lab``, request bytes measured from
the real client by ``memory-router lab`` (harness.lab.report.tokens_section). Every token figure
says how it was obtained.
"""

import json
import os

from harness.tokens import sessionmodel
from harness.tokens import counts as tk
from router.errors import InputError, MemoryRouterError

COUNT_TOKENS_URL = "https://api.anthropic.com/v1/messages/count_tokens"
DEFAULT_API_MODEL = "claude-opus-5"
DEFAULT_TURNS = 20


# --------------------------------------------------------------------------- counters


def import_ctok():
    """The ``ctok`` module, or ``None`` when it is not installed (it is optional, never required)."""
    import importlib

    try:
        return importlib.import_module("ctok")
    except ImportError:
        return None


def _distribution_version(name):
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def api_count_message(model, api_key, timeout=30.0):
    """``count(text) -> input_tokens`` of one user message, via Anthropic's count_tokens endpoint."""
    import urllib.error
    import urllib.request

    def count(text):
        body = json.dumps({"model": model, "messages": [{"role": "user", "content": text}]}).encode("utf-8")
        request = urllib.request.Request(COUNT_TOKENS_URL, data=body, method="POST", headers={
            "x-api-key": api_key, "anthropic-version": "2023-06-01", "content-type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                data = json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as err:
            detail = err.read()[:300].decode("utf-8", "replace")
            raise MemoryRouterError(f"count_tokens API answered HTTP {err.code}: {detail}",
                                    fix="check ANTHROPIC_API_KEY and --model, or use --tokenizer estimate") from None
        except (urllib.error.URLError, OSError, ValueError) as err:
            raise MemoryRouterError(f"count_tokens API call failed: {err}",
                                    fix="check the network, or use --tokenizer offline / estimate") from None
        value = data.get("input_tokens") if isinstance(data, dict) else None
        if not isinstance(value, int):
            raise MemoryRouterError(f"count_tokens API answered without input_tokens: {str(data)[:200]}")
        return value

    return count


def make_counter(choice, model=DEFAULT_API_MODEL, ctok_version=None, environ=None):
    """The token counter for ``--tokenizer``: ``auto`` is ``offline`` when ctok is installed, else
    ``estimate``; ``api`` needs ANTHROPIC_API_KEY; ``offline`` needs ctok."""
    environ = os.environ if environ is None else environ
    if choice == "api":
        key = environ.get("ANTHROPIC_API_KEY")
        if not key:
            raise InputError("--tokenizer api needs ANTHROPIC_API_KEY in the environment; nothing was sent",
                             fix="export ANTHROPIC_API_KEY, or use --tokenizer offline or estimate")
        return tk.api_counter(api_count_message(model, key), model)
    if choice in ("offline", "auto"):
        ctok = import_ctok()
        if ctok is not None:
            return tk.ctok_counter(ctok, ctok_version, _distribution_version("ctok"))
        if choice == "offline":
            raise InputError("--tokenizer offline needs the ctok package, which is not installed",
                             fix="pip install ctok (on Python 3.11 add --ignore-requires-python), "
                                 "or use --tokenizer estimate")
    return tk.estimate_counter()


# --------------------------------------------------------------------------- inputs


def resolve_flat_and_slim(args):
    """Fill ``args.flat``/``args.slim`` from ``--memory-dir`` (or the config's ``memory_dir``): the
    newest render archive there is the flat index, its MEMORY.md the slim one. An explicit
    ``--flat``/``--slim`` wins; a relative one is looked for in the current directory, then in
    the memory directory, so the Quick start's line works from anywhere."""
    from harness.slim import index as slim

    directory = getattr(args, "memory_dir", None)
    if directory is None and not (args.flat and args.slim):
        from router.configfile import load_config

        directory = (load_config(args.config) or {}).get("memory_dir")
    if directory is not None:
        directory = os.path.abspath(os.path.expanduser(directory))
        if not os.path.isdir(directory):
            raise InputError("memory directory does not exist" if not os.path.exists(directory)
                             else "is a file, not a memory directory", path=directory,
                             fix="pass the directory that holds MEMORY.md and its MEMORY.archive-<stamp>.md")
        for name in ("flat", "slim"):
            value = getattr(args, name)
            if value and not os.path.isabs(value) and not os.path.exists(value) \
                    and os.path.exists(os.path.join(directory, value)):
                setattr(args, name, os.path.join(directory, value))
        if not args.slim:
            args.slim = os.path.join(directory, "MEMORY.md")
        if not args.flat:
            newest = slim.newest_archive(os.listdir(directory))
            if newest is None:
                raise InputError("no MEMORY.archive-<UTC stamp>.md (the flat index slim render archives) here",
                                 path=directory, fix="run `memory-router slim render` first, or pass --flat FILE")
            args.flat = os.path.join(directory, newest)
    if not args.flat or not args.slim:
        missing = " and ".join(f"--{name}" for name in ("flat", "slim") if not getattr(args, name))
        raise InputError(f"no {missing} given",
                         fix="pass --memory-dir DIR (its newest archive is the flat index, its MEMORY.md the "
                             "slim one), set memory_dir in memory-router.toml, or pass --flat FILE --slim FILE")


def _read_text(path, what):
    from router.errors import read_utf8

    return read_utf8(path, what, f"pass an existing {what}")


def suite_prompts_and_clusters(path):
    """The suite's prompts and the cluster file it names, from one parse."""
    from canaries.suite import load_suite_unchecked

    suite = load_suite_unchecked(path)
    return suite.prompts, suite.cluster_path


def route_suite(prompts, cluster_path, settings):
    from router.clusterfile import load_cluster_file
    from router.provider import build_table
    from router.session import route_fresh

    table = build_table(load_cluster_file(cluster_path))
    return [route_fresh(prompt, table, settings, log_as="tokens") for prompt in prompts]


def first_call_in(path):
    """(d): the first API call of one transcript, streamed line by line with transcripts.reader."""
    from transcripts.reader import TranscriptReader

    reader = TranscriptReader(path)
    call = tk.first_call_usage((entry.line, entry.raw) for entry in reader)
    if call is None:
        raise InputError("no assistant line with usage in this transcript, so there is no API call to measure",
                         path=path, fix="pass a session transcript that has at least one assistant reply")
    call["transcript"] = os.path.abspath(path)
    call["reader"] = reader.summary()
    return call


# --------------------------------------------------------------------------- report


def build_report(args, counter):
    from harness.context import resolve_cli_clusters
    from router.configfile import load_config
    from router.config import settings_of

    resolve_flat_and_slim(args)
    flat_text = _read_text(args.flat, "flat index")
    slim_text = _read_text(args.slim, "slim index")
    report = {
        "tokenizer": {"method": counter.method, "detail": counter.detail},
        "always_loaded": tk.always_loaded(flat_text, slim_text, counter),
        "injections": None,
        "session": None,
        "transcripts": None,
        "notes": [],
    }
    report["always_loaded"]["flat"]["path"] = os.path.abspath(args.flat)
    report["always_loaded"]["slim"]["path"] = os.path.abspath(args.slim)
    if counter.method == "estimate":
        report["notes"].append(f"token figures are estimates ({tk.ESTIMATE_RULE}); install ctok or use "
                               "--tokenizer api for Claude-shaped counts")

    if args.suite:
        config = load_config(args.config)
        settings = settings_of(config)
        prompts, suite_clusters = suite_prompts_and_clusters(args.suite)
        cluster_path = args.clusters or suite_clusters or resolve_cli_clusters(None, config, quiet=True)
        decisions = route_suite(prompts, cluster_path, settings)
        rows = tk.injection_sizes(decisions, counter)
        for row, prompt in zip(rows, prompts):
            row["prompt"] = prompt if len(prompt) <= 80 else prompt[:77] + "..."
        injections = tk.injection_summary(rows, counter.method)
        injections.update(suite=os.path.abspath(args.suite), cluster_file=os.path.abspath(cluster_path),
                          per_prompt=rows)
        report["injections"] = injections
        flat_tokens = report["always_loaded"]["flat"]["tokens"]
        slim_tokens = report["always_loaded"]["slim"]["tokens"]
        report["session"] = {
            "turns": args.turns,
            "calls_per_prompt": args.calls_per_prompt,
            "tokens_method": counter.method,
            "model": "flat: flat index on every API call; slim: slim index on every API call plus each "
                     "injection from its prompt to the end of the session (it stays in the history)",
            "scenarios": sessionmodel.session_scenarios(flat_tokens, slim_tokens, [row["tokens"] for row in rows],
                                              args.turns, args.calls_per_prompt),
        }
    else:
        report["notes"].append("no --suite: without per-prompt injections the net saving cannot be judged; "
                               "the always-loaded drop alone is the shell game spec §6.5 warns about")

    if args.before or args.after:
        before = first_call_in(args.before) if args.before else None
        after = first_call_in(args.after) if args.after else None
        report["transcripts"] = {"before": before, "after": after, "delta": tk.transcript_delta(before, after),
                                 "method": "measured"}
    if getattr(args, "lab", None):
        from harness.lab.report import tokens_section

        report["lab"] = tokens_section(args.lab)
    return report


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
        out.print(f"{injections['prompts']} suite prompts, {injections['injecting']} inject "
                  f"({injections['share_injecting']:.1%}); silent prompts count as 0; tokens include the "
                  "system-reminder wrapper Claude Code adds")
        # The figures describe this store; a suite without clusters: falls back to another one.
        print(f"suite: {injections['suite']}\nrouted with: {injections['cluster_file']}")
    session = report["session"]
    if session:
        rows = []
        short = {"suite_cycled": "cycled", "typical": "typical", "worst": "worst"}
        for name, sc in session["scenarios"].items():
            per_prompt = sc["injection_tokens_per_prompt"]
            rows.append((short.get(name, name), "suite" if isinstance(per_prompt, str) else _fmt(per_prompt),
                         _fmt(sc["flat_total"]), _fmt(sc["slim_total"]), _fmt(sc["net_saving"]),
                         "-" if sc["saving_percent"] is None else f"{sc['saving_percent']}%",
                         _fmt(sc["break_even_prompts"]) if sc["break_even_prompts"] else "never",
                         _fmt(sc["first_heavier_call_prompt"]) if sc["first_heavier_call_prompt"] else "never"))
        out.print(table(f"(c) modelled session: {session['turns']} prompts x {session['calls_per_prompt']} API "
                        f"call(s) each (tokens: {session['tokens_method']})",
                        ["", "inj/prompt", "flat", "slim", "net", "saving", "break-even", "heavier call"], rows))
        out.print("cycled: the suite's injections in a fixed spread order (see docs); typical: the mean on "
                  "every prompt; worst: the largest on every prompt. Slim pays each injection again on every "
                  "later call (it stays in the history). break-even: the session length (prompts) from which "
                  "slim's total exceeds flat's; heavier call: the first prompt whose calls carry more under "
                  "slim than under flat.")
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


def cmd_tokens_report(args):
    from harness.output import print_json

    if args.turns < 1:
        raise InputError("--turns must be at least 1", fix="pass --turns 20")
    if args.calls_per_prompt < 1:
        raise InputError("--calls-per-prompt must be at least 1", fix="pass --calls-per-prompt 1")
    counter = make_counter(args.tokenizer, args.model, args.ctok_version)
    report = build_report(args, counter)
    if args.json:
        print_json(report)
    else:
        print_report(report)
    return 0


def register(subparsers):
    tokens = subparsers.add_parser(
        "tokens", help="token-delta report: slim vs flat, net of injections",
        description="Phase 2's token delta (spec §5): what the flat and the slim MEMORY.md cost on every API "
                    "call, what the router injects per prompt, and a modelled session that keeps each "
                    "injection in the history. 'report' prints it.")
    sub = tokens.add_subparsers(dest="tokens_command", metavar="ACTION", required=True)
    report = sub.add_parser(
        "report", help="always-loaded size, per-prompt injections, the modelled session and measured usage",
        description="(a) bytes, lines and tokens always loaded, flat vs slim (only what Claude Code loads: the "
                    "first 200 lines / 25 KB); (b) with --suite, the injection each suite prompt gets from the "
                    "router: mean, p50, p95, max and the share that inject; (c) with --suite, a session of --turns "
                    "prompts of --calls-per-prompt API calls each: flat = the flat index on every call, slim = the "
                    "slim index on every call plus each injection on every call from its prompt on, for the "
                    "suite's injections cycled (in a fixed order that spreads the suite), the mean on every "
                    "prompt, and the largest on every prompt, with "
                    "the break-even session length; (d) with --before/--after, the first API call's input + "
                    "cache creation + cache read tokens from real transcripts (streamed rows deduplicated by "
                    "message.id, last row wins). Token figures are labelled measured, api, offline or estimate.")
    report.add_argument("--memory-dir", metavar="DIR",
                        help="the memory directory after slim render: its newest MEMORY.archive-<stamp>.md is "
                             "the flat index and its MEMORY.md the slim one (default: memory_dir from the config "
                             "file, when --flat and --slim are not both given)")
    report.add_argument("--flat", metavar="FILE", help="the flat MEMORY.md (e.g. an archive; default: from --memory-dir)")
    report.add_argument("--slim", metavar="FILE", help="the slim MEMORY.md (default: from --memory-dir)")
    report.add_argument("--suite", metavar="SUITE", help="canary suite whose prompts are routed for (b) and (c)")
    report.add_argument("--clusters", metavar="FILE", help="cluster file to route with (default: the suite's)")
    report.add_argument("--config", metavar="FILE", help="config file for routing settings")
    report.add_argument("--turns", metavar="N", type=int, default=DEFAULT_TURNS,
                        help=f"prompts in the modelled session (default {DEFAULT_TURNS})")
    report.add_argument("--calls-per-prompt", metavar="K", type=int, default=1,
                        help="API calls per prompt (tool use makes several; default 1). Scales both totals "
                             "alike, so it never moves the break-even")
    report.add_argument("--before", metavar="T1", help="a session transcript (.jsonl) from before the slim render")
    report.add_argument("--after", metavar="T2", help="a session transcript (.jsonl) from after the slim render")
    report.add_argument("--lab", metavar="RUN_DIR", help="(e) a memory-router lab run directory: request bytes "
                                                        "measured from the real client, per session")
    report.add_argument("--tokenizer", choices=("auto", "estimate", "offline", "api"), default="auto",
                        help="auto (default): offline if ctok is installed, else estimate; estimate: "
                             f"{tk.ESTIMATE_RULE}; offline: the ctok package; api: Anthropic count_tokens "
                             "(needs ANTHROPIC_API_KEY)")
    report.add_argument("--model", metavar="MODEL", default=DEFAULT_API_MODEL,
                        help=f"model for --tokenizer api (default {DEFAULT_API_MODEL})")
    report.add_argument("--ctok-version", metavar="VERSION",
                        help="ctok model family for --tokenizer offline, e.g. 4.7 (default: ctok's own)")
    report.add_argument("--json", action="store_true", help="machine-readable output")
    report.set_defaults(handler=cmd_tokens_report)
