"""``memory-router canary run``'s model: run the suites, total them, build the baseline record,
compare it with a stored one, and write the JUnit XML and baseline files. Over canaries.suite
(schema), canaries.runner (verdicts), canaries.baseline and canaries.junit; ``harness.canary.cli``
prints the result."""

import json
import re
import time

from harness.canary.suiteargs import expand_suite_args, load_suites, no_cases, settings_from, table_for
from router.errors import InputError
from router.safeio import read_regular_bytes


def run_suites(suite_args, clusters=None, config_path=None, facts_only=False, pattern=None, baseline=None):
    """Run every suite of ``suite_args`` (files or directories; none: the bundled suites). Returns
    a dict: ``suites`` (the loaded suites), ``results`` (one SuiteResult each), ``counts``,
    ``keys`` (each suite's baseline key), ``elapsed`` (seconds per suite position), ``record``
    (this run as a baseline), ``comparison`` (with ``baseline``, else ``None``), ``settings``
    and ``ok``."""
    from canaries.baseline import build_baseline, suite_key
    from canaries.runner import run_suite, totals
    from canaries.suite import bundled_suite_dir
    from harness.fileops import sha256_file

    config, settings = settings_from(config_path)
    suites = load_suites(expand_suite_args(suite_args), cluster_path=clusters, facts_only=facts_only, config=config)
    origins = [cluster_origin(suite, clusters, config) for suite in suites]
    tables, results, elapsed = {}, [], {}
    for position, suite in enumerate(suites):
        started = time.perf_counter()
        results.append(run_suite(suite, settings, table=table_for(suite, tables), pattern=pattern))
        elapsed[position] = time.perf_counter() - started
    counts = totals(results)
    if counts["total"] == 0:
        no_cases(pattern, suites)

    keys = [suite_key(s.path, bundled_dir=bundled_suite_dir()) for s in suites]
    record = build_baseline(results, settings, keys, {key: sha256_file(s.cluster_path) for key, s in zip(keys, suites)})
    comparison = None
    if baseline:
        from canaries.baseline import compare

        old = read_baseline(baseline)
        comparison = compare(old, record)
        comparison["file"] = baseline
        if comparison["compared"] == 0 and any(old.get("suites", {}).values()):
            # Nothing in common: a comparison that checked nothing must not read as "no regression".
            raise InputError(
                "the baseline shares no case with this run, so nothing could be compared (it keys suites "
                f"as {', '.join(sorted(old['suites']))})", path=baseline,
                fix="run from the directory the baseline was saved in, with the same suites")
    ok = all(r.ok for r in results) and (comparison is None or comparison["ok"])
    return {"suites": suites, "results": results, "counts": counts, "keys": keys, "elapsed": elapsed,
            "record": record, "comparison": comparison, "settings": settings, "ok": ok, "origins": origins}


_CLUSTERS_LINE = re.compile(r"^clusters[ \t]*:", re.M)


def cluster_origin(suite, explicit, config):
    """How a suite's cluster file was found, for the line that names the store a run checked:
    ``--clusters``, the suite's own ``clusters:`` line, or (a suite without one) the project's
    store as every command finds it (``suiteargs.project_store_default``)."""
    from harness.canary.suiteargs import project_store_default

    if explicit:
        return "--clusters"
    try:
        text = read_regular_bytes(suite.path).decode("utf-8", "replace")
    except OSError:  # read a moment ago; gone now: say nothing rather than guess
        return "the suite's clusters: line"
    if _CLUSTERS_LINE.search(text):
        return "the suite's clusters: line"
    return project_store_default(config)[1]


def run_json(run):
    """The ``canary run --json`` object."""
    out = {
        "ok": run["ok"],
        "settings": run["settings"],
        "totals": run["counts"],
        "suites": [dict(r.to_dict(), key=key, clusters_from=how)
                   for r, key, how in zip(run["results"], run["keys"], run["origins"])],
    }
    if run["comparison"] is not None:
        out["baseline"] = run["comparison"]
    return out


def write_junit(path, run):
    from canaries.junit import build_junit

    write_output(path, build_junit(run["results"], names=run["keys"], elapsed=run["elapsed"]), "JUnit XML")


def save_baseline(path, run):
    write_output(path, json.dumps(run["record"], indent=2, sort_keys=True, ensure_ascii=False) + "\n", "baseline")


def write_output(path, data, what):
    from harness.fileops import atomic_write

    try:
        atomic_write(path, data)
    except OSError as err:
        raise InputError(f"cannot write the {what}: {err.strerror or err}", path=path,
                         fix="pass a path in an existing, writable directory") from None


def read_baseline(path):
    from canaries.baseline import validate_baseline

    try:
        text = read_regular_bytes(path).decode("utf-8")
    except OSError as err:
        raise InputError(f"cannot read baseline: {err.strerror or err}", path=path,
                         fix="create one with --save-baseline FILE") from None
    except UnicodeDecodeError:
        raise InputError("baseline is not valid UTF-8", path=path, fix="save it again with --save-baseline") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(f"baseline is not valid JSON: {err.msg}", path=path, line=err.lineno, column=err.colno,
                         fix="save it again with --save-baseline") from None
    problems = validate_baseline(data)
    if problems:
        raise InputError("; ".join(problems), path=path, fix="save it again with --save-baseline")
    return data
