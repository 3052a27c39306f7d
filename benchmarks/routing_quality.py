"""Routing quality per prompt kind, side by side: spec §10, the weighted provider (on the cluster
file alone), the weighted provider with utterances, and BM25.

    python benchmarks/routing_quality.py [SUITE ...] [--clusters FILE] [--utterances TSV] [--runs 15]
                                         [--no-latency] [--json]

SUITE defaults to the bundled suites. Every case is routed in-process by each provider with the
shipped constants (nothing here reads a user's config), against its own suite's cluster file;
cases are grouped by kind (``canaries.crossval.kind_of``: paraphrase, near-miss, ...). For each
provider and kind: cluster hit (every expected cluster routed), fact recall (``injects`` slugs
injected), false priming (silent cases that got an injection), mean injected characters. Hook
latency: the installed ``memory-router hook`` with a memory-router.toml naming the provider, on
the first suite's cluster file, median against the floor ``python3 -c json.load(stdin)``
measured interleaved in the same run.

The BM25 baseline (``bm25_provider.py``, needs the ``bench`` extra) has one constant, its
silence threshold; it is fitted here on the bundled suites only (same ceiling and ranking as
``canary fit``), whatever SUITEs are measured, so a held-out suite never tunes it.

``--clusters FILE`` judges another cluster file (a built one) against the suites by what it
injects (``--facts-only``: routes_to and the residual marks are dropped; cluster hit is then
not measured), so built and hand-made clusters can be compared on the same prompts.

``weighted + utterances`` routes with the weighted provider's defaults on a table that holds the
store's utterances: ``--utterances TSV`` (a blind ``slug<TAB>utterance`` file) when given, else the
blind file written for that store (``BLIND``: benchmarks/enrichment/heldout-gullwing.tsv and
heldout2-thistledown.tsv, written by a model given only the cluster file; see their README), else
the utterances file beside the cluster file (the bundled example store ships one). ``weighted``
is the same provider on the cluster file alone. A store with no utterances anywhere gets the same
figures in both columns. The utterance method was chosen on the example store only
(benchmarks/utterance_cv.py); nothing here is fitted on a held-out figure.

Targets on held-out data (issue 14): fact recall >= 0.85, paraphrase fact recall >= 0.5, false
priming <= 0.10; for ``weighted + utterances`` (issue 21): fact recall >= 0.90, paraphrase >= 0.65,
false priming <= 0.05 (kinds other than near-miss-people), near-miss-people priming <= 0.10, mean
injected characters per routed prompt <= 200. Reported per provider; the exit code is 0 whatever
the figures.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from canaries.crossval import kind_of, per_kind  # noqa: E402
from canaries.fit import score  # noqa: E402
from canaries.metrics import fact_recall  # noqa: E402
from canaries.runner import run_cases  # noqa: E402
from canaries.suite import bundled_suites, load_suite  # noqa: E402
from router.config import default_settings  # noqa: E402
from router.routing.score import build_routing_table  # noqa: E402
from router.routing.weightedtable import extend_table  # noqa: E402
from utterancefiles import ENRICHMENT, read_blind, read_near_misses, store_copy_with_utterances  # noqa: E402

BM25 = "bm25_provider:make"
UTTERANCES = "weighted + utterances"
# What shipped before the veto (issue 21's re-fit): the coverage gate alone, no near-misses used.
LANDED = "utterances, landed"
LANDED_SETTINGS = {"veto": False, "utterance_coverage": 0.55, "utterance_floor": 10.0}
# The blind utterances written for each held-out store (by a model given only its cluster file).
BLIND = {
    os.path.join(HERE, "heldout", "clusters.md"): os.path.join(ENRICHMENT, "heldout-gullwing.tsv"),
    os.path.join(HERE, "heldout2", "clusters.md"): os.path.join(ENRICHMENT, "heldout2-thistledown.tsv"),
}
# The near-misses written blind for each store (a model given only its cluster file; never a suite).
NEAR_MISSES = {
    os.path.join(HERE, "heldout", "clusters.md"): os.path.join(ENRICHMENT, "nearmiss-gullwing.tsv"),
    os.path.join(HERE, "heldout2", "clusters.md"): os.path.join(ENRICHMENT, "nearmiss-thistledown.tsv"),
    os.path.join(os.path.dirname(HERE), "router", "data", "example", "memory-layer1-clusters.md"):
        os.path.join(ENRICHMENT, "nearmiss-example.tsv"),
}
BM25_GRID = {"bm25_threshold": (1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0)}
TARGETS = {"fact_recall": 0.85, "paraphrase_recall": 0.5, "false_priming": 0.10}
# Issue 28's targets (held-out stores, with utterances and near-misses): false priming counted over
# every silent case, the near-misses people write included.
UTTERANCE_TARGETS = {"fact_recall": 0.80, "paraphrase_recall": 0.45, "all_silent_priming": 0.08,
                     "routed_chars": 250}


def blind_file(cluster_path, explicit=None):
    """The blind utterances file the ``weighted + utterances`` column uses for a store, or None."""
    return explicit or BLIND.get(os.path.abspath(cluster_path))


def utterances_of(cluster_path, index, explicit=None):
    """``{slug: texts}`` the ``weighted + utterances`` column routes on, and where they came from."""
    from router.config import utterances_path
    from router.store.utterances import read_utterances, utterances_by_slug

    blind = blind_file(cluster_path, explicit)
    if blind:
        return read_blind(blind), os.path.relpath(blind)
    beside = utterances_path(cluster_path)
    if os.path.isfile(beside):
        return utterances_by_slug(read_utterances(beside)), os.path.relpath(beside)
    return {}, None


def _load(paths, cluster_path=None, utterances=None):
    """(suites, {cluster file: plain table}, {cluster file: table with utterances}, {cluster file: source})."""
    suites = [load_suite(path, cluster_path=cluster_path, facts_only=cluster_path is not None) for path in paths]
    tables = {}
    rich = {}
    sources = {}
    for suite in suites:
        key = os.path.abspath(suite.cluster_path)
        if key in tables:
            continue
        index = suite.index
        tables[key] = extend_table(build_routing_table(index), index, utterances=None)
        found, sources[key] = utterances_of(key, index, utterances)
        near = NEAR_MISSES.get(key)
        rich[key] = extend_table(build_routing_table(index), index, utterances=found or None,
                                 **({"near_misses": read_near_misses(near)} if near else {}))
    return suites, tables, rich, sources


def run_bm25_cases(cases, table, settings):
    """``run_cases`` for the BM25 baseline, run in this process: the hook runs a custom provider in
    a child interpreter per prompt (router/providers/providerproc.py), which is the hook's isolation, not
    part of what the provider decides; a child per case would make the fit take minutes. The
    decision goes through the same check and completion as the hook's (``router.providers.provider``)."""
    import bm25_provider

    from canaries.runner import evaluate
    from router.providers.provider import _complete, check_decision
    from router.hooks.session import fresh

    provider = bm25_provider.make(settings)
    results = []
    for case in cases:
        request = {"prompt": case.prompt, "cwd": None, "session_id": None, "table": table, "cluster_file": None,
                   "settings": settings}
        decision = provider(request)
        check_decision(decision)
        results.append(evaluate(case, fresh(_complete(decision, settings, BM25, render=True), case.prompt, settings)))
    return results


def route_cases(cases, table, settings):
    if settings.get("provider") == BM25:
        return run_bm25_cases(cases, table, settings)
    return run_cases(cases, table, settings)


def run_provider(suites, tables, settings):
    results = []
    for suite in suites:
        results.extend(route_cases(suite.cases, tables[os.path.abspath(suite.cluster_path)], settings))
    return results


def overall(results):
    routed = [r for r in results if r.case.routes_to]
    silent = [r for r in results if r.case.silent is True]
    people = [r for r in silent if kind_of(r.case) == "near-miss-people"]
    other = [r for r in silent if kind_of(r.case) != "near-miss-people"]
    sent = [r for r in results if r.chars]
    return {
        "cases": len(results),
        "cluster_hit": sum(1 for r in routed if set(r.case.routes_to) <= set(r.routed)) / len(routed) if routed else None,
        "fact_recall": fact_recall(results)["recall"],
        "false_priming": sum(1 for r in other if r.routed) / len(other) if other else None,
        "near_miss_people_priming": sum(1 for r in people if r.routed) / len(people) if people else None,
        "all_silent_priming": sum(1 for r in silent if r.routed) / len(silent) if silent else None,
        "mean_chars": sum(r.chars for r in results) / len(results) if results else None,
        "routed_chars": sum(r.chars for r in sent) / len(sent) if sent else None,
    }


def fit_bm25(settings):
    """The BM25 threshold canary fit would choose on the bundled suites."""
    suites, tables, _rich, _sources = _load(bundled_suites())
    cases = [case for suite in suites for case in suite.cases]
    if len(tables) != 1:
        raise SystemExit("the bundled suites no longer share one cluster file; fit_bm25 needs one table")
    (table,) = tables.values()
    # canary fit's choice (canaries.fit.best_setting: false priming at most 0.05, then F1, fact
    # recall, fewer characters, grid order), routed in this process.
    best = None
    for order, threshold in enumerate(BM25_GRID["bm25_threshold"]):
        figures = score(run_bm25_cases(cases, table, dict(settings, bm25_threshold=threshold)))
        if figures["false_priming_rate"] is not None and figures["false_priming_rate"] > 0.05 + 1e-12:
            continue
        key = (figures["f1"] or -1.0, figures["fact_recall"] or -1.0, -figures["mean_chars"], -order)
        if best is None or key > best[0]:
            best = (key, threshold)
    return best[1] if best else settings.get("bm25_threshold") or 4.0


def providers(base):
    out = {"spec": dict(base, provider="spec"), "weighted": dict(base, provider="weighted"),
           LANDED: dict(base, provider="weighted", **LANDED_SETTINGS), UTTERANCES: dict(base, provider="weighted")}
    try:
        import rank_bm25  # noqa: F401
    except ImportError:
        print("BM25 baseline skipped: pip install '.[bench]'", file=sys.stderr)
        return out
    bm25 = dict(base, provider=BM25, provider_timeout_ms=600_000, bm25_threshold=None)
    bm25["bm25_threshold"] = fit_bm25(bm25)
    out["bm25"] = bm25
    return out


def measure_latency(cluster_file, prompt, names, runs, blind=None):
    """Hook medians per provider against the floor. ``weighted`` runs with ``utterances = false``;
    ``weighted + utterances`` on a copy of the store with the utterances file beside it (from
    ``blind`` when given, else the store's own, which the bundled example store ships)."""
    exe = shutil.which("memory-router", path=os.path.dirname(sys.executable)) or shutil.which("memory-router")
    if exe is None:
        raise SystemExit("install the project first: the memory-router console script was not found")
    payload = json.dumps({"session_id": "bench", "cwd": tempfile.gettempdir(), "hook_event_name": "UserPromptSubmit",
                          "prompt": prompt}).encode()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, MEMORY_ROUTER_CACHE_DIR=os.path.join(tmp, "cache"),
                   PYTHONPATH=os.pathsep.join(filter(None, [HERE, os.environ.get("PYTHONPATH")])))
        env.pop("MEMORY_ROUTER_LOG", None)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's install has bytecode caches
        commands = {"floor": [sys.executable, "-c", "import json, sys; json.load(sys.stdin)"]}
        rich = cluster_file
        if blind:
            os.makedirs(os.path.join(tmp, "store"))
            rich = store_copy_with_utterances(cluster_file, blind, os.path.join(tmp, "store"),
                                              near_path=NEAR_MISSES.get(os.path.abspath(cluster_file)))
        for name, provider in names.items():
            config = os.path.join(tmp, f"{name.replace(' ', '_').replace('+', 'and')}.toml")
            with open(config, "w", encoding="utf-8") as handle:
                handle.write(f'provider = "{provider}"\n' + ("utterances = false\n" if name == "weighted" else "")
                             + ("".join(f"{k} = {str(v).lower()}\n" for k, v in LANDED_SETTINGS.items())
                                if name == LANDED else ""))
            store = rich if name in (UTTERANCES, LANDED) else cluster_file
            commands[name] = [exe, "hook", "--clusters", store, "--config", config]
        for cmd in commands.values():  # build the caches
            subprocess.run(cmd, input=payload, capture_output=True, env=env)
        time.sleep(2.1)  # nothing is cached for a file changed in the last 2 s
        for cmd in commands.values():
            subprocess.run(cmd, input=payload, capture_output=True, env=env)
        samples = {name: [] for name in commands}
        for _ in range(runs):
            for name, cmd in commands.items():
                start = time.perf_counter()
                subprocess.run(cmd, input=payload, capture_output=True, env=env)
                samples[name].append(time.perf_counter() - start)
    floor = statistics.median(samples.pop("floor"))
    return {name: {"median_ms": statistics.median(v) * 1000, "x_floor": statistics.median(v) / floor}
            for name, v in samples.items()} | {"floor_ms": floor * 1000}


def targets(figures, wanted=TARGETS):
    kinds = figures["by_kind"]
    para = kinds.get("paraphrase", {}).get("fact_recall")
    all_ = figures["all"]
    checks = {"fact_recall": (all_["fact_recall"], ">="), "paraphrase_recall": (para, ">="),
              "false_priming": (all_["false_priming"], "<="),
              "near_miss_people_priming": (all_.get("near_miss_people_priming"), "<="),
              "all_silent_priming": (all_.get("all_silent_priming"), "<="),
              "routed_chars": (all_.get("routed_chars"), "<=")}
    out = {}
    for key, (value, op) in checks.items():
        if key not in wanted:
            continue
        target = wanted[key]
        met = None if value is None else (value >= target if op == ">=" else value <= target)
        out[key] = {"value": value, "target": f"{op} {target}", "met": met}
    return out


def _fmt(value, chars=False):
    if value is None:
        return "-"
    return f"{value:.0f}" if chars else f"{value:.2f}"


def print_report(report):
    names = list(report["providers"])
    kinds = sorted({k for p in report["providers"].values() for k in p["by_kind"]})
    print(f"suites: {', '.join(report['suites'])}")
    if "bm25" in report["settings"]:
        print(f"bm25 threshold (fitted on the bundled suites): {report['settings']['bm25']['bm25_threshold']}")
    if report.get("utterances"):
        print("utterances (weighted + utterances): " + "; ".join(f"{os.path.relpath(k)}: {v or 'none'}"
                                                             for k, v in report["utterances"].items()))
    metrics = (("cluster_hit", "hit"), ("fact_recall", "facts"), ("false_priming", "f.prime"),
               ("routed_chars", "ch/rt"))
    short = {"spec": "spec", "weighted": "wtd", LANDED: "land", UTTERANCES: "w+ut", "bm25": "bm25"}
    head = f"{'kind':22} {'n':>4} " + " ".join(f"{label + ' ' + short.get(n, n[:4]):>13}" for _k, label in metrics
                                               for n in names)
    print(head)
    for kind in kinds + ["ALL"]:
        rows = [report["providers"][n]["all" if kind == "ALL" else "by_kind"] for n in names]
        if kind != "ALL":
            rows = [r.get(kind, {}) for r in rows]
        n = rows[0].get("cases", 0)
        cells = [f"{_fmt(r.get(key), key.endswith('chars')):>13}" for key, _label in metrics for r in rows]
        print(f"{kind:22} {n:>4} " + " ".join(cells))
    latency = report.get("latency")
    if latency:
        print(f"hook latency on {report['latency_store']} (floor {latency['floor_ms']:.1f} ms): "
              + "; ".join(f"{n} {latency[n]['median_ms']:.1f} ms = {latency[n]['x_floor']:.2f}x" for n in names))
    for n in names:
        checks = report["providers"][n]["targets"]
        print(f"targets, {n}: " + "; ".join(
            f"{key} {_fmt(c['value'])} (target {c['target']}): {'met' if c['met'] else 'MISSED' if c['met'] is False else 'n/a'}"
            for key, c in checks.items()))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("suites", nargs="*", metavar="SUITE", help="canary suites (default: the bundled ones)")
    parser.add_argument("--clusters", metavar="FILE",
                        help="judge this cluster file instead of each suite's, by what it injects")
    parser.add_argument("--utterances", metavar="TSV",
                        help="blind slug<TAB>utterance file for the weighted + utterances column (default: the "
                             "store's registered blind file, else the utterances file beside the cluster file)")
    parser.add_argument("--runs", type=int, default=15, help="hook runs per provider for the latency column")
    parser.add_argument("--no-latency", action="store_true", help="skip the hook latency column")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)

    paths = args.suites or bundled_suites()
    suites, tables, rich, sources = _load(paths, args.clusters, args.utterances)
    settings = providers(default_settings())
    report = {"suites": [os.path.relpath(p) for p in paths], "settings": {}, "providers": {}, "utterances": sources}
    for name, provider_settings in settings.items():
        results = run_provider(suites, rich if name in (UTTERANCES, LANDED) else tables, provider_settings)
        figures = {"all": overall(results), "by_kind": per_kind(results)}
        figures["targets"] = targets(figures, UTTERANCE_TARGETS if name in (UTTERANCES, LANDED) else TARGETS)
        report["providers"][name] = figures
        report["settings"][name] = {k: v for k, v in provider_settings.items()
                                    if k in ("provider", "bm25_threshold") or k.startswith(("weighted_", "score_"))}
    if not args.no_latency:
        first = next((c for c in suites[0].cases if c.routes_to), suites[0].cases[0])
        report["latency_store"] = os.path.relpath(suites[0].cluster_path)
        report["latency"] = measure_latency(suites[0].cluster_path, first.prompt,
                                            {n: s["provider"] for n, s in settings.items()}, args.runs,
                                            blind_file(suites[0].cluster_path, args.utterances))
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
    else:
        print_report(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
