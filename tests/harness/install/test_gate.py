"""install --gate / uninstall --gate (harness.install.gate); doctor's checks of the gate are
tests/harness/doctor/test_gate.py."""

import json
import subprocess

import pytest

from harness.install import gate as gi
from harness.install import hookcommand
from harness.install import settings as inst
from support.settings_project import cli


def settings_file(project):
    """Where ``install`` writes here by default: the local scope (the memory-router under test runs
    from a virtualenv, a path only this user has; harness.install.scopes)."""
    return project / ".claude" / "settings.local.json"

FOREIGN = (
    b'{\n'
    b'    "permissions": {"allow": ["Bash(ls:*)"]},\n'
    b'    "hooks": {\n'
    b'        "PreToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "check.sh"}]}]\n'
    b'    },\n'
    b'    "model": "opus"\n'
    b'}\n'
)

ORIGINALS = {
    "foreign-pretooluse-hand-formatted": FOREIGN,
    "crlf": FOREIGN.replace(b"\n", b"\r\n"),
    "tabs": json.dumps(json.loads(FOREIGN), indent="\t").encode(),
    "empty-object": b"{}",
}


def gate_entries(project):
    return gi.find_gate_entries(json.loads(settings_file(project).read_bytes()))


@pytest.mark.parametrize("name", ORIGINALS)
def test_install_gate_then_uninstall_gate_restores_exact_bytes(capsys, project, name):
    settings_file(project).write_bytes(ORIGINALS[name])
    code, out, _ = cli(capsys, "install", "--gate", "--project", project)
    assert code == 0, out
    assert "installed the citation gate" in out
    data = json.loads(settings_file(project).read_bytes())
    [group] = [g for g in data["hooks"]["PreToolUse"] if gi.GATE_MARK in g["hooks"][0]["command"]]
    assert group["matcher"] == "Write|Edit|MultiEdit"
    assert group["hooks"][0]["timeout"] == gi.GATE_TIMEOUT_SECONDS
    assert " gate " in group["hooks"][0]["command"]
    assert inst.find_entries(data, hookcommand.ROUTER_MARK), "the router's entry sits beside the gate"
    if b"check.sh" in ORIGINALS[name]:
        assert data["hooks"]["PreToolUse"][0]["hooks"][0]["command"] == "check.sh"
    code, out, _ = cli(capsys, "uninstall", "--gate", "--project", project)
    assert code == 0
    assert settings_file(project).read_bytes() == ORIGINALS[name]


def test_install_gate_into_a_missing_file_and_uninstall_deletes_it(capsys, project):
    assert cli(capsys, "install", "--gate", "--project", project)[0] == 0
    assert len(gate_entries(project)) == 1
    assert cli(capsys, "uninstall", "--gate", "--project", project)[0] == 0
    assert not settings_file(project).exists()


def test_gate_added_after_the_router_then_removed_in_any_order(capsys, project):
    settings_file(project).write_bytes(FOREIGN)
    assert cli(capsys, "install", "--project", project)[0] == 0
    assert cli(capsys, "install", "--gate", "--project", project)[0] == 0
    code, out, _ = cli(capsys, "uninstall", "--project", project)
    assert code == 0
    assert "note: the citation gate is still installed" in out
    assert len(gate_entries(project)) == 1
    assert cli(capsys, "uninstall", "--gate", "--project", project)[0] == 0
    assert settings_file(project).read_bytes() == FOREIGN


def test_second_install_gate_changes_nothing(capsys, project):
    assert cli(capsys, "install", "--gate", "--project", project)[0] == 0
    before = settings_file(project).read_bytes()
    code, out, _ = cli(capsys, "install", "--gate", "--project", project)
    assert code == 0
    assert "the citation gate already installed" in out
    assert settings_file(project).read_bytes() == before


def test_dry_run_writes_nothing(capsys, project):
    settings_file(project).write_bytes(FOREIGN)
    code, out, err = cli(capsys, "install", "--gate", "--dry-run", "--project", project)
    assert code == 0
    assert "Write|Edit|MultiEdit" in out and "dry run" in err
    assert settings_file(project).read_bytes() == FOREIGN


def test_hand_written_gate_is_refused(capsys, project):
    hand = {"hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command",
                                                                    "command": "memory-router gate"}]}]}}
    settings_file(project).write_text(json.dumps(hand), encoding="utf-8")
    before = settings_file(project).read_bytes()
    code, _out, err = cli(capsys, "install", "--gate", "--project", project)
    assert code == 1
    assert "a memory-router gate hook that install did not add is already wired" in err
    assert settings_file(project).read_bytes() == before, "refused before the router's entry went in"


@pytest.mark.parametrize("command, runs", [
    ("memory-router gate", True),
    ("/venv/bin/memory-router gate --config x # memory-router gate install", True),
    ("python3 -P -m router gate", True),
    # what install --gate writes when no console script is found (router_executable's fallback)
    ("'/v/bin/python' -P -m harness gate --clusters /c.md # memory-router gate install", True),
    ("python -m harness hook", False),
    ("memory-router hook", False),
    ("memory-router gate-keeper", False),
    ("echo gate", False),
    ("'unbalanced", False),
])
def test_runs_gate_hook(command, runs):
    assert gi.runs_gate_hook(command) is runs


def test_add_gate_entry_keeps_other_pretooluse_groups_and_updates_in_place():
    settings = json.loads(FOREIGN)
    added = gi.add_gate_entry(settings, "mr gate " + gi.GATE_MARK)
    assert added.action == "added" and added.detail == "hooks.PreToolUse[1].hooks[0]"
    assert added.settings["hooks"]["PreToolUse"][0] == settings["hooks"]["PreToolUse"][0]
    assert gi.add_gate_entry(added.settings, "mr gate " + gi.GATE_MARK).action == "unchanged"
    updated = gi.add_gate_entry(added.settings, "mr2 gate " + gi.GATE_MARK)
    assert updated.action == "updated"
    assert updated.settings["hooks"]["PreToolUse"][1]["hooks"] == [hookcommand.handler("mr2 gate " + gi.GATE_MARK, 10)]
    removed = gi.remove_gate_entries(updated.settings)
    assert removed.action == "removed" and removed.settings == settings
    assert gi.remove_gate_entries(settings).action == "absent"


def test_a_gate_matcher_narrowed_by_hand_is_restored():
    settings = {"hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [hookcommand.handler("g " + gi.GATE_MARK, 10)]}]}}
    change = gi.add_gate_entry(settings, "g " + gi.GATE_MARK)
    assert change.action == "updated"
    assert change.settings["hooks"]["PreToolUse"][0]["matcher"] == gi.GATE_MATCHER


def test_removing_the_only_gate_drops_emptied_containers_only():
    settings = {"hooks": {"PreToolUse": [{"matcher": gi.GATE_MATCHER, "hooks": [hookcommand.handler("g " + gi.GATE_MARK)]}],
                          "Stop": []}}
    assert gi.remove_gate_entries(settings).settings == {"hooks": {"Stop": []}}
    alone = {"hooks": {"PreToolUse": [{"matcher": gi.GATE_MATCHER, "hooks": [hookcommand.handler("g " + gi.GATE_MARK)]}]}}
    assert gi.remove_gate_entries(alone).settings == {}


def test_the_installed_command_refuses_a_fabricated_citation(capsys, project):
    (project / ".wolf").mkdir()
    (project / ".wolf" / "decisions.md").write_text("## D-001: a real decision\n", encoding="utf-8")
    assert cli(capsys, "install", "--gate", "--project", project)[0] == 0
    [entry] = gate_entries(project)
    payload = {"cwd": str(project), "hook_event_name": "PreToolUse", "tool_name": "Write",
               "tool_input": {"file_path": str(project / "a.md"), "content": "per D-002"}}
    proc = subprocess.run(entry[2], shell=True, input=json.dumps(payload).encode(), capture_output=True, cwd=project)
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
