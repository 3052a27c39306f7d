"""The pure runner: each expectation kind against hand-made decisions, and the four verdicts."""

import pytest

from canaries.runner import (
    SuiteResult,
    differences,
    evaluate,
    expected_summary,
    matches,
    run_suite,
    totals,
)
from canaries.suite import Case, load_suite
from router.config import default_settings

# The harness is tested with the reference scorer: these stores and expectations are in its scores.
pytestmark = pytest.mark.usefixtures("spec_provider")


def decision(routed=(), slugs=(), text=None, top=0, floor=3, second=0):
    """A route_prompt-shaped dict with only what the runner reads."""
    if routed and text is None:
        text = "Routed memory cluster: " + ", ".join(routed) + "".join(f"\n- {s} \u2014 hook" for s in slugs)
    return {
        "routed": list(routed),
        "lines": [{"cluster_id": routed[0] if routed else None, "slug": s, "hook": "hook"} for s in slugs],
        "additional_context": text,
        "top_score": top,
        "second_score": second,
        "floor": floor,
        "margin_over_floor": top - floor,
        "lead_over_second": top - second,
    }


ROUTED = decision(routed=["c1"], slugs=["s1", "s2", "s3"], top=7)
SILENT = decision(top=1)

# (kind, case fields, decision, expected differences)
EXPECTATIONS = [
    ("routes_to-pass", {"routes_to": ("c1",)}, ROUTED, []),
    ("routes_to-fail", {"routes_to": ("c2",)}, ROUTED, ["routes_to: expected c2 got c1"]),
    ("routes_to-fail-silent", {"routes_to": ("c2",)}, SILENT, ["routes_to: expected c2 got nothing"]),
    ("routes_to-order-insensitive", {"routes_to": ("b", "a")}, decision(routed=["a", "b"], slugs=["s"], top=6), []),
    ("routes_to-extra-cluster", {"routes_to": ("a",)}, decision(routed=["a", "b"], slugs=["s"], top=6),
     ["routes_to: expected a got a, b"]),
    ("injects-pass", {"injects": ("s2",)}, ROUTED, []),
    ("injects-fail", {"injects": ("s2", "s9")}, ROUTED, ["injects: missing s9"]),
    ("not_injects-pass", {"not_injects": ("s9",)}, ROUTED, []),
    ("not_injects-fail", {"not_injects": ("s1",)}, ROUTED, ["not_injects: injected s1"]),
    ("silent-pass", {"silent": True}, SILENT, []),
    ("silent-fail", {"silent": True}, ROUTED, ["silent: expected nothing injected got c1 (3 lines, "]),
    ("not-silent-pass", {"silent": False}, ROUTED, []),
    ("not-silent-fail", {"silent": False}, SILENT, ["silent: false expected an injection got nothing"]),
    ("max_lines-pass", {"max_lines": 3}, ROUTED, []),
    ("max_lines-fail", {"max_lines": 2}, ROUTED, ["max_lines: expected at most 2 got 3"]),
    ("max_chars-pass", {"max_chars": 1000}, ROUTED, []),
    ("max_chars-fail", {"max_chars": 10}, ROUTED, [f"max_chars: expected at most 10 got {len(ROUTED['additional_context'])}"]),
    ("max_chars-silent-is-zero", {"max_chars": 0}, SILENT, []),
    ("min_margin-pass", {"min_margin": 4}, ROUTED, []),
    ("min_margin-fail", {"min_margin": 5}, ROUTED, ["min_margin: expected at least 5 got 4"]),
    ("min_margin-float", {"min_margin": 4.5}, ROUTED, ["min_margin: expected at least 4.5 got 4"]),
]


@pytest.mark.parametrize("fields,dec,expected", [e[1:] for e in EXPECTATIONS], ids=[e[0] for e in EXPECTATIONS])
def test_each_expectation_kind(fields, dec, expected):
    case = Case(id="c", prompt="p", **fields)
    found = differences(case, dec)
    assert len(found) == len(expected)
    for got, want in zip(found, expected):
        assert got.startswith(want)
    assert evaluate(case, dec).verdict == ("fail" if expected else "pass")


def test_all_differences_are_listed_not_just_the_first():
    case = Case(id="c", prompt="p", routes_to=("c2",), injects=("s9",), max_lines=1, min_margin=10)
    found = differences(case, ROUTED)
    assert [f.split(":")[0] for f in found] == ["routes_to", "injects", "max_lines", "min_margin"]


@pytest.mark.parametrize("xfail,dec,verdict,failed", [
    (None, ROUTED, "pass", False),
    (None, SILENT, "fail", True),
    ("known residual", SILENT, "xfail", False),
    ("known residual", ROUTED, "xpass", True),
])
def test_verdicts(xfail, dec, verdict, failed):
    case = Case(id="c", prompt="p", routes_to=("c1",), xfail=xfail)
    result = evaluate(case, dec)
    assert result.verdict == verdict
    assert result.failed is failed
    if verdict == "xpass":
        assert "marked xfail (known residual)" in result.differences[0]
    if verdict == "xfail":
        assert result.differences == ("routes_to: expected c1 got nothing",)


@pytest.mark.parametrize("provider, dec, verdict", [
    ("spec", SILENT, "xfail"),      # the residual is spec's
    ("spec", ROUTED, "xpass"),      # ... and it went away under spec: reported
    ("weighted", SILENT, "fail"),   # another provider gets no excuse
    ("weighted", ROUTED, "pass"),
    (None, SILENT, "fail"),
])
def test_xfail_for_one_provider_applies_to_that_provider_only(provider, dec, verdict):
    case = Case(id="c", prompt="p", routes_to=("c1",), xfail_by_provider=(("spec", "spec misses it"),))
    result = evaluate(case, dict(dec, provider=provider) if provider else dec)
    assert result.verdict == verdict
    assert result.xfail == ("spec misses it" if provider == "spec" else None)
    assert result.to_dict()["xfail"] == result.xfail


def test_result_records_what_the_router_did():
    result = evaluate(Case(id="c", prompt="p", routes_to=("c1",), tags=("t",)), ROUTED)
    data = result.to_dict()
    assert data["routed"] == ["c1"] and data["injected"] == ["s1", "s2", "s3"] and data["lines"] == 3
    assert data["score"] == 7 and data["margin"] == 4 and data["chars"] == len(ROUTED["additional_context"])
    assert data["expected"] == {"routes_to": ["c1"]} and data["tags"] == ["t"]


@pytest.mark.parametrize("pattern,expected", [
    (None, True), ("", True), ("SET", True), ("spe", True), ("neutral", False),
])
def test_k_matches_id_or_tag_substring_case_insensitive(pattern, expected):
    assert matches(Case(id="setx-plain", prompt="p", silent=True, tags=("spec",)), pattern) is expected


def test_expected_summary_leaves_out_suite_defaults():
    case = Case(id="c", prompt="p", routes_to=("a",), injects=("s",), not_injects=("t",), max_lines=12,
                max_chars=100, min_margin=2)
    assert expected_summary(case) == "\u2192\u00a0a; +s; -t; \u226412 lines; \u2264100 chars; margin\u22652"
    assert expected_summary(case, defaults={"max_lines": 12}) == "\u2192\u00a0a; +s; -t; \u2264100 chars; margin\u22652"


def test_run_suite_routes_each_case_with_the_settings(write_suite, prompts):
    suite = load_suite(write_suite(f"""
        cases:
          - id: setx
            prompt: "{prompts.setx}"
            routes_to: layer1_project_memory_router
            injects: env_bash_tool_env_var_caching
          - id: ledger
            prompt: "{prompts.ledger}"
            routes_to: layer1_04
          - id: neutral
            prompt: "{prompts.neutral}"
            silent: true
        """))
    result = run_suite(suite, default_settings())
    assert [r.verdict for r in result.results] == ["pass", "pass", "pass"] and result.ok
    # A floor no prompt reaches: the routed cases fail, the silent one still passes.
    strict = run_suite(suite, dict(default_settings(), score_floor=50))
    assert [r.verdict for r in strict.results] == ["fail", "fail", "pass"] and not strict.ok
    only = run_suite(suite, default_settings(), pattern="LEDG")
    assert [r.case.id for r in only.results] == ["ledger"]
    counts = totals([result, strict])
    assert counts == {"pass": 4, "fail": 2, "xfail": 0, "xpass": 0, "total": 6}
    assert isinstance(result, SuiteResult) and result.to_dict()["counts"]["total"] == 3
