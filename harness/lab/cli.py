"""``memory-router lab``: run the real Claude Code offline and measure what it sends.

``lab run`` runs a session (per memory mode) against the loopback stand-in and prints the report;
``lab report`` reads a run directory again; ``lab serve`` runs the stand-in alone; ``lab client``
finds or installs the client. The logic lives in ``harness.lab``; this module is argparse and
output only.
"""

import os
import sys

from harness import options
from router.errors import InputError

DEFAULT_MEMORY = "slim"
DEFAULT_LIMIT = 0


def bundled_suite():
    import canaries

    return os.path.join(os.path.dirname(canaries.__file__), "example.yaml")


def read_prompts_file(path):
    """One prompt per line; blank lines and lines starting with ``#`` are skipped."""
    from router.errors import read_utf8

    text = read_utf8(path, "prompts file", "pass a text file with one prompt per line")
    prompts = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if not prompts:
        raise InputError("the prompts file holds no prompt", path=path, fix="write one prompt per line")
    return prompts


def resolve_prompts(prompt=None, prompts_file=None, suite=None, limit=0):
    """The session's prompts: ``--prompt``s, else a prompts file, else a suite's prompts (the
    bundled example suite by default); the first ``limit`` of them when ``limit``."""
    if prompt:
        prompts = list(prompt)
    elif prompts_file:
        prompts = read_prompts_file(prompts_file)
    else:
        from canaries.suite import load_suite_unchecked

        prompts = list(load_suite_unchecked(suite or bundled_suite()).prompts)
    if limit:
        prompts = prompts[:limit]
    return prompts


def parse_memory_modes(value):
    from harness.lab.rundir import MEMORY_MODES

    modes = [m.strip() for m in value.split(",") if m.strip()]
    bad = [m for m in modes if m not in MEMORY_MODES]
    if not modes or bad:
        raise InputError(f"--memory {value!r}: unknown mode(s) {bad or 'none given'}",
                         fix=f"use a comma-separated list of {', '.join(MEMORY_MODES)}")
    if len(set(modes)) != len(modes):
        raise InputError(f"--memory {value!r} names a mode twice", fix="name each mode once")
    return modes


def hook_for(mode, choice):
    if choice == "on":
        return True
    if choice == "off":
        return False
    return mode == "slim"


def _warn(message):
    print(f"memory-router: warning: {message}", file=sys.stderr)


def _client_and_new_run_dir(claude_option, run_dir_option):
    """``(claude, how it was found, absolute run dir)`` for a run: the client (warned about when
    its version is not the tested one) and a run directory that is new or empty (a run never
    overwrites another)."""
    from harness.lab import client as lab_client

    claude, how = lab_client.find_claude(claude_option)
    warning = lab_client.version_warning(lab_client.client_version(claude))
    if warning:
        _warn(warning)
    run_dir = os.path.abspath(run_dir_option)
    if os.path.exists(run_dir) and os.listdir(run_dir):
        raise InputError("the run directory is not empty", path=run_dir,
                         fix="pass a new directory; a run never overwrites another")
    return claude, how, run_dir


def store_files_line(clusters, copy):
    """What the run's hook routes on, in one line: the cluster file and the files copied beside it."""
    from harness.lab.rundir import STORE_FILES, store_files
    from router.config import bundled_cluster_file

    clusters = clusters or bundled_cluster_file()
    if not copy:
        return f"routing on {clusters} alone (--no-store-files)"
    found = store_files(clusters)
    if not found:
        kinds = ", ".join(what for what, _name in STORE_FILES)
        return f"routing on {clusters} alone (no {kinds} file beside it)"
    return f"routing on {clusters} with its " + ", ".join(f"{what} ({path})" for what, path in found) + \
        ", copied beside the run's cluster file (--no-store-files: the cluster file alone)"


def _say_store_files(args):
    # on stderr, so --json output stays one JSON document; run.json records the same (store_files)
    print(store_files_line(args.clusters, not args.no_store_files), file=sys.stderr, flush=True)


def cmd_lab_run(args):
    if args.compare:
        return cmd_compare_native(args)
    from harness.lab.runner import run_session
    from harness.lab.script import Script

    modes = parse_memory_modes(args.memory)
    prompts = resolve_prompts(args.prompt, args.prompts, args.suite, args.limit)
    script = Script.load(args.script) if args.script else Script.default()
    claude, how, run_dir = _client_and_new_run_dir(args.claude, args.run_dir)
    _say_store_files(args)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, transient=args.json, disable=args.json) as progress:
        for mode in modes:
            task = progress.add_task(f"{mode:>4}", total=len(prompts))
            target = run_dir if len(modes) == 1 else os.path.join(run_dir, mode)

            def on_prompt(index, total, prompt, task=task):
                progress.update(task, completed=index)

            result = run_session(target, prompts, mode, script, claude, clusters=args.clusters,
                                 flat_index=args.flat_index, config=args.config, hook=hook_for(mode, args.hook),
                                 on_prompt=on_prompt, timeout=args.timeout, session=args.session,
                                 store_files=not args.no_store_files)
            progress.update(task, completed=len(prompts))
            if not result.ok:
                failed = [o.index + 1 for o in result.outcomes if o.exit_code != 0]
                _warn(f"{mode}: the client failed on prompt(s) {failed}; see {result.run_dir}/run.json")
    return _report(run_dir, args.json, args.plot, args.no_calls)


def cmd_compare_native(args):
    """``lab run RUN_DIR --compare native``: flat, the built-in selector (an oracle stand-in) and
    slim + router on one store and the same labelled prompts (``harness.lab.native``)."""
    from harness.lab import native
    from harness.output import print_json

    if args.prompt or args.prompts:
        raise InputError("--compare native needs prompts labelled with their fact", fix="pass --suite FILE "
                         "(cases with one injects slug) or leave it out for the bundled example suite")
    pairs = native.labelled_prompts(args.suite or bundled_suite(), args.limit)
    if not pairs:
        raise InputError("the suite has no case naming exactly one fact (injects: [slug])", path=args.suite,
                         fix="pass a suite whose cases name their fact")
    claude, _how, run_dir = _client_and_new_run_dir(args.claude, args.run_dir)
    _say_store_files(args)
    os.makedirs(run_dir, exist_ok=True)
    progress = None if args.json else (lambda name, i, total, _p: print(f"{name:>6}: prompt {i + 1}/{total}",
                                                                        file=sys.stderr, flush=True))
    results = native.run_compare(run_dir, pairs, claude, clusters=args.clusters, timeout=args.timeout,
                                 on_prompt=progress, store_files=not args.no_store_files)
    failed = {name: r["failed_prompts"] for name, r in results.items() if not r["ok"]}
    for name, prompts in failed.items():
        _warn(f"{name}: the client failed on prompt(s) {[i + 1 for i in prompts]}; see {run_dir}/{name}/run.json")
    if args.json:
        print_json({"run_dir": run_dir, "prompts": len(pairs),
                    "results": {name: r["summary"] for name, r in results.items()}})
    else:
        print(native.table(results))
        print(f"\n{len(pairs)} prompts; request logs and compare.json in {run_dir}")
    return 1 if failed else 0


def _report(run_dir, as_json, plot, no_calls):
    from harness.lab.report import build_report, print_report, report_exit_code, series_for_plot
    from harness.output import print_json

    report = build_report(run_dir)
    if plot:
        from harness.lab.plot import plot_memory_per_call

        report["plot"] = plot_memory_per_call(series_for_plot(report), plot)
    if as_json:
        print_json(report)
    else:
        print_report(report, show_calls=not no_calls)
        if plot:
            print(f"plot: {report['plot']}")
    return report_exit_code(report)


def cmd_lab_report(args):
    return _report(args.run_dir, args.json, args.plot, args.no_calls)


def cmd_lab_serve(args):
    from harness.lab.script import Script
    from harness.lab.server import LabServer, serve_until_signalled

    script = Script.load(args.script) if args.script else Script.default()

    def announce(server):
        print(f"listening on {server.url}; logging requests to {os.path.abspath(args.log)}", flush=True)
        print(f"export ANTHROPIC_BASE_URL={server.url} ANTHROPIC_API_KEY=lab "
              "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1", flush=True)

    serve_until_signalled(LabServer(script, args.log), announce)
    return 0


def cmd_lab_client(args):
    from harness.lab import client as lab_client
    from harness.output import print_json

    if args.action == "install":
        path = lab_client.install_client(args.version)
        how = "lab cache"
    else:
        path, how = lab_client.find_claude(args.claude, version=args.version)
    version = lab_client.client_version(path)
    info = {"path": path, "found_by": how, "version": version, "tested_version": lab_client.TESTED_VERSION,
            "warning": lab_client.version_warning(version)}
    if args.json:
        print_json(info)
    else:
        print(f"{path} ({how}): Claude Code {version or 'unknown version'}")
        if info["warning"]:
            _warn(info["warning"])
    return 0


def register(subparsers):
    from harness.lab.client import TESTED_VERSION, cache_root

    lab = subparsers.add_parser("lab", help="run the real Claude Code offline and measure what it sends",
                                description="Runs the real Claude Code CLI against a loopback stand-in for the "
                                            "Messages API (127.0.0.1 only, never the network) and measures the "
                                            f"requests it sends. Tested with Claude Code {TESTED_VERSION}.")
    sub = lab.add_subparsers(dest="lab_command", metavar="ACTION", required=True)

    def client_option(parser):
        import os

        root, home = cache_root(), os.path.expanduser("~")
        shown = "~" + root[len(home):] if home != os.sep and root.startswith(home + os.sep) else root
        parser.add_argument("--claude", metavar="PATH",
                            help="the claude executable (default: $MEMORY_ROUTER_CLAUDE, then the pinned "
                                 f"{TESTED_VERSION} in the lab cache, {shown}, then claude on PATH)")

    def report_options(parser):
        options.json_output(parser)
        parser.add_argument("--plot", metavar="FILE", help="also write memory bytes per call as FILE (.png or "
                                                           ".svg; needs the optional extra: pip install '.[lab]')")
        parser.add_argument("--no-calls", action="store_true", help="leave out the per-call table")

    run = sub.add_parser(
        "run", help="run a session per memory mode and report what the requests carried",
        description="Makes RUN_DIR (new or empty) with, per memory mode, a private HOME and project directory, "
                    "a cluster file, this project's hook (memory-router install) and a MEMORY.md (flat: the flat "
                    "index; slim: rendered by memory-router slim render; none: no MEMORY.md); runs claude -p on "
                    "the first prompt and claude -p --resume on each later one; keeps the transcripts and every "
                    "request body (requests.jsonl); then prints the report (see lab report). Exit 1 when the "
                    "transcript audit and the requests disagree.")
    run.add_argument("run_dir", metavar="RUN_DIR", help="directory for the run's files: transcripts, request log, run.json")
    source = run.add_mutually_exclusive_group()
    source.add_argument("--suite", metavar="FILE", help="take the prompts of a canary suite, in order "
                                                        "(default: the bundled example suite)")
    source.add_argument("--prompts", metavar="FILE", help="a text file, one prompt per line (# comments)")
    source.add_argument("--prompt", metavar="TEXT", action="append", help="a prompt (repeat for several)")
    run.add_argument("--limit", metavar="N", type=int, default=DEFAULT_LIMIT,
                     help=f"only the first N prompts (default: {DEFAULT_LIMIT} = all)")
    run.add_argument("--memory", metavar="MODES", default=DEFAULT_MEMORY,
                     help=f"comma-separated: flat, slim, none; several run one session each in RUN_DIR/<mode> "
                          f"(default: {DEFAULT_MEMORY})")
    run.add_argument("--hook", choices=("auto", "on", "off"), default="auto",
                     help="install the router hook: auto = only for slim (default: auto)")
    run.add_argument("--script", metavar="FILE", help="what the stand-in answers (JSON or YAML rules; default: "
                                                      "plain text, summaries for compaction)")
    run.add_argument("--clusters", metavar="FILE", help="cluster file (default: the bundled example store)")
    run.add_argument("--no-store-files", action="store_true",
                     help="route on the cluster file alone: do not copy its utterances, learned-terms and "
                          "near-misses files (<stem>.utterances.tsv, .learned.tsv, .nearmisses.tsv) beside the "
                          "run's cluster file, as is done by default so the run routes as your own hook does")
    run.add_argument("--flat-index", metavar="FILE", help="flat MEMORY.md (default: the bundled example's)")
    run.add_argument("--config", metavar="FILE", help="config for slim render's hot strip "
                                                      "(default: the bundled example's memory-router.toml)")
    run.add_argument("--session", choices=("resume", "stream"), default="resume",
                     help="resume: claude -p per prompt, --resume from the second (history is what the transcript "
                          "kept); stream: one claude -p --input-format stream-json process (history is what the "
                          "process kept, as in an interactive session; no slash commands) (default: resume)")
    run.add_argument("--timeout", metavar="SECONDS", type=float, default=180,
                     help="per prompt (default: 180)")
    run.add_argument("--compare", choices=("native",),
                     help="native: three sessions on one store (flat MEMORY.md; Claude Code's own memory selector "
                          "on, CLAUDE_MEMORY_STORES, with the stand-in answering its side requests as an oracle; "
                          "slim + memory-router) over the suite's cases that name one fact, and a table of memory "
                          "bytes, side-request bytes, model calls per prompt and fact delivery (docs/lab.md)")
    client_option(run)
    report_options(run)
    run.set_defaults(handler=cmd_lab_run)

    report = sub.add_parser(
        "report", help="measure a run directory again",
        description="Per API call: request bytes, memory bytes (the MEMORY.md section and every routed context "
                    "found in the request by content), routed contexts new at this call vs re-sent history. Per "
                    "session: totals, compactions, contexts leaked into subagent requests, and the transcript "
                    "audit's verdict beside what the requests show. With flat and slim sessions: cumulative "
                    "memory bytes side by side and the prompt where slim + router passes flat. Exit 1 when the "
                    "audit and the requests disagree.")
    report.add_argument("run_dir", metavar="RUN_DIR", help="a run directory written by lab run")
    report_options(report)
    report.set_defaults(handler=cmd_lab_report)

    serve = sub.add_parser("serve", help="run the loopback stand-in alone until Ctrl-C",
                           description="Listens on 127.0.0.1 (a free port), answers the Messages API from "
                                       "--script and logs every request body to --log.")
    serve.add_argument("--log", metavar="FILE", required=True, help="the request log (JSON Lines, appended)")
    serve.add_argument("--script", metavar="FILE", help="JSON or YAML rules (default: plain text replies)")
    serve.set_defaults(handler=cmd_lab_serve)

    client = sub.add_parser("client", help="find the Claude Code client, or install a version into the lab cache",
                            description="which: the client the lab would run and its version; install: npm-install a "
                                        "version into the lab cache (~/.cache/memory-router-lab/claude-code/VERSION).")
    client.add_argument("action", choices=("which", "install"), help="which: show the client; install: install it")
    client.add_argument("--version", default=TESTED_VERSION, help=f"client version (default: {TESTED_VERSION})")
    options.json_output(client)
    client_option(client)
    client.set_defaults(handler=cmd_lab_client)
