"""What `memory-router clusters enrich` costs beyond the engine's own time (issue 21's target: a
first enrich of a 130-memory store through the command engine completes its bookkeeping in under
2 s beyond the engine).

The store is a copy of benchmarks/heldout (135 memories in 27 clusters, a topic file for each).
The engine is a trivial fast program (below: it answers every request with N fixed utterances per
memory and does nothing else). Two figures:

- **end to end**: the installed console script, `memory-router clusters enrich --engine command
  --yes --json` (interpreter start, argument parsing, reading the store and its topic files, the
  estimate, 27 requests, the checks, 27 atomic rewrites of the file with fsync), minus the
  engine's own time: the same program run on the same 27 requests, one after another, from this
  script (its start-up, reading and answering);
- **in process**: `harness.clusters.enrich.prepare` + `run_enrich`, with the time spent inside the
  engine's `ask` (spawning and waiting for the program) taken out.

    python benchmarks/enrich_overhead.py [--runs 3] [--per-memory 10] [--json]

Exit 1 when the end-to-end bookkeeping (median over the runs) is 2 s or more.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from harness.clusters import enrich  # noqa: E402
from harness.clusters.engines import create_engine  # noqa: E402
from router.config import utterances_path  # noqa: E402

STORE = os.path.join(HERE, "heldout")
TARGET_SECONDS = 2.0
ENGINE = r'''import json, sys
request = json.load(sys.stdin)
n = request["per_memory"]
json.dump({"utterances": {m["slug"]: ["where is the thing for %s, try %d" % (m["slug"], k) for k in range(n)]
                          for m in request["memories"]}}, sys.stdout)
'''


def make_store(directory):
    brain = os.path.join(directory, "brain")
    os.makedirs(brain)
    cluster_file = os.path.join(brain, "memory-layer1-clusters.md")
    shutil.copyfile(os.path.join(STORE, "clusters.md"), cluster_file)
    engine = os.path.join(directory, "engine.py")
    with open(engine, "w", encoding="utf-8") as handle:
        handle.write(ENGINE)
    return cluster_file, os.path.join(STORE, "memory"), f"{sys.executable} -I {engine}"


def engine_own_time(command, requests):
    """The engine program run on ``requests`` one after another: its own time."""
    argv = command.split()
    started = time.perf_counter()
    for request in requests:
        subprocess.run(argv, input=json.dumps(request).encode(), capture_output=True, check=True)
    return time.perf_counter() - started


def console_script():
    exe = shutil.which("memory-router", path=os.path.dirname(sys.executable)) or shutil.which("memory-router")
    if exe is None:
        sys.exit("the memory-router console script is not installed (pip install -e .)")
    return exe


def end_to_end(per_memory):
    with tempfile.TemporaryDirectory(prefix="enrich-overhead-") as directory:
        cluster_file, memory_dir, command = make_store(directory)
        plan, _writer = enrich.prepare(cluster_file, memory_dir, dry_run=True)
        requests = enrich.job_requests(plan.jobs, per_memory)
        argv = [console_script(), "clusters", "enrich", "--clusters", cluster_file, "--memory-dir", memory_dir,
                "--engine", "command", "--command", command, "--per-memory", str(per_memory), "--yes", "--json"]
        env = {**os.environ, "HOME": directory}
        started = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, cwd=directory, env=env)
        total = time.perf_counter() - started
        if done.returncode != 0:
            sys.exit(f"enrich failed (exit {done.returncode}): {done.stderr.strip()[-400:]}")
        report = json.loads(done.stdout)
        engine = engine_own_time(command, requests)
        return {"total": total, "engine": engine, "bookkeeping": total - engine, "requests": len(requests),
                "memories": report["memories"], "rows": report["rows"]}


class TimedEngine:
    """An engine whose ``ask`` time is summed (the engine's share of an in-process run)."""

    def __init__(self, engine):
        self.engine, self.seconds = engine, 0.0
        self.name, self.model, self.overhead_tokens = engine.name, engine.model, engine.overhead_tokens

    def ask(self, request):
        started = time.perf_counter()
        try:
            return self.engine.ask(request)
        finally:
            self.seconds += time.perf_counter() - started


def in_process(per_memory):
    with tempfile.TemporaryDirectory(prefix="enrich-overhead-") as directory:
        cluster_file, memory_dir, command = make_store(directory)
        engine = TimedEngine(create_engine("command", command=command))
        started = time.perf_counter()
        plan, writer = enrich.prepare(cluster_file, memory_dir)
        enrich.estimate(enrich.job_requests(plan.jobs, per_memory), engine)
        result = enrich.run_enrich(plan, engine, per_memory, writer)
        total = time.perf_counter() - started
        assert not enrich.failed(result.outcomes) and os.path.isfile(utterances_path(cluster_file))
        return {"total": total, "engine": engine.seconds, "bookkeeping": total - engine.seconds,
                "writes": writer.writes}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--per-memory", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    outer = [end_to_end(args.per_memory) for _ in range(args.runs)]
    inner = [in_process(args.per_memory) for _ in range(args.runs)]
    figures = {
        "memories": outer[0]["memories"], "requests": outer[0]["requests"], "rows": outer[0]["rows"],
        "per_memory": args.per_memory, "runs": args.runs, "target_seconds": TARGET_SECONDS,
        "end_to_end": {key: round(statistics.median(r[key] for r in outer), 3) for key in ("total", "engine",
                                                                                          "bookkeeping")},
        "in_process": {key: round(statistics.median(r[key] for r in inner), 3) for key in ("total", "engine",
                                                                                          "bookkeeping")},
    }
    ok = figures["end_to_end"]["bookkeeping"] < TARGET_SECONDS
    figures["ok"] = ok
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        e, i = figures["end_to_end"], figures["in_process"]
        print(f"first enrich of {figures['memories']} memories, {figures['requests']} requests, "
              f"{figures['rows']} rows (median of {args.runs} runs)")
        print(f"  end to end (console script): {e['total']:.2f} s, engine's own {e['engine']:.2f} s, "
              f"bookkeeping {e['bookkeeping']:.2f} s (target < {TARGET_SECONDS:g} s): {'ok' if ok else 'MISSED'}")
        print(f"  in process: {i['total']:.2f} s, inside the engine {i['engine']:.2f} s, "
              f"bookkeeping {i['bookkeeping']:.2f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
