"""Engines: the command engine with scripted programs (good, slow, crashing, lying, hostile), the
anthropic engine against the lab's loopback stand-in, the registry. The claude engine against the
real client is in test_engines_realclient.py (marker realclient)."""

import json
import os
import pathlib
import sys
import time

import pytest

from harness.clusters import engines
from harness.clusters.enrich_plan import MemoryText
from harness.clusters.enrich_answers import check_enrich_answer
from harness.clusters.enrich_protocol import enrich_request
from router.store.clusterfile import Cluster, Member
from support.processes import alive

FAKE = pathlib.Path(__file__).with_name("fake_engine.py")
CLUSTER = Cluster("layer1_tools", 2, False, ("pnpm",), "tools",
                  (Member("env_pnpm_store", "env", "pnpm store on D:", 0),
                   Member("feedback_bun_scripts", "feedback", "use bun", 0)), 0)
MEMORIES = (MemoryText("env_pnpm_store", "env", "pnpm store on D:", "body", "0" * 16),
            MemoryText("feedback_bun_scripts", "feedback", "use bun", "", "1" * 16))
REQUEST = enrich_request(CLUSTER, MEMORIES, 3)


def fake(mode, *extra, timeout=None, model=None):
    command = " ".join([sys.executable, str(FAKE), mode, *map(str, extra)])
    return engines.create_engine("command", command=command, timeout=timeout, model=model)


def test_a_good_program_answers_one_json_object():
    answer = fake("good").ask(REQUEST)
    assert answer == {"utterances": {
        "env_pnpm_store": [f"how do i deal with env pnpm store number {k}" for k in range(3)],
        "feedback_bun_scripts": [f"how do i deal with feedback bun scripts number {k}" for k in range(3)]}}


def test_the_model_reaches_the_program_in_the_environment(tmp_path):
    log = tmp_path / "log.jsonl"
    fake("good", "--log", log, model="llama3").ask(REQUEST)
    assert json.loads(log.read_text())["model"] == "llama3"
    fake("good", "--log", log).ask(REQUEST)
    assert json.loads(log.read_text().splitlines()[1])["model"] is None


def test_a_fenced_answer_is_read():
    assert set(fake("fenced").ask(REQUEST)["utterances"]) == {"env_pnpm_store", "feedback_bun_scripts"}


FAILURES = [
    ("crash", (), "the program failed (exit 3): RuntimeError: engine exploded", False),
    ("notjson", (), "protocol broken: the answer is not JSON", False),
    ("silent", (), "protocol broken: the answer is empty", False),
    ("flood", (), "printed more than 2,000,000 bytes (killed): not an answer", False),
    ("good", ("--fail-cluster", "layer1_tools"), "the program failed (exit 1): refusing cluster layer1_tools", False),
]


@pytest.mark.parametrize("mode, extra, message, transient", FAILURES, ids=[f[0] + "".join(f[1]) for f in FAILURES])
def test_a_failing_program_is_that_clusters_error(mode, extra, message, transient):
    with pytest.raises(engines.EngineError) as caught:
        fake(mode, *extra).ask(REQUEST)
    assert message in caught.value.message
    assert caught.value.transient is transient and caught.value.fatal is False
    assert "\n" not in caught.value.message


def test_a_slow_program_is_killed_at_the_timeout(tmp_path):
    started = time.monotonic()
    with pytest.raises(engines.EngineError, match=r"gave no answer within 0.5 s \(killed\)") as caught:
        fake("good", "--sleep", 30, timeout=0.5).ask(REQUEST)
    assert time.monotonic() - started < 10
    # no answer at all: two such clusters in a row stop the run (StopPolicy)
    assert caught.value.unreachable and not caught.value.fatal and not caught.value.transient


def test_without_timeout_each_request_gets_a_deadline_fitted_to_its_answer():
    # REQUEST: 2 memories, 3 utterances each: (2 * (40 + 3 * 70) + 40) / 4 = 135 answer tokens
    assert engines.answer_tokens(REQUEST) == 135
    assert engines.create_engine("claude").timeout_for(REQUEST) == round(30 + 135 / 20)
    assert engines.create_engine("anthropic").timeout_for(REQUEST) == round(20 + 135 / 20)
    assert engines.create_engine("command", command="x").timeout_for(REQUEST) == round(60 + 135 / 5)
    big = enrich_request(CLUSTER, MEMORIES * 6, 10)          # 12 memories, 10 each: 2,230 answer tokens
    assert engines.create_engine("claude").timeout_for(big) == round(30 + 2230 / 20)
    # the old defaults were 300 s (claude) and 120 s (the others), whatever the request
    assert engines.create_engine("claude").timeout_for(REQUEST) < 60
    assert engines.create_engine("claude", timeout=7).timeout_for(big) == 7.0


def test_the_fitted_deadline_reaches_the_program(tmp_path):
    engine = fake("good", "--sleep", 30)
    engine.start_seconds, engine.tokens_per_second = 0.0, 1000.0     # 135 tokens: 0.135 s, rounded to 0
    engine.timeout_for = lambda request: 0.2
    with pytest.raises(engines.EngineError, match=r"gave no answer within 0.2 s"):
        engine.ask(REQUEST)


def test_exit_77_is_a_refused_key_that_stops_the_run(tmp_path):
    script = tmp_path / "refused.sh"
    script.write_text("#!/bin/sh\ncat > /dev/null\necho 'invalid api key' >&2\nexit 77\n")
    script.chmod(0o755)
    with pytest.raises(engines.EngineError) as caught:
        engines.create_engine("command", command=str(script)).ask(REQUEST)
    assert caught.value.fatal and "refused its credentials (exit 77): invalid api key" in caught.value.message
    assert caught.value.fix


def test_a_slow_child_of_the_program_dies_with_it(tmp_path):
    # the program's whole process group is killed: no grandchild outlives the timeout
    pid_file = tmp_path / "grandchild.pid"
    script = tmp_path / "spawner.sh"
    script.write_text(f"#!/bin/sh\nsleep 30 &\necho $! > {pid_file}\nsleep 30\n")
    script.chmod(0o755)
    engine = engines.create_engine("command", command=str(script), timeout=1)
    with pytest.raises(engines.EngineError, match="gave no answer"):
        engine.ask(REQUEST)
    grandchild = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and alive(grandchild):
        time.sleep(0.05)
    assert not alive(grandchild)


def test_exit_75_is_transient(tmp_path):
    with pytest.raises(engines.EngineError) as caught:
        fake("tempfail", "--state", tmp_path / "state").ask(REQUEST)
    assert caught.value.transient and "try again (exit 75): overloaded, try later" in caught.value.message
    assert fake("tempfail", "--state", tmp_path / "state").ask(REQUEST)["utterances"]


def test_a_lying_answer_reaches_the_checks_unchanged_and_they_trim_it():
    answer = fake("lie").ask(REQUEST)
    assert "not_asked_slug" in answer["utterances"]   # the engine does not judge; the protocol does
    check = check_enrich_answer(answer, ["env_pnpm_store", "feedback_bun_scripts"], 3)
    assert check.refused is None
    assert len(check.utterances["env_pnpm_store"]) == 3
    assert all(len(u) <= 200 and isinstance(u, str) for u in check.utterances["env_pnpm_store"])
    notes = " | ".join(check.notes)
    for said in ("not asked for: 'not_asked_slug'", "not a list for feedback_bun_scripts",
                 "over 200 characters", "not a string", "repeated", "past 3 per memory"):
        assert said in notes


def test_a_hostile_answer_keeps_only_plain_words():
    check = check_enrich_answer(fake("hostile").ask(REQUEST), ["env_pnpm_store"], 10)
    assert check.utterances == {"env_pnpm_store": ["fine words and a tab", "line one line two"]}
    assert "dropped 2 utterance(s) with control or invisible characters" in " | ".join(check.notes)


def test_a_wrong_shape_is_refused_by_the_checks():
    check = check_enrich_answer(fake("wrongshape").ask(REQUEST), ["env_pnpm_store"], 10)
    assert check.refused and check.utterances == {}


CHECKS = [
    ("no command", None, "the command engine needs a program"),
    ("blank command", "   ", "the command engine needs a program"),
    ("unbalanced quote", "prog 'x", "cannot split --command"),
    ("missing program", "/nonexistent/engine --x", "program '/nonexistent/engine' not found"),
]


@pytest.mark.parametrize("why, command, message", CHECKS, ids=[c[0] for c in CHECKS])
def test_a_command_engine_that_cannot_run_is_refused_before_any_request(why, command, message):
    with pytest.raises(engines.EngineUnavailable, match=message):
        engines.create_engine("command", command=command).check()


def test_a_program_that_vanishes_after_the_check_is_a_fatal_error(tmp_path):
    script = tmp_path / "gone"
    engine = engines.create_engine("command", command=str(script))
    with pytest.raises(engines.EngineError) as caught:
        engine.ask(REQUEST)
    assert caught.value.fatal


# --------------------------------------------------------------------------- the registry


def test_the_registry_lists_the_built_in_engines_and_refuses_unknown_ones():
    assert {"claude", "anthropic", "command"} <= set(engines.engine_names())
    with pytest.raises(engines.EngineUnavailable, match="unknown engine 'ollama'.*use one of"):
        engines.create_engine("ollama")


def test_an_engine_plugin_is_found_by_entry_point(monkeypatch):
    class Plugin(engines.Engine):
        name = "echo"

        def ask(self, request):
            return {"utterances": {m["slug"]: ["echo"] for m in request["memories"]}}

    class EntryPoint:
        name, value = "echo", "plugin:Plugin"

        def load(self):
            return Plugin

    monkeypatch.setattr(engines, "_entry_points", lambda: {"echo": EntryPoint()})
    assert "echo" in engines.engine_names()
    engine = engines.create_engine("echo", model="m1")
    assert engine.model == "m1" and engine.ask(REQUEST)["utterances"]["env_pnpm_store"] == ["echo"]


def test_a_broken_plugin_is_one_error(monkeypatch):
    class EntryPoint:
        name, value = "bad", "nowhere:Thing"

        def load(self):
            raise ImportError("No module named 'nowhere'")

    monkeypatch.setattr(engines, "_entry_points", lambda: {"bad": EntryPoint()})
    with pytest.raises(engines.EngineUnavailable, match="cannot be loaded: No module named 'nowhere'"):
        engines.create_engine("bad")


def test_defaults_are_small_models():
    assert engines.create_engine("claude").model == "haiku"
    assert engines.create_engine("anthropic").model == "claude-haiku-5-5"
    assert engines.create_engine("command", command="x").model == "-"


# --------------------------------------------------------------------------- claude, without a client


def test_the_claude_engine_leaves_the_session_variables_out(monkeypatch):
    env = {"PATH": "/bin", "HOME": "/h", "CLAUDECODE": "1", "CLAUDE_PROJECT_DIR": "/p", "ANTHROPIC_API_KEY": "k"}
    engine = engines.create_engine("claude", env=env)
    assert engine.environment() == {"PATH": "/bin", "HOME": "/h", "ANTHROPIC_API_KEY": "k",
                                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    argv = engine.argv()
    assert argv[1:len(engines.CLAUDE_FLAGS) + 1] == list(engines.CLAUDE_FLAGS)
    assert argv[-4:-2] == ["--model", "haiku"]


def test_the_claude_engine_reads_an_error_result(tmp_path):
    fake_claude = tmp_path / "claude"
    fake_claude.write_text("#!/bin/sh\ncat > /dev/null\n"
                           "echo '{\"type\":\"result\",\"is_error\":true,\"api_error_status\":529,"
                           "\"result\":\"API Error: overloaded\"}'\nexit 1\n")
    fake_claude.chmod(0o755)
    engine = engines.create_engine("claude", command=str(fake_claude))
    engine.check()
    with pytest.raises(engines.EngineError) as caught:
        engine.ask(REQUEST)
    assert caught.value.transient
    assert "claude reported an error (HTTP 529): API Error: overloaded" in caught.value.message


# What Claude Code 2.1.328 prints with no login (HOME empty, no key), exit 1; trimmed to the keys read.
NOT_LOGGED_IN = {"type": "result", "subtype": "success", "is_error": True, "api_error_status": None,
                 "terminal_reason": "api_error", "result": "Not logged in \u00b7 Please run /login"}


def fake_claude(tmp_path, result, code=1):
    program = tmp_path / "claude"
    program.write_text(f"#!/bin/sh\ncat > /dev/null\necho '{json.dumps(result)}'\nexit {code}\n")
    program.chmod(0o755)
    return str(program)


@pytest.mark.parametrize("result", [
    NOT_LOGGED_IN,
    {"type": "result", "is_error": True, "api_error_status": 401, "result": "Invalid API key \u00b7 Fix external API key"},
    {"type": "result", "is_error": True, "api_error_status": 403, "result": "forbidden"},
], ids=["not-logged-in", "http-401", "http-403"])
def test_a_claude_cli_without_a_usable_login_is_fatal_and_names_the_fix(tmp_path, result):
    engine = engines.create_engine("claude", command=fake_claude(tmp_path, result))
    with pytest.raises(engines.EngineError) as caught:
        engine.ask(REQUEST)
    assert caught.value.fatal and not caught.value.transient
    assert result["result"] in caught.value.message
    assert "/login" in caught.value.fix and "ANTHROPIC_API_KEY" in caught.value.fix


def test_a_claude_cli_that_never_answers_is_unreachable_with_its_fix(tmp_path):
    # with a key but no reachable API, the 2.1.328 client prints nothing and retries until killed
    program = tmp_path / "claude"
    program.write_text("#!/bin/sh\ncat > /dev/null\nexec sleep 30\n")
    program.chmod(0o755)
    with pytest.raises(engines.EngineError) as caught:
        engines.create_engine("claude", command=str(program), timeout=0.2).ask(REQUEST)
    assert caught.value.unreachable and "claude -p hello" in caught.value.fix


def test_a_missing_claude_is_refused_before_any_request():
    engine = engines.create_engine("claude", env={"PATH": "/nonexistent"})
    with pytest.raises(engines.EngineUnavailable, match="Claude Code's CLI .claude. was not found"):
        engine.check()


# --------------------------------------------------------------------------- anthropic, against the lab


@pytest.fixture
def stand_in(tmp_path):
    from harness.lab.script import Script
    from harness.lab.server import LabServer

    def start(rules):
        server = LabServer(Script(rules), tmp_path / "requests.jsonl")
        server.start()
        started.append(server)
        return server

    started = []
    yield start
    for server in started:
        server.stop()


def sdk_env(server):
    return {"ANTHROPIC_API_KEY": "lab-key", "ANTHROPIC_BASE_URL": server.url, "PATH": os.environ.get("PATH", "")}


def logged(server):
    return [json.loads(line) for line in pathlib.Path(server.log_path).read_text().splitlines()]


def test_the_anthropic_engine_forces_the_answer_tool_and_reads_its_input(stand_in):
    answer = {"utterances": {"env_pnpm_store": ["pnpm ate my disk"], "feedback_bun_scripts": ["run it with bun"]}}
    server = stand_in([{"when": {"has_tool": "record_answer"}, "reply": {"tool_use": {"name": "record_answer",
                                                                                     "input": answer}}}])
    engine = engines.create_engine("anthropic", env=sdk_env(server))
    engine.check()
    assert engine.ask(REQUEST) == answer
    (record,) = logged(server)
    body = json.loads(record["body"])
    assert body["model"] == "claude-haiku-5-5" and body.get("stream") in (None, False)
    assert body["tool_choice"] == {"type": "tool", "name": "record_answer"}
    assert [t["name"] for t in body["tools"]] == ["record_answer"]
    assert body["tools"][0]["input_schema"]["properties"]["utterances"]["required"] == [
        "env_pnpm_store", "feedback_bun_scripts"]
    assert "memory-router.enrich/2" in body["messages"][0]["content"]


def test_the_anthropic_engine_reads_a_text_answer_when_the_model_skips_the_tool(stand_in):
    server = stand_in([{"when": {}, "reply": {"text": json.dumps({"utterances": {"env_pnpm_store": ["a"]}})}}])
    assert engines.create_engine("anthropic", env=sdk_env(server)).ask(REQUEST) == {
        "utterances": {"env_pnpm_store": ["a"]}}


def test_the_anthropic_engine_refuses_prose(stand_in):
    server = stand_in([{"when": {}, "reply": {"text": "I cannot help with that."}}])
    with pytest.raises(engines.EngineError, match="did not call record_answer and the answer is not JSON"):
        engines.create_engine("anthropic", env=sdk_env(server)).ask(REQUEST)


def test_an_unreachable_api_is_transient():
    env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "PATH": ""}
    with pytest.raises(engines.EngineError) as caught:
        engines.create_engine("anthropic", env=env, timeout=5).ask(REQUEST)
    assert caught.value.transient and "cannot reach the API" in caught.value.message
    assert caught.value.unreachable and caught.value.fix


@pytest.fixture
def http_stub():
    """A loopback HTTP server answering every POST with the ``status`` and ``body`` the test sets,
    or (``hold``) never answering until the test ends."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    reply = {"status": 200, "body": b"{}", "hold": False}
    released = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("content-length") or 0))
            if reply["hold"]:
                released.wait(10)
                return
            self.send_response(reply["status"])
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(reply["body"])))
            self.end_headers()
            self.wfile.write(reply["body"])

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    reply["url"] = f"http://127.0.0.1:{server.server_address[1]}"
    yield reply
    released.set()
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_key_is_fatal_and_names_the_fix(http_stub, status):
    http_stub.update(status=status, body=json.dumps({"type": "error", "error": {
        "type": "authentication_error", "message": "invalid x-api-key"}}).encode())
    env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": http_stub["url"], "PATH": ""}
    with pytest.raises(engines.EngineError) as caught:
        engines.create_engine("anthropic", env=env).ask(REQUEST)
    assert caught.value.fatal and not caught.value.transient and f"HTTP {status}" in caught.value.message
    assert "ANTHROPIC_API_KEY" in caught.value.fix


def test_an_api_that_accepts_and_never_answers_times_out_unreachable(http_stub):
    http_stub.update(hold=True)
    env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": http_stub["url"], "PATH": ""}
    engine = engines.create_engine("anthropic", env=env)
    engine.timeout_for = lambda request: 0.2          # what a fitted deadline does, made short
    started = time.monotonic()
    with pytest.raises(engines.EngineError) as caught:
        engine.ask(REQUEST)
    assert time.monotonic() - started < 2
    assert caught.value.unreachable and not caught.value.transient and "no answer within 0.2 s" in caught.value.message


def test_the_anthropic_engine_needs_a_key():
    with pytest.raises(engines.EngineUnavailable, match="ANTHROPIC_API_KEY is not set"):
        engines.create_engine("anthropic", env={"PATH": ""}).check()
