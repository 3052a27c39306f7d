"""``memory-router lab``: the command line, run end to end against a stand-in client.

The fake client below does what the real one does at the level the lab observes: it reads its
prompt from argv, POSTs one Messages request to $ANTHROPIC_BASE_URL, writes a transcript under
$HOME/.claude/projects/<key>/ and prints the ``--output-format json`` result. The real client is
exercised in tests/harness/lab/test_realclient.py."""

import json
import os
import sys

import pytest

FAKE_CLIENT = r'''#!{python}
import json, os, re, sys, urllib.request
if sys.argv[1:] == ["--version"]:
    print("{version} (Claude Code)"); sys.exit(0)
session = sys.argv[sys.argv.index("--resume") + 1] if "--resume" in sys.argv else "fake-session"

def answer(prompt):
    body = json.dumps({{"model": "m", "stream": True, "system": [{{"type": "text", "text": "b"}}, {{"type": "text", "text": "main"}}],
                       "tools": [{{"name": "Write"}}], "messages": [{{"role": "user", "content": prompt}}]}}).encode()
    req = urllib.request.Request(os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages?beta=true", data=body, method="POST")
    urllib.request.urlopen(req, timeout=10).read()
    folder = os.path.join(os.environ["HOME"], ".claude", "projects", re.sub("[^A-Za-z0-9]", "-", os.getcwd()))
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, session + ".jsonl"), "a") as out:
        out.write(json.dumps({{"type": "user", "uuid": prompt, "sessionId": session, "version": "{version}",
                              "message": {{"role": "user", "content": prompt}}}}) + "\n")
    print(json.dumps({{"type": "result", "session_id": session, "result": "ok", "is_error": False}}), flush=True)

if "--input-format" in sys.argv:
    for line in sys.stdin:
        answer(json.loads(line)["message"]["content"])
else:
    answer(sys.argv[-1])
'''


@pytest.fixture
def fake_claude(tmp_path):
    def make(version="2.1.328"):
        path = tmp_path / f"fake-claude-{version}"
        path.write_text(FAKE_CLIENT.format(python=sys.executable, version=version))
        path.chmod(0o755)
        return str(path)

    return make


def test_lab_run_and_report_against_a_stand_in_client(run_cli, fake_claude, tmp_path):
    run_dir = tmp_path / "run"
    done = run_cli("lab", "run", run_dir, "--prompt", "first", "--prompt", "second", "--memory", "flat,slim",
                   "--claude", fake_claude(), "--json")
    assert done.returncode == 0, done.stderr.decode()
    report = json.loads(done.stdout)
    assert [s["memory"] for s in report["sessions"]] == ["flat", "slim"]
    flat, slim = report["sessions"]
    assert flat["measured"]["totals"]["calls"] == 2 and flat["agreement"]["agree"]
    assert report["comparison"]["prompts"] == 2
    records = [json.loads(line) for line in (run_dir / "slim" / "requests.jsonl").read_text().splitlines()]
    assert [r["prompt_index"] for r in records] == [0, 1]
    assert json.loads(records[1]["body"])["messages"][0]["content"] == "second"
    again = run_cli("lab", "report", run_dir, "--no-calls")
    assert again.returncode == 0 and b"request bytes measured from the real client" in again.stdout


def test_lab_run_stream_session_stamps_each_prompt(run_cli, fake_claude, tmp_path):
    run_dir = tmp_path / "run"
    done = run_cli("lab", "run", run_dir, "--prompt", "one", "--prompt", "two", "--prompt", "three",
                   "--session", "stream", "--claude", fake_claude(), "--json")
    assert done.returncode == 0, done.stderr.decode()
    records = [json.loads(line) for line in (run_dir / "requests.jsonl").read_text().splitlines()]
    assert [(r["prompt_index"], json.loads(r["body"])["messages"][0]["content"]) for r in records] == [
        (0, "one"), (1, "two"), (2, "three")]
    manifest = json.loads((run_dir / "run.json").read_text())
    assert manifest["session"] == "stream" and [o["exit_code"] for o in manifest["outcomes"]] == [0, 0, 0]


def test_lab_run_plot_writes_a_png(run_cli, fake_claude, tmp_path):
    plot = tmp_path / "memory.png"
    done = run_cli("lab", "run", tmp_path / "run", "--prompt", "one", "--claude", fake_claude(), "--plot", plot,
                   "--no-calls")
    assert done.returncode == 0, done.stderr.decode()
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_untested_client_version_is_a_warning_not_a_refusal(run_cli, fake_claude):
    done = run_cli("lab", "client", "which", "--claude", fake_claude("2.0.76"))
    assert done.returncode == 0
    assert b"2.0.76 is not the tested version 2.1.328" in done.stderr


def test_no_client_is_one_line_saying_how_to_install(run_cli, tmp_path):
    env = {"PATH": str(tmp_path / "empty"), "MEMORY_ROUTER_LAB_CACHE": str(tmp_path / "cache"),
           "MEMORY_ROUTER_CLAUDE": ""}
    done = run_cli("lab", "client", "which", env=env)
    assert done.returncode == 2
    lines = done.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and "npm install @anthropic-ai/claude-code@2.1.328" in lines[0]


@pytest.mark.parametrize("args, fragment", [
    (["--memory", "fat"], "unknown mode"),
    (["--memory", "slim,slim"], "names a mode twice"),
    (["--prompts", "missing.txt"], "cannot read prompts file"),
])
def test_bad_run_arguments_exit_2(run_cli, fake_claude, tmp_path, args, fragment):
    done = run_cli("lab", "run", tmp_path / "run", "--claude", fake_claude(), *args)
    assert done.returncode == 2 and fragment in done.stderr.decode()
    assert b"Traceback" not in done.stderr


def test_report_on_a_directory_that_is_no_run(run_cli, tmp_path):
    done = run_cli("lab", "report", tmp_path)
    assert done.returncode == 2 and b"no lab session run here" in done.stderr


def test_prompts_file_skips_comments_and_blank_lines(tmp_path):
    from harness.lab.cli import read_prompts_file

    path = tmp_path / "p.txt"
    path.write_text("# a comment\nfirst prompt\n\n  second prompt  \n")
    assert read_prompts_file(path) == ["first prompt", "second prompt"]


def test_lab_is_registered_in_help(run_cli):
    done = run_cli("lab", "--help")
    assert done.returncode == 0 and b"run" in done.stdout and b"report" in done.stdout


def test_lab_serve_answers_and_logs_until_interrupted(tmp_path):
    import signal
    import subprocess
    import urllib.request

    exe = os.path.join(os.path.dirname(sys.executable), "memory-router")
    log = tmp_path / "requests.jsonl"
    server = subprocess.Popen([exe, "lab", "serve", "--log", str(log)], stdout=subprocess.PIPE, text=True)
    try:
        first = server.stdout.readline()
        url = first.split("listening on ")[1].split(";")[0]
        assert url.startswith("http://127.0.0.1:")
        body = json.dumps({"model": "m", "stream": False, "messages": [{"role": "user", "content": "hi"}]}).encode()
        with urllib.request.urlopen(urllib.request.Request(url + "/v1/messages", data=body), timeout=10) as response:
            assert json.loads(response.read())["content"][0]["text"] == "Reply 1."
    finally:
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=10) == 0
    assert json.loads(log.read_text().splitlines()[0])["body"] == body.decode()
