"""``canary fit``: the deterministic split, the search on a tiny suite, and safe config writes."""

import json
import tomllib

import pytest

from canaries.cases import Case
from canaries.fit import GRID, fit, grid_settings, in_holdout, split_cases, toml_snippet, update_toml_text
from canaries.suite import load_suite
from harness.cli import main
from router.config import default_settings
from router.routing.score import build_routing_table

# The harness is tested with the reference scorer: these stores and expectations are in its scores.
pytestmark = pytest.mark.usefixtures("spec_provider")

TINY = """
cases:
  - id: setx
    prompt: "{setx}"
    routes_to: layer1_project_memory_router
    injects: env_bash_tool_env_var_caching
  - id: ledger
    prompt: "{ledger}"
    routes_to: layer1_04
  - id: neutral
    prompt: "{neutral}"
    silent: true
  - id: haiku
    prompt: "{haiku}"
    silent: true
"""


@pytest.fixture
def tiny(write_suite, prompts):
    return write_suite(TINY.format(**vars(prompts)), name="canary_tiny.yaml")


def test_holdout_split_is_deterministic_and_proportionate():
    ids = [f"case-{n}" for n in range(1000)]
    held = [i for i in ids if in_holdout(i, 0.3)]
    assert held == [i for i in ids if in_holdout(i, 0.3)]  # same answer every time
    assert 240 < len(held) < 360
    # A bigger fraction only adds cases: nothing moves from held-out back to fitting.
    assert set(held) <= {i for i in ids if in_holdout(i, 0.5)}
    assert not any(in_holdout(i, 0) for i in ids)


def test_split_with_no_holdout_scores_on_everything():
    cases = [Case(id=str(n), prompt="p", silent=True) for n in range(5)]
    fitting, held = split_cases(cases, 0)
    assert fitting == cases and held == cases
    fitting, held = split_cases(cases, 0.5)
    assert sorted(c.id for c in fitting + held) == [str(n) for n in range(5)]


def test_grid_is_the_documented_one():
    assert GRID == {"score_floor": (2, 3, 4, 5, 6), "tag_weight": (1, 2, 3, 4, 5), "member_weight": (0, 1, 2),
                    "line_cap": (6, 8, 12, 16)}
    settings = list(grid_settings(default_settings()))
    assert len(settings) == 300
    assert all(s["second_ratio"] == 0.75 for s in settings)  # keys outside the grid are kept


def test_fit_finds_a_setting_that_silences_the_false_prime(tiny):
    suite = load_suite(tiny)
    table = build_routing_table(suite.index)
    report = fit(suite.cases, table, default_settings(), holdout=0, max_false_priming=0.0)
    assert report["current"]["fitting"]["false_priming_rate"] == 0.5  # the haiku fires at the floor
    assert report["proposed"]["fitting"]["false_priming_rate"] == 0.0
    assert report["proposed"]["fitting"]["f1"] == 1.0 and report["proposed"]["fitting"]["fact_recall"] == 1.0
    assert report["recommended"] is True and report["changes"]
    assert report["flips"] == [{"id": "haiku", "current": {"verdict": "fail", "routed": ["layer1_db"]},
                                "proposed": {"verdict": "pass", "routed": []}}]
    again = fit(suite.cases, table, default_settings(), holdout=0, max_false_priming=0.0)
    assert again == report  # deterministic


def test_fit_keeps_the_current_setting_when_nothing_is_better(tiny):
    suite = load_suite(tiny)
    cases = [c for c in suite.cases if c.id != "haiku"]
    report = fit(cases, build_routing_table(suite.index), default_settings(), holdout=0)
    assert report["changes"] == {} and report["recommended"] is False and report["flips"] == []


def _ids(prefix, held, fraction, count=1):
    """Case ids that fall (or not) in the held-out part, found by the same hash the split uses."""
    found = [f"{prefix}-{n}" for n in range(1000) if in_holdout(f"{prefix}-{n}", fraction) is held]
    return found[:count]


@pytest.fixture
def overfit(write_suite, prompts):
    """A suite whose fitting part rewards a setting the held-out part punishes: silencing the
    single-tag haiku (fitting) by lowering the tag weight also silences a held-out case that
    needs its tag hit ("postgres vacuum": one tag + one member word)."""
    setx, ledger, haiku = _ids("fit", held=False, fraction=0.5, count=3)
    (postgres,) = _ids("held", held=True, fraction=0.5)
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


def test_fit_does_not_recommend_what_the_held_out_part_rejects(overfit):
    path, held_id = overfit
    suite = load_suite(path)
    report = fit(suite.cases, build_routing_table(suite.index), default_settings(), holdout=0.5, max_false_priming=0)
    assert report["held_out_ids"] == [held_id]
    assert report["proposed"]["fitting"]["false_priming_rate"] == 0 < report["current"]["fitting"]["false_priming_rate"]
    assert report["current"]["held_out"]["f1"] == 1.0 and report["proposed"]["held_out"]["f1"] == 0
    assert report["changes"] and report["recommended"] is False
    assert report["objections"] == ["lower routing F1 than the current setting on the held-out part"]


def test_fit_write_refuses_a_proposal_the_held_out_part_rejects(overfit, tmp_path, capsys):
    path, _held_id = overfit
    config = tmp_path / "memory-router.toml"
    config.write_text("score_floor = 3\n")
    assert main(["canary", "fit", str(path), "--holdout", "0.5", "--max-false-priming", "0", "--config", str(config),
                 "--write"]) == 1
    captured = capsys.readouterr()
    assert "not recommended: lower routing F1" in captured.out
    assert "nothing was written" in captured.err
    assert config.read_text() == "score_floor = 3\n"


UPDATES = [
    ("replace-keeps-comment", "# mine\nscore_floor = 3 # floor\nhot_strip = [\"a\"]\n", {"score_floor": 4},
     "# mine\nscore_floor = 4 # floor\nhot_strip = [\"a\"]\n"),
    ("insert-missing", "score_floor = 3\n", {"tag_weight": 2}, "score_floor = 3\ntag_weight = 2\n"),
    ("empty-file", "", {"line_cap": 8}, "line_cap = 8\n"),
    ("no-final-newline", "score_floor = 3", {"tag_weight": 2}, "score_floor = 3\ntag_weight = 2\n"),
    ("crlf", "score_floor = 3\r\nline_cap = 12\r\n", {"line_cap": 6}, "score_floor = 3\r\nline_cap = 6\r\n"),
    ("before-a-table", "score_floor = 3\n\n[later]\nline_cap = 1\n", {"line_cap": 8, "score_floor": 2},
     "score_floor = 2\nline_cap = 8\n\n[later]\nline_cap = 1\n"),
    ("same-prefix-key", "score_floor_x = 1\nscore_floor = 3\n", {"score_floor": 5},
     "score_floor_x = 1\nscore_floor = 5\n"),
]


@pytest.mark.parametrize("text,changes,expected", [u[1:] for u in UPDATES], ids=[u[0] for u in UPDATES])
def test_update_toml_text(text, changes, expected):
    assert update_toml_text(text, changes) == expected


def test_toml_snippet():
    assert toml_snippet({"score_floor": 4, "line_cap": 8}, "tool.memory-router") == \
        "[tool.memory-router]\nscore_floor = 4\nline_cap = 8\n"


def test_fit_never_writes_without_write(tiny, tmp_path, capsys):
    config = tmp_path / "memory-router.toml"
    config.write_text("# keep me\nscore_floor = 3\n")
    before = config.read_bytes()
    assert main(["canary", "fit", str(tiny), "--holdout", "0", "--max-false-priming", "0",
                 "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert "recommended:" in out and "--write" in out and "haiku" in out
    assert config.read_bytes() == before


def test_fit_write_changes_only_the_proposed_keys(tiny, tmp_path, capsys):
    config = tmp_path / "memory-router.toml"
    original = ('# my settings\nclusters = "clusters.md"\nscore_floor = 3  # the floor\nmax_context_chars = 9000\n'
                'hot_strip = ["env_bash_tool_env_var_caching"]\n')
    config.write_text(original)
    assert main(["canary", "fit", str(tiny), "--holdout", "0", "--max-false-priming", "0", "--config", str(config),
                 "--write", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    changed = {key: value["proposed"] for key, value in report["changes"].items()}
    assert report["written"] == {"file": str(config), "keys": changed}
    text = config.read_text()
    assert text.startswith("# my settings\n") and "# the floor" in text
    after = tomllib.loads(text)
    before = tomllib.loads(original)
    assert after == dict(before, **changed)
    # Running again: the written setting is now the current one, so there is nothing to change.
    assert main(["canary", "fit", str(tiny), "--holdout", "0", "--max-false-priming", "0", "--config", str(config),
                 "--write"]) == 0
    assert "nothing to change" in capsys.readouterr().out
    assert tomllib.loads(config.read_text()) == after


def test_fit_write_creates_memory_router_toml_in_the_current_directory(tiny, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["canary", "fit", str(tiny), "--holdout", "0", "--max-false-priming", "0", "--write"]) == 0
    written = tomllib.loads((tmp_path / "memory-router.toml").read_text())
    assert written and set(written) <= set(GRID)


def test_fit_refuses_to_edit_pyproject_and_prints_the_snippet(tiny, tmp_path, capsys):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text("[project]\nname = 'x'\n\n[tool.memory-router]\nscore_floor = 3\n")
    before = pyproject.read_bytes()
    assert main(["canary", "fit", str(tiny), "--holdout", "0", "--max-false-priming", "0", "--config", str(pyproject),
                 "--write"]) == 1
    err = capsys.readouterr().err
    assert "refusing to edit" in err and "[tool.memory-router]" in err
    assert pyproject.read_bytes() == before


@pytest.mark.parametrize("args", [["--holdout", "1"], ["--holdout", "1.5"], ["--holdout", "x"],
                                  ["--max-false-priming", "-0.1"]])
def test_fit_rejects_bad_fractions(tiny, capsys, args):
    assert main(["canary", "fit", str(tiny), *args]) == 2
