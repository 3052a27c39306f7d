"""The claude engine under the real Claude Code 2.1.328, against the lab's loopback stand-in
(docs/lab.md), scripted to answer the enrichment request. Each of ``CLAUDE_FLAGS`` is proved by
a run with it (nothing of the user's set-up reaches the request or runs) beside a run without it
(the same set-up leaks in), judged from the request bodies the stand-in logged and the files on disk:

- the user's set-up: a private HOME whose ``~/.claude/settings.json`` holds memory-router's own
  UserPromptSubmit hook (with the example store, whose words the request is full of, so it would
  route) and marker hooks on SessionStart, UserPromptSubmit, Stop and SessionEnd; a
  ``~/.claude/CLAUDE.md``; an MCP server in ``~/.claude.json`` that leaves a marker when started;
- ``--tools ""``: the request's ``tools`` is empty;
- ``--safe-mode``: no hook runs (no marker, no hook context in the request), CLAUDE.md is not sent;
- ``--strict-mcp-config``: the MCP server never starts (proved without ``--safe-mode``, which
  also keeps it out);
- ``--no-session-persistence``: no transcript under ``~/.claude/projects``.

Marked ``realclient``: CI runs it; a missing client fails it. About 6 client runs, ~10 s."""

import json
import os
import pathlib
import shutil
import sys

import pytest

from harness.clusters import engines
from harness.clusters.enrich_plan import memory_texts
from harness.clusters.enrich_answers import check_enrich_answer
from harness.clusters.enrich_protocol import SYSTEM_PROMPT, enrich_request

pytestmark = pytest.mark.realclient

# HOME and PATH as they were before tests/conftest.py points HOME at a temp dir: the lab cache
# (~/.cache/memory-router-lab/claude-code/<version>/) lives under the developer's real home.
_REAL_ENV = {name: os.environ[name] for name in ("HOME", "PATH", "MEMORY_ROUTER_CLAUDE", "MEMORY_ROUTER_LAB_CACHE")
             if os.environ.get(name)}
HOOK_CONTEXT = "hook additional context"
CLAUDE_MD_MARKER = "CLAUDE-MD-OF-THE-USER"


@pytest.fixture(scope="module")
def claude():
    from harness.lab.client import ClientMissingError, find_claude

    try:
        path, _how = find_claude(None, dict(_REAL_ENV))
    except ClientMissingError as err:
        pytest.fail(f"the real Claude Code client is required by the realclient tests: {err}", pytrace=False)
    return path


@pytest.fixture
def request_and_answer(example_cluster_file):
    from router.store.clusterfile import load_cluster_file

    index = load_cluster_file(example_cluster_file)
    cluster = index.cluster("layer1_16")            # pnpm, node, corepack, lockfile: the router routes it
    texts = memory_texts(index, {})
    memories = [texts[m.slug] for m in cluster.members]
    request = enrich_request(cluster, memories, 3)
    answer = {"utterances": {m.slug: [f"what about {m.slug.replace('_', ' ')}", "pnpm is acting up again"]
                             for m in memories}}
    return request, answer


@pytest.fixture
def user_setup(tmp_path, example_cluster_file):
    """A private HOME holding a user's hooks (memory-router's among them), CLAUDE.md and an MCP server."""
    home = tmp_path / "home"
    markers = tmp_path / "markers"
    (home / ".claude").mkdir(parents=True)
    markers.mkdir()
    exe = shutil.which("memory-router", path=os.path.dirname(sys.executable))
    assert exe, "the memory-router console script is not installed in this environment"

    def marker(name):
        return {"type": "command", "command": f"sh -c 'cat > {markers}/{name}.json'"}

    settings = {"hooks": {
        "UserPromptSubmit": [{"hooks": [{"type": "command",
                                         "command": f"sh -c 'touch {markers}/memory-router-hook; exec {exe} hook'"},
                                        marker("UserPromptSubmit")]}],
        **{event: [{"hooks": [marker(event)]}] for event in ("SessionStart", "Stop", "SessionEnd")}}}
    (home / ".claude" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    (home / ".claude" / "CLAUDE.md").write_text(f"{CLAUDE_MD_MARKER}: always answer in French.\n", encoding="utf-8")
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"spy": {
        "command": "sh", "args": ["-c", f"touch {markers}/mcp-started; sleep 20"]}}}), encoding="utf-8")
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8",
           "ANTHROPIC_API_KEY": "memory-router-lab", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
           "MEMORY_ROUTER_CLUSTERS": str(example_cluster_file), "MEMORY_ROUTER_LOG": str(tmp_path / "hook.log"),
           "CLAUDECODE": "1", "CLAUDE_PROJECT_DIR": str(tmp_path)}   # as when enrich runs inside a session
    return home, markers, env


def ask(claude, user_setup, request, answer, tmp_path, monkeypatch, without=()):
    """One enrichment request through the claude engine, with ``without`` flags left out;
    ``(parsed answer, request bodies, marker names)``."""
    from harness.lab.script import Script
    from harness.lab.server import LabServer

    home, markers, env = user_setup
    for old in markers.iterdir():
        old.unlink()
    flags = list(engines.CLAUDE_FLAGS)
    for flag in without:
        at = flags.index(flag)
        del flags[at:at + (2 if flag == "--tools" else 1)]
    monkeypatch.setattr(engines, "CLAUDE_FLAGS", tuple(flags))
    log = tmp_path / f"requests-{'-'.join(f.strip('-') for f in without) or 'all'}.jsonl"
    reply = {"text": answer if isinstance(answer, str) else json.dumps(answer)}
    script = Script([{"when": {"prompt_contains": "memory-router.enrich/2"}, "reply": reply, "times": 0}])
    with LabServer(script, log) as server:
        engine = engines.create_engine("claude", command=claude, env={**env, "ANTHROPIC_BASE_URL": server.url},
                                       timeout=120)
        engine.check()
        got = engine.ask(request)
    bodies = [json.loads(json.loads(line)["body"]) for line in log.read_text().splitlines()
              if json.loads(line)["path"].startswith("/v1/messages") and "count_tokens" not in json.loads(line)["path"]]
    return got, bodies, sorted(p.name for p in markers.iterdir())


def transcripts(home):
    projects = home / ".claude" / "projects"
    return sorted(p for p in projects.rglob("*.jsonl")) if projects.exists() else []


def test_the_claude_engine_sends_no_tools_fires_no_hook_and_keeps_no_session(
        claude, user_setup, request_and_answer, tmp_path, monkeypatch):
    request, answer = request_and_answer
    got, bodies, markers = ask(claude, user_setup, request, answer, tmp_path, monkeypatch)
    assert got == answer
    check = check_enrich_answer(got, [m["slug"] for m in request["memories"]], 3)
    assert check.refused is None and check.notes == []
    (body,) = bodies
    assert body["tools"] == []
    assert body["model"] == "claude-haiku-5-5"                          # --model haiku, the default
    assert any(block.get("text") == SYSTEM_PROMPT for block in body["system"])
    text = json.dumps(body)
    assert "memory-router.enrich/2" in text and request["memories"][0]["hook"] in text
    assert HOOK_CONTEXT not in text and CLAUDE_MD_MARKER not in text and "mcp__" not in text
    assert markers == []                                                 # no hook ran, ours above all
    home = user_setup[0]
    assert transcripts(home) == [] and not (home / ".claude" / "history.jsonl").exists()


def test_without_tools_empty_the_client_offers_its_tools(claude, user_setup, request_and_answer, tmp_path,
                                                         monkeypatch):
    _got, (body,), _markers = ask(claude, user_setup, *request_and_answer, tmp_path, monkeypatch,
                                  without=("--tools",))
    assert {"Bash", "Write", "Edit", "Read"} <= {tool["name"] for tool in body["tools"]}


def test_without_safe_mode_the_users_hooks_fire_and_claude_md_is_sent(claude, user_setup, request_and_answer,
                                                                      tmp_path, monkeypatch):
    _got, bodies, markers = ask(claude, user_setup, *request_and_answer, tmp_path, monkeypatch,
                                without=("--safe-mode",))
    assert {"memory-router-hook", "UserPromptSubmit.json", "SessionStart.json"} <= set(markers)
    text = json.dumps(bodies)
    assert "UserPromptSubmit hook additional context" in text and "layer1_16" in text   # our hook routed it
    assert CLAUDE_MD_MARKER in text
    assert "mcp-started" not in markers                                 # --strict-mcp-config still holds


def test_without_strict_mcp_config_or_safe_mode_the_users_mcp_server_starts(claude, user_setup, request_and_answer,
                                                                           tmp_path, monkeypatch):
    _got, _bodies, markers = ask(claude, user_setup, *request_and_answer, tmp_path, monkeypatch,
                                 without=("--safe-mode", "--strict-mcp-config"))
    assert "mcp-started" in markers


def test_without_no_session_persistence_a_transcript_is_written(claude, user_setup, request_and_answer, tmp_path,
                                                                monkeypatch):
    ask(claude, user_setup, *request_and_answer, tmp_path, monkeypatch, without=("--no-session-persistence",))
    found = transcripts(user_setup[0])
    assert len(found) == 1 and "memory-router-enrich-" in found[0].parent.name


def test_a_prose_reply_is_that_clusters_protocol_error(claude, user_setup, request_and_answer, tmp_path,
                                                       monkeypatch):
    request, _answer = request_and_answer
    with pytest.raises(engines.EngineError, match="protocol broken: the answer is not JSON"):
        ask(claude, user_setup, request, "Sure! here are some ideas", tmp_path, monkeypatch)


def test_clusters_enrich_through_the_real_client_end_to_end(claude, user_setup, example_cluster_file, tmp_path,
                                                            monkeypatch, capsys):
    """`memory-router clusters enrich --engine claude` on three clusters of the example store: one
    headless client run per cluster, the stand-in answering each from its request."""
    from harness.cli import main
    from harness.lab.script import Script
    from harness.lab.server import LabServer
    from router.store.clusterfile import ClusterIndex, load_cluster_file, render_markdown
    from router.config import utterances_path
    from router.store.utterances import read_utterances

    index = load_cluster_file(example_cluster_file)
    small = tmp_path / "brain" / "memory-layer1-clusters.md"
    small.parent.mkdir()
    small.write_text(render_markdown(ClusterIndex([index.cluster(c) for c in ("layer1_16", "layer1_17", "layer1_18")])))
    home, markers, env = user_setup
    log = tmp_path / "requests.jsonl"
    script = Script([{"when": {"prompt_contains": "memory-router.enrich/2"}, "reply": {"enrich_answer": True},
                      "times": 0}])
    with LabServer(script, log) as server:
        for name, value in {**env, "ANTHROPIC_BASE_URL": server.url}.items():
            monkeypatch.setenv(name, value)
        code = main(["clusters", "enrich", "--clusters", str(small), "--engine", "claude", "--command", claude,
                     "--per-memory", "2", "--yes", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0, report
    assert report["engine"] == "claude" and report["model"] == "haiku" and report["failed"] == 0
    rows = read_utterances(utterances_path(small))
    members = {m.slug for c in ("layer1_16", "layer1_17", "layer1_18") for m in index.cluster(c).members}
    assert {r.slug for r in rows} == members and len(rows) == 2 * len(members)
    bodies = [json.loads(json.loads(line)["body"]) for line in log.read_text().splitlines()
              if "count_tokens" not in json.loads(line)["path"]]
    assert len(bodies) == 3 and all(b["tools"] == [] for b in bodies)
    assert HOOK_CONTEXT not in json.dumps(bodies) and sorted(p.name for p in markers.iterdir()) == []
    assert transcripts(home) == []
