"""benchmarks/session_sim.py: the session byte model, fed sessions whose figures are known, and the
targets on the example and held-out stores."""

import importlib.util
import json
import pathlib

import pytest

from router.store.clusterfile import load_cluster_file
from router.config import default_settings
from router.providers.provider import build_table, route

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "session_sim.py"
SLIM = 1000


@pytest.fixture(scope="module")
def sim():
    spec = importlib.util.spec_from_file_location("session_sim", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def table(store):
    return build_table(load_cluster_file(str(store)))


def sent_bytes(sim, table, prompt, settings):
    from router.routing.injection import plan_injection

    plan = plan_injection(route(prompt, table, settings), prompt, settings)
    return len(sim.in_request(plan["text"]).encode())


def test_with_dedup_a_repeat_adds_nothing_and_without_it_every_call_grows(sim, table, prompts):
    settings = default_settings()
    size = sent_bytes(sim, table, prompts.setx, settings)
    session = [prompts.setx, prompts.neutral, prompts.setx, prompts.setx]
    on = sim.simulate(session, table, settings, SLIM, dedup=True)
    assert on["per_call"] == [SLIM + size] * 4 and on["prompts_all_held"] == 2
    off = sim.simulate(session, table, settings, SLIM, dedup=False)
    assert off["per_call"] == [SLIM + size, SLIM + size, SLIM + 2 * size, SLIM + 3 * size]
    assert off["total"] == sum(off["per_call"]) and off["last"] == SLIM + 3 * size


def test_a_compaction_empties_the_context_and_what_was_relied_on_is_sent_again(sim, table, prompts):
    settings = default_settings()
    size = sent_bytes(sim, table, prompts.setx, settings)
    result = sim.simulate([prompts.setx, prompts.setx, prompts.setx], table, settings, SLIM, compact_after=2)
    # the second ask relied on the session holding the fact: the SessionStart hook sends it again
    # with the compaction, and the third ask finds it held
    from router.hooks.session import after_compaction, session_step
    from router.hooks.sessionrecord import new_record

    decision = route(prompts.setx, table, settings)
    _plan, record = session_step(new_record("s", ["x", 0, 0]), decision, prompts.setx, settings, now=1.0)
    _plan, record = session_step(record, decision, prompts.setx, settings, now=2.0)
    again = len((sim.SESSION_START_PREFIX + after_compaction(record, 9500, 3.0)[0]).encode())
    assert result["per_call"] == [SLIM + size, SLIM + size, SLIM + again]
    # asked about something else just before the compaction: nothing is sent again, the next ask sends
    other = sim.simulate([prompts.setx, prompts.ledger, prompts.setx], table, settings, SLIM, compact_after=2)
    assert other["per_call"][2] == SLIM + size
    assert result["lines_sent"] == len(sim.plan_injection(route(prompts.setx, table, settings),
                                                          prompts.setx, settings)["lines"])


def test_the_pointer_costs_bytes_on_every_later_call(sim, table, prompts):
    settings = default_settings()
    plain = sim.simulate([prompts.setx, prompts.setx, prompts.neutral], table, settings, SLIM)
    pointer = sim.simulate([prompts.setx, prompts.setx, prompts.neutral], table, settings, SLIM, pointer=True)
    extra = pointer["per_call"][1] - plain["per_call"][1]
    assert extra > 0 and pointer["per_call"][2] - plain["per_call"][2] == extra


def test_before_sends_the_routing_decisions_own_text(sim, table, prompts):
    settings = default_settings()
    old_text = route(prompts.setx, table, settings)["additional_context"]
    result = sim.simulate([prompts.setx], table, settings, SLIM, dedup=False, old=True)
    assert result["per_call"] == [SLIM + len(sim.in_request(old_text).encode())]


def test_the_targets_hold_on_the_example_and_held_out_stores(sim, capsys):
    assert sim.main(["--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["targets_met"] is True
    by_run = {run["run"]: run for run in report["runs"]}
    stores = {"example", "heldout-60", "heldout-200"}
    assert set(by_run) == stores | {name + sim.WITH for name in stores}
    assert by_run["heldout-200"]["compact_after"] == by_run["heldout-200" + sim.WITH]["compact_after"] == 100
    for run in report["runs"]:
        before, default = run["variants"][0], run["variants"][sim.DEFAULT]
        assert default["ratio"] <= run["target"] and default["max_ratio"] <= 1.0
        if sim.WITH not in run["run"]:
            # (with utterances the provider itself sends a line or two, so even the hook before
            # issue 13, re-sending them, stays under the target)
            assert run["target"] < before["ratio"]
        else:
            assert default["ratio"] < by_run[run["run"].split(sim.WITH)[0]]["variants"][sim.DEFAULT]["ratio"]
    for suites in report["fact_recall"].values():
        for row in suites.values():
            assert row["after"] >= row["before"]


def test_a_missed_target_exits_1(sim, capsys, monkeypatch):
    monkeypatch.setattr(sim, "TARGETS", {"example": 0.01, "heldout-60": 0.01, "heldout-200": 0.01})
    assert sim.main([]) == 1
    assert "MISSED" in capsys.readouterr().out
