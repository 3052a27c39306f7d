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
    python benchmarks/session_bytes.py --store heldout2 [--prompts 60]

``--store heldout`` or ``heldout2`` runs a bundled held-out store instead (issue 28): its own
``session-60.txt`` prompts, its flat MEMORY.md against its slim MEMORY.md plus the router with
the blind utterances and near-misses written for it beside a copy of its cluster file (the lab
copies them in as a user's hook would find them), and ``none``. Targets there: slim + router at
most ``HELDOUT_RATIO`` (0.40) of flat's cumulative memory bytes, and every call lighter than the
same call of the flat session.
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
HELDOUT_RATIO = 0.40
HELDOUT_STORES = {
    "heldout": ("heldout-gullwing.tsv", "nearmiss-gullwing.tsv"),
    "heldout2": ("heldout2-thistledown.tsv", "nearmiss-thistledown.tsv"),
}
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


def heldout_setup(name, tmp):
    """``run_session`` keywords and prompts for a bundled held-out store: a copy of its cluster file
    with the blind utterances and near-misses beside it, its MEMORY.md, a config holding only its
    hot strip (the store's own config names its cluster file relative to itself)."""
    sys.path.insert(0, os.path.join(REPO, "benchmarks"))
    from utterancefiles import ENRICHMENT, store_copy_with_utterances
    from router.configfile import load_config

    base = os.path.join(REPO, "benchmarks", name)
    blind, near = HELDOUT_STORES[name]
    os.makedirs(os.path.join(tmp, "store"), exist_ok=True)
    clusters = store_copy_with_utterances(os.path.join(base, "clusters.md"), os.path.join(ENRICHMENT, blind),
                                          os.path.join(tmp, "store"), memory_dir=os.path.join(base, "memory"),
                                          near_path=os.path.join(ENRICHMENT, near))
    hot = load_config(os.path.join(base, "memory-router.toml"))["hot_strip"]
    config = os.path.join(tmp, "store", "memory-router.toml")
    with open(config, "w", encoding="utf-8") as handle:
        handle.write("hot_strip = [" + ", ".join(json.dumps(slug) for slug in hot) + "]\n")
    with open(os.path.join(base, "session-60.txt"), encoding="utf-8") as handle:
        prompts = [line.rstrip("\n") for line in handle if line.strip()]
    return {"clusters": clusters, "flat_index": os.path.join(base, "memory", "MEMORY.md"), "config": config}, prompts


def run_heldout(run_dir, name, count, claude):
    """(analyses, seconds, prompts) of flat, slim + router with utterances and near-misses, none."""
    from harness.lab import measure
    from harness.lab.runner import run_session

    store, prompts = heldout_setup(name, os.path.join(run_dir, "setup"))
    prompts = prompts[:count]
    analyses, seconds = {}, {}
    for mode, memory, hook in (("flat", "flat", False), ("slim", "slim", True), ("none", "none", False)):
        started = time.time()
        result = run_session(os.path.join(run_dir, mode), prompts, memory, claude=claude, hook=hook,
                             store_files=(mode == "slim"), **store)
        failed = [o.index for o in result.outcomes if o.exit_code != 0]
        if failed:
            raise SystemExit(f"{mode}: the client failed on prompts {failed}; see {result.run_dir}/run.json")
        analyses[mode] = measure.analyze_requests(measure.read_log(result.request_log))
        seconds[mode] = round(time.time() - started, 1)
    return analyses, seconds, prompts


def heavier_calls(analyses):
    """The main-thread calls of the slim session that carry more memory bytes than the same call
    (by order) of the flat session."""
    flat = [c for c in analyses["flat"]["calls"] if c.get("thread") == "main"]
    slim = [c for c in analyses["slim"]["calls"] if c.get("thread") == "main"]
    return [i for i, (f, s) in enumerate(zip(flat, slim)) if s["memory_bytes"] >= f["memory_bytes"]]


def heldout_report(analyses, store, prompts, seconds=None):
    """The held-out run's figures and the targets they miss: slim + router's main-thread memory
    bytes at most ``HELDOUT_RATIO`` of flat's, and no call as heavy as flat's."""
    flat = analyses["flat"]["totals"]["main_memory_bytes"]
    slim = analyses["slim"]["totals"]["main_memory_bytes"]
    heavier = heavier_calls(analyses)
    ratio = slim / flat if flat else None
    missed = ([f"ratio {ratio} (target <= {HELDOUT_RATIO})"] if ratio is None or ratio > HELDOUT_RATIO else [])
    missed += [f"{len(heavier)} call(s) no lighter than flat's: {heavier[:10]}"] if heavier else []
    return {"store": store, "prompts": prompts, "flat_memory_bytes": flat, "slim_memory_bytes": slim, "ratio": ratio,
            "heavier_calls": heavier, "routed_contexts": analyses["slim"]["totals"]["contexts"],
            "seconds": seconds, "target_ratio": HELDOUT_RATIO, "missed_targets": missed}


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
    parser.add_argument("--store", choices=("example",) + tuple(HELDOUT_STORES), default="example",
                        help="the bundled store to run (default: the example store)")
    args = parser.parse_args(argv)

    from harness.lab.client import find_claude

    claude = find_claude(args.claude)[0]
    if args.store != "example":
        with tempfile.TemporaryDirectory(prefix="session-bytes-") as tmp:
            analyses, seconds, prompts = run_heldout(args.keep or tmp, args.store, args.prompts, claude)
        report = heldout_report(analyses, args.store, len(prompts), seconds)
        ratio, heavier, missed = report["ratio"], report["heavier_calls"], report["missed_targets"]
        flat, slim = report["flat_memory_bytes"], report["slim_memory_bytes"]
        if args.json:
            print(json.dumps(report, indent=2))
        else:
            print(f"{args.store}: {len(prompts)} prompts, memory bytes flat {flat:,}, slim + router with utterances "
                  f"and near-misses {slim:,}: {ratio if ratio is None else round(ratio, 3)}x (target <= {HELDOUT_RATIO}); "
                  f"calls no lighter than "
                  f"flat's: {len(heavier)}; routed contexts {report['routed_contexts']}")
            for miss in missed:
                print(f"  MISSED: {miss}")
        return 1 if missed else 0
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
