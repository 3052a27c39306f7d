"""Bounded lists keep the first items offered and count every one (issue 11)."""

import pytest

from transcripts.bounded import Bounded


@pytest.mark.parametrize("limit,offered", [(3, 2), (3, 3), (3, 10)])
def test_bounded_keeps_the_first_and_counts_all(limit, offered):
    bucket = Bounded(limit)
    for item in range(offered):
        bucket.add(item)
    assert list(bucket) == list(range(min(limit, offered))) and bucket.total == offered


@pytest.mark.parametrize("limit,offered", [(0, 3), (3, 2), (3, 10)])
def test_offer_builds_only_the_items_it_keeps(limit, offered):
    bucket = Bounded(limit)
    built = []

    def make(item):
        built.append(item)
        return item * 10

    for item in range(offered):
        bucket.offer(make, item)
    kept = list(range(min(limit, offered)))
    assert built == kept and list(bucket) == [item * 10 for item in kept] and bucket.total == offered
