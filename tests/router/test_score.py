import pytest

from router.clusterfile import Cluster, ClusterIndex, Member, parse_cluster_text
from router.config import default_settings
from router.hookio import hook_output
from router.score import (
    build_routing_table,
    choose_clusters,
    parse_header,
    render_context,
    route_prompt,
)


def make_index(spec):
    """spec: list of (cluster_id, tags, [(slug, hook), ...])."""
    clusters = []
    for position, (cid, tags, members) in enumerate(spec):
        ms = tuple(Member(slug, "env", hook, i) for i, (slug, hook) in enumerate(members))
        clusters.append(Cluster(cid, len(ms), False, tuple(tags), f"label {cid}", ms, position))
    return ClusterIndex(clusters)


ROUTER_SAGA = ("layer1_project_memory_router", ["behaviour", "caching", "hot", "hybrid", "lost"], [
    ("env_bash_tool_env_var_caching",
     "env vars set with setx never reach the Bash tool: even a full OS reboot didn't fix it; verify in a user-opened terminal"),
    ("env_cloudflare_workers_build_secret_vs_text",
     "a PUBLIC_ build-time variable set as a Secret is undefined in the Workers build: set its type to Text"),
    ("project_memory_router", "hook routes prompts to memory clusters; flat index costs 9k tokens per call"),
])
CODEX = ("layer1_codex_overflow", ["codex", "overflow", "quota"], [
    ("reference_codex_cli_flags", "codex exec --full-auto runs headless; use it when Claude quota runs out"),
])
GARDEN = ("layer1_garden", ["tomatoes", "garden"], [("user_garden", "grows tomatoes on the balcony")])


@pytest.fixture
def table():
    return build_routing_table(make_index([ROUTER_SAGA, CODEX, GARDEN]))


def settings(**overrides):
    s = default_settings()
    s.update(overrides)
    return s


@pytest.mark.parametrize("prompt", [
    "I set an env var with setx but the Bash tool still can't see it",
    "why doesn't my setx variable show up in bash?",
    "env var set via setx is missing in the Bash tool even after reboot",
    "Bash tool ignores environment variables I set with setx on Windows",
])
def test_setx_phrasings_route_by_member_text(table, prompt):
    decision = route_prompt(prompt, table, settings())
    assert decision["routed"] == ["layer1_project_memory_router"]
    assert "env_bash_tool_env_var_caching" in {line["slug"] for line in decision["lines"]}
    assert decision["scores"][0]["tag_hits"] == []  # the fix of spec §10: member text alone routes it


@pytest.mark.parametrize("prompt", ["refactor this loop", "what is the capital of Australia",
                                    "what's the weather tomorrow", ""])
def test_neutral_prompts_are_silent(table, prompt):
    decision = route_prompt(prompt, table, settings())
    assert decision["routed"] == []
    assert decision["additional_context"] is None


def test_single_tag_hit_fires_and_two_member_hits_do_not(table):
    # one tag word scores 3 = floor: fires (the spec's known residual)
    assert route_prompt("my tomatoes", table, settings())["routed"] == ["layer1_garden"]
    # two member-only words score 2 < floor: silent
    decision = route_prompt("balcony grows", table, settings())
    assert decision["top_score"] == 2 and decision["routed"] == []


def test_score_is_tag_weight_times_tag_hits_plus_member_hits(table):
    decision = route_prompt("codex headless full-auto", table, settings())
    top = decision["scores"][0]
    assert top["cluster_id"] == "layer1_codex_overflow"
    assert top["tag_hits"] == ["codex"]
    assert set(top["member_hits"]) == {"headless", "full", "auto"}
    assert top["score"] == 3 * 1 + 1 * 3
    weighted = route_prompt("codex headless full-auto", table, settings(tag_weight=5, member_weight=2))
    assert weighted["scores"][0]["score"] == 5 + 2 * 3


def test_member_tokens_exclude_tag_tokens():
    index = make_index([("c1", ["bash"], [("m_one", "bash bash setx")])])
    decision = route_prompt("bash setx", build_routing_table(index), settings())
    assert decision["scores"][0]["tag_hits"] == ["bash"]
    assert decision["scores"][0]["member_hits"] == ["setx"]
    assert decision["scores"][0]["score"] == 4


def _scored(*scores):
    return [(i, s, [], []) for i, s in enumerate(scores)]


@pytest.mark.parametrize(
    "scores, expected",
    [
        ((2,), []),                 # below the floor
        ((3,), [0]),                # exactly the floor
        ((8, 6), [0, 1]),           # 6 >= 0.75 * 8: clear second
        ((8, 5), [0]),              # 5 < 6: not clear
        ((8, 6, 6), [0]),           # second tied with third: not clear
        ((8, 6, 5), [0, 1]),        # strictly above the third
        ((4, 3), [0, 1]),           # 3 >= floor and >= 0.75 * 4
        ((4, 2), [0]),              # second below the floor
        ((12, 9), [0, 1]),          # boundary: 9 == 0.75 * 12
        ((12, 8), [0]),             # boundary: just under
    ],
)
def test_clear_second_boundary(scores, expected):
    assert choose_clusters(_scored(*scores), settings()) == expected


def test_ties_break_by_tag_hits_then_file_order():
    index = make_index([
        ("first", ["alpha"], [("m1", "beta gamma delta")]),
        ("second", ["zeta"], [("m2", "alpha beta gamma")]),
        ("third", ["alpha"], [("m3", "beta gamma delta")]),
    ])
    decision = route_prompt("alpha beta gamma", build_routing_table(index), settings(second_ratio=2.0))
    # first: tag alpha (3) + beta gamma (2) = 5; second: 3 member hits = 3; third = 5 like first
    assert [s["cluster_id"] for s in decision["scores"]] == ["first", "third", "second"]
    assert decision["routed"] == ["first"]
    again = route_prompt("alpha beta gamma", build_routing_table(index), settings(second_ratio=2.0))
    assert again == decision


def test_line_cap_keeps_the_lines_that_match_the_prompt():
    members = [(f"filler_{i:02d}", f"unrelated note number {i} about gardening") for i in range(15)]
    members.insert(13, ("env_setx_fact", "setx values never reach the bash tool"))
    index = make_index([("big", ["windows"], members)])
    decision = route_prompt("windows setx bash", build_routing_table(index), settings(line_cap=12))
    slugs = [line["slug"] for line in decision["lines"]]
    assert len(slugs) == 12
    assert "env_setx_fact" in slugs
    assert decision["total_member_lines"] == 16
    assert "showing 12 of 16 member lines" in decision["additional_context"].splitlines()[0]
    # file order is kept among the survivors
    assert slugs == sorted(slugs, key=[m[0] for m in members].index)


def test_context_text_format_and_header_round_trip(table):
    decision = route_prompt("setx bash tool env var", table, settings())
    text = decision["additional_context"]
    lines = text.splitlines()
    assert lines[0] == "Routed memory cluster: layer1_project_memory_router"
    assert lines[1].startswith("- env_bash_tool_env_var_caching \u2014 env vars set with setx")
    assert parse_header(text) == ["layer1_project_memory_router"]
    assert hook_output(text) == {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                                        "additionalContext": text}}


def test_two_clusters_named_in_plural_header():
    text, kept = render_context(["a", "b"], [(0, 0, "s1", "h1"), (1, 0, "s2", "h2")], 2, 9500)
    assert text.splitlines()[0] == "Routed memory clusters: a, b"
    assert parse_header(text) == ["a", "b"]
    assert kept == 2


@pytest.mark.parametrize("text", ["hello", "", "Routed memory", "routed memory cluster: x"])
def test_parse_header_rejects_other_text(text):
    assert parse_header(text) is None


def test_size_cap_drops_whole_lines_and_says_so():
    lines = [(0, i, f"slug_{i}", "x" * 900) for i in range(12)]
    text, kept = render_context(["big"], lines, 12, 9500)
    assert len(text) <= 9500
    assert kept < 12
    assert f"showing {kept} of 12 member lines; the rest exceeded the size cap" in text.splitlines()[0]
    assert all(line.startswith("- slug_") for line in text.splitlines()[1:])
    assert len(text.splitlines()) == kept + 1


def test_huge_prompt_is_scored_on_head_and_tail(table):
    prompt = "setx bash tool " + ("lorem ipsum " * 500_000) + " env var"
    decision = route_prompt(prompt, table, settings())
    assert decision["routed"] == ["layer1_project_memory_router"]
    assert {"setx", "bash", "var"} <= set(decision["prompt_tokens"])


def test_routing_table_is_marshal_safe(table):
    import marshal

    assert marshal.loads(marshal.dumps(table)) == table


def test_spec_prompts_on_the_bundled_store(example_cluster_file):
    from router.clusterfile import load_cluster_file

    table = build_routing_table(load_cluster_file(example_cluster_file))
    decision = route_prompt("my PUBLIC_ env var is undefined in the Cloudflare Workers build, "
                            "I set it as a Secret \u2014 why?", table, settings())
    assert "env_cloudflare_workers_build_secret_vs_text" in {line["slug"] for line in decision["lines"]}


def test_parse_cluster_text_feeds_the_scorer():
    text = ("## Layer 0 - Cluster Router\n- c1 \u00b7 1 \u00b7 tags: postgres\n"
            "## Layer 1 - Member Lines\n### c1\n- pg_fact - reference; vacuum runs nightly\n")
    table = build_routing_table(parse_cluster_text(text, "x.md"))
    assert route_prompt("postgres vacuum", table, settings())["routed"] == ["c1"]


def test_no_member_line_fitting_the_size_cap_means_no_injection_not_a_bare_header():
    index = make_index([("big", ["windows"], [("only_fact", "y" * 400)])])
    decision = route_prompt("windows", build_routing_table(index), settings(max_context_chars=200))
    assert decision["routed"] == ["big"] and decision["lines"] == []
    assert decision["additional_context"] is None
