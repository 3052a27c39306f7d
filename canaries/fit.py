"""Grid-search the routing constants against a canary suite. Pure, except nothing: the CLI
reads and writes files.

The grid is the configured provider's (``grid_for``). For ``spec`` (``GRID``) it covers the four
constants the spec tunes (§10):

    score_floor    2, 3, 4, 5, 6
    tag_weight     1, 2, 3, 4, 5
    member_weight  0, 1, 2        (0 = the old tag-only matcher)
    line_cap       6, 8, 12, 16

300 settings; every other setting (second_ratio, max_context_chars, ...) stays as configured.
Values are integers because the config file types these keys as integers. For ``weighted``
(``WEIGHTED_GRID``): its floor, tag boost, spread and intent-gate focus, 180 settings. For
``weighted`` on a table with utterances (``clusters enrich`` wrote them beside the cluster file,
and ``utterances`` is on), the enriched route's own constants instead (``ENRICHED_GRID``): the
utterance floor (the enriched route's ``weighted_floor``), the near-miss coverage gate, and the
veto's k and margin, 144 settings; the values around what benchmarks/transfer_cv.py chose across
stores. Other providers have nothing to tune here (an empty grid: the current setting is the
only one).

Method: the cases are split deterministically into a fitting part and a held-out part by a hash
of each case id (``in_holdout``), so the split never changes between runs or machines and
adding a case never moves another. Every setting is scored on the fitting part; settings whose
false-priming rate exceeds the ceiling are discarded; the best remaining one is chosen by
micro F1 of routing, then fact recall, then fewer injected characters, then fewest changes from
the current setting, then grid order. The chosen setting and the current one are then both
scored on the held-out part, which is the figure to trust. A proposal is *recommended* only if
it differs from the current setting, is no worse than it on held-out F1 and fact recall, and
stays under the ceiling on the held-out part.
"""

import hashlib
import itertools

from canaries.metrics import cluster_metrics, fact_recall, no_route_metrics
from canaries.runner import run_cases

GRID = {
    "score_floor": (2, 3, 4, 5, 6),
    "tag_weight": (1, 2, 3, 4, 5),
    "member_weight": (0, 1, 2),
    "line_cap": (6, 8, 12, 16),
}
WEIGHTED_GRID = {
    "weighted_floor": (4.0, 5.0, 6.0, 7.0, 8.0, 10.0),
    "weighted_tag_boost": (1.0, 1.5, 2.0),
    "weighted_spread": (0.0, 0.25, 0.5),
    "intent_gate_focus": (2, 3, 4, 99),
}
ENRICHED_GRID = {
    "utterance_floor": (6.0, 8.0, 10.0, 12.0),
    "utterance_coverage": (0.0, 0.35, 0.45, 0.55),
    "veto_k": (1, 3, 5),
    "veto_margin": (-0.1, 0.0, 0.1),
}
FIT_KEYS = tuple(GRID)


def enriched(settings, table):
    """True when ``table`` routes on utterances under ``settings`` (``weighted``, utterances on, a
    table that holds some): the enriched route, whose constants are ``ENRICHED_GRID``'s."""
    meta = (table or {}).get("utterance_meta")
    return (settings.get("provider") == "weighted" and bool(settings.get("utterances", True))
            and meta is not None and bool(meta.get("members")))


def grid_for(settings, table=None):
    """The grid of the provider ``settings`` name (empty for one with nothing to tune); for
    ``weighted`` on a ``table`` with utterances, the enriched route's (``ENRICHED_GRID``)."""
    if enriched(settings, table):
        return ENRICHED_GRID
    return {"spec": GRID, "weighted": WEIGHTED_GRID}.get(settings.get("provider"), {})


def in_holdout(case_id, fraction):
    """True if the case belongs to the held-out part (deterministic: sha256 of the id)."""
    if fraction <= 0:
        return False
    bucket = int(hashlib.sha256(case_id.encode("utf-8")).hexdigest()[:8], 16) / 0x100000000
    return bucket < fraction


def split_cases(cases, fraction):
    """(fitting, held_out). With ``fraction`` 0 both are all the cases."""
    if fraction <= 0:
        return list(cases), list(cases)
    held = [c for c in cases if in_holdout(c.id, fraction)]
    fitting = [c for c in cases if not in_holdout(c.id, fraction)]
    return fitting, held


def score(results):
    """The figures a setting is judged by."""
    routing = cluster_metrics(results)
    silence = no_route_metrics(results)
    facts = fact_recall(results)
    chars = [r.chars for r in results]
    return {
        "f1": routing["micro"]["f1"],
        "precision": routing["micro"]["precision"],
        "recall": routing["micro"]["recall"],
        "false_priming_rate": silence["false_priming_rate"],
        "fact_recall": facts["recall"],
        "mean_chars": sum(chars) / len(chars) if chars else 0.0,
        "passed": sum(1 for r in results if r.verdict in ("pass", "xfail")),
        "cases": len(results),
    }


def _none_low(value):
    return -1.0 if value is None else value


def _within(rate, ceiling):
    return rate is None or rate <= ceiling + 1e-12


def grid_settings(base, grid=GRID):
    keys = tuple(grid)
    for values in itertools.product(*(grid[key] for key in keys)):
        settings = dict(base)
        settings.update(zip(keys, values))
        yield settings


def changed_keys(current, proposed, keys=FIT_KEYS):
    return {key: {"current": current[key], "proposed": proposed[key]}
            for key in keys if current.get(key) != proposed.get(key)}


def best_setting(cases, table, current, max_false_priming=0.05, grid=GRID):
    """(settings, figures, candidates within the ceiling) of the best point of ``grid`` on
    ``cases``: the current setting when no point stays under the false-priming ceiling."""
    candidates = []
    for order, settings in enumerate(grid_settings(current, grid)):
        figures = score(run_cases(cases, table, settings))
        if not _within(figures["false_priming_rate"], max_false_priming):
            continue
        distance = len(changed_keys(current, settings, tuple(grid)))
        key = (_none_low(figures["f1"]), _none_low(figures["fact_recall"]), -figures["mean_chars"], -distance, -order)
        candidates.append((key, settings, figures))
    if not candidates:
        return dict(current), score(run_cases(cases, table, current)), 0
    _key, settings, figures = max(candidates, key=lambda row: row[0])
    return settings, figures, len(candidates)


def fit(cases, table, current, holdout=0.3, max_false_priming=0.05, grid=None):
    """Search ``grid`` (default: the provider's) for the best setting; returns a plain dict
    (the ``fit --json`` shape)."""
    if grid is None:
        grid = grid_for(current, table)
    keys = tuple(grid)
    cases = list(cases)
    fitting, held = split_cases(cases, holdout)
    if not fitting:
        raise ValueError("the fitting part is empty")
    current_fit = score(run_cases(fitting, table, current))
    best_settings, best_fit, within = best_setting(fitting, table, current, max_false_priming, grid)
    current_held = score(run_cases(held, table, current))
    best_held = score(run_cases(held, table, best_settings))
    changes = changed_keys(current, best_settings, keys)
    objections = []
    if not within:
        objections.append("no setting in the grid stays under the false-priming ceiling on the fitting part")
    if not held:
        objections.append("the held-out part is empty")
    else:
        if _none_low(best_held["f1"]) < _none_low(current_held["f1"]):
            objections.append("lower routing F1 than the current setting on the held-out part")
        if _none_low(best_held["fact_recall"]) < _none_low(current_held["fact_recall"]):
            objections.append("lower fact recall than the current setting on the held-out part")
        if not _within(best_held["false_priming_rate"], max_false_priming):
            objections.append("false-priming rate above the ceiling on the held-out part")
    recommended = bool(changes) and not objections
    return {
        "grid": {key: list(values) for key, values in grid.items()},
        "settings_tried": len(list(grid_settings(current, grid))),
        "settings_within_ceiling": within,
        "holdout_fraction": holdout,
        "max_false_priming": max_false_priming,
        "fitting_cases": len(fitting),
        "held_out_cases": len(held) if holdout > 0 else 0,
        "held_out_ids": sorted(c.id for c in held) if holdout > 0 else [],
        "provider": current.get("provider"),
        "current": {"settings": {k: current[k] for k in keys}, "fitting": current_fit, "held_out": current_held},
        "proposed": {"settings": {k: best_settings[k] for k in keys}, "fitting": best_fit, "held_out": best_held},
        "changes": changes,
        "recommended": recommended,
        "objections": objections if changes else [],
        "flips": flips(cases, table, current, best_settings),
    }


def flips(cases, table, current, proposed):
    """Cases whose verdict or routing differs between the two settings."""
    before = run_cases(cases, table, current)
    after = run_cases(cases, table, proposed)
    out = []
    for old, new in zip(before, after):
        if old.verdict != new.verdict or set(old.routed) != set(new.routed):
            out.append({
                "id": old.case.id,
                "current": {"verdict": old.verdict, "routed": list(old.routed)},
                "proposed": {"verdict": new.verdict, "routed": list(new.routed)},
            })
    return out


# --------------------------------------------------------------------------- config text


def _toml_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


def toml_snippet(changes, table_name=None):
    lines = [f"[{table_name}]"] if table_name else []
    lines += [f"{key} = {_toml_value(value)}" for key, value in changes.items()]
    return "\n".join(lines) + "\n"


def update_toml_text(text, changes):
    """``text`` (a memory-router.toml) with the top-level ``changes`` set, every other line kept.

    A key already set at top level has its value replaced in place (its trailing comment kept);
    a missing key is added after the last top-level line. The caller verifies the result parses
    to exactly the intended values.
    """
    import re

    lines = text.splitlines(keepends=True)
    table_start = len(lines)
    for i, line in enumerate(lines):
        if re.match(r"^\s*\[", line):
            table_start = i
            break
    remaining = dict(changes)
    for i in range(table_start):
        for key in list(remaining):
            match = re.match(r"^(\s*" + re.escape(key) + r"\s*=\s*)([^#\r\n]*?)(\s*#[^\r\n]*)?(\r?\n)?$", lines[i])
            if match:
                lines[i] = (match.group(1) + _toml_value(remaining.pop(key)) + (match.group(3) or "")
                            + (match.group(4) or ""))
    if remaining:
        insert_at = table_start
        while insert_at > 0 and not lines[insert_at - 1].strip():
            insert_at -= 1
        if insert_at > 0 and not lines[insert_at - 1].endswith("\n"):
            lines[insert_at - 1] += "\n"
        new_lines = [f"{key} = {_toml_value(value)}\n" for key, value in remaining.items()]
        if insert_at < len(lines) and insert_at == table_start and table_start < len(lines):
            new_lines.append("\n")
        lines[insert_at:insert_at] = new_lines
    return "".join(lines)
