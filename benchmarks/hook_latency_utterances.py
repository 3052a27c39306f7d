"""Hook latency with utterances, against the floor any Python hook pays, measured in the same run.

    python benchmarks/hook_latency_utterances.py [--runs 30]

Starts the installed ``memory-router hook`` console script (as Claude Code runs it), interleaved
with the floor ``python3 -c "import json, sys; json.load(sys.stdin)"`` (benchmarks/hook_latency.py's
payload and timer), for:

- the bundled example store with its shipped utterances, and the same store with
  ``utterances = false`` (the router as it was before utterances: the example store must not get
  slower);
- a generated store of 10,000 members in 2,000 clusters with 10 synthetic utterances per member
  (``stores.generate_utterances``: 100,000 rows beside the cluster file), with a prompt made of
  one member's utterance words (so the utterance postings are read and scored) and with the setx
  prompt (which grazes nothing there), and the same store without its utterances file.

Every hook runs with a new session (no session record). The caches are built first (the first
prompt after the utterances file changes pays the rebuild; the table build time of the big store
is printed). Target (issue 21): hook median within 1.3x the floor on the example store and on the
10,000-member store with utterances.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

from hook_latency import PROMPT, _payload, _time  # noqa: E402
from stores import generate_store, generate_utterances  # noqa: E402

TARGET = 1.3


def write_utterances(cluster_path, utterances):
    from router.config import utterances_path
    from router.store.utterances import Utterance, render_utterances

    rows = [Utterance(slug, text, "-", "hand", "-", "2026-12-01T21:00:00Z", 0)
            for slug, texts in utterances.items() for text in texts]
    with open(utterances_path(cluster_path), "w", encoding="utf-8") as handle:
        handle.write(render_utterances(rows))


def routed_probe(text, utterances):
    """The first utterance of members m_01234_* that routes in-process with the shipped settings:
    the synthetic words are random, and most single utterances stay under the floor."""
    from router.store.clusterfile import parse_cluster_text
    from router.config import default_settings
    from router.providers.provider import route
    from router.routing.score import build_routing_table
    from router.routing.weightedtable import extend_table

    index = parse_cluster_text(text, "<synthetic>")
    table = extend_table(build_routing_table(index), index, utterances=utterances)
    settings = dict(default_settings(), provider="weighted")
    for slug in sorted(s for s in utterances if s.startswith("m_01234_")):
        for probe in utterances[slug]:
            if route(probe, table, settings)["routed"]:
                return probe
    raise SystemExit("no utterance of members m_01234_* routes on the synthetic store")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30, help="runs per command (default 30)")
    args = parser.parse_args(argv)
    exe = shutil.which("memory-router", path=os.path.dirname(sys.executable)) or shutil.which("memory-router")
    if exe is None:
        raise SystemExit("install the project first: the memory-router console script was not found")
    from router.cache import RACY_WINDOW_NS
    from router.config import bundled_cluster_file

    with tempfile.TemporaryDirectory() as tmp:
        text = generate_store(clusters=2000, members_per_cluster=5)
        utterances = generate_utterances(text, per_member=10)
        rich = os.path.join(tmp, "rich", "clusters.md")
        plain = os.path.join(tmp, "plain", "clusters.md")
        for path in (rich, plain):
            os.makedirs(os.path.dirname(path))
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
        write_utterances(rich, utterances)
        probe = routed_probe(text, utterances)
        off = os.path.join(tmp, "off.toml")
        with open(off, "w", encoding="utf-8") as handle:
            handle.write("utterances = false\n")
        time.sleep(RACY_WINDOW_NS / 1e9 + 0.1)  # nothing is cached for a file changed in the last 2 s
        env = dict(os.environ, MEMORY_ROUTER_CACHE_DIR=os.path.join(tmp, "cache"))
        env.pop("MEMORY_ROUTER_LOG", None)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's install has bytecode caches
        example = bundled_cluster_file()
        count = [0]

        def payload(prompt):
            def make():
                count[0] += 1
                return _payload(tmp, f"bench-utterances-{os.getpid()}-{count[0]}", os.path.join(tmp, "none.jsonl")
                                ).replace(PROMPT.encode(), prompt.encode())
            return make

        floor = ([sys.executable, "-c", "import json, sys; json.load(sys.stdin)"], payload(PROMPT))
        commands = {
            "floor: python3 -c json.load(stdin)": floor,
            "example store, utterances (shipped)": ([exe, "hook", "--clusters", example], payload(PROMPT)),
            "example store, utterances = false (as before)": ([exe, "hook", "--clusters", example, "--config", off],
                                                              payload(PROMPT)),
            "10,000 members + 100,000 utterances, utterance prompt": ([exe, "hook", "--clusters", rich],
                                                                      payload(probe)),
            "10,000 members + 100,000 utterances, setx prompt": ([exe, "hook", "--clusters", rich], payload(PROMPT)),
            "10,000 members, no utterances file, utterance prompt": ([exe, "hook", "--clusters", plain],
                                                                     payload(probe)),
        }
        builds = {}
        for name, (cmd, make) in commands.items():
            builds[name] = _time(cmd, make(), env)[0]
        routed = _time(commands["10,000 members + 100,000 utterances, utterance prompt"][0],
                       commands["10,000 members + 100,000 utterances, utterance prompt"][1](), env)[1]
        if b"additionalContext" not in routed:
            raise SystemExit("the utterance prompt did not route on the 10,000-member store")
        samples = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, (cmd, make) in commands.items():  # interleaved so drift hits every command alike
                samples[name].append(_time(cmd, make(), env)[0])
    medians = {name: statistics.median(values) * 1000 for name, values in samples.items()}
    base = medians["floor: python3 -c json.load(stdin)"]
    print(f"{'command':58} {'median ms':>10} {'x floor':>8} {'first run (cache build) s':>26}")
    for name, value in medians.items():
        print(f"{name:58} {value:10.2f} {value / base:8.2f} {builds[name]:26.2f}")
    for name in ("example store, utterances (shipped)", "10,000 members + 100,000 utterances, utterance prompt"):
        ratio = medians[name] / base
        print(f"{name}: {ratio:.2f}x floor (target <= {TARGET}x): {'met' if ratio <= TARGET else 'MISSED'}")
    before = medians["example store, utterances = false (as before)"]
    print(f"example store: with utterances {medians['example store, utterances (shipped)']:.2f} ms, "
          f"without {before:.2f} ms")
    print(f"runs per command: {args.runs}; interpreter: {sys.executable}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
