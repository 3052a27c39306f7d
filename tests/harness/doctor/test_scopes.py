"""harness.doctor.scopes: which scope each router hook comes from, and whether a hook in the shared
.claude/settings.json runs a command every teammate has."""

import os

import pytest

from harness.doctor.scopes import personal_words, scope_checks, scope_of
from harness.install.settings import Entry


def test_scope_of_the_settings_labels():
    assert [scope_of(label) for label in ("project", "project local", "user")] == ["project", "local", "user"]


@pytest.mark.parametrize("command, personal", [
    ("memory-router hook # memory-router install", []),
    ('memory-router hook --clusters "$CLAUDE_PROJECT_DIR"/brain/c.md # memory-router install', []),
    ("/opt/tools/memory-router hook", ["/opt/tools/memory-router"]),
    ("memory-router hook --clusters /home/me/brain/c.md", ["/home/me/brain/c.md"]),
    ("MEMORY_ROUTER_LOG=/tmp/x memory-router hook", []),
])
def test_personal_words(command, personal):
    assert [word for word, _reason in personal_words(command, "/p")] == personal


def test_a_hook_in_the_local_or_user_scope_is_not_judged_for_teammates():
    entry = Entry(0, 0, "/home/me/.venv/bin/memory-router hook # memory-router install", 5, True)
    assert scope_checks([("project local", "/p/.claude/settings.local.json", entry),
                         ("user", "/home/me/.claude/settings.json", entry)], "/p") == []
    (found,) = scope_checks([("project", "/p/.claude/settings.json", entry)], "/p")
    assert found["status"] == "warn" and "install --scope project" in found["fix"]


def test_a_hand_written_shared_hook_gets_a_hand_fix(tmp_path):
    entry = Entry(0, 0, "/opt/x/memory-router hook", 5, False)
    (found,) = scope_checks([("project", "/p/.claude/settings.json", entry)], "/p")
    assert found["fix"].startswith("edit hooks.UserPromptSubmit[0].hooks[0] in /p/.claude/settings.json")


def test_a_portable_hook_is_checked_on_path(tmp_path):
    entry = Entry(0, 0, "memory-router hook # memory-router install", 5, True)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "memory-router"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    (ok,) = scope_checks([("project", "s", entry)], "/p", environ={"PATH": str(bindir)})
    assert ok["status"] == "pass" and ok["memory_router"] == str(exe)
    (missing,) = scope_checks([("project", "s", entry)], "/p", environ={"PATH": str(tmp_path / "none")})
    assert missing["status"] == "fail"
    assert os.path.basename(str(exe)) in missing["message"]
