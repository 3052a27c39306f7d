"""Benchmark: the transcript audit against a bare ``for line in f: json.loads(line)`` loop.

Generates a transcript of realistic 2.1.293-shaped lines (typed prompts, router injections on
most of them, environment and PreToolUse hook attachments, streamed assistant rows with thinking,
text and tool_use blocks, large tool results, file-history snapshots, turn_duration lines) in a
temp dir, then in the same run:

* times the bare loop (binary and text mode; the faster is the baseline) and the full audit
  (reader + classification + all checks, with a sentinel), interleaved, best of ``--repeat``,
  and prints throughput and the ratio audit / baseline (target >= 0.5) in CPU time (wall-clock
  is printed too, but on a shared machine it mostly measures the neighbours);
* measures peak memory (VmHWM, else ru_maxrss) of the audit and of the bare loop in fresh subprocesses, on
  the whole file and on a prefix a quarter its size (target: flat in file size, under 100 MB);
* then the same on a transcript of many repeated injections (issue 11: the same few router texts
  injected for prompt after prompt, which made the audit quadratic and its memory grow with every
  re-injection): throughput against the bare loop on that file (target >= 0.5) and peak RSS at
  ``--repeated-small-mb`` and ``--repeated-mb`` (target: within 20% of each other).

    python benchmarks/transcript_audit.py [--size-mb 200] [--repeated-mb 500] [--repeated-small-mb 50]
                                          [--keep DIR] [--repeat 2]
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

WORDS = ("the router reads memory cluster line hook prompt session token cache injection setx bash terminal "
         "cloudflare pages secret text plaintext build deploy wrangler path registry reboot user opened "
         "function return value error module import class def self async await json parse stream file "
         "caf\u00e9 na\u00efve \u00fcber \u2014 \"quoted\" back\\slash tab\there").split(" ")
SENTINEL = "BENCH-SENTINEL-5e1f"


def text_pool(rng, chars):
    words, size = [], 0
    while size < chars:
        word = rng.choice(WORDS)
        words.append(word)
        size += len(word) + 1
        if rng.random() < 0.08:
            words.append("\n")
    return " ".join(words)


class Generator:
    def __init__(self, seed=7, repeated_bodies=0):
        self.rng = random.Random(seed)
        self.pool = text_pool(self.rng, 2_000_000)
        # With repeated_bodies, every router injection is one of that many fixed texts.
        self.bodies = [self.router_body() for _ in range(repeated_bodies)]
        # Dense turns when injections repeat, so a file of a given size holds many more of them.
        self.result_sizes = ((150, 600, 2_000, 8_000) if repeated_bodies else
                             (150, 600, 2_000, 8_000, 30_000, 60_000, 120_000, 250_000))
        self.session = str(uuid.UUID(int=self.rng.getrandbits(128)))
        self.last = None
        self.clock = 0

    def uid(self):
        return str(uuid.UUID(int=self.rng.getrandbits(128)))

    def text(self, size):
        start = self.rng.randrange(0, len(self.pool) - size - 1)
        return self.pool[start:start + size]

    def envelope(self, entry_type, **extra):
        self.clock += 1
        new = self.uid()
        obj = {"parentUuid": self.last, "isSidechain": False, "type": entry_type, "uuid": new,
               "timestamp": f"2026-10-08T{(self.clock // 3600) % 24:02d}:{(self.clock // 60) % 60:02d}:"
                            f"{self.clock % 60:02d}.000Z",
               "userType": "external", "entrypoint": "cli", "cwd": "/home/user/proj", "sessionId": self.session,
               "version": "2.1.293", "gitBranch": "main"}
        obj.update(extra)
        self.last = new
        return obj

    def router_body(self):
        rng = self.rng
        members = [f"- slug-{rng.randint(0, 400)} \u2014 {self.text(rng.randint(60, 160))}"
                   for _ in range(rng.randint(3, 12))]
        return "\n".join([f"Routed memory cluster: cluster-{rng.randint(0, 25)}"] + members)

    def turn(self, index):
        rng = self.rng
        lines = []
        lines.append(self.envelope("user", promptId=self.uid(), promptSource="typed", origin={"kind": "human"},
                                   permissionMode="default",
                                   message={"role": "user", "content": self.text(rng.randint(40, 600))}))
        lines.append(self.envelope("attachment", attachment={"type": "environment", "content": self.text(300)}))
        if self.bodies or rng.random() < 0.6:
            body = rng.choice(self.bodies) if self.bodies and index else self.router_body()
            if index == 0:
                body += f"\nsentinel {SENTINEL}"
            lines.append(self.envelope(
                "attachment",
                attachment={"type": "hook_additional_context", "content": [body], "hookName": "UserPromptSubmit",
                            "toolUseID": f"hook-{self.uid()}", "hookEvent": "UserPromptSubmit"},
                rendered=[{"content": f"<system-reminder>\nUserPromptSubmit hook additional context: {body}\n"
                                      "</system-reminder>"}], renderedRole="system"))
        message_id = f"msg_{self.uid().replace('-', '')[:24]}"
        usage = {"input_tokens": 3, "cache_creation_input_tokens": 2000, "cache_read_input_tokens": 90000,
                 "output_tokens": 3, "service_tier": "standard"}
        lines.append(self.envelope("assistant", requestId=f"req_{index}", message={
            "model": "claude-opus-4-5", "id": message_id, "type": "message", "role": "assistant",
            "content": [{"type": "thinking", "thinking": self.text(rng.randint(200, 3000)), "signature": "x" * 200}],
            "stop_reason": None, "stop_sequence": None, "usage": usage}))
        for _ in range(rng.randint(1, 6)):
            tool_id = f"toolu_{self.uid().replace('-', '')[:24]}"
            name = rng.choice(["Read", "Bash", "Grep", "Edit"])
            tool_input = {"file_path": f"/home/user/proj/src/mod_{rng.randint(0, 99)}.py"} if name != "Bash" else {
                "command": "pytest -q " + self.text(40).replace("\n", " ")}
            lines.append(self.envelope("assistant", requestId=f"req_{index}", message={
                "model": "claude-opus-4-5", "id": message_id, "type": "message", "role": "assistant",
                "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}],
                "stop_reason": None, "stop_sequence": None, "usage": usage}))
            lines.append(self.envelope("attachment", attachment={
                "type": "hook_success", "hookName": f"PreToolUse:{name}", "toolUseID": tool_id,
                "hookEvent": "PreToolUse", "content": "", "stdout": "", "stderr": "", "exitCode": 0,
                "command": "guard.sh", "durationMs": rng.randint(5, 90)}))
            size = rng.choice(self.result_sizes)
            result = self.text(size)
            lines.append(self.envelope("user", sourceToolAssistantUUID=self.last,
                                       message={"role": "user", "content": [
                                           {"tool_use_id": tool_id, "type": "tool_result", "content": result}]},
                                       toolUseResult={"stdout": result[:2000], "stderr": "", "interrupted": False}))
        lines.append(self.envelope("assistant", requestId=f"req_{index}", message={
            "model": "claude-opus-4-5", "id": message_id, "type": "message", "role": "assistant",
            "content": [{"type": "text", "text": self.text(rng.randint(200, 2500))}],
            "stop_reason": "end_turn", "stop_sequence": None, "usage": dict(usage, output_tokens=500)}))
        lines.append({"type": "file-history-snapshot", "messageId": self.last, "isSnapshotUpdate": False,
                      "snapshot": {"messageId": self.last, "trackedFileBackups": {}, "timestamp": "2026-10-08"}})
        lines.append(self.envelope("system", subtype="turn_duration", durationMs=rng.randint(1000, 90000),
                                   isMeta=False))
        if self.bodies:
            # Since issue 13 a router line sent again within one context is a re-send (check b);
            # a compaction after each turn makes every repeat a legitimate fresh send, so the file
            # still exercises the per-text bookkeeping (and the member-line record) at full scale.
            lines.append(self.envelope("system", subtype="compact_boundary", content="Conversation compacted",
                                       compactMetadata={"trigger": "auto", "preTokens": 150000}, isMeta=False))
        return lines


def generate(path, size_mb, seed=7, repeated_bodies=0):
    gen = Generator(seed, repeated_bodies)
    target = size_mb * 1024 * 1024
    written = lines = turns = 0
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        while written < target:
            for obj in gen.turn(turns):
                data = json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"
                out.write(data)
                written += len(data.encode("utf-8"))
                lines += 1
            turns += 1
    return os.path.getsize(path), lines, turns


def prefix_copy(src, dst, fraction):
    limit = int(os.path.getsize(src) * fraction)
    with open(src, "rb") as inp, open(dst, "wb") as out:
        copied = 0
        for line in inp:
            if copied >= limit:
                break
            out.write(line)
            copied += len(line)
    return os.path.getsize(dst)


def bare_loop_binary(path):
    loads = json.loads
    with open(path, "rb") as f:
        for line in f:
            loads(line)


def bare_loop_text(path):
    loads = json.loads
    with open(path, encoding="utf-8") as f:
        for line in f:
            loads(line)


def timed(fn, *args):
    """(cpu seconds, wall seconds) of one run. CPU time is the figure compared: on a shared machine
    wall time mostly measures the neighbours."""
    cpu, wall = time.process_time(), time.perf_counter()
    fn(*args)
    return time.process_time() - cpu, time.perf_counter() - wall


def best_of(runs):
    return (min(r[0] for r in runs), min(r[1] for r in runs))


_PEAK_SCRIPT = r"""
import json, resource, sys
sys.path.insert(0, sys.argv[3])
mode, path = sys.argv[1], sys.argv[2]
if mode == "audit":
    from transcripts.audit import audit_path
    result = audit_path(path, "BENCH-SENTINEL-5e1f")
    assert result.status == "pass", [(c.id, c.status, c.message) for s in result.streams for c in s.checks]
else:
    loads = json.loads
    with open(path, "rb") as f:
        for line in f:
            loads(line)
# VmHWM belongs to this process image; ru_maxrss would carry over the parent's peak across exec.
try:
    with open("/proc/self/status") as status:
        print(next(int(l.split()[1]) for l in status if l.startswith("VmHWM:")))
except (OSError, StopIteration):
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def peak_mb(mode, path):
    out = subprocess.run([sys.executable, "-c", _PEAK_SCRIPT, mode, path, REPO], check=True,
                         capture_output=True, text=True).stdout
    return int(out.strip().splitlines()[-1]) / 1024  # KiB on Linux


def time_against_baseline(path, repeat, results):
    """(baseline (cpu, wall), audit (cpu, wall)): best of ``repeat`` interleaved runs each."""
    from transcripts.audit import audit_path

    runs = {"binary": [], "text": [], "audit": []}
    for _ in range(repeat):
        # Interleaved, so a burst of load elsewhere hits every contender alike.
        runs["binary"].append(timed(bare_loop_binary, path))
        runs["text"].append(timed(bare_loop_text, path))
        runs["audit"].append(timed(lambda p: results.append(audit_path(p, SENTINEL)), path))
    t_bin, t_txt, t_audit = best_of(runs["binary"]), best_of(runs["text"]), best_of(runs["audit"])
    return t_bin, t_txt, min(t_bin, t_txt), t_audit


def report_throughput(label, size, t_bin, t_txt, baseline, t_audit, result, repeat):
    stream = result.stream()
    mb = size / 2**20
    print(f"[{label}] bare json.loads loop, cpu (wall): binary {t_bin[0]:.2f}s ({t_bin[1]:.2f}s) = "
          f"{mb / t_bin[0]:.0f} MB/s; text {t_txt[0]:.2f}s ({t_txt[1]:.2f}s) = {mb / t_txt[0]:.0f} MB/s; "
          "baseline = the faster")
    print(f"[{label}] audit, cpu (wall): {t_audit[0]:.2f}s ({t_audit[1]:.2f}s) = {mb / t_audit[0]:.0f} MB/s: "
          f"{stream.prompt_count:,} prompts, {stream.injection_count:,} injections, status {result.status}, "
          f"checks {' '.join(c.id + '=' + c.status for c in stream.checks)}")
    ratio = baseline[0] / t_audit[0]
    print(f"[{label}] throughput ratio audit/baseline (cpu): {ratio:.2f} (target >= 0.5) "
          f"{'OK' if ratio >= 0.5 else 'BELOW TARGET'}; wall-clock ratio {baseline[1] / t_audit[1]:.2f} "
          f"(best of {repeat})")
    return ratio


def generate_and_time(folder, stem, label, size_mb, fraction, repeat, what, **kind):
    """Generate ``<stem>.jsonl`` and a prefix of ``fraction`` of it, time the audit against the
    bare loop on the whole file; ``(big, small, size, small_size, ratio)``."""
    big = os.path.join(folder, f"{stem}.jsonl")
    small = os.path.join(folder, f"{stem}-prefix.jsonl")
    start = time.perf_counter()
    size, lines, turns = generate(big, size_mb, **kind)
    small_size = prefix_copy(big, small, fraction)
    print(f"generated {size / 2**20:.1f} MB{what}, {lines:,} lines, {turns:,} prompts in "
          f"{time.perf_counter() - start:.1f}s ({big})")
    results = []
    t_bin, t_txt, baseline, t_audit = time_against_baseline(big, repeat, results)
    ratio = report_throughput(label, size, t_bin, t_txt, baseline, t_audit, results[-1], repeat)
    return big, small, size, small_size, ratio


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=int, default=200, help="size of the generated transcript (default 200)")
    parser.add_argument("--repeated-mb", type=int, default=500,
                        help="size of the repeated-injection transcript (default 500; 0 skips it)")
    parser.add_argument("--repeated-small-mb", type=int, default=50,
                        help="its prefix whose peak RSS is compared (default 50)")
    parser.add_argument("--repeat", type=int, default=2, help="timing runs; the best is kept (default 2)")
    parser.add_argument("--keep", metavar="DIR", help="write the transcripts here and keep them")
    args = parser.parse_args(argv)

    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or tmp
        os.makedirs(folder, exist_ok=True)
        if args.size_mb:
            big, small, size, small_size, ratio = generate_and_time(
                folder, "bench-session", "realistic", args.size_mb, 0.25, args.repeat, "")
            peaks = {}
            for label, path, file_size in (("quarter", small, small_size), ("full", big, size)):
                peaks[label] = (file_size, peak_mb("audit", path), peak_mb("loop", path))
            for label, (file_size, audit_peak, loop_peak) in peaks.items():
                print(f"[realistic] peak RSS on {file_size / 2**20:.0f} MB ({label}): audit {audit_peak:.1f} MB, "
                      f"bare loop {loop_peak:.1f} MB")
            growth = peaks["full"][1] - peaks["quarter"][1]
            flat = peaks["full"][1] < 100 and growth < 0.1 * (peaks["full"][0] - peaks["quarter"][0]) / 2**20
            print(f"[realistic] audit peak grows {growth:+.1f} MB for "
                  f"{(peaks['full'][0] - peaks['quarter'][0]) / 2**20:.0f} MB more input (target: flat, under 100 MB) "
                  f"{'OK' if flat else 'CHECK'}")
            ok = ok and ratio >= 0.5 and flat
            for path in (big, small):
                if not args.keep:
                    os.unlink(path)

        if args.repeated_mb:
            big, small, size, small_size, ratio = generate_and_time(
                folder, "bench-repeated", "repeated", args.repeated_mb, args.repeated_small_mb / args.repeated_mb,
                args.repeat, " of repeated injections (6 router texts, injected on every prompt)",
                seed=11, repeated_bodies=6)
            small_peak, big_peak = peak_mb("audit", small), peak_mb("audit", big)
            loop_peak = peak_mb("loop", big)
            within = big_peak <= 1.2 * small_peak and small_peak <= 1.2 * big_peak
            print(f"[repeated] peak RSS: audit {small_peak:.1f} MB on {small_size / 2**20:.0f} MB, "
                  f"{big_peak:.1f} MB on {size / 2**20:.0f} MB ({(big_peak / small_peak - 1) * 100:+.1f}%; "
                  f"target within 20%) {'OK' if within else 'NOT FLAT'}; bare loop {loop_peak:.1f} MB")
            ok = ok and ratio >= 0.5 and within
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
