"""benchmarks/realwording_eval.py: issue 34's per-store targets, each miss named."""

import pytest

from support.benchscript import load_benchmark


@pytest.fixture(scope="module")
def ev():
    return load_benchmark("realwording_eval")


def fig(facts=0.9, para=0.5, priming=0.05, chars=200.0, direct=0.9):
    return {"fact_recall": facts, "paraphrase_recall": para, "false_priming": priming, "routed_chars": chars,
            "by_kind": {"direct": {"fact_recall": direct, "cases": 10}}}


@pytest.mark.parametrize("new, named", [
    (fig(facts=0.79), "fact recall 0.79"),
    (fig(para=0.44), "paraphrase recall 0.44"),
    (fig(priming=0.09), "false priming 0.09"),
    (fig(chars=251), "251 chars"),
    (fig(direct=0.8), "direct 0.80 below plain 0.90"),
])
def test_each_missed_target_is_named(ev, new, named):
    misses = ev.missed(new, fig())
    assert len(misses) == 1 and named in misses[0]


def test_a_store_meeting_every_target_misses_none(ev):
    assert ev.missed(fig(), fig()) == [] and ev.missed(fig(para=None), fig()) == []


def test_the_held_out_stores_are_the_four_and_none_of_the_pool(ev):
    names = [s.name for s in ev.held_out_stores()]
    assert {"heldout", "heldout2"} <= set(names)
    assert not set(names) & {s.name for s in ev.pool_stores()}
