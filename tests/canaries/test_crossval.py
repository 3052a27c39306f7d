"""K-fold cross-validation of canary fit: every case judged once, by constants fitted without it."""

import json

import pytest

from canaries.cases import Case
from canaries.crossval import cross_validate, fold_of, kind_of, per_kind
from canaries.fit import GRID, WEIGHTED_GRID, grid_for
from canaries.runner import run_cases
from canaries.suite import load_suite
from harness.cli import main
from router.config import default_settings
from router.providers.provider import build_table


def spec_settings(**overrides):
    return dict(default_settings(), provider="spec", **overrides)


def _ids(prefix, fold, k, count):
    return [f"{prefix}-{n}" for n in range(1000) if fold_of(f"{prefix}-{n}", k) == fold][:count]


@pytest.fixture
def overfit(write_suite, prompts):
    """Fold 0 rewards silencing the single-tag haiku by lowering the tag weight; the fold-1 case
    ("postgres vacuum": one tag + one member word) needs that tag hit."""
    setx, ledger, haiku = _ids("fit", 0, 2, 3)
    (postgres,) = _ids("held", 1, 2, 1)
    return write_suite(f"""
        cases:
          - id: {setx}
            prompt: "{prompts.setx}"
            routes_to: layer1_project_memory_router
          - id: {ledger}
            prompt: "{prompts.ledger}"
            routes_to: layer1_04
          - id: {haiku}
            prompt: "{prompts.haiku}"
            silent: true
          - id: {postgres}
            prompt: "postgres vacuum"
            routes_to: layer1_db
        """, name="canary_overfit.yaml"), postgres


def test_folds_are_stable_and_cover_every_fold():
    ids = [f"case-{n}" for n in range(500)]
    assert [fold_of(i, 5) for i in ids] == [fold_of(i, 5) for i in ids]
    assert {fold_of(i, 5) for i in ids} == {0, 1, 2, 3, 4}


def test_overfitting_shows_in_the_held_out_figures(overfit):
    path, postgres = overfit
    suite = load_suite(path)
    table = build_table(suite.index)
    report = cross_validate(suite.cases, table, spec_settings(), k=2, max_false_priming=0.0)
    assert sum(f["held_out_cases"] for f in report["folds"]) == report["held_out"]["cases"] == 4
    # Fitted on fold 0, the tag weight drops and the held-out postgres case is lost...
    fold1 = report["folds"][1]
    assert fold1["settings"] != {key: spec_settings()[key] for key in GRID}
    assert fold1["held_out"]["f1"] == 0
    # ... which the current setting, judged on every case, routes: the gap is the overfit.
    assert report["current"]["all_cases"]["f1"] == 1.0
    assert report["held_out"]["f1"] < 1.0


def test_a_provider_without_a_grid_is_judged_as_configured(overfit):
    path, _ = overfit
    suite = load_suite(path)
    settings = dict(default_settings(), provider="null")
    report = cross_validate(suite.cases, build_table(suite.index), settings, k=2)
    assert report["grid"] == {} and report["held_out"]["fact_recall"] is None
    assert report["held_out"]["false_priming_rate"] == 0.0 and report["held_out"]["f1"] == 0.0


def test_fewer_than_two_folds_is_refused():
    with pytest.raises(ValueError):
        cross_validate([], None, spec_settings(), k=1)


@pytest.mark.parametrize("settings, grid", [
    ({"provider": "spec"}, GRID), ({"provider": "weighted"}, WEIGHTED_GRID), ({"provider": "null"}, {}),
    ({"provider": "acme.routing:make"}, {}),
])
def test_grid_for_each_provider(settings, grid):
    assert grid_for(settings) == grid


@pytest.mark.parametrize("tags, silent, kind", [
    (("paraphrase", "residual"), None, "paraphrase"),
    (("cluster-03", "member-text"), None, "member"),
    (("spec", "neutral"), True, "neutral"),
    (("cluster-03",), None, "direct"),
    ((), True, "neutral"),
    (("residual", "near-miss"), True, "near-miss"),
    (("near-miss-people", "layer1_02"), True, "near-miss-people"),
    (("chatty", "residual"), None, "chatty"),
])
def test_kind_of(tags, silent, kind):
    assert kind_of(Case(id="c", prompt="p", tags=tags, silent=silent)) == kind


def test_per_kind_figures(write_suite, prompts):
    path = write_suite(f"""
        cases:
          - id: a
            prompt: "{prompts.setx}"
            routes_to: layer1_project_memory_router
            injects: [env_bash_tool_env_var_caching]
            tags: [paraphrase]
          - id: b
            prompt: "{prompts.neutral}"
            routes_to: layer1_04
            tags: [paraphrase]
          - id: c
            prompt: "{prompts.haiku}"
            silent: true
            tags: [near-miss]
        """)
    suite = load_suite(path)
    figures = per_kind(run_cases(suite.cases, build_table(suite.index), spec_settings()))
    assert figures["paraphrase"]["cases"] == 2 and figures["paraphrase"]["cluster_hit"] == 0.5
    assert figures["paraphrase"]["fact_recall"] == 1.0
    assert figures["near-miss"]["false_priming"] == 1.0  # the haiku fires at the floor


def test_eval_cv_command(overfit, tmp_path, capsys):
    path, _ = overfit
    config = tmp_path / "memory-router.toml"
    config.write_text('provider = "spec"\n', encoding="utf-8")
    assert main(["canary", "eval", str(path), "--cv", "2", "--config", str(config), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["k"] == 2 and report["provider"] == "spec" and len(report["folds"]) == 2
    assert main(["canary", "eval", str(path), "--cv", "9", "--config", str(config)]) == 2
    assert "--cv needs between 2 and 4 folds" in capsys.readouterr().err
