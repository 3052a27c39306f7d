"""install / uninstall, driven through the memory-router CLI."""

import json
import os
import pathlib
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.install import hookcommand
from harness.install import settings as inst
from harness.install import settingsfile
from support.late_edit import HAS_PROC_FD, edit_during_fsync_of_temp_for
from harness.cli import main
from harness.install import trialrun as probes
from support.settings_project import backups, cli
from support.settings_project import settings_file as shared_settings_file
from support.settings_data import FOREIGN_SETTINGS


def local_settings_file(project):
    """Where ``install`` writes here by default: the local scope, .claude/settings.local.json,
    since the memory-router under test runs from a virtualenv, a path only this user has
    (harness.install.scopes; tests/harness/install/test_scopes.py covers the choice)."""
    return project / ".claude" / "settings.local.json"


settings_file = local_settings_file
FOREIGN = FOREIGN_SETTINGS


ORIGINALS = {
    "foreign-hooks-hand-formatted": FOREIGN,
    "foreign-hooks-crlf": FOREIGN.replace(b"\n", b"\r\n"),
    "foreign-hooks-bom-tabs": b"\xef\xbb\xbf" + json.dumps(json.loads(FOREIGN), indent="\t").encode(),
    "empty-user-prompt-submit-list": b'{"hooks": {"UserPromptSubmit": []}, "x": [1, 2]}',
    "empty-hooks-object": b'{\n  "hooks": {}\n}\n',
    "empty-file": b"",
}


# --------------------------------------------------------------------------- install / uninstall


@pytest.mark.parametrize("name", sorted(ORIGINALS))
def test_install_then_uninstall_restores_exact_bytes(capsys, project, name):
    original = ORIGINALS[name]
    settings_file(project).write_bytes(original)
    code, out, _ = cli(capsys, "install", "--project", project)
    assert code == 0 and "installed the memory-router hook" in out
    installed = settings_file(project).read_bytes()
    entries = inst.find_entries(inst.parse_settings(installed, "s"), hookcommand.ROUTER_MARK)
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
    settings_file = shared_settings_file if command[0] == "sentinel" else local_settings_file  # sentinel: settings.json
    target = tmp_path / "dotfiles" / "claude-settings.json"
    target.parent.mkdir()
    target.write_bytes(FOREIGN)
    settings_file(project).symlink_to(target)
    code, _, _ = cli(capsys, *command, "--project", project)
    assert code == 0
    assert settings_file(project).is_symlink() and os.readlink(settings_file(project)) == str(target)
    mark = hookcommand.SENTINEL_MARK if command[0] == "sentinel" else hookcommand.ROUTER_MARK
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
    assert inst.find_entries(json.loads(target.read_text()), hookcommand.ROUTER_MARK)
    assert not (isolated_env / ".claude").exists()
    assert cli(capsys, "uninstall", "--user")[0] == 0
    assert not target.exists()


def test_user_install_defaults_to_home(capsys, isolated_env):
    assert cli(capsys, "install", "--user")[0] == 0
    assert inst.find_entries(json.loads((isolated_env / ".claude" / "settings.json").read_text()), hookcommand.ROUTER_MARK)


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
    entries = inst.find_entries(json.loads(settings_file(project).read_text()), hookcommand.ROUTER_MARK)
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
    real_backup = settingsfile.backup

    def backup_then_someone_edits(path, data, *rest):
        result = real_backup(path, data, *rest)
        pathlib.Path(path).write_bytes(b'{"edited": "meanwhile"}')
        return result

    monkeypatch.setattr(settingsfile, "backup", backup_then_someone_edits)
    code, _, err = cli(capsys, "install", "--project", project)
    assert code == 1 and "changed since it was read" in err
    assert settings_file(project).read_bytes() == b'{"edited": "meanwhile"}'


@pytest.mark.skipif(not HAS_PROC_FD, reason="needs /proc to name the fsynced file")
@pytest.mark.parametrize("command", ["install", "uninstall"])
def test_an_edit_while_settings_are_fsynced_is_refused_and_kept(capsys, project, monkeypatch, command):
    """Issue 11, class 2: a save to settings.json between the last check and the rename was lost."""
    settings_file(project).write_bytes(FOREIGN)
    if command == "uninstall":
        assert cli(capsys, "install", "--project", project)[0] == 0
    late = settings_file(project).read_bytes().replace(b'"model": "opus"', b'"model": "sonnet"')
    done = edit_during_fsync_of_temp_for(monkeypatch, settings_file(project),
                                         lambda: settings_file(project).write_bytes(late))
    code, _, err = cli(capsys, command, "--project", project)
    assert done and code == 1 and "changed" in err
    assert settings_file(project).read_bytes() == late


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
    command = inst.find_entries(json.loads(settings_file(project).read_text()), hookcommand.ROUTER_MARK)[0].command
    payload = json.dumps(probes.probe_payload(str(project), "why doesn't the Bash tool pick up env vars I set "
                                                          "with setx? I even rebooted")).encode()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(isolated_env)}
    result = subprocess.run(command, shell=True, input=payload, capture_output=True, env=env, cwd=project, timeout=60)
    assert result.returncode == 0, result.stderr
    context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "env_bash_tool_env_var_caching" in context


def test_router_executable_is_absolute_and_runs():
    argv = hookcommand.router_executable()
    assert os.path.isabs(argv[0])
    result = subprocess.run(argv + ["--version"], capture_output=True, timeout=60)
    assert result.returncode == 0 and b"memory-router" in result.stdout


# --------------------------------------------------------------------------- the SessionStart hook (issue 13)


def _session_entries(data):
    return inst.find_entries(inst.parse_settings(data, "s"), hookcommand.ROUTER_MARK, event=inst.SESSION_EVENT)


@pytest.mark.parametrize("name", sorted(ORIGINALS))
def test_install_adds_the_session_start_hook_and_uninstall_takes_both_out(capsys, project, name):
    original = ORIGINALS[name]
    settings_file(project).write_bytes(original)
    code, out, _ = cli(capsys, "install", "--project", project)
    assert code == 0 and "on compaction and /clear:" in out
    installed = settings_file(project).read_bytes()
    [entry] = _session_entries(installed)
    assert hookcommand.command_words(entry.command)[1:] == ["session-start"]
    group = json.loads(installed.decode("utf-8-sig"))["hooks"]["SessionStart"][entry.group]
    assert group["matcher"] == "compact|clear"
    assert cli(capsys, "install", "--project", project)[1].startswith("the memory-router hook already installed")
    assert settings_file(project).read_bytes() == installed
    assert cli(capsys, "uninstall", "--project", project)[0] == 0
    assert settings_file(project).read_bytes() == original


def test_an_install_from_before_the_session_hook_upgrades_and_still_uninstalls_exactly(capsys, project):
    settings_file(project).write_bytes(FOREIGN)
    cli(capsys, "install", "--project", project)
    # what an install before issue 13 left: our UserPromptSubmit handler only
    old = inst.remove_entries(inst.parse_settings(settings_file(project).read_bytes(), "s"), hookcommand.ROUTER_MARK,
                              events=(inst.SESSION_EVENT,))
    snap, settings = settingsfile.read_settings(str(settings_file(project)))
    from harness.install import jsonedit

    written = jsonedit.render_change(snap.data, settings, old.settings)
    settings_file(project).write_bytes(written)
    record = settingsfile.read_record(str(settings_file(project)), settingsfile.ROUTER_ROLE)
    record["written_sha256"] = __import__("harness.fileops", fromlist=["x"]).sha256_bytes(written)
    settingsfile.write_record(str(settings_file(project)), settingsfile.ROUTER_ROLE, record)
    assert not _session_entries(written)

    code, out, _ = cli(capsys, "install", "--project", project)
    assert code == 0 and "installed the memory-router hook" in out
    assert len(_session_entries(settings_file(project).read_bytes())) == 1
    cli(capsys, "uninstall", "--project", project)
    assert settings_file(project).read_bytes() == FOREIGN


def test_uninstall_leaves_a_hand_written_session_start_hook(capsys, project):
    data = {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "memory-router session-start"}]}]}}
    settings_file(project).write_text(json.dumps(data))
    cli(capsys, "install", "--project", project)
    cli(capsys, "uninstall", "--project", project)
    assert json.loads(settings_file(project).read_text()) == data


_JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8),
              st.just("memory-router hook # memory-router")),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.sampled_from(["hooks", "UserPromptSubmit", "command", "timeout", "type",
                                                             "matcher", "disableAllHooks"]), inner, max_size=4)),
    max_leaves=15)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(_JSON)
def test_install_and_uninstall_on_any_json_exit_0_1_or_2(tmp_path_factory, document):
    # Issue 11's fuzzing found "hooks": null crashing install; any JSON must give an exit code, never raise.
    project = tmp_path_factory.mktemp("fuzz")
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps({"hooks": document}))
    for command in ("install", "uninstall", "sentinel"):
        argv = ["sentinel", "install", "--project", str(project)] if command == "sentinel" else \
            [command, "--project", str(project)]
        assert main(argv) in (0, 1, 2)


@pytest.mark.parametrize("command", [["install"], ["sentinel", "install"]])
def test_install_refuses_a_dangling_settings_symlink(capsys, project, tmp_path, command):
    # Issue 11: install created the link's target, and uninstall then deleted the link.
    settings_file = shared_settings_file if command[0] == "sentinel" else local_settings_file  # sentinel: settings.json
    target = tmp_path / "dotfiles" / "settings.json"
    settings_file(project).symlink_to(target)
    code, _out, err = cli(capsys, *command, "--project", project)
    assert code == 1 and f"is a symlink to {target}, which does not exist" in err and "nothing was written" in err
    assert not target.exists() and settings_file(project).is_symlink() and not (tmp_path / "dotfiles").exists()


def test_uninstall_deletes_the_created_target_and_keeps_the_link(capsys, project, tmp_path):
    # A file memory-router created, later moved into a dotfiles folder behind a link: "delete" removes
    # the file it created (the link's target) and leaves the link as the user made it.
    assert cli(capsys, "install", "--project", project)[0] == 0
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    os.replace(settings_file(project), dotfiles / "settings.json")
    settings_file(project).symlink_to(dotfiles / "settings.json")
    code, out, _err = cli(capsys, "uninstall", "--project", project)
    assert code == 0 and "the link is kept" in out
    assert settings_file(project).is_symlink() and not (dotfiles / "settings.json").exists()


@pytest.mark.parametrize("command", [["install"], ["uninstall"], ["sentinel", "install"]])
def test_a_read_only_settings_file_is_refused_naming_it_and_the_fix(capsys, project, command):
    settings_file = shared_settings_file if command[0] == "sentinel" else local_settings_file  # sentinel: settings.json
    settings_file(project).write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "/x/memory-router hook # memory-router install", "timeout": 5}]}]},
        "model": "opus"}))
    os.chmod(settings_file(project), 0o444)
    before = settings_file(project).read_bytes()
    code, _out, err = cli(capsys, *command, "--project", project)
    assert code == 1 and f"{settings_file(project)} is read-only (mode 0444)" in err and "chmod u+w" in err
    assert settings_file(project).read_bytes() == before and backups(project) == []


def _our_entry(project):
    data = json.loads(settings_file(project).read_text())
    return data["hooks"]["UserPromptSubmit"][0]["hooks"][0]


def test_reinstall_keeps_a_hand_edited_clusters_option_and_timeout_and_says_so(capsys, project, example_cluster_file):
    # Issue 11: re-running install silently reverted both.
    assert cli(capsys, "install", "--project", project)[0] == 0
    data = json.loads(settings_file(project).read_text())
    entry = data["hooks"]["UserPromptSubmit"][0]["hooks"][0]
    entry["command"] = entry["command"].replace(" hook ", f" hook --clusters {example_cluster_file} ")
    entry["timeout"] = 30
    settings_file(project).write_text(json.dumps(data, indent=2))
    edited = settings_file(project).read_bytes()
    code, _out, err = cli(capsys, "install", "--project", project)
    assert code == 0 and settings_file(project).read_bytes() == edited  # nothing to change: the edits are kept
    assert "already installed" in _out
    # A moved executable is rewritten, and the hand edits still kept, each named.
    entry["command"] = entry["command"].replace(entry["command"].split()[0], "/old/venv/bin/memory-router")
    settings_file(project).write_text(json.dumps(data, indent=2))
    code, _out, err = cli(capsys, "install", "--project", project)
    assert code == 0
    assert _our_entry(project)["timeout"] == 30 and f"--clusters {example_cluster_file}" in _our_entry(project)["command"]
    assert f"kept --clusters {example_cluster_file}" in err and "kept the entry's timeout of 30 s" in err
    assert "the entry's command changes from /old/venv/bin/memory-router" in err


def test_reinstall_with_a_new_clusters_option_says_what_changes(capsys, project, example_cluster_file, tmp_path):
    other = tmp_path / "other.md"
    other.write_bytes(example_cluster_file.read_bytes())
    assert cli(capsys, "install", "--project", project, "--clusters", example_cluster_file)[0] == 0
    code, _out, err = cli(capsys, "install", "--project", project, "--clusters", other)
    assert code == 0 and f"--clusters changes from {example_cluster_file} to {other}" in err
    assert f"--clusters {other}" in _our_entry(project)["command"]
