"""harness.mcp.resultcap: the longest prefix of a list that fits the cap, and a result that fits left alone."""

import pytest

from harness.mcp.resultcap import cap_lists, json_size


@pytest.mark.parametrize("size", [1, 5, 40])
def test_cap_lists_keeps_the_longest_prefix_that_fits(size):
    result = {"head": "x" * 50, "items": [{"n": i, "pad": "y" * 20} for i in range(200)]}
    limit = json_size({"head": result["head"], "items": result["items"][:size]}) + 400
    capped = cap_lists(result, ("items",), limit)
    shown = capped["truncated"]["items"]["shown"]
    assert capped["items"] == result["items"][:shown] and shown >= size
    assert json_size(capped) <= limit
    assert json_size(dict(capped, items=result["items"][:shown + 1])) > limit


def test_cap_lists_leaves_a_result_that_fits_alone():
    result = {"items": [1, 2, 3]}
    assert cap_lists(result, ("items",), 10_000) is result
