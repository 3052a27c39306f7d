"""``memory-router transcript audit|locate|census`` driven as a user runs them: the installed console
script, exit codes 0 (all pass) / 1 (a check fails) / 2 (a file cannot be read at all)."""

import json
import pathlib
import os
from collections import Counter

import pytest

from support.fixture_transcripts import raw_lines

SENTINEL = "SENTINEL-cli-9d1"


def build_pass(session, bodies, tmp_path, name="pass.jsonl"):
    s = session()
    s.prompt("why can't bash see my setx variable?")
    s.injection(bodies["setx"])
    s.assistant("Because only a user-opened terminal sees it.")
    return s.write(tmp_path / name)


def build_resend(session, bodies, tmp_path, name="resend.jsonl"):
    s = session()
    s.prompt("setx?")
    s.injection(bodies["setx"])
    s.tool_call("Bash", {"command": "echo $X"}, "")
    s.injection(bodies["setx"])
    return s.write(tmp_path / name), s.line


def test_audit_pass_exits_0_with_json_shape(run_cli, session, bodies, tmp_path):
    path = build_pass(session, bodies, tmp_path)
    proc = run_cli("transcript", "audit", path, "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert (data["status"], data["exit_code"], data["errors"]) == ("pass", 0, [])
    (file,) = data["files"]
    assert file["capability"] == "recorded" and file["can_show_injections"] is True
    stream = file["streams"][0]
    assert stream["stream"] == "main" and stream["status"] == "pass"
    assert stream["prompts"][0]["injections"][0]["cluster_ids"] == ["env-vars"]
    assert {c["id"]: c["status"] for c in stream["checks"]} == {"a": "pass", "b": "pass", "c": "n/a", "d": "pass", "e": "n/a",
                                                              "f": "pass"}


def test_audit_resend_exits_1_naming_the_line(run_cli, session, bodies, tmp_path):
    path, line = build_resend(session, bodies, tmp_path)
    proc = run_cli("transcript", "audit", path)
    assert proc.returncode == 1
    out = proc.stdout.decode()
    assert f"L{line}:" in out and "fail" in out
    data = json.loads(run_cli("transcript", "audit", path, "--json").stdout)
    checks = {c["id"]: c for c in data["files"][0]["streams"][0]["checks"]}
    assert [e["line"] for e in checks["b"]["evidence"]] == [line]


def test_audit_sentinel_twice_exits_1(run_cli, session, tmp_path):
    s = session()
    s.prompt("hi")
    s.injection(f"one-shot {SENTINEL}")
    s.tool_call("Bash", {"command": "ls"}, "x")
    s.injection(f"one-shot {SENTINEL}")
    path = s.write(tmp_path / "twice.jsonl")
    proc = run_cli("transcript", "audit", path, "--sentinel", SENTINEL, "--json")
    assert proc.returncode == 1
    check_c = json.loads(proc.stdout)["files"][0]["streams"][0]["checks"][2]
    assert check_c["id"] == "c" and check_c["status"] == "fail" and [e["line"] for e in check_c["evidence"]] == [2, 5]


PRE_ATTACHMENT = "v2.1.38-routed-silent-routed.jsonl"   # the hook injected twice; 2.1.38 recorded neither


def test_pre_attachment_fixture_exits_0_without_claiming_a_pass(run_cli, transcript_fixtures):
    proc = run_cli("transcript", "audit", transcript_fixtures / PRE_ATTACHMENT)
    assert proc.returncode == 0
    text = " ".join(proc.stdout.decode().split())
    assert "cannot show injections" in text and "unknown, not passed" in text
    data = json.loads(run_cli("transcript", "audit", transcript_fixtures / PRE_ATTACHMENT, "--json").stdout)
    check_a = data["files"][0]["streams"][0]["checks"][0]
    assert check_a["id"] == "a" and check_a["status"] == "unknown"
    assert data["files"][0]["status"] == "unknown" and data["files"][0]["streams"][0]["status"] == "unknown"
    assert "0 pass, 0 fail, 1 unknown (cannot show injections)" in text


@pytest.mark.parametrize("version, code", [("2.1.39", 0), ("2.1.293", 0), ("2.1.328", 0)])
def test_audit_dir_includes_subagent_files_separately(run_cli, transcript_fixtures, version, code):
    session = transcript_fixtures / f"v{version}-subagent.jsonl"
    [sub_file] = sorted((session.with_suffix("") / "subagents").glob("agent-*.jsonl"))
    proc = run_cli("transcript", "audit", session, "--json")
    assert proc.returncode == code, proc.stdout
    files = json.loads(proc.stdout)["files"]
    assert [f["role"] for f in files] == ["session", "subagent"]
    assert files[0]["subagent_files"] == [str(sub_file)]
    assert files[1]["streams"][0]["stream"] == "sidechain:" + sub_file.stem.removeprefix("agent-")
    proc = run_cli("transcript", "audit", session, "--no-subagents", "--json")
    assert len(json.loads(proc.stdout)["files"]) == 1


@pytest.mark.parametrize("version", ["2.1.293", "2.1.328"])
def test_audit_fails_the_real_reinjection_at_a_task_notification(run_cli, version):
    """2.1.293+ fire UserPromptSubmit for the subagent's <task-notification> turn, and the router
    before it skipped those turns injected again there (tests/fixtures/audit-failing): the audit
    must call that an injection at no prompt (check b), not pass it."""
    recorded = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "audit-failing"
    proc = run_cli("transcript", "audit", recorded / f"v{version}-subagent-routed-notification.jsonl", "--json")
    assert proc.returncode == 1
    main = json.loads(proc.stdout)["files"][0]["streams"][0]
    checks = {c["id"]: c for c in main["checks"]}
    assert checks["b"]["status"] == "fail"
    assert any("task notification" in e["note"] for e in checks["b"]["evidence"])


def test_truncated_last_line_warns_on_stderr_and_exits_0(run_cli, session, bodies, tmp_path):
    s = session()
    s.prompt("setx?")
    s.injection(bodies["setx"])
    path = s.write(tmp_path / "live.jsonl", tail='{"type":"assist')
    proc = run_cli("transcript", "audit", path)
    assert proc.returncode == 0
    assert "live.jsonl:3" in proc.stderr.decode() and "cut off" in proc.stderr.decode()


@pytest.mark.parametrize("make", [
    lambda tmp: tmp / "missing.jsonl",
    lambda tmp: (tmp / "garbage.jsonl").write_bytes(b"\x00\x01\x02 not json\n") and tmp / "garbage.jsonl",
])
def test_unreadable_file_exits_2(run_cli, tmp_path, make, session, bodies):
    good = build_pass(session, bodies, tmp_path)
    bad = make(tmp_path)
    proc = run_cli("transcript", "audit", good, bad)
    assert proc.returncode == 2
    assert str(bad.name) in proc.stderr.decode()
    data = json.loads(run_cli("transcript", "audit", good, bad, "--json").stdout)
    assert data["status"] == "error" and len(data["files"]) == 1 and data["errors"][0]["path"].endswith(bad.name)


def test_fail_and_unreadable_together_exit_2(run_cli, session, bodies, tmp_path):
    path, _ = build_resend(session, bodies, tmp_path)
    assert run_cli("transcript", "audit", path, tmp_path / "nope.jsonl").returncode == 2


def test_census_json_and_strict(run_cli, transcript_fixtures, tmp_path):
    proc = run_cli("transcript", "census", transcript_fixtures, "--strict", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    files = sorted(transcript_fixtures.rglob("*.jsonl"))
    assert data["totals"]["files"] == len(files) and data["strict_failures"] == []
    attachment_types = Counter(obj["attachment"]["type"] for path in files for _n, obj in raw_lines(path)
                               if obj.get("type") == "attachment")
    assert data["totals"]["attachment_types"] == attachment_types
    # 2.1.293 and 2.1.328 wrote one per routed prompt: 2 in each routed session, 1 in each tools session
    assert attachment_types["hook_additional_context"] >= 8
    odd = tmp_path / "odd.jsonl"
    odd.write_bytes(b'{"type":"hologram"}\n{broken\n')
    assert run_cli("transcript", "census", odd).returncode == 0
    proc = run_cli("transcript", "census", odd, "--strict")
    assert proc.returncode == 1 and "hologram" in proc.stdout.decode()
    assert run_cli("transcript", "census", tmp_path / "nope.jsonl").returncode == 2


def test_locate_prints_the_newest_transcript(run_cli, tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    config = tmp_path / "cfg"
    key = str(project).replace("/", "-").replace("_", "-").replace(".", "-")
    folder = config / "projects" / key
    folder.mkdir(parents=True)
    for name, mtime in (("a.jsonl", 100), ("b.jsonl", 200)):
        (folder / name).write_text("{}\n")
        os.utime(folder / name, (mtime, mtime))
    env = {"CLAUDE_CONFIG_DIR": str(config)}
    proc = run_cli("transcript", "locate", "--project", project, env=env)
    assert proc.returncode == 0 and proc.stdout.decode().strip() == str(folder / "b.jsonl")
    data = json.loads(run_cli("transcript", "locate", "--project", project, "--json", env=env).stdout)
    assert data["session_id"] == "b" and data["sessions"] == 2 and data["key"] == key
    proc = run_cli("transcript", "locate", "--project", tmp_path / "elsewhere", env=env)
    assert proc.returncode == 2 and "no session transcript" in proc.stderr.decode()


@pytest.mark.parametrize("command", [["transcript", "audit"], ["transcript", "census"], ["sentinel", "check"]])
def test_odd_lines_are_read_or_skipped_never_a_traceback(run_cli, session, bodies, tmp_path, command):
    # A text block that is a number and a line nested 100,000 deep (issue 11): the first is read
    # as a prompt without text, the second is one skipped line with its line number.
    s = session()
    s.prompt("why can't bash see my setx variable?")
    s.injection(bodies["setx"])
    s.raw(json.dumps({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": 5}]}}))
    s.raw('{"type": "user", "message": ' + "[" * 100_000 + "]" * 100_000 + "}")
    s.assistant("done")
    path = s.write(tmp_path / "odd.jsonl")
    extra = ["--sentinel", "NOT-THERE"] if command[0] == "sentinel" else []
    proc = run_cli(*command, path, *extra)
    err = proc.stderr.decode()
    assert "Traceback" not in err and proc.returncode in (0, 1), err
    if command[1] != "check":
        assert "odd.jsonl:4" in err and "nested too deep" in err


def test_a_file_of_only_unusable_lines_is_one_error_line_saying_why(run_cli, tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_text('{"type": "user", "message": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    for command in ("audit", "census"):
        proc = run_cli("transcript", command, path)
        errors = [line for line in proc.stderr.decode().splitlines() if line.startswith("memory-router: error:")]
        assert proc.returncode == 2 and len(errors) == 1 and "Traceback" not in proc.stderr.decode()
        assert f"{path}:1:" in errors[0] and "nested too deep" in errors[0]


@pytest.mark.parametrize("command", [["transcript", "audit"], ["transcript", "census"], ["sentinel", "check"],
                                     ["canary", "verdict"]])
def test_an_empty_transcript_path_is_one_clear_error(run_cli, tmp_path, session, bodies, command):
    # `transcript audit "$(memory-router transcript locate)"` with no session passes "": it was read as
    # "." (every .jsonl under the current directory) and gave a second, confusing error (issue 11).
    build_pass(session, bodies, tmp_path, name="unrelated.jsonl")
    extra = {"sentinel": ["--sentinel", "X"], "canary": ["--case", "setx-cold"]}.get(command[0], [])
    proc = run_cli(*command, "", *extra, cwd=tmp_path)
    err = proc.stderr.decode()
    assert proc.returncode == 2 and err.count("\n") == 1, err
    assert "the transcript path is empty" in err and "transcript locate" in err and proc.stdout == b""


def test_locate_then_audit_with_no_session_prints_the_reason_once(run_cli, tmp_path):
    import subprocess

    from conftest import memory_router_exe

    exe = memory_router_exe()
    proc = subprocess.run(f'"{exe}" transcript audit "$("{exe}" transcript locate)"', shell=True, cwd=tmp_path,
                          capture_output=True)
    lines = proc.stderr.decode().splitlines()
    assert proc.returncode == 2 and len(lines) == 2 and proc.stdout == b""
    assert "no session transcript for" in lines[0] and "the message above says why" in lines[1]


def test_audit_help_lists_every_check(capsys):
    from harness.cli import main
    from transcripts.auditmodel import CHECK_NAMES

    assert main(["transcript", "audit", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for check_id in CHECK_NAMES:
        assert f"({check_id}) " in text, check_id
    assert "(f) the router repeats no member line in one context" in text
