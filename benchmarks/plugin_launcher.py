"""Benchmark: what the plugin's launcher (plugins/memory-router/scripts/memory-router-launch) adds
to every prompt, against the installed ``memory-router hook`` run directly on the same payload in
the same run, interleaved; and the launcher with no memory-router found (it fails open) against
``sh -c 'exit 0'``.

Run: python benchmarks/plugin_launcher.py [--runs N]   (install the project first)
Target: the launcher adds at most 5 ms a prompt (median over median), found or not.
"""

import argparse
import os
import pathlib
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hook_latency import PROMPT, _time  # noqa: E402

LAUNCHER = pathlib.Path(__file__).resolve().parents[1] / "plugins" / "memory-router" / "scripts" / "memory-router-launch"
TARGET_MS = 5.0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40, help="runs per command (default 40)")
    args = parser.parse_args(argv)
    exe = shutil.which("memory-router", path=os.path.dirname(sys.executable)) or shutil.which("memory-router")
    if exe is None:
        raise SystemExit("install the project first: the memory-router console script was not found")
    import json

    from router.config import bundled_cluster_file

    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache"), MEMORY_ROUTER_BIN=exe,
                   MEMORY_ROUTER_CLUSTERS=bundled_cluster_file())
        env.pop("MEMORY_ROUTER_LOG", None)
        missing = dict(env, PATH="/usr/bin:/bin", CLAUDE_PLUGIN_DATA=os.path.join(tmp, "no-data"))
        missing.pop("MEMORY_ROUTER_BIN")
        commands = {
            "memory-router hook": ([exe, "hook"], env),
            "launcher -> memory-router hook": ([str(LAUNCHER), "hook"], env),
            "sh -c 'exit 0'": (["sh", "-c", "exit 0"], missing),
            "launcher, memory-router missing": ([str(LAUNCHER), "hook"], missing),
        }
        times = {name: [] for name in commands}
        outputs = {}
        for run in range(args.runs + 1):
            for number, (name, (cmd, cmd_env)) in enumerate(commands.items()):
                # a new session each time: a session already holding the lines is sent nothing
                payload = json.dumps({"session_id": f"launcher-{os.getpid()}-{run}-{number}", "cwd": tmp,
                                      "hook_event_name": "UserPromptSubmit", "prompt": PROMPT}).encode()
                elapsed, out = _time(cmd, payload, cmd_env)
                outputs.setdefault(name, out)
                if run:  # the first round warms the cache and the page cache
                    times[name].append(elapsed * 1000)
    if outputs["launcher -> memory-router hook"] != outputs["memory-router hook"] or not outputs["memory-router hook"]:
        raise SystemExit("the launcher's output differs from memory-router hook's (or nothing was routed)")
    if outputs["launcher, memory-router missing"]:
        raise SystemExit("the launcher printed something with memory-router missing (it must fail open, silent)")
    median = {name: statistics.median(values) for name, values in times.items()}
    print(f"{'command':<40} median ms")
    for name, value in median.items():
        print(f"{name:<40} {value:9.2f}")
    ok = True
    for name, base in (("launcher -> memory-router hook", "memory-router hook"),
                       ("launcher, memory-router missing", "sh -c 'exit 0'")):
        added = median[name] - median[base]
        met = added <= TARGET_MS
        ok &= met
        print(f"{name}: +{added:.2f} ms over {base} (target <= {TARGET_MS:.0f} ms): {'met' if met else 'MISSED'}")
    print(f"runs per command: {args.runs}, interleaved")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
