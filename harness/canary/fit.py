"""``memory-router canary eval`` (router metrics over a suite, or the cross-validation of ``fit``)
and ``canary fit`` (grid-search the routing constants, optionally writing the chosen ones to
memory-router.toml): the model, values in and reports out; ``harness.canary.cli`` prints them."""

import os

from harness.canary.suiteargs import load_suites, no_cases, settings_from
from router.errors import InputError, RefusedError


def evaluate(suite_path, clusters=None, config_path=None, facts_only=False, pattern=None):
    """``(suite, settings, metrics)``: the router metrics of one suite's cases."""
    from canaries.metrics import suite_metrics
    from canaries.runner import run_suite

    config, settings = settings_from(config_path)
    suite = load_suites([suite_path], cluster_path=clusters, facts_only=facts_only, config=config)[0]
    result = run_suite(suite, settings, pattern=pattern)
    if not result.results:
        no_cases(pattern, [suite])
    return suite, settings, suite_metrics(result.results)


def cross_validation(suite_path, k, clusters=None, config_path=None, facts_only=False, pattern=None,
                     max_false_priming=0.05):
    """``(report, cases)``: K-fold cross-validation of ``fit`` over the suite's cases."""
    from canaries.crossval import cross_validate
    from canaries.runner import matches
    from router.providers.provider import build_table

    config, settings = settings_from(config_path)
    suite = load_suites([suite_path], cluster_path=clusters, facts_only=facts_only, config=config)[0]
    cases = [case for case in suite.cases if matches(case, pattern)]
    if not cases:
        no_cases(pattern, [suite])
    if not 2 <= k <= len(cases):
        raise InputError(f"--cv needs between 2 and {len(cases)} folds (one per case at most), got {k}",
                         fix="use e.g. --cv 5")
    report = cross_validate(cases, build_table(suite.index), settings, k=k, max_false_priming=max_false_priming)
    report["suite"] = suite.path
    return report, len(cases)


def fit_suite(suite_path, clusters=None, config_path=None, facts_only=False, holdout=0.3, max_false_priming=0.05,
              write=False):
    """``(report, refused)``: the fit of the routing constants on the suite; with ``write``, a
    recommended setting saved to the config (``report["written"]``), or why not (``refused``)."""
    from canaries.fit import fit, toml_snippet
    from router.providers.provider import build_table

    if holdout >= 1:
        raise InputError("--holdout must be below 1 (the fitting part would be empty)", fix="use e.g. --holdout 0.3")
    config, settings = settings_from(config_path)
    suite = load_suites([suite_path], cluster_path=clusters, facts_only=facts_only, config=config)[0]
    if not suite.cases:
        raise InputError("the suite has no routing cases to fit", path=suite.path, fix="add cases")
    try:
        report = fit(suite.cases, build_table(suite.index), settings, holdout=holdout,
                     max_false_priming=max_false_priming)
    except ValueError as err:
        raise InputError(f"{err}: every case fell in the held-out part", path=suite.path,
                         fix="lower --holdout or add cases") from None
    report["suite"] = suite.path
    report["clusters"] = suite.cluster_path
    report["config"] = config["source"] if config else None
    report["written"] = None
    proposed_values = {key: value["proposed"] for key, value in report["changes"].items()}

    refused = None
    if write and proposed_values:
        if not report["recommended"]:
            refused = ("the proposed setting is not recommended (" + "; ".join(report["objections"])
                       + "); nothing was written")
        else:
            target = config_path or (config["source"] if config else os.path.join(os.getcwd(), "memory-router.toml"))
            if os.path.basename(target) == "pyproject.toml":
                refused = (f"refusing to edit {target}; paste this into its [tool.memory-router] table:\n"
                           + toml_snippet(proposed_values, "tool.memory-router").rstrip())
            else:
                report["written"] = write_settings(target, proposed_values)
    return report, refused


def write_settings(path, values):
    """Set ``values`` in the memory-router.toml at ``path`` (created if missing), keeping every
    other line; refuse if the file changed meanwhile or the edit would not read back exactly."""
    import tomllib

    from canaries.fit import update_toml_text
    from harness.fileops import Snapshot
    from router.configcheck import validate_config

    snapshot = Snapshot(path)
    try:
        text = snapshot.data.decode("utf-8")
        before = tomllib.loads(text)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise InputError(f"cannot update config: {err}", path=path, fix="fix the file first") from None
    new_text = update_toml_text(text, values)
    try:
        after = tomllib.loads(new_text)
    except tomllib.TOMLDecodeError:
        after = None
    expected = dict(before, **values)
    if after != expected:
        raise RefusedError(f"could not update {path} without touching other keys; nothing was written",
                           fix="set these by hand: " + ", ".join(f"{k} = {v}" for k, v in values.items()))
    validate_config(after, path)
    snapshot.replace(new_text)
    return {"file": path, "keys": values}
