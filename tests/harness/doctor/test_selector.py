"""harness.doctor.selector: Claude Code's own memory selector on beside the router, seen from the
environment, a settings file's env, or a ``relevant_memories`` attachment in the newest session
(the line shape Claude Code 2.1.328 wrote in the lab with CLAUDE_MEMORY_STORES set)."""

import json

import pytest

from harness.doctor.selector import VARIABLE, selector_check, selector_sources
from router.store.memorystore import project_key

# One transcript line as 2.1.328 wrote it (shortened body), with the selector on.
RECALL_LINE = {"parentUuid": "a1", "isSidechain": False, "type": "attachment", "uuid": "b2", "version": "2.1.328",
               "attachment": {"type": "relevant_memories", "memories": [{
                   "path": "/h/.claude/projects/-p/memory/env_bash_tool_env_var_caching.md",
                   "content": "---\nname: env_bash_tool_env_var_caching\n---\nsetx never reaches the Bash tool\n",
                   "mtimeMs": 1796160623297.3225, "header": "Memory: /h/.claude/projects/-p/memory/x.md"}]}}


@pytest.fixture
def project(isolated_env):
    path = isolated_env / "project"
    path.mkdir()
    return path


def transcript(home, project, lines):
    folder = home / ".claude" / "projects" / project_key(str(project))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "s1.jsonl").write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines),
                                     encoding="utf-8")


def test_off_is_information(project):
    result = selector_check(str(project), router_wired=True, environ={})
    assert result["status"] == "info" and "off" in result["message"]


@pytest.mark.parametrize("value", ["1", "anything, even invalid"])
def test_the_variable_in_the_environment_warns_beside_the_router(project, value):
    result = selector_check(str(project), router_wired=True, environ={VARIABLE: value})
    assert result["status"] == "warn" and f"unset {VARIABLE}" in result["fix"]
    assert selector_check(str(project), router_wired=False, environ={VARIABLE: value})["status"] == "info"


def test_the_variable_in_a_settings_env_is_found(project):
    settings = project / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"env": {VARIABLE: "1"}}), encoding="utf-8")
    assert selector_sources(str(project), environ={}) == [f"{VARIABLE} in the env of project local settings {settings}"]


def test_an_empty_value_is_off(project):
    assert selector_sources(str(project), environ={VARIABLE: ""}) == []


def test_a_recall_in_the_newest_session_shows_the_server_flag(isolated_env, project):
    transcript(isolated_env, project, [{"type": "user", "message": {"role": "user", "content": "hi"}}, RECALL_LINE])
    result = selector_check(str(project), router_wired=True, environ={"HOME": str(isolated_env)})
    assert result["status"] == "warn" and "relevant_memories attachments in the newest session" in result["message"]


def test_a_session_without_recalls_is_off(isolated_env, project):
    transcript(isolated_env, project, [{"type": "user", "message": {"role": "user", "content": "relevant_memories"}}])
    assert selector_check(str(project), router_wired=True, environ={"HOME": str(isolated_env)})["status"] == "info"
