"""The nearest-exemplar veto, chosen by cross-validation on the example store's fitting data.

Superseded for choosing the shipped constants by benchmarks/transfer_cv.py (issue 34): constants
chosen here, on one store and judged on the engine's own near-misses, did not transfer to other
stores. Kept to reproduce issue 28's figures (docs/providers.md).

    python benchmarks/veto_cv.py [--k 5] [--json] [--top 10]

The data is utterance_cv.py's (the bundled suites and benchmarks/fitting/ on the example store,
with the blind utterances benchmarks/enrichment/example-blind.tsv), plus the near-misses written
blind for the example store (benchmarks/enrichment/nearmiss-example.tsv: a model given only the
cluster file) and the shipped generic negatives (router/data/generic_negatives.txt). The held-out
stores are never read here.

Families (``FAMILIES``): ``landed`` (what shipped before the veto: the near-miss coverage gate,
no veto), ``recall`` (the recall side alone: no gate, no veto), ``recall+veto`` (no gate, the
veto over its k and margin) and ``gate+veto`` (a lower coverage gate kept as one more feature,
then the veto), each over the utterance floor. K-fold CV as utterance_cv.py: on each fold the
best point on the other folds by ``objective`` routes the held-out fold; pooled held-out results
judge each family. The family best by ``objective`` on its pooled held-out results is the method;
its point chosen on all cases is what ships.

OBJECTIVE (fixed before any held-out figure of this fit was looked at): a point is feasible when
false priming is at most ``MAX_NEAR_MISS_PRIMING`` on the near-misses people write and at most
``MAX_FALSE_PRIMING`` on the other silent cases and no prompt kind among ``PLAIN_KINDS`` recalls
fewer facts than the router without utterances; feasible points first (then the least excess),
then fact recall over all kinds, then paraphrase recall, then fewer characters per routed prompt.
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

from canaries.cases import Case  # noqa: E402
from canaries.crossval import fold_of, per_kind  # noqa: E402
from canaries.metrics import fact_recall  # noqa: E402
from canaries.runner import run_cases  # noqa: E402
from router.config import default_settings  # noqa: E402
from router.routing.score import build_routing_table  # noqa: E402
from router.routing.veto import MEASURES  # noqa: E402
from router.routing.weightedtable import extend_table  # noqa: E402
from utterance_cv import BLIND, figures, fitting_cases  # noqa: E402
from utterancefiles import ENRICHMENT, read_blind, read_near_misses  # noqa: E402

NEAR_MISSES = os.path.join(ENRICHMENT, "nearmiss-example.tsv")
MAX_NEAR_MISS_PRIMING = 0.08
MAX_ENGINE_PRIMING = 0.08
MAX_FALSE_PRIMING = 0.05
ENGINE = "near-miss-engine"
ENGINE_UTTERANCE = "utterance-engine"
PLAIN_KINDS = ("direct", "inflection", "identifier", "member")
EPSILON = 1e-9
FLOORS = (6.0, 8.0, 10.0, 12.0)
VETO_FLOORS = (6.0, 8.0, 10.0)
FAMILIES = {
    "landed": {"veto": (False,), "utterance_coverage": (0.55,), "utterance_floor": FLOORS},
    "recall": {"veto": (False,), "utterance_coverage": (0.0,), "utterance_floor": FLOORS},
    "recall+veto": {"veto": (True,), "utterance_coverage": (0.0,), "utterance_floor": VETO_FLOORS,
                    "veto_measure": ("coverage",), "veto_k": (1, 3, 5), "veto_margin": (-0.1, 0.0, 0.1),
                    "veto_power": (1.0, 2.0), "veto_strong": (15.0,), "veto_floor": (0.0, 0.2),
                    "veto_protect": (0.8, 0.95)},
    "gate+veto": {"veto": (True,), "utterance_coverage": (0.35, 0.45), "utterance_floor": VETO_FLOORS,
                  "veto_measure": ("coverage",), "veto_k": (1, 3, 5), "veto_margin": (-0.1, 0.0, 0.1),
                  "veto_power": (1.0, 2.0), "veto_strong": (15.0,), "veto_floor": (0.0, 0.2),
                  "veto_protect": (0.8, 0.95)},
}


def plain_floor(results, plain):
    """Per kind in ``PLAIN_KINDS``: how far fact recall falls below the plain router's (0: not)."""
    mine, base = per_kind(results), per_kind(plain)
    return {kind: max(0.0, (base[kind]["fact_recall"] or 0) - (mine[kind]["fact_recall"] or 0))
            for kind in PLAIN_KINDS if kind in base and kind in mine}


def objective(fig, below, order):
    excess = (max(0.0, fig["near_miss_people_priming"] - MAX_NEAR_MISS_PRIMING)
              + max(0.0, fig["engine_priming"] - MAX_ENGINE_PRIMING)
              + max(0.0, fig["other_false_priming"] - MAX_FALSE_PRIMING) + sum(below.values()))
    recall = ((fig["fact_recall"] or 0.0) + fig["utterance_recall"]) / 2
    return (excess <= EPSILON, -round(excess, 9), round(recall, 9),
            round(fig.get("paraphrase_recall") or 0.0, 9), -round(fig["routed_chars"], 6), -order)


def _engine(case):
    return ENGINE in case.tags or ENGINE_UTTERANCE in case.tags


def judged(results, plain):
    engine = [r for r in results if ENGINE in r.case.tags]
    said = [r for r in results if ENGINE_UTTERANCE in r.case.tags]
    rest = [r for r in results if not _engine(r.case)]
    fig = figures(rest)
    fig["engine_priming"] = sum(1 for r in engine if r.routed) / len(engine) if engine else 0.0
    fig["utterance_recall"] = fact_recall(said)["recall"] if said else 0.0
    fig["paraphrase_recall"] = per_kind(rest).get("paraphrase", {}).get("fact_recall")
    return fig, plain_floor(rest, [r for r in plain if not _engine(r.case)])


def utterance_cases(blind, index):
    """Each engine-written utterance as a case that must inject its member, its fold its own: on
    its fold it is routed against a table built from the member's other utterances (the engine's
    paraphrases judged as a paraphrase the user types, never matched against itself)."""
    members = {m.slug for c in index.clusters for m in c.members}
    return [Case(id=f"utterance-{slug}-{j}", prompt=text, injects=(slug,), tags=(ENGINE_UTTERANCE,))
            for slug, texts in sorted(blind.items()) if slug in members for j, text in enumerate(texts)]


def engine_cases(near_misses):
    """Each engine-written near-miss as a silent case, its fold its cluster's: on its fold it is
    routed against a table holding none of that fold's clusters' near-misses, so a near-miss
    never vetoes itself (the precision side judged on the engine's own kind of data)."""
    return [Case(id=f"engine-{cluster_id}-{number}", prompt=text, silent=True, tags=(ENGINE,))
            for cluster_id, texts in sorted(near_misses.items()) for number, text in enumerate(texts)]


def points(families):
    out = []
    for family, grid in families.items():
        keys = tuple(grid)
        for values in itertools.product(*(grid[key] for key in keys)):
            out.append((family, dict(zip(keys, values))))
    return out


def run(k, top):
    suite_cases, index, names = fitting_cases()
    blind = read_blind(BLIND)
    near_misses = read_near_misses(NEAR_MISSES)
    table = extend_table(build_routing_table(index), index, utterances=blind, near_misses=near_misses)
    engine = engine_cases(near_misses)
    cluster_of = {f"engine-{c}-{n}": c for c, texts in near_misses.items() for n in range(len(texts))}
    fold = {case.id: fold_of(case.id, k) for case in suite_cases} | {cid: fold_of(c, k) for cid, c in cluster_of.items()}
    said = utterance_cases(blind, index)
    fold |= {case.id: fold_of(case.id, k) for case in said}
    fold_tables = [extend_table(build_routing_table(index), index,
                                utterances={slug: tuple(t for j, t in enumerate(texts)
                                                        if fold_of(f"utterance-{slug}-{j}", k) != f)
                                            for slug, texts in blind.items()},
                                near_misses={c: t for c, t in near_misses.items() if fold_of(c, k) != f})
                   for f in range(k)]
    by_fold = [[case for case in engine + said if fold[case.id] == f] for f in range(k)]
    cases = suite_cases + [case for group in by_fold for case in group]
    plain_table = extend_table(build_routing_table(index), index, utterances=None)
    base = dict(default_settings(), provider="weighted")
    plain = run_cases(cases, plain_table, base)
    grid = points(FAMILIES)

    def route_all(over):
        settings = dict(base, **over)
        out = run_cases(suite_cases, table, settings)
        for f in range(k):
            out += run_cases(by_fold[f], fold_tables[f], settings)
        return out

    results = [route_all(over) for _family, over in grid]

    def score(i, subset):
        picked = [results[i][j] for j in subset]
        fig, below = judged(picked, [plain[j] for j in subset])
        return objective(fig, below, i)

    def cross_validate(members):
        held = [None] * len(cases)
        chosen = []
        for f in range(k):
            train = [i for i, case in enumerate(cases) if fold[case.id] != f]
            test = [i for i, case in enumerate(cases) if fold[case.id] == f]
            best = max(members, key=lambda m: score(m, train))
            chosen.append(grid[best][1] | {"family": grid[best][0]})
            for i in test:
                held[i] = results[best][i]
        return held, chosen

    every = range(len(cases))
    report = {"suites": names, "k": k, "points": len(grid), "families": {}}
    fig, _ = judged(plain, plain)
    report["plain"] = {"all": fig, "by_kind": per_kind(plain)}
    for family in FAMILIES:
        members = [i for i, (f, _o) in enumerate(grid) if f == family]
        held, chosen = cross_validate(members)
        fig, below = judged(held, plain)
        best = max(members, key=lambda m: score(m, every))
        report["families"][family] = {"held_out": fig, "below_plain": below, "by_kind": per_kind(held),
                                      "folds": chosen, "chosen_on_all": grid[best][1],
                                      "in_sample": judged(results[best], plain)[0]}
    method = max(report["families"], key=lambda f: objective(report["families"][f]["held_out"],
                                                             report["families"][f]["below_plain"], 0))
    report["method"] = method
    ranked = sorted(range(len(grid)), key=lambda i: score(i, every), reverse=True)
    report["top"] = [{"settings": grid[i][1] | {"family": grid[i][0]}, "all": judged(results[i], plain)[0]}
                     for i in ranked[:top]]
    return report


def line(name, fig):
    para = fig.get("paraphrase_recall")
    return (f"{name:28} facts {fig['fact_recall']:.3f} utt {fig['utterance_recall']:.3f} para {para if para is None else round(para, 2)} "
            f"people {fig['near_miss_people_priming']:.2f} engine {fig['engine_priming']:.2f} other {fig['other_false_priming']:.2f} "
            f"ch/rt {fig['routed_chars']:.0f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = run(args.k, args.top)
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True, default=str))
        return 0
    print(f"suites: {', '.join(report['suites'])}; {report['points']} points, {args.k} folds")
    print(line("plain (no utterances)", report["plain"]["all"]))
    for family, found in report["families"].items():
        print(line(f"CV pooled: {family}", found["held_out"]) + f" below plain {found['below_plain']}")
        print(f"    chosen on all: {found['chosen_on_all']}")
    print(f"method: {report['method']}")
    for row in report["top"]:
        print("  " + line(json.dumps(row["settings"]), row["all"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
