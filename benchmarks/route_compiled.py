"""``memory-router route`` on a large enriched store: reading the hook's compiled table against
building a table of its own (what ``route``, ``replay`` and the MCP server did before issue 35
item 6), measured in the same run.

    python benchmarks/route_compiled.py [--clusters 2000] [--near-misses 50] [--runs 3]

Generates a store (``stores.generate_store``: 5 members per cluster), 10 synthetic utterances per
member and ``--near-misses`` per cluster (2,000 x 50 = 100,000 rows, the issue's store), compiles
the hook's table once (``clusters compile``, timed), then times, interleaved, ``route --json``
through the CLI in process (``harness.cli.main``, the compiled table) and the baseline: the same
router context with a table built from the files (``router.hooks.compiled.build_table_of``, the
old ``RouterContext``'s build). Both must give the same decision; the ratio is the claim.
"""

import argparse
import contextlib
import io
import json
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

from hook_latency_utterances import routed_probe, write_near_misses, write_utterances  # noqa: E402
from stores import generate_store, generate_utterances  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=2000)
    parser.add_argument("--near-misses", type=int, default=50, help="per cluster")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MEMORY_ROUTER_CACHE_DIR"] = os.path.join(tmp, "cache")
        os.environ["HOME"] = tmp
        store = os.path.join(tmp, "brain", "memory-layer1-clusters.md")
        os.makedirs(os.path.dirname(store))
        text = generate_store(clusters=args.clusters)
        with open(store, "w", encoding="utf-8") as handle:
            handle.write(text)
        utterances = generate_utterances(text)
        write_utterances(store, utterances)
        write_near_misses(store, text, per_cluster=args.near_misses)
        prompt = routed_probe(text, utterances)

        from harness.cli import main as cli
        from harness.context import route_json
        from router import config as config_mod
        from router.hooks.compiled import build_table_of
        from router.hooks.session import route_fresh
        from router.store.clusterfile import load_cluster_file

        started = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            assert cli(["clusters", "compile", "--clusters", store]) == 0
        print(f"clusters compile: {time.perf_counter() - started:.1f} s (once, when the store is written)")

        class Built:   # the old RouterContext: a table built from the files on every invocation
            def __init__(self):
                self.cluster_path, self.settings, self.config = store, config_mod.settings_of(None), None
                self.index = load_cluster_file(store)
                self.table = build_table_of(store)

            def skipped_rows(self):
                return ()

        compiled_s, built_s = [], []
        for _ in range(args.runs):
            out = io.StringIO()
            started = time.perf_counter()
            with contextlib.redirect_stdout(out):
                assert cli(["route", prompt, "--clusters", store, "--json"]) == 0
            compiled_s.append(time.perf_counter() - started)
            started = time.perf_counter()
            ctx = Built()
            baseline = route_json(ctx, route_fresh(prompt, ctx.table, ctx.settings, cwd=os.getcwd(),
                                                   cluster_file=store, log_as="route"))
            built_s.append(time.perf_counter() - started)
            assert json.loads(out.getvalue())["hook_output"] == baseline["hook_output"], "the two decisions differ"
        compiled, built = statistics.median(compiled_s), statistics.median(built_s)
        print(f"store: {args.clusters * 5:,} members, {args.clusters * 5 * 10:,} utterances, "
              f"{args.clusters * args.near_misses:,} near-misses; {args.runs} runs each, interleaved")
        print(f"route --json reading the compiled table: median {compiled:.2f} s")
        print(f"baseline, a table built from the files:  median {built:.2f} s")
        print(f"ratio: {built / compiled:.0f}x faster")
    return 0


if __name__ == "__main__":
    sys.exit(main())
