"""``memory-router canary run`` and the ``canary`` group (``eval`` and ``fit``: harness.canary.fit;
``verdict``: harness.canary.verdict).

The thin edge over canaries.suite (schema), canaries.runner (verdicts), canaries.metrics,
canaries.fit, canaries.baseline and canaries.junit: argv, files and output live here only.

Exit codes: 0 every case passed; 1 a case failed (or an xfail case passed, or a baseline
regression, or a refused write); 2 an invalid suite, cluster, config or baseline file.
"""

import json
import time

from harness.canary.suiteargs import (
    add_store_options,
    display_path,
    expand_suite_args,
    fmt_num,
    load_suites,
    no_cases,
    settings_from,
    sha256_file,
    table_for,
)
from router.errors import InputError
from router.safeio import read_regular_bytes

VERDICT_STYLES = {"pass": "green", "fail": "bold red", "xfail": "yellow", "xpass": "bold magenta"}


def cmd_run(args):
    from canaries.baseline import build_baseline, suite_key
    from canaries.runner import run_suite, totals
    from canaries.suite import bundled_suite_dir

    _config, settings = settings_from(args)
    suites = load_suites(expand_suite_args(args.suites), cluster_path=args.clusters, facts_only=args.facts_only)
    tables = {}
    suite_results = []
    elapsed = {}
    for position, suite in enumerate(suites):
        started = time.perf_counter()
        suite_results.append(run_suite(suite, settings, table=table_for(suite, tables), pattern=args.pattern))
        elapsed[position] = time.perf_counter() - started
    counts = totals(suite_results)
    if counts["total"] == 0:
        no_cases(args.pattern, suites)

    keys = [suite_key(s.path, bundled_dir=bundled_suite_dir()) for s in suites]
    record = build_baseline(suite_results, settings, keys,
                            {key: sha256_file(s.cluster_path) for key, s in zip(keys, suites)})
    comparison = None
    if args.baseline:
        from canaries.baseline import compare

        old = _read_baseline(args.baseline)
        comparison = compare(old, record)
        comparison["file"] = args.baseline
        if comparison["compared"] == 0 and any(old.get("suites", {}).values()):
            # Nothing in common: a comparison that checked nothing must not read as "no regression".
            raise InputError(
                "the baseline shares no case with this run, so nothing could be compared (it keys suites "
                f"as {', '.join(sorted(old['suites']))})", path=args.baseline,
                fix="run from the directory the baseline was saved in, with the same suites")

    ok = all(r.ok for r in suite_results) and (comparison is None or comparison["ok"])
    if args.json:
        from harness.output import print_json

        out = {
            "ok": ok,
            "settings": settings,
            "totals": counts,
            "suites": [dict(r.to_dict(), key=key) for r, key in zip(suite_results, keys)],
        }
        if comparison is not None:
            out["baseline"] = comparison
        print_json(out)
    else:
        _print_run(suite_results, counts, comparison)

    if args.junit:
        from canaries.junit import build_junit

        _write_output(args.junit, build_junit(suite_results, names=keys, elapsed=elapsed), "JUnit XML")
        if not args.json:
            print(f"wrote JUnit XML to {args.junit}")
    if args.save_baseline:
        _write_output(args.save_baseline,
                      json.dumps(record, indent=2, sort_keys=True, ensure_ascii=False) + "\n", "baseline")
        if not args.json:
            print(f"saved baseline to {args.save_baseline}")
    return 0 if ok else 1


def _write_output(path, data, what):
    from harness.fileops import atomic_write

    try:
        atomic_write(path, data)
    except OSError as err:
        raise InputError(f"cannot write the {what}: {err.strerror or err}", path=path,
                         fix="pass a path in an existing, writable directory") from None


def _read_baseline(path):
    from canaries.baseline import validate_baseline

    try:
        text = read_regular_bytes(path).decode("utf-8")
    except OSError as err:
        raise InputError(f"cannot read baseline: {err.strerror or err}", path=path,
                         fix="create one with --save-baseline FILE") from None
    except UnicodeDecodeError:
        raise InputError("baseline is not valid UTF-8", path=path, fix="save it again with --save-baseline") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(f"baseline is not valid JSON: {err.msg}", path=path, line=err.lineno, column=err.colno,
                         fix="save it again with --save-baseline") from None
    problems = validate_baseline(data)
    if problems:
        raise InputError("; ".join(problems), path=path, fix="save it again with --save-baseline")
    return data


def _print_run(suite_results, counts, comparison):
    from rich.text import Text

    from canaries.runner import defaults_summary, expected_summary
    from harness.output import console, table

    out = console()
    for suite_result in suite_results:
        suite = suite_result.suite
        rows = []
        for result in suite_result.results:
            got = "\n".join(result.routed) + f"\n({len(result.injected)} lines)" if result.routed else "silent"
            rows.append((result.case.id, expected_summary(result.case, "\n", suite.defaults) or "(defaults)", got, fmt_num(result.top_score),
                         fmt_num(result.margin), Text(result.verdict.upper(), style=VERDICT_STYLES[result.verdict])))
        limits = defaults_summary(suite.defaults)
        title = f"{display_path(suite.path)} (clusters: {display_path(suite.cluster_path)}"
        title += f"; every case: {limits})" if limits else ")"
        out.print(table(title,
                        ["id", "expected", "got", "score", "margin", "verdict"], rows))
        for result in suite_result.results:
            if result.verdict == "pass":
                continue
            where = f"{display_path(suite.path)}:{result.case.line}"
            label = result.verdict.upper()
            reason = f" (xfail: {result.xfail})" if result.verdict == "xfail" else ""
            out.print(Text(f"{label} {result.case.id} at {where}{reason}", style=VERDICT_STYLES[result.verdict]),
                      soft_wrap=True)
            for difference in result.differences:
                out.print(f"    {difference}", markup=False, soft_wrap=True)
        if suite_result.sessions:
            _print_sessions(out, suite, suite_result.sessions)
        c = suite_result.counts()
        out.print(f"{display_path(suite.path)}: {c['pass']} passed, {c['fail']} failed, {c['xfail']} xfail, "
                  f"{c['xpass']} xpass", markup=False, soft_wrap=True)
        out.print()
    if comparison is not None:
        _print_comparison(out, comparison)
    failed = counts["fail"] + counts["xpass"]
    regressions = len(comparison["regressions"]) if comparison else 0
    summary = (f"{counts['total']} cases in {len(suite_results)} suite(s): {counts['pass']} passed, "
               f"{counts['fail']} failed, {counts['xfail']} xfail (known residuals), {counts['xpass']} xpass")
    if regressions:
        summary += f"; {regressions} baseline regression(s)"
    style = "bold red" if failed or regressions else "bold green"
    out.print(Text(("FAILED: " if failed or regressions else "OK: ") + summary, style=style), soft_wrap=True)


def _print_sessions(out, suite, sessions):
    """One row per step of each session case: what was sent, what the session already held."""
    from rich.text import Text

    from harness.output import table

    rows = []
    for result in sessions:
        for step in result.steps:
            if step["kind"] != "prompt":
                rows.append((result.case.id, str(step["step"]), f"({step['kind']})", "", "", ""))
                continue
            failed = "FAIL" if step["differences"] else "ok"
            rows.append((result.case.id, str(step["step"]), step["prompt"][:60],
                         ", ".join(step["sent"]) or "-", ", ".join(step["held"]) or "-",
                         Text(failed, style="bold red" if step["differences"] else "green")))
    out.print(table(f"{display_path(suite.path)}: sessions (each prompt after the steps above it)",
                    ["session", "step", "prompt", "sent", "already held", "step"], rows))
    for result in sessions:
        verdict = result.verdict.upper()
        if result.verdict == "pass":
            continue
        reason = f" (xfail: {result.case.xfail})" if result.verdict == "xfail" else ""
        out.print(Text(f"{verdict} session {result.case.id} at {display_path(suite.path)}:{result.case.line}{reason}",
                       style=VERDICT_STYLES[result.verdict]), soft_wrap=True)
        for difference in result.differences:
            out.print(f"    {difference}", markup=False, soft_wrap=True)


def _print_comparison(out, comparison):
    from rich.text import Text

    out.print(Text(f"baseline {comparison['file']}:", style="bold"))
    if comparison["settings_changed"]:
        out.print(f"  settings differ from the baseline's ({comparison['old_settings']})", markup=False)
    for title, key, style in (("regression", "regressions", "bold red"), ("improvement", "improvements", "green"),
                              ("changed", "changes", "")):
        for entry in comparison[key]:
            out.print(Text(f"  {title}: {entry['suite']} {entry['id']}: {entry['what']}", style=style), soft_wrap=True)
    for title, key in (("new case", "added"), ("missing case", "removed")):
        for entry in comparison[key]:
            out.print(f"  {title}: {entry['suite']} {entry['id']}", markup=False, soft_wrap=True)
    if not any(comparison[k] for k in ("regressions", "improvements", "changes", "added", "removed")):
        out.print("  no difference from the baseline")
    out.print()


def register(subparsers):
    canary = subparsers.add_parser(
        "canary", help="YAML routing canaries: the deterministic routing gate, metrics, fit, baselines",
        description="Declarative YAML canary suites (see the README's schema): 'run' is the CI gate, 'eval' "
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
    run.add_argument("--json", action="store_true", help="machine-readable output")
    run.add_argument("--junit", metavar="FILE", help="also write JUnit XML to FILE")
    run.add_argument("-k", dest="pattern", metavar="PATTERN",
                     help="run only cases whose id or one of whose tags contains PATTERN (case-insensitive)")
    run.add_argument("--save-baseline", metavar="FILE", help="store this run (JSON) for later --baseline comparisons")
    run.add_argument("--baseline", metavar="FILE",
                     help="compare with a stored run; exit 1 on any regression (a pass turned fail, or a changed "
                          "routing)")
    run.set_defaults(handler=cmd_run)

    from harness.canary.fit import register_eval, register_fit
    from harness.canary.verdict import register_verdict

    register_eval(sub)
    register_fit(sub)
    register_verdict(sub)
