"""router/routing/weightedscore.py, part by part, on hand-made postings: what each step of the
weighted score gives for a prompt (test_weighted.py shows the same behaviours on a real store).

A table here holds only what a step reads: ``term_postings`` (stem -> (idf, position,
member_index, ...), member_index -1 for a cluster's tags and -2 for its label),
``fuzzy_postings`` (deletion variant -> stems), ``clusters`` ((id, tags, label, members))."""

import math

import pytest

from router.config import default_settings
from router.routing.weightedscore import (
    LABEL,
    TAGS,
    best_lines,
    choose_clusters,
    finish_decision,
    focus,
    general_request,
    idf,
    learned_hits_by_line,
    member_part,
    rank_parts,
    score_parts,
    score_summary,
    select_member_lines,
    stem_forms,
    stem_set,
    stop_stems_of,
    word_stems,
)
from router.routing.wordmatch import deletes, lookup_stems, prior_factor, within_one_edit


def settings(**overrides):
    out = dict(default_settings(), weighted_tag_boost=2.0, weighted_spread=0.5, second_ratio=0.5,
               rare_word_rule=True, word_priors=False, word_prior_knee=3.0)
    out.update(overrides)
    return out


# --------------------------------------------------------------------------- build-time words


def test_stem_forms_keys_routing_words_by_stem_and_keeps_identifiers_whole():
    assert stem_forms(["caching", "cached", "env_var", "needed", "router", "caching"]) == {
        "cach": ["cached", "caching", "caching"], "env_var": ["env_var"], "router": ["router"]}
    assert stem_set(["caching", "cached", "needed"]) == {"cach"}


def test_word_stems_are_sorted_and_remembered():
    memo = {}
    assert word_stems("env_var", memo) == ("env", "env_var", "var")
    assert word_stems("needed", memo) == ()              # stems to the stopword "need"
    assert memo == {"env_var": ("env", "env_var", "var"), "needed": ()}
    memo["router"] = ("remembered",)
    assert word_stems("router", memo) == ("remembered",)  # the memo is read, not recomputed


@pytest.mark.parametrize("stopwords, stems", [
    ({"because"}, {"becaus"}),        # a stopword's stem of five letters or more goes too
    ({"really"}, set()),              # "real": four letters, a word of its own
    ({"things", "thing"}, set()),     # a stem that is itself a stopword is already dropped
])
def test_stop_stems_of(stopwords, stems):
    assert stop_stems_of(stopwords) == frozenset(stems)


def test_deletes_are_every_one_letter_deletion():
    assert deletes("abc") == {"bc", "ac", "ab"}
    assert deletes("aab") == {"ab", "aa"}
    assert deletes("") == set()


@pytest.mark.parametrize("zipf, factor", [(3.0, 1.0), (2.0, 1.0), (3.5, 1 / 1.5), (5.0, 1 / 3)])
def test_prior_factor_at_and_past_the_knee(zipf, factor):
    assert prior_factor(zipf, 3.0) == pytest.approx(factor)


@pytest.mark.parametrize("df, documents, weight", [(1, 10, math.log(1 + 9.5 / 1.5)), (10, 10, math.log(1 + 0.5 / 10.5)),
                                                  (0, 4, math.log(1 + 4.5 / 0.5))])
def test_idf(df, documents, weight):
    assert idf(df, documents) == pytest.approx(weight)


@pytest.mark.parametrize("a, b, close", [
    ("abcd", "abdc", True),     # a swap of the last two
    ("abcd", "bacd", True),     # a swap of the first two
    ("abcd", "acbd", True),
    ("abcd", "badc", False),    # two swaps
    ("abcd", "abce", True),
    ("abcd", "abef", False),    # two substitutions side by side, not a swap
    ("abcd", "dbca", False),    # the ends exchanged: not adjacent
    ("abcd", "abcde", True),
    ("abcd", "xabcd", True),
    ("abcd", "abxcd", True),
    ("abcd", "abcdef", False),
    ("abcd", "ab", False),
    ("abcd", "axcy", False),
    ("abcd", "abxd", True),
    ("ab", "ba", True),
    ("abc", "cba", False),
])
def test_within_one_edit_cases(a, b, close):
    assert within_one_edit(a, b) is close and within_one_edit(b, a) is close


# --------------------------------------------------------------------------- prompt words to postings


def postings_table():
    """Stems of two clusters: "setx" in one member line, "bash" in a tag and lines of both,
    "certificate" in one line (a fuzzy target), "conventional" in another."""
    term = {
        "setx": (3.0, 1, 1),
        "bash": (1.0, 0, TAGS, 0, 1, 1, 1),
        "certificate": (2.5, 1, 0),
        "zscaler": (2.0, 1, 0),
        "conventional": (2.2, 1, 2),
        "label": (1.5, 0, LABEL),
    }
    fuzzy = {}
    for word in term:
        for variant in deletes(word) | {word}:
            fuzzy.setdefault(variant, []).append(word)
    return {"term_postings": term, "fuzzy_postings": {k: tuple(v) for k, v in fuzzy.items()}}


def test_lookup_finds_exact_words_with_their_idf_and_postings():
    found = lookup_stems({"setx", "bash", "unknownword"}, postings_table(), settings())
    assert found == {"setx": (3.0, (1, 1), "setx"), "bash": (1.0, (0, TAGS, 0, 1, 1, 1), "bash")}


def test_a_spelling_repair_counts_at_the_fuzzy_factor_where_an_exact_word_backs_it():
    # "certficate" -> "certificate" (one deletion), backed by "zscaler" in the same line (1, 0)
    found = lookup_stems({"certficate", "zscaler"}, postings_table(), settings())
    assert found == {"zscaler": (2.0, (1, 0), "zscaler"), "certificate": (2.5 * 0.7, (1, 0), "certficate")}
    # without a backing word in its line, the repair is dropped
    assert lookup_stems({"certficate", "setx"}, postings_table(), settings()) == {"setx": (3.0, (1, 1), "setx")}


@pytest.mark.parametrize("word", ["bsh", "cert1ficate", "certificat"[:4]])
def test_spelling_repair_needs_five_letters_all_alphabetic(word):
    table = postings_table()
    table["term_postings"]["bsh"] = ()   # an empty entry is not a match either
    assert lookup_stems({word, "zscaler"}, table, settings()) == {"zscaler": (2.0, (1, 0), "zscaler")}


def test_a_five_letter_word_is_repaired():
    table = postings_table()
    table["term_postings"]["abcde"] = (1.0, 1, 0)
    table["fuzzy_postings"].update({v: ("abcde",) for v in deletes("abcde")})
    found = lookup_stems({"abcdx", "zscaler"}, table, settings())
    assert found["abcde"] == (0.7, (1, 0), "abcdx")


def test_an_exact_match_is_never_replaced_by_a_repair():
    table = postings_table()
    # "zscalr" -> "zscaler" would be a repair, but "zscaler" is also typed as written
    found = lookup_stems({"zscaler", "zscalr"}, table, settings())
    assert found == {"zscaler": (2.0, (1, 0), "zscaler")}


def test_a_repair_keeps_only_the_lines_an_exact_word_backs():
    table = postings_table()
    table["term_postings"]["certificate"] = (2.5, 0, 1, 1, 0)   # in a line of each cluster
    found = lookup_stems({"certficate", "zscaler"}, table, settings())
    assert found["certificate"] == (2.5 * 0.7, (1, 0), "certficate")


def test_spelling_repair_stops_after_forty_unknown_words():
    table = postings_table()
    # 40 unknown words sorted before "zzcertficate"-like repairs: the repair is not tried
    unknown = {f"aaaa{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(40)}
    found = lookup_stems(unknown | {"zscaler", "zscalr"}, table, settings())
    assert "zscaler" in found and found["zscaler"][2] == "zscaler"
    table["term_postings"]["certificate"] = (2.5, 1, 0)
    assert "certificate" not in lookup_stems(unknown | {"zscaler", "certficate"}, table, settings())
    assert "certificate" in lookup_stems(set(list(sorted(unknown))[:39]) | {"zscaler", "certficate"}, table,
                                         settings())


def test_word_priors_discount_only_a_known_common_word():
    table = dict(postings_table(), prior_postings={"bash": 5.0, "setx": 0.0})
    found = lookup_stems({"setx", "bash"}, table, settings(word_priors=True, word_prior_knee=3.0))
    assert found["bash"] == (pytest.approx(1.0 / 3.0), (0, TAGS, 0, 1, 1, 1), "bash")
    assert found["setx"] == (3.0, (1, 1), "setx")
    assert lookup_stems({"bash"}, table, settings(word_priors=False))["bash"][0] == 1.0


# --------------------------------------------------------------------------- the intent gate


@pytest.mark.parametrize("text, matched, reason", [
    ("explain how DNS works", {"dns"}, "explain"),
    ("What is a VPN split tunnel?", {"vpn"}, "what"),
    ("What\u2019s a VPN", {"vpn"}, "what's"),
    ("history of the vpn", {"vpn"}, "history"),
    ("write me a poem about vpn", {"vpn"}, "write"),
    ("how does the vpn work", {"vpn"}, "how"),
    ("explain why our vpn fails", {"vpn"}, None),        # ownership word
    ("explain the env_var setting", {"env_var"}, None),  # a store identifier
    ("the vpn fails", {"vpn"}, None),                    # no general form
    ("I'm asking: what is dns", {"dns"}, None),
])
def test_general_request(text, matched, reason):
    assert general_request(text, matched) == reason


# --------------------------------------------------------------------------- per-cluster scores


def found_words():
    """Prompt words as lookup_stems gives them: "bash" in cluster 0's tags and a line of each
    cluster; "setx" and "reboot" in line (1, 1); "label" in cluster 0's label."""
    return {
        "bash": (1.0, (0, TAGS, 0, 1, 1, 1), "bash"),
        "setx": (3.0, (1, 1), "setx"),
        "reboot": (2.0, (1, 1, 1, 2), "reboot"),
        "label": (1.5, (0, LABEL), "label"),
    }


def test_score_parts_split_tag_label_and_member_weight():
    parts = score_parts(found_words(), settings(weighted_tag_boost=2.0))
    assert parts["cluster_part"] == {0: 1.0 * 2.0 + 1.5}
    assert parts["tag_words"] == {0: ["bash", "label"]}
    assert parts["member_words"] == {1: ["bash", "setx", "reboot"]}
    assert parts["member_only"] == {1: 1.0 + 3.0 + 2.0}
    assert parts["line_weight"] == {(0, 1): 1.0, (1, 1): 6.0, (1, 2): 2.0}
    assert parts["line_words"] == {(0, 1): ["bash"], (1, 1): ["bash", "setx", "reboot"], (1, 2): ["reboot"]}
    assert parts["rare"] == ("setx", 3.0, 1, 1)


@pytest.mark.parametrize("found, rare", [
    # the heavier of two one-line words wins; on equal weight the first in alphabetical order
    ({"abcd": (2.0, (0, 0), "abcd"), "wxyz": (3.0, (0, 0), "wxyz")}, ("wxyz", 3.0, 0, 0)),
    ({"wxyz": (2.0, (0, 0), "wxyz"), "abcd": (2.0, (0, 0), "abcd")}, ("abcd", 2.0, 0, 0)),
    ({"abcd": (2.0, (0, 0), "abcd"), "wxyz": (2.0, (0, 0), "wxyz")}, ("abcd", 2.0, 0, 0)),
    # three letters is too short; a repaired word and a tag word are never rare
    ({"abc": (2.0, (0, 0), "abc"), "wxyz": (1.0, (0, 0), "wxyz")}, ("wxyz", 1.0, 0, 0)),
    ({"abcd": (2.0, (0, 0), "abxd"), "wxyz": (1.0, (0, 0), "wxyz")}, ("wxyz", 1.0, 0, 0)),
    ({"abcd": (2.0, (0, TAGS), "abcd"), "wxyz": (1.0, (0, 0), "wxyz"), "vvvv": (1.0, (0, 1), "vvvv")}, None),
    # a word in two lines is not rare
    ({"abcd": (2.0, (0, 0, 0, 1), "abcd"), "wxyz": (1.0, (0, 0), "wxyz")}, ("wxyz", 1.0, 0, 0)),
    # alone in its line: not decisive
    ({"abcd": (2.0, (0, 0), "abcd"), "wxyz": (1.0, (0, 1), "wxyz")}, None),
])
def test_the_rare_word(found, rare):
    assert score_parts(found, settings())["rare"] == rare


def test_a_word_in_a_clusters_tags_and_label_counts_once_at_the_tag_boost():
    parts = score_parts({"bash": (1.0, (0, LABEL, 0, TAGS, 0, 0), "bash")}, settings(weighted_tag_boost=3.0))
    assert parts["cluster_part"] == {0: 3.0} and parts["member_only"] == {}
    assert parts["line_weight"] == {(0, 0): 1.0}
    only_label = score_parts({"bash": (1.0, (0, LABEL, 0, 0), "bash")}, settings(weighted_tag_boost=3.0))
    assert only_label["cluster_part"] == {0: 1.0} and only_label["tag_words"] == {0: ["bash"]}


def test_best_lines_and_member_part():
    assert best_lines({(0, 0): 1.0, (0, 1): 3.0, (1, 0): 2.0, (2, 0): 0.0}) == {0: 3.0, 1: 2.0}
    parts = {"member_only": {0: 2.5, 1: 5.0}}
    assert member_part(parts, 0, {0: 3.0, 1: 2.0}) == 2.5      # capped by the member-only total
    assert member_part(parts, 1, {0: 3.0, 1: 2.0}) == 2.0
    assert member_part(parts, 2, {0: 3.0}) == 0.0


def test_rank_parts_scores_tags_best_line_and_spread():
    parts = score_parts(found_words(), settings())
    rows = rank_parts(parts, settings(weighted_spread=0.5))
    # cluster 1: best line 6.0 in full, no rest; cluster 0: tags 2.0 + label 1.5, its line's bash is a tag word
    assert rows == [(1, 6.0, [], ["bash", "reboot", "setx"]), (0, 3.5, ["bash", "label"], [])]
    spread = {"cluster_part": {}, "member_only": {0: 5.0}, "tag_words": {}, "member_words": {0: ["a", "b"]},
              "line_weight": {(0, 0): 3.0, (0, 1): 2.0}}
    assert rank_parts(spread, settings(weighted_spread=0.25)) == [(0, 3.5, [], ["a", "b"])]


def test_rank_parts_breaks_ties_by_tag_words_then_position():
    parts = {"cluster_part": {0: 2.0, 1: 2.0, 2: 2.0, 3: 1.0}, "member_only": {}, "line_weight": {},
             "tag_words": {0: ["a"], 1: ["b", "c"], 2: ["d"], 3: ["e", "f", "g"]}, "member_words": {}}
    assert [row[0] for row in rank_parts(parts, settings())] == [1, 0, 2, 3]


def test_rank_parts_breaks_full_ties_by_position_not_set_order():
    # {1, 8} iterates as 8, 1 (a set of small ints is ordered by hash slot): the rank must not follow it
    parts = {"cluster_part": {8: 2.0, 1: 2.0}, "member_only": {}, "line_weight": {},
             "tag_words": {8: ["a"], 1: ["b"]}, "member_words": {}}
    assert list({8, 1}) == [8, 1]
    assert [row[0] for row in rank_parts(parts, settings())] == [1, 8]


def test_rank_parts_rounds_scores_to_four_places():
    parts = {"cluster_part": {0: 1.0 / 3.0}, "member_only": {}, "line_weight": {}, "tag_words": {0: ["a"]},
             "member_words": {}}
    assert rank_parts(parts, settings())[0][1] == 0.3333


def test_focus_is_the_most_words_in_one_line_of_that_cluster():
    line_words = {(0, 0): ["a"], (0, 1): ["a", "b"], (1, 0): ["a", "b", "c"]}
    assert focus(0, line_words) == 2 and focus(1, line_words) == 3 and focus(2, line_words) == 0


# --------------------------------------------------------------------------- the choice


@pytest.mark.parametrize("rows, rare, floor, overrides, chosen", [
    ([], None, 1.0, {}, []),
    ([(0, 0.9, [], [])], None, 1.0, {}, []),                              # under the floor
    ([(0, 1.0, [], [])], None, 1.0, {}, [0]),                             # at the floor
    ([(0, 0.0, [], [])], None, 0.0, {}, []),                              # zero never fires
    ([(0, -1.0, [], [])], None, -2.0, {}, []),
    ([(0, 4.0, [], []), (1, 2.0, [], [])], None, 1.0, {"second_ratio": 0.5}, [0, 1]),   # second at the ratio
    ([(0, 4.0, [], []), (1, 1.9, [], [])], None, 1.0, {"second_ratio": 0.5}, [0]),
    ([(0, 4.0, [], []), (1, 2.0, [], [])], None, 2.5, {"second_ratio": 0.1}, [0]),      # second under the floor
    ([(0, 4.0, [], []), (1, 2.5, [], [])], None, 2.5, {"second_ratio": 0.1}, [0, 1]),   # second at the floor
    ([(0, 4.0, [], []), (1, 2.0, [], []), (2, 2.0, [], [])], None, 1.0, {"second_ratio": 0.5}, [0]),  # tied third
    ([(0, 4.0, [], []), (1, 2.0, [], []), (2, 1.0, [], [])], None, 1.0, {"second_ratio": 0.5}, [0, 1]),
    ([(0, 4.0, [], []), (1, 1.0, [], [])], ("w", 2.0, 5, 0), 1.0, {}, [0, 5]),           # the rare word's cluster
    ([(0, 4.0, [], []), (1, 3.0, [], [])], ("w", 2.0, 5, 0), 1.0, {"second_ratio": 0.5}, [0, 5]),
    ([(0, 4.0, [], []), (1, 3.0, [], [])], ("w", 2.0, 1, 0), 1.0, {"second_ratio": 0.5}, [0, 1]),
    ([(0, 4.0, [], [])], ("w", 2.0, 0, 0), 1.0, {}, [0]),
    ([(0, 4.0, [], [])], ("w", 2.0, 5, 0), 1.0, {"rare_word_rule": False}, [0]),
])
def test_choose_clusters(rows, rare, floor, overrides, chosen):
    assert choose_clusters(rows, rare, floor, settings(**overrides)) == chosen


def select_table():
    members = tuple((f"m{i}", "env", f"hook {i}") for i in range(4))
    return {"clusters": [("c0", (), "", members), ("c1", (), "", members[:2])]}


def test_select_member_lines_keeps_every_line_under_the_cap():
    lines, total = select_member_lines(select_table(), [1, 0], {}, 6)
    assert total == 6
    assert lines == [(1, 0, "m0", "hook 0"), (1, 1, "m1", "hook 1")] + [(0, i, f"m{i}", f"hook {i}") for i in range(4)]


def test_select_member_lines_keeps_the_heaviest_lines_at_the_cap_in_cluster_then_file_order():
    weights = {(0, 3): 2.0, (0, 1): 1.0, (1, 1): 5.0}
    lines, total = select_member_lines(select_table(), [0, 1], weights, 3)
    assert total == 6 and lines == [(0, 1, "m1", "hook 1"), (0, 3, "m3", "hook 3"), (1, 1, "m1", "hook 1")]
    # lines of equal weight: the first cluster's, then the first lines
    lines, _ = select_member_lines(select_table(), [0, 1], {}, 3)
    assert lines == [(0, 0, "m0", "hook 0"), (0, 1, "m1", "hook 1"), (0, 2, "m2", "hook 2")]
    lines, _ = select_member_lines(select_table(), [1, 0], {}, 3)
    assert lines == [(1, 0, "m0", "hook 0"), (1, 1, "m1", "hook 1"), (0, 0, "m0", "hook 0")]


def test_learned_hits_by_line():
    table = {"learned_line_postings": {"wireguard": (0, 1, 1, 0), "tunnel": (0, 1)}}
    assert learned_hits_by_line({"wireguard", "tunnel", "other"}, table) == {
        (0, 1): ["tunnel", "wireguard"], (1, 0): ["wireguard"]}
    assert learned_hits_by_line({"wireguard", "tunnel"}, table, positions={1}) == {(1, 0): ["wireguard"]}
    assert learned_hits_by_line({"wireguard"}, {"learned_line_postings": {}}) == {}
    assert learned_hits_by_line({"wireguard"}, {}) == {}


@pytest.mark.parametrize("top, second, floor, summary", [
    (6.0, 2.0, 4.0, {"floor": 4.0, "top_score": 6.0, "second_score": 2.0, "margin_over_floor": 2.0,
                     "lead_over_second": 4.0, "confidence": 0.6}),
    (1.0 / 3, 0.0, 1.0, {"floor": 1.0, "top_score": 1.0 / 3, "second_score": 0.0, "margin_over_floor": -0.6667,
                         "lead_over_second": 0.3333, "confidence": 0.25}),
    (2.0, 0.0, 0.0, {"floor": 0.0, "top_score": 2.0, "second_score": 0.0, "margin_over_floor": 2.0,
                     "lead_over_second": 2.0, "confidence": 1.0}),
    (0.0, 0.0, 4.0, {"floor": 4.0, "top_score": 0.0, "second_score": 0.0, "margin_over_floor": -4.0,
                     "lead_over_second": 0.0, "confidence": 0.0}),
    (1.0, 0.0, 2.0, {"floor": 2.0, "top_score": 1.0, "second_score": 0.0, "margin_over_floor": -1.0,
                     "lead_over_second": 1.0, "confidence": 0.3333}),
    (0.5, 0.0, 0.0, {"floor": 0.0, "top_score": 0.5, "second_score": 0.0, "margin_over_floor": 0.5,
                     "lead_over_second": 0.5, "confidence": 1.0}),     # any score at a zero floor
    (0.0, 0.0, 0.0, {"floor": 0.0, "top_score": 0.0, "second_score": 0.0, "margin_over_floor": 0.0,
                     "lead_over_second": 0.0, "confidence": 0.0}),
])
def test_score_summary(top, second, floor, summary):
    assert score_summary(top, second, floor) == summary


# --------------------------------------------------------------------------- what is sent

CLUSTERS = [("c0", (), "", (("a0", "env", "hook a0"), ("a1", "env", "hook a1"))),
            ("c1", (), "", (("b0", "env", "hook b0"),))]


def finish(chosen, gate=None, select=None, taught=None, max_chars=4000):
    decision = {}
    asked = []

    def default_select(picked):
        asked.append(list(picked))
        return [(p, i, m[0], m[2]) for p in picked for i, m in enumerate(CLUSTERS[p][3])], 3

    def taught_of(positions):
        asked.append(sorted(positions))
        return taught or {}

    kept = finish_decision(decision, CLUSTERS, chosen, gate, select or default_select, taught_of,
                           dict(default_settings(), max_context_chars=max_chars))
    return kept, decision, asked


def test_finish_decision_sends_the_selected_lines():
    kept, decision, asked = finish([1, 0], taught={(0, 1): ["wg"]})
    assert kept == [1, 0] and asked == [[1, 0], [0, 1]]
    assert decision == {
        "routed": ["c1", "c0"], "clusters": ["c1", "c0"],
        "lines": [{"cluster_id": "c1", "slug": "b0", "hook": "hook b0"},
                  {"cluster_id": "c0", "slug": "a0", "hook": "hook a0"},
                  {"cluster_id": "c0", "slug": "a1", "hook": "hook a1", "learned_hits": ["wg"]}],
        "total_member_lines": 3, "size_capped_lines": 0,
        "additional_context": "Routed memory clusters: c1, c0\n- b0 \u2014 hook b0\n- a0 \u2014 hook a0\n"
                              "- a1 \u2014 hook a1",
    }


def test_finish_decision_sends_nothing_when_the_gate_silenced_or_nothing_was_chosen():
    for chosen, gate in (([0], "explain"), ([], None)):
        kept, decision, asked = finish(chosen, gate=gate)
        assert kept == [] and asked == []
        assert decision == {"routed": [], "clusters": [], "lines": [], "total_member_lines": 0,
                            "size_capped_lines": 0, "additional_context": None}


def test_finish_decision_drops_a_cluster_that_got_no_line():
    kept, decision, _ = finish([0, 1], select=lambda picked: ([(0, 0, "a0", "hook a0")], 3))
    assert kept == [0] and decision["routed"] == ["c0"]
    assert decision["additional_context"] == ("Routed memory cluster: c0 (showing 1 of 3 member lines; capped)\n"
                                              "- a0 \u2014 hook a0")
    assert decision["total_member_lines"] == 3


def test_finish_decision_cuts_lines_to_the_context_cap():
    long = "x" * 80
    lines = [(1, 0, "b0", long), (0, 0, "a0", long), (0, 1, "a1", long)]
    two = (f"Routed memory clusters: c1, c0 (showing 2 of 3 member lines; the rest exceeded the size cap)\n"
           f"- b0 \u2014 {long}\n- a0 \u2014 {long}")
    kept, decision, _ = finish([1, 0], select=lambda picked: (lines, 3), max_chars=len(two))
    assert [line["slug"] for line in decision["lines"]] == ["b0", "a0"]
    assert decision["size_capped_lines"] == 1 and decision["additional_context"] == two
    assert kept == [1, 0] and decision["routed"] == ["c1", "c0"]


def test_select_member_lines_breaks_ties_by_file_order_not_by_slug():
    members = (("zeta", "env", "z"), ("alpha", "env", "a"), ("mid", "env", "m"))
    table = {"clusters": [("c0", (), "", members)]}
    lines, total = select_member_lines(table, [0], {(0, 2): 1.0}, 2)
    # the heaviest line, then the first in the file; sent in file order
    assert total == 3 and lines == [(0, 0, "zeta", "z"), (0, 2, "mid", "m")]
    lines, _ = select_member_lines(table, [0], {}, 2)
    assert lines == [(0, 0, "zeta", "z"), (0, 1, "alpha", "a")]


# --------------------------------------------------------------------------- what is read once


def test_the_intent_gates_patterns_compile_on_first_use_once(monkeypatch):
    from router.routing import weightedscore

    monkeypatch.setattr(weightedscore, "_COMPILED", {})
    # a prompt holding no word of any general form is answered without compiling anything
    assert general_request("the vpn fails on our dns", {"dns"}) is None and weightedscore._COMPILED == {}
    assert general_request("explain how dns works", {"dns"}) == "explain"
    compiled = dict(weightedscore._COMPILED)
    assert len(compiled) == 2 and all(hasattr(p, "search") for p in compiled.values())
    assert general_request("what is a vpn", {"vpn"}) == "what"
    assert all(weightedscore._COMPILED[source] is pattern for source, pattern in compiled.items())


def test_the_stop_stems_are_read_from_the_shipped_file_not_computed(monkeypatch):
    from router.routing import weightedscore
    from router.tokens import STOPWORDS

    expected = stop_stems_of(STOPWORDS)

    def not_computed(_stopwords):
        raise AssertionError("the shipped file was not read")

    monkeypatch.setattr(weightedscore, "stop_stems_of", not_computed)
    assert weightedscore._load_stop_stems() == expected


def test_without_the_shipped_file_the_stop_stems_follow_the_rule(monkeypatch):
    from router import safeio
    from router.routing import weightedscore
    from router.tokens import STOPWORDS

    def unreadable(*_args, **_kwargs):
        raise OSError("gone")

    monkeypatch.setattr(safeio, "open_regular", unreadable)
    assert weightedscore._load_stop_stems() == stop_stems_of(STOPWORDS) and "becaus" in stop_stems_of(STOPWORDS)


def test_a_repair_is_backed_by_any_line_of_an_exact_word_not_only_its_first():
    table = postings_table()
    table["term_postings"]["zscaler"] = (2.0, 0, 0, 1, 0)      # in a line of each cluster
    found = lookup_stems({"certficate", "zscaler"}, table, settings())
    assert found["certificate"] == (2.5 * 0.7, (1, 0), "certficate")   # backed by zscaler's second line
