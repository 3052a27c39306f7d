"""``memory-router replay`` on synthetic history: its time and peak memory, and its evidence recall
against ``routing_quality.py``'s fact recall, case by case (issue 31's targets).

    python benchmarks/replay.py [--sessions 500] [--prompts 40] [--keep DIR] [--json]
    python benchmarks/replay.py --write DIR [--sessions N] [--prompts M]   # only write the sessions

1. **Scale.** ``--sessions`` sessions of ``--prompts`` typed prompts each, in the real Claude Code
   2.1.328 transcript shape (every line is a real 2.1.328 line from
   ``tests/fixtures/replay/v2.1.328-lines.json`` with its text, ids and times replaced), drawn with
   a fixed seed from the bundled example store's suites (``canaries/*.yaml``): a case that
   ``injects`` memories is followed by a ``Read`` of each memory file, a ``silent`` one by a plain
   reply; every fourth session is compacted (``/compact``) half way. The installed
   ``memory-router replay DIR --json`` runs on the directory in a child process: wall time and
   its peak resident memory (``ru_maxrss`` of the child). Targets: under 30 s and 200 MB.
2. **Recall, to the case.** One session per case of the held-out suite
   (``benchmarks/heldout/heldout.yaml``, a store nothing was fitted on): the case's prompt, then a
   ``Read`` of each memory it ``injects`` (a silent case: none). Replay's evidence recall on those
   sessions must equal ``routing_quality.py``'s fact recall for the weighted provider on the same
   suite and store, and the (case, memory) pairs met must be the same pairs.

Exit code 0 when both targets and the equality hold, 1 otherwise.
"""

import argparse
import copy
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

LINES = os.path.join(ROOT, "tests", "fixtures", "replay", "v2.1.328-lines.json")
EXAMPLE_STORE = os.path.join(ROOT, "router", "data", "example")
HELDOUT = os.path.join(HERE, "heldout")
TARGET_SECONDS = 30.0
TARGET_MB = 200.0
MEMORY_DIR = "/home/dev/.claude/projects/-home-dev-code-demo/memory"
CWD = "/home/dev/code/demo"


def load_lines(path=LINES):
    with open(path, encoding="utf-8") as handle:
        lines = json.load(handle)
    lines.pop("_source", None)
    return lines


def _stamp(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{int(seconds * 1000) % 1000:03d}Z"


class SessionWriter:
    """One synthetic session in the 2.1.328 shape, built from real lines (``load_lines``)."""

    def __init__(self, lines, session_id, start=1796058991.0, cwd=CWD, memory_dir=MEMORY_DIR):
        self.lines, self.session_id, self.clock, self.cwd, self.memory_dir = lines, session_id, start, cwd, memory_dir
        self.out = []
        self.parent = None
        self.calls = 0

    def _line(self, name, **fields):
        obj = copy.deepcopy(self.lines[name])
        self.clock += 1.5
        if "sessionId" in obj:
            obj["sessionId"] = self.session_id
        if "timestamp" in obj:
            obj["timestamp"] = _stamp(self.clock)
        if "cwd" in obj:
            obj["cwd"] = self.cwd
        if "uuid" in obj:
            obj["uuid"] = str(uuid.UUID(int=random.getrandbits(128)))
            obj["parentUuid"] = self.parent
            self.parent = obj["uuid"]
        obj.update(fields)
        self.out.append(json.dumps(obj))
        return obj

    def _message(self, name, content):
        self.calls += 1
        obj = copy.deepcopy(self.lines[name]["message"])
        obj["id"] = f"msg_{self.session_id[:8]}_{self.calls:04d}"
        obj["content"] = content
        return obj

    def prompt(self, text, reads=(), reply="Done."):
        """A typed prompt; the agent then Reads each memory of ``reads`` (one call each) and replies."""
        self._line("enqueue", content=text)
        self._line("dequeue")
        prompt = copy.deepcopy(self.lines["prompt"]["message"])
        prompt["content"] = text
        self._line("prompt", message=prompt, promptId=str(uuid.UUID(int=random.getrandbits(128))))
        for slug in reads:
            self._line("api_request", id=str(uuid.UUID(int=random.getrandbits(128))))
            tool_id = f"toolu_{self.session_id[:8]}_{self.calls:04d}"
            self._line("read", message=self._message("read", [{"type": "tool_use", "id": tool_id, "name": "Read",
                                                               "input": {"file_path": f"{self.memory_dir}/{slug}.md"}}]))
            result = copy.deepcopy(self.lines["read_result"]["message"])
            result["content"] = [{"tool_use_id": tool_id, "type": "tool_result", "content": f"1\t---\n2\tname: {slug}\n"}]
            self._line("read_result", message=result)
        self._line("api_request", id=str(uuid.UUID(int=random.getrandbits(128))))
        self._line("reply", message=self._message("reply", [{"type": "text", "text": reply}]))
        self._line("last_prompt", lastPrompt=text[:200])
        self._line("cost_state")

    def compact(self):
        """``/compact``: the boundary, the summary and the slash command, in the order 2.1.328 writes them."""
        self._line("compact_boundary")
        self._line("compact_summary")
        self._line("compact_command")

    def write(self, directory):
        path = os.path.join(directory, f"{self.session_id}.jsonl")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("\n".join(self.out) + "\n")
        return path


def suite_steps(paths):
    """``[(prompt, injects)]`` of every routing case in the suites at ``paths``."""
    from canaries.suite import load_suite

    steps = []
    for path in paths:
        for case in load_suite(path).cases:
            if case.injects or case.silent is True:
                steps.append((case.id, case.prompt, tuple(case.injects)))
    return steps


def write_history(directory, sessions, prompts, seed=31, lines=None):
    """``sessions`` sessions of ``prompts`` prompts drawn from the bundled suites; returns the files."""
    from canaries.suite import bundled_suites

    lines = lines or load_lines()
    random.seed(seed)
    steps = suite_steps(bundled_suites())
    files = []
    for number in range(sessions):
        writer = SessionWriter(lines, str(uuid.UUID(int=random.getrandbits(128))), start=1796058991.0 + number * 3600)
        for index in range(prompts):
            _case, text, injects = random.choice(steps)
            writer.prompt(text, injects)
            if number % 4 == 3 and index == prompts // 2:
                writer.compact()
        files.append(writer.write(directory))
    return files


def write_case_sessions(directory, suite_path, lines=None):
    """One session per case of ``suite_path``: ``{session id: case id}``."""
    lines = lines or load_lines()
    random.seed(29)
    ids = {}
    for case_id, text, injects in suite_steps([suite_path]):
        writer = SessionWriter(lines, str(uuid.UUID(int=random.getrandbits(128))))
        writer.prompt(text, injects)
        writer.write(directory)
        ids[writer.session_id] = case_id
    return ids


def measure_scale(directory, sessions, prompts):
    files = write_history(directory, sessions, prompts)
    size = sum(os.path.getsize(f) for f in files)
    command = [sys.executable, "-m", "harness", "replay", directory, "--json", "--clusters",
               os.path.join(EXAMPLE_STORE, "memory-layer1-clusters.md"), "--memory-dir", EXAMPLE_STORE]
    home = os.path.join(directory, os.pardir, "home")   # an empty HOME inside the work directory
    os.makedirs(home, exist_ok=True)
    env = dict(os.environ, HOME=os.path.abspath(home))
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=home, env=env)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"replay failed ({done.returncode}): {done.stderr.strip()}")
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    report = json.loads(done.stdout)
    return {"sessions": report["sessions"], "prompts": report["prompts"], "transcript_bytes": size,
            "seconds": round(seconds, 2), "peak_mb": round(peak_kb / 1024, 1),
            "evidence_recall": report["evidence"]["recall"], "routed_share": report["routed"]["share"],
            "cost_ratio": (report["cost"]["total"] or {}).get("ratio"),
            "command": " ".join(["memory-router", "replay", "DIR", "--json", "--clusters",
                                 "router/data/example/memory-layer1-clusters.md", "--memory-dir", "router/data/example"])}


def measure_recall(directory):
    """Replay's evidence recall and routing_quality's fact recall on the held-out suite, pair by pair."""
    from canaries.suite import load_suite
    from harness.context import context_for
    from harness.replay.report import run_replay
    from routing_quality import overall, route_cases
    from router.config import default_settings
    from router.routing.score import build_routing_table
    from router.routing.weightedtable import extend_table
    from transcripts.evidence import session_transcripts

    suite_path = os.path.join(HELDOUT, "heldout.yaml")
    ids = write_case_sessions(directory, suite_path)
    ctx = context_for(os.path.join(HELDOUT, "clusters.md"), os.path.join(HELDOUT, "memory-router.toml"), quiet=True)
    met = set()
    needed = set()

    def sink(prompt):
        for need in prompt.needs:
            needed.add((ids[prompt.session_id], need.slug))
            if need.met:
                met.add((ids[prompt.session_id], need.slug))

    tally = run_replay(session_transcripts(directory), ctx.table, ctx.settings, ctx.cluster_path, sink=sink)
    # routing_quality.py's weighted column: the same provider on the cluster file alone, its settings shipped.
    suite = load_suite(suite_path)
    index = suite.index
    table = extend_table(build_routing_table(index), index, utterances=None)
    results = route_cases(suite.cases, table, default_settings())
    figures = overall(results)
    pairs = {(r.case.id, slug) for r in results for slug in r.case.injects}
    hits = {(r.case.id, slug) for r in results for slug in r.case.injects if slug in r.injected}
    recall = tally.to_json([directory], "replay")["evidence"]["recall"]
    return {"suite": os.path.relpath(suite_path, ROOT), "cases": len(ids), "pairs": len(pairs),
            "evidence_recall": recall, "fact_recall": round(figures["fact_recall"], 4),
            "same_pairs_needed": needed == pairs, "same_pairs_met": met == hits,
            "differing_pairs": sorted(f"{c}:{s}" for c, s in met ^ hits)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=500)
    parser.add_argument("--prompts", type=int, default=40)
    parser.add_argument("--keep", metavar="DIR", help="write the synthetic sessions here and keep them")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--write", metavar="DIR", help="only write the synthetic sessions into DIR (for a demo)")
    args = parser.parse_args(argv)
    if args.write:
        os.makedirs(args.write, exist_ok=True)
        files = write_history(args.write, args.sessions, args.prompts)
        print(f"wrote {len(files)} sessions of {args.prompts} prompts to {args.write}")
        return 0
    work = args.keep or tempfile.mkdtemp(prefix="replay-bench-")
    try:
        scale_dir, recall_dir = os.path.join(work, "scale"), os.path.join(work, "heldout")
        os.makedirs(scale_dir, exist_ok=True)
        os.makedirs(recall_dir, exist_ok=True)
        result = {"scale": measure_scale(scale_dir, args.sessions, args.prompts),
                  "recall": measure_recall(recall_dir)}
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    scale, recall = result["scale"], result["recall"]
    ok = (scale["seconds"] < TARGET_SECONDS and scale["peak_mb"] < TARGET_MB and recall["same_pairs_needed"]
          and recall["same_pairs_met"] and recall["evidence_recall"] == recall["fact_recall"])
    result["targets_met"] = ok
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"scale: {scale['sessions']} sessions, {scale['prompts']} prompts, {scale['transcript_bytes'] / 1e6:.1f} MB "
              f"of transcripts: {scale['seconds']} s (target < {TARGET_SECONDS:.0f}), peak {scale['peak_mb']} MB "
              f"(target < {TARGET_MB:.0f})")
        print(f"  evidence recall {scale['evidence_recall']}, routed {scale['routed_share']}, "
              f"slim + router / flat {scale['cost_ratio']}")
        print(f"recall ({recall['suite']}, {recall['cases']} cases, {recall['pairs']} case-memory pairs): "
              f"evidence recall {recall['evidence_recall']}, routing_quality fact recall {recall['fact_recall']}; "
              f"same pairs met: {'yes' if recall['same_pairs_met'] else 'no: ' + ', '.join(recall['differing_pairs'])}")
        print("targets met" if ok else "targets NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
