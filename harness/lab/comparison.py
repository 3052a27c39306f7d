"""Two sessions side by side, flat MEMORY.md against slim + router over the same prompts: the
running memory bytes after each prompt, their ratio at checkpoints, and the prompt at which slim
would first cost more. Pure.

Apart from ``harness.lab.measure`` because it reads two finished analyses, never a request: the
lab report and benchmarks/session_bytes.py compare what measure counted."""


def cumulative_by_prompt(analysis, prompts=None):
    """Running total of memory bytes (every thread) after each prompt: ``[(prompt_index, total)]``.
    ``prompts`` (a count) pads prompts that made no call (a blocked prompt) with no increase."""
    per_prompt = {row["prompt_index"]: row["memory_bytes"] for row in analysis["prompts"]}
    count = prompts if prompts is not None else (max((k for k in per_prompt if k is not None), default=-1) + 1)
    out = []
    total = 0
    for index in range(count):
        total += per_prompt.get(index, 0)
        out.append((index, total))
    return out


def compare_sessions(flat, slim, prompts=None, checkpoints=(10, 20, 60)):
    """Flat MEMORY.md vs slim + router over the same prompts, from two analyses.

    Returns the cumulative memory bytes at each prompt, the ratio slim/flat at each checkpoint
    (prompts counted from 1; the last prompt is always included), the first prompt (1-based) at
    which slim's running total exceeds flat's (``crossing_prompt``, None if never) and each side's
    last main-thread call's memory bytes.
    """
    flat_cum = cumulative_by_prompt(flat, prompts)
    slim_cum = cumulative_by_prompt(slim, prompts)
    n = min(len(flat_cum), len(slim_cum))
    crossing = None
    for i in range(n):
        if slim_cum[i][1] > flat_cum[i][1]:
            crossing = i + 1
            break
    points = sorted({c for c in checkpoints if c <= n} | ({n} if n else set()))
    ratios = []
    for p in points:
        f, s = flat_cum[p - 1][1], slim_cum[p - 1][1]
        ratios.append({"prompts": p, "flat": f, "slim": s, "ratio": round(s / f, 3) if f else None})
    return {
        "prompts": n,
        "cumulative": [{"prompt": i + 1, "flat": flat_cum[i][1], "slim": slim_cum[i][1]} for i in range(n)],
        "checkpoints": ratios,
        "crossing_prompt": crossing,
        "last_call_memory_bytes": {"flat": flat["totals"]["last_call_memory_bytes"],
                                   "slim": slim["totals"]["last_call_memory_bytes"]},
    }
