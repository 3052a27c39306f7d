"""Evidence for learned terms: per prompt, what was injected, what the agent read or named, and
which of those the router missed; over the real 2.1.328 and 2.1.39 files and built sessions."""

import json
import pathlib
import shutil

import pytest

from router.store.clusterfile import load_cluster_file
from router.config import bundled_cluster_file
from router.errors import InputError
from support.fixture_transcripts import raw_lines, session_file, user_text
from transcripts.evidence import IN_CONTEXT, INJECTED, session_evidence, session_transcripts
from transcripts.sightings import CITED, GET_MEMORY, READ, slug_of_path, slugs_in_text, split_legacy_prompt

# A routed, silent, routed session the real 2.1.328 client wrote with our hook (tests/fixtures/README.md).
REAL_CLIENT = session_file("2.1.328", "routed-silent-routed")
REAL_PROMPTS = ["I ran setx FOO bar in cmd but the Bash tool still says FOO is empty, do I need to restart?",
                "refactor this loop please",
                "the Cloudflare Workers build says PUBLIC_API_URL is undefined but I set it as a secret"]
MEMORY = "/home/dev/.claude/projects/-home-dev-code-demo/memory/"
MISSED = "the antivirus makes installing packages painfully slow"


@pytest.fixture(scope="module")
def slugs():
    return {m.slug for m in load_cluster_file(bundled_cluster_file()).members}


def evidence_of(session):
    return [(p.line, [(s.slug, s.how) for s in p.evidence]) for p in session.prompts if p.evidence]


# --------------------------------------------------------------------------- the real 2.1.328 session


def _real_lines():
    return REAL_CLIENT.read_text(encoding="utf-8").splitlines()


def _assistant_like(template, blocks, uid):
    obj = json.loads(template)
    obj["message"]["content"] = blocks
    obj["uuid"] = uid
    return json.dumps(obj)


def test_the_real_session_untouched_has_its_injections_and_no_evidence(slugs):
    found = session_evidence(REAL_CLIENT, slugs)
    assert found.injections_visible and found.versions == ("2.1.328",)
    prompt_lines = [n for n, o in raw_lines(REAL_CLIENT) if o.get("type") == "user" and user_text(o) in REAL_PROMPTS]
    assert len(prompt_lines) == 3 and [p.line for p in found.prompts] == prompt_lines
    first, second, third = found.prompts
    assert "env_bash_tool_env_var_caching" in first.injected
    assert second.injected == () and second.prompt == "refactor this loop please"
    assert "env_cloudflare_workers_build_secret_vs_text" in third.injected
    assert found.evidence_count == 0


def test_a_read_after_the_real_silent_prompt_is_evidence_and_a_read_of_an_injected_slug_is_not(tmp_path, slugs):
    lines = _real_lines()
    replies = [i for i, line in enumerate(lines) if json.loads(line).get("type") == "assistant"]
    reply_1, reply_2 = replies[0], replies[1]        # the replies to the first and the silent prompt
    second_prompt = next(n for n, o in raw_lines(REAL_CLIENT) if user_text(o) == REAL_PROMPTS[1])
    read = {"type": "tool_use", "id": "toolu_1", "name": "Read",
            "input": {"file_path": MEMORY + "env_bash_tool_env_var_caching.md"}}
    missed = {"type": "tool_use", "id": "toolu_2", "name": "Read",
              "input": {"file_path": MEMORY + "env_defender_excludes_dev_dir.md"}}
    # Inserted after each real reply, in the real assistant line's own shape.
    lines.insert(reply_2 + 1, _assistant_like(lines[reply_2], [missed], "u-missed"))
    lines.insert(reply_1 + 1, _assistant_like(lines[reply_1], [read], "u-read"))
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    found = session_evidence(path, slugs)
    assert evidence_of(found) == [(second_prompt + 1, [("env_defender_excludes_dev_dir", READ)])]  # one line down
    assert found.prompts[0].ignored == (("env_bash_tool_env_var_caching", INJECTED),)
    assert found.prompts[1].evidence[0].line == reply_2 + 3  # 1-based, after the first insertion


# --------------------------------------------------------------------------- built sessions


def _read(s, name):
    s.tool_call("Read", {"file_path": MEMORY + name}, "---\nname: x\n---\nbody")


def test_a_read_the_router_missed_is_evidence_with_where_it_was_seen(tmp_path, session, slugs):
    s = session()
    s.prompt(MISSED)
    _read(s, "env_defender_excludes_dev_dir.md")
    found = session_evidence(s.write(tmp_path / "s.jsonl"), slugs)
    (prompt,) = found.prompts
    assert prompt.prompt == MISSED and prompt.skip is None
    assert [s.as_dict() for s in prompt.evidence] == [
        {"slug": "env_defender_excludes_dev_dir", "how": READ, "path": str(tmp_path / "s.jsonl"), "line": 2}]


def test_a_read_of_a_slug_injected_for_that_prompt_is_not_evidence(tmp_path, session, slugs):
    s = session()
    s.prompt("setx FOO and the Bash tool")
    s.injection("Routed memory cluster: layer1_project_memory_router\n"
                "- env_bash_tool_env_var_caching \u2014 setx never reaches the Bash tool")
    _read(s, "env_bash_tool_env_var_caching.md")
    found = session_evidence(s.write(tmp_path / "s.jsonl"), slugs)
    assert found.evidence_count == 0
    assert found.prompts[0].ignored == (("env_bash_tool_env_var_caching", INJECTED),)


def test_a_slug_cited_in_the_reply_is_evidence(tmp_path, session, slugs):
    s = session()
    s.prompt("my nightly import mangles Polish names")
    s.assistant("That is the cp1250 feed: see env_supplier_csv_encoding.")
    found = session_evidence(s.write(tmp_path / "s.jsonl"), slugs)
    assert evidence_of(found) == [(1, [("env_supplier_csv_encoding", CITED)])]


def test_an_mcp_get_memory_call_is_evidence(tmp_path, session, slugs):
    s = session()
    s.prompt(MISSED)
    s.tool_call("mcp__memory-router__get_memory", {"slug": "env_defender_excludes_dev_dir"}, "body")
    found = session_evidence(s.write(tmp_path / "s.jsonl"), slugs)
    assert evidence_of(found) == [(1, [("env_defender_excludes_dev_dir", GET_MEMORY)])]


def test_a_memory_already_in_context_is_not_evidence_for_a_follow_up_until_a_compaction(tmp_path, session, slugs):
    s = session()
    s.prompt(MISSED)
    _read(s, "env_defender_excludes_dev_dir.md")
    s.prompt("ok go ahead and do it")
    _read(s, "env_defender_excludes_dev_dir.md")
    compact = s.envelope("system")
    compact.update({"subtype": "compact_boundary", "content": "Conversation compacted"})
    s._add(compact)
    s.prompt("the scanner slows the install again")
    _read(s, "env_defender_excludes_dev_dir.md")
    found = session_evidence(s.write(tmp_path / "s.jsonl"), slugs)
    first, follow_up, after = found.prompts
    assert [e.slug for e in first.evidence] == ["env_defender_excludes_dev_dir"]
    assert follow_up.evidence == () and follow_up.ignored == (("env_defender_excludes_dev_dir", IN_CONTEXT),)
    assert [e.slug for e in after.evidence] == ["env_defender_excludes_dev_dir"]


def test_a_slug_injected_earlier_is_in_context_later(tmp_path, session, slugs):
    s = session()
    s.prompt("setx FOO and the Bash tool")
    s.injection("Routed memory cluster: c\n- env_bash_tool_env_var_caching \u2014 setx")
    s.assistant("ok")
    s.prompt("still empty after a reboot")
    s.assistant("As env_bash_tool_env_var_caching says, a reboot does not help.")
    found = session_evidence(s.write(tmp_path / "s.jsonl"), slugs)
    assert found.evidence_count == 0
    assert found.prompts[1].ignored == (("env_bash_tool_env_var_caching", IN_CONTEXT),)


def test_a_plain_stdout_hook_success_injection_counts_as_injected(tmp_path, session, slugs):
    s = session()
    s.prompt(MISSED)
    s.hook_success("Routed memory cluster: layer1_01\n- env_defender_excludes_dev_dir \u2014 exclude D:\\dev")
    _read(s, "env_defender_excludes_dev_dir.md")
    found = session_evidence(s.write(tmp_path / "s.jsonl"), slugs)
    assert found.prompts[0].injected == ("env_defender_excludes_dev_dir",) and found.evidence_count == 0


def test_a_legacy_hook_block_inside_the_prompt_is_an_injection_and_not_the_prompts_words(tmp_path, session, slugs):
    s = session(version="1.0.98")
    s.prompt(MISSED + "\n<user-prompt-submit-hook>Routed memory cluster: layer1_01\n"
             "- env_defender_excludes_dev_dir \u2014 x</user-prompt-submit-hook>")
    _read(s, "env_defender_excludes_dev_dir.md")
    s.prompt("and my CSV feed has mangled names")
    _read(s, "env_supplier_csv_encoding.md")
    found = session_evidence(s.write(tmp_path / "s.jsonl"), slugs)
    assert found.injections_visible
    assert found.prompts[0].prompt == MISSED and found.prompts[0].injected == ("env_defender_excludes_dev_dir",)
    assert evidence_of(found) == [(4, [("env_supplier_csv_encoding", READ)])]


@pytest.mark.parametrize("version", ["2.0.76", "2.1.293"])
def test_a_2x_prompt_keeps_the_legacy_tag_as_its_own_words(tmp_path, session, slugs, version):
    # issue 35 item 9: 2.x never wrote the tag into a prompt, so text a user typed that holds it
    # is the prompt (not an injection to cut out, nor a memory sent)
    typed = (MISSED + " <user-prompt-submit-hook>Routed memory cluster: layer1_01\n"
             "- env_defender_excludes_dev_dir \u2014 x</user-prompt-submit-hook>")
    s = session(version=version)
    s.prompt(typed)
    found = session_evidence(s.write(tmp_path / "s.jsonl"), slugs)
    assert found.prompts[0].prompt == typed and found.prompts[0].injected == ()


def test_a_transcript_that_cannot_show_injections_gives_no_evidence(tmp_path, session, slugs):
    s = session(version="2.1.38")
    s.prompt(MISSED)
    _read(s, "env_defender_excludes_dev_dir.md")
    found = session_evidence(s.write(tmp_path / "s.jsonl"), slugs)
    assert not found.injections_visible and "cannot show injections" in found.visibility
    assert found.evidence_count == 0


@pytest.mark.parametrize("prompt, extra, skip", [
    ("<command-name>/review</command-name>", {}, "slash command"),
    ("continue", {"promptSource": "system"}, "not typed (promptSource system)"),
])
def test_prompts_nobody_typed_are_never_learned_from(tmp_path, session, slugs, prompt, extra, skip):
    s = session()
    s.prompt(prompt, **extra)
    _read(s, "env_defender_excludes_dev_dir.md")
    found = session_evidence(s.write(tmp_path / "s.jsonl"), slugs)
    assert found.prompts[0].skip == skip and found.evidence_count == 0


def test_an_inline_sidechain_read_belongs_to_the_current_turn(tmp_path, session, slugs):
    s = session()
    s.prompt(MISSED)
    side = session(session_id=s.session_id, sidechain=True, agent_id="b1")
    side.clock = s.clock
    side.tool_call("Read", {"file_path": MEMORY + "env_defender_excludes_dev_dir.md"}, "body")
    s.lines.extend(side.lines)
    found = session_evidence(s.write(tmp_path / "s.jsonl"), slugs)
    assert evidence_of(found) == [(1, [("env_defender_excludes_dev_dir", READ)])]


# --------------------------------------------------------------------------- subagent files


def _task_result(s, agent_id):
    tool_id = "toolu_task"
    s.assistant(tool=("Task", {"prompt": "look around"}, tool_id))
    obj = s.envelope("user")
    obj["message"] = {"role": "user", "content": [{"tool_use_id": tool_id, "type": "tool_result", "content": "done"}]}
    obj["toolUseResult"] = {"status": "completed", "agentId": agent_id, "content": []}
    s._add(obj)


def _subagent(session, main, agent_id, clock):
    sub = session(session_id=main.session_id, sidechain=True, agent_id=agent_id)
    sub.clock = clock
    sub.prompt("look around")
    sub.tool_call("Read", {"file_path": MEMORY + "env_supplier_csv_encoding.md"}, "body")
    return sub


def test_a_subagent_file_belongs_to_the_turn_whose_tool_result_names_its_agent(tmp_path, session, slugs):
    s = session()
    s.prompt("first: the names in my nightly feed are garbled")
    _task_result(s, "a1")
    s.prompt("second: something else entirely")
    main = s.write(tmp_path / "sess.jsonl")
    # Its clock would put it in the second turn: the agent id wins over the time.
    sub = _subagent(session, s, "a1", clock=s.clock).write(tmp_path / "sess" / "subagents" / "agent-a1.jsonl")
    found = session_evidence(main, slugs)
    assert found.subagents == ((str(sub), 1),)
    assert evidence_of(found) == [(1, [("env_supplier_csv_encoding", READ)])]
    assert found.prompts[0].evidence[0].path == str(sub)


def test_a_subagent_file_without_an_agent_id_is_placed_by_its_time(tmp_path, session, slugs):
    s = session()
    s.prompt("first: something else entirely")
    s.assistant("ok")
    s.prompt("second: the names in my nightly feed are garbled")
    clock = s.clock
    s.assistant("looking")
    main = s.write(tmp_path / "sess.jsonl")
    sub = _subagent(session, s, "zz", clock=clock).write(tmp_path / "sess" / "subagents" / "agent-zz.jsonl")
    found = session_evidence(main, slugs)
    assert found.subagents == ((str(sub), 3),)
    assert evidence_of(found) == [(3, [("env_supplier_csv_encoding", READ)])]


def test_a_2_0_sibling_agent_file_of_the_same_session_is_read_and_another_sessions_is_not(tmp_path, session, slugs):
    s = session(version="2.1.293")
    s.prompt("the names in my nightly feed are garbled")
    _task_result(s, "b2")
    main = s.write(tmp_path / "sess.jsonl")
    mine = _subagent(session, s, "b2", clock=1).write(tmp_path / "agent-b2.jsonl")
    other = session(session_id="another-session", sidechain=True, agent_id="b2")
    other.prompt("x")
    other.tool_call("Read", {"file_path": MEMORY + "env_defender_excludes_dev_dir.md"}, "body")
    other.write(tmp_path / "agent-c3.jsonl")
    found = session_evidence(main, slugs)
    assert found.subagents == ((str(mine), 1),)
    assert evidence_of(found) == [(1, [("env_supplier_csv_encoding", READ)])]


def test_the_real_2_1_39_subagent_file_is_attributed_by_its_agent_id(tmp_path, transcript_fixtures, slugs):
    main = tmp_path / "v2.1.39-subagent.jsonl"
    shutil.copy(transcript_fixtures / main.name, main)
    shutil.copytree(transcript_fixtures / "v2.1.39-subagent", tmp_path / "v2.1.39-subagent")
    [sub_file] = sorted((tmp_path / "v2.1.39-subagent" / "subagents").glob("agent-*.jsonl"))
    found = session_evidence(main, slugs)
    delegated = next(n for n, o in raw_lines(main) if user_text(o).startswith("delegate this:"))
    assert found.subagents == ((str(sub_file), delegated),)     # attributed to the prompt that delegated
    assert not found.injections_visible and found.evidence_count == 0


def test_session_transcripts_skips_subagent_files(tmp_path, session):
    for rel in ("a.jsonl", "proj/b.jsonl", "proj/b/subagents/agent-x.jsonl", "proj/agent-y.jsonl", "notes.txt"):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}\n", encoding="utf-8")
    assert session_transcripts(tmp_path) == [str(tmp_path / "a.jsonl"), str(tmp_path / "proj" / "b.jsonl")]


def test_a_file_that_is_not_a_transcript_is_bad_input(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text("not json\n", encoding="utf-8")
    with pytest.raises(InputError, match="not a Claude Code transcript"):
        session_evidence(path, {"a_b"})


# --------------------------------------------------------------------------- recognising slugs


@pytest.mark.parametrize("path, expected", [
    (MEMORY + "env_defender_excludes_dev_dir.md", "env_defender_excludes_dev_dir"),
    ("C:\\Users\\me\\.claude\\projects\\p\\memory\\env-defender-excludes-dev-dir.md", "env_defender_excludes_dev_dir"),
    ("/anywhere/Env_Defender_Excludes_Dev_Dir.md", "env_defender_excludes_dev_dir"),
    (MEMORY + "MEMORY.md", None),
    (MEMORY + "env_defender_excludes_dev_dir.txt", None),
    (MEMORY + "not_a_memory.md", None),
    (None, None),
])
def test_slug_of_path(path, expected):
    assert slug_of_path(path, {"env_defender_excludes_dev_dir", "memory"}) == expected


@pytest.mark.parametrize("text, expected", [
    ("see env_supplier_csv_encoding for it", ["env_supplier_csv_encoding"]),
    ("`env_supplier_csv_encoding`, then env_supplier_csv_encoding.md", ["env_supplier_csv_encoding"]),
    ("we deploy on Fridays", []),                      # a one-word slug used as a word is no citation
    ("read deploy.md first", ["deploy"]),
    ("per `deploy`", ["deploy"]),
    ("native memory: deploy", ["deploy"]),
    ("env_supplier_csv_encoding_v2 and my-env_supplier_csv_encoding", []),   # part of a longer name
    ("ENV_SUPPLIER_CSV_ENCODING", []),
])
def test_slugs_in_text(text, expected):
    assert slugs_in_text(text, {"env_supplier_csv_encoding", "deploy"}) == expected


def test_split_legacy_prompt():
    assert split_legacy_prompt("plain") == ("plain", "")
    assert split_legacy_prompt("ask <user-prompt-submit-hook>ctx</user-prompt-submit-hook>") == ("ask", "ctx")
