"""Terms, weights, agglomerative clustering under a size ceiling, and tag choice."""

from harness.clusters import clustering


def test_default_target_is_about_one_cluster_per_five_members():
    assert [clustering.default_target(n) for n in (1, 2, 3, 10, 126, 1000)] == [1, 1, 1, 2, 25, 200]


def test_agglomerate_respects_seeds_and_ceiling():
    vectors = [(("a", 1.0),), (("a", 1.0),), (("a", 1.0),), (("b", 1.0),), (("a", 1.0),)]
    # Members 0 and 1 are seeded apart, so identical vectors still end in different clusters.
    groups = clustering.agglomerate(vectors, target=1, max_size=3, groups=[("x", [0]), ("y", [1])])
    assert all(len(g) <= 3 for g in groups)
    assert not any(0 in g and 1 in g for g in groups)
    assert [3] in groups  # shares no term with anyone


def test_place_new_members_joins_the_most_similar_group_with_room():
    vectors = [(("a", 1.0),), (("b", 1.0),), (("a", 1.0),), (("c", 1.0),), (("a", 1.0),)]
    placed = clustering.place_new_members(vectors, {"ga": [0], "gb": [1]}, [2, 3, 4], max_size=2)
    assert placed == {2: "ga"}  # 3 resembles nothing; 4 finds ga full


def test_tags_prefer_words_several_members_share():
    groups = [[0, 1, 2], [3]]
    term_sets = [frozenset({"pnpm", "lockfile", "alpha"}), frozenset({"pnpm", "lockfile", "beta"}),
                 frozenset({"pnpm", "gamma"}), frozenset({"zebra", "okapi", "quagga", "lion"})]
    df = clustering.document_frequencies(term_sets)
    tags = clustering.choose_tags(groups, term_sets, df, len(term_sets))
    assert set(tags[0][:2]) == {"pnpm", "lockfile"}
    assert len(tags[1]) == clustering.MIN_TAGS  # a loner fills up with its own words
