"""The plugin under the real Claude Code: this checkout's marketplace added from its directory and
the plugin installed in the lab's private HOME (no ``memory-router install``: the project's
settings hold no hook), then ``claude -p`` sessions against the lab's stand-in.

Judged from what the client sent (``harness.lab.measure`` over the request bodies) and what it
wrote to the transcript. The plugin's hooks find memory-router through ``MEMORY_ROUTER_BIN``
(this environment's console script). Marked ``realclient``: CI runs them, a missing client
fails them."""

import json
import pathlib
import re
import shutil

import pytest

from harness.lab import measure
from harness.lab.rundir import client_env
from harness.lab.runner import run_session
from harness.lab.script import Script
from plugin.pluginfiles import LAUNCHER, REPO_ROOT, install_plugin, memory_router_exe

pytestmark = pytest.mark.realclient

SETX = "I set an environment variable with setx but the Bash tool still can't see it"
FACT_SLUG = "env_bash_tool_env_var_caching"
HOOK_CONTEXT = "hook additional context: "
FIXTURE_LEDGER = REPO_ROOT / "tests" / "fixtures" / "citation-gate" / ".wolf" / "decisions.md"
ROUTE_TOOL = "mcp__plugin_memory-router_memory-router__route"


def fact_line():
    from router.store.clusterfile import load_cluster_file
    from router.config import bundled_cluster_file

    _cluster, member = load_cluster_file(bundled_cluster_file()).find_member(FACT_SLUG)
    return f"- {member.slug} \u2014 {member.hook}"


def with_plugin(claude, then=None):
    def prepare(paths):
        install_plugin(claude, client_env(paths, "http://127.0.0.1:9"), paths.project)
        if then is not None:
            then(paths)
    return prepare


def router_env():
    exe = memory_router_exe()
    assert exe, "the memory-router console script is not installed in this environment"
    return {"MEMORY_ROUTER_BIN": exe}


def hook_events_per_prompt(request_log, line):
    """Per main-thread, non-compaction request, in order: ``(prompt_index, [hook event, ...])``,
    one event per time ``line`` appears in a hook context after the last assistant message (text
    the model has not seen before)."""
    from harness.lab.requestbody import last_assistant_index, message_texts

    records = [r for r in measure.read_log(request_log) if measure.parse_record(r)[0] is not None
               and "count_tokens" not in str(r.get("path"))]
    analysis = measure.analyze_requests(records)
    out = []
    for record, call in zip(records, analysis["calls"], strict=True):
        if call["thread"] != measure.MAIN or call["compaction"]:
            continue
        messages = json.loads(record["body"])["messages"]
        events = []
        for message in messages[last_assistant_index(messages) + 1:]:
            for text in message_texts(message):
                for found in re.finditer(re.escape(HOOK_CONTEXT), text):
                    event = text[:found.start()].rsplit("\n", 1)[-1].split(" hook", 1)[0].strip()
                    end = text.find("\n\n", found.start())
                    events.extend([event] * text[found.start():None if end == -1 else end].count(line))
        out.append((call["prompt_index"], events))
    return out


def hook_attachments(transcript):
    out = []
    for raw in pathlib.Path(transcript).read_text(encoding="utf-8").splitlines():
        attachment = json.loads(raw).get("attachment") or {}
        if str(attachment.get("type", "")).startswith("hook_"):
            out.append(attachment)
    return out


def test_plugin_routes_each_fact_once_and_again_after_compact(tmp_path, claude_client):
    result = run_session(tmp_path / "run", [SETX, SETX, "/compact", SETX], "slim", claude=claude_client,
                         hook=False, prepare=with_plugin(claude_client), env=router_env())
    assert result.ok, result.outcomes
    # the plugin is the only source of hooks: neither settings file holds one
    for settings in (pathlib.Path(result.paths.project) / ".claude" / "settings.json",
                     pathlib.Path(result.paths.home) / ".claude" / "settings.json"):
        assert not settings.exists() or "hooks" not in json.loads(settings.read_text(encoding="utf-8")), settings
    user_settings = json.loads((pathlib.Path(result.paths.home) / ".claude" / "settings.json").read_text(encoding="utf-8"))
    assert user_settings["enabledPlugins"] == {"memory-router@memory-router": True}
    per_prompt = hook_events_per_prompt(result.request_log, fact_line())
    # once at the first prompt, not again at the second: exactly one copy reached the request
    assert per_prompt[:2] == [(0, ["UserPromptSubmit"]), (1, [])]
    # after /compact the plugin's SessionStart(compact) hook makes the router send it again, once
    assert [events for index, events in per_prompt if index == 3] == [["SessionStart"]]
    # 2.1.328 records no command for a UserPromptSubmit context; the SessionStart one names the plugin's
    commands = {(a.get("hookName"), a.get("command")) for a in hook_attachments(result.transcript)
                if a.get("type") == "hook_success"}
    assert ("SessionStart:compact", "${CLAUDE_PLUGIN_ROOT}/scripts/memory-router-launch session-start") in commands

def test_plugin_gate_refuses_a_fabricated_citation(tmp_path, claude_client):
    def with_ledger(paths):
        (pathlib.Path(paths.project) / ".wolf").mkdir()
        shutil.copyfile(FIXTURE_LEDGER, pathlib.Path(paths.project) / ".wolf" / "decisions.md")

    target = tmp_path / "run" / "project" / "retention.md"
    script = Script([
        {"when": {"after_tool_result": False},
         "reply": {"tool_use": {"name": "Write", "input": {"file_path": str(target),
                                                           "content": "Retention is 30 days per D-910.\n"}}}},
        {"when": {"after_tool_result": True}, "reply": {"text": "done"}},
    ])
    result = run_session(tmp_path / "run", ["write the retention notes"], "none", script=script,
                         claude=claude_client, hook=False, prepare=with_plugin(claude_client, with_ledger),
                         env=router_env())
    assert result.ok, result.outcomes
    [write] = measure.tool_exchanges(measure.read_log(result.request_log))
    assert write["name"] == "Write" and write["is_error"], write
    assert write["text"].startswith("PreToolUse:Write hook error: memory-router citation gate refused this write")
    assert "BLOCKED: D-910 is not in the decision ledger" in write["text"]
    assert not target.exists()


def test_plugin_mcp_route_tool_answers(tmp_path, claude_client):
    script = Script([
        {"when": {"after_tool_result": False}, "reply": {"tool_use": {"name": ROUTE_TOOL, "input": {"prompt": SETX}}}},
        {"when": {"after_tool_result": True}, "reply": {"text": "done"}},
    ])
    result = run_session(tmp_path / "run", ["look it up"], "none", script=script, claude=claude_client,
                         hook=False, prepare=with_plugin(claude_client), env=router_env())
    assert result.ok, result.outcomes
    [route] = measure.tool_exchanges(measure.read_log(result.request_log))
    assert route["name"] == ROUTE_TOOL and not route["is_error"], route
    decision = json.loads(route["text"])
    assert FACT_SLUG in [line["slug"] for line in decision["lines"]]


def test_plugin_without_memory_router_fails_open_and_says_so_once(tmp_path, claude_client):
    result = run_session(tmp_path / "run", [SETX, SETX], "slim", claude=claude_client, hook=False,
                         prepare=with_plugin(claude_client), env={"MEMORY_ROUTER_BIN": str(tmp_path / "nowhere")})
    assert result.ok, result.outcomes
    assert [events for _index, events in hook_events_per_prompt(result.request_log, fact_line())] == [[], []]
    attachments = hook_attachments(result.transcript)
    notices = [a for a in attachments if a.get("type") == "hook_system_message"]
    # one message, at the session's start (the resumed second prompt does not repeat it)
    assert [a.get("hookName") for a in notices] == ["SessionStart:startup"]
    assert "pipx install CHECKOUT" in notices[0]["content"]
    assert f"MEMORY_ROUTER_BIN={tmp_path / 'nowhere'}" in notices[0]["content"]
    # shown to the user only: no request carries it
    for record in measure.read_log(result.request_log):
        assert "pipx install CHECKOUT" not in (record.get("body") or "")
    assert not [a for a in attachments if a.get("type") in ("hook_non_blocking_error", "hook_blocking_error")]
    assert LAUNCHER.is_file()


def test_plugin_beside_a_settings_hook_injects_twice_and_doctor_says_which_to_remove(tmp_path, claude_client):
    # the lab's memory-router install runs first (before the plugin exists, so it is not refused)
    result = run_session(tmp_path / "run", [SETX], "slim", claude=claude_client, hook=True,
                         prepare=with_plugin(claude_client), env=router_env())
    assert result.ok, result.outcomes
    # both hooks ran in parallel: two copies of the fact reached the model
    assert hook_events_per_prompt(result.request_log, fact_line())[:1] == [(0, ["UserPromptSubmit", "UserPromptSubmit"])]
    import subprocess

    project = result.paths.project
    done = subprocess.run([memory_router_exe(), "doctor", "--project", project, "--json"], capture_output=True,
                          text=True, timeout=300, env=client_env(result.paths, "http://127.0.0.1:9", router_env()))
    assert done.returncode == 1, done.stdout + done.stderr
    [twice] = [c for c in json.loads(done.stdout)["checks"] if c["name"] == "one prompt hook"]
    assert twice["status"] == "fail" and "memory-router@memory-router" in twice["message"]
    assert twice["fix"].startswith(f"remove the settings hook: memory-router uninstall --project {project}")


def test_plugin_skill_runs_doctor_from_inside_claude_code(tmp_path, claude_client):
    """issue 29 item 2: /memory-router:doctor, typed in a session, expands the plugin's skill with
    the launcher's real path; the command it names runs doctor through the launcher (here the
    stand-in model runs the Bash command the skill gives, as the real model would)."""
    from plugin.pluginfiles import PLUGIN_DIR

    command = f"{PLUGIN_DIR}/scripts/memory-router-launch doctor"
    script = Script([
        {"when": {"after_tool_result": False}, "reply": {"tool_use": {"name": "Bash", "input": {"command": command}}}},
        {"when": {"after_tool_result": True}, "reply": {"text": "done"}},
    ])
    result = run_session(tmp_path / "run", ["/memory-router:doctor"], "none", script=script, claude=claude_client,
                         hook=False, prepare=with_plugin(claude_client), env=router_env())
    assert result.ok, result.outcomes
    bodies = [record.get("body") or "" for record in measure.read_log(result.request_log)
              if "count_tokens" not in str(record.get("path"))]
    skill = [body for body in bodies if "memory-router doctor, from inside Claude Code" in body]
    assert skill, "the skill's text reached no request"
    # the client put the plugin's folder where the skill says ${CLAUDE_PLUGIN_ROOT}
    assert command in skill[0] and "${CLAUDE_PLUGIN_ROOT}" not in skill[0]
    [ran] = measure.tool_exchanges(measure.read_log(result.request_log))
    # doctor's report came back as the tool's result, and it passed (exit 0: the Bash tool reports
    # no error): the prompt hook is found, in this plugin, and its trial runs pass
    assert ran["name"] == "Bash" and ran["text"].startswith("memory-router doctor"), ran["text"][:2000]
    assert not ran["is_error"], ran["text"][:2000]
