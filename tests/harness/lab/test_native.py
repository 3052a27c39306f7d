"""harness.lab.native: the head-to-head with Claude Code's built-in memory selector. The pure parts
over synthetic request logs shaped like 2.1.328's (the selector's side request, the recalled file
as a system message after a tool result, the MEMORY.md section, a hook context); the topic files
and the oracle script; and one short real-client comparison (marked ``realclient``)."""

import json

import pytest
import yaml

from harness.lab import native
from harness.lab.script import Script

MAIN_SYSTEM = ["x-anthropic-billing-header: cc_version=2.1.328.aaa", "You are Claude Code."]
SELECTOR_SYSTEM = ["x-anthropic-billing-header: cc_version=2.1.328.aaa",
                   "You are selecting memories that will be useful to Claude Code as it processes a user's query."]
FACT = "environment variables set with setx never reach the Bash tool"
OTHER = "a PUBLIC_ build-time variable set as a Secret is undefined"
FACTS = {"env_setx": FACT, "env_secret": OTHER}
PAIRS = [("why can't Bash see my setx var", "env_setx"), ("my PUBLIC_ var is undefined", "env_secret")]
INDEX = f"# Memory Index\n- env_setx \u2014 {FACT}\n- env_secret \u2014 {OTHER}"


def index_reminder():
    return {"type": "text", "text": "<system-reminder>\nContents of /h/.claude/projects/-p/memory/MEMORY.md "
                                    f"(user's auto-memory, persists across conversations):\n\n{INDEX}\n</system-reminder>"}


def recall(slug, fact):
    return {"role": "system", "content": [{"type": "text", "text": (
        f"{native.RECALL_MARK} \u2014 use only if it actually applies to what the user asked.\n\n"
        f"Memory: /h/.claude/projects/-p/memory/{slug}.md:\n\n---\nname: {slug}\n---\n{fact}\n")}]}


def record(seq, prompt_index, messages, system=MAIN_SYSTEM):
    raw = json.dumps({"model": "m", "system": [{"type": "text", "text": t} for t in system], "messages": messages})
    return {"seq": seq, "path": "/v1/messages?beta=true", "prompt_index": prompt_index, "bytes": len(raw.encode()),
            "body": raw}


def turn(prompt, first_extra=(), after_tool=()):
    """One prompt's main requests: the prompt, then (after a Read) the request carrying its result."""
    ask = [{"role": "user", "content": [{"type": "text", "text": prompt}]}, *first_extra]
    use = [{"role": "assistant", "content": [{"type": "tool_use", "id": f"t{len(prompt)}", "name": "Read", "input": {}}]},
           {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{len(prompt)}", "content": "x"}]},
           *after_tool]
    return ask, use


def native_log():
    a1, a2 = turn(PAIRS[0][0], after_tool=[recall("env_setx", FACT)])
    b1, b2 = turn(PAIRS[1][0], after_tool=[recall("env_secret", OTHER)])
    side = [{"role": "user", "content": "Available memories:\n- env_setx.md: x\nSelect memories relevant to:\nq"}]
    history = a1 + a2 + [{"role": "assistant", "content": "done"}]
    return [record(1, 0, a1), record(2, 0, side, SELECTOR_SYSTEM), record(3, 0, a1 + a2),
            record(4, 1, history + b1), record(5, 1, side, SELECTOR_SYSTEM), record(6, 1, history + b1 + b2)]


def flat_log():
    a1, a2 = turn(PAIRS[0][0])
    a1 = [{"role": "user", "content": [index_reminder(), *a1[0]["content"]]}]
    b1, b2 = turn(PAIRS[1][0])
    history = a1 + a2 + [{"role": "assistant", "content": "done"}]
    return [record(1, 0, a1), record(2, 0, a1 + a2), record(3, 1, history + b1), record(4, 1, history + b1 + b2)]


def test_native_facts_arrive_only_after_the_tool_result():
    result = native.analyze(native_log(), PAIRS, FACTS)
    assert [p["fact"] for p in result["prompts"]] == ["after tool result", "after tool result"]
    summary = result["summary"]
    assert summary["fact_first"] == 0 and summary["fact_after_tool_result"] == 2 and summary["delivery_rate"] == 1
    assert summary["side_calls"] == 2 and summary["model_calls_per_prompt"] == 3
    # the recalled file is re-sent with the history: the second prompt's first call carries the first file
    kinds = [c["kinds"] for c in result["calls"]]
    assert kinds == [[], ["recall"], ["recall"], ["recall"]]


def test_side_requests_are_counted_apart_from_memory_bytes():
    log = native_log()
    result = native.analyze(log, PAIRS, FACTS)
    assert result["summary"]["side_bytes_session"] == log[1]["bytes"] + log[4]["bytes"]
    assert result["summary"]["main_calls"] == 4


def test_flat_index_delivers_every_fact_before_the_first_answer():
    result = native.analyze(flat_log(), PAIRS, FACTS)
    assert [p["fact"] for p in result["prompts"]] == ["first", "first"]
    per_call = {c["memory_bytes"] for c in result["calls"]}
    assert len(per_call) == 1 and per_call.pop() > len(INDEX)       # the section header counts
    assert result["summary"]["side_calls"] == 0 and result["summary"]["model_calls_per_prompt"] == 2


def test_a_fact_nobody_sent_is_never_delivered():
    result = native.analyze(native_log(), PAIRS, {"env_setx": FACT, "env_secret": "a fact no request holds"})
    assert [p["fact"] for p in result["prompts"]] == ["after tool result", "never"]
    assert result["summary"]["delivery_rate"] == 0.5


def test_hook_context_counts_as_memory():
    a1, a2 = turn(PAIRS[0][0], first_extra=[{"role": "system", "content": [
        {"type": "text", "text": f"UserPromptSubmit hook additional context: Routed memory cluster: c\n- env_setx \u2014 {FACT}"}]}])
    result = native.analyze([record(1, 0, a1), record(2, 0, a1 + a2)], PAIRS[:1], FACTS)
    assert result["prompts"][0]["fact"] == "first" and result["calls"][0]["kinds"] == ["hook"]


def test_topic_files_carry_the_frontmatter_the_selector_reads(example_cluster_file):
    from router.store.clusterfile import load_cluster_file

    index = load_cluster_file(example_cluster_file)
    files = native.topic_files(index)
    assert len(files) == len(index.members)
    for member in index.members:
        text = files[f"{member.slug}.md"]
        head = yaml.safe_load(text.split("---\n")[1])
        assert head["name"] == member.slug and head["description"] == member.hook
        assert head["type"] in native.CLAUDE_TYPES
        assert text.endswith(member.hook + "\n")


def test_oracle_answers_each_side_request_with_its_prompts_file():
    script = Script(native.oracle_rules(PAIRS, "/p/README.md"))

    def side(query):
        return {"system": [{"type": "text", "text": t} for t in SELECTOR_SYSTEM],
                "messages": [{"role": "user", "content": f"Available memories:\n...\nSelect memories relevant to:\n{query}"}]}

    assert json.loads(script.reply_for(side(PAIRS[1][0]))["text"]) == {"selected_memories": ["env_secret.md"]}
    assert json.loads(script.reply_for(side("something else"))["text"]) == {"selected_memories": []}
    main = {"system": [{"type": "text", "text": t} for t in MAIN_SYSTEM],
            "messages": [{"role": "user", "content": PAIRS[0][0]}]}
    first = script.reply_for(main)
    assert first["tool_use"]["name"] == "Read" and first["pause"] == native.HOLD_SECONDS


def test_table_lists_each_run_in_order():
    results = {"router": native.analyze(flat_log(), PAIRS, FACTS), "flat": native.analyze(flat_log(), PAIRS, FACTS)}
    text = native.table(results)
    assert text.splitlines()[0] == "| | flat MEMORY.md | slim + memory-router |"
    assert "| fact in the request before the first answer | 2/2 | 2/2 |" in text


def test_labelled_prompts_take_single_fact_cases(tmp_path):
    suite = tmp_path / "s.yaml"
    suite.write_text(yaml.safe_dump({"cases": [
        {"id": "a", "prompt": "one", "injects": ["x"]},
        {"id": "b", "prompt": "two", "injects": ["x", "y"]},
        {"id": "c", "prompt": "three", "silent": True},
        {"id": "d", "prompt": "four", "injects": ["z"]}]}), encoding="utf-8")
    assert native.labelled_prompts(suite) == [("one", "x"), ("four", "z")]
    assert native.labelled_prompts(suite, limit=1) == [("one", "x")]


@pytest.mark.realclient
def test_real_client_head_to_head(tmp_path, claude_client):
    pairs = native.labelled_prompts(native.bundled_example_suite(), limit=3)
    results = native.run_compare(str(tmp_path), pairs, claude_client)
    assert all(r["ok"] for r in results.values()), {n: r["failed_prompts"] for n, r in results.items()}
    flat, selector, router = (results[n]["summary"] for n in ("flat", "native", "router"))
    assert flat["side_calls"] == 0 and router["side_calls"] == 0
    assert selector["side_calls"] == 3 and selector["model_calls_per_prompt"] == 3
    # the oracle picks the right file every time, but it only ever lands after the tool result
    assert selector["fact_first"] == 0 and selector["fact_after_tool_result"] == 3
    assert flat["fact_first"] == 3 and router["fact_first"] == 3
    assert router["memory_bytes_session"] < flat["memory_bytes_session"]


def test_compare_native_refuses_unlabelled_prompts(run_cli, tmp_path):
    done = run_cli("lab", "run", tmp_path / "run", "--compare", "native", "--prompt", "hello")
    assert done.returncode == 2 and b"labelled with their fact" in done.stderr


def test_compare_native_refuses_a_suite_without_single_fact_cases(run_cli, tmp_path):
    suite = tmp_path / "s.yaml"
    suite.write_text(yaml.safe_dump({"cases": [{"id": "a", "prompt": "one", "silent": True}]}), encoding="utf-8")
    done = run_cli("lab", "run", tmp_path / "run", "--compare", "native", "--suite", suite)
    assert done.returncode == 2 and b"no case naming exactly one fact" in done.stderr


def test_table_leaves_out_a_figure_no_run_has():
    results = {"flat": native.analyze(flat_log(), PAIRS, FACTS)}
    assert "seconds per prompt" not in native.table(results)
    results["flat"]["summary"]["seconds_per_prompt"] = 1.5
    assert "| seconds per prompt (wall; each first answer held 1 s) | 1.5 |" in native.table(results)
