"""The pure runner: each expectation kind against hand-made decisions, and the four verdicts."""

import textwrap

import pytest

from canaries.cases import Case, SessionStep
from canaries.runner import (
    SuiteResult,
    _num,
    defaults_summary,
    differences,
    evaluate,
    expected_summary,
    matches,
    run_suite,
    step_differences,
    totals,
)
from canaries.suite import load_suite
from router.config import default_settings
from router.hooks.session import route_fresh
from router.providers.provider import build_table

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
    ("silent-fail", {"silent": True}, ROUTED,
     [f"silent: expected nothing injected got c1 (3 lines, {len(ROUTED['additional_context'])} chars)"]),
    ("not-silent-pass", {"silent": False}, ROUTED, []),
    ("not-silent-fail", {"silent": False}, SILENT,
     ["silent: false expected an injection got nothing (top score 1, floor 3)"]),
    ("max_lines-pass", {"max_lines": 3}, ROUTED, []),
    ("max_lines-fail", {"max_lines": 2}, ROUTED, ["max_lines: expected at most 2 got 3"]),
    ("max_chars-pass", {"max_chars": 1000}, ROUTED, []),
    ("max_chars-fail", {"max_chars": 10}, ROUTED, [f"max_chars: expected at most 10 got {len(ROUTED['additional_context'])}"]),
    ("max_chars-silent-is-zero", {"max_chars": 0}, SILENT, []),
    ("min_margin-pass", {"min_margin": 4}, ROUTED, []),
    ("min_margin-fail", {"min_margin": 5}, ROUTED, ["min_margin: expected at least 5 got 4 (top score 7, floor 3)"]),
    ("min_margin-float", {"min_margin": 4.5}, ROUTED,
     ["min_margin: expected at least 4.5 got 4 (top score 7, floor 3)"]),
    ("min_margin-whole-float", {"min_margin": 5.0}, decision(routed=["c1"], slugs=["s1"], top=7.0, floor=3.0),
     ["min_margin: expected at least 5 got 4 (top score 7, floor 3)"]),
]


@pytest.mark.parametrize("fields,dec,expected", [e[1:] for e in EXPECTATIONS], ids=[e[0] for e in EXPECTATIONS])
def test_each_expectation_kind(fields, dec, expected):
    case = Case(id="c", prompt="p", **fields)
    assert differences(case, dec) == expected
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


# --------------------------------------------------------------------------- session cases (issue 13)

# Every line of a routed cluster (no evidence cut), so these judge the session logic alone.
ALL_LINES = dict(default_settings(), line_evidence_share=0, provider="spec")  # written in spec §10 scores


def test_a_session_sends_a_fact_once_per_context(write_suite, prompts):
    suite = load_suite(write_suite(f"""
        sessions:
          - id: twice
            steps:
              - prompt: "{prompts.setx}"
                injects: env_bash_tool_env_var_caching
              - prompt: "{prompts.setx}"
                silent: true
              - prompt: "{prompts.ledger}"
                silent: false
                not_injects: env_bash_tool_env_var_caching
              - compact
              - prompt: "{prompts.setx}"
                injects: env_bash_tool_env_var_caching
              - clear
              - prompt: "{prompts.setx}"
                new_lines: 3
        """))
    result = run_suite(suite, ALL_LINES)
    [session] = result.sessions
    assert session.verdict == "pass", session.differences
    assert [s.get("sent") for s in session.steps][:3] == [
        ["env_bash_tool_env_var_caching", "env_cloudflare_workers_build_secret_vs_text", "project_hot_strip"], [],
        ["feedback_never_read_decisions_raw", "project_dashboard_layout"]]
    assert session.steps[1]["held"] and result.counts()["total"] == 1 and result.ok
    assert result.to_dict()["sessions"][0]["steps"][3] == {"step": 4, "kind": "compact", "line": 11, "sent": [],
                                                           "chars": 0, "differences": []}


@pytest.mark.parametrize("steps, expected", [
    # without a compaction between, the repeat holds the fact, so expecting it fails
    ('- prompt: "{setx}"\n    injects: env_bash_tool_env_var_caching\n  - prompt: "{setx}"\n'
     '    injects: env_bash_tool_env_var_caching\n',
     "step 2 (line *): injects: missing env_bash_tool_env_var_caching (the session already held it)"),
    ('- prompt: "{setx}"\n    silent: true\n', "step 1 (line *): silent: expected nothing sent got 3 lines"),
    ('- prompt: "{neutral}"\n    silent: false\n', "step 1 (line *): silent: false expected lines sent got nothing"),
    ('- prompt: "{setx}"\n    new_lines: 2\n', "step 1 (line *): new_lines: expected 2 got 3"),
    ('- prompt: "{setx}"\n    max_chars: 50\n', "step 1 (line *): max_chars: expected at most 50 got"),
    ('- prompt: "{setx}"\n  - clear\n  - prompt: "{setx}"\n    not_injects: project_hot_strip\n',
     "step 3 (line *): not_injects: sent project_hot_strip"),
])
def test_a_session_step_can_fail(write_suite, prompts, steps, expected):
    body = "sessions:\n  - id: s\n    steps:\n" + textwrap.indent(
        "  " + steps.format(setx=prompts.setx, neutral=prompts.neutral), "  ")
    suite = load_suite(write_suite(body))
    [session] = run_suite(suite, ALL_LINES).sessions
    assert session.verdict == "fail" and session.failed
    step, message = expected.split(" (line *): ")
    assert any(d.startswith(step + " (line ") and message in d for d in session.differences), session.differences


def test_a_session_marked_xfail_that_passes_is_an_xpass(write_suite, prompts):
    suite = load_suite(write_suite(f"""
        sessions:
          - id: s
            xfail: "known"
            steps:
              - prompt: "{prompts.setx}"
                injects: env_bash_tool_env_var_caching
        """))
    result = run_suite(suite, ALL_LINES)
    assert result.sessions[0].verdict == "xpass" and not result.ok


def test_a_compact_step_lists_what_the_session_start_hook_sends_again(write_suite, prompts):
    suite = load_suite(write_suite(f"""
        sessions:
          - id: s
            steps:
              - prompt: "{prompts.setx}"
              - prompt: "{prompts.setx}"
                silent: true
              - compact
              - clear
        """))
    [session] = run_suite(suite, ALL_LINES).sessions
    compact, clear = session.steps[2], session.steps[3]
    assert "env_bash_tool_env_var_caching" in compact["sent"] and compact["chars"] > 0 and clear["sent"] == []


def test_a_compact_step_is_judged_on_what_is_sent_again(write_suite, prompts):
    suite = load_suite(write_suite(f"""
        sessions:
          - id: s
            steps:
              - prompt: "{prompts.setx}"
              - prompt: "{prompts.setx}"
              - compact: true
                silent: true
              - prompt: "{prompts.setx}"
                injects: env_bash_tool_env_var_caching
        """))
    [session] = run_suite(suite, ALL_LINES).sessions
    assert session.verdict == "fail"
    assert session.differences[0].startswith("step 3 (compact, line 6): silent: expected nothing sent got 3 lines")
    # sent again with the compaction, the fact is held: the next ask sends nothing
    assert "step 4 (line 8): injects: missing env_bash_tool_env_var_caching (the session already held it)" \
        in session.differences


@pytest.mark.parametrize("value, text", [(4, "4"), (4.0, "4"), (-3.0, "-3"), (4.5, "4.5"), (0.25, "0.25")])
def test_num_prints_whole_floats_without_the_point(value, text):
    assert _num(value) == text


def test_result_dict_in_full():
    case = Case(id="c", prompt="p", routes_to=("c2",), max_lines=5, tags=("t",), xfail="known", line=12)
    result = evaluate(case, ROUTED)
    assert result.to_dict() == {
        "id": "c", "line": 12, "verdict": "xfail", "differences": ["routes_to: expected c2 got c1"],
        "expected": {"routes_to": ["c2"], "max_lines": 5}, "routed": ["c1"], "injected": ["s1", "s2", "s3"],
        "lines": 3, "chars": len(ROUTED["additional_context"]), "score": 7, "margin": 4,
        "lead_over_second": 7, "tags": ["t"], "xfail": "known",
    }


def test_silent_result_has_zero_chars_and_its_lead():
    result = evaluate(Case(id="c", prompt="p", silent=True), decision(top=2, second=1))
    assert (result.chars, result.top_score, result.margin, result.lead) == (0, 2, -1, 1)


def test_xpass_message_in_full():
    result = evaluate(Case(id="c", prompt="p", routes_to=("c1",), xfail="flaky floor"), ROUTED)
    assert result.differences == ("xpass: marked xfail (flaky floor) but every expectation held; remove 'xfail' "
                                  "if the residual is fixed",)


@pytest.mark.parametrize("fields, defaults, summary", [
    ({"routes_to": ("a", "b")}, None, "\u2192\u00a0a, b"),
    ({"silent": True}, None, "silent"),
    ({"silent": False}, None, "not silent"),
    ({"silent": True, "max_chars": 0}, None, "silent; \u22640 chars"),
    ({"max_lines": 4, "max_chars": 900, "min_margin": 1.0}, {"max_lines": 4, "max_chars": 900, "min_margin": 1.0},
     ""),
    ({"max_lines": 4, "max_chars": 800, "min_margin": 2.5}, {"max_lines": 4, "max_chars": 900, "min_margin": 1},
     "\u2264800 chars; margin\u22652.5"),
    ({"max_chars": 900, "min_margin": 1}, {"max_lines": 900, "min_margin": 0},
     "\u2264900 chars; margin\u22651"),
    ({"min_margin": 0}, {"max_chars": 0, "max_lines": 0}, "margin\u22650"),
])
def test_expected_summary_table(fields, defaults, summary):
    assert expected_summary(Case(id="c", prompt="p", **fields), defaults=defaults) == summary


@pytest.mark.parametrize("defaults, summary", [
    ({}, ""),
    ({"max_lines": 12}, "\u226412 lines"),
    ({"max_chars": 2000}, "\u22642000 chars"),
    ({"min_margin": 1.0}, "margin\u22651 where a route is expected"),
    ({"max_lines": 12, "max_chars": 2000, "min_margin": 0.5, "tags": ["spec"]},
     "\u226412 lines, \u22642000 chars, margin\u22650.5 where a route is expected"),
])
def test_defaults_summary_table(defaults, summary):
    assert defaults_summary(defaults) == summary


def test_suite_result_dict_and_settings(write_suite, prompts):
    path = write_suite(f"""
        cases:
          - id: neutral
            prompt: "{prompts.neutral}"
            silent: true
        """)
    suite = load_suite(path)
    settings = dict(default_settings(), line_cap=5)
    result = run_suite(suite, settings)
    assert result.settings == settings and result.settings is not settings
    data = result.to_dict()
    assert data == {"suite": suite.path, "clusters": suite.cluster_path,
                    "counts": {"pass": 1, "fail": 0, "xfail": 0, "xpass": 0, "total": 1}, "ok": True,
                    "results": [result.results[0].to_dict()], "sessions": []}


# --------------------------------------------------------------------------- one session step, judged (issue 38)


def plan(sent=(), held=(), text=None):
    """A plan_injection-shaped dict with only what step_differences reads."""
    return {"lines": [{"slug": slug} for slug in sent], "held": [{"slug": slug} for slug in held], "text": text}


SENT_TWO = plan(sent=("s1", "s2"), text="x" * 17)


@pytest.mark.parametrize("fields, given, expected", [
    ({"injects": ("s1", "s2")}, SENT_TWO, []),
    ({"injects": ("s9",)}, SENT_TWO, ["injects: missing s9"]),
    ({"injects": ("s3",)}, plan(sent=("s1",), held=("s3",), text="t"), ["injects: missing s3 (the session already held it)"]),
    ({"not_injects": ("s3",)}, plan(sent=("s1",), held=("s3",), text="t"), []),   # held, not sent: fine
    ({"not_injects": ("s2",)}, SENT_TWO, ["not_injects: sent s2"]),
    ({"silent": True}, plan(held=("s1",)), []),
    ({"silent": True}, SENT_TWO, ["silent: expected nothing sent got 2 lines (s1, s2), 17 chars"]),
    ({"silent": True}, plan(text=""), ["silent: expected nothing sent got 0 lines (nothing), 0 chars"]),
    ({"silent": False}, SENT_TWO, []),
    ({"silent": False}, plan(), ["silent: false expected lines sent got nothing (nothing routed)"]),
    ({"silent": False}, plan(held=("b", "a")), ["silent: false expected lines sent got nothing (held already: a, b)"]),
    ({"new_lines": 2}, SENT_TWO, []),
    ({"new_lines": 0}, plan(), []),
    ({"new_lines": 0}, SENT_TWO, ["new_lines: expected 0 got 2"]),
    ({"new_lines": 3}, SENT_TWO, ["new_lines: expected 3 got 2"]),
    ({"max_chars": 17}, SENT_TWO, []),
    ({"max_chars": 16}, SENT_TWO, ["max_chars: expected at most 16 got 17"]),
    ({"max_chars": 0}, plan(), []),                 # nothing sent is 0 characters
    ({"max_chars": 0}, plan(text=""), []),
    ({"injects": ("s9",), "not_injects": ("s1",), "silent": True, "new_lines": 1, "max_chars": 1}, SENT_TWO,
     ["injects: missing s9", "not_injects: sent s1", "silent: expected nothing sent got 2 lines (s1, s2), 17 chars",
      "new_lines: expected 1 got 2", "max_chars: expected at most 1 got 17"]),
], ids=lambda value: None)
def test_step_differences_in_full(fields, given, expected):
    assert step_differences(SessionStep(kind="prompt", prompt="p", **fields), given) == expected


# --------------------------------------------------------------------------- a whole session, step by step


def _fresh_chars(prompt, suite):
    """How many characters the hook sends ``prompt`` in a session that holds nothing yet."""
    return len(route_fresh(prompt, build_table(suite.index), ALL_LINES)["additional_context"])


SETX_LINES = ["env_bash_tool_env_var_caching", "env_cloudflare_workers_build_secret_vs_text", "project_hot_strip"]


def test_a_session_report_in_full(write_suite, prompts):
    """Every key of every step of the JSON report, and what each step sent: a prompt, its repeat
    (held, nothing sent), a compaction (the held lines sent again), a prompt that routes nothing,
    and a /clear."""
    suite = load_suite(write_suite(f"""
        sessions:
          - id: whole
            tags: [t1, t2]
            steps:
              - prompt: "{prompts.setx}"
              - prompt: "{prompts.setx}"
              - compact
              - prompt: "{prompts.neutral}"
                silent: false
              - clear
        """))
    [result] = run_suite(suite, ALL_LINES).sessions
    chars = _fresh_chars(prompts.setx, suite)
    assert result.verdict == "fail" and result.failed
    assert result.differences == ("step 4 (line 8): silent: false expected lines sent got nothing (nothing routed)",)
    assert result.to_dict() == {
        "id": "whole", "line": 2, "verdict": "fail",
        "differences": ["step 4 (line 8): silent: false expected lines sent got nothing (nothing routed)"],
        "steps": [
            {"step": 1, "kind": "prompt", "line": 5, "prompt": prompts.setx, "routed": ["layer1_project_memory_router"],
             "sent": SETX_LINES, "held": [], "chars": chars, "differences": []},
            {"step": 2, "kind": "prompt", "line": 6, "prompt": prompts.setx, "routed": ["layer1_project_memory_router"],
             "sent": [], "held": SETX_LINES, "chars": 0, "differences": []},
            # sent again after the compaction, under a header that says so
            {"step": 3, "kind": "compact", "line": 7, "sent": SETX_LINES,
             "chars": chars + len(" (again after compaction)"), "differences": []},
            {"step": 4, "kind": "prompt", "line": 8, "prompt": prompts.neutral, "routed": [], "sent": [], "held": [],
             "chars": 0, "differences": ["silent: false expected lines sent got nothing (nothing routed)"]},
            {"step": 5, "kind": "clear", "line": 10, "sent": [], "chars": 0, "differences": []},
        ],
        "tags": ["t1", "t2"], "xfail": None,
    }


def test_a_clear_sends_nothing_again_and_forgets_what_was_held(write_suite, prompts):
    """/clear right after a prompt that relied on held lines: nothing is sent at the clear (a
    compaction would send them again), and the next ask sends every line afresh. (A clear step
    takes no expectations of its own; its report says what it sent.)"""
    suite = load_suite(write_suite(f"""
        sessions:
          - id: s
            steps:
              - prompt: "{prompts.setx}"
              - prompt: "{prompts.setx}"
                silent: true
              - clear
              - prompt: "{prompts.setx}"
                new_lines: 3
        """))
    [result] = run_suite(suite, ALL_LINES).sessions
    assert result.verdict == "pass", result.differences
    assert [(step["kind"], step["sent"], step["chars"]) for step in result.steps[2:]] == [
        ("clear", [], 0), ("prompt", SETX_LINES, _fresh_chars(prompts.setx, suite))]


def test_a_compaction_with_nothing_held_sends_nothing(write_suite, prompts):
    suite = load_suite(write_suite(f"""
        sessions:
          - id: s
            steps:
              - prompt: "{prompts.setx}"
                new_lines: 9
              - compact: true
                silent: false
              - prompt: "{prompts.setx}"
                silent: true
        """))
    [result] = run_suite(suite, ALL_LINES).sessions
    # the first ask sent its lines itself, so nothing was pending; the compaction forgets them.
    # Every step's differences are listed, in step order.
    assert result.differences == ("step 1 (line 4): new_lines: expected 9 got 3",
                                  "step 2 (compact, line 6): silent: false expected lines sent got nothing "
                                  "(nothing routed)",
                                  f"step 3 (line 8): silent: expected nothing sent got 3 lines ({', '.join(SETX_LINES)}), "
                                  f"{_fresh_chars(prompts.setx, suite)} chars")
    assert result.steps[1] == {"step": 2, "kind": "compact", "line": 6, "sent": [], "chars": 0,
                               "differences": ["silent: false expected lines sent got nothing (nothing routed)"]}


def test_a_compaction_sends_again_only_what_fits_the_context_cap(write_suite, prompts):
    suite = load_suite(write_suite(f"""
        sessions:
          - id: s
            steps:
              - prompt: "{prompts.setx}"
              - prompt: "{prompts.setx}"
              - compact: true
                new_lines: 3
        """))
    chars = _fresh_chars(prompts.setx, suite) + len(" (again after compaction)")
    settings = dict(ALL_LINES, max_context_chars=chars - 1)
    [result] = run_suite(suite, settings).sessions
    # the last line does not fit: two are sent again (the cap is the one in the settings)
    assert result.steps[2]["sent"] == SETX_LINES[:2] and 0 < result.steps[2]["chars"] < chars - 1
    assert result.differences == ("step 3 (compact, line 6): new_lines: expected 3 got 2",)


@pytest.mark.parametrize("xfail, fails, verdict, differences", [
    ("known", True, "xfail", ["step 1 (line 5): new_lines: expected 9 got 3"]),
    ("known", False, "xpass",
     ["xpass: marked xfail (known) but every step held; remove 'xfail' if the residual is fixed"]),
    (None, False, "pass", []),
])
def test_session_verdicts_and_their_report(write_suite, prompts, xfail, fails, verdict, differences):
    mark = f'    xfail: "{xfail}"\n' if xfail else "    note: none\n"
    suite = load_suite(write_suite("sessions:\n  - id: s\n" + mark + "    steps:\n"
                                   f'      - prompt: "{prompts.setx}"\n'
                                   f"        new_lines: {9 if fails else 3}\n"))
    [result] = run_suite(suite, ALL_LINES).sessions
    assert result.verdict == verdict and result.failed is (verdict == "xpass")
    data = result.to_dict()
    assert (data["verdict"], data["differences"], data["xfail"]) == (verdict, differences, xfail)


SESSIONS = """
    cases:
      - id: plain
        prompt: "{neutral}"
        silent: true
    sessions:
      - id: ledger-then-setx
        steps:
          - prompt: "{ledger}"
            silent: false
      - id: setx-twice
        tags: [repeat]
        steps:
          - prompt: "{setx}"
            silent: false
      - id: clear-only
        steps:
          - prompt: "{neutral}"
            silent: true
"""


@pytest.mark.parametrize("pattern, cases, sessions", [
    (None, ["plain"], ["ledger-then-setx", "setx-twice", "clear-only"]),
    ("SETX", [], ["ledger-then-setx", "setx-twice"]),      # --case: a substring of the id, any case
    ("repeat", [], ["setx-twice"]),                        # ... or of a tag
    ("plain", ["plain"], []),
    ("nothing-matches", [], []),
])
def test_case_pattern_selects_sessions_too(write_suite, prompts, pattern, cases, sessions):
    suite = load_suite(write_suite(SESSIONS.format(neutral=prompts.neutral, ledger=prompts.ledger, setx=prompts.setx)))
    result = run_suite(suite, ALL_LINES, pattern=pattern)
    assert [r.case.id for r in result.results] == cases
    assert [r.case.id for r in result.sessions] == sessions
    assert result.counts()["total"] == len(cases) + len(sessions)
