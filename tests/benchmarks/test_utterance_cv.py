"""benchmarks/utterance_cv.py: its objective's order, and a real cross-validation on the small grid."""

import importlib.util
import json
import pathlib

import pytest

BENCH = pathlib.Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def cv():
    spec = importlib.util.spec_from_file_location("utterance_cv", BENCH / "utterance_cv.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fig(recall, people=0.0, other=0.0, chars=200.0):
    return {"fact_recall": recall, "near_miss_people_priming": people, "other_false_priming": other,
            "routed_chars": chars}


@pytest.mark.parametrize("better, worse", [
    (fig(0.80, people=0.10), fig(0.95, people=0.30)),          # under the near-miss ceiling first
    (fig(0.80, other=0.05), fig(0.95, other=0.20)),            # ... and the other false-priming one
    (fig(0.92), fig(0.90, chars=150)),                         # then fact recall, in steps of 0.01
    (fig(0.902, chars=210), fig(0.904, chars=230)),            # within a step, fewer bytes win
    (fig(0.904, chars=210), fig(0.902, chars=210)),            # then the exact fact recall
])
def test_the_objective_orders_points_as_documented(cv, better, worse):
    assert cv.objective(better, 0) > cv.objective(worse, 1)


def test_the_earlier_grid_point_wins_a_tie(cv):
    assert cv.objective(fig(0.9), 0) > cv.objective(fig(0.9), 1)


def test_a_small_cross_validation_judges_every_case_once(cv, capsys):
    assert cv.main(["--grid", "small", "--k", "3", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["utterances"].endswith("example-blind.tsv")
    assert "canaries/nearmiss-fit.yaml" in report["suites"] and "canaries/chatty.yaml" in report["suites"]
    assert sum(fold["cases"] for fold in report["folds"]) == report["held_out"]["all"]["cases"]
    assert report["held_out"]["all"]["cases"] == report["without_utterances"]["all"]["cases"]
    assert all(set(fold["chosen"]) == set(cv.GRIDS["small"]) for fold in report["folds"])
    assert report["held_out"]["by_kind"]["paraphrase"]["fact_recall"] > \
        report["without_utterances"]["by_kind"]["paraphrase"]["fact_recall"]
