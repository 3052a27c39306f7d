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


@pytest.fixture
def store_with_files(tmp_path):
    """The bundled cluster file copied out, with an utterances, a learned-terms and a near-misses
    file beside it (issue 29 item 7: a lab run must route on them, as the user's own hook does)."""
    from router.config import bundled_cluster_file, learned_path, nearmisses_path, utterances_path

    store = tmp_path / "store" / "memory-layer1-clusters.md"
    store.parent.mkdir()
    store.write_bytes(open(bundled_cluster_file(), "rb").read())
    files = {"utterances": utterances_path(store), "learned terms": learned_path(store),
             "near misses": nearmisses_path(store)}
    open(files["utterances"], "wb").write(open(utterances_path(bundled_cluster_file()), "rb").read())
    for what in ("learned terms", "near misses"):
        with open(files[what], "w", encoding="utf-8") as handle:
            handle.write(f"# {what} of this store\n")
    return store, files


def test_lab_run_copies_the_stores_files_beside_its_cluster_file_and_says_so(run_cli, fake_claude, tmp_path,
                                                                             store_with_files):
    from router.config import learned_path, nearmisses_path, utterances_path

    store, files = store_with_files
    run_dir = tmp_path / "run"
    done = run_cli("lab", "run", run_dir, "--prompt", "first", "--memory", "none", "--clusters", store,
                   "--claude", fake_claude(), "--json")
    assert done.returncode == 0, done.stderr.decode()
    run_cluster_file = run_dir / "project" / "brain" / "memory-layer1-clusters.md"
    for copied, source in ((utterances_path(run_cluster_file), files["utterances"]),
                           (learned_path(run_cluster_file), files["learned terms"]),
                           (nearmisses_path(run_cluster_file), files["near misses"])):
        assert open(copied, "rb").read() == open(source, "rb").read()
    err = done.stderr.decode()
    assert (f"routing on {store} with its utterances ({files['utterances']}), learned terms "
            f"({files['learned terms']}), near misses ({files['near misses']}), copied beside") in err
    manifest = json.loads((run_dir / "run.json").read_text())
    assert [what for what, _path in manifest["store_files"]] == ["utterances", "learned terms", "near misses"]


def test_lab_run_no_store_files_routes_on_the_cluster_file_alone(run_cli, fake_claude, tmp_path, store_with_files):
    from router.config import utterances_path

    store, _files = store_with_files
    run_dir = tmp_path / "run"
    done = run_cli("lab", "run", run_dir, "--prompt", "first", "--memory", "none", "--clusters", store,
                   "--claude", fake_claude(), "--no-store-files", "--json")
    assert done.returncode == 0, done.stderr.decode()
    assert not os.path.exists(utterances_path(run_dir / "project" / "brain" / "memory-layer1-clusters.md"))
    assert f"routing on {store} alone (--no-store-files)" in done.stderr.decode()
    assert json.loads((run_dir / "run.json").read_text())["store_files"] == []


def test_the_store_files_line_says_when_there_are_none(tmp_path):
    from harness.lab.cli import store_files_line

    store = tmp_path / "bare.md"
    store.write_text("x")
    assert store_files_line(str(store), True) == (f"routing on {store} alone (no utterances, learned terms, "
                                                  "near misses file beside it)")
