"""``memory-router canary eval`` (router metrics over a suite) and ``canary fit`` (grid-search the
routing constants, optionally writing the chosen ones to memory-router.toml)."""

import os

from harness.canary.suiteargs import (
    add_store_options,
    display_path,
    fmt_chars,
    fmt_num,
    fmt_ratio,
    load_suites,
    no_cases,
    settings_from,
)
from router.errors import InputError, RefusedError


def cmd_eval(args):
    from canaries.metrics import suite_metrics
    from canaries.runner import run_suite

    _config, settings = settings_from(args)
    suite = load_suites([args.suite], cluster_path=args.clusters, facts_only=args.facts_only)[0]
    if args.cv is not None:
        return _eval_cv(args, suite, settings)
    result = run_suite(suite, settings, pattern=args.pattern)
    if not result.results:
        no_cases(args.pattern, [suite])
    metrics = suite_metrics(result.results)
    if args.json:
        from harness.output import print_json

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
        no_cases(args.pattern, [suite])
    if not 2 <= args.cv <= len(cases):
        raise InputError(f"--cv needs between 2 and {len(cases)} folds (one per case at most), got {args.cv}",
                         fix="use e.g. --cv 5")
    report = cross_validate(cases, build_table(suite.index), settings, k=args.cv,
                            max_false_priming=args.max_false_priming)
    report["suite"] = suite.path
    if args.json:
        from harness.output import print_json

        print_json(report)
        return 0
    from harness.output import console, table

    out = console()
    grid = "; ".join(f"{k} {v}" for k, v in report["grid"].items()) or "nothing (this provider has no grid)"
    out.print(f"provider {report['provider']}; {report['k']}-fold cross-validation of canary fit over "
              f"{len(cases)} cases; grid: {grid}; false-priming ceiling {report['max_false_priming']}", markup=False)
    held, current = report["held_out"], report["current"]["all_cases"]
    rows = [(name, fmt_ratio(held[key]), fmt_ratio(current[key]))
            for name, key in (("routing micro F1", "f1"), ("fact recall", "fact_recall"),
                              ("false-priming rate", "false_priming_rate"))]
    rows.append(("injected chars per prompt (mean)", fmt_chars(held["mean_chars"]), fmt_chars(current["mean_chars"])))
    out.print(table("Held out (each case judged by constants fitted without it) vs the current setting on all",
                    ["metric", "held out", "current, all cases"], rows))
    kinds = [(kind, row["cases"], fmt_ratio(row["cluster_hit"]), fmt_ratio(row["fact_recall"]),
              fmt_ratio(row["false_priming"]), fmt_chars(row["mean_chars"]))
             for kind, row in report["held_out_by_kind"].items()]
    out.print(table("Held out, per prompt kind", ["kind", "cases", "cluster hit", "fact recall", "false priming",
                                                   "mean chars"], kinds))
    for fold in report["folds"]:
        out.print(f"fold {fold['fold']}: {fold['held_out_cases']} held out; chose {fold['settings']}", markup=False)
    return 0


def _print_metrics(suite, metrics):
    from harness.output import console, table

    out = console()
    routing = metrics["routing"]
    rows = [(cid, row["support"], row["tp"], row["fp"], row["fn"], fmt_ratio(row["precision"]),
             fmt_ratio(row["recall"]), fmt_ratio(row["f1"])) for cid, row in routing["clusters"].items()]
    out.print(table(f"Routing per cluster: {display_path(suite.path)} ({routing['cases']} cases with routes_to)",
                    ["cluster", "support", "tp", "fp", "fn", "precision", "recall", "F1"], rows))
    silence = metrics["no_route"]
    facts = metrics["fact_recall"]
    chars = metrics["injected_chars"]
    micro = routing["micro"]
    summary = [
        ("micro precision / recall / F1",
         f"{fmt_ratio(micro['precision'])} / {fmt_ratio(micro['recall'])} / {fmt_ratio(micro['f1'])}"),
        ("macro F1", fmt_ratio(routing["macro_f1"])),
        ("no-route false-priming rate",
         f"{fmt_ratio(silence['false_priming_rate'])} ({silence['false_primed']} of {silence['silent_cases']} "
         "silent cases got an injection)"),
        ("no-route recall", fmt_ratio(silence["no_route_recall"])),
        ("no-route precision", fmt_ratio(silence["no_route_precision"])),
        ("fact recall", f"{fmt_ratio(facts['recall'])} ({facts['injected']} of {facts['facts']} injects slugs)"),
        ("injected chars per prompt: mean / p95 / max",
         f"{fmt_chars(chars['mean'])} / {fmt_num(chars['p95'])} / {fmt_num(chars['max'])}"),
        ("injected chars when something fires: mean",
         f"{fmt_chars(chars['mean_when_injected'])} ({chars['injected_prompts']} prompts)"),
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
    rows = [(fmt_num(value), counts.get("all", 0), counts.get("expect_route", 0), counts.get("expect_silent", 0))
            for value, counts in sorted(by_value.items())]
    out.print(table("Margin over the floor (top score - floor)", ["margin", "all", "expect route", "expect silent"],
                    rows))
    for group in ("expect_route", "expect_silent"):
        d = margins[group]
        out.print(f"{group}: n={d['n']} min={fmt_num(d['min'])} median={fmt_num(d['median'])} "
                  f"max={fmt_num(d['max'])}", markup=False)


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
    config, settings = settings_from(args)
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
        from harness.output import print_json

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
    from harness.output import console, table

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
            fmt = fmt_chars if metric == "mean_chars" else fmt_ratio
            rows.append((f"{label}: {metric}", fmt(cur), fmt(new)))
    out.print(table(f"Fit: {display_path(report['suite'])}", ["", "current", "proposed"], rows))
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


def register_eval(sub):
    evaluate = sub.add_parser(
        "eval", help="router metrics over a suite: per-cluster precision/recall/F1, false priming, fact recall, size",
        description="Per-cluster precision, recall and F1 (over cases with routes_to), the no-route false-priming "
                    "rate and recall (over silent cases), fact recall (over injects slugs), mean and p95 injected "
                    "characters per prompt, and the distribution of margins over the floor.")
    evaluate.add_argument("suite", metavar="SUITE", help="the suite file whose cases are scored")
    add_store_options(evaluate)
    evaluate.add_argument("-k", dest="pattern", metavar="PATTERN", help="only cases whose id or tag contains PATTERN")
    evaluate.add_argument("--json", action="store_true", help="machine-readable output")
    evaluate.add_argument("--cv", type=int, metavar="K",
                          help="K-fold cross-validation of 'canary fit': fit the provider's constants on K-1 folds, "
                               "judge the held-out fold, pool the K held-out folds (cases fall in folds by a hash "
                               "of their id)")
    evaluate.add_argument("--max-false-priming", type=_fraction, default=0.05, metavar="RATE",
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
    fit_parser.add_argument("--holdout", type=_fraction, default=0.3, metavar="FRACTION",
                            help="share of cases held out (by a hash of the case id; default 0.3; 0 = none)")
    fit_parser.add_argument("--max-false-priming", type=_fraction, default=0.05, metavar="RATE",
                            help="most share of silent cases allowed to get an injection (default 0.05)")
    fit_parser.add_argument("--write", action="store_true",
                            help="save a recommended setting to memory-router.toml (only the changed keys)")
    fit_parser.add_argument("--json", action="store_true", help="machine-readable output")
    fit_parser.set_defaults(handler=cmd_fit)
