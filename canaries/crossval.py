"""K-fold cross-validation of ``canary fit``: how well the constants it would choose do on
cases it did not see. Pure: the CLI reads the suite and prints.

Each case falls in fold ``sha256(id) mod K`` (stable across runs and machines; adding a case
never moves another). For each fold, ``canaries.fit.best_setting`` picks the best point of the
provider's grid on the other K-1 folds (same ceiling and ranking as ``canary fit``), and that
setting routes the held-out fold. The held-out results of all K folds are pooled into one set
of figures: every case is judged exactly once, by a setting chosen without it. The figures of
the current setting on every case are reported beside them, and the setting each fold chose,
so a tuning that only fits its own cases shows as a gap between the two.
"""

import hashlib

from canaries.fit import best_setting, grid_for, score
from canaries.metrics import fact_recall
from canaries.runner import run_cases


def fold_of(case_id, k):
    return int(hashlib.sha256(case_id.encode("utf-8")).hexdigest()[:8], 16) % k


# Prompt kinds (issue 14), by tag; the first listed tag a case carries names its kind.
KIND_TAGS = ("near-miss-people", "near-miss", "neutral", "paraphrase-strict", "paraphrase", "inflection", "misspelt",
             "identifier", "chatty",
             "general-form-topical", "direct", "member")


def kind_of(case):
    """The case's kind: its first tag among ``KIND_TAGS`` (``member-text`` counts as member);
    otherwise ``direct`` when it expects a route and ``neutral`` when it expects silence."""
    tags = set(case.tags)
    if "member-text" in tags:
        tags.add("member")
    for kind in KIND_TAGS:
        if kind in tags:
            return kind
    return "neutral" if case.silent is True else "direct"


def per_kind(results):
    """Figures per case kind: cases, cluster hit (every expected cluster routed), fact recall,
    false priming (silent cases that got an injection), mean injected characters."""
    kinds = {}
    for result in results:
        kinds.setdefault(kind_of(result.case), []).append(result)
    out = {}
    for kind, rows in sorted(kinds.items()):
        routed = [r for r in rows if r.case.routes_to]
        silent = [r for r in rows if r.case.silent is True]
        out[kind] = {
            "cases": len(rows),
            "cluster_hit": (sum(1 for r in routed if set(r.case.routes_to) <= set(r.routed)) / len(routed)
                            if routed else None),
            "fact_recall": fact_recall(rows)["recall"],
            "false_priming": sum(1 for r in silent if r.routed) / len(silent) if silent else None,
            "mean_chars": sum(r.chars for r in rows) / len(rows),
        }
    return out


def cross_validate(cases, table, current, k=5, max_false_priming=0.05, grid=None):
    """K-fold held-out figures of ``canary fit``'s choice; returns a plain dict (``eval --cv --json``)."""
    if k < 2:
        raise ValueError("cross-validation needs at least 2 folds")
    cases = list(cases)
    if grid is None:
        grid = grid_for(current, table)
    held_results = []
    folds = []
    for fold in range(k):
        training = [c for c in cases if fold_of(c.id, k) != fold]
        held = [c for c in cases if fold_of(c.id, k) == fold]
        if not held or not training:
            folds.append({"fold": fold, "held_out_cases": len(held), "settings": None})
            continue
        chosen, _figures, _within = best_setting(training, table, current, max_false_priming, grid)
        results = run_cases(held, table, chosen)
        held_results.extend(results)
        folds.append({"fold": fold, "held_out_cases": len(held), "training_cases": len(training),
                      "settings": {key: chosen[key] for key in grid}, "held_out": score(results)})
    current_results = run_cases(cases, table, current)
    return {
        "k": k,
        "provider": current.get("provider"),
        "grid": {key: list(values) for key, values in grid.items()},
        "max_false_priming": max_false_priming,
        "folds": folds,
        "held_out": score(held_results),
        "held_out_by_kind": per_kind(held_results),
        "current": {"settings": {key: current[key] for key in grid}, "all_cases": score(current_results),
                    "by_kind": per_kind(current_results)},
    }
