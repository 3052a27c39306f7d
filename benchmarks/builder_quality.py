"""How well built clusters route, against the hand-made clusters of the bundled example store.

Builds a cluster file from the example store's flat MEMORY.md into a temp directory with the real
command (``memory-router clusters build --index ... --out ...``), then measures, in the same run:

- self-routing: the share of members whose own hook text routes to their own cluster;
- for each bundled canary suite, run against the hand-made file and the built file: fact recall
  (share of ``injects`` slugs injected), no-route false priming (silent cases that got an
  injection), and mean injected characters per prompt. Per-cluster precision and recall are left
  out on purpose: the suites' ``routes_to`` name the hand-made cluster ids, which a built file
  does not share;
- id stability: three memories taken out, built, put back and rebuilt; how many cluster ids
  survive (default rebuild, and with --keep-clusters) and how many members moved.

    python benchmarks/builder_quality.py [--json]

Targets (issue 7): self-routing >= 90%; fact recall on the example suite within 10 points of the
hand-made clusters'. Exit 1 when either is missed.
"""

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from canaries.metrics import suite_metrics  # noqa: E402
from canaries.runner import run_suite  # noqa: E402
from canaries.suite import bundled_suites, load_suite  # noqa: E402
from harness.clusters import builder  # noqa: E402
from harness.memorydir import read_flat_index  # noqa: E402
from harness.cli import main as cli_main  # noqa: E402
from router.store.clusterfile import load_cluster_file  # noqa: E402
from router.config import bundled_cluster_file, bundled_flat_index, default_settings  # noqa: E402
from router.providers.provider import build_table  # noqa: E402

HELD_OUT = (3, 50, 90)  # positions (in slug order) of the memories added back in the stability run


def run_build(args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = cli_main(["clusters", "build", *args, "--json"])
    if code != 0:
        raise SystemExit(f"clusters build failed with exit {code}")
    return json.loads(out.getvalue())


def suite_figures(suite, table, settings):
    metrics = suite_metrics(run_suite(suite, settings, table=table).results)
    return {
        "fact_recall": metrics["fact_recall"]["recall"],
        "facts": metrics["fact_recall"]["facts"],
        "false_primed": metrics["no_route"]["false_primed"],
        "silent_cases": metrics["no_route"]["silent_cases"],
        "false_priming_rate": metrics["no_route"]["false_priming_rate"],
        "mean_injected_chars": metrics["injected_chars"]["mean"],
    }


def stability(memories):
    ordered = sorted(memories, key=lambda m: m.slug)
    added = {ordered[i].slug for i in HELD_OUT}
    first = builder.build_clusters([m for m in ordered if m.slug not in added]).index
    figures = {"added": sorted(added), "clusters_before": len(first)}
    for name, keep in (("rebuild", False), ("keep_clusters", True)):
        second = builder.build_clusters(ordered, previous=first, keep_clusters=keep).index
        changes = builder.compare_builds(first, second)
        figures[name] = {"ids_kept": len(changes["kept"]), "moved": len(changes["moved"]),
                         "new": len(changes["new"]), "removed": len(changes["removed"])}
    return figures


def measure():
    settings = default_settings()
    hand_path = bundled_cluster_file()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "brain", "memory-layer1-clusters.md")
        started = time.perf_counter()
        summary = run_build(["--index", bundled_flat_index(), "--out", out])
        build_seconds = time.perf_counter() - started
        built = load_cluster_file(out)
    hand = load_cluster_file(hand_path)
    tables = {"hand": build_table(hand), "built": build_table(built)}
    suites = {}
    for path in bundled_suites():
        # Loaded against the hand-made file, so its routes_to ids validate; run against both.
        suite = load_suite(path, cluster_path=hand_path)
        suites[os.path.basename(path)] = {name: suite_figures(suite, table, settings)
                                          for name, table in tables.items()}
    return {
        "memories": summary["memories"],
        "built_clusters": len(built),
        "hand_clusters": len(hand),
        "build_seconds": round(build_seconds, 3),
        "self_routing": {"built": summary["self_routing"]["share"],
                         "hand": builder.self_routing(hand, settings)["share"],
                         "misses": summary["self_routing"]["misses"]},
        "suites": suites,
        "stability": stability(read_flat_index(bundled_flat_index())),
    }


def verdict(figures):
    failures = []
    if figures["self_routing"]["built"] < 0.9:
        failures.append(f"self-routing {figures['self_routing']['built']:.1%} < 90%")
    example = figures["suites"].get("example.yaml")
    if example:
        gap = example["hand"]["fact_recall"] - example["built"]["fact_recall"]
        if gap > 0.10:
            failures.append(f"fact recall {gap:.1%} below the hand-made clusters' (> 10 points)")
    return failures


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    figures = measure()
    failures = verdict(figures)
    figures["failures"] = failures
    if args.json:
        print(json.dumps(figures, indent=2))
        return 1 if failures else 0
    print(f"built {figures['built_clusters']} clusters from {figures['memories']} memories in "
          f"{figures['build_seconds']:.2f} s (hand-made: {figures['hand_clusters']} clusters)")
    sr = figures["self_routing"]
    print(f"self-routing (own hook text reaches own cluster): built {sr['built']:.1%}, hand-made {sr['hand']:.1%}")
    for name, both in figures["suites"].items():
        print(f"\n{name}")
        print(f"  {'metric':<28}{'hand-made':>12}{'built':>12}")
        for key, label, fmt in (("fact_recall", "fact recall", "{:.1%}"),
                                ("false_primed", "false priming (silent cases)", "{}"),
                                ("mean_injected_chars", "mean injected chars", "{:.0f}")):
            hand_value, built_value = both["hand"][key], both["built"][key]
            if key == "false_primed":
                hand_value = f"{hand_value}/{both['hand']['silent_cases']}"
                built_value = f"{built_value}/{both['built']['silent_cases']}"
            print(f"  {label:<28}{fmt.format(hand_value):>12}{fmt.format(built_value):>12}")
    st = figures["stability"]
    print(f"\nstability: {len(st['added'])} memories added back to a {st['clusters_before']}-cluster build")
    for name in ("rebuild", "keep_clusters"):
        row = st[name]
        print(f"  {name:<14} ids kept {row['ids_kept']}, new {row['new']}, removed {row['removed']}, "
              f"members moved {row['moved']}")
    for failure in failures:
        print(f"TARGET MISSED: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
