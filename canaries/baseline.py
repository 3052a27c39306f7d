"""Store a canary run and compare a later run with it. Pure: the CLI reads and writes the file.

A baseline file (JSON) holds, per suite and case: the verdict, the routed clusters, the injected
slugs, the top score and the margin, plus the settings and the cluster files' sha256 for context.

Comparison (with deepdiff, order-insensitive):

- improvement (listed, not a failure): a case that failed (``fail`` or ``xpass``) now passes
  (``pass`` or ``xfail``), whatever its routing did to get there;
- regression (exit 1): a case that passed now fails, or any other case whose routed clusters
  changed (a passing case routed differently, or a failing one failing differently);
- change (listed): other differences, e.g. different injected lines or scores with the same
  routing and verdict;
- added / removed cases and suites (listed): a baseline does not pin the suite's contents, and
  ``-k`` runs a subset.
"""

import os

BASELINE_VERSION = 1
GOOD = frozenset({"pass", "xfail"})


def suite_key(path, bundled_dir=None, cwd=None):
    """A name for a suite that is the same on every machine: ``bundled:<file>`` for the shipped
    suites, a path relative to the current directory when inside it, else the absolute path."""
    path = os.path.abspath(path)
    if bundled_dir and os.path.dirname(path) == os.path.abspath(bundled_dir):
        return "bundled:" + os.path.basename(path)
    cwd = os.path.abspath(cwd or os.getcwd())
    try:
        rel = os.path.relpath(path, cwd)
    except ValueError:  # another drive (Windows)
        return path
    if not rel.startswith(os.pardir + os.sep) and rel != os.pardir:
        return rel.replace(os.sep, "/")
    return path


def case_record(result):
    return {
        "verdict": result.verdict,
        "routed": sorted(result.routed),
        "injected": sorted(result.injected),
        "score": result.top_score,
        "margin": result.margin,
    }


def build_baseline(suite_results, settings, keys, cluster_hashes=None):
    """The JSON-able record of a run. ``keys[i]`` names ``suite_results[i]``."""
    return {
        "version": BASELINE_VERSION,
        "settings": dict(settings),
        "cluster_files": dict(cluster_hashes or {}),
        "suites": {
            key: {result.case.id: case_record(result) for result in suite_result.results}
            for key, suite_result in zip(keys, suite_results)
        },
    }


def validate_baseline(data):
    """A list of problems with a loaded baseline (empty when usable)."""
    if not isinstance(data, dict):
        return ["the baseline is not a JSON object"]
    problems = []
    if data.get("version") != BASELINE_VERSION:
        problems.append(f"unsupported baseline version {data.get('version')!r} (expected {BASELINE_VERSION})")
    suites = data.get("suites")
    if not isinstance(suites, dict):
        problems.append("the baseline has no 'suites' object")
        return problems
    for key, cases in suites.items():
        if not isinstance(cases, dict):
            problems.append(f"suite {key!r} is not an object")
            continue
        for case_id, record in cases.items():
            if not isinstance(record, dict) or "verdict" not in record or not isinstance(record.get("routed"), list):
                problems.append(f"case {key}/{case_id} lacks 'verdict' or 'routed'")
    return problems


def _describe(record):
    routed = ", ".join(record.get("routed") or []) or "nothing"
    return f"{record.get('verdict')}, routed {routed}"


def compare(old, new):
    """Compare two baseline dicts; returns regressions, improvements, changes, added, removed."""
    from deepdiff import DeepDiff

    old_suites = old.get("suites", {})
    new_suites = new.get("suites", {})
    added = [{"suite": suite, "id": case_id} for suite, cases in new_suites.items()
             for case_id in cases if case_id not in old_suites.get(suite, {})]
    removed = [{"suite": suite, "id": case_id} for suite, cases in old_suites.items()
               for case_id in cases if case_id not in new_suites.get(suite, {})]
    changed = {}
    compared = 0
    for suite, cases in new_suites.items():
        for case_id, after in cases.items():
            before = old_suites.get(suite, {}).get(case_id)
            if before is None:
                continue
            compared += 1
            # Field by field, order-insensitive (routed/injected are lists whose order means nothing).
            fields = {key for key in set(before) | set(after)
                      if DeepDiff(before.get(key), after.get(key), ignore_order=True)}
            if fields:
                changed[(suite, case_id)] = fields
    regressions, improvements, changes = [], [], []
    for (suite, case_id), fields in sorted(changed.items()):
        before = old["suites"][suite][case_id]
        after = new["suites"][suite][case_id]
        entry = {"suite": suite, "id": case_id, "fields": sorted(fields),
                 "before": before, "after": after}
        routing = None
        if sorted(before.get("routed") or []) != sorted(after.get("routed") or []):
            routing = (f"routing changed: {', '.join(before.get('routed') or []) or 'nothing'} -> "
                       f"{', '.join(after.get('routed') or []) or 'nothing'}")
        if before.get("verdict") not in GOOD and after.get("verdict") in GOOD:
            what = f"{before.get('verdict')} turned {after.get('verdict')}"
            improvements.append(dict(entry, what=what + (f"; {routing}" if routing else "")))
        elif before.get("verdict") in GOOD and after.get("verdict") not in GOOD:
            what = f"{before.get('verdict')} turned {after.get('verdict')}"
            regressions.append(dict(entry, what=what + (f"; {routing}" if routing else "")))
        elif routing:
            regressions.append(dict(entry, what=routing))
        else:
            changes.append(dict(entry, what=f"{', '.join(sorted(fields))} changed "
                                            f"({_describe(before)} -> {_describe(after)})"))
    settings_changed = old.get("settings") != new.get("settings")
    return {
        "compared": compared,
        "regressions": regressions,
        "improvements": improvements,
        "changes": changes,
        "added": sorted(added, key=lambda e: (e["suite"], e["id"])),
        "removed": sorted(removed, key=lambda e: (e["suite"], e["id"])),
        "settings_changed": settings_changed,
        "old_settings": old.get("settings"),
        "ok": not regressions,
    }
