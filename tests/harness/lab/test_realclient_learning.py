"""Learned terms (docs/learning.md) under the real Claude Code: a prompt the router misses, the
agent reading the memory file itself, ``memory-router learn`` on the session's transcripts, and
a second session where the same phrasing gets the memory's line from the hook.

Each project has its own copy of the example store and a ``memory-router.toml`` that sets
``learning``; the memory file sits in the client's own memory directory
(``~/.claude/projects/<key>/memory/``), where the scripted ``Read`` finds it. Routing is judged
from what the client sent (``harness.lab.measure``: the routed contexts in the request bodies),
and the miss also from the transcript (``learn --json``: what the router injected per prompt).
With ``learning = false`` the same steps must change nothing: ``learn`` refuses to write, and a
learned file written by hand is ignored by the hook. Marked ``realclient``: CI runs them, a
missing client fails them."""

import json
import os
import pathlib
import shutil

import pytest

from harness.lab import measure
from harness.lab.report import build_report, report_exit_code
from harness.lab.runner import run_session
from harness.lab.script import Script

pytestmark = pytest.mark.realclient

# `memory-router route` sends this nowhere on the example store: its words are not the
# memory's (pnpm, real-time scanning, Defender) and no cluster scores over the floor.
MISSED = "the antivirus makes installing packages painfully slow"
SLUG = "env_defender_excludes_dev_dir"
# Routed (to another cluster than SLUG's) with none of MISSED's words.
CONTROL = "I ran setx FOO bar in cmd but the Bash tool still says FOO is empty, do I need to restart?"
ANSWER = "Exclude the dev directory from real-time scanning."


def member_line(slug):
    """``- slug — hook``, as the hook sends a member line."""
    from router.store.clusterfile import load_cluster_file
    from router.config import bundled_cluster_file

    cluster, member = load_cluster_file(bundled_cluster_file()).find_member(slug)
    return cluster.cluster_id, f"- {member.slug} \u2014 {member.hook}"


def project_with(learning, learned_from=None):
    """``prepare`` for run_session: the project's config, the memory file in the client's memory
    directory, and (``learned_from``: another project) that project's learned file beside the
    cluster file, as if the second session ran where the first did."""
    def prepare(paths):
        config = f'clusters = "brain/memory-layer1-clusters.md"\nlearning = {str(learning).lower()}\n'
        pathlib.Path(paths.project, "memory-router.toml").write_text(config, encoding="utf-8")
        _cluster, line = member_line(SLUG)
        pathlib.Path(paths.memory_dir, SLUG + ".md").write_text(
            f"---\nname: {SLUG}\ndescription: {line[2:]}\ntype: project\n---\n\n{line[2:]}\n", encoding="utf-8")
        if learned_from is not None:
            shutil.copyfile(learned_file(learned_from), learned_file(paths))
    return prepare


def learned_file(paths):
    from router.config import learned_path

    return learned_path(paths.cluster_file)


def reads_the_memory(run_dir):
    """The agent answers MISSED by Reading the memory file, then replies; anything else: text."""
    from harness.lab.rundir import make_paths

    memory_file = os.path.join(make_paths(run_dir).memory_dir, SLUG + ".md")
    return Script([
        {"when": {"prompt_contains": MISSED, "after_tool_result": False},
         "reply": {"tool_use": {"name": "Read", "input": {"file_path": memory_file}}}, "times": 0},
        {"when": {"after_tool_result": True}, "reply": {"text": ANSWER}, "times": 0},
    ])


def run(tmp_path, name, claude_client, prepare):
    run_dir = tmp_path / name
    result = run_session(run_dir, [MISSED, CONTROL], "slim", script=reads_the_memory(run_dir), claude=claude_client,
                         prepare=prepare)
    assert result.ok, result.outcomes
    reads = [e for e in measure.tool_exchanges(measure.read_log(result.request_log)) if e["name"] == "Read"]
    assert [(e["input"]["file_path"], e["is_error"]) for e in reads] == [
        (os.path.join(result.paths.memory_dir, SLUG + ".md"), False)]
    assert f"name: {SLUG}" in reads[0]["text"]                      # the client read the file itself
    report = build_report(result.run_dir)
    [session] = report["sessions"]
    assert session["agreement"]["agree"], session["agreement"]     # the transcript shows what the requests do
    assert report_exit_code(report) == 0
    return result


def new_contexts_by_prompt(result):
    """``{prompt_index: [routed context text, ...]}``: the hook's contexts that reached the model
    as new text, per prompt, read from the request bodies."""
    analysis = measure.analyze_requests(measure.read_log(result.request_log))
    out = {}
    for call in analysis["calls"]:
        if call["thread"] == measure.MAIN and not call["compaction"]:
            out.setdefault(call["prompt_index"], []).extend(analysis["context_texts"][c] for c in call["new_contexts"])
    return out


def learn(run_cli, result, *args):
    """``memory-router learn <the session's transcript dir> --config <the project's>``, installed CLI."""
    transcripts = os.path.dirname(result.transcript)
    done = run_cli("learn", transcripts, "--config", os.path.join(result.paths.project, "memory-router.toml"), *args)
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def learn_json(run_cli, result, *args):
    code, out, err = learn(run_cli, result, "--json", *args)
    assert code == 0, err
    return json.loads(out)


def prompt_evidence(learned, prompt):
    [row] = [p for s in learned["sessions"] for p in s["prompts"] if p["prompt"] == prompt]
    return row


def route(run_cli, result, prompt):
    done = run_cli("route", "--json", prompt, cwd=result.paths.project, env={"CLAUDE_PROJECT_DIR": result.paths.project})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("learning", [True, False], ids=["learning-on", "learning-off"])
def test_the_same_phrasing_routes_after_learn(tmp_path, claude_client, run_cli, learning):
    from router.store.learned import read_learned
    from router.tokens import tokenize

    cluster_id, line = member_line(SLUG)
    first = run(tmp_path, "first", claude_client, project_with(learning))
    # the router missed: nothing went to the model with MISSED, and the transcript says the same
    before = new_contexts_by_prompt(first)
    assert before[0] == [] and len(before[1]) == 1 and line not in before[1][0]
    dry = learn_json(run_cli, first, "--dry-run")
    missed = prompt_evidence(dry, MISSED)
    assert missed["injected"] == [] and [e["slug"] for e in missed["evidence"]] == [SLUG]
    assert missed["evidence"][0]["how"] == "read"
    [item] = dry["learned"]
    terms = item["added"]
    assert terms and not set(tokenize(CONTROL)) & set(terms)       # the control shares no learned word

    code, _out, err = learn(run_cli, first)
    if learning:
        assert code == 0, err
        rows = read_learned(learned_file(first.paths))
        assert [(r.cluster_id, r.slug, r.term, r.source) for r in rows] == [
            (cluster_id, SLUG, term, "learn") for term in terms]
    else:
        # learn refuses and writes nothing; the same rows written by hand must not count either
        assert code == 1 and "learning is off" in err and err.count("\n") == 1
        assert not os.path.exists(learned_file(first.paths))
        from router.store.learned import LearnedTerm, render_learned

        added = missed["timestamp"][:19] + "Z"
        hand = [LearnedTerm(added, cluster_id, SLUG, term, "hand", None) for term in terms]
        pathlib.Path(learned_file(first.paths)).write_text(render_learned(hand), encoding="utf-8")
        assert [r.term for r in read_learned(learned_file(first.paths))] == terms

    second = run(tmp_path, "second", claude_client, project_with(learning, learned_from=first.paths))
    after = new_contexts_by_prompt(second)
    expected = route(run_cli, second, MISSED)
    if learning:
        # the hook put the memory's line in front of the model, with the text `route` gives
        [context] = after[0]
        assert context.startswith(f"Routed memory cluster: {cluster_id}") and line in context
        assert context == expected["additional_context"]
        # the agent read it again, but now it had been injected: nothing more to learn
        again = prompt_evidence(learn_json(run_cli, second, "--dry-run"), MISSED)
        assert again["injected"] == [SLUG] and again["evidence"] == []
        assert again["ignored"] == [{"slug": SLUG, "why": "injected"}]
    else:
        assert after[0] == [] and expected["routed"] == []
        again = prompt_evidence(learn_json(run_cli, second, "--dry-run"), MISSED)
        assert again["injected"] == [] and [e["slug"] for e in again["evidence"]] == [SLUG]   # still a miss
    # a prompt with none of the learned words gets what it got before learning, to the byte
    assert after[1] == before[1]
