"""What the canary harness costs on top of the routing it checks.

Generates a 1,000-case suite over the bundled example store (prompts built from member hooks,
slug words and neutral filler, each case given the expectations the router currently meets plus
size and margin limits, so every expectation kind is exercised), writes it as YAML to a temp dir,
and measures in one process:

- baseline: one in-process ``route_prompt`` call per prompt (the routing itself);
- harness: ``run_suite`` on the loaded suite (route + evaluate every expectation + build results);
- load: ``load_suite`` (parse the YAML with line numbers, validate against the store).

The figure is harness time per case / route time per call (target < 2x: the harness adds less
than the routing itself). Each measurement is the best of several interleaved repeats, in CPU
time of this process (``time.process_time``), so a busy machine skews both sides less.

    python benchmarks/canary_throughput.py [--cases N] [--repeats R] [--json]

Exit 1 when the ratio misses the target.
"""

import argparse
import json
import os
import random
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from canaries.runner import run_suite  # noqa: E402
from canaries.suite import load_suite  # noqa: E402
from router.store.clusterfile import load_cluster_file  # noqa: E402
from router.config import bundled_cluster_file, default_settings  # noqa: E402
from router.routing.score import build_routing_table, route_prompt  # noqa: E402

TARGET_RATIO = 2.0
FILLER = ("please", "quick", "question", "about", "this", "today", "again", "could", "you", "check",
          "refactor", "loop", "weather", "capital", "australia", "haiku", "poem", "lunch", "idea", "why")


def generate_prompts(index, count, seed=7):
    rng = random.Random(seed)
    members = [(cluster.cluster_id, member) for cluster in index.clusters for member in cluster.members]
    prompts = []
    while len(prompts) < count:
        kind = len(prompts) % 4
        if kind == 3:
            prompts.append(" ".join(rng.choice(FILLER) for _ in range(rng.randint(3, 9))))
            continue
        _cluster_id, member = rng.choice(members)
        words = member.hook.split()
        start = rng.randint(0, max(0, len(words) - 6))
        fragment = " ".join(words[start:start + rng.randint(4, 12)])
        if kind == 1:
            fragment = member.slug.replace("_", " ") + " " + fragment
        elif kind == 2:
            fragment = " ".join(rng.choice(FILLER) for _ in range(3)) + " " + fragment
        prompts.append(fragment)
    return prompts


def case_for(number, prompt, decision):
    case = {"id": f"gen-{number:04d}", "prompt": prompt, "tags": ["generated"],
            "max_chars": 9500, "max_lines": 12}
    if decision["routed"]:
        case["routes_to"] = sorted(decision["routed"])
        slugs = [line["slug"] for line in decision["lines"]]
        case["injects"] = slugs[:2]
        case["min_margin"] = max(0, decision["margin_over_floor"])
    else:
        case["silent"] = True
    return case


def write_suite(directory, cluster_path, prompts, table, settings):
    import yaml

    cases = [case_for(n, p, route_prompt(p, table, settings)) for n, p in enumerate(prompts)]
    path = os.path.join(directory, "canary_generated.yaml")
    with open(path, "w", encoding="utf-8") as handle:
        yaml.safe_dump({"clusters": cluster_path, "cases": cases}, handle, sort_keys=False, allow_unicode=True)
    return path, cases


def best_of(repeats, fn):
    # CPU time of this process, so other processes competing for the cores do not count.
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        fn()
        best = min(best, time.process_time() - started)
    return best


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    cluster_path = bundled_cluster_file()
    index = load_cluster_file(cluster_path)
    table = build_routing_table(index)
    settings = default_settings()
    prompts = generate_prompts(index, args.cases)
    with tempfile.TemporaryDirectory() as directory:
        path, cases = write_suite(directory, cluster_path, prompts, table, settings)
        suite = load_suite(path)

        def route_all():
            for prompt in prompts:
                route_prompt(prompt, table, settings)

        def harness():
            return run_suite(suite, settings, table=table)

        route_time = harness_time = load_time = float("inf")
        for _ in range(args.repeats):  # interleaved, so drift hits both sides alike
            route_time = min(route_time, best_of(1, route_all))
            harness_time = min(harness_time, best_of(1, harness))
        load_time = best_of(max(1, args.repeats // 2), lambda: load_suite(path))
        result = harness()

    counts = result.counts()
    per_route = route_time / len(prompts)
    per_case = harness_time / len(prompts)
    per_load = load_time / len(prompts)
    report = {
        "cases": len(prompts),
        "silent_cases": sum(1 for c in cases if c.get("silent")),
        "verdicts": counts,
        "route_us_per_call": per_route * 1e6,
        "harness_us_per_case": per_case * 1e6,
        "load_us_per_case": per_load * 1e6,
        "ratio": per_case / per_route,
        "ratio_with_load": (per_case + per_load) / per_route,
        "target_ratio": TARGET_RATIO,
    }
    report["ok"] = report["ratio"] < TARGET_RATIO and counts["fail"] == 0 and counts["xpass"] == 0
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"{report['cases']} generated cases ({report['silent_cases']} silent) over the bundled store: "
              f"{counts['pass']} passed, {counts['fail']} failed")
        print(f"route_prompt:         {report['route_us_per_call']:8.1f} us per call (baseline)")
        print(f"canary harness (run): {report['harness_us_per_case']:8.1f} us per case "
              f"= {report['ratio']:.2f}x one route call (target < {TARGET_RATIO:.0f}x)")
        print(f"suite load (YAML + validation): {report['load_us_per_case']:.1f} us per case; "
              f"load + run = {report['ratio_with_load']:.2f}x")
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
