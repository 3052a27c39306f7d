"""How the weighted provider counts utterances, chosen by cross-validation on the fitting suites.

    python benchmarks/utterance_cv.py [--k 5] [--grid full|small] [--json] [--top 10]

Only the example store's data: the bundled suites (canaries/spec.yaml, example.yaml,
paraphrase.yaml) and the fitting suites in benchmarks/fitting/ (kept out of canaries/, which
pytest collects as tests): nearmiss-fit.yaml (near-misses people write), chatty.yaml (pasted
logs) and paraphrase-strict.yaml (paraphrases sharing no decisive word with their memory's line
or its cluster's tags, written blind: the kind the held-out stores show and the bundled
paraphrase suite lacks), routed against the bundled example store with the blind utterances
benchmarks/enrichment/example-blind.tsv (written by a model from the cluster file alone). The
held-out stores are never read here.

Candidates come in families (``GRIDS``): ``bags`` (the utterance postings of
``router.routing.uttertable``: each member's utterances one bag, idf among bags, x ``utterance_weight``;
the near-miss gate on), ``bags-no-gate`` (the same with ``utterance_coverage = 0``) and
``learned`` (issue 21's experiment: the utterances fed to the weighted provider as learned terms
of their member, no other change) and ``learned-gated`` (what ships: utterance words count as words
of their member, as learned terms do, through ``router.routing.uttertable.add_member_words``, plus the
near-miss gate and the line choice by member evidence; ``utterance_weight = 0``). Every point routes every case once (``run_cases``, the
hook's own selection). For each family, and for all families together, K-fold CV: on each fold
the best point on the other folds by ``objective`` routes the held-out fold, and the held-out
results of all folds are pooled, so each case is judged by a setting chosen without it. The
family whose pooled figures are best by ``objective`` is the method; its point chosen on all
cases is what the shipped defaults are. Nothing here changes a file.

OBJECTIVE (fixed before any held-out figure of this fit was looked at): a point is *feasible*
when false priming is at most ``MAX_NEAR_MISS_PRIMING`` on the near-misses people write (kind
``near-miss-people``) and at most ``MAX_FALSE_PRIMING`` on the other silent cases; feasible
points first (then the least excess over the two ceilings), then the highest fact recall over
all kinds, then fewer injected characters per routed prompt, then grid order.
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
from router.routing.score import build_routing_table  # noqa: E402
from router.routing.weightedtable import extend_table  # noqa: E402
from utterancefiles import ENRICHMENT, read_blind  # noqa: E402

BUNDLED = ("spec.yaml", "example.yaml", "paraphrase.yaml")
FITTING = ("nearmiss-fit.yaml", "chatty.yaml", "paraphrase-strict.yaml")
FITTING_DIR = os.path.join(HERE, "fitting")
BLIND = os.path.join(ENRICHMENT, "example-blind.tsv")
MAX_NEAR_MISS_PRIMING = 0.10
MAX_FALSE_PRIMING = 0.05
# Figures are shares of a few hundred cases; this much is float noise, not an excess.
EPSILON = 1e-9

MEMBER_WORD_POSTINGS = ("utterance_term_postings", "utterance_fuzzy_postings", "utterance_line_postings")
# family -> (table, grid); the tables are ``tables``' keys.
GRIDS = {
    "full": {
        "bags": ("bags", {
            "utterance_weight": (0.5, 0.75, 1.0, 1.5, 2.0, 3.0),
            "utterance_coverage": (0.35, 0.45, 0.55),
            "utterance_strong": (0.0, 15.0),
            "utterance_line_share": (0.5,),
            "utterance_line_limit": (1, 2),
            "utterance_floor": (8.0, 10.0),
        }),
        "bags-no-gate": ("bags", {
            "utterance_weight": (0.5, 0.75, 1.0, 1.5, 2.0, 3.0),
            "utterance_coverage": (0.0,),
            "utterance_line_share": (0.5, 0.9),
            "utterance_line_limit": (1, 2, 3, 0),
            "utterance_floor": (8.0, 10.0, 12.0),
        }),
        "learned": ("learned", {
            "weighted_floor": (8.0, 10.0, 12.0),
        }),
        "learned-gated": ("shipped", {
            "utterance_weight": (0.0,),
            "utterance_coverage": (0.35, 0.45, 0.55),
            "utterance_strong": (0.0, 15.0),
            "utterance_line_share": (0.5,),
            "utterance_line_limit": (1, 2, 0),
            "utterance_floor": (8.0, 10.0, 12.0),
        }),
    },
    "small": {
        "bags": ("bags", {"utterance_weight": (0.5, 1.0), "utterance_coverage": (0.0, 0.45)}),
        "learned-gated": ("shipped", {"utterance_coverage": (0.0, 0.55)}),
        "learned": ("learned", {"weighted_floor": (8.0,)}),
    },
}


def suite_paths():
    paths = [os.path.join(ROOT, "canaries", name) for name in BUNDLED]
    paths += [os.path.join(FITTING_DIR, name) for name in FITTING]
    return [path for path in paths if os.path.isfile(path)]


def fitting_cases():
    suites = [load_suite(path) for path in suite_paths()]
    index = suites[0].index
    for suite in suites[1:]:
        if os.path.abspath(suite.cluster_path) != os.path.abspath(suites[0].cluster_path):
            raise SystemExit(f"{suite.path} is not on the example store")
    return [case for suite in suites for case in suite.cases], index, [os.path.relpath(s.path, ROOT) for s in suites]


def tables(index, blind):
    """The tables the families route on: plain (no utterances), shipped (what the hook builds with
    utterances), bags (the same without ``router.routing.uttertable.add_member_words``' postings: utterance
    words are evidence only through ``utterance_weight``), learned (utterances as learned terms)."""
    shipped = extend_table(build_routing_table(index), index, utterances=blind)
    bags = {key: value for key, value in shipped.items() if key not in MEMBER_WORD_POSTINGS}
    return {
        "plain": extend_table(build_routing_table(index), index, utterances=None),
        "shipped": shipped,
        "bags": bags,
        "learned": extend_table(build_routing_table(index), index, learned_terms=blind, utterances=None),
    }


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
    feasible = excess <= EPSILON
    return (feasible, -round(excess, 9), round(fig["fact_recall"] or 0.0, 9), -round(fig["routed_chars"], 6), -order)


def grid_points(families):
    """[(family, table name, settings overrides)] of every family's grid, in order."""
    out = []
    for family, (table, grid) in families.items():
        keys = tuple(grid)
        for values in itertools.product(*(grid[key] for key in keys)):
            out.append((family, table, dict(zip(keys, values))))
    return out


def cross_validate(cases, results, members, k):
    """(pooled held-out results, per-fold choices) of choosing among the points ``members``
    (indexes into ``results``) on the other folds."""
    held = [None] * len(cases)
    folds = []
    for fold in range(k):
        train = [i for i, case in enumerate(cases) if fold_of(case.id, k) != fold]
        test = [i for i, case in enumerate(cases) if fold_of(case.id, k) == fold]
        best = max(members, key=lambda m: objective(figures([results[m][i] for i in train]), m))
        for i in test:
            held[i] = results[best][i]
        folds.append({"fold": fold, "cases": len(test), "chosen": best,
                      "held_out": figures([results[best][i] for i in test])})
    return held, folds


def run(k, grid_name, top):
    cases, index, names = fitting_cases()
    built = tables(index, read_blind(BLIND))
    base = dict(default_settings(), provider="weighted")
    points = grid_points(GRIDS[grid_name])
    results = [run_cases(cases, built[table], dict(base, **over)) for _family, table, over in points]

    def named(i):
        family, _table, over = points[i]
        return dict(over, method=family)

    families = {}
    for family in GRIDS[grid_name]:
        members = [i for i, point in enumerate(points) if point[0] == family]
        held, folds = cross_validate(cases, results, members, k)
        chosen = max(members, key=lambda m: objective(figures(results[m]), m))
        families[family] = {"held_out": {"all": figures(held), "by_kind": per_kind(held)},
                            "folds": [dict(f, chosen=named(f["chosen"])) for f in folds],
                            "chosen_on_all": {"settings": named(chosen), "all": figures(results[chosen]),
                                              "by_kind": per_kind(results[chosen])}}
    method = max(families, key=lambda f: (objective(families[f]["held_out"]["all"], 0), -list(families).index(f)))
    held, folds = cross_validate(cases, results, list(range(len(points))), k)
    ranked = sorted(range(len(points)), key=lambda i: objective(figures(results[i]), i), reverse=True)
    without = run_cases(cases, built["plain"], base)
    return {
        "suites": names, "utterances": os.path.relpath(BLIND, ROOT), "k": k, "points": len(points),
        "objective": {"max_near_miss_people_priming": MAX_NEAR_MISS_PRIMING, "max_false_priming": MAX_FALSE_PRIMING},
        "without_utterances": {"all": figures(without), "by_kind": per_kind(without)},
        "families": families,
        "method": method,
        "shipped": families[method]["chosen_on_all"],
        "held_out": {"all": figures(held), "by_kind": per_kind(held)},
        "folds": [dict(f, chosen=named(f["chosen"])) for f in folds],
        "top": [{"settings": named(i), "all": figures(results[i])} for i in ranked[:top]],
    }


def line(name, fig):
    return (f"{name:34} fact recall {fig['fact_recall']:.3f}  false priming {fig['false_priming']:.3f} "
            f"(people {fig['near_miss_people_priming']:.2f}, other {fig['other_false_priming']:.2f})  "
            f"chars/routed {fig['routed_chars']:.0f}  ({fig['routed']} routed of {fig['cases']})")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--grid", choices=sorted(GRIDS), default="full")
    parser.add_argument("--top", type=int, default=10, help="points to list, best on all cases first")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = run(args.k, args.grid, args.top)
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
        return 0
    print(f"suites: {', '.join(report['suites'])}; utterances: {report['utterances']}; "
          f"{report['points']} points, {args.k} folds")
    print(line("without utterances (today)", report["without_utterances"]["all"]))
    for family, found in report["families"].items():
        print(line(f"CV pooled: {family}", found["held_out"]["all"]))
    print(line("CV pooled: all families together", report["held_out"]["all"]))
    print(f"method: {report['method']}; shipped (chosen on all cases): {json.dumps(report['shipped']['settings'])}")
    print(line("  in-sample", report["shipped"]["all"]))
    kinds = report["families"][report["method"]]["held_out"]["by_kind"]
    print(f"per kind (without -> CV pooled {report['method']}): fact recall / false priming")
    for kind, fig in kinds.items():
        old = report["without_utterances"]["by_kind"].get(kind, {})

        def pair(key):
            a, b = old.get(key), fig.get(key)
            return "-" if b is None else f"{a:.2f}->{b:.2f}"

        print(f"  {kind:22} n={fig['cases']:3}  facts {pair('fact_recall')}  f.prime {pair('false_priming')}")
    for fold in report["families"][report["method"]]["folds"]:
        print(f"fold {fold['fold']}: {fold['chosen']}")
    print("best points on all cases:")
    for row in report["top"]:
        print("  " + line(json.dumps(row["settings"]), row["all"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
