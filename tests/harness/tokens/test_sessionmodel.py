"""The session model: held lines, compactions, totals, break-even and the worst case, hand-computed."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.tokens import sessionmodel
from harness.tokens.sessionmodel import Step


def steps_of(sent, calls=1, compact_after=(), resent=0):
    return [Step(size, calls, i in compact_after, resent if i in compact_after else 0) for i, size in enumerate(sent)]


@pytest.mark.parametrize("flat, slim, sent, calls, compact_after, resent, rows", [
    # Each sent text is paid on its own call and every later one: 30+10, 30+10, 30+10+20.
    (100, 30, [10, 0, 20], 1, (), 0, [(100, 40), (200, 80), (300, 140)]),
    # Two calls per prompt double both sides.
    (100, 30, [10, 0, 20], 2, (), 0, [(200, 80), (400, 160), (600, 280)]),
    # A compaction after prompt 1 forgets the 10; the SessionStart hook's 5 is held from prompt 2.
    (100, 30, [10, 0, 20], 1, (0,), 5, [(100, 40), (200, 75), (300, 130)]),
    # A compaction that sends nothing again empties the history.
    (100, 30, [50, 0, 0], 1, (0,), 0, [(100, 80), (200, 110), (300, 140)]),
    (100, 30, [], 1, (), 0, []),
])
def test_cumulative_hand_computed(flat, slim, sent, calls, compact_after, resent, rows):
    assert sessionmodel.cumulative(steps_of(sent, calls, compact_after, resent), flat, slim) == rows


def test_totals_split_index_and_injections_and_count_compactions():
    totals = sessionmodel.session_totals(steps_of([10, 0, 20], 1, (0,), 5), 100, 30)
    assert totals["flat_total"] == 300 and totals["slim_total"] == 130
    assert totals["slim_index_total"] == 90 and totals["slim_injection_total"] == 40
    assert totals["compactions"] == 1 and totals["sent_tokens"] == 30
    assert totals["net_saving"] == 170 and totals["saving_percent"] == 56.7
    assert totals["share_of_flat"] == round(130 / 300, 3)


@pytest.mark.parametrize("flat, slim, sent, compact_after, break_even, heavier", [
    # 60+50 > 100 at once; totals 110 > 100.
    (100, 60, [50, 50], (), 1, 1),
    # Held lines stop the growth: 10, 20, 30 ... never reach 100 over 5 prompts at 80 + 15.
    (100, 80, [15, 0, 0, 0, 0], (), None, None),
    # 80 + 15 + 15 = 110 > 100 on prompt 2's calls; totals 95+110=205 > 200 at prompt 2.
    (100, 80, [15, 15], (), 2, 2),
    # A compaction after every prompt keeps the history from ever adding up.
    (100, 80, [15, 15, 15, 15], (0, 1, 2, 3), None, None),
])
def test_break_even_and_first_heavier_call(flat, slim, sent, compact_after, break_even, heavier):
    steps = steps_of(sent, 1, compact_after)
    assert sessionmodel.break_even(steps, flat, slim) == break_even
    assert sessionmodel.first_heavier_call(steps, flat, slim) == heavier


def test_run_session_compacts_at_the_threshold_and_restarts_from_the_base():
    sent = [100, 0, 0, 0, 0, 0]
    compacted_at = []

    def compact(index):
        compacted_at.append(index)
        return 7

    steps = sessionmodel.run_session(6, lambda i: sent[i], compact, memory_tokens=50, base=1000, per_prompt=400,
                                     threshold=2000)
    # context: 1050 +500 = 1550; +400 = 1950; +400 = 2350 >= 2000 -> compact after prompt 3 (index 2),
    # then 1050 + 7 = 1057; +400 1457; +400 1857; +400 2257 -> compact after index 5.
    assert compacted_at == [2, 5]
    assert [s.compacted for s in steps] == [False, False, True, False, False, True]
    assert [s.resent for s in steps] == [0, 0, 7, 0, 0, 7]
    assert [s.sent for s in steps] == sent


def test_run_session_without_growth_never_compacts():
    steps = sessionmodel.run_session(50, lambda i: 10_000, lambda i: pytest.fail("compacted"), memory_tokens=0,
                                     per_prompt=0)
    assert not any(step.compacted for step in steps)


def test_the_documented_threshold_is_claude_codes():
    # 200,000-token window - min(max output, 20,000) - the 13,000-token buffer (docs/slim-and-tokens.md).
    assert sessionmodel.AUTOCOMPACT_AT == 167_000


def test_cycle_is_deterministic():
    assert sessionmodel.cycle([1, 2, 3], 7) == [1, 2, 3, 1, 2, 3, 1]
    assert sessionmodel.cycle([], 3) == [0, 0, 0]
    assert sessionmodel.cycle([5], 0) == []


@pytest.mark.parametrize("n, expected", [
    (0, []), (1, [0]), (2, [0, 1]), (3, [0, 2, 1]), (5, [0, 3, 1, 4, 2]),
])
def test_spread_order_hand_computed(n, expected):
    assert sessionmodel.spread_order(n) == expected


@pytest.mark.parametrize("n", [4, 10, 60, 133, 144])
def test_spread_order_is_a_permutation_whose_prefixes_sample_the_whole_suite(n):
    order = sessionmodel.spread_order(n)
    assert sorted(order) == list(range(n))
    prefix = order[:max(4, n // 5)]
    assert any(i < n // 2 for i in prefix) and any(i >= n // 2 for i in prefix)


def rows(cluster, sizes):
    return [(f"{cluster}{i}", size, f"{cluster}{i}") for i, size in enumerate(sizes)]


@pytest.mark.parametrize("clusters, held, limit, expected", [
    # One cluster's four longest.
    ([("a", rows("a", [5, 9, 1, 7, 8]))], set(), 4, (("a",), ["a1", "a4", "a3", "a0"])),
    # Two clusters beat one: a's two longest and b's two longest.
    ([("a", rows("a", [9, 9, 1, 1])), ("b", rows("b", [8, 8, 1]))], set(), 4, (("a", "b"), ["a0", "a1", "b0", "b1"])),
    # A second cluster with fewer lines than the rest of the limit still counts.
    ([("a", rows("a", [9, 9])), ("b", rows("b", [8]))], set(), 4, (("a", "b"), ["a0", "a1", "b0"])),
    # Held lines are never chosen again.
    ([("a", rows("a", [9, 9, 3]))], {"a0", "a1"}, 4, (("a",), ["a2"])),
    # Everything held: nothing.
    ([("a", rows("a", [9]))], {"a0"}, 4, ((), [])),
    # Ties go to the earlier cluster in file order.
    ([("a", rows("a", [5])), ("b", rows("b", [5])), ("c", rows("c", [5]))], set(), 1, (("a",), ["a0"])),
])
def test_worst_lines(clusters, held, limit, expected):
    assert sessionmodel.worst_lines(clusters, held, limit) == expected


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(1, 50), min_size=0, max_size=5), min_size=1, max_size=5), st.integers(1, 4))
def test_worst_lines_is_the_best_of_every_pair_by_brute_force(sizes, limit):
    import itertools

    clusters = [(f"c{i}", rows(f"c{i}", s)) for i, s in enumerate(sizes)]
    best = 0
    for pair in itertools.chain(((c,) for c in clusters), itertools.combinations(clusters, 2)):
        free = sorted((row[1] for _cid, lines in pair for row in lines), reverse=True)
        best = max(best, sum(free[:limit]))
    _ids, lines = sessionmodel.worst_lines(clusters, set(), limit)
    size_of = {row[2]: row[1] for _cid, lines_ in clusters for row in lines_}
    assert sum(size_of[line] for line in lines) == best
    assert len(lines) <= limit
