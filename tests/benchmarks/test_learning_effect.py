"""benchmarks/learning_effect.py: lab sessions through `memory-router learn` make their phrasing route,
and no case of the example store's suites routes worse."""

import importlib.util
import pathlib

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "learning_effect.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("learning_effect", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("provider", ["weighted", "spec"])
def test_lab_phrasings_route_after_learning_and_the_suites_do_not_move(bench, tmp_path, provider):
    report = bench.measure("example", bench.STORES["example"], str(tmp_path), provider)
    assert report["provider"] == provider
    assert report["learned_terms"] > 0
    for lab in report["lab"]:
        assert lab["routed_before"] == [] and lab["routed_after"], lab
    assert report["suites"]
    for suite in report["suites"]:
        before, after = suite["before"], suite["after"]
        # A case may only move to what it expects (a suite's paraphrase of a lab phrasing).
        assert all(set(c["after"]) == set(c["expected"]) and c["expected"] for c in suite["changed"]), suite
        assert after["cluster_hit"] >= before["cluster_hit"] and after["fact_recall"] >= before["fact_recall"]
        assert after["false_priming"] <= before["false_priming"]
    assert any(s["suite"].endswith("example.yaml") and s["changed"] == [] for s in report["suites"])


def test_a_lab_prompt_the_router_already_routes_carries_its_injection(bench):
    text = bench.lab_transcript("p", "env_x", "s", 0, injected="Routed memory cluster: c\n- env_x \u2014 h")
    assert '"hook_additional_context"' in text and text.count("\n") == 4
    assert bench.lab_transcript("p", "env_x", "s", 0).count("\n") == 3
