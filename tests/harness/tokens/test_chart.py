"""harness.tokens.chart: the session curve drawn in text cells (pure)."""

import pytest

from harness.tokens import chart


def drawn(cells):
    return ["".join(" " if c is None else "#" if c == -1 else chart.MARKERS[c] for c in row) for row in cells]


def test_a_rising_line_goes_from_the_bottom_left_to_the_top_right():
    cells, top = chart.grid([[0, 1, 2, 3, 4]], width=5, height=5)
    assert top == 4
    assert drawn(cells) == ["    o", "   o ", "  o  ", " o   ", "o    "]


def test_a_steep_step_is_drawn_down_the_rows_it_crosses():
    cells, _top = chart.grid([[0, 0, 9, 9]], width=4, height=4)
    rows = drawn(cells)
    assert [row[2] for row in rows] == ["o", "o", "o", " "]   # from just above the last row to the top
    assert rows[3] == "oo  " and rows[0] == "  oo"


def test_where_two_series_meet_the_cell_says_both():
    cells, _top = chart.grid([[1, 2, 3], [1, 5, 9]], width=3, height=3)
    assert cells[2][0] == -1                      # both start at the same value
    assert (cells[2][1], cells[1][1]) == (0, 1) and (cells[1][2], cells[0][2]) == (0, 1)  # then part


def test_the_chart_spans_the_session_by_prompt_number():
    # 10 prompts over 4 columns: 1, 4, 7, 10 (rounded); each column shows its own prompt's value
    assert [chart.prompt_at(c, 4, 10) for c in range(4)] == [1, 4, 7, 10]
    assert [chart.column_of(p, 4, 10) for p in (1, 4, 7, 10)] == [0, 1, 2, 3]
    cells, _top = chart.grid([[0, 0, 0, 9, 0, 0, 0, 0, 0, 0]], width=4, height=2)
    assert drawn(cells) == [" o  ", "o oo"]


def test_too_small_a_chart_is_refused():
    with pytest.raises(ValueError):
        chart.grid([[1, 2]], width=1, height=5)


@pytest.mark.parametrize("marks, width, expected", [
    ([(1, "1"), (10, "10")], 11, "1        10"),                    # the last label ends at the edge
    ([(1, "1"), (3, "3 (--turns)"), (10, "10")], 14, "1  3 (--turns)"),  # "10" would touch it: left out
    ([(1, "1"), (3, "3 (--turns)"), (10, "10")], 20, "1   3 (--turns)   10"),
    ([(1, "start"), (2, "x")], 11, "start"),
])
def test_axis_labels_never_overlap(marks, width, expected):
    assert chart.axis_labels(marks, width, 10) == expected


@pytest.mark.parametrize("value, text", [(0, "0"), (999, "999"), (1234, "1.2k"), (93920, "94k"),
                                         (2_000_000, "2.0M"), (12_500_000, "12M"), (46.5, "46.5")])
def test_short_number(value, text):
    assert chart.short_number(value) == text


@pytest.mark.parametrize("turns, break_evens, cap, prompts", [
    (20, [140, 65], 1330, 175),     # past the later break-even by a quarter, so the crossing shows
    (20, [None, None], 1330, 20),   # slim never exceeds flat: the modelled session alone
    (200, [65], 1330, 200),         # the session is already longer
    (20, [900], 500, 500),          # never past the horizon break-evens were scanned over
])
def test_chart_horizon(turns, break_evens, cap, prompts):
    assert chart.chart_horizon(turns, break_evens, cap) == prompts
