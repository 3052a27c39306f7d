"""router/routing/veto.py and router/routing/exemplars.py: the nearest-exemplar veto, each rule
shown against the same prompt with the rule off."""

import pytest

from router.config import default_settings
from router.providers.provider import route
from router.routing.exemplars import add_exemplar_postings
from router.routing.score import build_routing_table
from router.routing.veto import (
    describe_code,
    exemplar_terms,
    generic_code,
    judge,
    member_code,
    near_miss_code,
    similarities,
)
from router.routing.weightedtable import extend_table
from router.store.clusterfile import parse_cluster_text

STORE = """\
## Layer 0 - Cluster Router

- c_deploy · 2 · tags: deploy, rollout · label: deploying the web app
- c_db · 2 · tags: postgres, database · label: the database server

## Layer 1 - Member Lines

### c_deploy
- env_deploy_needs_vpn - env; the deploy script hangs at ssh unless the office VPN is up
- feedback_deploy_fridays - feedback; never deploy on Fridays after 15:00; the on-call is thin

### c_db
- env_pg_dump_custom_format - env; nightly pg_dump -Fc to /srv/backups at 04:00; restore with pg_restore -j 4
- feedback_psql_begin_first - feedback; start every manual psql session on prod with BEGIN and an explicit COMMIT
"""

UTTERANCES = {
    "env_deploy_needs_vpn": ("the deploy script just hangs forever", "deploy stuck connecting to the server"),
    "feedback_deploy_fridays": ("can i ship this release friday evening",),
    "env_pg_dump_custom_format": ("how do we take nightly snapshots of the data",),
    "feedback_psql_begin_first": ("oops i updated too many rows on prod can i undo",),
}
NEAR_MISSES = {"c_deploy": ("add a --dry-run flag to the deploy script that prints each step",)}
GENERICS = ("write a python function that reverses a string",)


def index():
    return parse_cluster_text(STORE, "<store>")


def table(near_misses=NEAR_MISSES, generics=GENERICS, utterances=UTTERANCES):
    ix = index()
    return extend_table(build_routing_table(ix), ix, utterances=utterances, near_misses=near_misses,
                        generics=generics)


def settings(**overrides):
    out = dict(default_settings(), provider="weighted", weighted_floor=2.0, utterance_floor=2.0,
               utterance_coverage=0.0, veto_strong=0.0, veto_protect=0.0, veto_floor=0.0)
    out.update(overrides)
    return out


@pytest.mark.parametrize("code, described", [
    (member_code(3, 7, 2), ("member", 3, 7, 2)),
    (member_code(0, 0, 0), ("member", 0, 0, 0)),
    (near_miss_code(5, 11), ("near_miss", 5, 11)),
    (near_miss_code(0, 0), ("near_miss", 0, 0)),
    (generic_code(199), ("generic", 199)),
])
def test_a_code_says_whose_exemplar_it_is(code, described):
    assert describe_code(code) == described


def test_exemplar_terms_are_stems_and_adjacent_pairs():
    from router.stem import stem

    terms = exemplar_terms("The deploy scripts hang at SSH")
    deploy = stem("deploy")
    assert {deploy, "script", "hang", "ssh"} <= terms
    assert f"{deploy} script" in terms and "script hang" in terms
    assert "the" not in terms and not any(term.startswith("the ") for term in terms)


@pytest.mark.parametrize("measure", ["cosine", "balanced", "coverage"])
def test_an_identical_text_is_the_nearest_at_similarity_one(measure):
    t = table()
    scores = similarities(exemplar_terms(NEAR_MISSES["c_deploy"][0]), t["exemplar_postings"], measure)
    best = max(scores, key=scores.get)
    assert describe_code(best) == ("near_miss", 0, 0) and scores[best] == pytest.approx(1.0, abs=1e-3)


def test_balanced_and_coverage_do_not_let_a_short_exemplar_win_on_one_shared_word():
    t = table(generics=("keep going",), near_misses={})
    terms = exemplar_terms("how long do we keep the nightly backups before pruning them")
    cosine = similarities(terms, t["exemplar_postings"], "cosine")
    balanced = similarities(terms, t["exemplar_postings"], "balanced")
    generic = generic_code(0)
    assert balanced[generic] < cosine[generic]


def test_a_near_miss_prompt_is_vetoed_and_a_member_prompt_is_not():
    t = table()
    near = "add a --dry-run flag to the deploy script that prints each step before running it"
    own = "the deploy script hangs at ssh again"
    assert judge(near, t, [0], settings())["vetoed"]
    assert not judge(own, t, [0], settings())["vetoed"]


def test_the_veto_silences_a_routed_near_miss_and_says_so():
    t = table()
    near = "add a --dry-run flag to the deploy script that prints each step before running it"
    on = route(near, t, settings())
    off = route(near, t, settings(veto=False))
    assert off["routed"] == ["c_deploy"] and on["routed"] == []
    assert on["veto"]["vetoed"] and "vetoed" in on["explanation"]
    assert describe_code(on["veto"]["nearest_negative"][0])[0] == "near_miss"


def test_without_negatives_nothing_is_vetoed():
    t = table(near_misses={}, generics=())
    near = "add a --dry-run flag to the deploy script that prints each step before running it"
    assert route(near, t, settings())["routed"] == ["c_deploy"]


def test_a_strong_member_or_a_covered_prompt_is_never_vetoed():
    t = table()
    near = "add a --dry-run flag to the deploy script that prints each step before running it"
    assert route(near, t, settings(veto_strong=0.1))["routed"] == ["c_deploy"]
    assert route(near, t, settings(veto_protect=0.01))["routed"] == ["c_deploy"]


def test_the_floor_drops_a_decision_no_member_exemplar_is_near():
    t = table(near_misses={}, generics=())
    prompt = "deploy hangs forever at ssh on the office wifi with the new router"
    assert route(prompt, t, settings())["routed"] == ["c_deploy"]
    best = route(prompt, t, settings())["veto"]["best_member"][1]
    assert best < 0.9
    assert route(prompt, t, settings(veto_floor=0.9))["routed"] == []


def test_the_margin_moves_the_line_both_ways():
    t = table()
    near = "add a --dry-run flag to the deploy script that prints each step before running it"
    assert route(near, t, settings(veto_margin=0.99))["routed"] == ["c_deploy"]
    grazing = "add a flag to the deploy script"
    assert route(grazing, t, settings(veto_margin=0.99))["routed"] == ["c_deploy"]
    assert route(grazing, t, settings(veto_margin=-0.99))["routed"] == []


def test_exemplars_come_only_with_utterances_and_say_what_they_hold():
    ix = index()
    plain = extend_table(build_routing_table(ix), ix, utterances=None, near_misses=NEAR_MISSES, generics=GENERICS)
    assert "exemplar_postings" not in plain
    meta = table()["exemplar_meta"]
    assert meta == {"exemplars": 4 + 5 + 1 + 1, "near_misses": 1, "generics": 1, "clusters_with_near_misses": 1}


def test_a_common_term_is_not_indexed(monkeypatch):
    import router.routing.exemplars as exemplars

    monkeypatch.setattr(exemplars, "MAX_DF", 2)
    ix = index()
    t = add_exemplar_postings({}, ix, UTTERANCES, NEAR_MISSES, GENERICS)
    assert "deploy" not in t["exemplar_postings"] and "vpn" in t["exemplar_postings"]


def test_a_veto_fired_by_the_floor_is_explained_by_the_floor():
    """Issue 35 item 9: not "nearer the near-misses (0.00) than ... (0.74)" when no negative voted."""
    t = table(near_misses={}, generics=())
    prompt = "deploy hangs forever at ssh on the office wifi with the new router"
    decision = route(prompt, t, settings(veto_floor=0.9))
    assert decision["routed"] == [] and decision["veto"]["rule"] == "floor"
    assert "vetoed by veto_floor" in decision["explanation"] and "0.90" in decision["explanation"]
    assert "nearer the near-misses" not in decision["explanation"]
    near = "add a --dry-run flag to the deploy script that prints each step before running it"
    outvoted = route(near, table(), settings())
    assert outvoted["veto"]["rule"] == "margin" and "nearer the near-misses" in outvoted["explanation"]
    assert route(prompt, t, settings())["veto"]["rule"] is None


@pytest.mark.parametrize("number", [4094, 4095, 4096, 5000, 123_456])
def test_a_near_miss_code_names_its_row_past_4095(number):
    assert describe_code(near_miss_code(3, number)) == ("near_miss", 3, number)
    assert near_miss_code(3, number) != near_miss_code(3, number - 1)


def test_the_veto_names_the_right_near_miss_in_a_cluster_of_thousands():
    rows = tuple(f"rotate the audit token number{n} for the staging mirror" for n in range(4200))
    t = table(near_misses={"c_deploy": rows + NEAR_MISSES["c_deploy"]})
    near = NEAR_MISSES["c_deploy"][0]
    veto = route(near, t, settings())["veto"]
    assert describe_code(veto["nearest_negative"][0]) == ("near_miss", 0, 4200)


# --------------------------------------------------------------------------- each part on hand-made postings (issue 38)

A_MEMBER = member_code(0, 0, 0)            # position 0: the routed cluster
B_MEMBER = member_code(1, 0, 0)            # position 1: not routed
NEAR = near_miss_code(0, 0)
GENERIC = generic_code(0)


@pytest.mark.parametrize("code, described", [
    (member_code(2, 4095, 4095), ("member", 2, 4095, 4095)),
    (member_code(1, 3, 5000), ("member", 1, 3, 4095)),        # an exemplar number past the mask is capped
    (member_code(0, (1 << 20) + 5, 1), ("member", 0, 5, 1)),  # a member index wraps inside its field
    (member_code(1 << 20, 0, 0), ("member", 1 << 20, 0, 0)),
    (near_miss_code(2, 5000), ("near_miss", 2, 5000)),
    (near_miss_code(2, (1 << 32) + 7), ("near_miss", 2, (1 << 32) - 1)),   # past 32 bits: capped
    (near_miss_code(1 << 17, 4095), ("near_miss", 1 << 17, 4095)),
    (generic_code(0), ("generic", 0)),
])
def test_codes_at_the_edges_of_their_fields(code, described):
    assert describe_code(code) == described


def test_codes_of_each_kind_are_distinct_and_signed():
    assert member_code(0, 0, 0) == 0 and member_code(0, 0, 1) == 1 and member_code(0, 1, 0) == 1 << 12
    assert member_code(1, 0, 0) == 1 << 32
    assert near_miss_code(0, 0) == -1 and near_miss_code(0, 1) == -2 and near_miss_code(1, 0) == -(1 + (1 << 32))
    assert generic_code(0) == -(1 << 50) and generic_code(3) == -(1 << 50) - 3


def test_exemplar_terms_pair_adjacent_different_stems_only():
    assert exemplar_terms("vpn ssh dns") == {"vpn", "ssh", "dns", "vpn ssh", "ssh dns"}
    assert exemplar_terms("vpn vpn ssh") == {"vpn", "ssh", "vpn ssh"}
    assert exemplar_terms("The VPN, ssh!") == {"vpn", "ssh", "vpn ssh"}
    memo = {}
    assert exemplar_terms("env_var x", memo) == {"env", "env_var", "var", "env env_var", "env_var var"}
    assert memo["env_var"] == ("env", "env_var", "var")


# term -> (idf, code, weight, ...): code 10's vector has length 4, code 20's length 2
HAND = {"aaa": (2.0, 10, 0.5, 20, 1.0), "bbb": (1.0, 10, 0.25)}


@pytest.mark.parametrize("terms, measure, expected", [
    ({"aaa", "bbb", "zzz"}, "cosine", {10: 1.25 / 5 ** 0.5, 20: 2.0 / 5 ** 0.5}),
    ({"aaa", "bbb", "zzz"}, "coverage", {10: 1.0, 20: 0.8}),
    ({"aaa", "bbb", "zzz"}, "balanced", {10: 5 / 16, 20: 0.8}),
    ({"bbb"}, "cosine", {10: 0.25}),
    ({"bbb"}, "coverage", {10: 1.0}),
    ({"bbb"}, "balanced", {10: 1 / 16}),
    ({"zzz"}, "cosine", {}),
    (set(), "coverage", {}),
])
def test_similarities_by_measure(terms, measure, expected):
    found = similarities(terms, HAND, measure)
    assert found.keys() == expected.keys()
    for code, value in expected.items():
        assert found[code] == pytest.approx(value)


def judge_settings(**overrides):
    out = {"veto_measure": "cosine", "veto_k": 5, "veto_power": 1.0, "veto_floor": 0.0, "veto_margin": 0.0}
    out.update(overrides)
    return out


def hand_table(**entries):
    return {"exemplar_postings": entries}


def test_judge_counts_only_the_routed_members_and_the_negatives():
    table = hand_table(vpn=(1.0, A_MEMBER, 1.0, NEAR, 1.0, B_MEMBER, 1.0))
    # k = 1: of the ties, the lowest code (the near-miss) is nearest
    verdict = judge("vpn", table, [0], judge_settings(veto_k=1))
    assert verdict == {"vetoed": True, "rule": "margin", "floor": 0.0, "positive": 0, "negative": 1.0,
                       "best_member": (A_MEMBER, 1.0), "nearest_negative": (NEAR, 1.0), "k": 1, "negatives": [NEAR]}
    both = judge("vpn", table, [0], judge_settings(veto_k=2))
    assert (both["vetoed"], both["positive"], both["negative"], both["negatives"]) == (False, 1.0, 1.0, [NEAR])
    # the other cluster's member would count for it, not for this route
    other = judge("vpn", table, [1], judge_settings(veto_k=2))
    assert other["best_member"] == (B_MEMBER, 1.0) and other["positive"] == 1.0


@pytest.mark.parametrize("margin, vetoed", [(0.0, False), (-0.01, True), (0.5, False)])
def test_judge_margin(margin, vetoed):
    table = hand_table(vpn=(1.0, A_MEMBER, 1.0, NEAR, 1.0))
    verdict = judge("vpn", table, [0], judge_settings(veto_margin=margin))
    assert verdict["vetoed"] is vetoed and verdict["rule"] == ("margin" if vetoed else None)


def test_judge_without_negatives_never_vetoes_on_the_margin():
    table = hand_table(vpn=(1.0, A_MEMBER, 1.0))
    assert not judge("vpn", table, [0], judge_settings(veto_margin=-5.0))["vetoed"]


def test_judge_weighs_each_neighbour_by_its_similarity_to_the_power():
    # "vpn ssh" against a member holding both (1.0) and a negative holding vpn alone (1/sqrt(2) by cosine)
    s = 2 ** -0.5
    table = hand_table(vpn=(1.0, A_MEMBER, s, GENERIC, 1.0), ssh=(1.0, A_MEMBER, s))
    square = judge("vpn ssh", table, [0], judge_settings(veto_power=2.0))
    assert square["positive"] == pytest.approx(1.0) and square["negative"] == pytest.approx(0.5)
    assert square["nearest_negative"] == (GENERIC, round(s, 4)) and square["best_member"] == (A_MEMBER, 1.0)
    linear = judge("vpn ssh", table, [0], judge_settings(veto_power=1.0, veto_margin=-0.3))
    assert linear["negative"] == round(s, 4) and linear["vetoed"]


@pytest.mark.parametrize("k, used", [(0, 1), (-3, 1), (2.7, 2), ("3", 3)])
def test_judge_k_is_a_whole_number_of_at_least_one(k, used):
    table = hand_table(vpn=(1.0, A_MEMBER, 1.0, NEAR, 1.0, GENERIC, 1.0))
    verdict = judge("vpn", table, [0], judge_settings(veto_k=k))
    assert verdict["k"] == used and len(verdict["negatives"]) + (verdict["positive"] > 0) == min(used, 3)


@pytest.mark.parametrize("floor, postings, rule", [
    (0.5, {"vpn": (1.0, A_MEMBER, 1.0)}, None),
    (1.0, {"vpn": (1.0, A_MEMBER, 1.0)}, None),                         # at the floor
    (0.5, {"vpn": (1.0, A_MEMBER, 0.4)}, "floor"),                      # under it, with no negative near
    (0.5, {"zzz": (1.0, A_MEMBER, 1.0)}, "floor"),                      # no member exemplar near at all
    (0.5, {"vpn": (1.0, NEAR, 1.0)}, "margin"),                         # both: the negatives' vote is named
    (0.0, {"vpn": (1.0, GENERIC, 0.1), "ssh": (1.0, A_MEMBER, 1.0)}, None),
    (0.0, {"zzz": (1.0, NEAR, 1.0)}, None),                             # nothing near: nothing to veto
])
def test_judge_floor(floor, postings, rule):
    verdict = judge("vpn ssh", hand_table(**postings), [0], judge_settings(veto_floor=floor))
    assert verdict["vetoed"] is (rule is not None) and verdict["rule"] == rule
    assert verdict["floor"] == floor


def test_judge_names_the_margin_when_both_rules_fire():
    table = hand_table(vpn=(1.0, A_MEMBER, 0.1, NEAR, 1.0))
    verdict = judge("vpn", table, [0], judge_settings(veto_floor=0.5))
    assert verdict["vetoed"] and verdict["rule"] == "margin"


def test_judge_rounds_what_it_reports():
    table = hand_table(vpn=(1.0, A_MEMBER, 1 / 3, NEAR, 2 / 3))
    verdict = judge("vpn", table, [0], judge_settings())
    assert verdict["positive"] == 0.3333 and verdict["negative"] == 0.6667
    assert verdict["best_member"] == (A_MEMBER, 0.3333) and verdict["nearest_negative"] == (NEAR, 0.6667)
    assert verdict["vetoed"] and verdict["negatives"] == [NEAR]


def test_judge_takes_the_nearest_first():
    # k = 1: the member at 1.0 is nearer than the near-miss at 0.5, so nothing is vetoed
    table = hand_table(vpn=(1.0, NEAR, 0.5, A_MEMBER, 1.0))
    verdict = judge("vpn", table, [0], judge_settings(veto_k=1))
    assert not verdict["vetoed"] and verdict["positive"] == 1.0 and verdict["negatives"] == []
    assert verdict["nearest_negative"] == (NEAR, 0.5)
    closer = judge("vpn", hand_table(vpn=(1.0, NEAR, 1.0, A_MEMBER, 0.5)), [0], judge_settings(veto_k=1))
    assert closer["vetoed"] and closer["negatives"] == [NEAR] and closer["best_member"] == (A_MEMBER, 0.5)


def test_judge_uses_the_measure_in_the_settings():
    # code 10 (length 4) holds both of the prompt's terms; code 20 (length 2) one: by cosine the
    # near-miss (10) is nearer, by coverage it holds all the prompt's weight, by balanced the member
    near, member = near_miss_code(0, 0), member_code(0, 0, 0)
    table = hand_table(vpn=(2.0, near, 0.5, member, 1.0), ssh=(1.0, near, 0.25))
    scores = {measure: judge("vpn ssh", table, [0], judge_settings(veto_measure=measure, veto_k=2))
              for measure in ("cosine", "coverage", "balanced")}
    assert scores["cosine"]["nearest_negative"] == (near, round(1.25 / 5 ** 0.5, 4))
    assert scores["coverage"]["nearest_negative"] == (near, 1.0) and scores["coverage"]["best_member"] == (member, 0.8)
    assert scores["balanced"]["nearest_negative"] == (near, 0.3125) and not scores["balanced"]["vetoed"]
    assert scores["coverage"]["vetoed"]


def test_keep_plain_keeps_a_hit_the_floor_with_utterances_drops():
    """Issue 34 item 4: counting utterance words as member words lowers a word's idf, so a prompt the
    router without utterances routes can fall under the floor; utterance_keep_plain keeps it."""
    t = table(near_misses={}, generics=())
    plain = extend_table(build_routing_table(index()), index(), utterances=None)
    prompt = "the deploy script hangs"
    floor = route(prompt, plain, settings(veto=False))["top_score"]
    between = settings(veto=False, weighted_floor=floor, utterance_floor=floor + 5.0)
    assert route(prompt, plain, between)["routed"] == ["c_deploy"]
    assert route(prompt, t, between)["routed"] == []
    kept = route(prompt, t, dict(between, utterance_keep_plain=True))
    assert kept["routed"] == ["c_deploy"] and "kept: the router without them routes it" in kept["explanation"]
    # ... and the veto still judges it.
    near = table(near_misses={"c_deploy": (prompt,)}, generics=())
    vetoed = route(prompt, near, dict(between, utterance_keep_plain=True, veto=True, veto_k=1))
    assert vetoed["routed"] == [] and vetoed["veto"]["rule"] == "margin"
