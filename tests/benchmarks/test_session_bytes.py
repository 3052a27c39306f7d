"""benchmarks/session_bytes.py: its targets on passing and failing figures (the run itself needs the
real client and minutes; CI runs the realclient tests instead)."""

import importlib.util
import os
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


def test_the_session_with_utterances_is_reported_beside_when_it_ran(bench, capsys):
    runs = {"flat": analysis([18] * 60), "slim": analysis([5] * 60), "none": analysis([0] * 60)}
    assert bench.figures_of(runs, 60)["utterances"] is None
    bench.print_figures(bench.figures_of(runs, 60))
    assert "not run" in capsys.readouterr().out
    runs[bench.UTTERANCE_MODE] = analysis([3] * 60)
    figures = bench.figures_of(runs, 60)
    assert [c["ratio"] for c in figures["utterances"]["checkpoints"]] == [round(3 / 18, 3)] * 3
    assert figures["checkpoints"][-1]["ratio"] == round(5 / 18, 3)  # the targets stay the plain router's
    bench.print_figures(figures)
    assert "with utterances, after  60 prompts" in capsys.readouterr().out



def test_only_the_utterances_session_gets_the_utterances_file(bench, tmp_path):
    from harness.lab import rundir
    from router.config import utterances_path

    assert bench.lab_carries_utterances()
    assert bench.utterance_options("slim") == {}
    prepare = bench.utterance_options(bench.UTTERANCE_MODE)["prepare"]
    paths, _text = rundir.prepare_run_dir(tmp_path / "run", "none", hook=False)
    assert not os.path.exists(utterances_path(paths.cluster_file))
    prepare(paths)
    assert os.path.isfile(utterances_path(paths.cluster_file))


def heldout_analysis(calls):
    return {"calls": [{"thread": "main", "memory_bytes": b} for b in calls],
            "totals": {"main_memory_bytes": sum(calls), "contexts": 2}}


@pytest.mark.parametrize("slim, missed", [
    ([30] * 10, []),
    ([30] * 9 + [100], ["call(s) no lighter"]),            # light overall, one call as heavy as flat's
    ([100] * 10, ["ratio", "call(s) no lighter"]),        # as heavy as flat on every call
    ([50] * 10, ["ratio"]),                                # 0.5x: over the 0.40 target, every call lighter
])
def test_heldout_targets(bench, slim, missed):
    report = bench.heldout_report({"flat": heldout_analysis([100] * 10), "slim": heldout_analysis(slim)}, "heldout", 10)
    assert len(report["missed_targets"]) == len(missed)
    for text, fragment in zip(report["missed_targets"], missed):
        assert fragment in text
