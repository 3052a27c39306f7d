"""Hook latency against the floor any Python hook pays, measured in the same run.

Starts the installed ``memory-router hook`` console script (as Claude Code runs it) with a real
UserPromptSubmit payload, interleaved with the least a Python hook can do,
``python3 -c "import json, sys; json.load(sys.stdin)"`` fed the same payload by the same
interpreter, and prints the median of each and their ratio, on the bundled example store and on
a generated store of 10,000 members in 2,000 clusters.

    python benchmarks/hook_latency.py [--runs 30]

The hook runs with the default provider (``weighted``); benchmarks/routing_quality.py times each
provider's hook side by side. One more case runs a custom provider (``package.module:factory``,
``BENCH_PROVIDER``: the first cluster, no imports or scan of its own): its figure is what the child
interpreter a custom provider runs in costs (issue 24: start-up, the request with the table's
clusters, the answer), over the same floor.

Each store is measured with the session record (issue 13) absent (a new session), present with
earlier lines held (the prompt's lines are sent and the record rewritten; the transcript since the
last injection is scanned for a compaction), and, on the example store, present holding the
prompt's lines already (nothing is sent).

Targets (issue 2): <= 1.3x the floor on the example store, <= 1.6x on the 10,000-member store,
for the built-in provider. The custom-provider case has no target; it is reported.
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from stores import generate_store  # noqa: E402

PROMPT = "I set an env var with setx but the Bash tool still can't see it, why?"
# A session's record when it is present: this many lines held from earlier prompts, and this many
# transcript bytes written since its last injection (scanned for a compact_boundary).
HELD_LINES = 200
TRANSCRIPT_BYTES = 100_000
# The custom provider timed: the first cluster and its lines, no imports and no scan of its own,
# so its figure is the child interpreter's and the protocol's cost, not the provider's.
BENCH_PROVIDER = '''
def make(settings):
    def provider(request):
        cluster_id, _tags, _label, members = request["table"]["clusters"][0]
        return {"clusters": [cluster_id], "lines": [{"cluster_id": cluster_id, "slug": s, "hook": h}
                                                    for s, _t, h in members],
                "confidence": 0.9, "explanation": "the first cluster"}
    return provider
'''


def _payload(cwd, session_id, transcript):
    return json.dumps({
        "session_id": session_id, "transcript_path": transcript,
        "cwd": cwd, "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": PROMPT,
    }).encode()


def _time(cmd, stdin, env):
    start = time.perf_counter()
    result = subprocess.run(cmd, input=stdin, capture_output=True, env=env)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{cmd[0]} exited {result.returncode}: {result.stderr.decode()[:500]}")
    return elapsed, result.stdout


def _transcript(path):
    entry = json.dumps({"type": "user", "message": {"role": "user", "content": "x" * 400}}) + "\n"
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(entry * (TRANSCRIPT_BYTES // len(entry)))
    return path


class SessionCase:
    """A payload and the session state to set up before each run (outside the timing):
    ``absent`` a new session id every run; ``new lines`` a record of HELD_LINES other lines (the
    prompt's lines are sent and the record rewritten); ``all held`` a record already holding the
    prompt's lines (nothing is sent)."""

    def __init__(self, kind, cwd, cache, cluster_file):
        self.kind = kind
        self.cwd = cwd
        self.cache = cache
        self.cluster_file = cluster_file
        self.transcript = _transcript(os.path.join(cwd, f"transcript-{kind.replace(' ', '-')}.jsonl"))
        self.count = 0
        self.held_keys = None

    def prepare(self):
        from router.hooks import sessionrecord

        self.count += 1
        if self.kind == "absent":
            session_id = f"bench-absent-{os.getpid()}-{self.count}"
            return _payload(self.cwd, session_id, self.transcript)
        session_id = f"bench-{self.kind.replace(' ', '-')}"
        record = sessionrecord.new_record(session_id, sessionrecord.store_identity(self.cluster_file))
        held = [f"earlier_slug_{n}|120:0000{n:04x}:00000000" for n in range(HELD_LINES)]
        if self.kind == "all held":
            held += self.held_keys
        record = dict(record, held=held, updated=time.time(), transcript=self.transcript, transcript_size=0,
                      persisted=True)
        sessionrecord.write_record(sessionrecord.record_path(session_id, os.path.join(self.cache, "sessions")), record)
        return _payload(self.cwd, session_id, self.transcript)


def _routed_keys(cluster_file):
    """The line keys the benchmark prompt sends to a fresh session (for the ``all held`` case)."""
    from router.store.clusterfile import load_cluster_file
    from router.config import default_settings
    from router.providers.provider import build_table
    from router.routing.injection import line_key
    from router.hooks.session import route_fresh

    decision = route_fresh(PROMPT, build_table(load_cluster_file(cluster_file)), default_settings())
    return [line_key(line["slug"], line["hook"]) for line in decision["lines"]]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30, help="runs per command (default 30)")
    args = parser.parse_args(argv)

    exe = shutil.which("memory-router", path=os.path.dirname(sys.executable)) or shutil.which("memory-router")
    if exe is None:
        raise SystemExit("install the project first: the memory-router console script was not found")
    from router.config import bundled_cluster_file

    with tempfile.TemporaryDirectory() as tmp:
        big = os.path.join(tmp, "big-clusters.md")
        with open(big, "w", encoding="utf-8") as handle:
            handle.write(generate_store(clusters=2000, members_per_cluster=5))
        # The cache stores nothing for a file changed in the last RACY_WINDOW_NS (a same-size
        # rewrite within one clock tick would keep its key); a real store is older than that.
        from router.cache import RACY_WINDOW_NS

        time.sleep(RACY_WINDOW_NS / 1e9 + 0.1)
        cache = os.path.join(tmp, "cache")
        env = dict(os.environ, MEMORY_ROUTER_CACHE_DIR=cache)
        env.pop("MEMORY_ROUTER_LOG", None)
        # A user's install has bytecode caches; without them every run would time the compiler.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        example = bundled_cluster_file()
        fixed = _payload(tmp, "bench-floor", os.path.join(tmp, "none.jsonl"))
        commands = {
            "floor: python3 -c json.load(stdin)": ([sys.executable, "-c", "import json, sys; json.load(sys.stdin)"],
                                                   lambda: fixed),
            "python3 -c pass": ([sys.executable, "-c", "pass"], lambda: fixed),
        }
        envs = {}
        stores = (("example store (26 clusters)", example), ("10,000 members / 2,000 clusters", big))
        for label, path in stores:
            for kind in ("absent", "new lines", "all held"):
                if kind == "all held" and path == big:
                    continue
                case = SessionCase(kind, tmp, cache, path)
                if kind == "all held":
                    case.held_keys = _routed_keys(path)
                commands[f"hook, {label}, session record {kind}"] = ([exe, "hook", "--clusters", path], case.prepare)
        # The custom provider, on PYTHONPATH as a user installs one, with a budget it never meets.
        provider_dir = os.path.join(tmp, "provider")
        os.makedirs(provider_dir)
        with open(os.path.join(provider_dir, "bench_provider.py"), "w", encoding="utf-8") as handle:
            handle.write(BENCH_PROVIDER)
        custom_config = os.path.join(tmp, "custom.toml")
        with open(custom_config, "w", encoding="utf-8") as handle:
            handle.write('provider = "bench_provider:make"\nprovider_timeout_ms = 4000\n')
        custom_env = dict(env, PYTHONPATH=provider_dir)
        for label, path in stores:
            name = f"custom provider, {label}, session record absent"
            commands[name] = ([exe, "hook", "--clusters", path, "--config", custom_config],
                              SessionCase("absent", tmp, cache, path).prepare)
            envs[name] = custom_env
        # First runs build the caches; they are not what a user pays on every prompt.
        for name, (cmd, prepare) in commands.items():
            _, out = _time(cmd, prepare(), envs.get(name, env))
            if (name.startswith("hook") and "example" in name or name.startswith("custom")) \
                    and "all held" not in name and b"additionalContext" not in out:
                raise SystemExit(f"the hook did not route the benchmark prompt ({name})")
            if "all held" in name and out:
                raise SystemExit("the hook sent lines the session record already holds")
        samples = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, (cmd, prepare) in commands.items():  # interleaved so drift hits every command alike
                samples[name].append(_time(cmd, prepare(), envs.get(name, env))[0])
    medians = {name: statistics.median(values) * 1000 for name, values in samples.items()}
    floor = medians["floor: python3 -c json.load(stdin)"]
    print(f"{'command':62} {'median ms':>10} {'x floor':>8}")
    for name, value in medians.items():
        print(f"{name:62} {value:10.2f} {value / floor:8.2f}")
    for name, value in medians.items():
        ratio = value / floor
        if name.startswith("custom"):
            builtin = medians[name.replace("custom provider", "hook")]
            print(f"{name}: {ratio:.2f}x floor, {value - builtin:+.1f} ms over the built-in provider (no target)")
            continue
        if not name.startswith("hook"):
            continue
        target = 1.3 if "example" in name else 1.6
        print(f"{name}: {ratio:.2f}x floor (target <= {target}x): {'met' if ratio <= target else 'MISSED'}")
    print(f"runs per command: {args.runs}; session record present: {HELD_LINES} lines held, "
          f"{TRANSCRIPT_BYTES:,} transcript bytes scanned; interpreter: {sys.executable}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
