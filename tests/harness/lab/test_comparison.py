"""harness.lab.comparison: flat against slim over the same prompts, from two analyses."""

from harness.lab.comparison import compare_sessions


def session(per_call_memory, prompts):
    """A fake analysis: one main call per prompt with the given memory bytes."""
    calls = [{"memory_bytes": b} for b in per_call_memory]
    return {"prompts": [{"prompt_index": i, "memory_bytes": b} for i, b in enumerate(per_call_memory)],
            "totals": {"last_call_memory_bytes": per_call_memory[-1]}, "calls": calls}


def test_compare_sessions_ratio_checkpoints_and_crossing():
    flat = session([100] * 12, 12)
    slim = session([20 + 30 * i for i in range(12)], 12)    # grows: 20, 50, 80, ...
    result = compare_sessions(flat, slim, 12, checkpoints=(10, 20))
    assert [c["prompts"] for c in result["checkpoints"]] == [10, 12]
    cum_slim_10 = sum(20 + 30 * i for i in range(10))
    assert result["checkpoints"][0] == {"prompts": 10, "flat": 1000, "slim": cum_slim_10,
                                        "ratio": round(cum_slim_10 / 1000, 3)}
    running_flat = running_slim = 0
    first = None
    for i in range(12):
        running_flat += 100
        running_slim += 20 + 30 * i
        if first is None and running_slim > running_flat:
            first = i + 1
    assert result["crossing_prompt"] == first
    assert result["last_call_memory_bytes"] == {"flat": 100, "slim": 20 + 30 * 11}


def test_compare_sessions_never_crossing():
    result = compare_sessions(session([100] * 5, 5), session([10] * 5, 5), 5)
    assert result["crossing_prompt"] is None and result["checkpoints"][-1]["ratio"] == 0.1
