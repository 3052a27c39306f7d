"""``memory-router canary run|eval|fit`` (and ``verdict``, registered by canaries.verdict_cli).

The thin edge over canaries.suite (schema), canaries.runner (verdicts), canaries.metrics,
canaries.fit, canaries.baseline and canaries.junit: argv, files and output live here only.

Exit codes: 0 every case passed; 1 a case failed (or an xfail case passed, or a baseline
regression, or a refused write); 2 an invalid suite, cluster, config or baseline file.
"""

import json
import os
import time

from router.errors import InputError, RefusedError

VERDICT_STYLES = {"pass": "green", "fail": "bold red", "xfail": "yellow", "xpass": "bold magenta"}


class SuiteLoadErrors(InputError):
    """Problems in several suite files at once (each already names its file and lines)."""

    def __init__(self, errors):
        self.errors = list(errors)
        super().__init__("invalid suites")

    def format(self):
        return "\n".join(err.format() for err in getattr(self, "errors", ()))


def _display(path):
    path = os.path.abspath(path)
    try:
        rel = os.path.relpath(path, os.getcwd())
    except ValueError:  # another drive (Windows)
        return path
    return path if rel.startswith(os.pardir) else rel


def _settings_from(args):
    from router.cli_commands import load_cli_config
    from router.config import settings_of

    config = load_cli_config(getattr(args, "config", None))
    return config, settings_of(config)


def expand_suite_args(paths):
    """SUITE arguments -> suite files; a directory stands for the suites directly inside it."""
    from canaries.suite import bundled_suites, suite_files_in

    if not paths:
        found = bundled_suites()
        if not found:
            raise InputError("no bundled canary suites found (the package data is missing)",
                             fix="reinstall memory-router, or pass a SUITE file")
        return found
    out = []
    for path in paths:
        if os.path.isdir(path):
            inside = suite_files_in(path)
            if not inside:
                raise InputError("no canary suite (a YAML file with top-level 'cases:') in this directory",
                                 path=path, fix="pass a suite file")
            out.extend(inside)
        else:
            out.append(path)
    return out


def load_suites(paths, cluster_path=None, facts_only=False):
    """Load every suite, collecting the errors of all of them before failing (exit 2)."""
    from canaries.suite import load_suite
    from router.errors import MemoryRouterError

    suites, errors = [], []
    for path in paths:
        try:
            suites.append(load_suite(path, cluster_path=cluster_path, facts_only=facts_only))
        except InputError as err:
            errors.append(err)
        except MemoryRouterError as err:  # pragma: no cover - every load error is an InputError today
            errors.append(err)
    if errors:
        if len(errors) == 1:
            raise errors[0]
        raise SuiteLoadErrors(errors)
    return suites


def _table_for(suite, cache):
    from router.provider import build_table

    key = os.path.abspath(suite.cluster_path)
    if key not in cache:
        cache[key] = build_table(suite.index)
    return cache[key]


def _sha256_file(path):
    from harness.fileops import sha256_bytes

    with open(path, "rb") as handle:
        return sha256_bytes(handle.read())


# --------------------------------------------------------------------------- run


def cmd_run(args):
    from canaries.baseline import build_baseline, suite_key
    from canaries.runner import run_suite, totals
    from canaries.suite import bundled_suite_dir

    _config, settings = _settings_from(args)
    suites = load_suites(expand_suite_args(args.suites), cluster_path=args.clusters, facts_only=args.facts_only)
    tables = {}
    suite_results = []
    elapsed = {}
    for position, suite in enumerate(suites):
        started = time.perf_counter()
        suite_results.append(run_suite(suite, settings, table=_table_for(suite, tables), pattern=args.pattern))
        elapsed[position] = time.perf_counter() - started
    counts = totals(suite_results)
    if counts["total"] == 0:
        _no_cases(args.pattern, suites)

    keys = [suite_key(s.path, bundled_dir=bundled_suite_dir()) for s in suites]
    record = build_baseline(suite_results, settings, keys,
                            {key: _sha256_file(s.cluster_path) for key, s in zip(keys, suites)})
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
        from harness.report import print_json

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


def _no_cases(pattern, suites):
    # Zero cases run is not a pass: a gate that checked nothing must not read as green.
    if pattern:
        raise InputError(f"-k {pattern!r} matched no case", fix="match a substring of a case id or tag")
    paths = [suite.path for suite in suites]
    raise InputError("no routing cases to run (the suite holds only behavioural cases)"
                     + (f"; nor do {', '.join(paths[1:])}" if len(paths) > 1 else ""),
                     path=paths[0] if paths else None, fix="add cases under 'cases:'")


def _read_baseline(path):
    from canaries.baseline import validate_baseline

    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
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
    from harness.report import console, table

    out = console()
    for suite_result in suite_results:
        suite = suite_result.suite
        rows = []
        for result in suite_result.results:
            got = "\n".join(result.routed) + f"\n({len(result.injected)} lines)" if result.routed else "silent"
            rows.append((result.case.id, expected_summary(result.case, "\n", suite.defaults) or "(defaults)", got, _fmt_num(result.top_score),
                         _fmt_num(result.margin), Text(result.verdict.upper(), style=VERDICT_STYLES[result.verdict])))
        limits = defaults_summary(suite.defaults)
        title = f"{_display(suite.path)} (clusters: {_display(suite.cluster_path)}"
        title += f"; every case: {limits})" if limits else ")"
        out.print(table(title,
                        ["id", "expected", "got", "score", "margin", "verdict"], rows))
        for result in suite_result.results:
            if result.verdict == "pass":
                continue
            where = f"{_display(suite.path)}:{result.case.line}"
            label = result.verdict.upper()
            reason = f" (xfail: {result.xfail})" if result.verdict == "xfail" else ""
            out.print(Text(f"{label} {result.case.id} at {where}{reason}", style=VERDICT_STYLES[result.verdict]),
                      soft_wrap=True)
            for difference in result.differences:
                out.print(f"    {difference}", markup=False, soft_wrap=True)
        c = suite_result.counts()
        out.print(f"{_display(suite.path)}: {c['pass']} passed, {c['fail']} failed, {c['xfail']} xfail, "
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


def _fmt_num(value):
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:.3f}"
    return str(value)


def _fmt_chars(value):
    return "n/a" if value is None else f"{value:.1f}"


def _fmt_ratio(value):
    return "n/a" if value is None else f"{value:.3f}"


# --------------------------------------------------------------------------- eval


def cmd_eval(args):
    from canaries.metrics import suite_metrics
    from canaries.runner import run_suite

    _config, settings = _settings_from(args)
    suite = load_suites([args.suite], cluster_path=args.clusters, facts_only=args.facts_only)[0]
    if args.cv is not None:
        return _eval_cv(args, suite, settings)
    result = run_suite(suite, settings, pattern=args.pattern)
    if not result.results:
        _no_cases(args.pattern, [suite])
    metrics = suite_metrics(result.results)
    if args.json:
        from harness.report import print_json

        print_json({"suite": suite.path, "clusters": suite.cluster_path, "settings": settings, "metrics": metrics})
        return 0
    _print_metrics(suite, metrics)
    return 0


def _eval_cv(args, suite, settings):
    from canaries.crossval import cross_validate
    from canaries.runner import matches
    from router.provider import build_table

    cases = [case for case in suite.cases if matches(case, args.pattern)]
    if not cases:
        _no_cases(args.pattern, [suite])
    if not 2 <= args.cv <= len(cases):
        raise InputError(f"--cv needs between 2 and {len(cases)} folds (one per case at most), got {args.cv}",
                         fix="use e.g. --cv 5")
    report = cross_validate(cases, build_table(suite.index), settings, k=args.cv,
                            max_false_priming=args.max_false_priming)
    report["suite"] = suite.path
    if args.json:
        from harness.report import print_json

        print_json(report)
        return 0
    from harness.report import console, table

    out = console()
    grid = "; ".join(f"{k} {v}" for k, v in report["grid"].items()) or "nothing (this provider has no grid)"
    out.print(f"provider {report['provider']}; {report['k']}-fold cross-validation of canary fit over "
              f"{len(cases)} cases; grid: {grid}; false-priming ceiling {report['max_false_priming']}", markup=False)
    held, current = report["held_out"], report["current"]["all_cases"]
    rows = [(name, _fmt_ratio(held[key]), _fmt_ratio(current[key]))
            for name, key in (("routing micro F1", "f1"), ("fact recall", "fact_recall"),
                              ("false-priming rate", "false_priming_rate"))]
    rows.append(("injected chars per prompt (mean)", _fmt_chars(held["mean_chars"]), _fmt_chars(current["mean_chars"])))
    out.print(table("Held out (each case judged by constants fitted without it) vs the current setting on all",
                    ["metric", "held out", "current, all cases"], rows))
    kinds = [(kind, row["cases"], _fmt_ratio(row["cluster_hit"]), _fmt_ratio(row["fact_recall"]),
              _fmt_ratio(row["false_priming"]), _fmt_chars(row["mean_chars"]))
             for kind, row in report["held_out_by_kind"].items()]
    out.print(table("Held out, per prompt kind", ["kind", "cases", "cluster hit", "fact recall", "false priming",
                                                   "mean chars"], kinds))
    for fold in report["folds"]:
        out.print(f"fold {fold['fold']}: {fold['held_out_cases']} held out; chose {fold['settings']}", markup=False)
    return 0


def _print_metrics(suite, metrics):
    from harness.report import console, table

    out = console()
    routing = metrics["routing"]
    rows = [(cid, row["support"], row["tp"], row["fp"], row["fn"], _fmt_ratio(row["precision"]),
             _fmt_ratio(row["recall"]), _fmt_ratio(row["f1"])) for cid, row in routing["clusters"].items()]
    out.print(table(f"Routing per cluster: {_display(suite.path)} ({routing['cases']} cases with routes_to)",
                    ["cluster", "support", "tp", "fp", "fn", "precision", "recall", "F1"], rows))
    silence = metrics["no_route"]
    facts = metrics["fact_recall"]
    chars = metrics["injected_chars"]
    micro = routing["micro"]
    summary = [
        ("micro precision / recall / F1",
         f"{_fmt_ratio(micro['precision'])} / {_fmt_ratio(micro['recall'])} / {_fmt_ratio(micro['f1'])}"),
        ("macro F1", _fmt_ratio(routing["macro_f1"])),
        ("no-route false-priming rate",
         f"{_fmt_ratio(silence['false_priming_rate'])} ({silence['false_primed']} of {silence['silent_cases']} "
         "silent cases got an injection)"),
        ("no-route recall", _fmt_ratio(silence["no_route_recall"])),
        ("no-route precision", _fmt_ratio(silence["no_route_precision"])),
        ("fact recall", f"{_fmt_ratio(facts['recall'])} ({facts['injected']} of {facts['facts']} injects slugs)"),
        ("injected chars per prompt: mean / p95 / max",
         f"{_fmt_chars(chars['mean'])} / {_fmt_num(chars['p95'])} / {_fmt_num(chars['max'])}"),
        ("injected chars when something fires: mean",
         f"{_fmt_chars(chars['mean_when_injected'])} ({chars['injected_prompts']} prompts)"),
    ]
    out.print(table(f"Summary ({metrics['cases']} cases)", ["metric", "value"], summary))
    if silence["false_primed_ids"]:
        out.print("false-primed: " + ", ".join(silence["false_primed_ids"]), markup=False)
    if facts["missed"]:
        out.print("facts not injected: " + ", ".join(facts["missed"]), markup=False)
    margins = metrics["margins"]
    by_value = {}
    for group in ("all", "expect_route", "expect_silent"):
        for row in margins[group]["counts"]:
            by_value.setdefault(row["margin"], {})[group] = row["count"]
    rows = [(_fmt_num(value), counts.get("all", 0), counts.get("expect_route", 0), counts.get("expect_silent", 0))
            for value, counts in sorted(by_value.items())]
    out.print(table("Margin over the floor (top score - floor)", ["margin", "all", "expect route", "expect silent"],
                    rows))
    for group in ("expect_route", "expect_silent"):
        d = margins[group]
        out.print(f"{group}: n={d['n']} min={_fmt_num(d['min'])} median={_fmt_num(d['median'])} "
                  f"max={_fmt_num(d['max'])}", markup=False)


# --------------------------------------------------------------------------- fit


def _fraction(text):
    import argparse

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {value}")
    return value


def cmd_fit(args):
    from canaries.fit import fit, toml_snippet
    from router.provider import build_table

    if args.holdout >= 1:
        raise InputError("--holdout must be below 1 (the fitting part would be empty)", fix="use e.g. --holdout 0.3")
    config, settings = _settings_from(args)
    suite = load_suites([args.suite], cluster_path=args.clusters, facts_only=getattr(args, "facts_only", False))[0]
    if not suite.cases:
        raise InputError("the suite has no routing cases to fit", path=suite.path, fix="add cases")
    try:
        report = fit(suite.cases, build_table(suite.index), settings, holdout=args.holdout,
                     max_false_priming=args.max_false_priming)
    except ValueError as err:
        raise InputError(f"{err}: every case fell in the held-out part", path=suite.path,
                         fix="lower --holdout or add cases") from None
    report["suite"] = suite.path
    report["clusters"] = suite.cluster_path
    report["config"] = config["source"] if config else None
    report["written"] = None
    proposed_values = {key: value["proposed"] for key, value in report["changes"].items()}

    refused = None
    if args.write and proposed_values:
        if not report["recommended"]:
            refused = ("the proposed setting is not recommended (" + "; ".join(report["objections"])
                       + "); nothing was written")
        else:
            target = args.config or (config["source"] if config else os.path.join(os.getcwd(), "memory-router.toml"))
            if os.path.basename(target) == "pyproject.toml":
                refused = (f"refusing to edit {target}; paste this into its [tool.memory-router] table:\n"
                           + toml_snippet(proposed_values, "tool.memory-router").rstrip())
            else:
                report["written"] = write_settings(target, proposed_values)
    if args.json:
        from harness.report import print_json

        print_json(dict(report, refused=refused))
    else:
        _print_fit(report, report["grid"], args.write)
    if refused:
        raise RefusedError(refused)
    return 0


def write_settings(path, values):
    """Set ``values`` in the memory-router.toml at ``path`` (created if missing), keeping every
    other line; refuse if the file changed meanwhile or the edit would not read back exactly."""
    import tomllib

    from canaries.fit import update_toml_text
    from harness.fileops import Snapshot
    from router.config import validate_config

    snapshot = Snapshot(path)
    try:
        text = snapshot.data.decode("utf-8")
        before = tomllib.loads(text)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise InputError(f"cannot update config: {err}", path=path, fix="fix the file first") from None
    new_text = update_toml_text(text, values)
    try:
        after = tomllib.loads(new_text)
    except tomllib.TOMLDecodeError:
        after = None
    expected = dict(before, **values)
    if after != expected:
        raise RefusedError(f"could not update {path} without touching other keys; nothing was written",
                           fix="set these by hand: " + ", ".join(f"{k} = {v}" for k, v in values.items()))
    validate_config(after, path)
    snapshot.replace(new_text)
    return {"file": path, "keys": values}


def _print_fit(report, grid, write):
    from harness.report import console, table

    out = console()
    out.print("grid: " + "; ".join(f"{k} {list(v)}" for k, v in grid.items())
              + f" ({report['settings_tried']} settings, {report['settings_within_ceiling']} within the "
                f"false-priming ceiling {report['max_false_priming']:.3f} on the fitting part)", markup=False)
    held_label = (f"held out ({report['held_out_cases']} cases)" if report["holdout_fraction"] > 0
                  else "held out (none: --holdout 0 scores on the fitting cases)")
    rows = []
    for key in report["current"]["settings"]:
        rows.append((key, report["current"]["settings"][key], report["proposed"]["settings"][key]))
    for part, label in (("fitting", f"fitting ({report['fitting_cases']} cases)"), ("held_out", held_label)):
        for metric in ("f1", "false_priming_rate", "fact_recall", "mean_chars"):
            cur = report["current"][part][metric]
            new = report["proposed"][part][metric]
            fmt = _fmt_chars if metric == "mean_chars" else _fmt_ratio
            rows.append((f"{label}: {metric}", fmt(cur), fmt(new)))
    out.print(table(f"Fit: {_display(report['suite'])}", ["", "current", "proposed"], rows))
    if report["flips"]:
        flip_rows = [(f["id"], f"{f['current']['verdict']} ({', '.join(f['current']['routed']) or 'silent'})",
                      f"{f['proposed']['verdict']} ({', '.join(f['proposed']['routed']) or 'silent'})")
                     for f in report["flips"]]
        out.print(table("Cases that flip between the current and the proposed setting", ["id", "current", "proposed"],
                        flip_rows))
    if not report["changes"]:
        out.print("the current setting is already the best in the grid; nothing to change")
    elif report["recommended"]:
        out.print("recommended: " + ", ".join(f"{k} = {v['proposed']}" for k, v in report["changes"].items())
                  + ("" if write else " (run again with --write to save it)"), markup=False)
    else:
        out.print("not recommended: " + "; ".join(report["objections"]), markup=False)
    if report["written"]:
        out.print(f"wrote {', '.join(report['written']['keys'])} to {report['written']['file']}", markup=False)


# --------------------------------------------------------------------------- argparse


def _add_store_options(parser):
    parser.add_argument("--clusters", metavar="FILE",
                        help="cluster file for every suite (overrides each suite's 'clusters:'; default: the suite's "
                             "'clusters:', else the bundled example store)")
    parser.add_argument("--config", metavar="FILE",
                        help="config file whose routing settings are used (default: memory-router.toml or "
                             "[tool.memory-router] in pyproject.toml, in $CLAUDE_PROJECT_DIR or the current directory)")
    parser.add_argument("--facts-only", action="store_true",
                        help="ignore routes_to (and the xfail marks recorded against those cluster ids): judge a "
                             "cluster file with other ids, such as a built one, by what it injects")


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
    run.add_argument("suites", nargs="*", metavar="SUITE")
    _add_store_options(run)
    run.add_argument("--json", action="store_true", help="machine-readable output")
    run.add_argument("--junit", metavar="FILE", help="also write JUnit XML to FILE")
    run.add_argument("-k", dest="pattern", metavar="PATTERN",
                     help="run only cases whose id or one of whose tags contains PATTERN (case-insensitive)")
    run.add_argument("--save-baseline", metavar="FILE", help="store this run (JSON) for later --baseline comparisons")
    run.add_argument("--baseline", metavar="FILE",
                     help="compare with a stored run; exit 1 on any regression (a pass turned fail, or a changed "
                          "routing)")
    run.set_defaults(handler=cmd_run)

    evaluate = sub.add_parser(
        "eval", help="router metrics over a suite: per-cluster precision/recall/F1, false priming, fact recall, size",
        description="Per-cluster precision, recall and F1 (over cases with routes_to), the no-route false-priming "
                    "rate and recall (over silent cases), fact recall (over injects slugs), mean and p95 injected "
                    "characters per prompt, and the distribution of margins over the floor.")
    evaluate.add_argument("suite", metavar="SUITE")
    _add_store_options(evaluate)
    evaluate.add_argument("-k", dest="pattern", metavar="PATTERN", help="only cases whose id or tag contains PATTERN")
    evaluate.add_argument("--json", action="store_true", help="machine-readable output")
    evaluate.add_argument("--cv", type=int, metavar="K",
                          help="K-fold cross-validation of 'canary fit': fit the provider's constants on K-1 folds, "
                               "judge the held-out fold, pool the K held-out folds (cases fall in folds by a hash "
                               "of their id)")
    evaluate.add_argument("--max-false-priming", type=_fraction, default=0.05, metavar="RATE",
                          help="with --cv: the false-priming ceiling fit uses (default 0.05)")
    evaluate.set_defaults(handler=cmd_eval)

    fit_parser = sub.add_parser(
        "fit", help="grid-search floor, tag weight, member weight and line cap against a suite",
        description="Scores every setting of the grid on a deterministic fitting part of the suite, keeps those "
                    "under the false-priming ceiling, picks the best by routing F1, reports it and the current "
                    "setting on the held-out part, and lists the cases that flip. Changes nothing unless --write.")
    fit_parser.add_argument("suite", metavar="SUITE")
    _add_store_options(fit_parser)
    fit_parser.add_argument("--holdout", type=_fraction, default=0.3, metavar="FRACTION",
                            help="share of cases held out (by a hash of the case id; default 0.3; 0 = none)")
    fit_parser.add_argument("--max-false-priming", type=_fraction, default=0.05, metavar="RATE",
                            help="most share of silent cases allowed to get an injection (default 0.05)")
    fit_parser.add_argument("--write", action="store_true",
                            help="save a recommended setting to memory-router.toml (only the changed keys)")
    fit_parser.add_argument("--json", action="store_true", help="machine-readable output")
    fit_parser.set_defaults(handler=cmd_fit)

    try:
        from canaries.verdict_cli import register_verdict
    except ModuleNotFoundError as err:
        if err.name != "canaries.verdict_cli":
            raise
    else:
        register_verdict(sub)
