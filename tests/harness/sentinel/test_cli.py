"""sentinel install / uninstall / check / hook, driven through the memory-router CLI."""

import json
import subprocess

import pytest

from harness.install import hookcommand
from harness.install import settings as inst
from harness.install import trialrun as probes
from support.fixture_transcripts import real_injection_line
from support.settings_project import cli, doctor, settings_file
from support.settings_data import FOREIGN_SETTINGS

FOREIGN = FOREIGN_SETTINGS



# --------------------------------------------------------------------------- sentinel


def test_sentinel_install_uninstall_round_trip(capsys, project):
    settings_file(project).write_bytes(FOREIGN)
    code, out, _ = cli(capsys, "sentinel", "install", "--project", project)
    assert code == 0
    record = json.loads((project / ".claude" / "memory-router" / "sentinel.json").read_text())
    assert record["text"].startswith("MEMORY-ROUTER-SENTINEL-") and record["text"] in out
    entries = inst.find_entries(json.loads(settings_file(project).read_text()), hookcommand.SENTINEL_MARK)
    assert len(entries) == 1 and record["flag"] in hookcommand.command_words(entries[0].command)
    code, out, _ = cli(capsys, "sentinel", "install", "--project", project)
    assert code == 0 and "already installed" in out
    assert cli(capsys, "sentinel", "uninstall", "--project", project)[0] == 0
    assert settings_file(project).read_bytes() == FOREIGN


def test_sentinel_and_router_uninstalled_in_either_order(capsys, project):
    settings_file(project).write_bytes(FOREIGN)
    cli(capsys, "install", "--project", project)
    cli(capsys, "sentinel", "install", "--project", project, "--text", "MEMORY-ROUTER-SENTINEL-x1")
    cli(capsys, "uninstall", "--project", project)
    assert not inst.find_entries(json.loads(settings_file(project).read_text()), hookcommand.ROUTER_MARK)
    cli(capsys, "sentinel", "uninstall", "--project", project)
    assert settings_file(project).read_bytes() == FOREIGN


def test_installed_sentinel_fires_once(capsys, project):
    cli(capsys, "sentinel", "install", "--project", project, "--text", "MEMORY-ROUTER-SENTINEL-once")
    command = inst.find_entries(json.loads(settings_file(project).read_text()), hookcommand.SENTINEL_MARK)[0].command
    payload = json.dumps(probes.probe_payload(str(project))).encode()
    runs = [subprocess.run(command, shell=True, input=payload, capture_output=True, cwd=project, timeout=60)
            for _ in range(2)]
    assert b"MEMORY-ROUTER-SENTINEL-once" in runs[0].stdout and runs[1].stdout == b""
    code, checks, _ = doctor(capsys, "--project", project)
    assert checks["sentinel hook"]["status"] == "info"


def write_session(path, prompts, sentinel=None, repeat_sentinel_on=None, version="2.1.293"):
    """A session in the 2.1.293 shape: typed prompts, the sentinel's attachment line (a copy of
    the real fixture line's keys) on the first, an assistant reply to each."""
    lines, parent = [], None
    for i, text in enumerate(prompts):
        prompt = prompt_line(text, parent, version=version)
        lines.append(prompt)
        parent = prompt["uuid"]
        if sentinel and (i == 0 or i == repeat_sentinel_on):
            attachment = attachment_line(f"memory-router sentinel: {sentinel}", parent, version=version)
            lines.append(attachment)
            parent = attachment["uuid"]
        reply = assistant_line(f"reply {i}", parent, version=version)
        lines.append(reply)
        parent = reply["uuid"]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _envelope(kind, parent, version):
    import uuid

    return {"parentUuid": parent, "isSidechain": False, "type": kind, "uuid": str(uuid.uuid4()),
            "timestamp": "2026-10-08T11:29:48.550Z", "userType": "external", "entrypoint": "cli",
            "cwd": "/home/u/proj", "sessionId": "a852aee3-571e-43fa-a39e-626fd2f76e0d", "version": version,
            "gitBranch": "main"}


def prompt_line(text, parent, version):
    line = _envelope("user", parent, version)
    line.update({"message": {"role": "user", "content": text}, "promptSource": "typed"})
    return line


def attachment_line(text, parent, version):
    real = real_injection_line()
    real.update({k: v for k, v in _envelope("attachment", parent, version).items() if k in real})
    real["attachment"]["content"] = [text]
    real["rendered"] = [{"content": f"<system-reminder>\nUserPromptSubmit hook additional context: {text}\n"
                                    "</system-reminder>"}]
    return real


def assistant_line(text, parent, version):
    import uuid

    line = _envelope("assistant", parent, version)
    line.update({"message": {"model": "claude-opus-4-5", "id": f"msg_{uuid.uuid4().hex[:12]}", "type": "message",
                             "role": "assistant", "content": [{"type": "text", "text": text}],
                             "stop_reason": "end_turn", "stop_sequence": None,
                             "usage": {"input_tokens": 10, "output_tokens": 5}}, "requestId": "req_1"})
    return line


@pytest.mark.parametrize("prompts, repeat, code, phrase", [
    (["one", "two", "three"], None, 0, "CONFIRMED"),
    (["one", "two", "three"], 2, 1, "not once"),
    (["one"], None, 1, "only 0 prompt(s) after"),
])
def test_sentinel_check(capsys, tmp_path, prompts, repeat, code, phrase):
    transcript = write_session(tmp_path / "s.jsonl", prompts, "MEMORY-ROUTER-SENTINEL-c4", repeat)
    result, out, _ = cli(capsys, "sentinel", "check", transcript, "--sentinel", "MEMORY-ROUTER-SENTINEL-c4")
    assert result == code
    assert phrase in out


def test_sentinel_check_reads_the_recorded_text(capsys, project, tmp_path):
    cli(capsys, "sentinel", "install", "--project", project, "--text", "MEMORY-ROUTER-SENTINEL-rec")
    transcript = write_session(tmp_path / "s.jsonl", ["a", "b", "c"], "MEMORY-ROUTER-SENTINEL-rec")
    code, out, _ = cli(capsys, "sentinel", "check", transcript, "--project", project, "--json")
    report = json.loads(out)
    assert code == 0 and report["ok"] and report["sentinel"] == "MEMORY-ROUTER-SENTINEL-rec"
    assert report["prompts_after_sentinel"] == 2


def test_sentinel_check_on_a_pre_attachment_transcript(capsys, tmp_path, transcript_fixtures):
    transcript = transcript_fixtures / "v2.1.38-routed-silent-routed.jsonl"
    code, out, _ = cli(capsys, "sentinel", "check", transcript, "--sentinel", "MEMORY-ROUTER-SENTINEL-none")
    assert code == 1 and "(c) UNKNOWN" in out and "cannot show injections" in out


def test_sentinel_check_without_a_record(capsys, project, tmp_path):
    code, _, err = cli(capsys, "sentinel", "check", tmp_path / "x.jsonl", "--project", project)
    assert code == 2 and "no sentinel recorded" in err
