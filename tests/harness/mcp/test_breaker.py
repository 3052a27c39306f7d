"""The MCP server's breaker for a custom provider that keeps overrunning (harness/mcp/breaker.py,
issue 24 item 19): when it opens, how long it stays open, the trial call after the cool-off."""

import pytest

from harness.mcp.breaker import ProviderBreaker, is_overrun
from router.errors import RefusedError

PROVIDER = "slow_provider:make"


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def breaker(threshold=3, cooloff_s=60.0):
    clock = Clock()
    return ProviderBreaker(threshold, cooloff_s, clock), clock


def refused(item):
    try:
        item.check(PROVIDER, 150)
    except RefusedError:
        return True
    return False


# (outcomes recorded, True = overrun) -> whether the next call is refused
@pytest.mark.parametrize("outcomes, expected", [
    ([], False),
    ([True], False),
    ([True, True], False),
    ([True, True, True], True),
    ([True, True, False], False),            # an answer in time resets the count
    ([True, True, False, True, True], False),
    ([True, True, False, True, True, True], True),
    ([False] * 10, False),
])
def test_it_opens_after_three_overruns_in_a_row(outcomes, expected):
    item, _clock = breaker()
    for overran in outcomes:
        item.record(PROVIDER, overran)
    assert refused(item) is expected
    assert item.is_open is expected


def test_open_refuses_with_the_provider_its_budget_when_it_is_tried_again_and_the_fix():
    item, clock = breaker()
    for _ in range(3):
        item.record(PROVIDER, True)
    clock.now += 15
    with pytest.raises(RefusedError) as caught:
        item.check(PROVIDER, 150)
    text = caught.value.format()
    assert f"provider {PROVIDER} overran its budget of 150 ms on 3 calls in a row" in text
    assert "for the next 45 s" in text and "search_memory and get_memory still work" in text
    assert 'provider = "weighted"' in text and "restarting the server resets this" in text


@pytest.mark.parametrize("trial_overran, refused_after", [(True, True), (False, False)])
def test_after_the_cooloff_one_trial_call_decides(trial_overran, refused_after):
    item, clock = breaker()
    for _ in range(3):
        item.record(PROVIDER, True)
    clock.now += 59.9
    assert refused(item)
    clock.now += 0.1
    assert not refused(item)          # the trial call goes through
    item.record(PROVIDER, trial_overran)
    assert refused(item) is refused_after
    if refused_after:
        clock.now += 60
        assert not refused(item)


def test_another_provider_starts_from_nothing():
    item, _clock = breaker()
    for _ in range(3):
        item.record(PROVIDER, True)
    item.check("other_provider:make", 150)   # the config changed: not refused
    item.record("other_provider:make", True)
    assert not item.is_open


@pytest.mark.parametrize("decision, elapsed, budget, expected", [
    ({"explanation": "failed: provider p took longer than its budget of 100 ms"}, 0.12, 0.1, True),
    ({"explanation": "failed: provider p took longer than its budget of 100 ms"}, 0.1, 0.1, True),
    ({"explanation": "failed: provider p: import failed: ImportError"}, 0.04, 0.1, False),  # cost nothing
    ({"explanation": "routed on tags"}, 0.2, 0.1, False),                                 # it answered
    ({"explanation": None}, 0.2, 0.1, False),
    ({}, 0.2, 0.1, False),
    (None, 0.2, 0.1, False),
])
def test_an_overrun_is_a_failure_that_used_the_whole_budget(decision, elapsed, budget, expected):
    assert is_overrun(decision, elapsed, budget) is expected
