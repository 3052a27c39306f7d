"""The session stage (router/hooks/session.py): one prompt's step, what SessionStart sends again after
a compaction, forgetting a session, what a new session is sent, and the hook driven as Claude
Code drives it (the installed console script)."""

import json
import os
import subprocess
import sys
import textwrap
import time
import uuid

import pytest

from router.hooks import session
from router.config import default_settings
from router.routing.injection import line_key
from router.providers.provider import build_table
from router.routing.score import parse_header, route_prompt
from router.hooks.sessionrecord import new_record, record_path, sessions_dir, write_record
from support.routing_decision import DECISION
from support.session_transcript import BOUNDARY, RECORDED, append_entries

SETX = "I set an env var with setx but the Bash tool still can't see it, why?"
SETX_AGAIN = "remind me: why doesn't the bash tool see my setx variables?"
POSTGRES = "how do I restore the postgres backup made by pg_dump on anvil?"
SETX_SLUG = "env_bash_tool_env_var_caching"


# --------------------------------------------------------------------------- one prompt, one compaction, forgetting


def test_session_step_records_what_was_sent_and_nothing_when_silent():
    settings = dict(default_settings(), lines_per_injection=2, line_evidence_share=0)
    record = new_record("s1", ["/x", 1, 2])
    plan, record2 = session.session_step(record, DECISION, "setx bash", settings, now=100.0)
    assert len(plan["lines"]) == 2 and len(record2["held"]) == 2 and record2["updated"] == 100.0
    assert record2["pending"] == []
    # the repeat sends nothing, and notes what it relied on the session holding
    plan, record3 = session.session_step(record2, DECISION, "setx bash", settings, now=101.0)
    assert plan["text"] is None and record3["held"] == record2["held"]
    assert [p[1] for p in record3["pending"]] == ["setx_cache", "bash_path"]
    plan, record4 = session.session_step(record3, DECISION, "setx bash", settings, now=102.0)
    assert plan["text"] is None and record4 is None


def test_after_compaction_sends_what_was_relied_on_and_holds_just_that():
    record = dict(new_record("s1", ["/x", 1, 2]), held=["old|1:0:0"],
                  pending=[["c1", "a", "first"], ["c2", "b", "second"]])
    text, held = session.after_compaction(record, 9500, now=5.0, transcript="/t.jsonl", transcript_size=70)
    assert text == ("Routed memory clusters: c1, c2 (again after compaction)\n- a \u2014 first\n- b \u2014 second")
    assert parse_header(text) == ["c1", "c2"]
    assert held["held"] == [line_key("a", "first"), line_key("b", "second")]
    assert (held["after_compaction"], held["persisted"], held["transcript_size"], held["pending"]) == (True, False, 70, [])
    text, held = session.after_compaction(record, 75, now=5.0)
    assert text == "Routed memory clusters: c1, c2 (again after compaction)\n- a \u2014 first"
    assert held["held"] == [line_key("a", "first")]
    assert session.after_compaction(dict(record, pending=[]), 9500, now=5.0) == (None, None)


def test_reset_session_removes_only_that_record(tmp_path):
    for sid in ("a", "b"):
        write_record(record_path(sid, str(tmp_path)), new_record(sid, ["/x", 1, 2]))
    assert session.reset_session("a", str(tmp_path)) is True
    assert session.reset_session("a", str(tmp_path)) is False
    assert os.listdir(tmp_path) == ["b.json"]


# --------------------------------------------------------------------------- the hook, end to end


def hook_payload(prompt, session_id, transcript=None, cwd="/tmp"):
    data = {"session_id": session_id, "cwd": cwd, "permission_mode": "default",
            "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    if transcript is not None:
        data["transcript_path"] = transcript
    return json.dumps(data).encode()


@pytest.fixture
def hook(run_cli, example_cluster_file, tmp_path):
    log = tmp_path / "hook.log"

    def run(prompt, session_id, transcript=None):
        result = run_cli("hook", "--clusters", example_cluster_file,
                         input=hook_payload(prompt, session_id, transcript), env={"MEMORY_ROUTER_LOG": str(log)})
        assert result.returncode == 0 and result.stderr == b""
        if not result.stdout:
            return None
        return json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]

    run.log = log
    return run


def slugs(text):
    return [l[2:].split(" \u2014 ", 1)[0] for l in (text or "").splitlines()[1:]]


def test_a_repeat_within_a_session_injects_nothing_new(hook):
    sid = str(uuid.uuid4())
    first = hook(SETX, sid)
    assert SETX_SLUG in slugs(first)
    assert hook(SETX, sid) is None
    again = hook(SETX_AGAIN, sid)
    assert again is None or SETX_SLUG not in slugs(again)
    # another session still gets it
    assert SETX_SLUG in slugs(hook(SETX, str(uuid.uuid4())))
    # and another cluster in the same session is sent
    assert slugs(hook(POSTGRES, sid))


def test_a_compaction_in_the_transcript_resets_the_session(hook, tmp_path):
    sid = str(uuid.uuid4())
    transcript = tmp_path / f"{sid}.jsonl"
    append_entries(transcript, {"type": "user", "message": {"content": SETX}})
    assert SETX_SLUG in slugs(hook(SETX, sid, str(transcript)))
    append_entries(transcript, RECORDED)
    assert hook(SETX, sid, str(transcript)) is None
    append_entries(transcript, BOUNDARY, {"type": "user", "isCompactSummary": True, "message": {"content": "summary"}})
    assert SETX_SLUG in slugs(hook(SETX, sid, str(transcript)))
    assert "compact_boundary" in hook.log.read_text(encoding="utf-8")
    append_entries(transcript, RECORDED)
    assert hook(SETX, sid, str(transcript)) is None


def test_an_injection_the_transcript_does_not_record_is_sent_again(hook, tmp_path):
    """Clients up to 2.1.39 keep hook output out of the transcript, and so out of the history
    after --resume: until the last injection is seen recorded, the record is not trusted."""
    sid = str(uuid.uuid4())
    transcript = tmp_path / f"{sid}.jsonl"
    append_entries(transcript, {"type": "user", "message": {"content": SETX}})
    assert SETX_SLUG in slugs(hook(SETX, sid, str(transcript)))
    append_entries(transcript, {"type": "progress", "data": {"type": "hook_progress", "hookEvent": "UserPromptSubmit"}},
            {"type": "assistant", "message": {"content": [{"type": "text", "text": "ok"}]}})
    assert SETX_SLUG in slugs(hook(SETX, sid, str(transcript)))
    assert "the last injection is not in the transcript" in hook.log.read_text(encoding="utf-8")
    append_entries(transcript, RECORDED, {"type": "assistant", "message": {"content": [{"type": "text", "text": "ok"}]}})
    assert hook(SETX, sid, str(transcript)) is None
    # verified once, it stays verified while nothing new is sent
    append_entries(transcript, {"type": "user", "message": {"content": "more"}})
    assert hook(SETX, sid, str(transcript)) is None
    assert json.loads(open(record_path(sid), encoding="utf-8").read())["persisted"] is True


@pytest.mark.parametrize("damage", ["garbage", "truncated", "foreign store", "other version", "future", "directory"])
def test_a_damaged_or_foreign_record_means_inject_and_log(hook, damage):
    sid = str(uuid.uuid4())
    assert SETX_SLUG in slugs(hook(SETX, sid))
    path = record_path(sid)
    text = open(path, encoding="utf-8").read()
    record = json.loads(text)
    if damage == "garbage":
        open(path, "wb").write(b"\x00\xffnot a record")
    elif damage == "truncated":
        open(path, "w", encoding="utf-8").write(text[: len(text) // 2])
    elif damage == "foreign store":
        open(path, "w", encoding="utf-8").write(json.dumps(dict(record, store=["/elsewhere.md", 1, 1])))
    elif damage == "other version":
        open(path, "w", encoding="utf-8").write(json.dumps(dict(record, version=99)))
    elif damage == "future":
        open(path, "w", encoding="utf-8").write(json.dumps(dict(record, updated=time.time() + 86400)))
    else:
        os.unlink(path)
        os.mkdir(path)
    assert SETX_SLUG in slugs(hook(SETX, sid))
    logged = hook.log.read_text(encoding="utf-8").splitlines()
    assert sid in logged[0] and "injecting as if the session held nothing" in logged[0]
    # a directory where the record goes cannot be replaced either, and that is logged too
    assert len(logged) == (2 if damage == "directory" else 1)


def test_a_changed_store_means_inject(hook, run_cli, example_cluster_file, tmp_path):
    store = tmp_path / "clusters.md"
    store.write_bytes(example_cluster_file.read_bytes())
    sid = str(uuid.uuid4())

    def ask():
        result = run_cli("hook", "--clusters", store, input=hook_payload(SETX, sid))
        return json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"] if result.stdout else None

    assert SETX_SLUG in slugs(ask())
    assert ask() is None
    store.write_bytes(example_cluster_file.read_bytes() + b"\n")
    assert SETX_SLUG in slugs(ask())


SESSION_RUNNER = textwrap.dedent("""
    import io, json, sys
    from router.hooks.hook import run_hook
    sid, clusters = sys.argv[1], sys.argv[2]
    prompts = json.loads(sys.argv[3])
    for prompt in prompts:
        out = io.StringIO()
        payload = json.dumps({"session_id": sid, "cwd": "/tmp", "prompt": prompt}).encode()
        run_hook(["--clusters", clusters], stdin=io.BytesIO(payload), stdout=out)
        text = json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"] if out.getvalue() else ""
        print(json.dumps(text))
""")


def test_concurrent_sessions_do_not_mix_records(example_cluster_file):
    prompts = [SETX, POSTGRES, SETX, POSTGRES] * 3
    sids = [str(uuid.uuid4()) for _ in range(6)]
    children = [subprocess.Popen([sys.executable, "-c", SESSION_RUNNER, sid, str(example_cluster_file),
                                  json.dumps(prompts)], stdout=subprocess.PIPE) for sid in sids]
    outputs = [child.communicate(timeout=120)[0].decode().splitlines() for child in children]
    assert all(child.returncode == 0 for child in children)
    for sid, lines in zip(sids, outputs):
        texts = [json.loads(l) for l in lines]
        # every session got each fact once, on its own first asking, and nothing after
        assert SETX_SLUG in slugs(texts[0]) and slugs(texts[1])
        assert all(t == "" for t in texts[2:]), texts
        record = json.loads(open(record_path(sid), encoding="utf-8").read())
        assert record["session_id"] == sid
        assert len(record["held"]) == len(slugs(texts[0])) + len(slugs(texts[1]))


def test_no_session_id_ranks_but_remembers_nothing(hook, run_cli, example_cluster_file):
    payload = json.dumps({"cwd": "/tmp", "prompt": SETX}).encode()
    for _ in range(2):
        result = run_cli("hook", "--clusters", example_cluster_file, input=payload)
        assert SETX_SLUG in result.stdout.decode()
    assert not os.path.isdir(sessions_dir()) or os.listdir(sessions_dir()) == []


def test_an_unwritable_cache_still_injects(hook, monkeypatch, tmp_path):
    blocker = tmp_path / "blocked"
    blocker.write_text("a file where the cache dir should be")
    monkeypatch.setenv("MEMORY_ROUTER_CACHE_DIR", str(blocker))
    sid = str(uuid.uuid4())
    assert SETX_SLUG in slugs(hook(SETX, sid))
    assert SETX_SLUG in slugs(hook(SETX, sid))
    assert "record not written" in hook.log.read_text(encoding="utf-8")


def test_fresh_applies_the_default_limit_and_leaves_silence_alone(example_cluster_file):
    from router.store.clusterfile import load_cluster_file

    table = build_table(load_cluster_file(str(example_cluster_file)))
    settings = default_settings()
    routed = session.route_fresh(SETX, table, settings)
    assert 1 <= len(routed["lines"]) <= settings["lines_per_injection"] < routed["total_member_lines"]
    assert SETX_SLUG in [l["slug"] for l in routed["lines"]]
    assert routed["left_out_lines"] == routed["total_member_lines"] - len(routed["lines"])
    # (not "rename this variable ...": the shipped utterances now route that to the store's naming rule)
    quiet = session.route_fresh("indent this block with four spaces", table, settings)
    assert quiet["additional_context"] is None and quiet["lines"] == [] and quiet["routed"] == []


def test_after_a_compaction_what_session_start_sent_again_stays_held(hook, run_cli, tmp_path):
    """The 2.1.328 order, seen in the lab: the SessionStart hook runs before the client writes the
    compaction's boundary line; the next prompts must not take that boundary for a new compaction."""
    sid = str(uuid.uuid4())
    transcript = tmp_path / f"{sid}.jsonl"
    append_entries(transcript, {"type": "user", "message": {"content": SETX}})
    assert SETX_SLUG in slugs(hook(SETX, sid, str(transcript)))
    append_entries(transcript, RECORDED)
    assert hook(SETX, sid, str(transcript)) is None
    start = json.dumps({"session_id": sid, "transcript_path": str(transcript), "hook_event_name": "SessionStart",
                        "source": "compact"}).encode()
    out = run_cli("session-start", input=start)
    assert SETX_SLUG in json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    append_entries(transcript, BOUNDARY, RECORDED)
    assert hook(SETX_AGAIN, sid, str(transcript)) is None
    append_entries(transcript, {"type": "assistant", "message": {"content": [{"type": "text", "text": "ok"}]}})
    assert SETX_SLUG not in slugs(hook(POSTGRES, sid, str(transcript)))
    append_entries(transcript, RECORDED)
    assert hook(SETX, sid, str(transcript)) is None
    assert not hook.log.exists(), hook.log.read_text(encoding="utf-8")
    # a second compaction, with no SessionStart hook to say so, is seen
    append_entries(transcript, BOUNDARY)
    assert SETX_SLUG in slugs(hook(SETX, sid, str(transcript)))


def test_lines_the_scorers_size_cap_cut_keep_their_reason_in_the_header():
    """The scorer's own size cap (max_context_chars) cut member lines before this stage ran: the
    header this stage writes must still say that the size cap left lines out."""
    from router.store.clusterfile import Cluster, ClusterIndex, Member

    members = tuple(Member(f"wide_fact_{i}", "project", f"setx detail {i} " + "lorem ipsum " * 70, i)
                    for i in range(6))
    table = build_table(ClusterIndex([Cluster("wide", 6, False, ("setx", "bash"), "wide", members, 0)]))
    settings = dict(default_settings(), provider="spec", max_context_chars=2000)
    decision = route_prompt(SETX, table, settings)
    assert 0 < len(decision["lines"]) < decision["total_member_lines"] == 6
    assert "size cap" in decision["additional_context"].splitlines()[0]
    routed = session.route_fresh(SETX, table, settings)
    header = routed["additional_context"].splitlines()[0]
    assert header.endswith(f"({6 - len(routed['lines'])} more not shown, size cap)"), header
