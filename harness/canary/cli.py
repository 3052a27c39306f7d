"""``memory-router canary run|eval|fit|verdict`` and ``memory-router checklist``: the face of the
canary package (argparse, handlers and printing; the tables are ``harness.canary.tables``). The
models: ``run`` (suites, baselines, JUnit), ``fit`` (eval, cross-validation, fit), ``verdict`` and
``checklist`` (the behavioural canary), over canaries/.

Exit codes: 0 every case passed; 1 a case failed (or an xfail case passed, or a baseline
regression, or a refused write); 2 an invalid suite, cluster, config or baseline file.
``canary verdict``: 0 PASS, 1 FAIL, 3 INCONCLUSIVE (its own code, so that neither a script nor CI
can mistake "this run proves nothing" for a pass or a failure of the router), 2 invalid input.
"""

import os
import sys

from harness import options
from harness.canary import tables
from router.errors import RefusedError

DEFAULT_RECORD_HINT = "behavioural-canaries.jsonl"


# The user's own suite, in the words the README and docs/replay.md use.
OWN_SUITE = "canaries/my-history.yaml"


def bundled_example_note(config_path=None):
    """The line a bare ``canary run`` says first in a configured project (a memory-router.toml or
    ``[tool.memory-router]`` found): the bundled suites are the example's, on its fictional store;
    the project's own check is ``replay --suite``. ``None`` outside a configured project."""
    from harness import printedcommands
    from router.configfile import load_config

    if load_config(config_path) is None:
        return None
    return ("note: no SUITE given, so these are the bundled example's suites on the bundled example store "
            "(fictional memories), not your project's; check your own store on your own history: "
            f"{printedcommands.memory_router('replay', '--suite', OWN_SUITE)}, then "
            f"{printedcommands.memory_router('canary', 'run', OWN_SUITE)}")


def cmd_run(args):
    from harness.canary import run as canary_run
    from harness.output import print_json

    note = None if args.suites else bundled_example_note(args.config)
    if note:
        print(note, file=sys.stderr, flush=True)
    run = canary_run.run_suites(args.suites, clusters=args.clusters, config_path=args.config,
                                facts_only=args.facts_only, pattern=args.pattern, baseline=args.baseline)
    if args.json:
        print_json(canary_run.run_json(run))
    else:
        tables.print_run(run["results"], run["counts"], run["comparison"], verbose=args.verbose,
                         origins=run["origins"])
    if args.junit:
        canary_run.write_junit(args.junit, run)
        if not args.json:
            print(f"wrote JUnit XML to {args.junit}")
    if args.save_baseline:
        canary_run.save_baseline(args.save_baseline, run)
        if not args.json:
            print(f"saved baseline to {args.save_baseline}")
    return 0 if run["ok"] else 1


def cmd_eval(args):
    from harness.canary import fit
    from harness.output import print_json

    if args.cv is not None:
        report, cases = fit.cross_validation(args.suite, args.cv, args.clusters, args.config, args.facts_only,
                                             args.pattern, args.max_false_priming)
        if args.json:
            print_json(report)
        else:
            tables.print_cross_validation(report, cases)
        return 0
    suite, settings, metrics = fit.evaluate(args.suite, args.clusters, args.config, args.facts_only, args.pattern)
    if args.json:
        print_json({"suite": suite.path, "clusters": suite.cluster_path, "settings": settings, "metrics": metrics})
    else:
        tables.print_metrics(suite, metrics)
    return 0


def cmd_fit(args):
    from harness.canary import fit
    from harness.output import print_json

    report, refused = fit.fit_suite(args.suite, args.clusters, args.config, args.facts_only, args.holdout,
                                    args.max_false_priming, write=args.write)
    if args.json:
        print_json(dict(report, refused=refused))
    else:
        tables.print_fit(report, report["grid"], args.write)
    if refused:
        raise RefusedError(refused)
    return 0


def cmd_verdict(args):
    from canaries.verdict import EXIT_CODES
    from harness.canary.verdict import verdict
    from harness.output import print_json

    result, record = verdict(args.transcript, args.case, args.suite, args.record, args.memory_dir, args.project)
    if args.json:
        out = result.as_dict()
        out.update({"transcript": os.path.abspath(args.transcript), "suite": record["suite"],
                    "memory_dir": record["memory_dir"], "record": os.path.abspath(args.record) if args.record else None,
                    "exit_code": EXIT_CODES[result.verdict]})
        print_json(out)
    else:
        tables.print_verdict(result, args.transcript, args.record)
    return EXIT_CODES[result.verdict]


def cmd_checklist(args):
    from harness.canary.checklist import checklists
    from harness.output import print_json
    from harness.project import project_dir

    documents, summaries, ready = checklists(project_dir(args.project), args.suite, args.case, args.memory_dir,
                                             args.clusters, scan=not args.no_scan)
    if args.json:
        print_json({"ready": ready, "cases": summaries})
    else:
        sys.stdout.write("\n".join(documents))
    return 0 if ready else 1


# --------------------------------------------------------------------------- argparse


def register(subparsers):
    register_canary(subparsers)
    register_checklist(subparsers)


def add_store_options(parser):
    """--clusters, --config and --facts-only, as every canary action over suites takes them."""
    parser.add_argument("--clusters", metavar="FILE",
                        help="cluster file for every suite (overrides each suite's 'clusters:'; default: the suite's "
                             "'clusters:', else the project's store as the hook finds it, else the bundled "
                             "example store)")
    options.config(parser, "config file whose routing settings are used")
    parser.add_argument("--facts-only", action="store_true",
                        help="ignore routes_to (and the xfail marks recorded against those cluster ids): judge a "
                             "cluster file with other ids, such as a built one, by what it injects")


def fraction(text):
    import argparse

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {value}")
    return value


def register_canary(subparsers):
    canary = subparsers.add_parser(
        "canary", help="YAML routing canaries: the deterministic routing gate, metrics, fit, baselines",
        description="Declarative YAML canary suites (schema: docs/canaries.md): 'run' is the CI gate, 'eval' "
                    "reports router metrics, 'fit' grid-searches the routing constants.")
    sub = canary.add_subparsers(dest="canary_command", metavar="ACTION", required=True)

    run = sub.add_parser(
        "run", help="run canary suites; exit 0 all pass, 1 a case fails, 2 an invalid suite",
        description="Runs each case of each SUITE (a YAML file, or a directory of them; default: the bundled "
                    "suites against the bundled example store) through the router and checks its expectations. "
                    "Verdicts: pass, fail, xfail (a known residual still failing) and xpass (an xfail case that "
                    "passed: reported, and it fails the run so the residual list stays honest).",
        epilog="exit codes: 0 every case passed (xfail allowed); 1 a case failed, an xfail case passed, or a "
               "baseline regression; 2 an invalid suite, cluster, config or baseline file")
    run.add_argument("suites", nargs="*", metavar="SUITE",
                     help="suite files or directories of them (default: the bundled suites)")
    add_store_options(run)
    options.json_output(run)
    run.add_argument("-v", "--verbose", action="store_true",
                     help="print every case (expected, got, score, margin), each session's steps and the xfail "
                          "residuals; default: one line per suite, one per failure, and the total")
    run.add_argument("--junit", metavar="FILE", help="also write JUnit XML to FILE")
    run.add_argument("-k", dest="pattern", metavar="PATTERN",
                     help="run only cases whose id or one of whose tags contains PATTERN (case-insensitive)")
    run.add_argument("--save-baseline", metavar="FILE", help="store this run (JSON) for later --baseline comparisons")
    run.add_argument("--baseline", metavar="FILE",
                     help="compare with a stored run; exit 1 on any regression (a pass turned fail, or a changed "
                          "routing)")
    run.set_defaults(handler=cmd_run)

    register_eval(sub)
    register_fit(sub)
    register_verdict(sub)


def register_eval(sub):
    evaluate = sub.add_parser(
        "eval", help="router metrics over a suite: per-cluster precision/recall/F1, false priming, fact recall, size",
        description="Per-cluster precision, recall and F1 (over cases with routes_to), the no-route false-priming "
                    "rate and recall (over silent cases), fact recall (over injects slugs), mean and p95 injected "
                    "characters per prompt, and the distribution of margins over the floor.")
    evaluate.add_argument("suite", metavar="SUITE", help="the suite file whose cases are scored")
    add_store_options(evaluate)
    evaluate.add_argument("-k", dest="pattern", metavar="PATTERN", help="only cases whose id or tag contains PATTERN")
    options.json_output(evaluate)
    evaluate.add_argument("--cv", type=int, metavar="K",
                          help="K-fold cross-validation of 'canary fit': fit the provider's constants on K-1 folds, "
                               "judge the held-out fold, pool the K held-out folds (cases fall in folds by a hash "
                               "of their id)")
    evaluate.add_argument("--max-false-priming", type=fraction, default=0.05, metavar="RATE",
                          help="with --cv: the false-priming ceiling fit uses (default 0.05)")
    evaluate.set_defaults(handler=cmd_eval)


def register_fit(sub):
    fit_parser = sub.add_parser(
        "fit", help="grid-search floor, tag weight, member weight and line cap against a suite",
        description="Scores every setting of the grid on a deterministic fitting part of the suite, keeps those "
                    "under the false-priming ceiling, picks the best by routing F1, reports it and the current "
                    "setting on the held-out part, and lists the cases that flip. Changes nothing unless --write.")
    fit_parser.add_argument("suite", metavar="SUITE", help="the suite file to fit the constants against")
    add_store_options(fit_parser)
    fit_parser.add_argument("--holdout", type=fraction, default=0.3, metavar="FRACTION",
                            help="share of cases held out (by a hash of the case id; default 0.3; 0 = none)")
    fit_parser.add_argument("--max-false-priming", type=fraction, default=0.05, metavar="RATE",
                            help="most share of silent cases allowed to get an injection (default 0.05)")
    fit_parser.add_argument("--write", action="store_true",
                            help="save a recommended setting to memory-router.toml (only the changed keys)")
    options.json_output(fit_parser)
    fit_parser.set_defaults(handler=cmd_fit)


def register_verdict(canary_subparsers):
    import argparse

    verdict = canary_subparsers.add_parser(
        "verdict", help="the behavioural canary's verdict from a session transcript: PASS, FAIL or INCONCLUSIVE",
        description="Reads the transcript of a fresh session whose first prompt was a behavioural case's prompt. "
                    "PASS: that prompt's router injection carries the case's fact and the reply contains an "
                    "expected phrase and no forbidden one. INCONCLUSIVE, never PASS, when the fact could have come "
                    "another way (always loaded in MEMORY.md or the hot strip; a subagent call, a web lookup, a "
                    "tool touching the memory store, or any line naming the slug before the answer), when the "
                    "injection is only in a sidechain, when the transcript's Claude Code version cannot show "
                    "injections, or when the transcript is not a run of this case. FAIL otherwise. Every verdict "
                    "names its evidence by line number.",
        epilog="exit codes: 0 PASS; 1 FAIL; 3 INCONCLUSIVE; 2 invalid input (transcript, suite, unknown case)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    verdict.add_argument("transcript", metavar="TRANSCRIPT",
                         help="the session's .jsonl transcript (memory-router transcript locate prints it)")
    verdict.add_argument("--case", metavar="ID", required=True, help="the behavioural case's id")
    verdict.add_argument("--suite", metavar="SUITE", help="suite file (default: the bundled canaries/spec.yaml)")
    verdict.add_argument("--record", metavar="FILE",
                         help=f"append the verdict as one JSON line (e.g. {DEFAULT_RECORD_HINT})")
    options.memory_dir(verdict, "memory_dir in the config, else the memory/ beside the transcript, else Claude "
                                "Code's default for the session's cwd",
                       what="the memory directory whose MEMORY.md the session loaded")
    verdict.add_argument("--project", metavar="DIR",
                         help="project whose config (hot_strip, memory_dir) applies (default: the session's cwd)")
    options.json_output(verdict)
    verdict.set_defaults(handler=cmd_verdict)


def register_checklist(subparsers):
    import argparse

    raw = argparse.RawDescriptionHelpFormatter
    checklist = subparsers.add_parser(
        "checklist", help="the fresh-session behavioural canary checklist (Markdown)",
        description="Prints, for each behavioural case of SUITE (default: the bundled canaries/spec.yaml), a "
                    "Markdown checklist: the preconditions, checked now where possible ([x] met, [ ] not met, "
                    "[?] unknown): Phase 2 slim in place, the fact's slug not always loaded, the router injecting "
                    "it for the prompt, the hook installed and enabled, no project file naming the slug; then "
                    "the exact first prompt, and the commands that find the transcript and record the verdict.",
        epilog="exit codes: 0 every automatic precondition met or unknown; 1 one is not met; 2 invalid suite",
        formatter_class=raw)
    checklist.add_argument("suite", nargs="?", metavar="SUITE",
                           help="suite file with behavioural: cases (default: the bundled canaries/spec.yaml)")
    checklist.add_argument("--case", metavar="ID", help="only this behavioural case")
    options.memory_dir(checklist, options.MEMORY_DIR_GUESSED)
    options.project(checklist)
    checklist.add_argument("--clusters", metavar="FILE", help="cluster file (default: the installed hook's, else "
                                                              "the suite's)")
    checklist.add_argument("--no-scan", action="store_true", help="skip scanning the project for the fact's slug")
    options.json_output(checklist)
    checklist.set_defaults(handler=cmd_checklist)
