"""A loopback stand-in for the Anthropic Messages API, for running the real Claude Code offline.

``LabServer`` binds 127.0.0.1 on a free port (never any other address), answers ``POST
/v1/messages`` with the streaming protocol the client reads (``message_start``,
``content_block_start/delta/stop`` for ``text`` and ``tool_use`` blocks, ``message_delta`` with
``stop_reason`` and ``usage``, ``message_stop``), or a plain JSON message when ``stream`` is
false, and records every request body verbatim in a JSON Lines log. It never opens an outgoing
connection. Use it as a context manager so it stops with its session::

    with LabServer(Script.default(), log_path) as server:
        env["ANTHROPIC_BASE_URL"] = server.url
        ...

What it answers comes from a ``Script`` (``harness.lab.script``): plain text by default, scripted
``tool_use`` turns (``Write``, ``Edit``, ``Agent`` or any tool name, an MCP tool included), a
summary for compaction requests, and a reported ``usage.input_tokens`` high enough to make the
client compact on its next prompt.

Log line (one per request, in arrival order)::

    {"seq": 1, "method": "POST", "path": "/v1/messages?beta=true", "prompt_index": 0,
     "bytes": 51234, "reply": {"kind": "text", ...}, "body": "<the request body, verbatim>"}

``body`` is the exact text received (decoded as UTF-8), so ``bytes`` is its length on the wire
and ``harness.lab.measure`` can parse it again without losing anything.
"""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from harness.lab.script import DEFAULT_INPUT_TOKENS, Script
from router.safeio import open_regular

LOOPBACK = "127.0.0.1"
POLL_SECONDS = 0.05


# --------------------------------------------------------------------------- the wire


def message_blocks(reply, message_seq):
    """The content blocks of a reply, tool_use ids numbered from ``message_seq``."""
    blocks = []
    if reply.get("text"):
        blocks.append({"type": "text", "text": reply["text"]})
    uses = reply.get("tool_use") or []
    for n, use in enumerate(uses if isinstance(uses, list) else [uses]):
        blocks.append({"type": "tool_use", "id": f"toolu_lab{message_seq:04d}{n:02d}", "name": use["name"],
                       "input": use.get("input") or {}})
    if not blocks:
        blocks.append({"type": "text", "text": "."})
    return blocks


def stop_reason_of(blocks):
    return "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"


def sse_events(reply, model, message_seq):
    """The server-sent events of one streamed reply, as bytes."""
    return b"".join(sse_chunks(reply, model, message_seq))


def sse_chunks(reply, model, message_seq):
    """The server-sent events of one streamed reply, as byte chunks, one per content block (the
    first also opens the message, the last also ends it): a ``pause`` waits between them."""
    blocks = message_blocks(reply, message_seq)
    input_tokens = int(reply.get("input_tokens", DEFAULT_INPUT_TOKENS))
    output_tokens = int(reply.get("output_tokens", 10))
    out, chunks = [], []

    def event(name, data):
        out.append(f"event: {name}\ndata: {json.dumps(data)}\n\n")

    event("message_start", {"type": "message_start", "message": {
        "id": f"msg_lab{message_seq:04d}", "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": 1,
                  "cache_creation_input_tokens": int(reply.get("cache_creation_input_tokens", 0)),
                  "cache_read_input_tokens": int(reply.get("cache_read_input_tokens", 0))}}})
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            event("content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {"type": "text", "text": ""}})
            event("content_block_delta", {"type": "content_block_delta", "index": index,
                                          "delta": {"type": "text_delta", "text": block["text"]}})
        else:
            event("content_block_start", {"type": "content_block_start", "index": index, "content_block": {
                "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}})
            event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps(block["input"])}})
        event("content_block_stop", {"type": "content_block_stop", "index": index})
        chunks.append("".join(out).encode("utf-8"))
        out.clear()
    event("message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": stop_reason_of(blocks), "stop_sequence": None},
                            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens}})
    event("message_stop", {"type": "message_stop"})
    # the message's end rides with its last block: a pause falls between blocks only, so the last
    # block's row sees the final usage, as against the real API
    chunks[-1] += "".join(out).encode("utf-8")
    return chunks


def json_message(reply, model, message_seq):
    blocks = message_blocks(reply, message_seq)
    return json.dumps({
        "id": f"msg_lab{message_seq:04d}", "type": "message", "role": "assistant", "model": model,
        "content": blocks, "stop_reason": stop_reason_of(blocks), "stop_sequence": None,
        "usage": {"input_tokens": int(reply.get("input_tokens", DEFAULT_INPUT_TOKENS)),
                  "output_tokens": int(reply.get("output_tokens", 10)),
                  "cache_creation_input_tokens": int(reply.get("cache_creation_input_tokens", 0)),
                  "cache_read_input_tokens": int(reply.get("cache_read_input_tokens", 0))}}).encode("utf-8")


def reply_summary(reply):
    """What the log keeps of a reply: its kind, the tools it called, the usage it reported."""
    uses = reply.get("tool_use") or []
    uses = uses if isinstance(uses, list) else [uses]
    kind = "tool_use" if uses else ("summary" if reply.get("rule") == "summary" else "text")
    return {"kind": kind, "rule": reply.get("rule"), "tools": [u.get("name") for u in uses],
            "input_tokens": reply.get("input_tokens")}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "memory-router-lab"

    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass

    def _read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, status, data, content_type, pause=0.0):
        """``data``: bytes, or a list of byte chunks written ``pause`` seconds apart."""
        chunks = data if isinstance(data, list) else [data]
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(sum(len(c) for c in chunks)))
        self.send_header("request-id", f"req_lab{self.server.lab.seq:04d}")
        self.end_headers()
        if self.command == "HEAD":
            return
        for n, chunk in enumerate(chunks):
            if n and pause:
                time.sleep(pause)
            self.wfile.write(chunk)
            self.wfile.flush()

    def do_HEAD(self):
        self.server.lab.record(self, b"", None)
        self._send(200, b"", "text/plain")

    def do_GET(self):
        self.server.lab.record(self, b"", None)
        self._send(404, b'{"type":"error","error":{"type":"not_found_error","message":"lab stand-in"}}',
                   "application/json")

    def do_POST(self):
        raw = self._read_body()
        lab = self.server.lab
        try:
            body = json.loads(raw.decode("utf-8"))
        except ValueError:
            body = None
        path = self.path.split("?", 1)[0]
        if path.endswith("/count_tokens"):
            lab.record(self, raw, {"kind": "count_tokens"})
            size = len(raw) // 4
            self._send(200, json.dumps({"input_tokens": size}).encode(), "application/json")
            return
        if not path.endswith("/v1/messages") or not isinstance(body, dict):
            lab.record(self, raw, {"kind": "not_found"})
            self._send(404, b'{"type":"error","error":{"type":"not_found_error","message":"lab stand-in"}}',
                       "application/json")
            return
        reply = lab.script.reply_for(body)
        seq = lab.record(self, raw, reply_summary(reply))
        model = body.get("model") or "claude-lab"
        if body.get("stream"):
            self._send(200, sse_chunks(reply, model, seq), "text/event-stream", float(reply.get("pause") or 0))
        else:
            self._send(200, json_message(reply, model, seq), "application/json")


class LabServer:
    """The stand-in: ``start()``/``stop()`` or ``with LabServer(...) as server``.

    ``prompt_index`` is stamped on every request logged while it is set, so the analysis knows
    which prompt of the session each API call belongs to (the runner sets it before each prompt).
    """

    def __init__(self, script=None, log_path=None):
        self.script = script or Script.default()
        self.log_path = log_path
        self.prompt_index = None
        self.seq = 0
        self.records = []          # kept only when there is no log file
        self._lock = threading.Lock()
        self._log = None
        self._httpd = None
        self._thread = None

    @property
    def port(self):
        return self._httpd.server_address[1]

    @property
    def url(self):
        return f"http://{LOOPBACK}:{self.port}"

    def start(self):
        self._httpd = ThreadingHTTPServer((LOOPBACK, 0), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.lab = self
        if self.log_path is not None:
            self._log = open_regular(self.log_path, "a", encoding="utf-8")
        # A short poll: stop() waits for serve_forever to notice, once per poll interval.
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": POLL_SECONDS},
                                        name="lab-server", daemon=True)
        self._thread.start()
        return self

    def stop(self):
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def record(self, handler, raw, reply):
        with self._lock:
            self.seq += 1
            record = {"seq": self.seq, "method": handler.command, "path": handler.path,
                      "prompt_index": self.prompt_index, "bytes": len(raw), "reply": reply,
                      "body": raw.decode("utf-8", "replace")}
            if self._log is not None:
                self._log.write(json.dumps(record, ensure_ascii=False) + "\n")
                self._log.flush()
            else:
                self.records.append(record)
            return self.seq


def serve_until_signalled(server, announce, signals=None):
    """Run ``server`` (a ``LabServer``, not started) until SIGINT or SIGTERM, then stop it and
    return: ``memory-router lab serve``.

    The handlers are in place before ``announce(server)`` tells anyone the server is up, and they
    only set an event the main thread waits on. So a signal sent the moment the announcement is
    read stops the server by the same path as one sent an hour later. (The race this closes: with
    the announcement printed first and Ctrl-C left to raise ``KeyboardInterrupt`` wherever the
    main thread happened to be, a signal landing before the wait began escaped through the
    printing and the ``with`` block, and the command ended as interrupted, exit 130, instead of
    stopping cleanly.) The previous handlers come back afterwards."""
    import signal

    stop = threading.Event()
    chosen = signals or (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, lambda _signum, _frame: stop.set()) for sig in chosen}
    try:
        with server:
            announce(server)
            # The handler runs in this thread while it waits (lock waits are interruptible); the
            # timeout is only a backstop for a platform where they are not.
            while not stop.wait(1.0):
                pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

