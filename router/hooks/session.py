"""The session stage: the step after the routing decision that decides what this session is
sent now, given what it already holds (issue 13).

Claude Code re-sends every earlier hook context on every later call until the context is
compacted or cleared, so a member line injected once is in front of the model for the rest of
that context. For each prompt (``session_step``) this stage picks the lines the prompt needs
(``router.routing.injection``), sends those the session does not hold yet, and remembers what was sent
in the session's record (``router.hooks.sessionrecord``).

The record is forgotten when the context forgets: the SessionStart hook (``reset_session``,
source ``compact`` or ``clear``) deletes it, and, as a fallback, the UserPromptSubmit hook looks
for a ``compact_boundary`` entry written to the transcript after its last recorded injection
(``router.store.transcriptscan``). The same read checks that the last injection was recorded in the
transcript: the record's claim is trusted only once that line is seen.

Fail towards the fact: a record that cannot be trusted, or a transcript that shrank, could not be
scanned in full, shows a compaction or does not show the last injection, all mean "this session
holds nothing": every chosen line is injected and the reason is logged.

Standard library only, plain dicts and tuples: this is on the hook's path.
"""

import os
import time

from router.removal import remove_owned
from router.routing.injection import plan_injection
from router.routing.score import HEADER_PLURAL, HEADER_SINGLE
from router.hooks.sessionrecord import (
    MAX_PENDING_LINES,
    check_record,
    new_record,
    read_record,
    record_injection,
    record_path,
    store_identity,
    write_record,
)
from router.store.transcriptscan import scan_transcript, transcript_size

# A prompt that sends nothing still moves the record's transcript position past a stretch this
# long that it scanned clean, so a long run of held-only prompts never outgrows the scan.
ADVANCE_BYTES = 512 * 1024


# --------------------------------------------------------------------------- a new session


def applied(decision, plan):
    """``decision`` with its lines and text replaced by what ``plan`` sends (for the canaries and
    ``route --json``); ``routed`` and the scores are the routing decision's, unchanged."""
    out = dict(decision)
    out["lines"] = [{"cluster_id": l["cluster_id"], "slug": l["slug"], "hook": l["hook"]} for l in plan["lines"]]
    out["additional_context"] = plan["text"]
    out["held_lines"] = [{"cluster_id": l["cluster_id"], "slug": l["slug"]} for l in plan["held"]]
    out["left_out_lines"] = plan["left_out"]
    return out


def fresh(decision, prompt, settings):
    """What a session that holds nothing yet is sent for ``prompt``: ``decision`` after the line
    selection (``route``, the canaries, doctor and the token report show this)."""
    if decision.get("additional_context") is None:
        return applied(decision, {"lines": [], "text": None, "held": [], "left_out": 0})
    return applied(decision, plan_injection(decision, prompt, settings))


def route_fresh(prompt, table, settings, **route_options):
    """The configured provider's decision (``router.providers.provider.route``, given ``route_options``),
    then ``fresh``: what the hook sends this prompt in a new session."""
    from router.providers.provider import route

    return fresh(route(prompt, table, settings, **route_options), prompt, settings)


# --------------------------------------------------------------------------- one prompt, one compaction


def session_step(record, decision, prompt, settings, now, transcript=None, transcript_size=0):
    """One prompt of one session: ``(plan, new record or None if unchanged)``. The hook and the
    canary simulation both call this, so they cannot disagree about what a session holds.

    The record also keeps, as ``pending``, the lines this prompt needed that the session already
    held: Claude Code runs UserPromptSubmit *before* an automatic compaction (observed with
    2.1.328), so those lines may be summarised away under the prompt that relied on them; the
    SessionStart hook (``after_compaction``) sends them again."""
    plan = plan_injection(decision, prompt, settings, frozenset(record["held"]))
    pending = [[line["cluster_id"], line["slug"], line["hook"]] for line in plan["held"]][:MAX_PENDING_LINES]
    if not plan["lines"]:
        if pending == record["pending"]:
            return plan, None
        return plan, dict(record, pending=pending, updated=now)
    updated = record_injection(record, plan["lines"], now, transcript, transcript_size)
    updated["pending"] = pending
    return plan, updated


def after_compaction(record, max_chars, now, transcript=None, transcript_size=0):
    """What the SessionStart hook does after a compaction, given the session's record: ``(text,
    new record or None)``. The text sends again the lines the last routed prompt relied on the
    session holding (see ``session_step``); the new record holds exactly those (a SessionStart
    context stays in the history like a prompt's, observed with 2.1.328). With nothing to send:
    ``(None, None)``, and the record is simply forgotten."""
    pending = record["pending"]
    if not pending:
        return None, None
    clusters = []
    for cluster_id, _slug, _hook in pending:
        if cluster_id not in clusters:
            clusters.append(cluster_id)
    lines = [{"cluster_id": c, "slug": s, "hook": h} for c, s, h in pending]
    header = (HEADER_PLURAL if len(clusters) > 1 else HEADER_SINGLE) + ", ".join(clusters) + " (again after compaction)"
    while lines:
        text = "\n".join([header] + [f"- {line['slug']} \u2014 {line['hook']}" for line in lines])
        if len(text) <= max_chars:
            fresh = new_record(record["session_id"], record["store"])
            return text, dict(record_injection(fresh, lines, now, transcript, transcript_size), after_compaction=True)
        lines.pop()
    return None, None


def reset_session(session_id, directory=None, log=None):
    """Forget what ``session_id`` holds (after compaction or /clear). True if a record was removed.

    A record that cannot be removed (a read-only sessions directory) is left and reported through
    ``log(message)``; never raised, so what the SessionStart hook sends again is not lost with it.
    The next prompt then finds the compaction's boundary in the transcript and drops the record."""
    path = record_path(session_id, directory)
    if path is None:
        return False
    existed = os.path.lexists(path)
    why = remove_owned(path, os.path.dirname(path))
    if why is not None:
        if log is not None:
            log(f"session {session_id}: record not removed ({why})")
        return False
    return existed


# --------------------------------------------------------------------------- the hook's stage


def hook_stage(payload, decision, prompt, settings, cluster_path, log):
    """Apply session de-duplication for one UserPromptSubmit payload; returns the plan.

    Without a ``session_id`` the lines are still ranked and limited, but nothing is remembered.
    Every doubt about the record is logged through ``log(message)`` and means "holds nothing".
    """
    session_id = payload.get("session_id")
    transcript = payload.get("transcript_path")
    transcript = transcript if isinstance(transcript, str) and transcript else None
    if not isinstance(session_id, str) or not session_id:
        return plan_injection(decision, prompt, settings)
    path = record_path(session_id)
    if path is None:
        # No cache directory (no usable HOME, no cache variable): route, record nothing.
        log(f"session {session_id}: no cache directory to keep a session record in; every prompt is sent "
            "its lines as in a new session")
        return plan_injection(decision, prompt, settings)
    now = time.time()
    store = store_identity(cluster_path)
    data, why = read_record(path)
    record = None
    if data is not None:
        record, why = check_record(data, session_id, store, now)
    changed = False
    if record is not None and record["held"] and transcript is not None:
        if record["transcript"] not in (None, transcript):
            record, why = None, "transcript path changed"
        else:
            # A record the SessionStart hook wrote during a compaction predates that compaction's
            # own boundary line, which the client writes after the hook: one is expected.
            why, scanned_to, recorded = scan_transcript(transcript, record["transcript_size"],
                                                        boundaries_allowed=1 if record["after_compaction"] else 0)
            if why is None and not record["persisted"] and not recorded:
                why = ("the last injection is not in the transcript (a client that does not record hook "
                       "output forgets it on --resume)")
            if why is not None:
                record = None
            else:
                # Everything up to here is checked: the next scan starts here. Written when a flag
                # changes or the scan has come far, so a long run of held-only prompts stays cheap.
                changed = (not record["persisted"] or record["after_compaction"]
                           or scanned_to - record["transcript_size"] > ADVANCE_BYTES)
                record = dict(record, persisted=True, after_compaction=False, transcript=transcript,
                              transcript_size=scanned_to)
    if record is None:
        if why:
            log(f"session {session_id}: {why}; injecting as if the session held nothing")
        record = new_record(session_id, store)
    size = transcript_size(transcript) if transcript else 0
    plan, updated = session_step(record, decision, prompt, settings, now, transcript, size)
    if updated is None and changed:
        updated = dict(record, updated=now)
    if updated is not None:
        try:
            write_record(path, updated)
        except OSError as err:
            log(f"session {session_id}: record not written ({type(err).__name__}: {err}); "
                "the next prompt will inject again")
    return plan
