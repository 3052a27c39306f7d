"""Pure token counting and the injection statistics (hand-computed cases)."""

import json
import types

import pytest

from harness.tokens import counts as tk

LONG_SESSION = "v2.0.76-tools.jsonl"   # the first reply streams as two rows (tests/fixtures/README.md)


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
    # The first response streams as a text row then a tool_use row, both msg_lab0003 (the two
    # Warmup requests of 2.0.76 took 0001-0002), output_tokens 1 then 358.
    rows = [(n, obj) for n, obj in entries if obj.get("type") == "assistant" and obj["message"]["id"] == "msg_lab0003"]
    assert [r["message"]["usage"]["output_tokens"] for _n, r in rows] == [1, 358]
    assert call["message_id"] == "msg_lab0003"
    assert call["output_tokens"] == 358 and call["line"] == rows[-1][0]
    assert (call["input_tokens"], call["cache_creation_input_tokens"], call["cache_read_input_tokens"]) == \
        (10, 8889, 17919)
    assert call["total_input_tokens"] == 26818
    # the client's own <synthetic> row (its reply to /cost) is not an API call
    api_rows = [obj for _n, obj in entries if obj.get("type") == "assistant" and obj["message"]["model"] != "<synthetic>"]
    assert len(api_rows) < sum(1 for _n, obj in entries if obj.get("type") == "assistant")
    assert call["assistant_rows"] == len(api_rows)
    assert call["api_calls"] == len({obj["message"]["id"] for obj in api_rows})
    assert call["duplicate_rows_dropped"] == len(api_rows) - call["api_calls"] > 0


def test_transcript_delta():
    before = {"input_tokens": 10, "cache_creation_input_tokens": 8889, "cache_read_input_tokens": 17919,
              "total_input_tokens": 26818}
    after = {"input_tokens": 3, "cache_creation_input_tokens": 5000, "cache_read_input_tokens": 17919,
             "total_input_tokens": 22922}
    assert tk.transcript_delta(before, after) == {"input_tokens": -7, "cache_creation_input_tokens": -3889,
                                                  "cache_read_input_tokens": 0, "total_input_tokens": -3896,
                                                  "method": "measured"}
    assert tk.transcript_delta(None, after) is None
