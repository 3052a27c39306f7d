"""The commands users already have in their settings files, run as Claude Code runs them: the
console script's ``hook``, ``gate`` and ``session-start``, the same through ``python -P -m harness``
(what install writes when no console script is found), and ``python -P -m harness.sentinel``
(what ``sentinel install`` writes). Run from a project holding a ``harness/`` package of its own,
which ``-P`` must keep from shadowing ours."""

import json
import os
import subprocess
import sys

import pytest

from support.executables import memory_router_exe

SETX_PROMPT = "why does the Bash tool not see an environment variable I set with setx?"
FORMS = {
    "console script": lambda: [memory_router_exe()],
    "python -P -m harness": lambda: [sys.executable, "-P", "-m", "harness"],
}


@pytest.fixture
def shadowed_project(tmp_path):
    """A project whose own harness/ package would break any import of ours that it shadowed."""
    project = tmp_path / "project"
    (project / "harness" / "sentinel").mkdir(parents=True)
    for init in (project / "harness" / "__init__.py", project / "harness" / "sentinel" / "__init__.py"):
        init.write_text("raise SystemExit('the project shadowed memory-router')\n", encoding="utf-8")
    (project / ".wolf").mkdir()
    (project / ".wolf" / "decisions.md").write_text("## D-001: the one decision\n", encoding="utf-8")
    return project


def run(argv, payload, project):
    return subprocess.run(argv, input=json.dumps(payload).encode(), capture_output=True, cwd=project, timeout=60,
                          env=dict(os.environ, CLAUDE_PROJECT_DIR=str(project)))


@pytest.mark.parametrize("form", sorted(FORMS))
def test_hook_routes_the_example_store(form, shadowed_project, example_cluster_file):
    payload = {"session_id": "entry", "transcript_path": "", "cwd": str(shadowed_project),
               "hook_event_name": "UserPromptSubmit", "prompt": SETX_PROMPT}
    done = run([*FORMS[form](), "hook", "--clusters", str(example_cluster_file)], payload, shadowed_project)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit"
    assert "env_bash_tool_env_var_caching" in out["additionalContext"]


@pytest.mark.parametrize("form", sorted(FORMS))
def test_gate_denies_a_write_citing_an_absent_decision(form, shadowed_project):
    payload = {"session_id": "entry", "cwd": str(shadowed_project), "hook_event_name": "PreToolUse",
               "tool_name": "Write", "tool_use_id": "toolu_entry",
               "tool_input": {"file_path": str(shadowed_project / "notes.md"), "content": "as D-002 says"}}
    done = run([*FORMS[form](), "gate"], payload, shadowed_project)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


@pytest.mark.parametrize("form", sorted(FORMS))
def test_session_start_forgets_quietly(form, shadowed_project):
    payload = {"session_id": "entry", "transcript_path": "", "cwd": str(shadowed_project),
               "hook_event_name": "SessionStart", "source": "compact"}
    done = run([*FORMS[form](), "session-start"], payload, shadowed_project)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def test_python_m_harness_runs_every_other_command(shadowed_project, example_cluster_file):
    done = subprocess.run([sys.executable, "-P", "-m", "harness", "route", SETX_PROMPT, "--clusters",
                           str(example_cluster_file), "--json"], capture_output=True, cwd=shadowed_project, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "env_bash_tool_env_var_caching" in json.loads(done.stdout)["additional_context"]


def test_python_m_harness_sentinel_fires_once(shadowed_project):
    flag = shadowed_project / ".claude" / "memory-router" / "sentinel-entry.fired"
    argv = [sys.executable, "-P", "-m", "harness.sentinel", "--flag", str(flag), "--text", "MEMORY-ROUTER-SENTINEL-e1"]
    payload = {"session_id": "entry", "hook_event_name": "UserPromptSubmit", "prompt": "hello"}
    first, second = run(argv, payload, shadowed_project), run(argv, payload, shadowed_project)
    assert first.returncode == second.returncode == 0, first.stderr
    assert "MEMORY-ROUTER-SENTINEL-e1" in json.loads(first.stdout)["hookSpecificOutput"]["additionalContext"]
    assert second.stdout == b"" and flag.is_file()
