"""Line selection (router/routing/injection.py): ranking a decision's member lines by evidence, the
plan of what to send given the lines a session holds, and the rendered header."""

import pytest

from router.routing import injection
from router.config import default_settings
from router.providers.provider import build_table
from router.routing.score import parse_header, route_prompt
from support.routing_decision import DECISION, line

SETX = "I set an env var with setx but the Bash tool still can't see it, why?"


# --------------------------------------------------------------------------- pure: ranking and plans


def test_rank_lines_puts_the_line_the_prompt_names_first():
    ranked = injection.rank_lines({"setx", "bash", "tool", "variable"}, DECISION["lines"])
    assert [row[2]["slug"] for row in ranked][:2] == ["setx_cache", "bash_path"]
    # ties (no evidence) keep the decision's order
    assert [row[2]["slug"] for row in ranked][2:] == ["alpha_notes", "deploy_steps", "misc"]


def test_rank_lines_weighs_a_word_every_line_shares_less():
    lines = [line("a", "bash one"), line("b", "bash two"), line("c", "bash three zeta")]
    ranked = injection.rank_lines({"bash", "zeta"}, lines)
    assert ranked[0][2]["slug"] == "c"
    assert ranked[0][0] == pytest.approx(1 / 3 + 1)


@pytest.mark.parametrize("limit,expected", [
    (0, ["alpha_notes", "setx_cache", "bash_path", "deploy_steps", "misc"]),
    (2, ["setx_cache", "bash_path"]),
    (1, ["setx_cache"]),
])
def test_plan_keeps_the_best_lines_in_the_decisions_order(limit, expected):
    settings = dict(default_settings(), lines_per_injection=limit, line_evidence_share=0)
    plan = injection.plan_injection(DECISION, "setx variable not seen by the bash tool", settings)
    assert [l["slug"] for l in plan["lines"]] == expected
    assert plan["left_out"] == 5 - len(expected)
    header = plan["text"].splitlines()[0]
    assert parse_header(plan["text"]) == ["c1"]
    if limit:
        assert f"({5 - len(expected)} more not shown)" in header
    else:
        assert "not shown" not in header


@pytest.mark.parametrize("share,expected", [
    (0, ["alpha_notes", "setx_cache", "bash_path", "deploy_steps", "misc"]),
    (0.3, ["setx_cache", "bash_path"]),
    (0.5, ["setx_cache"]),
])
def test_plan_sends_only_lines_near_the_best_ones_evidence(share, expected):
    settings = dict(default_settings(), lines_per_injection=0, line_evidence_share=share)
    # setx_cache holds setx, variable, bash, tool (evidence 1/1 + 1/1 + 1/2 + 1/2 = 3);
    # bash_path holds bash, tool (1/2 + 1/2 = 1): a third of the best
    plan = injection.plan_injection(DECISION, "setx variable not seen by the bash tool", settings)
    assert [l["slug"] for l in plan["lines"]] == expected


def test_a_prompt_with_no_member_word_keeps_the_first_lines():
    settings = dict(default_settings(), lines_per_injection=2, line_evidence_share=0.5)
    plan = injection.plan_injection(DECISION, "zzz qqq", settings)
    assert [l["slug"] for l in plan["lines"]] == ["alpha_notes", "setx_cache"]


def test_plan_sends_only_lines_the_session_does_not_hold():
    settings = dict(default_settings(), lines_per_injection=2, line_evidence_share=0)
    held = frozenset({injection.line_key("setx_cache", DECISION["lines"][1]["hook"])})
    plan = injection.plan_injection(DECISION, "setx variable not seen by the bash tool", settings, held)
    assert [l["slug"] for l in plan["lines"]] == ["bash_path"]
    assert [l["slug"] for l in plan["held"]] == ["setx_cache"]
    assert plan["text"].splitlines()[0] == "Routed memory cluster: c1 (3 more not shown; 1 sent earlier)"


def test_plan_sends_nothing_when_every_chosen_line_is_held():
    settings = dict(default_settings(), lines_per_injection=2, line_evidence_share=0)
    held = frozenset(injection.line_key(l["slug"], l["hook"]) for l in DECISION["lines"][1:3])
    plan = injection.plan_injection(DECISION, "setx variable not seen by the bash tool", settings, held)
    assert plan["text"] is None and plan["lines"] == []
    assert len(plan["held"]) == 2


def test_an_edited_line_is_a_new_line():
    settings = default_settings()
    held = frozenset({injection.line_key("setx_cache", "an older wording of the fact")})
    plan = injection.plan_injection(DECISION, "setx", settings, held)
    assert "setx_cache" in [l["slug"] for l in plan["lines"]]


def test_render_drops_lines_to_fit_and_says_so():
    lines = [line(f"s{i}", "x" * 200) for i in range(10)]
    text, kept = injection.render_injection(["c1"], lines, 0, 10, 1000)
    assert len(text) <= 1000 and 0 < len(kept) < 10
    assert text.splitlines()[0].endswith(f"({10 - len(kept)} more not shown, size cap)")


def test_the_stage_never_changes_which_clusters_are_routed(example_cluster_file):
    from router.store.clusterfile import load_cluster_file

    table = build_table(load_cluster_file(str(example_cluster_file)))
    settings = dict(default_settings(), lines_per_injection=2)
    decision = route_prompt(SETX, table, settings)
    plan = injection.plan_injection(decision, SETX, settings)
    assert plan["clusters"] == decision["routed"] and parse_header(plan["text"]) == decision["routed"]


def test_a_decision_cut_by_its_own_size_cap_keeps_the_reason_in_the_header():
    decision = dict(DECISION, total_member_lines=8, size_capped_lines=3)
    settings = dict(default_settings(), lines_per_injection=2, line_evidence_share=0)
    plan = injection.plan_injection(decision, "setx variable not seen by the bash tool", settings)
    assert plan["text"].splitlines()[0] == "Routed memory cluster: c1 (6 more not shown, size cap)"
    plan = injection.plan_injection(dict(decision, size_capped_lines=0), "setx variable not seen by the bash tool",
                                    settings)
    assert plan["text"].splitlines()[0] == "Routed memory cluster: c1 (6 more not shown)"


def test_a_decisions_utterance_hits_count_as_words_of_their_line():
    # A prompt in other words than every hook: without the provider's utterance hits all lines tie
    # and the share cut keeps the first; with them the member the prompt was about is sent.
    settings = dict(default_settings(), lines_per_injection=1, line_evidence_share=0.5)
    prompt = "my antivirus makes installs crawl"
    plain = injection.plan_injection(DECISION, prompt, settings)
    assert [l["slug"] for l in plain["lines"]] == ["alpha_notes"]
    reached = dict(DECISION, utterance_hits={"deploy_steps": ["antivirus", "crawl"]})
    plan = injection.plan_injection(reached, prompt, settings)
    assert [l["slug"] for l in plan["lines"]] == ["deploy_steps"]
    assert "antivirus" not in plan["text"]
