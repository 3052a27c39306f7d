"""The router under the real Claude Code (the pinned CLI, offline, against the lab stand-in).

Each test runs a short session with ``harness.lab.runner.run_session`` and judges it from the
request log (``harness.lab.measure``) and the transcript audit (``transcripts.audit``), side by
side. Marked ``realclient``: CI runs them, a missing client fails them."""

import json
import shutil
import os
import subprocess

import pytest

from harness.lab import measure
from harness.lab.requestbody import digest
from harness.lab.report import build_report, report_exit_code
from harness.lab.runner import run_session
from harness.lab.script import Script

pytestmark = pytest.mark.realclient

ROUTED_A = "I ran setx FOO bar in cmd but the Bash tool still says FOO is empty, do I need to restart?"
SILENT = "refactor this loop please"
# Another cluster than ROUTED_A's under every built-in provider, so its injection differs.
ROUTED_B = "the nightly pg_dump restore with pg_restore is slow, how many jobs do we use?"


def analysis_of(result):
    return measure.analyze_requests(measure.read_log(result.request_log))


def router_context(prompt, cluster_file=None, provider=None):
    """What ``memory-router route`` would inject for ``prompt`` as a new session's first sight of
    it (the configured provider's answer, after the session stage's line selection)."""
    from router.store.clusterfile import load_cluster_file
    from router.config import bundled_cluster_file, default_settings
    from router.providers.provider import build_table
    from router.hooks.session import route_fresh

    table = build_table(load_cluster_file(cluster_file or bundled_cluster_file()))
    settings = default_settings()
    settings["provider"] = provider or settings["provider"]
    # The lab's run directory holds the cluster file alone (prepare_run_dir(utterances=False)), so
    # the hook there routes without the bundled utterances: say the same here.
    settings["utterances"] = False
    return route_fresh(prompt, table, settings).get("additional_context")


def last_prompt_text(call_body):
    from harness.lab.requestbody import last_user_text

    return last_user_text(json.loads(call_body))


@pytest.mark.parametrize("session", ["resume", "stream"])
def test_routed_silent_routed(tmp_path, claude_client, session):
    result = run_session(tmp_path / "run", [ROUTED_A, SILENT, ROUTED_B], "slim", claude=claude_client,
                         session=session)
    assert result.ok, result.outcomes
    analysis = analysis_of(result)
    calls = analysis["calls"]
    assert [c["prompt_index"] for c in calls] == [0, 1, 2] and {c["thread"] for c in calls} == {"main"}
    # each routed context reaches the model exactly once as new text, and it is the router's own text
    assert [c["new_contexts"] for c in calls] == [["c1"], [], ["c2"]]
    texts = {c["id"]: c["sha256"] for c in analysis["contexts"]}
    assert texts["c1"] == digest(router_context(ROUTED_A))
    assert texts["c2"] == digest(router_context(ROUTED_B))
    assert measure.check_once_as_new(analysis) == []
    # later calls carry it only as history; the silent prompt adds nothing
    assert [c["history_contexts"] for c in calls] == [[], ["c1"], ["c1"]]
    assert calls[1]["memory_bytes"] == calls[0]["memory_bytes"]
    # the audit agrees with the request log
    report = build_report(result.run_dir)
    [session] = report["sessions"]
    assert session["audit"]["status"] == "pass" and session["agreement"]["agree"], session["agreement"]
    assert report_exit_code(report) == 0


def cluster_file_text(clusters):
    """A cluster file: ``clusters`` is ``[(cluster_id, tags, [(slug, hook)])]``."""
    out = ["# Memory clusters", "", "## Layer 0 - Cluster Router", ""]
    for cid, tags, members in clusters:
        out.append(f"- {cid} \u00b7 {len(members)} \u00b7 tags: {', '.join(tags)} \u00b7 label: lab cluster {cid}")
    out += ["", "## Layer 1 - Member Lines", ""]
    for cid, _tags, members in clusters:
        out.append(f"### {cid}")
        out += [f"- {slug} - project; {hook}" for slug, hook in members]
        out.append("")
    return "\n".join(out)


def oversize_clusters(path):
    """One cluster whose lines are so long (~4,000 characters each) that even the few the session
    stage selects (lines_per_injection) exceed Claude Code's 10,000-character hook output cap.
    Routed by spec §10: in a one-cluster store where every line says setx, the weighted provider
    (rightly) gives setx no weight, and this case is about the size cap, not about the provider."""
    members = [(f"wide_fact_{i:02d}", f"setx detail {i} " + "lorem ipsum dolor sit amet " * 150) for i in range(14)]
    path.write_text(cluster_file_text([("lab_wide", ["setx", "bash"], members)]), encoding="utf-8")
    (path.parent.parent / "memory-router.toml").write_text('provider = "spec"\n', encoding="utf-8")  # the project


def corrupt(path):
    path.write_bytes(b"## Layer 0 - Cluster Router\n- not a cluster line \xff\xfe\x00\n")


def fifo(path):
    os.remove(path)
    os.mkfifo(path)


@pytest.mark.parametrize("damage", [corrupt, fifo, oversize_clusters], ids=["corrupt", "fifo", "oversize"])
def test_fail_open_with_the_real_client(tmp_path, claude_client, damage):
    result = run_session(tmp_path / "run", [ROUTED_A], "slim", claude=claude_client,
                         prepare=lambda paths: damage(__import__("pathlib").Path(paths.cluster_file)))
    assert result.ok, result.outcomes
    analysis = analysis_of(result)
    [call] = analysis["calls"]
    with open(result.request_log, encoding="utf-8") as handle:
        raw = json.loads(handle.readline())["body"]
    assert last_prompt_text(raw).endswith(ROUTED_A)              # the prompt still reaches the model
    assert "<persisted-output>" not in raw                        # never Claude Code's 10,000-char stub
    from transcripts.reader import read_session

    hook_trouble = [e.subtype for e in read_session(result.transcript)
                    if e.type == "attachment" and e.hook_event == "UserPromptSubmit"
                    and e.subtype in ("hook_cancelled", "hook_non_blocking_error", "hook_blocking_error")]
    assert hook_trouble == []                                     # silent exit 0, no timeout (the FIFO)
    if damage is oversize_clusters:
        [context] = [c for c in analysis["contexts"]]
        assert call["new_contexts"] == [context["id"]] and context["chars"] <= 10_000
        header = context["header"]
        left_out = int(header.split("(")[1].split(" more not shown")[0])
        text = router_context(ROUTED_A, result.paths.cluster_file, provider="spec")
        assert digest(text) == context["sha256"]
        shown = sum(1 for line in text.split("\n") if line.startswith("- "))
        assert shown >= 1 and shown + left_out == 14                # every line is shown or counted
    else:
        assert analysis["contexts"] == [] and call["new_contexts"] == []
        with open(os.path.join(result.run_dir, "hook.log"), encoding="utf-8") as log:
            assert log.read().strip()                             # the hook ran, failed open and said why
    assert report_exit_code(build_report(result.run_dir)) == 0


def test_compaction_drops_earlier_contexts(tmp_path, claude_client):
    result = run_session(tmp_path / "run", [ROUTED_A, "/compact", ROUTED_B], "slim", claude=claude_client)
    assert result.ok, result.outcomes
    analysis = analysis_of(result)
    [compaction] = analysis["compactions"]
    assert compaction["contexts_before"] == ["c1"]
    assert compaction["carried_after"] == []                      # c1 is gone from later requests
    after = [c for c in analysis["calls"] if c["prompt_index"] == 2]
    assert after and after[-1]["new_contexts"] == ["c2"] and after[-1]["history_contexts"] == []
    assert after[-1]["memory_md_bytes"] == analysis["calls"][0]["memory_md_bytes"]   # MEMORY.md is sent again
    from transcripts.reader import read_session

    boundaries = [e for e in read_session(result.transcript) if e.type == "system" and e.subtype == "compact_boundary"]
    assert len(boundaries) == 1
    report = build_report(result.run_dir)
    session = report["sessions"][0]
    assert session["audit"]["status"] == "pass" and session["agreement"]["agree"], session["agreement"]


def test_subagent_gets_no_routed_context(tmp_path, claude_client):
    sub_prompt = "Look into why setx variables never reach the Bash tool and report back."
    script = Script([
        {"when": {"prompt_contains": "delegate"},
         "reply": {"tool_use": {"name": "Agent", "input": {"description": "env check", "prompt": sub_prompt,
                                                           "subagent_type": "general-purpose"}}}},
        {"when": {"prompt_contains": "never reach the Bash tool and report back"}, "reply": {"text": "sub done"}},
    ])
    result = run_session(tmp_path / "run", ["delegate this: " + ROUTED_A], "slim", script=script,
                         claude=claude_client)
    assert result.ok, result.outcomes
    analysis = analysis_of(result)
    assert analysis["totals"]["other_calls"] >= 1                  # the subagent made its own request(s)
    assert analysis["contexts"] and analysis["leaks"] == []      # routed in the main thread, never in the subagent's
    assert len(result.subagent_transcripts) == 1
    report = build_report(result.run_dir)
    session = report["sessions"][0]
    assert session["agreement"]["agree"], session["agreement"]
    [sub] = session["audit"]["subagents"]
    assert sub["injections"] == 0 and sub["status"] == "pass"    # its file is audited on its own
    # 2.1.328 runs the Agent tool in the background and delivers its result as a <task-notification>
    # turn, and UserPromptSubmit fires for that turn too: the router may inject again there. The
    # audit must count exactly what the requests carried, no more, no less.
    assert session["audit"]["injections"] == session["agreement"]["requests"] >= 1


def long_index(paths):
    with open(paths.memory_file, "w", encoding="utf-8") as out:
        out.write("".join(f"- fact_{i:03d} \u2014 line {i} of a long index\n" for i in range(400)))


def wide_index(paths):
    # 150 lines of 194 characters (29,100 characters, 56,400 bytes): over 25,000 characters, in 150 lines.
    with open(paths.memory_file, "w", encoding="utf-8") as out:
        out.write("".join(f"- wide_{i:03d} \u2014 " + "\u00e9" * 180 + "\n" for i in range(150)))


def loaded_lines_of(analysis):
    body = analysis["memory_md"]["body"]
    kept = body.split("\n\n> WARNING")[0]
    return len(kept.split("\n")), analysis["memory_md"]["truncation"] is not None


@pytest.mark.parametrize("write", [long_index, wide_index], ids=["400-lines", "29k-characters"])
def test_memory_md_over_the_load_limit(tmp_path, claude_client, run_cli, write):
    result = run_session(tmp_path / "run", ["hello"], "flat", hook=False, claude=claude_client, prepare=write)
    assert result.ok, result.outcomes
    client_lines, client_truncated = loaded_lines_of(analysis_of(result))
    assert client_truncated
    memory_md = result.paths.memory_file
    # tokens report
    # (the same file as both is refused: a copy stands in as the slim side; only the flat side is read here)
    slim_copy = tmp_path / "MEMORY.copy.md"
    shutil.copyfile(memory_md, slim_copy)
    tokens = run_cli("tokens", "report", "--flat", memory_md, "--slim", slim_copy, "--json",
                     "--tokenizer", "estimate")
    assert tokens.returncode == 0, tokens.stderr.decode()
    flat = json.loads(tokens.stdout)["always_loaded"]["flat"]
    assert flat["truncated"] is True and flat["loaded_lines"] == client_lines
    # doctor
    doctor = run_cli("doctor", "--project", result.paths.project, "--memory-dir", result.paths.memory_dir, "--json",
                     env={"HOME": result.paths.home})
    [size] = [c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "MEMORY.md size"]
    assert size["status"] == "fail" and size["loaded_lines"] == client_lines


def big_router_store(directory):
    clusters = [(f"lab_{i:03d}", [f"tagword{i}"], [(f"fact_{i:03d}", f"fact number {i}")]) for i in range(230)]
    cluster_file = directory / "clusters.md"
    cluster_file.write_text(cluster_file_text(clusters), encoding="utf-8")
    config = directory / "memory-router.toml"
    config.write_text("hot_strip = []\n", encoding="utf-8")
    return cluster_file, config


def test_slim_render_warning_matches_what_the_client_loads(tmp_path, claude_client, run_cli, example_flat_index):
    cluster_file, config = big_router_store(tmp_path)
    memory_dir = tmp_path / "memory"
    memory_dir.mkdir()
    (memory_dir / "MEMORY.md").write_bytes(example_flat_index.read_bytes())
    render = run_cli("slim", "render", "--memory-dir", memory_dir, "--clusters", cluster_file, "--config", config,
                     "--dry-run", "--json")
    assert render.returncode == 0, render.stderr.decode()
    said = json.loads(render.stdout)
    warns = " ".join(said["size"]["warnings"] if "size" in said else said.get("warnings", []))
    result = run_session(tmp_path / "run", ["hello"], "slim", claude=claude_client, clusters=cluster_file,
                         config=config, hook=False)
    assert result.ok, result.outcomes
    client_lines, client_truncated = loaded_lines_of(analysis_of(result))
    assert client_truncated and client_lines == 200
    assert "Claude Code loads only the first 200 lines" in warns
    from canaries.memoryindex import claude_code_loaded

    loaded, truncated = claude_code_loaded(result.memory_text)
    assert truncated and len(loaded.splitlines()) == client_lines
