"""The session model: totals, break-even points and scenarios, hand-computed and cross-checked."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.tokens import sessionmodel


@pytest.mark.parametrize("flat, slim, injections, k, flat_total, slim_total", [
    # The issue's case: 30*3 + 10*3 + 0*2 + 20*1 = 140.
    (100, 30, [10, 0, 20], 1, 300, 140),
    # Two API calls per prompt double both sides.
    (100, 30, [10, 0, 20], 2, 600, 280),
    # No injections: slim is just the smaller index on every call.
    (100, 30, [0, 0, 0, 0], 1, 400, 120),
    # One early injection is re-sent on every later call: 10*4 + 50*4.
    (100, 10, [50, 0, 0, 0], 1, 400, 240),
    # The same injection late costs once: 10*4 + 50*1.
    (100, 10, [0, 0, 0, 50], 1, 400, 90),
    # Slim can lose: 60*2 + 50*2 + 50*1 = 270 > 200.
    (100, 60, [50, 50], 1, 200, 270),
    (100, 30, [], 1, 0, 0),
])
def test_session_totals_hand_computed(flat, slim, injections, k, flat_total, slim_total):
    totals = sessionmodel.session_totals(flat, slim, injections, k)
    assert totals["flat_total"] == flat_total
    assert totals["slim_total"] == slim_total
    assert totals["net_saving"] == flat_total - slim_total
    assert totals["slim_index_total"] + totals["slim_injection_total"] == slim_total
    assert totals["api_calls"] == len(injections) * k


def test_session_totals_breakdown_of_the_issue_case():
    totals = sessionmodel.session_totals(100, 30, [10, 0, 20], 1)
    assert totals["slim_index_total"] == 90 and totals["slim_injection_total"] == 50
    assert totals["saving_percent"] == 53.3


def test_cumulative_totals_hand_computed():
    assert sessionmodel.cumulative_totals(100, 30, [10, 0, 20]) == [(100, 40), (200, 80), (300, 140)]
    assert sessionmodel.cumulative_totals(100, 30, [10, 0, 20], 2) == [(200, 80), (400, 160), (600, 280)]


@pytest.mark.parametrize("flat, slim, injections, break_even, heavier", [
    # m=20 on every prompt: after p prompts slim = 30p + 20p(p+1)/2, flat = 100p. p=6: 600 vs 600
    # (a tie is not "more"); p=7: 770 > 700. One call is heavier from p=4: 30 + 80 > 100.
    (100, 30, [20] * 12, 7, 4),
    (100, 30, [20] * 6, None, 4),    # the session is too short to reach break-even
    (100, 30, [0] * 50, None, None),
    (100, 120, [0, 0], 1, 1),         # a slim index bigger than the flat one loses at once
    (100, 30, [70, 0, 0], None, None),  # 30 + 70 = 100 on every call: ties all the way, never more
])
def test_break_even_and_first_heavier_call(flat, slim, injections, break_even, heavier):
    assert sessionmodel.break_even_prompts(flat, slim, injections) == break_even
    assert sessionmodel.first_heavier_call(flat, slim, injections) == heavier


@pytest.mark.parametrize("flat, slim, m, break_even, heavier", [
    (100, 30, 20, 7, 4),
    (100, 30, 30, 4, 3),
    (100, 30, 0, None, None),
    (100, 130, 0, 1, 1),
    (100, 100, 5, 1, 1),
    (4646, 952, 337, 21, 11),
])
def test_closed_forms_hand_computed(flat, slim, m, break_even, heavier):
    assert sessionmodel.break_even_constant(flat, slim, m) == break_even
    assert sessionmodel.heavier_call_constant(flat, slim, m) == heavier


@settings(max_examples=200, deadline=None)
@given(flat=st.integers(0, 3000), slim=st.integers(0, 3000), m=st.integers(1, 400))
def test_closed_forms_agree_with_the_scan(flat, slim, m):
    horizon = 2 * (abs(flat - slim) // m) + 5
    sequence = [m] * horizon
    assert sessionmodel.break_even_constant(flat, slim, m) == sessionmodel.break_even_prompts(flat, slim, sequence)
    assert sessionmodel.heavier_call_constant(flat, slim, m) == sessionmodel.first_heavier_call(flat, slim, sequence)


@settings(max_examples=100, deadline=None)
@given(flat=st.integers(0, 1000), slim=st.integers(0, 1000),
       injections=st.lists(st.integers(0, 300), max_size=30), k=st.integers(1, 4))
def test_session_totals_equal_the_last_cumulative_row(flat, slim, injections, k):
    totals = sessionmodel.session_totals(flat, slim, injections, k)
    rows = sessionmodel.cumulative_totals(flat, slim, injections, k)
    assert (totals["flat_total"], totals["slim_total"]) == (rows[-1] if rows else (0, 0))


def test_break_even_does_not_depend_on_calls_per_prompt():
    injections = [40, 0, 90, 10] * 10
    for k in (1, 3, 7):
        rows = sessionmodel.cumulative_totals(500, 120, injections, k)
        first = next((p for p, (f, s) in enumerate(rows, 1) if s > f), None)
        assert first == sessionmodel.break_even_prompts(500, 120, injections)


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
    # A suite with its first half silent: any prefix of 10+ prompts sees both halves.
    prefix = order[:max(4, n // 5)]
    assert any(i < n // 2 for i in prefix) and any(i >= n // 2 for i in prefix)


def test_session_scenarios_hand_computed():
    # spread_order(3) is [0, 2, 1], so the cycled sequence is [10, 20, 0].
    scenarios = sessionmodel.session_scenarios(100, 30, [10, 0, 20], turns=3)
    cycled, typical, worst = scenarios["suite_cycled"], scenarios["typical"], scenarios["worst"]
    # 30*3 + 10*3 + 20*2 + 0*1 = 160
    assert cycled["flat_total"] == 300 and cycled["slim_total"] == 160
    # Mean 10 on every prompt: 90 + 10*(3+2+1) = 150.
    assert typical["injection_tokens_per_prompt"] == 10 and typical["slim_total"] == 150
    # Max 20 on every prompt: 90 + 20*6 = 210; break-even floor(2*70/20) = 7; heavier call at 4.
    assert worst["injection_tokens_per_prompt"] == 20 and worst["slim_total"] == 210
    assert worst["break_even_prompts"] == 7 and worst["first_heavier_call_prompt"] == 4
    # Cycled [10, 20, 0] scanned: cumulative slim after p prompts first exceeds 100p at p = 13
    # (p=12: 30*12 + 10*(12+9+6+3) + 20*(11+8+5+2) = 1180 <= 1200; p=13: 1340 > 1300).
    assert cycled["break_even_prompts"] == 13 and cycled["break_even_horizon"] == 30
    rows = sessionmodel.cumulative_totals(100, 30, sessionmodel.cycle([10, 20, 0], 30))
    assert rows[11] == (1200, 1180) and rows[12][1] > rows[12][0]


def test_session_scenarios_fractional_mean_stays_exact():
    scenarios = sessionmodel.session_scenarios(100, 40, [1, 2], turns=2)
    typical = scenarios["typical"]
    assert typical["injection_tokens_per_prompt"] == 1.5
    # 40*2 + 1.5*(2+1) = 84.5
    assert typical["slim_total"] == 84.5 and typical["net_saving"] == 115.5
    # floor(2*60/1.5) = 80 exactly (a float division could give 79.999...).
    assert typical["break_even_prompts"] == 80


def test_session_scenarios_without_injections():
    scenarios = sessionmodel.session_scenarios(100, 30, [0, 0], turns=5)
    assert scenarios["worst"]["break_even_prompts"] is None
    assert scenarios["suite_cycled"]["net_saving"] == 350
