"""Baselines: what counts as a regression, an improvement or a mere change; the CLI round trip."""

import copy
import json

import pytest

from canaries.baseline import compare, suite_key, validate_baseline
from harness.cli import main

# The harness is tested with the reference scorer: these stores and expectations are in its scores.
pytestmark = pytest.mark.usefixtures("spec_provider")


def record(verdict="pass", routed=("a",), injected=("s1",), score=6, margin=3):
    return {"verdict": verdict, "routed": list(routed), "injected": list(injected), "score": score, "margin": margin}


BASE = {"version": 1, "settings": {"score_floor": 3}, "suites": {"s.yaml": {
    "one": record(), "two": record("fail", routed=()), "three": record("xfail", routed=("b",))}}}


def changed(**cases):
    new = copy.deepcopy(BASE)
    for case_id, value in cases.items():
        if value is None:
            del new["suites"]["s.yaml"][case_id]
        else:
            new["suites"]["s.yaml"][case_id] = value
    return new


COMPARISONS = [
    ("identical", changed(), [], [], []),
    ("pass-turned-fail", changed(one=record("fail")), ["one"], [], []),
    ("routing-changed-same-verdict", changed(two=record("fail", routed=("c",))), ["two"], [], []),
    ("routing-changed-still-passing", changed(one=record(routed=("a", "b"))), ["one"], [], []),
    ("xfail-turned-xpass", changed(three=record("xpass", routed=("b",))), ["three"], [], []),
    ("fail-turned-pass", changed(two=record("pass", routed=())), [], ["two"], []),
    ("fail-turned-pass-new-routing", changed(two=record("pass", routed=("d",))), [], ["two"], []),
    ("only-injected-lines-changed", changed(one=record(injected=("s2",))), [], [], ["one"]),
    ("only-score-changed", changed(one=record(score=9, margin=6)), [], [], ["one"]),
]


@pytest.mark.parametrize("new,regressions,improvements,changes", [c[1:] for c in COMPARISONS],
                         ids=[c[0] for c in COMPARISONS])
def test_compare(new, regressions, improvements, changes):
    result = compare(BASE, new)
    assert [e["id"] for e in result["regressions"]] == regressions
    assert [e["id"] for e in result["improvements"]] == improvements
    assert [e["id"] for e in result["changes"]] == changes
    assert result["ok"] is (not regressions)


def test_regression_says_what_happened():
    result = compare(BASE, changed(one=record("fail", routed=("z",))))
    (entry,) = result["regressions"]
    assert entry["what"] == "pass turned fail; routing changed: a -> z"
    assert entry["before"]["verdict"] == "pass" and entry["after"]["routed"] == ["z"]


def test_added_and_removed_cases_and_suites_are_listed_not_failed():
    new = changed(two=None, four=record())
    new["suites"]["other.yaml"] = {"x": record()}
    result = compare(BASE, new)
    assert result["ok"] is True
    assert result["removed"] == [{"suite": "s.yaml", "id": "two"}]
    assert result["added"] == [{"suite": "other.yaml", "id": "x"}, {"suite": "s.yaml", "id": "four"}]


def test_settings_change_is_flagged():
    new = changed()
    new["settings"] = {"score_floor": 4}
    assert compare(BASE, new)["settings_changed"] is True
    assert compare(BASE, changed())["settings_changed"] is False


@pytest.mark.parametrize("data,problem", [
    ([], "not a JSON object"),
    ({"version": 2, "suites": {}}, "unsupported baseline version"),
    ({"version": 1}, "no 'suites'"),
    ({"version": 1, "suites": {"s": {"c": {"routed": []}}}}, "lacks 'verdict'"),
])
def test_validate_baseline(data, problem):
    assert any(problem in p for p in validate_baseline(data))
    assert validate_baseline(BASE) == []


def test_suite_key(tmp_path):
    bundled = tmp_path / "pkg"
    assert suite_key(bundled / "spec.yaml", bundled_dir=bundled) == "bundled:spec.yaml"
    assert suite_key(tmp_path / "dir" / "s.yaml", cwd=tmp_path) == "dir/s.yaml"
    assert suite_key(tmp_path / "s.yaml", cwd=tmp_path / "elsewhere") == str(tmp_path / "s.yaml")


@pytest.fixture
def suite(write_suite, prompts):
    return write_suite(f"""
        cases:
          - id: setx
            prompt: "{prompts.setx}"
            routes_to: layer1_project_memory_router
          - id: ledger
            prompt: "{prompts.ledger}"
            routes_to: layer1_04
          - id: neutral
            prompt: "{prompts.neutral}"
            silent: true
        """)


def test_cli_round_trip_and_regression(suite, tmp_path, capsys):
    baseline = tmp_path / "baseline.json"
    assert main(["canary", "run", str(suite), "--save-baseline", str(baseline)]) == 0
    saved = json.loads(baseline.read_text())
    assert saved["version"] == 1 and len(saved["cluster_files"]) == 1
    (cases,) = saved["suites"].values()
    assert cases["setx"]["routed"] == ["layer1_project_memory_router"] and cases["neutral"]["verdict"] == "pass"
    capsys.readouterr()

    assert main(["canary", "run", str(suite), "--baseline", str(baseline)]) == 0
    assert "no difference from the baseline" in capsys.readouterr().out

    # A floor of 8 silences the setx prompt (score 7) but not the ledger one (score 9).
    config = tmp_path / "strict.toml"
    config.write_text("score_floor = 8\n")
    assert main(["canary", "run", str(suite), "--baseline", str(baseline), "--config", str(config), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    regressions = data["baseline"]["regressions"]
    assert [r["id"] for r in regressions] == ["setx"]
    assert regressions[0]["what"] == "pass turned fail; routing changed: layer1_project_memory_router -> nothing"
    assert data["baseline"]["settings_changed"] is True


def test_cli_regression_even_when_every_case_passes(suite, tmp_path, capsys):
    """A changed routing is a regression although the run itself passes (the baseline pins more)."""
    baseline = tmp_path / "baseline.json"
    assert main(["canary", "run", str(suite), "--save-baseline", str(baseline)]) == 0
    saved = json.loads(baseline.read_text())
    (cases,) = saved["suites"].values()
    # As if the case used to pass with a different routing (e.g. its expectation was looser).
    cases["neutral"]["routed"] = ["layer1_db"]
    baseline.write_text(json.dumps(saved))
    capsys.readouterr()
    assert main(["canary", "run", str(suite), "--baseline", str(baseline)]) == 1
    out = capsys.readouterr().out
    assert "regression:" in out and "neutral: routing changed: layer1_db -> nothing" in out
    assert "OK" not in out.splitlines()[-1]


def test_cli_fixed_case_is_an_improvement_not_a_routing_regression(write_suite, prompts, tmp_path, capsys):
    path = write_suite(f"""
        cases:
          - id: setx
            prompt: "{prompts.setx}"
            routes_to: layer1_project_memory_router
        """)
    strict = tmp_path / "strict.toml"
    strict.write_text("score_floor = 8\n")
    baseline = tmp_path / "baseline.json"
    assert main(["canary", "run", str(path), "--config", str(strict), "--save-baseline", str(baseline)]) == 1
    capsys.readouterr()
    # Back at the default floor the case routes and passes: an improvement, listed, exit 0.
    assert main(["canary", "run", str(path), "--baseline", str(baseline), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["baseline"]["regressions"] == []
    (entry,) = data["baseline"]["improvements"]
    assert entry["what"] == "fail turned pass; routing changed: nothing -> layer1_project_memory_router"


def test_cli_pure_improvement_exits_0(write_suite, prompts, tmp_path, capsys):
    path = write_suite(f"""
        cases:
          - id: setx
            prompt: "{prompts.setx}"
            routes_to: layer1_project_memory_router
        """)
    baseline = tmp_path / "baseline.json"
    assert main(["canary", "run", str(path), "--save-baseline", str(baseline)]) == 0
    saved = json.loads(baseline.read_text())
    (cases,) = saved["suites"].values()
    cases["setx"]["verdict"] = "fail"  # same routing, but it used to fail (e.g. a stricter max_chars)
    baseline.write_text(json.dumps(saved))
    capsys.readouterr()
    assert main(["canary", "run", str(path), "--baseline", str(baseline)]) == 0
    assert "improvement:" in capsys.readouterr().out


@pytest.mark.parametrize("content,message", [
    ("{not json", "baseline is not valid JSON"),
    ('{"version": 1}', "no 'suites' object"),
])
def test_cli_invalid_baseline_exits_2(suite, tmp_path, capsys, content, message):
    baseline = tmp_path / "baseline.json"
    baseline.write_text(content)
    assert main(["canary", "run", str(suite), "--baseline", str(baseline)]) == 2
    err = capsys.readouterr().err
    assert message in err and str(baseline) in err


def test_cli_missing_baseline_exits_2(suite, tmp_path, capsys):
    assert main(["canary", "run", str(suite), "--baseline", str(tmp_path / "absent.json")]) == 2
    assert "cannot read baseline" in capsys.readouterr().err


def test_cli_baseline_from_another_directory_compares_nothing_and_exits_2(write_suite, prompts, tmp_path,
                                                                          capsys, monkeypatch):
    """Suites are keyed by path relative to the current directory: a baseline saved in one
    directory and compared from another shares no case, and must not read as 'no regression'."""
    path = write_suite(f"""
        cases:
          - id: setx
            prompt: "{prompts.setx}"
            routes_to: layer1_project_memory_router
        """)
    baseline = tmp_path / "baseline.json"
    monkeypatch.chdir(tmp_path)
    assert main(["canary", "run", str(path), "--save-baseline", str(baseline)]) == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    capsys.readouterr()
    assert main(["canary", "run", str(path), "--baseline", str(baseline)]) == 2
    err = capsys.readouterr().err
    assert "shares no case with this run" in err and str(baseline) in err and "fix:" in err
    # from the directory it was saved in, the same comparison works
    monkeypatch.chdir(tmp_path)
    assert main(["canary", "run", str(path), "--baseline", str(baseline)]) == 0
