"""Stream assembly for the audit stays bounded in the file's size (issue 11): many prompts
re-injecting the same few texts keep a constant amount of state per text, a bounded list of
prompts, notes and evidence, and exact counts of everything not listed."""

from transcripts.audit import FAIL, PASS, audit_session, result_to_dict
from transcripts.auditmodel import (
    LIVE_PROMPTS, MAX_EVIDENCE, MAX_LISTED_PROMPTS, MAX_NOTES, SEARCHED_KINDS, TURN_ADVANCING,
)
from transcripts.reader import read_session
from transcripts.streams import Session

PROMPTS = MAX_LISTED_PROMPTS + 500   # past every bound


def repeated_session(session, bodies, prompts=PROMPTS, resend_every=0):
    """``prompts`` prompts, each injecting one of two texts; with ``resend_every``, every n-th turn
    also repeats its injection in a tool result (a re-send).

    The texts are another hook's (the router's header taken off): since issue 13 a router member
    line injected again in one context is itself a re-send, while another hook's text may repeat
    for each new prompt, which is the growth these bounds are about."""
    s = session()
    texts = [body.split("\n", 1)[1] for body in (bodies["setx"], bodies["cloudflare"])]
    for i in range(prompts):
        s.prompt(f"question {i} about setx and cloudflare")
        s.injection(texts[i % 2])
        if resend_every and i % resend_every == 0:
            s.tool_call("Bash", {"command": "cat context"}, texts[i % 2])
        s.assistant(f"answer {i}")
    return s


def audit_state(entries):
    session = Session(None)
    auditor = None
    for entry in entries:
        auditor = auditor or session.auditor(entry)
        auditor.feed(entry, session)
    return auditor


def test_repeated_injections_keep_constant_state_per_text(session, bodies, tmp_path):
    path = repeated_session(session, bodies).write(tmp_path / "repeated.jsonl")
    auditor = audit_state(read_session(path))
    assert auditor.injection_count == auditor.prompt_count == PROMPTS
    assert len(auditor.injected) == 2                     # one record per distinct text
    assert all(len(record.by_prompt) <= 16 for record in auditor.injected.values())
    assert len(auditor.live) <= LIVE_PROMPTS and len(auditor.prompt_by_uuid) <= LIVE_PROMPTS
    # "the same text injected again for a new prompt: allowed" was a note per re-injection
    assert len(auditor.notes) == MAX_NOTES and auditor.notes.total == PROMPTS - 2


def test_repeated_injections_pass_with_exact_counts_and_bounded_lists(session, bodies, tmp_path):
    path = repeated_session(session, bodies).write(tmp_path / "repeated.jsonl")
    result = audit_session(read_session(path), path=path)
    stream = result.stream()
    assert result.status == PASS
    assert stream.prompt_count == PROMPTS and stream.injection_count == PROMPTS
    assert len(stream.prompts) == MAX_LISTED_PROMPTS and stream.prompts_not_listed == 500
    assert [p.line for p in stream.prompts] == sorted(p.line for p in stream.prompts)  # the first ones, in order
    assert all(len(p.injections) == 1 for p in stream.prompts)
    assert len(stream.notes) == MAX_NOTES + 1 and "more notes like these are not listed" in stream.notes[-1]
    assert f"{PROMPTS} injection(s) on {PROMPTS} prompt(s)" in stream.check("b").message
    data = result_to_dict(result)["streams"][0]
    assert (data["prompt_count"], data["injection_count"], data["prompts_not_listed"]) == (PROMPTS, PROMPTS, 500)


def test_re_sends_past_the_evidence_bound_are_all_counted(session, bodies, tmp_path):
    resends = MAX_EVIDENCE + 50
    path = repeated_session(session, bodies, prompts=resends, resend_every=1).write(tmp_path / "resent.jsonl")
    check = audit_session(read_session(path)).check("b")
    assert check.status == FAIL and len(check.evidence) == MAX_EVIDENCE
    assert f"(the first {MAX_EVIDENCE} of {resends:,} listed)" in check.message


def test_duplicates_past_the_evidence_bound_are_all_counted(session, bodies, tmp_path):
    s = session()
    s.prompt("setx?")
    for _ in range(MAX_EVIDENCE + 10):
        s.injection(bodies["setx"])
    check = audit_session(read_session(s.write(tmp_path / "dup.jsonl"))).check("a")
    assert check.status == FAIL and len(check.evidence) == MAX_EVIDENCE
    assert check.message.startswith(f"{MAX_EVIDENCE + 10 - 1:,} attachment entries repeat an injection")


def test_a_prompt_out_of_the_live_window_no_longer_anchors_an_injection(session, bodies, tmp_path):
    s = session()
    s.prompt("first question about setx")
    first = s.last_uuid
    for i in range(LIVE_PROMPTS + 5):
        s.prompt(f"later question {i}")
        s.assistant("ok")
    s.injection(bodies["setx"], parent=first)   # hangs off a prompt long gone by
    result = audit_session(read_session(s.write(tmp_path / "late.jsonl")))
    assert result.check("b").status == FAIL and result.stream().unanchored_count == 1


def test_every_turn_advancing_kind_is_searched():
    """StreamAuditor.feed searches a turn-advancing line without asking SEARCHED_KINDS."""
    assert TURN_ADVANCING <= SEARCHED_KINDS
