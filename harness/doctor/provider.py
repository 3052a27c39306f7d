"""The doctor's provider check: which provider routes, does it load, what does it cost.

``check_provider(settings, table)`` returns a plain dict:

    provider      the configured name
    builtin       True for null, spec, weighted
    status        "ok", "warn" (loads and decides, but its import alone eats over half the
                  budget) or "fail" (the hook would inject nothing: see ``problem``)
    problem       why, or None
    import_ms     a custom provider's import, measured in a fresh interpreter as the hook pays
                  it on every prompt (None for a built-in: the hook benchmark covers those)
    budget_ms     provider_timeout_ms (checked against the hook entry's timeout when given)
    probe         for a probe prompt through the real fail-safe path: {"routed", "confidence",
                  "explanation"} (None without a table)

A custom provider is imported in a child interpreter first, so a module that hangs, exits or
crashes at import cannot take the doctor with it; only one that imports cleanly is then loaded
here and called on the probe through ``router.providers.provider.route`` (budget enforced, as in the hook).
"""

import os
import subprocess
import sys

from router.providers.provider import route
from router.providername import BUILTINS, ProviderError, parse_provider_name

PROBE_PROMPT = "why doesn't the Bash tool see an environment variable I set with setx?"
_IMPORT_TIMER = ("import sys, time; start = time.perf_counter(); import {module}; "
                 "sys.stdout.write(repr((time.perf_counter() - start) * 1000))")


def measure_import(module, python=None, timeout=30):
    """(milliseconds, None) for importing ``module`` in a fresh interpreter, or (None, problem)."""
    try:
        done = subprocess.run([python or sys.executable, "-c", _IMPORT_TIMER.format(module=module)],
                              capture_output=True, text=True, timeout=timeout, env=dict(os.environ))
    except subprocess.TimeoutExpired:
        return None, f"importing {module} did not finish in {timeout} s"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        return None, f"importing {module} failed: {last}"
    try:
        return float(done.stdout.strip()), None
    except ValueError:
        return None, f"importing {module} printed to stdout: {done.stdout.strip()[:200]!r}"


def check_provider(settings, table=None, python=None, hook_timeout_s=None):
    """The report above; with ``hook_timeout_s`` (the installed hook entry's timeout) a budget the
    hook cannot finish inside fails first (``router.providerbudget.budget_problem``)."""
    from router.providerbudget import budget_problem

    name = settings["provider"]
    budget = settings["provider_timeout_ms"]
    report = {"provider": name, "builtin": name in BUILTINS, "status": "ok", "problem": None,
              "import_ms": None, "budget_ms": budget, "probe": None}
    problem = budget_problem(budget, hook_timeout_s) if hook_timeout_s else None
    if problem:
        return dict(report, status="fail", problem=problem)
    if name not in BUILTINS:
        try:
            module, _attribute = parse_provider_name(name)
        except ProviderError as err:
            return dict(report, status="fail", problem=str(err))
        import_ms, problem = measure_import(module, python)
        report["import_ms"] = import_ms
        if problem:
            return dict(report, status="fail", problem=problem)
        if import_ms > budget:
            return dict(report, status="fail",
                        problem=f"importing {module} takes {import_ms:.0f} ms, over provider_timeout_ms ({budget})")
        if import_ms > budget / 2:
            report.update(status="warn", problem=f"importing {module} takes {import_ms:.0f} ms of the {budget} ms "
                                                 "budget, on every prompt")
    if table is not None:
        decision = route(PROBE_PROMPT, table, settings, log_as="doctor")
        report["probe"] = {"routed": decision["routed"], "confidence": decision["confidence"],
                           "explanation": decision["explanation"]}
        if decision["explanation"].startswith("failed: "):
            return dict(report, status="fail", problem=decision["explanation"][len("failed: "):])
    return report
