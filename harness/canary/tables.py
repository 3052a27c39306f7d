"""The rich output of the ``canary`` commands for people (``--json`` prints the model's dicts):
``canary run``'s tables per suite and session, the baseline comparison, ``eval``'s metrics and
cross-validation, ``fit``'s proposal and ``verdict``'s evidence. Part of the face
(``harness.canary.cli``), apart because the tables alone fill a module."""

import os

from harness.canary import suiteargs
from harness.canary.suiteargs import fmt_chars, fmt_num, fmt_ratio

VERDICT_STYLES = {"pass": "green", "fail": "bold red", "xfail": "yellow", "xpass": "bold magenta"}


def display_path(path):
    """A path as people see it: a file shipped in the package (the bundled suites and example
    store) by its name inside the package (``canaries/spec.yaml``), wherever pip put it, so a
    checkout and an installed copy print the same lines; any other file relative to the current
    directory when below it, else absolute."""
    from canaries.suite import bundled_suite_dir

    root = os.path.dirname(os.path.abspath(bundled_suite_dir()))
    full = os.path.abspath(path)
    for package in ("canaries", "router"):
        if full.startswith(os.path.join(root, package) + os.sep):
            return os.path.relpath(full, root)
    return suiteargs.display_path(path)


def print_run(suite_results, counts, comparison, verbose=False, origins=None):
    """``canary run`` for people. By default one line per suite (its counts and the cluster file
    it was checked against), one line per failure (FAIL or XPASS, with every difference) and the
    total; ``verbose`` adds every case's table, every session's steps and the xfail residuals."""
    from rich.text import Text

    from harness.output import console

    out = console()
    origins = origins or [None] * len(suite_results)
    stores = {(r.suite.cluster_path, how) for r, how in zip(suite_results, origins)}
    one_store = len(stores) == 1
    if one_store:
        out.print(f"clusters: {store_name(*next(iter(stores)))}", markup=False, soft_wrap=True)
    for suite_result, how in zip(suite_results, origins):
        suite = suite_result.suite
        if verbose:
            print_cases(out, suite, suite_result.results)
        c = suite_result.counts()
        store = "" if one_store else f"; clusters: {store_name(suite.cluster_path, how)}"
        out.print(f"{display_path(suite.path)}: {c['pass']} passed, {c['fail']} failed, {c['xfail']} xfail, "
                  f"{c['xpass']} xpass{store}", markup=False, soft_wrap=True)
        if verbose and suite_result.sessions:
            print_sessions(out, suite, suite_result.sessions)
        shown = [r for r in suite_result.results + suite_result.sessions if verbose or r.verdict in ("fail", "xpass")]
        for result in shown:
            if result.verdict != "pass":
                out.print(failure_line(suite, result), soft_wrap=True)
        if verbose:
            out.print()
    if comparison is not None:
        print_comparison(out, comparison)
    failed = counts["fail"] + counts["xpass"]
    regressions = len(comparison["regressions"]) if comparison else 0
    summary = (f"{counts['total']} cases in {len(suite_results)} suite(s): {counts['pass']} passed, "
               f"{counts['fail']} failed, {counts['xfail']} xfail, {counts['xpass']} xpass")
    if regressions:
        summary += f"; {regressions} baseline regression(s)"
    style = "bold red" if failed or regressions else "bold green"
    out.print(Text(("FAILED: " if failed or regressions else "OK: ") + summary, style=style), soft_wrap=True)
    if not verbose:
        residuals = f" and the {counts['xfail']} xfail (known residuals)" if counts["xfail"] else ""
        out.print(f"-v lists every case, each session's steps{residuals}", markup=False, style="dim")


def store_name(cluster_path, how=None):
    """The cluster file a suite was checked against and how it was found."""
    from harness.context import is_bundled

    bundled = "the bundled example store"
    if is_bundled(cluster_path) and bundled not in (how or ""):
        how = f"{how}: {bundled}" if how else bundled
    return display_path(cluster_path) + (f" ({how})" if how else "")


def failure_line(suite, result):
    """One line for a case or session that did not pass: verdict, id, file:line, the xfail reason,
    and every difference, so a log holds the whole failure in one grep-able line."""
    from rich.text import Text

    kind = "session " if hasattr(result, "steps") else ""
    reason = f" (xfail: {result.case.xfail if kind else result.xfail})" if result.verdict == "xfail" else ""
    line = f"{result.verdict.upper()} {kind}{result.case.id} at {display_path(suite.path)}:{result.case.line}{reason}"
    if result.differences:
        line += ": " + "; ".join(result.differences)
    return Text(line, style=VERDICT_STYLES[result.verdict])


def print_cases(out, suite, results):
    """The full table, one row per case: what it expected and what the router did. Id, expected
    and got are stacked in one column so that an 80-column terminal keeps every id and slug
    whole."""
    from rich.text import Text

    from canaries.runner import defaults_summary, expected_summary
    from harness.output import table

    rows = []
    for result in results:
        lines = len(result.injected)
        got = (" ".join(result.routed) + f" ({lines} line{'' if lines == 1 else 's'})") if result.routed else "silent"
        expected = expected_summary(result.case, " ", suite.defaults) or "(the suite's defaults)"
        rows.append((Text(result.verdict.upper(), style=VERDICT_STYLES[result.verdict]), fmt_num(result.top_score),
                     fmt_num(result.margin), f"{result.case.id}\nexpected {expected}\ngot {got}"))
    limits = defaults_summary(suite.defaults)
    title = f"{display_path(suite.path)} (clusters: {display_path(suite.cluster_path)}"
    title += f"; every case: {limits})" if limits else ")"
    out.print(table(title, ["verdict", "score", "margin", "case"], rows, no_wrap=("verdict", "score", "margin")))


def print_sessions(out, suite, sessions):
    """One table per session case, a row per step: what was sent, what the session already held."""
    from rich.text import Text

    from harness.output import table

    for result in sessions:
        rows = []
        for step in result.steps:
            if step["kind"] != "prompt":
                rows.append((str(step["step"]), "", f"({step['kind']})"))
                continue
            failed = "FAIL" if step["differences"] else "ok"
            what = (f"{step['prompt'][:60]}\nsent: {', '.join(step['sent']) or '-'}\n"
                    f"already held: {', '.join(step['held']) or '-'}")
            rows.append((str(step["step"]), Text(failed, style="bold red" if step["differences"] else "green"), what))
        out.print(table(f"session {result.case.id} ({display_path(suite.path)}:{result.case.line}): each prompt "
                        "after the steps above it", ["step", "result", "prompt"], rows, no_wrap=("step", "result")))


def print_comparison(out, comparison):
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


def print_metrics(suite, metrics):
    from harness.output import console, table

    out = console()
    routing = metrics["routing"]
    rows = [(cid, row["support"], row["tp"], row["fp"], row["fn"], fmt_ratio(row["precision"]),
             fmt_ratio(row["recall"]), fmt_ratio(row["f1"])) for cid, row in routing["clusters"].items()]
    # Short headers, so the longest example id still leaves a row within 80 columns.
    out.print(table(f"Routing per cluster: {display_path(suite.path)} ({routing['cases']} cases with routes_to; "
                    "n: cases expecting the cluster, prec.: precision)",
                    ["cluster", "n", "tp", "fp", "fn", "prec.", "recall", "F1"], rows))
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


def print_cross_validation(report, cases):
    from harness.output import console, table

    out = console()
    grid = "; ".join(f"{k} {v}" for k, v in report["grid"].items()) or "nothing (this provider has no grid)"
    out.print(f"provider {report['provider']}; {report['k']}-fold cross-validation of canary fit over "
              f"{cases} cases; grid: {grid}; false-priming ceiling {report['max_false_priming']}", markup=False)
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


def print_fit(report, grid, write):
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


def print_verdict(result, transcript, record=None):
    from rich.text import Text

    from harness.output import console, table

    styles = {"PASS": "bold green", "FAIL": "bold red", "INCONCLUSIVE": "bold yellow"}
    out = console()
    head = Text(f"{result.verdict}", style=styles[result.verdict])
    head.append(f"  {result.case}  (Claude Code {result.version or '?'}, session {result.session_id or '?'})",
                style="default")
    out.print(head)
    for reason in result.reasons:
        out.print(f"- {reason}", markup=False)
    if result.evidence:
        rows = [(str(e.line) if e.line is not None else "-", e.what) for e in result.evidence]
        out.print(table(f"evidence ({transcript})", ["line", "what"], rows))
    if record:
        out.print(f"recorded in {record}", markup=False)
