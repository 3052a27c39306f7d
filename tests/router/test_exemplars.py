"""router/routing/exemplars.py: the veto's postings, on a store small enough to check by hand
(test_veto.py judges prompts with them)."""

import math

import pytest

from router.routing import exemplars
from router.routing.exemplars import add_exemplar_postings
from router.routing.veto import describe_code, exemplar_terms, generic_code, member_code, near_miss_code
from router.routing.weightedscore import idf
from router.store.clusterfile import parse_cluster_text

STORE = """\
## Layer 0 - Cluster Router

- c_a · 1 · tags: alpha · label: a
- c_b · 2 · tags: beta · label: b

## Layer 1 - Member Lines

### c_a
- env_deploy_vpn - env; deploy hangs without vpn

### c_b
- env_pg_dump - env; nightly dump
- feedback_psql - feedback; begin first
"""


def build(utterances=None, near_misses=None, generics=("the the",)):
    index = parse_cluster_text(STORE, "<store>")
    table = {"kept": True}
    out = add_exemplar_postings(table, index, utterances if utterances is not None else {"env_deploy_vpn": ["deploy stuck"]},
                                near_misses if near_misses is not None else {"c_b": ["dump a table"], "c_gone": ["x y"]},
                                generics)
    assert out is table and table["kept"] is True
    return table


def vectors(postings):
    """{code: {term: weight}} read back from the postings."""
    out = {}
    for term, entry in postings.items():
        for code, weight in zip(entry[1::2], entry[2::2]):
            out.setdefault(code, {})[term] = weight
    return out


def test_each_exemplar_is_a_unit_vector_over_its_terms():
    table = build()
    by_code = vectors(table["exemplar_postings"])
    own_a = member_code(0, 0, 0)
    expected_terms = {
        own_a: exemplar_terms("deploy env env_deploy_vpn vpn deploy hangs without vpn"),
        member_code(0, 0, 1): exemplar_terms("deploy stuck"),
        member_code(1, 0, 0): exemplar_terms("dump env env_pg_dump pg nightly dump"),
        member_code(1, 1, 0): exemplar_terms("feedback feedback_psql psql begin first"),
        near_miss_code(1, 0): exemplar_terms("dump a table"),
    }
    # the generic "the the" has no terms: it is counted, and has no vector
    assert {code: set(terms) for code, terms in by_code.items()} == expected_terms
    for code, weights in by_code.items():
        assert sum(w * w for w in weights.values()) == pytest.approx(1.0, abs=1e-4), describe_code(code)


def test_a_terms_idf_is_over_every_exemplar_and_its_weight_is_its_share_of_the_norm():
    table = build()
    postings = table["exemplar_postings"]
    documents = 6   # three members, one utterance, one near-miss of a cluster in the store, one generic
    for term, entry in postings.items():
        df = len(entry[1::2])
        assert entry[0] == round(idf(df, documents), 5), term
    # the utterance "deploy stuck": two words and one pair
    weights = {term: idf(len(postings[term][1::2]), documents) for term in exemplar_terms("deploy stuck")}
    norm = math.sqrt(sum(w * w for w in weights.values()))
    stuck = vectors(postings)[member_code(0, 0, 1)]
    assert stuck == {term: round(w / norm, 5) for term, w in weights.items()}


def test_meta_counts_exemplars_near_misses_and_generics():
    assert build()["exemplar_meta"] == {"exemplars": 6, "near_misses": 1, "generics": 1,
                                        "clusters_with_near_misses": 1}
    meta = build(near_misses={"c_a": ["one", "two words"], "c_b": [], "c_gone": ["x"]},
                 generics=("write a poem", "explain dns"))["exemplar_meta"]
    assert meta == {"exemplars": 3 + 1 + 2 + 2, "near_misses": 2, "generics": 2, "clusters_with_near_misses": 1}


def test_codes_number_utterances_from_one_and_near_misses_and_generics_from_zero():
    table = build(utterances={"feedback_psql": ["psql begin", "psql commit"]},
                  near_misses={"c_a": ["deploy flag", "vpn flag"]}, generics=("poem write", "dns explain"))
    codes = set(vectors(table["exemplar_postings"]))
    assert {member_code(1, 1, 1), member_code(1, 1, 2), near_miss_code(0, 0), near_miss_code(0, 1),
            generic_code(0), generic_code(1)} <= codes
    assert member_code(1, 1, 3) not in codes and generic_code(2) not in codes and near_miss_code(0, 2) not in codes


def test_a_term_in_more_than_max_df_exemplars_is_left_out_of_postings_and_norms(monkeypatch):
    monkeypatch.setattr(exemplars, "MAX_DF", 1)
    postings = build()["exemplar_postings"]
    # "dump": the pg_dump member and the near-miss (2 > 1: left out); "hang": one member (kept)
    assert "dump" not in postings and "env" not in postings and "hang" in postings
    for code, weights in vectors(postings).items():
        assert sum(w * w for w in weights.values()) == pytest.approx(1.0, abs=1e-4), describe_code(code)
    monkeypatch.setattr(exemplars, "MAX_DF", 2)
    assert "dump" in build()["exemplar_postings"]


def test_an_exemplar_of_one_common_term_keeps_its_vector_and_an_empty_one_stops_nothing():
    # "env" alone: held by two members' own exemplars and this utterance, idf ln 2 < 1; "the the"
    # (no terms at all) comes before the other exemplars and must not end the postings
    table = build(utterances={"env_deploy_vpn": ["the the", "env"]}, generics=())
    by_code = vectors(table["exemplar_postings"])
    assert by_code[member_code(0, 0, 2)] == {"env": 1.0}
    assert member_code(0, 0, 1) not in by_code
    assert {member_code(1, 0, 0), member_code(1, 1, 0), near_miss_code(1, 0)} <= set(by_code)
