"""install / uninstall / doctor / sentinel / checklist, driven through the memory-router CLI."""

import json
import os
import pathlib
import shutil
import subprocess

import pytest

from harness import doctor as doctor_checks
from harness import hookcommand
from harness import install as inst
from harness import install_cli, settingsfile
from harness.cli import main

FOREIGN = (
    b'{\n'
    b'    "permissions": {"allow": ["Bash(ls:*)", "Read(~/notes/**)"]},\n'
    b'    "hooks": {\n'
    b'        "PreToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "check.sh"}]}],\n'
    b'        "UserPromptSubmit": [\n'
    b'            {"hooks": [{"type": "command", "command": "\\"$CLAUDE_PROJECT_DIR\\"/.claude/hooks/ctx.sh",'
    b' "timeout": 10}]}\n'
    b'        ]\n'
    b'    },\n'
    b'    "model": "opus"\n'
    b'}\n'
)

REAL_INJECTION_LINE = (pathlib.Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "transcripts"
                       / "v2.1.293-userpromptsubmit-additional-context-line.jsonl")

ORIGINALS = {
    "foreign-hooks-hand-formatted": FOREIGN,
    "foreign-hooks-crlf": FOREIGN.replace(b"\n", b"\r\n"),
    "foreign-hooks-bom-tabs": b"\xef\xbb\xbf" + json.dumps(json.loads(FOREIGN), indent="\t").encode(),
    "empty-user-prompt-submit-list": b'{"hooks": {"UserPromptSubmit": []}, "x": [1, 2]}',
    "empty-hooks-object": b'{\n  "hooks": {}\n}\n',
    "empty-file": b"",
}


def cli(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def project(tmp_path):
    path = tmp_path / "project"
    (path / ".claude").mkdir(parents=True)
    return path


def settings_file(project):
    return project / ".claude" / "settings.json"


def backups(project):
    folder = project / ".claude" / "memory-router" / "backups"
    return sorted(folder.iterdir()) if folder.is_dir() else []


# --------------------------------------------------------------------------- install / uninstall


@pytest.mark.parametrize("name", sorted(ORIGINALS))
def test_install_then_uninstall_restores_exact_bytes(capsys, project, name):
    original = ORIGINALS[name]
    settings_file(project).write_bytes(original)
    code, out, _ = cli(capsys, "install", "--project", project)
    assert code == 0 and "installed the memory-router hook" in out
    installed = settings_file(project).read_bytes()
    entries = inst.find_entries(inst.parse_settings(installed, "s"), inst.ROUTER_MARK)
    assert len(entries) == 1 and entries[0].timeout == 5
    words = hookcommand.command_words(entries[0].command)
    assert os.path.isabs(words[0]) and words[1:] == ["hook"]
    assert [b.read_bytes() for b in backups(project)] == [original]

    code, out, _ = cli(capsys, "uninstall", "--project", project)
    assert code == 0
    assert settings_file(project).read_bytes() == original


@pytest.mark.parametrize("command", [["install"], ["sentinel", "install"]])
def test_a_symlinked_settings_file_stays_a_link_and_its_target_gets_its_bytes_back(capsys, project, tmp_path,
                                                                                   command):
    """settings.json kept in a dotfiles repository and linked in: an atomic rename over the link would
    replace the link by a plain file, silently cutting the user's file out of their repository."""
    target = tmp_path / "dotfiles" / "claude-settings.json"
    target.parent.mkdir()
    target.write_bytes(FOREIGN)
    settings_file(project).symlink_to(target)
    code, _, _ = cli(capsys, *command, "--project", project)
    assert code == 0
    assert settings_file(project).is_symlink() and os.readlink(settings_file(project)) == str(target)
    mark = inst.SENTINEL_MARK if command[0] == "sentinel" else inst.ROUTER_MARK
    assert len(inst.find_entries(inst.parse_settings(target.read_bytes(), "t"), mark)) == 1
    assert [b.read_bytes() for b in backups(project)] == [FOREIGN]
    code, _, _ = cli(capsys, command[0] if command[0] != "install" else "uninstall",
                     *(["uninstall"] if command[0] == "sentinel" else []), "--project", project)
    assert code == 0
    assert settings_file(project).is_symlink() and os.readlink(settings_file(project)) == str(target)
    assert target.read_bytes() == FOREIGN


def test_install_into_missing_file_and_uninstall_deletes_it(capsys, project):
    assert cli(capsys, "install", "--project", project)[0] == 0
    assert settings_file(project).is_file() and backups(project) == []
    code, out, _ = cli(capsys, "uninstall", "--project", project)
    assert code == 0 and "deleted" in out
    assert not settings_file(project).exists()
    assert len(backups(project)) == 1  # what was deleted is kept


def test_second_install_changes_nothing(capsys, project):
    settings_file(project).write_bytes(FOREIGN)
    cli(capsys, "install", "--project", project)
    first = settings_file(project).read_bytes()
    stat = settings_file(project).stat()
    code, out, _ = cli(capsys, "install", "--project", project)
    assert code == 0 and "already installed" in out and "nothing changed" in out
    assert settings_file(project).read_bytes() == first
    assert settings_file(project).stat().st_mtime_ns == stat.st_mtime_ns
    assert len(backups(project)) == 1


@pytest.mark.parametrize("broken, where", [
    (b'{\n  "hooks": {\n    "UserPromptSubmit": [\n  }\n}\n', ":4:3: invalid JSON"),
    (b'{"model": "opus",}', ":1:18: invalid JSON"),
    (b'{"hooks": []}', ':1: "hooks" must be an object'),
])
@pytest.mark.parametrize("command", ["install", "uninstall"])
def test_broken_settings_left_untouched_exit_2(capsys, project, broken, where, command):
    settings_file(project).write_bytes(broken)
    code, out, err = cli(capsys, command, "--project", project)
    assert code == 2
    assert f"{settings_file(project)}{where}" in err
    assert "nothing was changed" in err and "Traceback" not in err
    assert settings_file(project).read_bytes() == broken
    assert not (project / ".claude" / "memory-router").exists()


def test_user_install_honours_claude_config_dir(capsys, tmp_path, monkeypatch, isolated_env):
    config_dir = tmp_path / "claude-config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config_dir))
    code, out, _ = cli(capsys, "install", "--user")
    assert code == 0
    target = config_dir / "settings.json"
    assert inst.find_entries(json.loads(target.read_text()), inst.ROUTER_MARK)
    assert not (isolated_env / ".claude").exists()
    assert cli(capsys, "uninstall", "--user")[0] == 0
    assert not target.exists()


def test_user_install_defaults_to_home(capsys, isolated_env):
    assert cli(capsys, "install", "--user")[0] == 0
    assert inst.find_entries(json.loads((isolated_env / ".claude" / "settings.json").read_text()), inst.ROUTER_MARK)


def test_dry_run_prints_diff_and_writes_nothing(capsys, project):
    settings_file(project).write_bytes(FOREIGN)
    code, out, err = cli(capsys, "install", "--project", project, "--dry-run")
    assert code == 0
    assert out.startswith("---") and "+" in out and "# memory-router install" in out
    assert settings_file(project).read_bytes() == FOREIGN
    assert not (project / ".claude" / "memory-router").exists()
    cli(capsys, "install", "--project", project)
    installed = settings_file(project).read_bytes()
    code, out, _ = cli(capsys, "uninstall", "--project", project, "--dry-run")
    assert code == 0 and "-" in out and settings_file(project).read_bytes() == installed


def test_uninstall_after_hand_edit_keeps_the_edit(capsys, project):
    settings_file(project).write_bytes(FOREIGN)
    cli(capsys, "install", "--project", project)
    edited = settings_file(project).read_bytes().replace(b'"model": "opus"', b'"model": "opus",\n    "theme": "dark"')
    settings_file(project).write_bytes(edited)
    assert cli(capsys, "uninstall", "--project", project)[0] == 0
    assert settings_file(project).read_bytes() == FOREIGN.replace(b'"model": "opus"',
                                                                 b'"model": "opus",\n    "theme": "dark"')


def test_reinstall_with_new_options_then_uninstall_restores_original(capsys, project, example_cluster_file):
    settings_file(project).write_bytes(FOREIGN)
    cli(capsys, "install", "--project", project)
    code, out, _ = cli(capsys, "install", "--project", project, "--clusters", example_cluster_file)
    assert code == 0 and "updated" in out
    entries = inst.find_entries(json.loads(settings_file(project).read_text()), inst.ROUTER_MARK)
    assert hookcommand.command_option(entries[0].command, "clusters") == str(example_cluster_file)
    cli(capsys, "uninstall", "--project", project)
    assert settings_file(project).read_bytes() == FOREIGN


def test_hand_written_router_hook_refused(capsys, project):
    manual = b'{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "memory-router hook"}]}]}}'
    settings_file(project).write_bytes(manual)
    code, _, err = cli(capsys, "install", "--project", project)
    assert code == 1 and "inject twice" in err
    assert settings_file(project).read_bytes() == manual
    code, out, _ = cli(capsys, "uninstall", "--project", project)
    assert code == 0 and "left as is" in out and settings_file(project).read_bytes() == manual


def test_file_changed_during_install_is_refused(capsys, project, monkeypatch):
    settings_file(project).write_bytes(FOREIGN)
    real_backup = settingsfile._backup

    def backup_then_someone_edits(path, data):
        result = real_backup(path, data)
        pathlib.Path(path).write_bytes(b'{"edited": "meanwhile"}')
        return result

    monkeypatch.setattr(settingsfile, "_backup", backup_then_someone_edits)
    code, _, err = cli(capsys, "install", "--project", project)
    assert code == 1 and "changed since it was read" in err
    assert settings_file(project).read_bytes() == b'{"edited": "meanwhile"}'


@pytest.mark.parametrize("command", [["install"], ["sentinel", "install"]])
def test_missing_project_directory_is_input_error(capsys, tmp_path, command):
    code, _, err = cli(capsys, *command, "--project", tmp_path / "typo")
    assert code == 2 and "project directory does not exist" in err
    assert not (tmp_path / "typo").exists()


def test_missing_clusters_option_file_is_input_error(capsys, project, tmp_path):
    code, _, err = cli(capsys, "install", "--project", project, "--clusters", tmp_path / "nope.md")
    assert code == 2 and "nope.md" in err
    assert not settings_file(project).exists()


def test_installed_command_works_without_an_activated_venv(capsys, project, example_cluster_file, isolated_env):
    cli(capsys, "install", "--project", project, "--clusters", example_cluster_file)
    command = inst.find_entries(json.loads(settings_file(project).read_text()), inst.ROUTER_MARK)[0].command
    payload = json.dumps(doctor_checks.probe_payload(str(project), "why doesn't the Bash tool pick up env vars I set "
                                                          "with setx? I even rebooted")).encode()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(isolated_env)}
    result = subprocess.run(command, shell=True, input=payload, capture_output=True, env=env, cwd=project, timeout=60)
    assert result.returncode == 0, result.stderr
    context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "env_bash_tool_env_var_caching" in context


def test_router_executable_is_absolute_and_runs():
    argv = install_cli.router_executable()
    assert os.path.isabs(argv[0])
    result = subprocess.run(argv + ["--version"], capture_output=True, timeout=60)
    assert result.returncode == 0 and b"memory-router" in result.stdout


# --------------------------------------------------------------------------- doctor


def doctor(capsys, *args):
    code, out, err = cli(capsys, "doctor", "--json", *args)
    report = json.loads(out)
    return code, {c["name"]: c for c in report["checks"]}, report


def write_settings(project, command, timeout=5, **extra):
    data = {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": command, "timeout": timeout}]}]}}
    data.update(extra)
    settings_file(project).write_text(json.dumps(data))


def test_doctor_reports_a_working_hook(capsys, project, example_cluster_file, tmp_path):
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text("# Memory Index\n" + "- a_slug \u2014 hook\n" * 50)
    cli(capsys, "install", "--project", project, "--clusters", example_cluster_file)
    code, checks, report = doctor(capsys, "--project", project, "--memory-dir", memory)
    assert code == 0 and report["ok"] is True
    assert checks["hook installed"]["status"] == "pass"
    assert checks["hook installed"]["hooks"][0]["location"] == "project"
    assert checks["hook runs"]["status"] == "pass"
    assert checks["hook routes"]["status"] == "pass"
    assert checks["cluster file"]["cluster_file"] == str(example_cluster_file)
    assert checks["hooks enabled"]["status"] == "pass"
    assert checks["MEMORY.md size"]["status"] == "pass" and checks["MEMORY.md size"]["lines"] == 51


@pytest.mark.parametrize("command, phrase", [
    ("/nonexistent/bin/memory-router hook # memory-router install", "command not found"),
    ("memory-router hook >/dev/null; exit 2", "erase the user's prompt"),
    ("echo some text; memory-router hook >/dev/null", "plain text"),
    ("echo '{\"additionalContext\": \"x\"}' && memory-router hook >/dev/null", "ignores it"),
])
def test_doctor_reports_a_broken_hook(capsys, project, example_cluster_file, command, phrase, monkeypatch):
    monkeypatch.setenv("MEMORY_ROUTER_CLUSTERS", str(example_cluster_file))
    monkeypatch.setenv("PATH", os.path.dirname(install_cli.router_executable()[0]) + os.pathsep + os.environ["PATH"])
    write_settings(project, command)
    code, checks, report = doctor(capsys, "--project", project)
    assert code == 1 and report["ok"] is False
    assert checks["hook runs"]["status"] == "fail"
    assert phrase in checks["hook runs"]["message"]


def test_doctor_catches_a_hook_failing_open(capsys, project, tmp_path, example_cluster_file):
    gone = tmp_path / "clusters.md"
    shutil.copy(example_cluster_file, gone)
    cli(capsys, "install", "--project", project, "--clusters", gone)
    gone.unlink()
    code, checks, _ = doctor(capsys, "--project", project)
    assert code == 1
    assert checks["hook runs"]["status"] == "fail" and "failed open" in checks["hook runs"]["message"]
    assert checks["cluster file"]["status"] == "fail"


def test_doctor_catches_a_hook_reading_another_cluster_file(capsys, project, tmp_path, example_cluster_file):
    other = tmp_path / "other.md"
    other.write_text("## Layer 0 - Cluster Router\n\n- solo \u00b7 1 \u00b7 tags: zebra \u00b7 label: z\n\n"
                     "## Layer 1 - Member Lines\n\n### solo\n- zebra_fact - project; zebras\n")
    (project / "memory-router.toml").write_text(f'clusters = "{example_cluster_file}"\n')
    exe = install_cli.router_executable()[0]
    write_settings(project, f"MEMORY_ROUTER_CLUSTERS='{other}' '{exe}' hook")
    code, checks, _ = doctor(capsys, "--project", project)
    assert code == 1
    assert checks["cluster file"]["cluster_file"] == str(example_cluster_file)
    assert checks["hook runs"]["status"] == "pass"
    assert checks["hook routes"]["status"] == "fail"
    assert "reads another cluster file" in checks["hook routes"]["message"]


def test_doctor_without_a_hook(capsys, project):
    code, checks, _ = doctor(capsys, "--project", project)
    assert code == 1
    assert checks["hook installed"]["status"] == "fail"
    assert "memory-router install" in checks["hook installed"]["fix"]
    assert "hook runs" not in checks


def test_doctor_reports_disable_all_hooks_and_two_hooks(capsys, project, example_cluster_file, isolated_env):
    cli(capsys, "install", "--project", project, "--clusters", example_cluster_file)
    user = isolated_env / ".claude"
    user.mkdir()
    (user / "settings.json").write_text(json.dumps({"disableAllHooks": True, "hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": "memory-router hook"}]}]}}))
    code, checks, _ = doctor(capsys, "--project", project)
    assert code == 1
    assert checks["hooks enabled"]["status"] == "fail" and "user" in checks["hooks enabled"]["message"]
    assert checks["one hook"]["status"] == "fail"
    assert {h["location"] for h in checks["hook installed"]["hooks"]} == {"project", "user"}


def test_doctor_names_claude_config_dir(capsys, project, tmp_path, monkeypatch, isolated_env, example_cluster_file):
    home_settings = isolated_env / ".claude"
    home_settings.mkdir()
    (home_settings / "settings.json").write_text(json.dumps({"hooks": {"UserPromptSubmit": [
        {"hooks": [{"type": "command", "command": hookcommand.router_hook_command(install_cli.router_executable(),
                                                                            clusters=str(example_cluster_file))}]}]}}))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    code, checks, _ = doctor(capsys, "--project", project)
    assert checks["CLAUDE_CONFIG_DIR"]["status"] == "warn"
    assert "is ignored" in checks["CLAUDE_CONFIG_DIR"]["message"]
    assert checks["hook installed"]["status"] == "fail"  # the hook is only where such a session never looks


@pytest.mark.parametrize("lines, size, status", [(200, 1, "pass"), (201, 1, "fail"), (10, 3000, "fail")])
def test_doctor_memory_md_against_the_load_limit(capsys, project, tmp_path, lines, size, status):
    memory = tmp_path / "mem"
    memory.mkdir()
    (memory / "MEMORY.md").write_text(("x" * size + "\n") * lines)
    _code, checks, _ = doctor(capsys, "--project", project, "--memory-dir", memory)
    assert checks["MEMORY.md size"]["status"] == status


def test_doctor_default_memory_dir_is_claude_codes(capsys, project, isolated_env):
    expected = isolated_env / ".claude" / "projects" / inst_key(project) / "memory"
    expected.mkdir(parents=True)
    (expected / "MEMORY.md").write_text("# Memory Index\n")
    _code, checks, _ = doctor(capsys, "--project", project)
    assert checks["MEMORY.md size"]["memory_md"] == str(expected / "MEMORY.md")


def inst_key(path):
    from transcripts.locate import project_key

    return project_key(path)


def test_doctor_table_for_people(capsys, project):
    code, out, _ = cli(capsys, "doctor", "--project", project)
    assert code == 1 and "hook installed" in out and "FAIL" in out


# --------------------------------------------------------------------------- sentinel


def test_sentinel_install_uninstall_round_trip(capsys, project):
    settings_file(project).write_bytes(FOREIGN)
    code, out, _ = cli(capsys, "sentinel", "install", "--project", project)
    assert code == 0
    record = json.loads((project / ".claude" / "memory-router" / "sentinel.json").read_text())
    assert record["text"].startswith("MEMORY-ROUTER-SENTINEL-") and record["text"] in out
    entries = inst.find_entries(json.loads(settings_file(project).read_text()), inst.SENTINEL_MARK)
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
    assert not inst.find_entries(json.loads(settings_file(project).read_text()), inst.ROUTER_MARK)
    cli(capsys, "sentinel", "uninstall", "--project", project)
    assert settings_file(project).read_bytes() == FOREIGN


def test_installed_sentinel_fires_once(capsys, project):
    cli(capsys, "sentinel", "install", "--project", project, "--text", "MEMORY-ROUTER-SENTINEL-once")
    command = inst.find_entries(json.loads(settings_file(project).read_text()), inst.SENTINEL_MARK)[0].command
    payload = json.dumps(doctor_checks.probe_payload(str(project))).encode()
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
    real = json.loads(REAL_INJECTION_LINE.read_text())
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
    transcript = transcript_fixtures / "v2.1.38-short-hook-progress.jsonl"
    code, out, _ = cli(capsys, "sentinel", "check", transcript, "--sentinel", "MEMORY-ROUTER-SENTINEL-none")
    assert code == 1 and "(c) UNKNOWN" in out and "cannot show injections" in out


def test_sentinel_check_without_a_record(capsys, project, tmp_path):
    code, _, err = cli(capsys, "sentinel", "check", tmp_path / "x.jsonl", "--project", project)
    assert code == 2 and "no sentinel recorded" in err
