"""The weighted provider, one behaviour per test, each on a store built to show it (and its
failure when the behaviour is switched off)."""

import pytest

from router.store.clusterfile import parse_cluster_text
from router.config import default_settings
from router.providers.provider import build_table, route
from router.routing.wordmatch import prior_factor, within_one_edit

STORE = """\
## Layer 0 - Cluster Router

- c_windows · 5 · tags: windows, path, bash, powershell · label: the Windows dev box
- c_router · 3 · tags: router, hook, caching · label: the memory router
- c_git · 2 · tags: git, rebase · label: git workflow
- c_certs · 2 · tags: certificates, zscaler · label: TLS interception
- c_net · 2 · tags: network, vpn · label: home network

## Layer 1 - Member Lines

### c_windows
- env_windows_path_length - env; windows path limit of 260 characters breaks clones; enable long paths
- env_bash_path_conversion - env; git bash rewrites path arguments; prefix with MSYS_NO_PATHCONV=1
- env_powershell_default - env; windows runners default to powershell; set bash as the shell
- env_windows_defender - env; defender scanning slows bash installs on windows
- env_path_refresh - env; a new program is missing from PATH in an open bash window on windows

### c_router
- project_router_hook - project; the hook routes each prompt to one cluster
- env_setx_bash_tool - env; variables set with setx never reach the bash tool, even after a reboot
- project_router_caching - project; the routing table is cached on disk

### c_git
- feedback_rebase_main - feedback; update branches with git rebase main, never merge main
- env_worktree_per_session - env; each session gets its own worktree

### c_certs
- env_node_extra_ca_certs - env; zscaler re-signs TLS; export NODE_EXTRA_CA_CERTS for npm certificate errors
- env_conventional_names - env; certificate files follow the conventional naming of the client

### c_net
- env_dns_split - env; the DNS name of the server does not resolve on the client VPN
- env_vpn_split_tunnel - env; the VPN client sends all traffic through the tunnel
"""


@pytest.fixture(scope="module")
def table():
    return build_table(parse_cluster_text(STORE, "store.md"))


def weighted(**overrides):
    settings = dict(default_settings(), provider="weighted", weighted_floor=4.0)
    settings.update(overrides)
    return settings


def routed(prompt, table, **overrides):
    return route(prompt, table, weighted(**overrides))["routed"]


def test_a_rare_decisive_word_is_not_outvoted_by_common_ones(table):
    prompt = "setx on windows: the new PATH never shows up in the bash tool"
    # second_ratio 0.99: only the rare-word rule can bring a second cluster here
    assert "c_router" in routed(prompt, table, second_ratio=0.99)
    assert "c_router" not in routed(prompt, table, second_ratio=0.99, rare_word_rule=False)
    spec = route(prompt, table, dict(default_settings(), provider="spec"))
    assert spec["routed"] == ["c_windows"]  # the reference scorer, outvoted by windows/path/bash


@pytest.mark.parametrize("prompt, cluster", [
    ("should I be rebasing my branches?", "c_git"),
    ("the routing tables are caching stale results", "c_router"),
])
def test_inflections_route(table, prompt, cluster):
    assert routed(prompt, table)[:1] == [cluster]


def test_a_misspelt_word_counts_when_its_line_backs_it(table):
    assert routed("certficate errors from npm behind zscalr", table)[:1] == ["c_certs"]


def test_a_spelling_repair_alone_does_not_route(table):
    from router.routing.wordmatch import _match

    # "convert" is one edit from the stem of "conventional"; nothing else in the prompt backs it.
    assert _match({"convert"}, table)  # the repair is found ...
    assert route("please convert it", table, weighted(weighted_floor=0.5))["routed"] == []  # ... and not used


@pytest.mark.parametrize("prompt, silent", [
    ("explain how DNS resolution works on a VPN", True),
    ("what is a VPN split tunnel?", True),
    ("explain why our DNS name does not resolve on the VPN", False),   # ownership word
    ("I can't resolve the server's DNS name on the VPN", False),          # not a general form
    ("explain why the DNS name of the server does not resolve on the client VPN", False),  # focus
])
def test_intent_gate(table, prompt, silent):
    decision = route(prompt, table, weighted(weighted_floor=2.0, intent_gate_focus=4))
    assert (decision["routed"] == []) is silent, decision["explanation"]
    if silent:
        assert "intent gate" in decision["explanation"]
        assert routed(prompt, table, weighted_floor=2.0, intent_gate=False)  # the gate did it


def test_stemming_does_not_bring_a_stopword_back(table):
    from router.routing.weightedscore import stem_set

    assert stem_set({"needed", "getting", "reboot"}) == {"reboot"}  # need, get: stopwords
    assert stem_set({"somethings"}) == set()  # the stem of the stopword "something"


def test_floor_and_confidence(table):
    prompt = "the hook routes each prompt to one cluster"
    decision = route(prompt, table, weighted())
    assert decision["routed"] == ["c_router"]
    top = decision["top_score"]
    assert decision["confidence"] == pytest.approx(top / (top + 4.0), abs=1e-3)
    assert route(prompt, table, weighted(weighted_floor=top + 0.01))["routed"] == []
    at_floor = route(prompt, table, weighted(weighted_floor=top))
    assert at_floor["routed"] == ["c_router"] and at_floor["confidence"] == pytest.approx(0.5, abs=1e-3)


def test_lines_holding_the_prompt_survive_the_cap(table):
    decision = route("defender scanning slows bash installs on windows", table, weighted(line_cap=2))
    assert decision["routed"][0] == "c_windows"
    assert "env_windows_defender" in [line["slug"] for line in decision["lines"]]
    assert decision["total_member_lines"] == 5 and len(decision["lines"]) == 2


def test_explanation_names_the_weights(table):
    decision = route("setx bash tool reboot", table, weighted())
    assert decision["explanation"].startswith("weighted score")
    assert "setx" in decision["explanation"]


def test_learned_terms_join_a_member(table):
    index = parse_cluster_text(STORE, "store.md")
    learned = build_table(index, learned_terms={"env_vpn_split_tunnel": ["wireguard"]})
    assert routed("wireguard drops every packet through the tunnel", learned) == ["c_net"]
    assert routed("wireguard drops every packet", table) == []


def test_word_priors_discount_common_words():
    index = parse_cluster_text(STORE, "store.md")
    frequencies = {"windows": 5.0, "path": 5.0, "bash": 4.0}
    table = build_table(index, word_frequency=lambda word: frequencies.get(word, 1.0))
    plain = route("windows path bash", table, weighted())
    with_priors = route("windows path bash", table, weighted(word_priors=True))
    assert with_priors["top_score"] < plain["top_score"]


@pytest.mark.parametrize("zipf, factor", [(1.0, 1.0), (3.5, 1.0), (4.5, 0.5), (6.5, 0.25)])
def test_prior_factor(zipf, factor):
    assert prior_factor(zipf, 3.5) == factor


@pytest.mark.parametrize("a, b, close", [
    ("zscaler", "zscalr", True), ("certificate", "certficate", True), ("runner", "rnuner", True),
    ("convert", "convent", True), ("abc", "abc", True), ("runner", "ruler", False), ("image", "imagery", False),
])
def test_within_one_edit(a, b, close):
    assert within_one_edit(a, b) is close and within_one_edit(b, a) is close


def test_routing_does_not_depend_on_the_hash_seed():
    # The order of a set of strings changes with PYTHONHASHSEED; ties (two words of equal weight
    # for the rare-word rule) and float sums must not follow it.
    import subprocess
    import sys

    code = ("import hashlib, json; from canaries.suite import bundled_suites, load_suite; "
            "from router.config import default_settings; from router.providers.provider import build_table, route; "
            "out = []\n"
            "for path in bundled_suites():\n"
            "    suite = load_suite(path); table = build_table(suite.index)\n"
            "    for case in suite.cases:\n"
            "        d = route(case.prompt, table, dict(default_settings(), provider='weighted'))\n"
            "        out.append((d['routed'], d['additional_context'], d['explanation']))\n"
            "print(hashlib.sha256(json.dumps(out).encode()).hexdigest())")
    digests = set()
    for seed in ("1", "2", "3", "4", "5", "6"):
        import os

        env = dict(os.environ, PYTHONHASHSEED=seed)
        digests.add(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                   check=True).stdout)
    assert len(digests) == 1


def test_the_shipped_stop_stems_are_what_the_rule_gives():
    """router/data/stopstems.txt is read instead of stemming every stopword in every hook."""
    from router.routing.weightedscore import STOP_STEMS, _load_stop_stems, stop_stems_of
    from router.tokens import STOPWORDS

    assert _load_stop_stems() == stop_stems_of(STOPWORDS)
    assert STOP_STEMS == STOPWORDS | stop_stems_of(STOPWORDS)


# --------------------------------------------------------------------------- route_weighted on a hand-made table (issue 38)

from router.routing.weighted import make_provider, route_weighted  # noqa: E402
from router.routing.weightedscore import TAGS  # noqa: E402

HAND_CLUSTERS = [
    ("c_a", ("alpha",), "", (("a_one", "env", "hook one"), ("a_two", "env", "hook two"))),
    ("c_b", (), "", (("b_one", "env", "hook b"),)),
]


def hand_table(**extra):
    """Stems chosen so the sums are exact: alpha (tag of c_a), setx and vpn (line a_one), kilo and
    zulu (line b_one, kilo only there: the rare word), bravo (line a_two)."""
    term = {"alpha": (2.0, 0, TAGS), "setx": (3.0, 0, 0), "vpn": (1.0, 0, 0), "kilo": (4.0, 1, 0),
            "zulu": (0.5, 1, 0), "bravo": (1.0, 0, 1), "zscaler": (2.0, 0, 0)}
    fuzzy = {}
    for word in term:
        for variant in {word[:i] + word[i + 1:] for i in range(len(word))} | {word}:
            fuzzy.setdefault(variant, []).append(word)
    table = {"clusters": HAND_CLUSTERS, "term_postings": term, "fuzzy_postings": fuzzy}
    table.update(extra)
    return table


def hand(**overrides):
    fixed = dict(weighted_floor=2.0, weighted_tag_boost=1.0, weighted_spread=0.5, second_ratio=0.9,
                 rare_word_rule=True, intent_gate=True, intent_gate_focus=2, word_priors=False)
    return weighted(**dict(fixed, **overrides))


def test_a_weighted_decision_in_full():
    decision = route_weighted("alpha setx vpn", hand_table(), hand())
    assert decision == {
        "prompt_tokens": ["alpha", "setx", "vpn"],
        "scores": [{"cluster_id": "c_a", "score": 6.0, "tag_hits": ["alpha"], "member_hits": ["setx", "vpn"]}],
        "floor": 2.0, "top_score": 6.0, "second_score": 0, "margin_over_floor": 4.0, "lead_over_second": 6.0,
        "confidence": 0.75,
        "routed": ["c_a"], "clusters": ["c_a"],
        "lines": [{"cluster_id": "c_a", "slug": "a_one", "hook": "hook one"},
                  {"cluster_id": "c_a", "slug": "a_two", "hook": "hook two"}],
        "total_member_lines": 2, "size_capped_lines": 0,
        "additional_context": "Routed memory cluster: c_a\n- a_one \u2014 hook one\n- a_two \u2014 hook two",
        "explanation": "weighted score 6.00 (floor 2.0) for c_a on setx 3.0, alpha 2.0, vpn 1.0",
    }


def test_the_rare_word_brings_its_cluster_and_the_explanation_says_so():
    decision = route_weighted("alpha setx vpn kilo zulu", hand_table(), hand())
    assert decision["routed"] == ["c_a", "c_b"]
    assert [row["score"] for row in decision["scores"]] == [6.0, 4.5] and decision["second_score"] == 4.5
    assert decision["explanation"] == ("weighted score 6.00 (floor 2.0) for c_a on setx 3.0, alpha 2.0, vpn 1.0; "
                                       "'kilo' (one member line, weight 4.0) brings c_b")
    plain = route_weighted("alpha setx vpn kilo zulu", hand_table(), hand(rare_word_rule=False))
    assert plain["routed"] == ["c_a"]
    assert plain["explanation"] == "weighted score 6.00 (floor 2.0) for c_a on setx 3.0, alpha 2.0, vpn 1.0"


def test_the_explanation_names_six_words_heaviest_first_and_a_repair_by_what_was_typed():
    table = hand_table()
    table["term_postings"].update({w: (1.0, 0, 0) for w in ("oscar", "tango", "delta")})
    decision = route_weighted("alpha setx vpn oscar tango delta bravo zscalr", table, hand())
    # line a_one: setx 3 + vpn, oscar, tango, delta 1 each + zscaler (backed by setx) 2 x 0.7; a_two: bravo
    # 1, at the spread 0.5; the tag alpha 2: 8.4 + 0.5 + 2
    assert decision["explanation"] == ("weighted score 10.90 (floor 2.0) for c_a on setx 3.0, alpha 2.0, "
                                       "zscaler~zscalr 1.4, bravo 1.0, delta 1.0, oscar 1.0")


def test_under_the_floor_and_nothing_found():
    under = route_weighted("vpn", hand_table(), hand())
    assert under["routed"] == [] and under["additional_context"] is None and under["lines"] == []
    assert under["explanation"] == "weighted score 1.00 (floor 2.0) for c_a on vpn 1.0: under the floor"
    assert (under["top_score"], under["second_score"], under["confidence"]) == (1.0, 0, pytest.approx(1 / 3, abs=1e-4))
    nothing = route_weighted("nothing here", hand_table(), hand())
    assert nothing["scores"] == [] and nothing["top_score"] == 0 and nothing["routed"] == []
    assert nothing["explanation"] == "no prompt word (or a one-edit variant of it) is in the store"


@pytest.mark.parametrize("prompt, overrides, gated", [
    ("explain alpha vpn", {}, True),                          # focus 1 (vpn) < 2
    ("explain alpha vpn", {"intent_gate": False}, False),
    ("explain alpha vpn", {"intent_gate_focus": 1}, False),    # focus 1 is enough
    ("explain setx vpn", {}, False),                          # focus 2: one line holds both
    ("our alpha vpn, explain", {}, False),                    # ownership word
])
def test_the_intent_gate(prompt, overrides, gated):
    decision = route_weighted(prompt, hand_table(), hand(**overrides))
    assert (decision["routed"] == []) is gated
    if gated:
        assert decision["explanation"].endswith(
            "; silenced by the intent gate: a general 'explain' request with no ownership word")
        assert decision["top_score"] > 2.0 and decision["lines"] == []


def test_a_long_prompt_is_scored_on_its_head_and_tail():
    middle = "setx " + "x" * 300
    prompt = "alpha " + "y" * 200 + " " + middle + " " + "z" * 200 + " vpn"
    decision = route_weighted(prompt, hand_table(), hand(max_prompt_chars=400))
    assert "setx" not in decision["prompt_tokens"] and {"alpha", "vpn"} <= set(decision["prompt_tokens"])


def test_lines_at_the_cap_keep_the_heaviest_and_learned_words_are_shown():
    table = hand_table(learned_line_postings={"bravo": (0, 1), "other": (0, 0)})
    decision = route_weighted("alpha bravo", table, hand(line_cap=1))
    assert decision["lines"] == [{"cluster_id": "c_a", "slug": "a_two", "hook": "hook two",
                                  "learned_hits": ["bravo"]}]
    assert decision["total_member_lines"] == 2


def test_utterances_in_the_table_hand_the_prompt_to_utterance_routing():
    from router.routing import utterscore

    calls = []
    table = hand_table(utterance_meta={"members": 3})
    original = utterscore.route_with_utterances
    try:
        utterscore.route_with_utterances = lambda *args: calls.append(args) or {"from": "utterances"}
        assert route_weighted("alpha setx", table, hand()) == {"from": "utterances"}
        assert calls == [("alpha setx", table, hand())]
        assert route_weighted("alpha setx", table, hand(utterances=False))["routed"] == ["c_a"]
        assert route_weighted("alpha setx", hand_table(utterance_meta={"members": 0}), hand())["routed"] == ["c_a"]
        settings = hand()
        del settings["utterances"]
        assert route_weighted("alpha setx", table, settings) == {"from": "utterances"}   # on by default
    finally:
        utterscore.route_with_utterances = original


def test_the_provider_routes_the_request():
    provider = make_provider(hand())
    assert provider({"prompt": "alpha setx vpn", "table": hand_table(), "settings": hand()}) == \
        route_weighted("alpha setx vpn", hand_table(), hand())
