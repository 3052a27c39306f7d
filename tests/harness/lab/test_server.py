"""harness.lab.server: the loopback stand-in speaks the streaming protocol and logs verbatim."""

import json
import os
import signal
import urllib.request

import pytest

from harness.lab.script import COMPACTING_INPUT_TOKENS, Script
from harness.lab.server import LOOPBACK, LabServer, serve_until_signalled, sse_chunks, sse_events


def post(server, body, path="/v1/messages?beta=true"):
    raw = json.dumps(body).encode()
    request = urllib.request.Request(server.url + path, data=raw, method="POST",
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.headers.get("Content-Type"), response.read().decode()


def parse_sse(text):
    events = []
    for chunk in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def request(prompt, stream=True, extra_messages=()):
    return {"model": "claude-lab-model", "stream": stream, "system": [{"type": "text", "text": "sys"}],
            "tools": [{"name": "Agent"}, {"name": "Write"}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": prompt}]}, *extra_messages]}


def test_binds_loopback_only_and_logs_every_body_verbatim(tmp_path):
    log = tmp_path / "requests.jsonl"
    with LabServer(Script(), log) as server:
        assert server.url.startswith(f"http://{LOOPBACK}:") and server.port > 0
        server.prompt_index = 3
        body = request("hello \u00e9")
        post(server, body)
    [record] = [json.loads(line) for line in log.read_text().splitlines()]
    assert record["seq"] == 1 and record["prompt_index"] == 3 and record["path"] == "/v1/messages?beta=true"
    assert record["body"] == json.dumps(body) and record["bytes"] == len(json.dumps(body).encode())
    assert record["reply"]["kind"] == "text"


def test_default_reply_is_streamed_text_with_end_turn_and_usage():
    with LabServer() as server:
        content_type, text = post(server, request("hi"))
    assert content_type == "text/event-stream"
    events = parse_sse(text)
    assert [name for name, _ in events] == ["message_start", "content_block_start", "content_block_delta",
                                            "content_block_stop", "message_delta", "message_stop"]
    assert events[0][1]["message"]["model"] == "claude-lab-model"
    assert events[2][1]["delta"] == {"type": "text_delta", "text": "Reply 1."}
    assert events[4][1]["delta"]["stop_reason"] == "end_turn"
    assert events[4][1]["usage"]["output_tokens"] == 10


def test_scripted_tool_use_streams_input_json_and_stops_for_the_tool():
    script = Script([{"when": {"prompt_contains": "make a file"},
                      "reply": {"tool_use": {"name": "Write", "input": {"file_path": "/p/a.txt", "content": "x"}}}}])
    with LabServer(script) as server:
        _, text = post(server, request("please make a file"))
        _, second = post(server, request("please make a file"))    # times: 1, so the default now
    events = parse_sse(text)
    start = events[1][1]["content_block"]
    assert start["type"] == "tool_use" and start["name"] == "Write" and start["input"] == {}
    assert json.loads(events[2][1]["delta"]["partial_json"]) == {"file_path": "/p/a.txt", "content": "x"}
    assert events[4][1]["delta"]["stop_reason"] == "tool_use"
    assert parse_sse(second)[2][1]["delta"]["text"] == "Reply 2."


def test_conditions_after_tool_result_and_has_tool():
    tool_result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]}
    script = Script([{"when": {"after_tool_result": True}, "reply": {"text": "tool done"}, "times": 0},
                     {"when": {"has_tool": "mcp__lab__probe"}, "reply": {"text": "never"}}])
    with LabServer(script) as server:
        _, after = post(server, request("p", extra_messages=[{"role": "assistant", "content": []}, tool_result]))
        _, plain = post(server, request("p"))
    assert parse_sse(after)[2][1]["delta"]["text"] == "tool done"
    assert parse_sse(plain)[2][1]["delta"]["text"] == "Reply 2."


def test_compaction_request_gets_the_summary_and_reported_tokens_force_compaction():
    script = Script([{"when": {"prompt_contains": "big"}, "reply": {"text": "ok", "input_tokens": COMPACTING_INPUT_TOKENS}}],
                    summary="<summary>S</summary>")
    ask = "Your task is to create a detailed summary of the conversation so far, paying attention to..."
    with LabServer(script) as server:
        _, summary = post(server, request(ask))
        _, big = post(server, request("big context"))
    assert parse_sse(summary)[2][1]["delta"]["text"] == "<summary>S</summary>"
    assert parse_sse(big)[0][1]["message"]["usage"]["input_tokens"] == COMPACTING_INPUT_TOKENS


def test_non_streaming_request_gets_a_json_message():
    with LabServer() as server:
        content_type, text = post(server, request("hi", stream=False))
    message = json.loads(text)
    assert content_type == "application/json" and message["content"][0]["text"] == "Reply 1."
    assert message["stop_reason"] == "end_turn"


def test_unknown_path_is_a_404_and_still_logged():
    import urllib.error

    with LabServer() as server:
        with pytest.raises(urllib.error.HTTPError) as err:
            post(server, {"x": 1}, path="/v1/other")
        assert err.value.code == 404
        assert server.records[0]["reply"] == {"kind": "not_found"}


def test_server_stops_with_its_context():
    import urllib.error

    with LabServer() as server:
        url = server.url
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(url + "/v1/messages", data=b"{}", timeout=2)


def test_sse_events_numbers_several_tool_uses():
    data = sse_events({"tool_use": [{"name": "Agent", "input": {"prompt": "a"}}, {"name": "Edit", "input": {}}]},
                      "m", 7).decode()
    starts = [d["content_block"] for name, d in parse_sse(data) if name == "content_block_start"]
    assert [s["name"] for s in starts] == ["Agent", "Edit"]
    assert starts[0]["id"] != starts[1]["id"]


def test_reported_cache_usage_and_block_chunks():
    reply = {"text": "a", "tool_use": {"name": "Write", "input": {}}, "cache_creation_input_tokens": 8889,
             "cache_read_input_tokens": 17919, "output_tokens": 358}
    chunks = sse_chunks(reply, "m", 1)
    # one chunk per content block; the message's end rides with the last one
    assert len(chunks) == 2 and chunks[0].decode().rstrip().endswith('"content_block_stop", "index": 0}')
    assert chunks[1].decode().rstrip().endswith('{"type": "message_stop"}')
    events = parse_sse(b"".join(chunks).decode())
    assert b"".join(chunks) == sse_events(reply, "m", 1)
    start = events[0][1]["message"]["usage"]
    assert (start["cache_creation_input_tokens"], start["cache_read_input_tokens"], start["output_tokens"]) == \
        (8889, 17919, 1)
    assert [d["usage"]["output_tokens"] for name, d in events if name == "message_delta"] == [358]
    assert len(sse_chunks({"text": "x"}, "m", 2)) == 1


def test_pause_waits_between_blocks_and_still_sends_every_byte(tmp_path):
    import time

    script = Script([{"when": {}, "reply": {"text": "a", "tool_use": {"name": "Write", "input": {}}, "pause": 0.4}},
                     {"when": {}, "reply": {"text": "b"}}])
    with LabServer(script, tmp_path / "log.jsonl") as server:
        t0 = time.monotonic()
        _type, paused = post(server, request("one"))
        slow = time.monotonic() - t0
        t0 = time.monotonic()
        post(server, request("two"))
        fast = time.monotonic() - t0
    names = [name for name, _ in parse_sse(paused)]
    assert names.count("content_block_stop") == 2 and names[-1] == "message_stop"
    assert slow >= 0.4 > fast             # one pause, between the two blocks


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_sent_the_moment_the_server_is_announced_stops_it_cleanly(tmp_path, signum):
    """The race behind the flaky ``lab serve`` test: the signal arrives right after the
    announcement, before the command reaches its wait. It must stop the server the same clean
    way (return, log closed, port released, the old handler back), never escape as an interrupt."""
    previous = signal.getsignal(signum)
    seen = {}

    def announce(server):
        seen["url"] = server.url
        os.kill(os.getpid(), signum)
        # Work the announcement still does after the signal landed (printing, flushing).
        with urllib.request.urlopen(server.url + "/v1/messages", data=json.dumps(
                {"model": "m", "stream": False, "messages": [{"role": "user", "content": "hi"}]}).encode(),
                timeout=10) as response:
            seen["reply"] = json.loads(response.read())["content"][0]["text"]

    log = tmp_path / "requests.jsonl"
    serve_until_signalled(LabServer(Script.default(), str(log)), announce)
    assert seen["reply"] == "Reply 1."
    assert signal.getsignal(signum) is previous
    assert json.loads(log.read_text().splitlines()[0])["seq"] == 1
    with pytest.raises(OSError):
        urllib.request.urlopen(seen["url"] + "/v1/messages", data=b"{}", timeout=2)
