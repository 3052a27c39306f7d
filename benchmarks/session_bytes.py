"""Benchmark: memory bytes a real Claude Code session sends, flat MEMORY.md vs slim + router.

Runs the real client (``harness.lab``, offline against the loopback stand-in) over the first
``--prompts`` prompts of the bundled example suite (20 silent, then topical ones) as one resumed
session, three times on the bundled example store:

* ``flat``: the flat MEMORY.md, no hook (the baseline: what a user has before memory-router);
* ``slim``: the slim MEMORY.md rendered by ``memory-router slim render`` plus the router hook;
* ``none``: no MEMORY.md and no hook (what the rest of the request costs);
* ``slim+utterances``: ``slim`` with the store's utterances file beside the cluster file (the
  bundled store ships one), copied in by ``harness.lab.rundir.copy_utterances`` before the first
  prompt; the lab copies the cluster file alone otherwise, so ``slim`` is the router on the
  cluster file alone.

and prints, measured from the request bodies: the cumulative memory bytes (the MEMORY.md section
plus every routed context, new or re-sent) slim + router / flat at 10, 20 and ``--prompts``
prompts, the prompt where slim + router's running total passes flat's, and the last call's
memory bytes of each. Targets (exit 1 when missed): slim + router's cumulative total below flat's
at the end of the session, and its last call no heavier than flat's.

    python benchmarks/session_bytes.py [--prompts 60] [--claude PATH] [--keep DIR] [--json]
"""

import argparse
import json
import os
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

CHECKPOINTS = (10, 20, 60)
MODES = (("flat", False), ("slim", True), ("none", False))
UTTERANCE_MODE = "slim+utterances"


def lab_carries_utterances():
    """Whether the lab can put the utterances file in the run directory
    (``harness.lab.rundir.copy_utterances``, run as ``run_session``'s ``prepare`` step)."""
    from harness.lab import rundir

    return hasattr(rundir, "copy_utterances")


def utterance_options(mode):
    """``run_session`` keywords for ``mode``: the slim+utterances session gets the bundled store's
    utterances file beside its cluster file before the first prompt (``slim`` has none)."""
    if mode != UTTERANCE_MODE:
        return {}
    from harness.lab.rundir import copy_utterances
    from router.config import bundled_cluster_file

    def prepare(paths):
        if not copy_utterances(bundled_cluster_file(), paths):
            raise SystemExit("the bundled store has no utterances file to run slim+utterances with")

    return {"prepare": prepare}


def suite_prompts(count):
    from canaries.suite import load_suite_unchecked
    from harness.lab.cli import bundled_suite

    prompts = list(load_suite_unchecked(bundled_suite()).prompts)[:count]
    if len(prompts) < count:
        raise SystemExit(f"the example suite has only {len(prompts)} prompts")
    return prompts


def run_all(run_dir, prompts, claude):
    from harness.lab import measure
    from harness.lab.runner import run_session

    analyses, seconds = {}, {}
    carries = lab_carries_utterances()
    modes = MODES + (((UTTERANCE_MODE, True),) if carries else ())
    for mode, hook in modes:
        started = time.time()

        def progress(index, total, _prompt, mode=mode):
            print(f"\r{mode}: prompt {index + 1}/{total}", end="", file=sys.stderr, flush=True)

        options = utterance_options(mode)
        memory = "slim" if mode == UTTERANCE_MODE else mode
        result = run_session(os.path.join(run_dir, mode), prompts, memory, claude=claude, hook=hook,
                             on_prompt=progress, **options)
        print(file=sys.stderr)
        failed = [o.index for o in result.outcomes if o.exit_code != 0]
        if failed:
            raise SystemExit(f"{mode}: the client failed on prompts {failed}; see {result.run_dir}/run.json")
        analyses[mode] = measure.analyze_requests(measure.read_log(result.request_log))
        seconds[mode] = round(time.time() - started, 1)
    return analyses, seconds


def figures_of(analyses, prompts, checkpoints=CHECKPOINTS):
    from harness.lab.comparison import compare_sessions

    comparison = compare_sessions(analyses["flat"], analyses["slim"], prompts, checkpoints)
    extra = {}
    if UTTERANCE_MODE in analyses:
        with_utterances = compare_sessions(analyses["flat"], analyses[UTTERANCE_MODE], prompts, checkpoints)
        extra = {"utterances": {"checkpoints": with_utterances["checkpoints"],
                                "crossing_prompt": with_utterances["crossing_prompt"],
                                "routed_contexts": analyses[UTTERANCE_MODE]["totals"]["contexts"]}}
    else:
        extra = {"utterances": None}
    return dict(extra, **{
        "prompts": prompts,
        "checkpoints": comparison["checkpoints"],
        "crossing_prompt": comparison["crossing_prompt"],
        "last_call_memory_bytes": {mode: analyses[mode]["totals"]["last_call_memory_bytes"] for mode in analyses},
        "session_memory_bytes": {mode: analyses[mode]["totals"]["memory_bytes"] for mode in analyses},
        "session_request_bytes": {mode: analyses[mode]["totals"]["request_bytes"] for mode in analyses},
        "routed_contexts": analyses["slim"]["totals"]["contexts"],
        "method": "request bytes measured from the real client",
    })


def missed_targets(figures):
    """The targets the figures miss (empty when all are met)."""
    missed = []
    last = figures["checkpoints"][-1]
    if last["ratio"] is None or last["ratio"] >= 1.0:
        missed.append(f"cumulative memory bytes: slim + router / flat = {last['ratio']} at {last['prompts']} "
                      "prompts (target below 1.0)")
    calls = figures["last_call_memory_bytes"]
    if calls["slim"] is None or calls["flat"] is None or calls["slim"] > calls["flat"]:
        missed.append(f"last call: slim + router carries {calls['slim']} memory bytes, flat {calls['flat']} "
                      "(target: no heavier than flat)")
    return missed


def print_figures(figures, seconds=None):
    print(f"session of {figures['prompts']} prompts on the bundled example store ({figures['method']})")
    for point in figures["checkpoints"]:
        print(f"  after {point['prompts']:>3} prompts: flat {point['flat']:>10,}  slim + router {point['slim']:>10,}"
              f"  ratio {point['ratio']:.3f}x")
    crossing = figures["crossing_prompt"]
    print("  slim + router's running total " + (f"passes flat's at prompt {crossing}" if crossing
                                                else "never passes flat's"))
    last = figures["last_call_memory_bytes"]
    print(f"  last call's memory bytes: flat {last['flat']:,}, slim + router {last['slim']:,}, none {last['none']:,}")
    print(f"  routed contexts in the slim session: {figures['routed_contexts']}")
    rich = figures.get("utterances")
    if rich is None:
        print("  slim + router + utterances: not run (this lab copies the cluster file alone; see the docstring)")
    else:
        for point in rich["checkpoints"]:
            print(f"  with utterances, after {point['prompts']:>3} prompts: slim + router {point['slim']:>10,}"
                  f"  ratio {point['ratio']:.3f}x")
        print(f"  routed contexts in the session with utterances: {rich['routed_contexts']}")
    if seconds:
        print("  wall time: " + ", ".join(f"{mode} {s} s" for mode, s in seconds.items()))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompts", type=int, default=60, help="suite prompts in the session (default 60)")
    parser.add_argument("--claude", metavar="PATH", help="the claude executable (default: harness.lab discovery)")
    parser.add_argument("--keep", metavar="DIR", help="run in DIR (new) and keep it (default: a temp dir, removed)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)

    from harness.lab.client import find_claude

    claude = find_claude(args.claude)[0]
    prompts = suite_prompts(args.prompts)
    if args.keep:
        analyses, seconds = run_all(os.path.abspath(args.keep), prompts, claude)
    else:
        with tempfile.TemporaryDirectory(prefix="session-bytes-") as tmp:
            analyses, seconds = run_all(tmp, prompts, claude)
    figures = figures_of(analyses, len(prompts))
    figures["missed_targets"] = missed_targets(figures)
    if args.json:
        print(json.dumps(dict(figures, seconds=seconds), indent=2))
    else:
        print_figures(figures, seconds)
        for miss in figures["missed_targets"]:
            print(f"  MISSED: {miss}")
    return 1 if figures["missed_targets"] else 0


if __name__ == "__main__":
    sys.exit(main())
