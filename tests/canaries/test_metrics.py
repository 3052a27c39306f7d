"""Metrics against a hand-computed table (the arithmetic is in the comments)."""

import pytest

from canaries.cases import Case
from canaries.metrics import (
    char_metrics,
    cluster_metrics,
    distribution,
    fact_recall,
    margin_metrics,
    no_route_metrics,
    percentile_nearest_rank,
    suite_metrics,
)
from canaries.runner import CaseResult


def result(case_id, routed=(), injected=(), chars=0, margin=0, **fields):
    case = Case(id=case_id, prompt="p", **fields)
    return CaseResult(case=case, verdict="pass", differences=(), routed=tuple(routed), injected=tuple(injected),
                      chars=chars, top_score=margin + 3, margin=margin, lead=0)


RESULTS = [
    result("1", ["a"], ["s1", "s2"], 100, 4, routes_to=("a",), injects=("s1",)),
    result("2", ["b"], ["s3"], 50, 2, routes_to=("a",), injects=("s1",)),
    result("3", ["a"], ["s1"], 80, 3, routes_to=("a", "b")),
    result("4", [], [], 0, -1, routes_to=("b",)),
    result("5", [], [], 0, -3, silent=True),
    result("6", ["c"], ["s5"], 200, 0, silent=True),
    result("7", ["c"], ["s5"], 150, 1, injects=("s5",)),
]


def test_per_cluster_precision_recall_f1():
    routing = cluster_metrics(RESULTS)
    # Only cases 1-4 have routes_to. a: TP 1,3; FN 2 -> P 1, R 2/3, F1 0.8.
    # b: FP 2; FN 3,4 -> P 0, R 0, F1 0. c is routed only by cases without routes_to: not counted.
    assert set(routing["clusters"]) == {"a", "b"}
    a, b = routing["clusters"]["a"], routing["clusters"]["b"]
    assert (a["tp"], a["fp"], a["fn"], a["support"]) == (2, 0, 1, 3)
    assert a["precision"] == 1 and a["recall"] == pytest.approx(2 / 3) and a["f1"] == pytest.approx(0.8)
    assert (b["tp"], b["fp"], b["fn"], b["support"]) == (0, 1, 2, 2)
    assert b["precision"] == 0 and b["recall"] == 0 and b["f1"] == 0
    # micro: TP 2, FP 1, FN 3 -> P 2/3, R 2/5, F1 = 2PR/(P+R) = 0.5
    micro = routing["micro"]
    assert (micro["tp"], micro["fp"], micro["fn"]) == (2, 1, 3)
    assert micro["precision"] == pytest.approx(2 / 3) and micro["recall"] == pytest.approx(0.4)
    assert micro["f1"] == pytest.approx(0.5)
    assert routing["macro_f1"] == pytest.approx(0.4)
    assert routing["cases"] == 4


def test_undefined_ratios_are_none_but_f1_of_a_miss_is_zero():
    misrouted = cluster_metrics([result("x", ["z"], routes_to=("y",))])
    z = misrouted["clusters"]["z"]
    assert z["precision"] == 0 and z["recall"] is None and z["f1"] == 0
    y = misrouted["clusters"]["y"]
    assert y["precision"] is None and y["recall"] == 0 and y["f1"] == 0
    assert misrouted["macro_f1"] == 0 and misrouted["micro"]["f1"] == 0
    assert cluster_metrics([])["micro"]["f1"] is None and cluster_metrics([])["macro_f1"] is None


def test_no_route_metrics():
    silence = no_route_metrics(RESULTS)
    # Silent cases 5 and 6; 6 got an injection.
    assert silence["silent_cases"] == 2 and silence["false_primed"] == 1
    assert silence["false_priming_rate"] == 0.5 and silence["no_route_recall"] == 0.5
    assert silence["false_primed_ids"] == ["6"]
    # Labelled cases that stayed silent: 4 (expected b) and 5 (expected silence) -> 1/2.
    assert silence["no_route_precision"] == 0.5
    assert no_route_metrics(RESULTS[:4])["false_priming_rate"] is None


def test_fact_recall():
    facts = fact_recall(RESULTS)
    # (1, s1) hit, (2, s1) missed, (7, s5) hit.
    assert (facts["facts"], facts["injected"]) == (3, 2)
    assert facts["recall"] == pytest.approx(2 / 3)
    assert facts["missed"] == ["2:s1"]


def test_injected_characters():
    chars = char_metrics(RESULTS)
    # [100, 50, 80, 0, 0, 200, 150]: mean 580/7; p95 nearest rank ceil(6.65) = 7th smallest = 200.
    assert chars["mean"] == pytest.approx(580 / 7)
    assert chars["p95"] == 200 and chars["max"] == 200
    # Injected prompts 1, 2, 3, 6, 7: 580 / 5.
    assert chars["mean_when_injected"] == pytest.approx(116) and chars["injected_prompts"] == 5


@pytest.mark.parametrize("values,pct,expected", [
    ([], 95, None),
    ([5], 95, 5),
    (list(range(1, 21)), 95, 19),
    (list(range(1, 21)), 100, 20),
    ([3, 1, 2], 50, 2),
])
def test_percentile_nearest_rank(values, pct, expected):
    assert percentile_nearest_rank(values, pct) == expected


def test_margin_distribution():
    margins = margin_metrics(RESULTS)
    assert margins["all"]["counts"] == [{"margin": m, "count": 1} for m in (-3, -1, 0, 1, 2, 3, 4)]
    assert (margins["all"]["min"], margins["all"]["median"], margins["all"]["max"]) == (-3, 1, 4)
    # Cases expecting a route: 1, 2, 3, 4 (routes_to) and 7 (injects): margins 4, 2, 3, -1, 1.
    assert margins["expect_route"]["n"] == 5 and margins["expect_route"]["median"] == 2
    assert margins["expect_silent"]["median"] == -1.5
    assert distribution([2, 2, 5])["counts"] == [{"margin": 2, "count": 2}, {"margin": 5, "count": 1}]
    assert distribution([])["median"] is None


def test_suite_metrics_bundles_everything():
    everything = suite_metrics(RESULTS)
    assert everything["cases"] == 7
    assert set(everything) == {"cases", "routing", "no_route", "fact_recall", "injected_chars", "margins"}
