"""router/routing/utterscore.py, part by part, on hand-made postings: the utterance evidence per
member, the coverage of the near-miss gate, the lines chosen by evidence and the table as the
weighted provider sees it (test_utterances_routing.py shows the same on a real store).

``utterance_postings``: stem -> (idf among the members' utterance bags, position, member_index, ...)."""

import pytest

from router.config import default_settings
from router.routing.utterscore import (
    _enriched,
    _hits_by_slug,
    _Joining,
    _Replacing,
    coverage,
    member_view,
    merge_matches,
    select_by_evidence,
    utterance_matches,
    utterance_words,
)
from router.routing.weightedscore import TAGS


def settings(**overrides):
    out = dict(default_settings(), utterance_weight=0.5, utterance_line_share=0.5, utterance_line_limit=0,
               line_cap=12)
    out.update(overrides)
    return out


UTTERANCE_POSTINGS = {
    "antivirus": (2.0, 0, 0, 0, 1),
    "slow": (1.0, 0, 0),
    "hog": (3.0, 1, 0),
}


def parts(tag_words=None, line_words=None):
    return {"tag_words": tag_words or {}, "line_words": line_words or {}, "line_weight": {}, "member_only": {},
            "member_words": {}}


def test_utterance_matches_weigh_each_new_word_at_the_utterance_weight():
    table = {"utterance_postings": UTTERANCE_POSTINGS}
    found = utterance_matches({"antivirus", "slow", "hog", "other"}, table, parts(), settings(utterance_weight=0.5))
    assert found == {(0, 0): {"antivirus": 1.0, "slow": 0.5}, (0, 1): {"antivirus": 1.0}, (1, 0): {"hog": 1.5}}


def test_utterance_matches_skip_words_the_line_or_the_tags_already_count():
    table = {"utterance_postings": UTTERANCE_POSTINGS}
    known = parts(tag_words={1: ["hog"]}, line_words={(0, 0): ["slow"], (0, 1): ["slow"]})
    found = utterance_matches({"antivirus", "slow", "hog"}, table, known, settings(utterance_weight=2.0))
    assert found == {(0, 0): {"antivirus": 4.0}, (0, 1): {"antivirus": 4.0}}
    assert utterance_matches({"antivirus"}, {"utterance_postings": {"antivirus": ()}}, parts(), settings()) == {}


def test_utterance_words_are_every_prompt_stem_at_its_utterance_idf():
    table = {"utterance_postings": dict(UTTERANCE_POSTINGS, empty=())}
    assert utterance_words({"antivirus", "hog", "empty", "other"}, table) == {
        (0, 0): {"antivirus": 2.0}, (0, 1): {"antivirus": 2.0}, (1, 0): {"hog": 3.0}}


def test_merge_matches_adds_line_weight_and_member_only_once_per_cluster():
    known = {"tag_words": {}, "line_words": {(0, 0): ["bash"]}, "line_weight": {(0, 0): 1.0},
             "member_only": {0: 1.0}, "member_words": {0: ["bash"]}}
    merged = merge_matches(known, {(0, 0): {"slow": 0.5, "antivirus": 1.0}, (0, 1): {"antivirus": 1.0, "bash": 2.0},
                                   (1, 0): {"hog": 1.5}})
    assert merged is known
    assert known["line_weight"] == {(0, 0): 2.5, (0, 1): 3.0, (1, 0): 1.5}
    assert known["line_words"] == {(0, 0): ["bash", "antivirus", "slow"], (0, 1): ["antivirus", "bash"],
                                   (1, 0): ["hog"]}
    # antivirus once for cluster 0; bash is already a member word of it
    assert known["member_only"] == {0: 1.0 + 1.0 + 0.5, 1: 1.5}


def coverage_parts():
    return {"tag_words": {0: ["tag"]}, "line_weight": {(0, 0): 1.0, (0, 1): 3.0, (1, 0): 9.0},
            "line_words": {(0, 0): ["low"], (0, 1): ["best", "uttered"], (1, 0): ["other"]}}


def coverage_found():
    return {"tag": (1.0, (), "tag"), "low": (2.0, (), "low"), "best": (3.0, (), "best"), "other": (4.0, (), "other")}


def test_coverage_is_the_share_of_known_weight_the_tags_and_best_member_explain():
    table = {"utterance_postings": {"uttered": (5.0,), "unknown": ()}}
    words = {"tag", "low", "best", "other", "uttered", "unknown", "nowhere"}
    # known: tag 1 + low 2 + best 3 + other 4 + uttered 5 = 15; explained: tag, best, uttered = 9
    assert coverage(0, coverage_parts(), coverage_found(), words, table) == pytest.approx(9 / 15)
    assert coverage(1, coverage_parts(), coverage_found(), words, table) == pytest.approx(4 / 15)
    assert coverage(2, coverage_parts(), coverage_found(), words, table) == 0.0   # no tag, no line


def test_coverage_of_a_prompt_the_store_never_uses_is_zero():
    table = {"utterance_postings": {}}
    assert coverage(0, coverage_parts(), {}, {"nowhere"}, table) == 0.0
    assert coverage(0, coverage_parts(), {}, set(), table) == 0.0


def test_a_cluster_is_enriched_unless_the_table_names_it():
    table = {"utterance_meta": {"unenriched": [2]}}
    assert _enriched(table, 0) and not _enriched(table, 2)
    assert _enriched({"utterance_meta": {}}, 2)


def evidence_table():
    members = tuple((f"m{i}", "env", f"hook {i}") for i in range(4))
    return {"clusters": [("c0", (), "", members), ("c1", (), "", members[:2])]}


def test_select_by_evidence_sends_the_best_member_then_those_within_the_share():
    weights = {(0, 0): 4.0, (0, 1): 2.0, (0, 2): 1.9, (0, 3): 0.0}
    lines, total = select_by_evidence(evidence_table(), [0], weights, settings(utterance_line_share=0.5))
    assert total == 4 and lines == [(0, 0, "m0", "hook 0"), (0, 1, "m1", "hook 1")]


def test_select_by_evidence_keeps_each_chosen_clusters_best_member_even_at_a_limit_of_one():
    weights = {(0, 0): 4.0, (0, 1): 3.9, (1, 1): 1.0}
    lines, total = select_by_evidence(evidence_table(), [0, 1], weights,
                                      settings(utterance_line_limit=1, utterance_line_share=0.0))
    assert total == 6 and lines == [(0, 0, "m0", "hook 0"), (1, 1, "m1", "hook 1")]


@pytest.mark.parametrize("limit, cap, kept", [(2, 12, 2), (0, 3, 3), (5, 3, 3), (1, 12, 1)])
def test_select_by_evidence_stops_at_the_limit_or_the_line_cap(limit, cap, kept):
    weights = {(0, i): 4.0 - i * 0.1 for i in range(4)}
    lines, _ = select_by_evidence(evidence_table(), [0], weights,
                                  settings(utterance_line_limit=limit, line_cap=cap, utterance_line_share=0.0))
    assert [line[1] for line in lines] == list(range(kept))


def test_select_by_evidence_orders_ties_by_cluster_rank_then_line():
    weights = {(1, 1): 2.0, (1, 0): 2.0, (0, 3): 2.0, (0, 2): 2.0}
    lines, _ = select_by_evidence(evidence_table(), [1, 0], weights, settings(utterance_line_share=1.0))
    assert [(line[0], line[1]) for line in lines] == [(1, 0), (1, 1), (0, 2), (0, 3)]


def test_select_by_evidence_without_evidence_is_the_weighted_selection():
    lines, total = select_by_evidence(evidence_table(), [1, 0], {(0, 0): 0.0}, settings(line_cap=3))
    assert total == 6 and [(line[0], line[1]) for line in lines] == [(1, 0), (1, 1), (0, 0)]


def test_a_replacing_mapping_prefers_a_non_empty_entry_of_its_own():
    view = _Replacing({"a": (1,), "b": ()}, {"a": (2,), "b": (3,), "c": (4,)})
    assert [view.get(key) for key in ("a", "b", "c", "d")] == [(1,), (3,), (4,), ()]
    assert view.get("d", None) is None


def test_a_joining_mapping_appends_its_entries_to_the_base():
    view = _Joining({"a": ("x",), "c": ("y",)}, {"a": ("w",), "b": ("v",)})
    assert [view.get(key) for key in ("a", "b", "c", "d")] == [("w", "x"), ("v",), ("y",), ()]
    assert view.get("d", None) is None


def test_member_view_reads_utterance_words_as_member_words():
    table = {"term_postings": {"a": (1.0, 0, 0)}, "fuzzy_postings": {"a": ("a",)},
             "utterance_term_postings": {"a": (2.0, 0, 0, 0, 1), "u": (1.0, 0, 1)},
             "utterance_fuzzy_postings": {"u": ("u",)}, "utterance_line_postings": {"u": (0, 1)}}
    view = member_view(table)
    assert view["term_postings"].get("a") == (2.0, 0, 0, 0, 1) and view["term_postings"].get("u") == (1.0, 0, 1)
    assert view["fuzzy_postings"].get("a") == ("a",) and view["fuzzy_postings"].get("u") == ("u",)
    assert view["learned_line_postings"].get("u") == (0, 1)
    table["learned_line_postings"] = {"u": (1, 0)}
    assert member_view(table)["learned_line_postings"].get("u") == (1, 0, 0, 1)
    assert table["term_postings"] == {"a": (1.0, 0, 0)}          # the table itself is unchanged
    plain = {"term_postings": {}}
    assert member_view(plain) is plain


def test_hits_by_slug_name_the_prompt_forms_of_the_three_best_clusters_members():
    members = ((f"s{i}", "env", "hook") for i in range(3))
    table = {"clusters": [("c0", (), "", tuple(members))] + [(f"c{i}", (), "", (("x" + str(i), "env", "h"),))
                                                             for i in range(1, 5)]}
    rows = [(0,), (1,), (2,), (3,)]
    matches = {(0, 0): {"slow": 1.0}, (0, 2): {"hog": 2.0, "antivir": 1.0}, (1, 0): {"zzz": 0.5},
               (3, 0): {"far": 9.0}}
    forms = {"hog": ["hogging", "hogs"], "antivir": ["antivirus"]}
    hits = _hits_by_slug(table, rows, matches, forms)
    assert hits == {"s2": ["antivirus", "hogging", "hogs"], "s0": ["slow"], "x1": ["zzz"]}
    assert list(hits) == ["s2", "s0", "x1"]       # best evidence first


def test_hits_by_slug_name_at_most_twelve_members():
    members = tuple((f"s{i:02d}", "env", "hook") for i in range(14))
    table = {"clusters": [("c0", (), "", members)]}
    matches = {(0, i): {"w": float(i)} for i in range(14)}
    hits = _hits_by_slug(table, [(0,)], matches, {})
    assert list(hits) == [f"s{i:02d}" for i in range(13, 1, -1)]
    tied = _hits_by_slug(table, [(0,)], {(0, i): {"w": 1.0} for i in range(14)}, {})
    assert list(tied) == [f"s{i:02d}" for i in range(12)]


# --------------------------------------------------------------------------- a whole decision on a hand-made table

from router.routing.utterscore import MAX_SCORES, route_with_utterances  # noqa: E402
from router.routing.veto import member_code, near_miss_code  # noqa: E402

HAND_CLUSTERS = [
    ("c_a", ("alpha",), "", (("a_one", "env", "hook one"), ("a_two", "env", "hook two"))),
    ("c_b", (), "", (("b_one", "env", "hook b"),)),
]


def hand_table(**extra):
    """alpha: a tag of c_a; setx and vpn: line a_one; bravo: line a_two; kilo and zulu: line b_one.
    Utterances: tango (a_two's), setx (a_one's, already its own word), oscar (b_one's)."""
    term = {"alpha": (2.0, 0, TAGS), "setx": (3.0, 0, 0), "vpn": (1.0, 0, 0), "bravo": (1.0, 0, 1),
            "kilo": (4.0, 1, 0), "zulu": (0.5, 1, 0)}
    table = {"clusters": HAND_CLUSTERS, "term_postings": term, "fuzzy_postings": {},
             "utterance_postings": {"tango": (2.0, 0, 1), "setx": (1.0, 0, 0), "oscar": (1.0, 1, 0)},
             "utterance_meta": {"members": 3}}
    table.update(extra)
    return table


def hand(**overrides):
    out = dict(default_settings(), provider="weighted", weighted_tag_boost=1.0, weighted_spread=0.5,
               second_ratio=0.9, rare_word_rule=True, word_priors=False, utterance_floor=2.0, utterance_weight=1.0,
               utterance_coverage=0.5, utterance_strong=0.0, utterance_line_share=0.5, utterance_line_limit=0,
               line_cap=12, veto=False, veto_strong=0.0, veto_protect=0.0, veto_floor=0.0, veto_margin=0.0,
               veto_k=5, veto_power=1.0, veto_measure="cosine", intent_gate=True, intent_gate_focus=2)
    out.update(overrides)
    return out


HEAD = "weighted score 6.00 (floor 2.0) for c_a, member evidence 3.00; utterance words setx, tango"


def test_an_utterance_decision_in_full():
    decision = route_with_utterances("alpha setx tango", hand_table(), hand())
    # a_one: setx 3; a_two: tango 2 from its utterances; score = tag 2 + best line 3 + spread 0.5 x 2
    assert decision == {
        "prompt_tokens": ["alpha", "setx", "tango"],
        "scores": [{"cluster_id": "c_a", "score": 6.0, "tag_hits": ["alpha"], "member_hits": ["setx"],
                    "utterance_hits": ["setx", "tango"], "member_evidence": 3.0}],
        "floor": 2.0, "top_score": 6.0, "second_score": 0, "margin_over_floor": 4.0, "lead_over_second": 6.0,
        "confidence": 0.75,
        "coverage": 0.7143,      # alpha 2 + setx 3 of alpha 2 + setx 3 + tango 2
        "routed": ["c_a"], "clusters": ["c_a"],
        "lines": [{"cluster_id": "c_a", "slug": "a_one", "hook": "hook one"},
                  {"cluster_id": "c_a", "slug": "a_two", "hook": "hook two"}],
        "total_member_lines": 2, "size_capped_lines": 0,
        "additional_context": "Routed memory cluster: c_a\n- a_one \u2014 hook one\n- a_two \u2014 hook two",
        "utterance_hits": {"a_two": ["tango"], "a_one": ["setx"]},
        "explanation": HEAD + "; sent c_a",
    }


@pytest.mark.parametrize("overrides, sent", [
    ({"utterance_coverage": 0.72}, False),
    ({"utterance_coverage": 0.714}, True),
    ({"utterance_coverage": 0.72, "utterance_strong": 3.0}, True),    # the best member alone is strong enough
    ({"utterance_coverage": 0.72, "utterance_strong": 3.01}, False),
    ({"utterance_coverage": 0.72, "utterance_strong": 0.5}, True),     # a strength under 1 counts too
])
def test_the_near_miss_gate(overrides, sent):
    decision = route_with_utterances("alpha setx tango", hand_table(), hand(**overrides))
    assert (decision["routed"] == ["c_a"]) is sent and decision["coverage"] == 0.7143
    if not sent:
        assert decision["explanation"] == (HEAD + "; near miss: the chosen clusters' tags and best members explain "
                                           "71% of the prompt's known words, nothing sent")
        assert decision["lines"] == [] and decision["additional_context"] is None


def test_a_cluster_with_a_member_without_utterances_is_not_gated_and_has_no_coverage():
    table = hand_table(utterance_meta={"members": 3, "unenriched": [0]})
    decision = route_with_utterances("alpha setx tango", table, hand(utterance_coverage=1.0))
    assert decision["routed"] == ["c_a"] and decision["coverage"] is None


NEAR = near_miss_code(0, 0)


@pytest.mark.parametrize("extra, overrides, vetoed", [
    ({"exemplar_postings": {"tango": (1.0, NEAR, 1.0)}}, {"veto": True}, True),
    ({"exemplar_postings": {"tango": (1.0, NEAR, 1.0)}}, {"veto": False}, None),
    ({}, {"veto": True}, None),                                                    # no exemplars in the table
    ({"exemplar_postings": {"tango": (1.0, NEAR, 1.0)}}, {"veto": True, "veto_strong": 3.0}, None),
    ({"exemplar_postings": {"tango": (1.0, NEAR, 1.0)}}, {"veto": True, "veto_strong": 3.01}, True),
    ({"exemplar_postings": {"tango": (1.0, NEAR, 1.0)}}, {"veto": True, "veto_strong": 0.5}, None),
    ({"exemplar_postings": {"tango": (1.0, NEAR, 1.0)}}, {"veto": True, "veto_protect": 0.71}, None),
    ({"exemplar_postings": {"tango": (1.0, NEAR, 1.0)}}, {"veto": True, "veto_protect": 0.72}, True),
    ({"exemplar_postings": {"tango": (1.0, NEAR, 1.0)}}, {"veto": True, "veto_protect": 5 / 7}, None),  # at it
    ({"exemplar_postings": {"setx": (1.0, member_code(0, 0, 0), 1.0)}}, {"veto": True}, False),
])
def test_the_veto_and_what_spares_a_decision_from_it(extra, overrides, vetoed):
    decision = route_with_utterances("alpha setx tango", hand_table(**extra), hand(**overrides))
    assert (decision.get("veto") or {}).get("vetoed") is vetoed
    assert (decision["routed"] == []) is bool(vetoed)
    if vetoed:
        # only "tango" is an exemplar term: the near-miss holds all the prompt's known weight
        assert decision["explanation"] == (HEAD + "; vetoed: nearer the near-misses and generic requests (1.00) "
                                           "than the routed members' own exemplars (0.00) among the 5 nearest, "
                                           "nothing sent")


def test_the_protection_needs_a_coverage():
    table = hand_table(exemplar_postings={"tango": (1.0, NEAR, 1.0)}, utterance_meta={"members": 3, "unenriched": [0]})
    decision = route_with_utterances("alpha setx tango", table, hand(veto=True, veto_protect=0.01))
    assert decision["veto"]["vetoed"] and decision["routed"] == []


@pytest.mark.parametrize("postings, nearest", [
    ({"zulu": (1.0, member_code(1, 0, 0), 1.0)}, "none shares a word"),
    ({"tango": (1.0, member_code(0, 1, 0), 0.3)}, "the nearest is at 0.30"),
])
def test_a_veto_by_the_floor_says_so(postings, nearest):
    decision = route_with_utterances("alpha setx tango", hand_table(exemplar_postings=postings),
                                     hand(veto=True, veto_floor=0.5))
    assert decision["routed"] == [] and decision["veto"]["rule"] == "floor"
    assert decision["explanation"] == (HEAD + "; vetoed by veto_floor: no routed member's own exemplar reaches "
                                       f"0.50 ({nearest}), nothing sent")


@pytest.mark.parametrize("prompt, overrides, end", [
    ("explain alpha setx tango", {}, "; silenced by the intent gate: a general 'explain' request with no ownership word"),
    ("alpha setx tango", {"utterance_floor": 6.01}, ": under the floor"),
])
def test_what_silences_a_decision_is_explained(prompt, overrides, end):
    decision = route_with_utterances(prompt, hand_table(), hand(**overrides))
    assert decision["routed"] == [] and decision["explanation"].endswith(end)
    assert decision["explanation"].startswith("weighted score 6.00 (floor ")


@pytest.mark.parametrize("prompt, overrides, routed", [
    ("explain alpha setx tango", {"intent_gate": False}, ["c_a"]),
    ("explain alpha setx vpn", {}, ["c_a"]),                 # a line holds two prompt words: focus 2
    ("explain alpha setx vpn", {"intent_gate_focus": 3}, []),
    ("explain alpha setx kilo", {}, []),                     # the rare word's line is not the top cluster's
    ("explain alpha", {"intent_gate_focus": 1}, []),          # tags alone: no line holds a prompt word
])
def test_the_intent_gate_reads_the_top_clusters_lines(prompt, overrides, routed):
    assert route_with_utterances(prompt, hand_table(), hand(**overrides))["routed"] == routed


def test_nothing_in_the_store_or_its_utterances():
    decision = route_with_utterances("nothing here", hand_table(), hand())
    assert decision["scores"] == [] and decision["routed"] == [] and decision["coverage"] is None
    assert (decision["top_score"], decision["second_score"], decision["confidence"]) == (0, 0, 0.0)
    assert decision["explanation"] == "no prompt word (or a one-edit variant of it) is in the store or its utterances"


def test_the_second_cluster_and_the_score_list():
    # coverage 5 of 12.5: the gate would stop it (the rare word's cluster does not count for the top one)
    assert route_with_utterances("alpha setx tango kilo zulu oscar", hand_table(), hand())["coverage"] == 0.4
    decision = route_with_utterances("alpha setx tango kilo zulu oscar", hand_table(), hand(utterance_coverage=0.4))
    assert decision["routed"] == ["c_a", "c_b"] and decision["second_score"] == 5.5
    assert decision["scores"][1] == {"cluster_id": "c_b", "score": 5.5, "tag_hits": [], "member_hits": ["kilo", "zulu"],
                                     "utterance_hits": ["oscar"], "member_evidence": 5.5}
    assert decision["explanation"] == HEAD + "; sent c_a, c_b"


def test_at_most_twenty_clusters_are_scored_and_six_utterance_words_named():
    clusters = [(f"c{i:02d}", ("alpha",), "", ((f"m{i:02d}", "env", "hook"),)) for i in range(MAX_SCORES + 1)]
    words = ["tango", "oscar", "delta", "echo", "golf", "hotel", "india"]
    table = {"clusters": clusters, "term_postings": {"alpha": (2.0,) + sum(((i, TAGS) for i in range(21)), ())},
             "fuzzy_postings": {}, "utterance_postings": {w: (1.0, 0, 0) for w in words},
             "utterance_meta": {"members": 21}}
    decision = route_with_utterances("alpha " + " ".join(words), table, hand(utterance_coverage=0.0))
    assert [row["cluster_id"] for row in decision["scores"]] == [f"c{i:02d}" for i in range(MAX_SCORES)]
    assert "; utterance words delta, echo, golf, hotel, india, oscar; sent c00" in decision["explanation"]


def test_a_plain_hit_under_the_utterance_floor_is_kept_when_asked():
    # with utterances "setx" is a word of more documents (idf 1 instead of 3): 4.5 < 5; without them 5.0 >= 4
    table = hand_table(utterance_term_postings={"setx": (1.0, 0, 0)}, utterance_fuzzy_postings={},
                       utterance_line_postings={})
    settings = hand(utterance_floor=5.0, weighted_floor=4.0, utterance_coverage=0.0)
    dropped = route_with_utterances("alpha setx tango", table, dict(settings, utterance_keep_plain=False))
    head = "weighted score 4.50 (floor 5.0) for c_a, member evidence 2.00; utterance words setx, tango"
    assert dropped["routed"] == [] and dropped["explanation"] == head + ": under the floor"
    kept = route_with_utterances("alpha setx tango", table, dict(settings, utterance_keep_plain=True))
    assert kept["routed"] == ["c_a"] and kept["top_score"] == 4.5
    assert kept["explanation"] == (head + "; sent c_a (under the floor with utterances; kept: the router without "
                                   "them routes it at 4.0)")
    # the plain router would not route it either: nothing is kept
    assert route_with_utterances("alpha setx tango", table,
                                 dict(settings, utterance_keep_plain=True, weighted_floor=5.01))["routed"] == []


# --------------------------------------------------------------------------- more of the lines chosen by evidence


def named_table(slugs_by_cluster):
    return {"clusters": [(f"c{p}", (), "", tuple((slug, "env", f"hook {slug}") for slug in slugs))
                         for p, slugs in enumerate(slugs_by_cluster)]}


def picked(lines):
    return [(line[0], line[1]) for line in lines]


def test_evidence_under_one_still_chooses_by_evidence():
    lines, total = select_by_evidence(evidence_table(), [0], {(0, 2): 0.5}, settings(utterance_line_share=0.5))
    assert total == 4 and picked(lines) == [(0, 2)]


def test_lines_without_evidence_are_never_sent_even_at_a_share_of_zero():
    lines, _ = select_by_evidence(evidence_table(), [0], {(0, 1): 1.0}, settings(utterance_line_share=0.0))
    assert picked(lines) == [(0, 1)]


def test_the_best_evidence_is_kept_first_whatever_the_file_order():
    weights = {(0, 0): 1.0, (0, 1): 3.0, (0, 2): 2.0}
    lines, _ = select_by_evidence(evidence_table(), [0], weights,
                                  settings(utterance_line_share=0.0, utterance_line_limit=2))
    assert picked(lines) == [(0, 1), (0, 2)]


def test_at_the_limit_ties_go_to_the_first_cluster_then_the_first_line_not_the_slug():
    table = named_table([("d", "c", "b", "a"), ("z", "y")])
    weights = {(1, 1): 2.0, (1, 0): 2.0, (0, 3): 2.0, (0, 2): 2.0}
    lines, _ = select_by_evidence(table, [1, 0], weights, settings(utterance_line_share=1.0, utterance_line_limit=3))
    assert [(line[0], line[1], line[2]) for line in lines] == [(1, 0, "z"), (1, 1, "y"), (0, 2, "b")]


def test_a_chosen_cluster_without_evidence_sends_no_line():
    lines, total = select_by_evidence(evidence_table(), [0, 1], {(0, 0): 1.0}, settings(utterance_line_share=0.0))
    assert total == 6 and picked(lines) == [(0, 0)]


def test_each_chosen_clusters_best_member_by_rank_not_by_position():
    # the second cluster chosen (position 1) holds the heaviest evidence; the first (position 2) one line
    table = named_table([("a",), ("b0", "b1"), ("c0", "c1")])
    weights = {(1, 0): 5.0, (1, 1): 4.0, (2, 1): 1.0}
    lines, _ = select_by_evidence(table, [2, 1], weights, settings(utterance_line_share=0.0, utterance_line_limit=1))
    assert picked(lines) == [(1, 0), (2, 1)]


def test_a_cluster_without_members_sends_nothing():
    lines, total = select_by_evidence(named_table([()]), [0], {}, settings())
    assert (lines, total) == ([], 0)


def test_coverage_of_a_prompt_of_little_weight_is_still_its_share():
    parts = {"tag_words": {0: ["tag"]}, "line_weight": {}, "line_words": {}}
    found = {"tag": (0.25, (), "tag"), "other": (0.5, (), "other")}
    assert coverage(0, parts, found, {"tag", "other"}, {"utterance_postings": {}}) == pytest.approx(1 / 3)


def test_the_rare_word_brings_its_cluster_in_the_utterance_route_too():
    prompt = "alpha setx tango kilo zulu oscar"
    decision = route_with_utterances(prompt, hand_table(), hand(utterance_coverage=0.4, second_ratio=0.99))
    assert decision["routed"] == ["c_a", "c_b"]           # 5.5 < 0.99 x 6: only the rare word "kilo" brings c_b
    assert route_with_utterances(prompt, hand_table(), hand(utterance_coverage=0.4, second_ratio=0.99,
                                                            rare_word_rule=False))["routed"] == ["c_a"]


def test_a_plain_hit_kept_brings_the_plain_rare_words_cluster_too():
    table = hand_table(utterance_term_postings={"setx": (1.0, 0, 0)}, utterance_fuzzy_postings={},
                       utterance_line_postings={})
    settings = hand(utterance_floor=50.0, weighted_floor=4.0, utterance_coverage=0.0, second_ratio=0.99,
                    utterance_keep_plain=True)
    # without utterances: c_a 5.0, c_b 4.5 (kilo 4 + zulu 0.5): not a clear second, but kilo is rare
    assert route_with_utterances("alpha setx kilo zulu", table, settings)["routed"] == ["c_a", "c_b"]


def test_a_long_prompt_is_scored_on_its_head_and_tail_with_utterances_too():
    prompt = "alpha " + "y" * 200 + " setx " + "x" * 300 + " " + "z" * 200 + " tango"
    decision = route_with_utterances(prompt, hand_table(), hand(max_prompt_chars=400))
    assert "setx" not in decision["prompt_tokens"] and {"alpha", "tango"} <= set(decision["prompt_tokens"])


def test_member_evidence_is_rounded_to_four_places():
    table = hand_table()
    table["term_postings"] = dict(table["term_postings"], setx=(1 / 3, 0, 0))
    decision = route_with_utterances("alpha setx", table, hand(utterance_floor=1.0))
    assert decision["scores"][0]["member_evidence"] == 0.3333


def test_a_word_the_line_counts_is_skipped_for_that_member_only():
    table = {"utterance_postings": UTTERANCE_POSTINGS}
    found = utterance_matches({"antivirus"}, table, parts(line_words={(0, 0): ["antivirus"]}), settings())
    assert found == {(0, 1): {"antivirus": 1.0}}


def test_merge_matches_counts_a_word_once_per_cluster_in_each_cluster():
    known = {"tag_words": {}, "line_words": {}, "line_weight": {}, "member_only": {}, "member_words": {}}
    merge_matches(known, {(0, 0): {"w": 1.0}, (0, 1): {"w": 1.0}, (1, 0): {"w": 2.0}})
    assert known["member_only"] == {0: 1.0, 1: 2.0}


def test_a_misspelt_utterance_word_is_repaired_through_both_key_filters():
    from router.routing.wordmatch import deletes, key_filter

    table = hand_table()
    utterance_fuzzy = {variant: ("zscaler",) for variant in deletes("zscaler") | {"zscaler"}}
    table.update(utterance_term_postings={"zscaler": (2.0, 0, 0)}, utterance_fuzzy_postings=utterance_fuzzy,
                 utterance_line_postings={}, fuzzy_filter=key_filter(set(table["fuzzy_postings"]) | {"setx"}),
                 utterance_fuzzy_filter=key_filter(set(utterance_fuzzy)))
    decision = route_with_utterances("setx zscalr", table, hand())
    assert decision["scores"][0]["member_hits"] == ["setx", "zscaler"]
