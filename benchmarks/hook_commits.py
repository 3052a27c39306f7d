"""The hook's median on the example store at several commits, interleaved in one run, against the
floor ``python -c "import json, sys; json.load(sys.stdin)"`` (issue 27: a layout move must not
make the hook slower).

    python benchmarks/hook_commits.py REV [REV ...] [--runs 60]

Each REV is checked out into a temporary worktree and its hook run as ``python -P -c`` importing
that tree's ``harness.cli`` (the interpreter and its installed dependencies are this one's), with
a new session id per run and a cache of its own; the first run of each builds its cache and is
not timed. Prints the median per command and its ratio to the floor measured in the same run.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROMPT = "the Bash tool cannot see the env var I set with setx"


def hook_command(tree):
    store = os.path.join(tree, "router", "data", "example", "memory-layer1-clusters.md")
    code = (f"import sys; sys.path.insert(0, {tree!r}); from harness.cli import main; "
            f"sys.exit(main(['hook', '--clusters', {store!r}]))")
    return [sys.executable, "-P", "-c", code]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("revs", nargs="+", metavar="REV")
    parser.add_argument("--runs", type=int, default=60)
    args = parser.parse_args(argv)
    from revtrees import revision_trees

    with tempfile.TemporaryDirectory() as tmp, revision_trees(args.revs) as trees:
        commands = {"floor": [sys.executable, "-P", "-c", "import json, sys; json.load(sys.stdin)"]}
        for rev, tree in zip(args.revs, trees):
            commands[rev] = hook_command(tree)
        env = dict(os.environ, MEMORY_ROUTER_CACHE_DIR=os.path.join(tmp, "cache"))
        for name in ("PYTHONDONTWRITEBYTECODE", "MEMORY_ROUTER_LOG"):
            env.pop(name, None)
        samples = {name: [] for name in commands}
        for i in range(args.runs + 1):
            payload = json.dumps({"session_id": f"commits-{os.getpid()}-{i}", "cwd": tmp, "prompt": PROMPT,
                                  "hook_event_name": "UserPromptSubmit"}).encode()
            for name, command in commands.items():
                start = time.perf_counter()
                done = subprocess.run(command, input=payload, capture_output=True, env=env)
                if i == 0:
                    if name != "floor" and b"additionalContext" not in done.stdout:
                        raise SystemExit(f"{name}: the hook did not route the probe prompt")
                    continue
                samples[name].append(time.perf_counter() - start)
    floor = statistics.median(samples["floor"])
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"{name:12} median {median * 1000:7.2f} ms  {median / floor:.2f}x the floor")
    print(f"runs per command: {args.runs}, interleaved; interpreter: {sys.executable}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
