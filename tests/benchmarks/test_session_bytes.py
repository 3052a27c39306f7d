"""benchmarks/session_bytes.py: its targets on passing and failing figures (the run itself needs the
real client and minutes; CI runs the realclient tests instead)."""

import importlib.util
import pathlib

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "session_bytes.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("session_bytes", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def analysis(per_prompt):
    return {"prompts": [{"prompt_index": i, "memory_bytes": b} for i, b in enumerate(per_prompt)],
            "totals": {"last_call_memory_bytes": per_prompt[-1], "memory_bytes": sum(per_prompt),
                       "request_bytes": 10 * sum(per_prompt), "contexts": 3}}


@pytest.mark.parametrize("slim, missed", [
    ([5] * 60, []),
    ([5] * 59 + [20], ["last call"]),                     # cheaper overall, heavier at the end
    ([30] * 60, ["cumulative", "last call"]),
])
def test_targets(bench, slim, missed):
    figures = bench.figures_of({"flat": analysis([18] * 60), "slim": analysis(slim), "none": analysis([0] * 60)}, 60)
    assert [c["prompts"] for c in figures["checkpoints"]] == [10, 20, 60]
    found = bench.missed_targets(figures)
    assert len(found) == len(missed)
    for text, fragment in zip(found, missed):
        assert fragment in text
