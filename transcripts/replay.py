"""``memory-router replay``'s reading and routing: the user's sessions replayed through the router
as the hook would have routed them. Nothing here writes a file.

**Which sessions**, each read once, streaming (``transcripts.evidence``). The transcripts are the arguments (a ``.jsonl`` file, or a directory: every session under it,
each with its subagent transcripts), else this project's directory under Claude Code's
``projects/`` (``transcripts.locate``). ``--session`` keeps the sessions whose id (or file name)
starts with the given text, ``--since`` those whose first prompt is on or after the date, and
``--limit N`` the N newest (by file time, so the rest are never opened).

One session is in memory at a time, and of it only its turns (each prompt's first
``transcripts.evidence.MAX_PROMPT_CHARS`` and small sets of slugs): a directory of any size
needs about as much memory as its largest session.

**One session replayed.** Each typed prompt is routed by ``router.providers.provider.route`` with the session's id, its
``cwd`` and the cluster file (what the hook passes), and what is sent is decided by
``router.hooks.session.session_step`` on a session record kept here in memory: the very function
the hook calls with its record file, so a line sent once is held, not sent again, until a
compaction. A compaction (a ``compact_boundary`` in the prompt's turn) is what the SessionStart
hook sees: ``router.hooks.session.after_compaction`` sends again the lines the last routed prompt
relied on, and the record then holds only those. Nothing is written: no record file, no cache.

Slash commands and turns nobody typed (``promptSource: system``) are not routed; their API calls
still count for the cost, as their requests carry the history.

What a prompt needed: every memory the agent read (``Read`` of a memory file), fetched
(``get_memory``) or named after it, by ``transcripts.evidence``'s rules, except one the hook of
the time injected for that very prompt (the agent may have named it because it was given).
A memory already read earlier in the session still counts: the replay asks whether the router
would have put it there. A need is met when the router sends the memory at that prompt, or the
session holds it from an earlier prompt (sent, no compaction since).
"""

import calendar
import os
import re
import time
from typing import NamedTuple

from router import config as config_mod
from router.errors import InputError, MemoryRouterError
from router.hooks.session import after_compaction, session_step
from router.hooks.sessionrecord import new_record
from router.providers.provider import route
from router.safeio import open_regular
from router.routing.injection import line_key

_SURROGATE = re.compile("[\ud800-\udfff]")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?Z?$")


def printable(text):
    """``text`` with every lone surrogate (half an emoji, as JSON can carry it) replaced by U+FFFD:
    such a string cannot be encoded, so one in a prompt would crash every output."""
    return _SURROGATE.sub("\ufffd", text) if isinstance(text, str) else text


def epoch_of(stamp):
    """Seconds since the epoch of a transcript timestamp (``2026-11-30T17:16:32.108Z``), or a
    ``--since`` date (``2026-11-30``), else ``None``."""
    if not isinstance(stamp, str) or len(stamp) < 10:
        return None
    text = stamp[:19].replace(" ", "T")
    for fmt, width in (("%Y-%m-%dT%H:%M:%S", 19), ("%Y-%m-%dT%H:%M", 16), ("%Y-%m-%d", 10)):
        try:
            return calendar.timegm(time.strptime(text[:width], fmt))
        except ValueError:
            continue
    return None


def parse_since(value):
    """``--since DATE`` as epoch seconds (UTC); ``InputError`` naming the fix otherwise."""
    if value is None:
        return None
    found = epoch_of(value) if _DATE.match(value.strip()) else None
    if found is None:
        raise InputError(f"--since {value!r} is not a date", fix="write it as YYYY-MM-DD (UTC), e.g. --since 2026-11-01")
    return found


def default_directory(project_dir, environ=None):
    """``(this project's transcript directory or None, where it was looked for)``."""
    from transcripts.locate import locate

    found = locate(project_dir, environ)
    return found.directory, os.path.join(found.projects_dir, found.key)


def transcript_files(paths, project_dir=None, environ=None, skipped=None):
    """``(session transcripts, what was read)``: the arguments' sessions, or the project's. A
    listed entry that is not a regular file goes to ``skipped`` as ``(path, why)``."""
    from transcripts.evidence import session_transcripts

    if not paths:
        directory, looked = default_directory(project_dir or os.getcwd(), environ)
        found = session_transcripts(directory, skipped) if directory is not None else []
        if not found:
            raise InputError("no Claude Code transcripts for this project", path=looked,
                             fix="pass a transcript file or directory (memory-router replay DIR), or run "
                                 "from the project directory Claude Code was started in")
        return found, [directory]
    from transcripts.evidence import transcript_files as expand

    unique = expand(paths, skipped)
    return unique, list(paths)


def _mtime(path):
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def select_files(files, session=None, limit=None):
    """The files to read, oldest first: ``session`` (an id prefix, matched on the file name here
    and on the id inside in ``read_sessions``) and the ``limit`` newest by file time."""
    if limit is not None and limit < 1:
        raise InputError("--limit must be at least 1", fix="pass --limit 20, or leave it out for every session")
    chosen = sorted(files, key=lambda f: (_mtime(f), f))
    if limit is not None and session is None:
        chosen = chosen[-limit:]
    return chosen


def read_sessions(files, slugs, session=None, since=None, limit=None, skipped=None, scored_chars=None):
    """Yield each selected session's ``SessionEvidence``, one at a time. A file that is not a
    transcript at all is appended to ``skipped`` as ``(path, reason)`` and passed over."""
    from transcripts.evidence import session_evidence

    yielded = 0
    for path in select_files(files, session, limit):
        stem = os.path.splitext(os.path.basename(path))[0]
        if session is not None and not stem.startswith(session):
            # The id is usually the file name; a renamed copy is matched on the id it holds.
            if not _holds_session(path, session):
                continue
        try:
            found = session_evidence(path, slugs, scored_chars=scored_chars)
        except MemoryRouterError as err:
            if skipped is not None:
                skipped.append((path, str(err)))
            continue
        if session is not None and not (stem.startswith(session) or (found.session_id or "").startswith(session)):
            continue
        if since is not None:
            first = next((epoch_of(p.timestamp) for p in found.prompts if epoch_of(p.timestamp) is not None), None)
            if first is None or first < since:
                continue
        yielded += 1
        yield found
        if session is not None and limit is not None and yielded >= limit:
            return


def _holds_session(path, session):
    """True when the first line naming a ``sessionId`` names one starting with ``session``."""
    import json

    try:
        with open_regular(path, "rb") as handle:
            for number, raw in enumerate(handle):
                if number >= 50:
                    return False
                try:
                    obj = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(obj, dict) and isinstance(obj.get("sessionId"), str):
                    return obj["sessionId"].startswith(session)
    except OSError:
        return False
    return False


# --------------------------------------------------------------------------- one session

SENT, HELD = "sent", "held"


class Need(NamedTuple):
    """A memory the agent went looking for after a prompt, and whether the router had it there."""
    slug: str
    how: str            # read, get_memory, cited
    path: str           # where it was seen (the session, or a subagent's transcript)
    line: int
    met: str | None     # "sent", "held", or None: a miss


class PromptReplay(NamedTuple):
    """One typed prompt, replayed."""
    session_id: str
    path: str
    line: int
    timestamp: str | None
    prompt: str
    routed: tuple       # cluster ids the router chose
    sent: tuple         # slugs sent at this prompt
    held: tuple         # slugs the prompt's routed lines found already held
    sent_lines: int
    sent_bytes: int
    explanation: str
    needs: tuple        # Need


class TurnCost(NamedTuple):
    """What one turn adds to the session's memory bytes under slim + router."""
    calls: int
    injected_bytes: int     # sent at this prompt: in every later call until a compaction
    compacted: bool
    resent_bytes: int       # sent again by the SessionStart hook after this turn's compaction


class SessionReplay(NamedTuple):
    session_id: str
    path: str
    versions: tuple
    turns: tuple            # TurnCost, one per turn (typed or not)
    skipped_turns: int      # slash commands and system turns: not routed
    diagnostics: tuple      # the reader's notes: damaged lines, by line
    reader: dict


def needs_of(turn, slugs=None):
    """The memories ``turn`` (a ``PromptEvidence``) needed, as ``(slug, how, path, line)``."""
    injected = set(turn.injected)
    return [(s.slug, s.how, s.path, s.line) for s in turn.sightings
            if s.slug not in injected and (slugs is None or s.slug in slugs)]


class SessionStage:
    """The hook's session stage over one session's prompts, its record kept in memory: what
    ``replay`` and ``tokens report``'s modelled session both run, so neither can disagree with the
    hook about what a session holds. ``send`` is one routed prompt (``session_step``); ``compact``
    is what the SessionStart hook does after a compaction (``after_compaction``, with the shipped
    ``max_context_chars``, as the hook calls it). ``held`` is the slugs the session holds."""

    def __init__(self, session_id, store=None):
        self.session_id = session_id
        self.store = store or ["replay", 0, 0]
        self.record = new_record(session_id, self.store)
        self.held = set()

    def send(self, decision, prompt, settings, number):
        """The plan for one prompt's decision (nothing sent when the router chose nothing)."""
        if decision["additional_context"] is None:
            return {"lines": [], "held": [], "text": None}
        plan, updated = session_step(self.record, decision, prompt, settings, float(number))
        self.record = updated or self.record
        self.held.update(line["slug"] for line in plan["lines"])
        return plan

    def compact(self, number):
        """The SessionStart hook's text after a compaction (``None``: nothing sent again); the
        session then holds just what it sent."""
        pending = self.record["pending"]
        text, kept = after_compaction(self.record, config_mod.DEFAULTS["max_context_chars"], float(number))
        self.record = kept or new_record(self.session_id, self.store)
        keys = set(self.record["held"])
        self.held = {slug for _cluster, slug, hook in pending if line_key(slug, hook) in keys}
        return text


def replay_session(session, table, settings, cluster_path, store=None):
    """``(SessionReplay, [PromptReplay, ...])`` for one ``SessionEvidence``."""
    session_id = session.session_id or session.path
    stage = SessionStage(session_id, store)
    prompts, costs = [], []
    skipped = 0
    for number, turn in enumerate(session.prompts, 1):
        injected = 0
        if turn.skip is not None:
            skipped += 1
        else:
            decision = route(turn.prompt, table, settings, cwd=session.cwd, session_id=session_id,
                             cluster_file=cluster_path, log_as="replay")
            held_before = frozenset(stage.held)
            plan = stage.send(decision, turn.prompt, settings, number)
            sent = tuple(line["slug"] for line in plan["lines"])
            text = plan["text"]
            injected = len(text.encode("utf-8")) if text else 0
            needs = tuple(Need(slug, how, path, line, SENT if slug in sent else HELD if slug in held_before else None)
                          for slug, how, path, line in needs_of(turn))
            prompts.append(PromptReplay(session_id, turn.path, turn.line, turn.timestamp, turn.prompt,
                                        tuple(decision["routed"]), sent, tuple(line["slug"] for line in plan["held"]),
                                        len(sent), injected, decision.get("explanation") or "", needs))
        resent = 0
        if turn.compacted:
            text = stage.compact(number)
            resent = len(text.encode("utf-8")) if text else 0
        costs.append(TurnCost(turn.calls, injected, turn.compacted, resent))
    return SessionReplay(session_id, session.path, session.versions, tuple(costs), skipped, session.diagnostics,
                         session.reader_summary), prompts


def replay_history(files, table, settings, cluster_path, slugs, session=None, since=None, limit=None, skipped=None):
    """Yield ``(SessionReplay, [PromptReplay, ...])`` for each selected session of ``files``, one
    session at a time (``read_sessions``, then ``replay_session``)."""
    for found in read_sessions(files, slugs, session=session, since=since, limit=limit, skipped=skipped,
                               scored_chars=settings.get("max_prompt_chars")):
        yield replay_session(found, table, settings, cluster_path)
