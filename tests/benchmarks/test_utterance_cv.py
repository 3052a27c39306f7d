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
    (fig(0.80, other=0.05), fig(0.95, other=0.06)),            # a ceiling is strict: 0.06 is over it
    (fig(0.50, other=0.07), fig(0.95, other=0.20)),            # when none is feasible, the least excess
    (fig(0.902), fig(0.900, chars=150)),                       # then fact recall, exactly
    (fig(0.90, chars=210), fig(0.90, chars=230)),              # an equal recall: fewer bytes win
])
def test_the_objective_orders_points_as_documented(cv, better, worse):
    assert cv.objective(better, 0) > cv.objective(worse, 1)


def test_the_earlier_grid_point_wins_a_tie(cv):
    assert cv.objective(fig(0.9), 0) > cv.objective(fig(0.9), 1)


def test_a_small_cross_validation_judges_every_case_once(cv, capsys):
    assert cv.main(["--grid", "small", "--k", "3", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["utterances"].endswith("example-blind.tsv")
    assert "benchmarks/fitting/nearmiss-fit.yaml" in report["suites"]
    assert "benchmarks/fitting/chatty.yaml" in report["suites"]
    assert not any(name.startswith("canaries/") and name.endswith(cv.FITTING) for name in report["suites"])
    assert sum(fold["cases"] for fold in report["folds"]) == report["held_out"]["all"]["cases"]
    assert report["held_out"]["all"]["cases"] == report["without_utterances"]["all"]["cases"]
    assert set(report["families"]) == set(cv.GRIDS["small"])
    for family, found in report["families"].items():
        assert sum(fold["cases"] for fold in found["folds"]) == found["held_out"]["all"]["cases"]
        assert all(fold["chosen"]["method"] == family for fold in found["folds"])
    assert report["shipped"] == report["families"][report["method"]]["chosen_on_all"]
    assert report["held_out"]["by_kind"]["paraphrase"]["fact_recall"] > \
        report["without_utterances"]["by_kind"]["paraphrase"]["fact_recall"]
