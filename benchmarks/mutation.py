"""Mutation testing of the scorer, the tokeniser and the canary expectation checks (docs/mutation.md).

Runs mutmut 3 (the ``mutation`` extra: ``pip install -e '.[test,mutation]'``) with the
configuration in pyproject.toml (``[tool.mutmut]``: which files are mutated, which tests run),
then reads ``mutmut results`` and prints, per target and per module, how many mutants the tests
killed. A mutant that times out counts as killed (the tests noticed); one no selected test
reaches ("no tests"), one that survived and a "suspicious" one count against the rate.

    python benchmarks/mutation.py [--max-children N] [--keep] [--report-only] [--goal PCT] [--json]

By default the previous run's ``mutants/`` directory is removed first, so the figures are those
of the current source and tests (mutmut does not re-test a survivor after a test changes);
``--keep`` resumes it instead. Takes 6-9 minutes on 2 busy cores. Exit 1 when a target
kills fewer than ``--goal`` percent of its mutants.
"""

import argparse
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[1]
GOAL_PERCENT = 90.0

# target name -> the modules mutated for it (keep in step with [tool.mutmut] only_mutate)
TARGETS = {
    "scorer": ("router.score",),
    "tokeniser": ("router.tokens",),
    "canary checks": ("canaries.runner", "canaries.cases"),
}

DETECTED = frozenset({"killed", "timeout", "caught by type check"})

# "    router.score.x_route_prompt__mutmut_3: survived"; methods read "module.xǁClassǁname__mutmut_N"
_RESULT_LINE = re.compile(r"^\s*(?P<mutant>\S+__mutmut_\d+): (?P<status>.+?)\s*$")
_MODULE_OF = re.compile(r"^(?P<module>.+?)\.x[_\u01c1]")


def parse_results(text):
    """(mutant name, module, status) for each line of ``mutmut results --all true``."""
    rows = []
    for line in text.splitlines():
        match = _RESULT_LINE.match(line)
        if not match:
            continue
        mutant = match["mutant"]
        module = _MODULE_OF.match(mutant)
        if module is None:
            raise ValueError(f"cannot tell the module of mutant {mutant!r}: has mutmut's naming changed?")
        rows.append((mutant, module["module"], match["status"]))
    return rows


def _tally(rows):
    detected = sum(1 for _m, _mod, status in rows if status in DETECTED)
    return {
        "mutants": len(rows),
        "killed": detected,
        "survived": [mutant for mutant, _mod, status in rows if status not in DETECTED],
        "kill_rate": round(100.0 * detected / len(rows), 1) if rows else None,
    }


def summarise(rows, targets=TARGETS, goal=GOAL_PERCENT):
    """Per-target and per-module tallies; ``ok`` is whether every target reaches ``goal``."""
    known = {module for modules in targets.values() for module in modules}
    stray = sorted({module for _m, module, _s in rows} - known)
    if stray:
        raise ValueError(f"mutants of modules outside the targets: {', '.join(stray)} "
                         "(keep TARGETS in step with [tool.mutmut] only_mutate)")
    out = {"goal": goal, "targets": {}, "modules": {}}
    for target, modules in targets.items():
        target_rows = [row for row in rows if row[1] in modules]
        if not target_rows:
            raise ValueError(f"no mutants for target {target!r} ({', '.join(modules)}): was it mutated?")
        out["targets"][target] = _tally(target_rows)
        for module in modules:
            out["modules"][module] = _tally([row for row in target_rows if row[1] == module])
    out["ok"] = all(t["kill_rate"] >= goal for t in out["targets"].values())
    return out


def _mutmut(*args):
    exe = pathlib.Path(sys.executable).with_name("mutmut")
    if not exe.exists():
        sys.exit("mutmut is not installed in this environment: pip install -e '.[test,mutation]'")
    return subprocess.run([str(exe), *args], cwd=REPO, capture_output=True, text=True)


def run_mutmut(max_children, keep):
    if not keep:
        shutil.rmtree(REPO / "mutants", ignore_errors=True)
    done = _mutmut("run", "--max-children", str(max_children))
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        sys.exit(f"mutmut run failed (exit {done.returncode})")


def print_summary(summary):
    print(f"{'target / module':<28} {'mutants':>8} {'killed':>7} {'not killed':>10} {'kill rate':>9}")
    for target, modules in TARGETS.items():
        t = summary["targets"][target]
        print(f"{target:<28} {t['mutants']:>8} {t['killed']:>7} {len(t['survived']):>10} {t['kill_rate']:>8}%")
        for module in modules:
            m = summary["modules"][module]
            print(f"  {module:<26} {m['mutants']:>8} {m['killed']:>7} {len(m['survived']):>10} {m['kill_rate']:>8}%")
    print()
    for target in TARGETS:
        for mutant in summary["targets"][target]["survived"]:
            print(f"not killed: {mutant}  (see it: mutmut show {mutant})")
    verdict = "every target reaches" if summary["ok"] else "a target misses"
    print(f"\n{verdict} the goal of {summary['goal']:g}% killed")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--max-children", type=int, default=min(2, os.cpu_count() or 1),
                        help="mutants tested in parallel")
    parser.add_argument("--keep", action="store_true", help="resume the previous run's mutants/ instead of a fresh run")
    parser.add_argument("--report-only", action="store_true", help="only summarise the last run's results")
    parser.add_argument("--goal", type=float, default=GOAL_PERCENT, help="percent of mutants each target must kill")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args(argv)
    if not args.report_only:
        run_mutmut(args.max_children, args.keep)
    results = _mutmut("results", "--all", "true")
    if results.returncode != 0:
        sys.exit(f"mutmut results failed (exit {results.returncode}): {results.stderr.strip()[-2000:]}")
    summary = summarise(parse_results(results.stdout), goal=args.goal)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print_summary(summary)
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
