"""``memory-router canary verdict``: exit codes, the record file, the memory directory and
subagent files it finds, and its input errors."""

import json
import os

import pytest

from harness.cli import main
from harness.canary.verdict import append_record
from support.verdict_sessions import CASE, RIGHT, SLIM, SLUG, WRONG, Session, router_context, standard


# --------------------------------------------------------------------------- the CLI


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def write_project_session(tmp_path, session, memory_text=SLIM):
    """Claude Code's layout: <config>/projects/<key>/<session>.jsonl beside <key>/memory/MEMORY.md."""
    folder = tmp_path / "claude" / "projects" / "-home-marek-aria"
    (folder / "memory").mkdir(parents=True)
    (folder / "memory" / "MEMORY.md").write_text(memory_text)
    stamp = 1_790_000_000  # 2026-09-21, before the built session's timestamps
    os.utime(folder / "memory" / "MEMORY.md", (stamp, stamp))
    return session.write(folder / f"{session.session_id}.jsonl")


@pytest.mark.parametrize("reply, memory_text, code, verdict", [
    (RIGHT, SLIM, 0, "PASS"),
    (WRONG, SLIM, 1, "FAIL"),
    (RIGHT, SLIM + f"- {SLUG} \u2014 x\n", 3, "INCONCLUSIVE"),
])
def test_cli_exit_codes_and_record(capsys, tmp_path, reply, memory_text, code, verdict):
    transcript = write_project_session(tmp_path, standard(reply=reply), memory_text)
    record = tmp_path / "records" / "behavioural.jsonl"
    result, out, _ = run(capsys, "canary", "verdict", transcript, "--case", "cloudflare-cold", "--record", record)
    assert result == code and verdict in out
    result, out, _ = run(capsys, "canary", "verdict", transcript, "--case", "cloudflare-cold", "--record", record,
                         "--json")
    report = json.loads(out)
    assert result == code and report["verdict"] == verdict and report["exit_code"] == code
    assert report["memory_dir"] == str(transcript.parent / "memory")
    import jsonlines

    with jsonlines.open(record) as reader:  # the record is valid JSONL, one object per line
        lines = list(reader)
    assert len(lines) == 2
    for line in lines:
        assert {"date", "case", "verdict", "claude_code_version", "session_id"} <= set(line)
        assert (line["case"], line["verdict"], line["claude_code_version"]) == ("cloudflare-cold", verdict, "2.1.293")
        assert line["session_id"] == "d6b06b53-fc7b-4a57-9e93-333e04c29f19"
        assert line["date"].endswith("Z") and line["evidence"]


def test_cli_memory_dir_option_and_changed_memory(capsys, tmp_path):
    transcript = write_project_session(tmp_path, standard())
    os.utime(transcript.parent / "memory" / "MEMORY.md")  # touched now: after the session started
    code, out, _ = run(capsys, "canary", "verdict", transcript, "--case", "cloudflare-cold", "--json")
    assert code == 3 and "changed after the session started" in json.loads(out)["reasons"][0]
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "MEMORY.md").write_text(SLIM)
    os.utime(other / "MEMORY.md", (1_790_000_000, 1_790_000_000))
    code, out, _ = run(capsys, "canary", "verdict", transcript, "--case", "cloudflare-cold", "--memory-dir", other)
    assert code == 0


def test_cli_finds_subagent_files(capsys, tmp_path):
    session = Session()
    session.prompt(CASE.prompt)
    session.reply(RIGHT)
    transcript = write_project_session(tmp_path, session)
    sub = Session()
    sub.prompt("sub-task")
    sub.injection(router_context(), sidechain=True, agent_id="c3")
    folder = transcript.with_suffix("") / "subagents"
    folder.mkdir(parents=True)
    sub.write(folder / "agent-c3.jsonl")
    code, out, _ = run(capsys, "canary", "verdict", transcript, "--case", "cloudflare-cold")
    assert code == 3 and "sidechain" in out


@pytest.mark.parametrize("args, phrase", [
    (["--case", "nope"], "cloudflare-cold"),
    (["--case", "cloudflare-cold", "--suite", "/nonexistent/suite.yaml"], "suite.yaml"),
])
def test_cli_input_errors(capsys, tmp_path, args, phrase):
    transcript = write_project_session(tmp_path, standard())
    code, _, err = run(capsys, "canary", "verdict", transcript, *args)
    assert code == 2 and phrase in err


def test_cli_missing_transcript(capsys, tmp_path):
    code, _, err = run(capsys, "canary", "verdict", tmp_path / "none.jsonl", "--case", "cloudflare-cold")
    assert code == 2 and "none.jsonl" in err


@pytest.mark.parametrize("where", ["a-directory", "under-a-file"])
def test_cli_unwritable_record_is_input_error_not_a_traceback(capsys, tmp_path, where):
    transcript = write_project_session(tmp_path, standard())
    blocker = tmp_path / "blocker"
    if where == "a-directory":
        blocker.mkdir()
        record = blocker
    else:
        blocker.write_text("keep me\n")
        record = blocker / "records.jsonl"
    code, _, err = run(capsys, "canary", "verdict", transcript, "--case", "cloudflare-cold", "--record", record)
    assert code == 2  # never 1, which would read as a FAIL verdict
    assert f"{record}: cannot append the verdict (PASS)" in err and "fix:" in err and "Traceback" not in err
    if where == "under-a-file":
        assert blocker.read_text() == "keep me\n"


def test_append_record_repairs_a_cut_last_line(tmp_path):
    record = tmp_path / "r.jsonl"
    record.write_bytes(b'{"verdict": "PASS"}\n{"verdict": "FA')
    append_record(record, {"verdict": "FAIL"})
    lines = record.read_bytes().split(b"\n")
    assert lines[:2] == [b'{"verdict": "PASS"}', b'{"verdict": "FA']
    assert json.loads(lines[2]) == {"verdict": "FAIL"} and lines[3] == b""


def test_a_record_in_memory_routers_own_folder_leaves_git_status_clean(tmp_path):
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    record = tmp_path / ".claude" / "memory-router" / "behavioural-canaries.jsonl"
    append_record(record, {"verdict": "PASS"})
    assert (record.parent / ".gitignore").is_file()
    status = subprocess.run(["git", "-C", str(tmp_path), "status", "--porcelain", "--untracked-files=all"],
                            capture_output=True, text=True, check=True).stdout
    assert status == ""
    elsewhere = tmp_path / "records" / "r.jsonl"
    append_record(elsewhere, {"verdict": "PASS"})
    assert not (elsewhere.parent / ".gitignore").exists()  # a folder of the user's is left as it is
