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
