"""harness.replay.report and cost: the misses worst first, and a session's bytes by hand."""

from harness.replay.cost import session_cost
from harness.replay.report import Tally, short_session
from transcripts.replay import Need, PromptReplay, TurnCost


def prompt(line, needs, routed=(), sent=()):
    return PromptReplay("s", "/h/s.jsonl", line, None, f"prompt {line}", tuple(routed), tuple(sent), (), len(sent),
                        10 * len(sent), "why", tuple(Need(slug, "read", "/h/s.jsonl", line + 1, met)
                                                      for slug, met in needs))


def test_misses_worst_first():
    tally = Tally("/c.md")
    for item in (prompt(1, [("a", None)]), prompt(2, [("b", None)], routed=["c1"], sent=["x"]),
                 prompt(3, [("b", None)]), prompt(4, [("a", "sent")], sent=["a"]), prompt(5, [("b", None)]),
                 prompt(6, [("c", "held")])):
        tally._add_prompt(item)
    order = [(m["memory"], m["line"]) for m in tally.ordered_misses()]
    # b missed three times first, and its prompt that was sent something else leads; then a.
    assert order == [("b", 2), ("b", 3), ("b", 5), ("a", 1)]
    report = tally.to_json([], "replay")["evidence"]
    assert (report["needs"], report["met"], report["recall"]) == (6, 2, round(2 / 6, 4))


def test_session_cost_by_hand():
    turns = [TurnCost(2, 100, False, 0), TurnCost(3, 0, False, 0), TurnCost(1, 50, True, 30), TurnCost(2, 0, False, 0)]
    cost = session_cost(turns, flat_bytes=1000, slim_bytes=200)
    # injections in the history: 100 for 2 + 3 calls, 150 for 1 call, then 30 (sent again) for 2.
    injected = 100 * 2 + 100 * 3 + 150 * 1 + 30 * 2
    assert cost == {"calls": 8, "compactions": 1, "flat_bytes": 8000, "slim_bytes": 1600 + injected,
                    "injection_bytes": injected}


def test_sessions_are_named_short_when_the_name_is_an_id():
    assert short_session("/p/c393fd0e-1cc6-2be5-7836-46bf0324aac3.jsonl") == "c393fd0e"
    assert short_session("/p/my-session.jsonl") == "my-session.jsonl"
