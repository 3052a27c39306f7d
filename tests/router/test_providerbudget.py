"""A custom provider's budget against the hook's timeout (router/providerbudget.py)."""

import pytest

from router.config import DEFAULTS
from router.providerbudget import HOOK_OWN_MS, budget_problem, max_provider_budget_ms


@pytest.mark.parametrize("budget_ms, timeout_s, fits", [
    (150, 5, True), (4000, 5, True), (4001, 5, False), (5000, 5, False), (30_000, 5, False),
    (1, 1, False), (9000, 10, True), (200, 1.5, True), (501, 1.5, False),
])
def test_budget_problem(budget_ms, timeout_s, fits):
    problem = budget_problem(budget_ms, timeout_s)
    assert (problem is None) is fits
    if not fits:
        assert f"provider_timeout_ms = {budget_ms}" in problem
        assert f"at most {max_provider_budget_ms(timeout_s)}" in problem


def test_the_suggested_hook_timeout_fits_the_budget():
    problem = budget_problem(4500, 5)
    suggested = int(problem.rsplit("at least ", 1)[1].split()[0])
    assert budget_problem(4500, suggested) is None and budget_problem(4500, suggested - 1) is not None


def test_the_default_budget_fits_the_timeout_install_writes():
    # install's timeout lives in the harness; the rule lives here, so both ends are checked here.
    from harness.install.hookcommand import HOOK_TIMEOUT_SECONDS

    assert budget_problem(DEFAULTS["provider_timeout_ms"], HOOK_TIMEOUT_SECONDS) is None
    assert max_provider_budget_ms(HOOK_TIMEOUT_SECONDS) == HOOK_TIMEOUT_SECONDS * 1000 - HOOK_OWN_MS
