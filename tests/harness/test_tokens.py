"""Pure token counting, the injection statistics and the session model (hand-computed cases)."""

import json
import types

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import sessionmodel
from harness import tokens as tk

LONG_SESSION = "v2.0.76-long-session-stop-hooks.jsonl"


# --------------------------------------------------------------------------- counting


@pytest.mark.parametrize("text, expected", [
    ("", 0),
    ("abcd", 1),
    ("abcde", 2),
    ("\u2014", 1),          # 3 bytes
    ("\u2014\u2014", 2),    # 6 bytes
    ("a" * 4000, 1000),
])
def test_estimate_is_ceil_bytes_over_four(text, expected):
    assert tk.estimate_tokens(text) == expected
    counter = tk.estimate_counter()
    assert counter.method == "estimate" and counter.count(text) == expected


PAD = "\u27e8pad\u27e9"


def fake_ctok(frame=7, reject_empty=False, with_tokenize=True):
    """Shaped like ctok 1.3: token_count = frame + one per word; tokenize gives the pieces."""
    calls = []

    def tokenize(text, version="3.0"):
        calls.append(("tokenize", text, version))
        return [PAD] * frame + ["\u27e8bow\u27e9" + w for w in text.split()]

    def token_count(text, version="3.0"):
        calls.append(("token_count", text, version))
        if reject_empty and not text:
            raise ValueError("empty")
        # Like the real one: the empty message still costs a frame plus one marker.
        return frame + (len(text.split()) if text else 1)

    module = types.SimpleNamespace(token_count=token_count, __version__="9.9", calls=calls)
    if with_tokenize:
        module.tokenize = tokenize
    return module


def test_ctok_counter_counts_pieces_that_are_not_pad_and_passes_the_version():
    ctok = fake_ctok(frame=7)
    counter = tk.ctok_counter(ctok, "4.7")
    assert counter.method == "offline"
    assert counter.count("hello big world") == 3
    assert counter.count("") == 0
    assert ("tokenize", "hello big world", "4.7") in ctok.calls
    assert "4.7" in counter.detail and "pad" in counter.detail


def test_ctok_counter_without_version_uses_ctok_default():
    ctok = fake_ctok(frame=6)
    counter = tk.ctok_counter(ctok)
    assert counter.count("a b c") == 3
    assert ctok.calls == [("tokenize", "a b c", "3.0")]


def test_ctok_without_tokenize_subtracts_the_frame_measured_on_empty_text():
    counter = tk.ctok_counter(fake_ctok(frame=7, with_tokenize=False))
    assert counter.count("a b c") == 2  # 10 - 8: the empty-text probe over-counts by its marker
    assert "frame of 8" in counter.detail


def test_ctok_counter_that_rejects_empty_text_keeps_the_frame_and_says_so():
    counter = tk.ctok_counter(fake_ctok(frame=7, reject_empty=True, with_tokenize=False))
    assert counter.count("a b c") == 10
    assert "frame of 0" in counter.detail


def test_api_counter_subtracts_frame_measured_on_one_character():
    seen = []

    def count_message(text):
        seen.append(text)
        return 8 + len(text)

    counter = tk.api_counter(count_message, "claude-x")
    assert counter.method == "api" and "claude-x" in counter.detail
    assert counter.count("abcd") == 4
    assert counter.count("abcd") == 4
    assert seen == [".", "abcd"]  # cached: one call per distinct text


# --------------------------------------------------------------------------- always loaded


def test_loaded_portion_keeps_200_lines():
    text = "".join(f"line {i}\n" for i in range(250))
    loaded, truncated = tk.loaded_portion(text)
    assert truncated and len(loaded.splitlines()) == 200 and loaded.endswith("line 199\n")


def test_loaded_portion_cuts_at_25000_bytes():
    text = ("x" * 999 + "\n") * 30  # 30,000 bytes in 30 lines
    loaded, truncated = tk.loaded_portion(text)
    assert truncated and len(loaded.encode()) == 25_000


def test_loaded_portion_of_a_small_file_is_the_file():
    assert tk.loaded_portion("a\nb\n") == ("a\nb\n", False)


def test_always_loaded_figures():
    flat = "f" * 400 + "\n" + "g" * 398 + "\n"   # 800 bytes, 2 lines
    slim_text = "s" * 199 + "\n"                 # 200 bytes, 1 line
    result = tk.always_loaded(flat, slim_text, tk.estimate_counter())
    assert result["flat"]["tokens"] == 200 and result["slim"]["tokens"] == 50
    assert result["saved"] == {"bytes": 600, "lines": 1, "tokens": 150, "tokens_method": "estimate",
                               "cut_percent": 75.0}


# --------------------------------------------------------------------------- injections


@pytest.mark.parametrize("values, pct, expected", [
    ([], 50, None),
    ([7], 95, 7),
    ([1, 2, 3, 4], 50, 2),
    ([4, 3, 2, 1], 50, 2),
    ([1, 2, 3, 4, 5], 50, 3),
    (list(range(1, 21)), 95, 19),
    (list(range(1, 21)), 100, 20),
    ([0, 0, 0, 10], 95, 10),
])
def test_nearest_rank_percentile(values, pct, expected):
    assert tk.percentile(values, pct) == expected


def test_distribution_counts_silent_prompts_as_zero():
    assert tk.distribution([0, 10, 0, 30]) == {"mean": 10.0, "p50": 0, "p95": 30, "max": 30,
                                               "mean_when_injecting": 20.0}
    assert tk.distribution([0, 0])["mean_when_injecting"] == 0.0
    assert tk.distribution([])["mean"] is None


def test_injection_sizes_count_the_reminder_the_model_sees():
    decisions = [{"additional_context": None, "routed": []},
                 {"additional_context": "Routed memory cluster: a\n- x \u2014 y", "routed": ["a"]}]
    rows = tk.injection_sizes(decisions, tk.estimate_counter())
    assert rows[0] == {"prompt_index": 0, "routed": [], "chars": 0, "tokens": 0}
    text = decisions[1]["additional_context"]
    assert rows[1]["chars"] == len(text)
    wrapped = tk.rendered_injection(text)
    assert wrapped.startswith("<system-reminder>\nUserPromptSubmit hook additional context: ")
    assert rows[1]["tokens"] == tk.estimate_tokens(wrapped) > tk.estimate_tokens(text)
    summary = tk.injection_summary(rows, "estimate")
    assert summary["prompts"] == 2 and summary["injecting"] == 1 and summary["share_injecting"] == 0.5
    assert summary["tokens"]["method"] == "estimate"


# --------------------------------------------------------------------------- session model


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


# --------------------------------------------------------------------------- transcripts


def assistant(line, message_id, output, *, sidechain=False, model="claude-x", usage=True):
    message = {"id": message_id, "model": model, "role": "assistant", "content": []}
    if usage:
        message["usage"] = {"input_tokens": 3, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 1000,
                            "output_tokens": output}
    return line, {"type": "assistant", "isSidechain": sidechain, "message": message, "requestId": f"req-{message_id}"}


def test_first_call_keeps_the_last_streamed_row_and_skips_others():
    entries = [
        (1, {"type": "user", "message": {"role": "user", "content": "hi"}}),
        assistant(2, "msg_side", 99, sidechain=True),
        assistant(3, "msg_syn", 1, model="<synthetic>"),
        assistant(4, "msg_nousage", 1, usage=False),
        assistant(5, "msg_a", 3),
        assistant(6, "msg_a", 3),
        assistant(7, "msg_b", 10),
        assistant(8, "msg_a", 358),
        assistant(9, "msg_b", 20),
    ]
    call = tk.first_call_usage(entries)
    assert call["message_id"] == "msg_a" and call["line"] == 8 and call["output_tokens"] == 358
    assert call["total_input_tokens"] == 1103 and call["method"] == "measured"
    assert call["assistant_rows"] == 5 and call["api_calls"] == 2 and call["duplicate_rows_dropped"] == 3
    assert call["request_id"] == "req-msg_a"


def test_first_call_none_without_assistant_usage():
    assert tk.first_call_usage([(1, {"type": "user"}), assistant(2, "m", 1, usage=False)]) is None
    assert tk.first_call_usage([]) is None


def test_first_call_on_the_real_long_session(transcript_fixtures):
    path = transcript_fixtures / LONG_SESSION
    with open(path, encoding="utf-8") as handle:
        entries = [(n, json.loads(line)) for n, line in enumerate(handle, 1) if line.strip()]
    call = tk.first_call_usage(entries)
    # The file's first response streams over lines 3-6, all msg_018SJ..., output_tokens 3, 3, 3, 358.
    rows = [obj for _n, obj in entries if obj.get("type") == "assistant"
            and obj["message"]["id"] == "msg_018SJqZRgcskcNiWtdLAPCDx"]
    assert [r["message"]["usage"]["output_tokens"] for r in rows] == [3, 3, 3, 358]
    assert call["message_id"] == "msg_018SJqZRgcskcNiWtdLAPCDx"
    assert call["output_tokens"] == 358 and call["line"] == 6
    assert (call["input_tokens"], call["cache_creation_input_tokens"], call["cache_read_input_tokens"]) == \
        (10, 8889, 17919)
    assert call["total_input_tokens"] == 26818
    assert call["assistant_rows"] == 326
    assert call["api_calls"] == len({obj["message"]["id"] for _n, obj in entries if obj.get("type") == "assistant"})
    assert call["duplicate_rows_dropped"] == 326 - call["api_calls"] > 0


def test_transcript_delta():
    before = {"input_tokens": 10, "cache_creation_input_tokens": 8889, "cache_read_input_tokens": 17919,
              "total_input_tokens": 26818}
    after = {"input_tokens": 3, "cache_creation_input_tokens": 5000, "cache_read_input_tokens": 17919,
             "total_input_tokens": 22922}
    assert tk.transcript_delta(before, after) == {"input_tokens": -7, "cache_creation_input_tokens": -3889,
                                                  "cache_read_input_tokens": 0, "total_input_tokens": -3896,
                                                  "method": "measured"}
    assert tk.transcript_delta(None, after) is None
