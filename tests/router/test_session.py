"""Session de-duplication and line selection (router/session.py): the pure stage, the record's
checks and I/O, and the hook driven as Claude Code drives it (the installed console script)."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid

import pytest

from router import session
from router.config import default_settings
from router.provider import build_table
from router.score import build_routing_table, parse_header, route_prompt

SETX = "I set an env var with setx but the Bash tool still can't see it, why?"
SETX_AGAIN = "remind me: why doesn't the bash tool see my setx variables?"
POSTGRES = "how do I restore the postgres backup made by pg_dump on anvil?"
SETX_SLUG = "env_bash_tool_env_var_caching"


def line(slug, hook, cluster="c1"):
    return {"cluster_id": cluster, "slug": slug, "hook": hook}


DECISION = {
    "routed": ["c1"],
    "total_member_lines": 5,
    "lines": [
        line("alpha_notes", "general notes about the project layout"),
        line("setx_cache", "setx variables are invisible to the bash tool until a new terminal"),
        line("bash_path", "the bash tool path differs from the user's terminal"),
        line("deploy_steps", "deploy with wrangler after the d1 migration"),
        line("misc", "other things"),
    ],
}


# --------------------------------------------------------------------------- pure: ranking and plans


def test_rank_lines_puts_the_line_the_prompt_names_first():
    ranked = session.rank_lines({"setx", "bash", "tool", "variable"}, DECISION["lines"])
    assert [row[2]["slug"] for row in ranked][:2] == ["setx_cache", "bash_path"]
    # ties (no evidence) keep the decision's order
    assert [row[2]["slug"] for row in ranked][2:] == ["alpha_notes", "deploy_steps", "misc"]


def test_rank_lines_weighs_a_word_every_line_shares_less():
    lines = [line("a", "bash one"), line("b", "bash two"), line("c", "bash three zeta")]
    ranked = session.rank_lines({"bash", "zeta"}, lines)
    assert ranked[0][2]["slug"] == "c"
    assert ranked[0][0] == pytest.approx(1 / 3 + 1)


@pytest.mark.parametrize("limit,expected", [
    (0, ["alpha_notes", "setx_cache", "bash_path", "deploy_steps", "misc"]),
    (2, ["setx_cache", "bash_path"]),
    (1, ["setx_cache"]),
])
def test_plan_keeps_the_best_lines_in_the_decisions_order(limit, expected):
    settings = dict(default_settings(), lines_per_injection=limit, line_evidence_share=0)
    plan = session.plan_injection(DECISION, "setx variable not seen by the bash tool", settings)
    assert [l["slug"] for l in plan["lines"]] == expected
    assert plan["left_out"] == 5 - len(expected)
    header = plan["text"].splitlines()[0]
    assert parse_header(plan["text"]) == ["c1"]
    if limit:
        assert f"({5 - len(expected)} more not shown)" in header
    else:
        assert "not shown" not in header


@pytest.mark.parametrize("share,expected", [
    (0, ["alpha_notes", "setx_cache", "bash_path", "deploy_steps", "misc"]),
    (0.3, ["setx_cache", "bash_path"]),
    (0.5, ["setx_cache"]),
])
def test_plan_sends_only_lines_near_the_best_ones_evidence(share, expected):
    settings = dict(default_settings(), lines_per_injection=0, line_evidence_share=share)
    # setx_cache holds setx, variable, bash, tool (evidence 1/1 + 1/1 + 1/2 + 1/2 = 3);
    # bash_path holds bash, tool (1/2 + 1/2 = 1): a third of the best
    plan = session.plan_injection(DECISION, "setx variable not seen by the bash tool", settings)
    assert [l["slug"] for l in plan["lines"]] == expected


def test_a_prompt_with_no_member_word_keeps_the_first_lines():
    settings = dict(default_settings(), lines_per_injection=2, line_evidence_share=0.5)
    plan = session.plan_injection(DECISION, "zzz qqq", settings)
    assert [l["slug"] for l in plan["lines"]] == ["alpha_notes", "setx_cache"]


def test_plan_sends_only_lines_the_session_does_not_hold():
    settings = dict(default_settings(), lines_per_injection=2, line_evidence_share=0)
    held = frozenset({session.line_key("setx_cache", DECISION["lines"][1]["hook"])})
    plan = session.plan_injection(DECISION, "setx variable not seen by the bash tool", settings, held)
    assert [l["slug"] for l in plan["lines"]] == ["bash_path"]
    assert [l["slug"] for l in plan["held"]] == ["setx_cache"]
    assert plan["text"].splitlines()[0] == "Routed memory cluster: c1 (3 more not shown; 1 sent earlier)"


def test_plan_sends_nothing_when_every_chosen_line_is_held():
    settings = dict(default_settings(), lines_per_injection=2, line_evidence_share=0)
    held = frozenset(session.line_key(l["slug"], l["hook"]) for l in DECISION["lines"][1:3])
    plan = session.plan_injection(DECISION, "setx variable not seen by the bash tool", settings, held)
    assert plan["text"] is None and plan["lines"] == []
    assert len(plan["held"]) == 2


def test_an_edited_line_is_a_new_line():
    settings = default_settings()
    held = frozenset({session.line_key("setx_cache", "an older wording of the fact")})
    plan = session.plan_injection(DECISION, "setx", settings, held)
    assert "setx_cache" in [l["slug"] for l in plan["lines"]]


def test_render_drops_lines_to_fit_and_says_so():
    lines = [line(f"s{i}", "x" * 200) for i in range(10)]
    text, kept = session.render_injection(["c1"], lines, 0, 10, 1000)
    assert len(text) <= 1000 and 0 < len(kept) < 10
    assert text.splitlines()[0].endswith(f"({10 - len(kept)} more not shown, size cap)")


def test_session_step_records_what_was_sent_and_nothing_when_silent():
    settings = dict(default_settings(), lines_per_injection=2, line_evidence_share=0)
    record = session.new_record("s1", ["/x", 1, 2])
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
    record = dict(session.new_record("s1", ["/x", 1, 2]), held=["old|1:0:0"],
                  pending=[["c1", "a", "first"], ["c2", "b", "second"]])
    text, held = session.after_compaction(record, 9500, now=5.0, transcript="/t.jsonl", transcript_size=70)
    assert text == ("Routed memory clusters: c1, c2 (again after compaction)\n- a \u2014 first\n- b \u2014 second")
    assert parse_header(text) == ["c1", "c2"]
    assert held["held"] == [session.line_key("a", "first"), session.line_key("b", "second")]
    assert (held["after_compaction"], held["persisted"], held["transcript_size"], held["pending"]) == (True, False, 70, [])
    text, held = session.after_compaction(record, 75, now=5.0)
    assert text == "Routed memory clusters: c1, c2 (again after compaction)\n- a \u2014 first"
    assert held["held"] == [session.line_key("a", "first")]
    assert session.after_compaction(dict(record, pending=[]), 9500, now=5.0) == (None, None)


def test_record_keeps_only_the_newest_lines_past_its_bound(monkeypatch):
    monkeypatch.setattr(session, "MAX_HELD_LINES", 3)
    record = session.new_record("s1", ["/x", 1, 2])
    record = session.record_injection(record, [line(f"s{i}", "h") for i in range(5)], now=1.0)
    assert record["held"] == [session.line_key(f"s{i}", "h") for i in (2, 3, 4)]


# --------------------------------------------------------------------------- the record's checks

STORE = ["/store/clusters.md", 100, 5]
GOOD = {"version": 1, "session_id": "s1", "store": STORE, "updated": 1000.0, "transcript": None,
        "transcript_size": 0, "persisted": False, "after_compaction": False, "held": ["a|1:0:0"],
        "pending": [["c1", "a", "hook"]]}


@pytest.mark.parametrize("change,why", [
    ({"version": 2}, "version"),
    ({"session_id": "s2"}, "another session"),
    ({"store": ["/other/clusters.md", 100, 5]}, "another cluster file"),
    ({"store": ["/store/clusters.md", 101, 5]}, "another cluster file"),
    ({"held": "a"}, "damaged"),
    ({"held": [1]}, "damaged"),
    ({"updated": "yesterday"}, "no valid time"),
    ({"updated": 1000.0 + 3600}, "future"),
    ({"transcript_size": -1}, "transcript position"),
    ({"transcript": 5}, "transcript position"),
    ({"persisted": None}, "transcript position"),
    ({"after_compaction": 1}, "transcript position"),
    ({"pending": [["c1", "a"]]}, "pending lines are damaged"),
    ({"pending": "x"}, "pending lines are damaged"),
])
def test_a_record_in_doubt_is_not_trusted(change, why):
    record, reason = session.check_record(dict(GOOD, **change), "s1", STORE, now=1000.0)
    assert record is None and why in reason


def test_a_good_record_is_trusted():
    assert session.check_record(dict(GOOD), "s1", STORE, now=1000.0) == (GOOD, None)
    assert session.check_record([GOOD], "s1", STORE, now=1000.0)[0] is None


@pytest.mark.parametrize("content,why", [
    (b"{not json", "damaged"),
    (b"\xff\xfe", "damaged"),
    (b" " * (session.MAX_RECORD_BYTES + 1), "over"),
])
def test_read_record_refuses_what_it_cannot_trust(tmp_path, content, why):
    path = tmp_path / "r.json"
    path.write_bytes(content)
    data, reason = session.read_record(str(path))
    assert data is None and why in reason


def test_read_record_of_a_missing_file_is_no_record(tmp_path):
    assert session.read_record(str(tmp_path / "none.json")) == (None, None)


def test_read_record_refuses_a_directory(tmp_path):
    (tmp_path / "d.json").mkdir()
    data, reason = session.read_record(str(tmp_path / "d.json"))
    assert data is None and reason


@pytest.mark.parametrize("session_id", ["../../etc/passwd", ".hidden", "a/b", "", "x" * 200, "\u00e9t\u00e9"])
def test_record_path_stays_in_the_sessions_dir(tmp_path, session_id):
    path = session.record_path(session_id, str(tmp_path))
    assert os.path.dirname(path) == str(tmp_path) and not os.path.basename(path).startswith(".")


def test_record_path_keeps_a_uuid():
    sid = str(uuid.uuid4())
    assert os.path.basename(session.record_path(sid, "/d")) == sid + ".json"


# --------------------------------------------------------------------------- writes, prune, crash


def test_write_record_replaces_atomically_and_leaves_no_temp(tmp_path):
    path = str(tmp_path / "s" / "a.json")
    assert session.write_record(path, dict(GOOD))
    assert json.loads(open(path, encoding="utf-8").read()) == GOOD
    assert os.listdir(tmp_path / "s") == ["a.json"]


def test_a_failed_rename_leaves_the_old_record(tmp_path, monkeypatch):
    path = str(tmp_path / "a.json")
    session.write_record(path, dict(GOOD))

    def broken(src, dst):
        raise OSError("disk gone")

    monkeypatch.setattr(session.os, "replace", broken)
    with pytest.raises(OSError):
        session.write_record(path, dict(GOOD, held=["new|1:0:0"]))
    assert json.loads(open(path, encoding="utf-8").read()) == GOOD
    assert os.listdir(tmp_path) == ["a.json"]


CRASH_WRITER = textwrap.dedent("""
    import sys
    from router import session
    path = sys.argv[1]
    records = [dict(session.new_record("s", ["/x", 1, 2]), held=[f"{tag}{i}|1:0:0" for i in range(3000)])
               for tag in ("old", "new")]
    n = 0
    print("ready", flush=True)
    while True:
        session.write_record(path, records[n % 2])
        n += 1
""")


def test_a_crash_mid_write_leaves_the_old_record_or_the_new(tmp_path):
    path = str(tmp_path / "r.json")
    for attempt in range(5):
        child = subprocess.Popen([sys.executable, "-c", CRASH_WRITER, path], stdout=subprocess.PIPE)
        assert child.stdout.readline() == b"ready\n"
        time.sleep(0.05 + 0.03 * attempt)
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
        data, why = session.read_record(path)
        assert why is None, why
        assert data["held"][0] in ("old0|1:0:0", "new0|1:0:0") and len(data["held"]) == 3000


def test_prune_keeps_the_newest_records_and_drops_old_ones_and_stale_temps(tmp_path):
    now = time.time()
    for i in range(6):
        target = tmp_path / f"s{i}.json"
        target.write_text("{}")
        os.utime(target, (now - 100 + i, now - 100 + i))
    ancient = tmp_path / "ancient.json"
    ancient.write_text("{}")
    os.utime(ancient, (now - 30 * 86400,) * 2)
    temp = tmp_path / "s9.json.1.2.tmp"
    temp.write_text("")
    os.utime(temp, (now - 3600,) * 2)
    keep = tmp_path / "current.json"
    keep.write_text("{}")
    session.prune_sessions(str(tmp_path), keep=str(keep), now=now, max_sessions=4)
    assert sorted(os.listdir(tmp_path)) == ["current.json", "s3.json", "s4.json", "s5.json"]


def test_reset_session_removes_only_that_record(tmp_path):
    for sid in ("a", "b"):
        session.write_record(session.record_path(sid, str(tmp_path)), dict(GOOD, session_id=sid))
    assert session.reset_session("a", str(tmp_path)) is True
    assert session.reset_session("a", str(tmp_path)) is False
    assert os.listdir(tmp_path) == ["b.json"]


# --------------------------------------------------------------------------- the transcript fallback

BOUNDARY = {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
            "compactMetadata": {"trigger": "manual", "preTokens": 1234}}


def _append(path, *entries):
    with open(path, "a", encoding="utf-8") as handle:
        for entry in entries:
            handle.write(json.dumps(entry) + "\n")


RECORDED = {"type": "attachment", "attachment": {"type": "hook_additional_context", "content": ["x"],
                                                 "hookName": "UserPromptSubmit", "hookEvent": "UserPromptSubmit"}}


def test_scan_transcript_sees_a_boundary_after_the_offset_only(tmp_path):
    path = tmp_path / "t.jsonl"
    _append(path, {"type": "user", "message": {"content": "hi"}}, BOUNDARY)
    offset = path.stat().st_size
    assert session.scan_transcript(str(path), offset)[0] is None
    _append(path, {"type": "user", "message": {"content": "talking about compact_boundary entries"}})
    assert session.scan_transcript(str(path), offset)[0] is None
    _append(path, {"type": "user", "message": {"content": "x" * 600_000}}, BOUNDARY,
            {"type": "user", "message": {"content": "y" * 600_000}})
    why, size, _recorded = session.scan_transcript(str(path), offset)
    assert "compact_boundary" in why and size == path.stat().st_size


def test_scan_transcript_allows_the_boundary_of_the_compaction_that_wrote_the_record(tmp_path):
    path = tmp_path / "t.jsonl"
    _append(path, RECORDED)
    offset = path.stat().st_size
    _append(path, BOUNDARY, {"type": "user", "message": {"content": "z" * 300_000}})
    assert session.scan_transcript(str(path), offset)[0] is not None
    assert session.scan_transcript(str(path), offset, boundaries_allowed=1)[0] is None
    _append(path, BOUNDARY)
    assert "compact_boundary" in session.scan_transcript(str(path), offset, boundaries_allowed=1)[0]


def test_a_boundary_on_a_read_edge_is_counted_once(tmp_path, monkeypatch):
    monkeypatch.setattr(session, "_SCAN_CHUNK", 64)
    path = tmp_path / "t.jsonl"
    line = (json.dumps(BOUNDARY) + "\n").encode()
    # each read of 64 bytes: some start exactly at a line's start, some inside one
    path.write_bytes(b"".join([line, (json.dumps({"type": "user", "message": {"content": "x" * 50}}) + "\n").encode()]))
    assert session.scan_transcript(str(path), 0, boundaries_allowed=1)[0] is None
    path.write_bytes(line * 2)
    assert session.scan_transcript(str(path), 0, boundaries_allowed=1)[0] is not None
    padded = b"{}\n" * 3 + line
    path.write_bytes(padded)
    assert session.scan_transcript(str(path), 0, boundaries_allowed=0)[0] is not None
    assert session.scan_transcript(str(path), 0, boundaries_allowed=1)[0] is None


def test_scan_transcript_says_whether_an_injection_was_recorded_since_the_offset(tmp_path):
    path = tmp_path / "t.jsonl"
    _append(path, RECORDED)
    offset = path.stat().st_size
    _append(path, {"type": "user", "message": {"content": "a prompt naming hook_additional_context"}})
    assert session.scan_transcript(str(path), offset) == (None, path.stat().st_size, False)
    # far behind the end, across the read chunks
    _append(path, RECORDED, {"type": "user", "message": {"content": "z" * 700_000}})
    assert session.scan_transcript(str(path), offset) == (None, path.stat().st_size, True)


@pytest.mark.parametrize("setup,why", [
    ("shrank", "shrank"),
    ("too much", "over the"),
    ("gone", "gone"),
])
def test_scan_transcript_doubts_when_it_cannot_tell(tmp_path, setup, why):
    path = tmp_path / "t.jsonl"
    _append(path, {"type": "user", "message": {"content": "z" * 5000}})
    offset = 100
    limit = session.TRANSCRIPT_SCAN_BYTES
    if setup == "shrank":
        offset = path.stat().st_size + 10
    elif setup == "too much":
        limit = 1000
    else:
        path.unlink()
    reason, _size, _recorded = session.scan_transcript(str(path), offset, limit)
    assert why in reason


def test_a_missing_transcript_at_offset_zero_is_no_doubt(tmp_path):
    assert session.scan_transcript(str(tmp_path / "later.jsonl"), 0) == (None, 0, False)


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
    _append(transcript, {"type": "user", "message": {"content": SETX}})
    assert SETX_SLUG in slugs(hook(SETX, sid, str(transcript)))
    _append(transcript, RECORDED)
    assert hook(SETX, sid, str(transcript)) is None
    _append(transcript, BOUNDARY, {"type": "user", "isCompactSummary": True, "message": {"content": "summary"}})
    assert SETX_SLUG in slugs(hook(SETX, sid, str(transcript)))
    assert "compact_boundary" in hook.log.read_text(encoding="utf-8")
    _append(transcript, RECORDED)
    assert hook(SETX, sid, str(transcript)) is None


def test_an_injection_the_transcript_does_not_record_is_sent_again(hook, tmp_path):
    """Clients up to 2.1.39 keep hook output out of the transcript, and so out of the history
    after --resume: until the last injection is seen recorded, the record is not trusted."""
    sid = str(uuid.uuid4())
    transcript = tmp_path / f"{sid}.jsonl"
    _append(transcript, {"type": "user", "message": {"content": SETX}})
    assert SETX_SLUG in slugs(hook(SETX, sid, str(transcript)))
    _append(transcript, {"type": "progress", "data": {"type": "hook_progress", "hookEvent": "UserPromptSubmit"}},
            {"type": "assistant", "message": {"content": [{"type": "text", "text": "ok"}]}})
    assert SETX_SLUG in slugs(hook(SETX, sid, str(transcript)))
    assert "the last injection is not in the transcript" in hook.log.read_text(encoding="utf-8")
    _append(transcript, RECORDED, {"type": "assistant", "message": {"content": [{"type": "text", "text": "ok"}]}})
    assert hook(SETX, sid, str(transcript)) is None
    # verified once, it stays verified while nothing new is sent
    _append(transcript, {"type": "user", "message": {"content": "more"}})
    assert hook(SETX, sid, str(transcript)) is None
    assert json.loads(open(session.record_path(sid), encoding="utf-8").read())["persisted"] is True


@pytest.mark.parametrize("damage", ["garbage", "truncated", "foreign store", "other version", "future", "directory"])
def test_a_damaged_or_foreign_record_means_inject_and_log(hook, damage):
    sid = str(uuid.uuid4())
    assert SETX_SLUG in slugs(hook(SETX, sid))
    path = session.record_path(sid)
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
    from router.hook import run_hook
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
        record = json.loads(open(session.record_path(sid), encoding="utf-8").read())
        assert record["session_id"] == sid
        assert len(record["held"]) == len(slugs(texts[0])) + len(slugs(texts[1]))


def test_no_session_id_ranks_but_remembers_nothing(hook, run_cli, example_cluster_file):
    payload = json.dumps({"cwd": "/tmp", "prompt": SETX}).encode()
    for _ in range(2):
        result = run_cli("hook", "--clusters", example_cluster_file, input=payload)
        assert SETX_SLUG in result.stdout.decode()
    assert not os.path.isdir(session.sessions_dir()) or os.listdir(session.sessions_dir()) == []


def test_an_unwritable_cache_still_injects(hook, monkeypatch, tmp_path):
    blocker = tmp_path / "blocked"
    blocker.write_text("a file where the cache dir should be")
    monkeypatch.setenv("MEMORY_ROUTER_CACHE_DIR", str(blocker))
    sid = str(uuid.uuid4())
    assert SETX_SLUG in slugs(hook(SETX, sid))
    assert SETX_SLUG in slugs(hook(SETX, sid))
    assert "record not written" in hook.log.read_text(encoding="utf-8")


def test_the_stage_never_changes_which_clusters_are_routed(example_cluster_file):
    from router.clusterfile import load_cluster_file

    table = build_table(load_cluster_file(str(example_cluster_file)))
    settings = dict(default_settings(), lines_per_injection=2)
    decision = route_prompt(SETX, table, settings)
    plan = session.plan_injection(decision, SETX, settings)
    assert plan["clusters"] == decision["routed"] and parse_header(plan["text"]) == decision["routed"]


def test_fresh_applies_the_default_limit_and_leaves_silence_alone(example_cluster_file):
    from router.clusterfile import load_cluster_file

    table = build_table(load_cluster_file(str(example_cluster_file)))
    settings = default_settings()
    routed = session.route_fresh(SETX, table, settings)
    assert 1 <= len(routed["lines"]) <= settings["lines_per_injection"] < routed["total_member_lines"]
    assert SETX_SLUG in [l["slug"] for l in routed["lines"]]
    assert routed["left_out_lines"] == routed["total_member_lines"] - len(routed["lines"])
    quiet = session.route_fresh("rename this variable to something clearer", table, settings)
    assert quiet["additional_context"] is None and quiet["lines"] == [] and quiet["routed"] == []


def test_after_a_compaction_what_session_start_sent_again_stays_held(hook, run_cli, tmp_path):
    """The 2.1.328 order, seen in the lab: the SessionStart hook runs before the client writes the
    compaction's boundary line; the next prompts must not take that boundary for a new compaction."""
    sid = str(uuid.uuid4())
    transcript = tmp_path / f"{sid}.jsonl"
    _append(transcript, {"type": "user", "message": {"content": SETX}})
    assert SETX_SLUG in slugs(hook(SETX, sid, str(transcript)))
    _append(transcript, RECORDED)
    assert hook(SETX, sid, str(transcript)) is None
    start = json.dumps({"session_id": sid, "transcript_path": str(transcript), "hook_event_name": "SessionStart",
                        "source": "compact"}).encode()
    out = run_cli("session-start", input=start)
    assert SETX_SLUG in json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    _append(transcript, BOUNDARY, RECORDED)
    assert hook(SETX_AGAIN, sid, str(transcript)) is None
    _append(transcript, {"type": "assistant", "message": {"content": [{"type": "text", "text": "ok"}]}})
    assert SETX_SLUG not in slugs(hook(POSTGRES, sid, str(transcript)))
    _append(transcript, RECORDED)
    assert hook(SETX, sid, str(transcript)) is None
    assert not hook.log.exists(), hook.log.read_text(encoding="utf-8")
    # a second compaction, with no SessionStart hook to say so, is seen
    _append(transcript, BOUNDARY)
    assert SETX_SLUG in slugs(hook(SETX, sid, str(transcript)))


def test_lines_the_scorers_size_cap_cut_keep_their_reason_in_the_header():
    """The scorer's own size cap (max_context_chars) cut member lines before this stage ran: the
    header this stage writes must still say that the size cap left lines out."""
    from router.clusterfile import Cluster, ClusterIndex, Member

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
