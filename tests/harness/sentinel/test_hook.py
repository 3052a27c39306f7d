"""The one-shot sentinel hook, run as Claude Code runs it: a subprocess fed a payload on stdin."""

import json
import os
import subprocess
import sys
import threading

import pytest

from harness.install import hookcommand
from harness.sentinel import hook as sentinel

PAYLOAD = json.dumps({"session_id": "s", "transcript_path": "", "cwd": "/tmp", "permission_mode": "default",
                      "hook_event_name": "UserPromptSubmit", "prompt": "hello"}).encode()


def run_module(*args, env=None):
    return subprocess.run([sys.executable, "-P", "-m", "harness.sentinel", *args], input=PAYLOAD,
                          capture_output=True, timeout=30, env={**os.environ, **(env or {})})


def test_fires_once_then_stays_silent(tmp_path):
    flag = tmp_path / "state" / "sentinel-x.fired"
    first = run_module("--flag", str(flag), "--text", "MEMORY-ROUTER-SENTINEL-abc123")
    second = run_module("--flag", str(flag), "--text", "MEMORY-ROUTER-SENTINEL-abc123")
    assert first.returncode == 0 and second.returncode == 0
    out = json.loads(first.stdout)
    assert list(out) == ["hookSpecificOutput"]
    assert out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert "MEMORY-ROUTER-SENTINEL-abc123" in out["hookSpecificOutput"]["additionalContext"]
    assert second.stdout == b"" and second.stderr == b""
    assert flag.is_file()


def test_the_installed_command_string_fires_once_through_the_shell(tmp_path):
    flag = tmp_path / "it's here" / "sentinel.fired"
    command = hookcommand.sentinel_hook_command(sys.executable, str(flag), "MEMORY-ROUTER-SENTINEL-77")
    runs = [subprocess.run(command, shell=True, input=PAYLOAD, capture_output=True, timeout=30, cwd=tmp_path)
            for _ in range(3)]
    assert [r.returncode for r in runs] == [0, 0, 0]
    assert b"MEMORY-ROUTER-SENTINEL-77" in runs[0].stdout
    assert [r.stdout for r in runs[1:]] == [b"", b""]


def test_a_project_harness_package_cannot_shadow_ours(tmp_path):
    (tmp_path / "harness").mkdir()
    (tmp_path / "harness" / "__init__.py").write_text("")
    (tmp_path / "harness" / "sentinel.py").write_text("print('SHADOWED')\n")
    command = hookcommand.sentinel_hook_command(sys.executable, str(tmp_path / "f.fired"), "S-1")
    result = subprocess.run(command, shell=True, input=PAYLOAD, capture_output=True, timeout=30, cwd=tmp_path)
    assert b"SHADOWED" not in result.stdout and b"S-1" in result.stdout


@pytest.mark.parametrize("args", [
    [],
    ["--flag", "/tmp/x"],
    ["--text", "T"],
    ["--flag", "/tmp/x", "--text", "T", "--bogus"],
])
def test_bad_arguments_fail_open_with_a_log_line(tmp_path, args):
    log = tmp_path / "hook.log"
    result = run_module(*args, env={"MEMORY_ROUTER_LOG": str(log)})
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    assert "memory-router sentinel: ValueError" in log.read_text()


def test_never_fires_without_setting_its_flag(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the flag's directory should be")
    flag = blocker / "sentinel.fired"
    runs = [run_module("--flag", str(flag), "--text", "S-2") for _ in range(2)]
    assert [(r.returncode, r.stdout) for r in runs] == [(0, b""), (0, b"")]


def test_in_process_run_and_race(tmp_path):
    flag = tmp_path / "f.fired"
    outputs = []

    class Sink:
        def __init__(self):
            self.text = ""

        def write(self, text):
            self.text += text

        def flush(self):
            pass

    def one():
        sink = Sink()
        import io

        sentinel.run(["--flag", str(flag), "--text", "RACE"], stdin=io.BytesIO(PAYLOAD), stdout=sink)
        outputs.append(sink.text)

    threads = [threading.Thread(target=one) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(1 for text in outputs if "RACE" in text) == 1
    assert sum(1 for text in outputs if text == "") == 7


def test_new_texts_are_unique_and_get_their_own_flags(tmp_path):
    texts = {sentinel.new_sentinel_text() for _ in range(50)}
    assert len(texts) == 50 and all(t.startswith(sentinel.SENTINEL_PREFIX) for t in texts)
    flags = {sentinel.flag_path_for(str(tmp_path), t) for t in texts}
    assert len(flags) == 50
    assert sentinel.flag_path_for(str(tmp_path), "../../etc/passwd").startswith(str(tmp_path))


def test_hook_imports_only_the_standard_library():
    code = ("import sys, harness.sentinel; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('router', 'canaries', 'transcripts', 'yaml', 'rich', 'deepdiff', 'jsonlines', 'secrets')))")
    result = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True, timeout=30)
    assert result.stdout.strip() == "[]", result.stdout + result.stderr


def test_output_is_ascii_json_bytes_on_any_stdout_encoding(tmp_path):
    # The sentinel shares the router hook's fail-open runner (router.hookio), so a UTF-16 stdout
    # cannot turn its answer into bytes Claude Code cannot parse.
    result = run_module("--flag", str(tmp_path / "f.fired"), "--text", "MEMORY-ROUTER-SENTINEL-e9",
                        env={"PYTHONIOENCODING": "utf-16"})
    assert result.returncode == 0
    assert json.loads(result.stdout.decode("ascii"))["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
