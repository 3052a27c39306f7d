"""The session stage: the step after the routing decision that decides what this session is
sent now, given what it already holds (issue 13).

Claude Code re-sends every earlier hook context on every later call until the context is
compacted or cleared, so a member line injected once is in front of the model for the rest of
that context. For each prompt (``session_step``) this stage picks the lines the prompt needs
(``router.routing.injection``), sends those the session does not hold yet, and remembers what was sent
in the session's record (``router.hooks.sessionrecord``).

The hook's prompt goes through the stage in one pass (``hook_stage``, then
``router.hooks.sessionrecord.session_pass``): the record is read and trusted once, the plan made from
it once, the record after it written once.

The record is forgotten when the context forgets: the SessionStart hook (``reset_session``,
source ``compact`` or ``clear``) deletes it, and, as a fallback, the pass looks for a
``compact_boundary`` entry written to the transcript after its last recorded injection
(``router.store.transcriptscan``). The same read checks that the last injection was recorded in the
transcript: the record's claim is trusted only once that line is seen.

Fail towards the fact: a record that cannot be trusted, or a transcript that shrank, could not be
scanned in full, shows a compaction or does not show the last injection, all mean "this session
holds nothing": every chosen line is injected and the reason is logged.

Standard library only, plain dicts and tuples: this is on the hook's path.
"""

import functools
import os

from router.removal import remove_owned
from router.routing.injection import plan_injection
from router.routing.score import HEADER_PLURAL, HEADER_SINGLE
from router.hooks.sessionrecord import new_record, next_record, record_injection, record_path, session_pass


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
    """One prompt of one session: ``(plan, new record or None if unchanged)``. The hook
    (``router.hooks.sessionrecord.session_pass``), the canary simulation and replay all plan with
    ``plan_injection`` and move the record with ``next_record``, so they cannot disagree about what
    a session holds (``next_record`` says what ``pending`` keeps, for ``after_compaction``)."""
    plan = plan_injection(decision, prompt, settings, frozenset(record["held"]))
    return plan, next_record(record, plan, now, transcript, transcript_size)


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
    With one, ``router.hooks.sessionrecord.session_pass`` reads the record once, makes the plan
    from it once and writes the result once; every doubt about the record is logged through
    ``log(message)`` and means "holds nothing".
    """
    session_id = payload.get("session_id")
    transcript = payload.get("transcript_path")
    transcript = transcript if isinstance(transcript, str) and transcript else None
    # Bound here and called there: the pass goes from the record to the plan and back to the
    # record without returning to this module in between.
    plan = functools.partial(plan_injection, decision, prompt, settings)
    if not isinstance(session_id, str) or not session_id:
        return plan(frozenset())
    return session_pass(session_id, cluster_path, transcript, plan, log)
