import pytest

from router.store.clusterfile import Cluster, ClusterIndex, Member, parse_cluster_text
from router.config import default_settings
from router.agenttext import hook_output
from router.routing.score import (
    build_routing_table,
    choose_clusters,
    parse_header,
    prompt_for_scoring,
    render_context,
    route_prompt,
    select_lines,
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


@pytest.mark.parametrize("text, names", [
    ("Routed memory cluster: a (showing 1 of 2 member lines; capped)", ["a"]),
    ("Routed memory clusters: a, b (showing 3 of 9 member lines; the rest exceeded the size cap)\n- s \u2014 h",
     ["a", "b"]),
    # the names end at the first " (": a later parenthesis on the line is not part of them
    ("Routed memory cluster: a (showing 1 of 2 member lines; capped) (and a note)", ["a"]),
    ("  Routed memory clusters: a,  b ,\nRouted memory cluster: c", ["a", "b"]),
])
def test_parse_header_reads_the_names_before_the_note(text, names):
    assert parse_header(text) == names


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


@pytest.mark.parametrize("max_chars, capped", [(9500, 0), (300, None)])
def test_route_prompt_counts_the_lines_its_size_cap_cut(table, max_chars, capped):
    """``size_capped_lines``: lines the line cap let through that the size cap then cut (the session
    stage re-renders the header and needs the count)."""
    settings = dict(default_settings(), max_context_chars=max_chars)
    wide = route_prompt("setx bash tool env var cache windows powershell", table, dict(settings, max_context_chars=9500))
    decision = route_prompt("setx bash tool env var cache windows powershell", table, settings)
    assert decision["routed"] and wide["lines"]
    expected = len(wide["lines"]) - len(decision["lines"])
    assert decision["size_capped_lines"] == expected
    if capped is None:
        assert expected > 0
    else:
        assert expected == capped


def test_huge_prompt_is_scored_on_head_and_tail(table):
    filler = "lorem ipsum " * 50_000  # 1.2 MB in all: a pasted log
    prompt = "setx bash tool " + filler + " codex quota " + filler + " env var"
    decision = route_prompt(prompt, table, settings())
    assert decision["routed"] == ["layer1_project_memory_router"]
    assert {"setx", "bash", "var"} <= set(decision["prompt_tokens"])
    assert not {"codex", "quota"} & set(decision["prompt_tokens"])  # the middle is not scored


def test_routing_table_is_marshal_safe(table):
    import marshal

    assert marshal.loads(marshal.dumps(table)) == table


def test_spec_prompts_on_the_bundled_store(example_cluster_file):
    from router.store.clusterfile import load_cluster_file

    table = build_routing_table(load_cluster_file(example_cluster_file))
    decision = route_prompt("my PUBLIC_ env var is undefined in the Cloudflare Workers build, "
                            "I set it as a Secret \u2014 why?", table, settings())
    assert "env_cloudflare_workers_build_secret_vs_text" in {line["slug"] for line in decision["lines"]}


def test_parse_cluster_text_feeds_the_scorer():
    text = ("## Layer 0 - Cluster Router\n- c1 \u00b7 1 \u00b7 tags: postgres\n"
            "## Layer 1 - Member Lines\n### c1\n- pg_fact - reference; vacuum runs nightly\n")
    table = build_routing_table(parse_cluster_text(text, "x.md"))
    assert route_prompt("postgres vacuum", table, settings())["routed"] == ["c1"]


@pytest.mark.parametrize("prompt, max_chars, scored", [
    ("abcdefgh", 4, "ab\ngh"),              # longer than the cap: first and last halves
    ("abcdefghijkl", 6, "abc\njkl"),
    ("abcd", 4, "abcd"),                     # exactly the cap: scored whole, no split word
    ("abcdef", 0, "abcdef"),                 # 0 turns the cap off
])
def test_prompt_for_scoring_keeps_head_and_tail_halves(prompt, max_chars, scored):
    assert prompt_for_scoring(prompt, max_chars) == scored


@pytest.mark.parametrize("floor, scores, expected", [
    (0, (0,), []),        # a zero score never fires, even with the floor at 0
    (1, (1,), [0]),       # a score of 1 fires when the floor allows it
    (0, (1, 0), [0]),     # nor does a zero-score second join
])
def test_choose_clusters_with_a_low_floor(floor, scores, expected):
    assert choose_clusters(_scored(*scores), settings(score_floor=floor)) == expected


def test_equal_scores_rank_more_tag_hits_first():
    index = make_index([
        ("members_only", ["unrelated"], [("m1", "alpha beta gamma")]),  # 3 member hits = 3
        ("one_tag", ["alpha"], [("m2", "nothing here")]),              # 1 tag hit = 3
    ])
    decision = route_prompt("alpha beta gamma", build_routing_table(index), settings())
    assert [(s["cluster_id"], s["score"]) for s in decision["scores"]] == [("one_tag", 3), ("members_only", 3)]


def test_full_ties_rank_in_file_order_among_many_clusters():
    # positions 1 and 8: a set of them iterates 8 before 1, so only the sort puts file order back
    spec = [(f"c{i}", [f"tag{i}word"], [(f"m{i}", "filler")]) for i in range(10)]
    spec[1] = ("c1", ["alpha"], [("m1", "filler")])
    spec[8] = ("c8", ["alpha"], [("m8", "filler")])
    decision = route_prompt("alpha", build_routing_table(make_index(spec)), settings())
    assert [s["cluster_id"] for s in decision["scores"]] == ["c1", "c8"]


FILLERS = [(f"filler_{i:02d}", f"unrelated note number {i} on gardening") for i in range(13)]


@pytest.mark.parametrize("fact", [
    ("env_fact_one", "setx values never reach the bash tool"),   # matches by its hook only
    ("setx_bash_fact", "a gardening note"),                      # matches by its slug only
])
def test_line_cap_relevance_counts_slug_and_hook_words(fact):
    index = make_index([("big", ["windows"], FILLERS + [fact])])
    decision = route_prompt("windows setx bash", build_routing_table(index), settings(line_cap=12))
    assert [line["slug"] for line in decision["lines"]] == [m[0] for m in FILLERS[:11]] + [fact[0]]


def test_line_cap_ties_keep_file_order_not_slug_order():
    members = [(f"note_{99 - i}", "nothing relevant") for i in range(14)]
    index = make_index([("big", ["windows"], members)])
    decision = route_prompt("windows", build_routing_table(index), settings(line_cap=12))
    assert [line["slug"] for line in decision["lines"]] == [m[0] for m in members[:12]]


def test_line_cap_over_two_clusters_keeps_the_top_clusters_lines_first():
    # "late" is second in the file but ranks first; every line ties on relevance (none matches)
    index = make_index([
        ("early", ["beta"], [(f"early_{i}", "nothing relevant") for i in range(8)]),
        ("late", ["alpha", "gamma"], [(f"late_{i}", "nothing relevant") for i in range(8)]),
    ])
    table = build_routing_table(index)
    decision = route_prompt("alpha gamma beta", table, settings(second_ratio=0.5))
    assert decision["routed"] == ["late", "early"]
    assert [(line["cluster_id"], line["slug"]) for line in decision["lines"]] == (
        [("late", f"late_{i}") for i in range(8)] + [("early", f"early_{i}") for i in range(4)])
    assert decision["additional_context"].splitlines()[0] == (
        "Routed memory clusters: late, early (showing 12 of 16 member lines; capped)")
    kept, total = select_lines({"alpha", "gamma", "beta"}, table, [1, 0], 12)
    assert total == 16
    assert kept == ([(1, i, f"late_{i}", "nothing relevant") for i in range(8)]
                    + [(0, i, f"early_{i}", "nothing relevant") for i in range(4)])


SIZED_LINES = [(0, i, f"s{i:02d}", "x" * 900) for i in range(12)]  # each "- sNN \u2014 x..." is 908 chars


@pytest.mark.parametrize("max_chars, kept", [
    (10934, 12),   # everything fits exactly: no note
    (10933, 11),
    (9500, 10),
    (9179, 9),
    (8270, 9),     # 9 lines and their header are exactly 8270 characters
    (1907, 2),
    (997, 0),      # not even one line fits: the header alone
])
def test_size_cap_keeps_as_many_whole_lines_as_fit(max_chars, kept):
    text, got = render_context(["big"], SIZED_LINES, 12, max_chars)
    assert got == kept
    header = "Routed memory cluster: big"
    if kept < 12:
        header += f" (showing {kept} of 12 member lines; the rest exceeded the size cap)"
    assert text == "\n".join([header] + [f"- s{i:02d} \u2014 " + "x" * 900 for i in range(kept)])


def test_silent_decision_fields():
    decision = route_prompt("", build_routing_table(make_index([GARDEN])), settings())
    assert decision == {
        "prompt_tokens": [], "scores": [], "floor": 3, "top_score": 0, "second_score": 0,
        "margin_over_floor": -3, "lead_over_second": 0, "routed": [], "lines": [],
        "total_member_lines": 0, "size_capped_lines": 0, "additional_context": None,
    }


@pytest.mark.parametrize("prompt, top, second", [
    ("codex headless full-auto", 6, 1),   # two clusters scored: codex and "full" in the router saga
    ("my tomatoes", 3, 0),                # one cluster scored
])
def test_decision_reports_top_second_margin_and_lead(table, prompt, top, second):
    decision = route_prompt(prompt, table, settings())
    assert [s["score"] for s in decision["scores"]] == ([top, second] if second else [top])
    assert (decision["floor"], decision["top_score"], decision["second_score"]) == (3, top, second)
    assert decision["margin_over_floor"] == top - 3
    assert decision["lead_over_second"] == top - second


def test_decision_lines_name_cluster_slug_and_hook(table):
    decision = route_prompt("my tomatoes", table, settings())
    assert decision["lines"] == [{"cluster_id": "layer1_garden", "slug": "user_garden",
                                  "hook": "grows tomatoes on the balcony"}]
    assert decision["total_member_lines"] == 1


def test_no_member_line_fitting_the_size_cap_means_no_injection_not_a_bare_header():
    index = make_index([("big", ["windows"], [("only_fact", "y" * 400)])])
    decision = route_prompt("windows", build_routing_table(index), settings(max_context_chars=200))
    assert decision["routed"] == ["big"] and decision["lines"] == []
    assert decision["additional_context"] is None
