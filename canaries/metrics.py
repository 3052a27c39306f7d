"""Router quality metrics over evaluated canary cases. Pure functions over ``CaseResult``s.

Definitions (also in the README):

- Per-cluster precision, recall, F1: over cases that have ``routes_to`` only. For cluster c,
  TP = cases expecting c that routed c, FP = cases not expecting c that routed c,
  FN = cases expecting c that did not route c. Precision (recall) is ``None`` when its
  denominator is 0; F1 = 2TP / (2TP + FP + FN), which is the harmonic mean of the two where both
  are defined and 0 for a cluster never routed right. "micro" pools TP/FP/FN over all clusters
  (``None`` only with no case at all); "macro" averages the clusters' F1.
- False-priming rate: among cases with ``silent: true``, the share that got an injection.
  No-route recall: the share of them that stayed silent (1 - false-priming rate). No-route
  precision: among labelled cases (``routes_to`` or ``silent: true``) that stayed silent, the
  share that expected silence.
- Fact recall: over every (case, slug) pair in ``injects``, the share whose slug was injected.
- Injected characters per prompt: over every case (0 for a silent one): mean and p95
  (nearest-rank: the ceil(0.95 n)-th smallest value); also the mean over prompts that got an
  injection.
- Margin distribution: the top score minus the floor, per case, as counts per value with
  min/median/max, for all cases and split by whether the case expects a route or silence.
"""

import math
import statistics


def _ratio(numerator, denominator):
    return numerator / denominator if denominator else None


def _f1(tp, fp, fn):
    # 2TP / (2TP + FP + FN): the harmonic mean of precision and recall where both are defined,
    # and 0 (not undefined) for a cluster that was expected but never routed, or the reverse.
    return _ratio(2 * tp, 2 * tp + fp + fn)


def cluster_metrics(results):
    """Per-cluster TP/FP/FN, precision, recall and F1, plus micro and macro aggregates."""
    counts = {}
    for result in results:
        expected = result.case.routes_to
        if expected is None:
            continue
        expected = set(expected)
        routed = set(result.routed)
        for cluster_id in expected | routed:
            row = counts.setdefault(cluster_id, {"tp": 0, "fp": 0, "fn": 0})
            if cluster_id in expected and cluster_id in routed:
                row["tp"] += 1
            elif cluster_id in routed:
                row["fp"] += 1
            else:
                row["fn"] += 1
    clusters = {}
    for cluster_id in sorted(counts):
        row = counts[cluster_id]
        precision = _ratio(row["tp"], row["tp"] + row["fp"])
        recall = _ratio(row["tp"], row["tp"] + row["fn"])
        clusters[cluster_id] = dict(row, support=row["tp"] + row["fn"], precision=precision, recall=recall,
                                    f1=_f1(row["tp"], row["fp"], row["fn"]))
    tp = sum(r["tp"] for r in counts.values())
    fp = sum(r["fp"] for r in counts.values())
    fn = sum(r["fn"] for r in counts.values())
    micro_p = _ratio(tp, tp + fp)
    micro_r = _ratio(tp, tp + fn)
    defined = [row["f1"] for row in clusters.values() if row["f1"] is not None]
    return {
        "clusters": clusters,
        "micro": {"tp": tp, "fp": fp, "fn": fn, "precision": micro_p, "recall": micro_r, "f1": _f1(tp, fp, fn)},
        "macro_f1": sum(defined) / len(defined) if defined else None,
        "cases": sum(1 for r in results if r.case.routes_to is not None),
    }


def no_route_metrics(results):
    silent_cases = [r for r in results if r.case.silent is True]
    primed = sum(1 for r in silent_cases if r.routed)
    labelled_silent = [r for r in results
                       if (r.case.routes_to is not None or r.case.silent is True) and not r.routed]
    correct_silent = sum(1 for r in labelled_silent if r.case.silent is True)
    false_priming = _ratio(primed, len(silent_cases))
    return {
        "silent_cases": len(silent_cases),
        "false_primed": primed,
        "false_priming_rate": false_priming,
        "no_route_recall": None if false_priming is None else 1 - false_priming,
        "no_route_precision": _ratio(correct_silent, len(labelled_silent)),
        "false_primed_ids": [r.case.id for r in silent_cases if r.routed],
    }


def fact_recall(results):
    pairs = [(r, slug) for r in results for slug in r.case.injects]
    hits = sum(1 for r, slug in pairs if slug in r.injected)
    return {"facts": len(pairs), "injected": hits, "recall": _ratio(hits, len(pairs)),
            "missed": [f"{r.case.id}:{slug}" for r, slug in pairs if slug not in r.injected]}


def percentile_nearest_rank(values, pct):
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]


def char_metrics(results):
    chars = [r.chars for r in results]
    injected = [r.chars for r in results if r.routed]
    return {
        "prompts": len(chars),
        "mean": statistics.fmean(chars) if chars else None,
        "p95": percentile_nearest_rank(chars, 95),
        "max": max(chars) if chars else None,
        "mean_when_injected": statistics.fmean(injected) if injected else None,
        "injected_prompts": len(injected),
    }


def distribution(values):
    if not values:
        return {"n": 0, "min": None, "median": None, "max": None, "counts": []}
    histogram = {}
    for value in values:
        histogram[value] = histogram.get(value, 0) + 1
    return {
        "n": len(values),
        "min": min(values),
        "median": statistics.median(values),
        "max": max(values),
        "counts": [{"margin": value, "count": histogram[value]} for value in sorted(histogram)],
    }


def margin_metrics(results):
    return {
        "all": distribution([r.margin for r in results]),
        "expect_route": distribution([r.margin for r in results if r.case.expects_route]),
        "expect_silent": distribution([r.margin for r in results if r.case.silent is True]),
    }


def suite_metrics(results):
    """Every metric of ``canary eval`` for a list of ``CaseResult``."""
    results = list(results)
    return {
        "cases": len(results),
        "routing": cluster_metrics(results),
        "no_route": no_route_metrics(results),
        "fact_recall": fact_recall(results),
        "injected_chars": char_metrics(results),
        "margins": margin_metrics(results),
    }
