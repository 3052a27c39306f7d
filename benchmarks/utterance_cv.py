"""How the weighted provider counts utterances, chosen by cross-validation on the fitting suites.

    python benchmarks/utterance_cv.py [--k 5] [--grid full|small] [--json] [--top 10]

Only the example store's data: the bundled suites (canaries/spec.yaml, example.yaml,
paraphrase.yaml), canaries/nearmiss-fit.yaml (near-misses people write, for fitting) and
canaries/chatty.yaml (pasted logs), routed against the bundled example store with the blind
utterances benchmarks/enrichment/example-blind.tsv (written by a model from the cluster file
alone). The held-out stores are never read here.

Every point of the grid routes every case once (``run_cases``, the hook's own selection); then,
for each of K folds (``canaries.crossval.fold_of``), the best point on the other folds by
``OBJECTIVE`` routes the held-out fold, and the held-out results of all folds are pooled: each
case is judged by a setting chosen without it. Printed: the pooled held-out figures per kind,
the setting each fold chose, and the point chosen on all the cases (what the shipped defaults
are). Nothing here changes a file.

OBJECTIVE (issue 21's targets): a point is *feasible* when false priming is at most
``MAX_NEAR_MISS_PRIMING`` on the near-misses people write (kind ``near-miss-people``) and at most
``MAX_FALSE_PRIMING`` on the other silent cases; the points with the least excess over those two
ceilings (rounded to ``EXCESS_STEP``) first, then higher fact recall rounded to ``RECALL_STEP``
(about two cases: a smaller difference is noise, not a reason to send more bytes), then fewer
injected characters per routed prompt, then exact fact recall, then grid order. Earlier
objectives, and why they were left: a cap of 200 characters per routed prompt forced one line per
prompt (a ~50-character header plus a ~145-character member line is already 195), which cost
more fact recall than "without losing fact recall" allows; one pooled ceiling of 0.10 over all
silent cases let the near-misses people write stay at 0.30.
"""

import argparse
import itertools
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

from canaries.crossval import fold_of, kind_of, per_kind  # noqa: E402
from canaries.metrics import fact_recall  # noqa: E402
from canaries.runner import run_cases  # noqa: E402
from canaries.suite import load_suite  # noqa: E402
from router.config import default_settings  # noqa: E402
from router.score import build_routing_table  # noqa: E402
from router.weightedtable import extend_table  # noqa: E402
from utterancefiles import ENRICHMENT, read_blind  # noqa: E402

FITTING_SUITES = ("spec.yaml", "example.yaml", "paraphrase.yaml", "nearmiss-fit.yaml", "chatty.yaml")
BLIND = os.path.join(ENRICHMENT, "example-blind.tsv")
MAX_NEAR_MISS_PRIMING = 0.10
MAX_FALSE_PRIMING = 0.05
EXCESS_STEP = 0.05
RECALL_STEP = 0.01

GRIDS = {
    "full": {
        "utterance_weight": (0.5, 0.75, 1.0),
        "weighted_floor": (8.0, 10.0, 12.0),
        "utterance_coverage": (0.35, 0.45, 0.55),
        "utterance_strong": (0.0, 12.0, 15.0, 20.0),
        "utterance_line_share": (0.5, 0.9),
        "utterance_line_limit": (1, 2),
    },
    "small": {
        "utterance_weight": (0.5, 1.0),
        "utterance_coverage": (0.0, 0.45),
        "utterance_line_limit": (1, 3),
    },
}


def fitting_cases():
    suites = [load_suite(os.path.join(ROOT, "canaries", name)) for name in FITTING_SUITES
              if os.path.isfile(os.path.join(ROOT, "canaries", name))]
    index = suites[0].index
    for suite in suites[1:]:
        if os.path.abspath(suite.cluster_path) != os.path.abspath(suites[0].cluster_path):
            raise SystemExit(f"{suite.path} is not on the example store")
    return [case for suite in suites for case in suite.cases], index, [os.path.relpath(s.path, ROOT) for s in suites]


def _primed(rows):
    return sum(1 for r in rows if r.routed) / len(rows) if rows else 0.0


def figures(results):
    silent = [r for r in results if r.case.silent is True]
    people = [r for r in silent if kind_of(r.case) == "near-miss-people"]
    routed = [r for r in results if r.chars]
    return {
        "cases": len(results),
        "fact_recall": fact_recall(results)["recall"],
        "false_priming": _primed(silent),
        "near_miss_people_priming": _primed(people),
        "other_false_priming": _primed([r for r in silent if r not in people]),
        "routed_chars": sum(r.chars for r in routed) / len(routed) if routed else 0.0,
        "routed": len(routed),
    }


def objective(fig, order):
    excess = (max(0.0, fig["near_miss_people_priming"] - MAX_NEAR_MISS_PRIMING)
              + max(0.0, fig["other_false_priming"] - MAX_FALSE_PRIMING))
    recall = fig["fact_recall"] or 0.0
    return (-round(excess / EXCESS_STEP), round(recall / RECALL_STEP), -round(fig["routed_chars"]), recall, -order)


def grid_points(base, grid):
    keys = tuple(grid)
    for values in itertools.product(*(grid[key] for key in keys)):
        yield dict(base, **dict(zip(keys, values)))


def cross_validate(cases, table, base, grid, k=5):
    """(pooled held-out results, per-fold choices, every point's all-case results)."""
    points = list(grid_points(base, grid))
    results = [run_cases(cases, table, point) for point in points]
    held = []
    folds = []
    for fold in range(k):
        train = [i for i, case in enumerate(cases) if fold_of(case.id, k) != fold]
        test = [i for i, case in enumerate(cases) if fold_of(case.id, k) == fold]
        scored = [(objective(figures([rows[i] for i in train]), order), order) for order, rows in enumerate(results)]
        _key, best = max(scored)
        held.extend(results[best][i] for i in test)
        folds.append({"fold": fold, "cases": len(test), "chosen": {key: points[best][key] for key in grid},
                      "held_out": figures([results[best][i] for i in test])})
    return held, folds, points, results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--grid", choices=sorted(GRIDS), default="full")
    parser.add_argument("--top", type=int, default=10, help="points to list, best on all cases first")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    cases, index, names = fitting_cases()
    table = extend_table(build_routing_table(index), index, utterances=read_blind(BLIND))
    plain = extend_table(build_routing_table(index), index, utterances=None)
    base = dict(default_settings(), provider="weighted")
    grid = GRIDS[args.grid]
    held, folds, points, results = cross_validate(cases, table, base, grid, args.k)
    ranked = sorted(range(len(points)), key=lambda i: objective(figures(results[i]), i), reverse=True)
    without = run_cases(cases, plain, base)
    report = {
        "suites": names, "utterances": os.path.relpath(BLIND, ROOT), "k": args.k, "grid": grid,
        "objective": {"max_near_miss_people_priming": MAX_NEAR_MISS_PRIMING, "max_false_priming": MAX_FALSE_PRIMING,
                      "excess_step": EXCESS_STEP, "recall_step": RECALL_STEP},
        "without_utterances": {"all": figures(without), "by_kind": per_kind(without)},
        "held_out": {"all": figures(held), "by_kind": per_kind(held)},
        "folds": folds,
        "chosen_on_all": {"settings": {key: points[ranked[0]][key] for key in grid},
                          "all": figures(results[ranked[0]]), "by_kind": per_kind(results[ranked[0]])},
        "top": [{"settings": {key: points[i][key] for key in grid}, "all": figures(results[i])}
                for i in ranked[:args.top]],
    }
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
        return 0
    print(f"suites: {', '.join(names)}; utterances: {report['utterances']}; {len(points)} points, {args.k} folds")

    def line(name, fig):
        return (f"{name:34} fact recall {fig['fact_recall']:.3f}  false priming {fig['false_priming']:.3f} "
                f"(people {fig['near_miss_people_priming']:.2f}, other {fig['other_false_priming']:.2f})  "
                f"chars/routed {fig['routed_chars']:.0f}  ({fig['routed']} routed of {fig['cases']})")

    print(line("without utterances (today)", report["without_utterances"]["all"]))
    print(line("held out, pooled over folds", report["held_out"]["all"]))
    print(line("chosen on all cases (in-sample)", report["chosen_on_all"]["all"]))
    print("per kind (without -> held out): fact recall / false priming")
    for kind, fig in report["held_out"]["by_kind"].items():
        old = report["without_utterances"]["by_kind"].get(kind, {})

        def pair(key):
            a, b = old.get(key), fig.get(key)
            return "-" if b is None else f"{a:.2f}->{b:.2f}"

        print(f"  {kind:22} n={fig['cases']:3}  facts {pair('fact_recall')}  f.prime {pair('false_priming')}")
    for fold in folds:
        print(f"fold {fold['fold']}: {fold['chosen']}")
    print("best points on all cases:")
    for row in report["top"]:
        print("  " + line(json.dumps(row["settings"]), row["all"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
