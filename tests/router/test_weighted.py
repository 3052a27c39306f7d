"""The weighted provider, one behaviour per test, each on a store built to show it (and its
failure when the behaviour is switched off)."""

import pytest

from router.store.clusterfile import parse_cluster_text
from router.config import default_settings
from router.providers.provider import build_table, route
from router.routing.weightedscore import prior_factor, within_one_edit

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
    from router.routing.weightedscore import _match

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
