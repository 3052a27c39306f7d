"""Session de-duplication and line selection: the stage after the routing decision (issue 13).

Claude Code re-sends every earlier hook context on every later call until the context is
compacted or cleared, so a member line injected once is in front of the model for the rest of
that context. This stage, run after whatever decided *which clusters* (``router.score`` or a
provider), decides *which of their lines* to send now:

1. Rank the decision's member lines by evidence for this prompt (``rank_lines``) and keep the
   best ``lines_per_injection`` (0: no limit beyond ``line_cap``) among those with at least
   ``line_evidence_share`` of the best line's evidence (a line far behind the best is noise).
2. Drop the lines this session already holds (``plan_injection``). When every kept line is
   held, nothing is injected. (A one-line pointer was measured against silence by
   ``benchmarks/session_sim.py --pointer``: it adds bytes to every later request and puts no
   fact in front of the model that is not already there, so silence is the default.)
3. Remember what was sent (``record_injection``), in a small per-session record in the cache
   directory (``<cache>/sessions/<session id>.json``), written by temp file + rename so a crash
   leaves the old record or the new one.

The record is forgotten when the context forgets: the SessionStart hook (``reset_session``,
source ``compact`` or ``clear``) deletes it, and, as a fallback, the UserPromptSubmit hook looks
for a ``compact_boundary`` entry written to the transcript after its last recorded injection
(``scan_transcript``, reading at most ``TRANSCRIPT_SCAN_BYTES`` from the end). The same read
checks that the last injection was recorded in the transcript as a ``hook_additional_context``
attachment: a client that does not record hook output (2.1.39 and older, per the lab) drops it
from the history on ``--resume``, so the record's claim is trusted only once that line is seen.

Fail towards the fact: a record that is missing, unreadable, damaged, too large, of another
version, of another session, of another store (path or stamp of the cluster file), dated in the
future, or a transcript that shrank, could not be scanned in full, shows a compaction or does
not show the last injection, all mean "this session holds nothing": every chosen line is injected and the reason is logged.

Standard library only, plain dicts and tuples: this is on the hook's path.
"""

import json
import os
import time
import zlib

from router.score import HEADER_PLURAL, HEADER_SINGLE, prompt_for_scoring
from router.tokens import slug_words, tokenize

RECORD_VERSION = 1
# Bounds: a record is a few KB (one short key per injected line); past these it is not trusted.
MAX_RECORD_BYTES = 256 * 1024
MAX_HELD_LINES = 4000
MAX_PENDING_LINES = 64
# At most this many session records are kept; older ones (and any untouched this long) go.
MAX_SESSIONS = 256
MAX_SESSION_AGE_S = 14 * 24 * 3600
# A record dated further than this into the future means the clock jumped: not trusted.
CLOCK_SLACK_S = 300
# The transcript is read from its end back to the last recorded injection, at most this far.
TRANSCRIPT_SCAN_BYTES = 4 * 1024 * 1024
_SCAN_CHUNK = 256 * 1024
# A prompt that sends nothing still moves the record's transcript position past a stretch this
# long that it scanned clean, so a long run of held-only prompts never outgrows the scan.
ADVANCE_BYTES = 512 * 1024
_COMPACT_MARK = b'"compact_boundary"'
_ATTACHMENT_MARK = b'"hook_additional_context"'
_SAFE_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


# --------------------------------------------------------------------------- pure: lines


def line_key(slug, hook):
    """What identifies a sent line: its slug and its exact text (an edited hook is a new line)."""
    data = hook.encode("utf-8", "surrogatepass")
    return f"{slug}|{len(data)}:{zlib.crc32(data):08x}:{zlib.adler32(data):08x}"


def rank_lines(prompt_tokens, lines):
    """``lines`` (dicts with ``slug`` and ``hook``) best first by evidence for the prompt.

    Evidence of a line = sum over the prompt's tokens among the line's words (slug words and hook
    tokens) of 1 / (how many of the candidate lines hold that token): a word every line of the
    cluster shares says little about which line the prompt needs. Ties keep the decision's order
    (cluster rank, then file order). Returns a list of (evidence, original index, line).
    """
    words = [slug_words(line["slug"]) | tokenize(line["hook"]) for line in lines]
    frequency = {}
    for line_words in words:
        for token in line_words & prompt_tokens:
            frequency[token] = frequency.get(token, 0) + 1
    ranked = []
    for index, line_words in enumerate(words):
        evidence = sum(1.0 / frequency[token] for token in line_words & prompt_tokens)
        ranked.append((evidence, index, lines[index]))
    ranked.sort(key=lambda row: (-row[0], row[1]))
    return ranked


def plan_injection(decision, prompt, settings, held=frozenset()):
    """Which of ``decision``'s lines to send now. Pure.

    ``decision`` is a routing decision (``route_prompt``'s dict or a provider's): ``routed``
    cluster ids, ``lines`` (``{cluster_id, slug, hook}``) and ``total_member_lines``. ``held`` is
    the set of ``line_key``s the session already holds. Returns a dict:

        clusters      the routed cluster ids (unchanged: this stage never re-routes)
        chosen        the lines the prompt needs, best first (at most lines_per_injection)
        lines         the chosen lines not yet held, in the decision's order: what is sent
        held          the chosen lines already held (not sent again)
        left_out      member lines of the routed clusters neither sent nor held
        text          the additionalContext, or None when nothing new is to be sent
    """
    clusters = list(decision.get("routed") or ())
    lines = list(decision.get("lines") or ())
    limit = settings.get("lines_per_injection", 0)
    share = settings.get("line_evidence_share", 0)
    if not clusters or not lines:
        return {"clusters": clusters, "chosen": [], "lines": [], "held": [], "left_out": 0, "text": None}
    tokens = tokenize(prompt_for_scoring(prompt, settings.get("max_prompt_chars", 0)))
    ranked = rank_lines(tokens, lines)
    if share and ranked[0][0] > 0:
        ranked = [row for row in ranked if row[0] >= share * ranked[0][0]]
    if limit and len(ranked) > limit:
        ranked = ranked[:limit]
    chosen = [row[2] for row in ranked]
    order = sorted(ranked, key=lambda row: row[1])
    fresh = [row[2] for row in order if line_key(row[2]["slug"], row[2]["hook"]) not in held]
    already = [row[2] for row in order if line_key(row[2]["slug"], row[2]["hook"]) in held]
    total = max(decision.get("total_member_lines") or 0, len(lines))
    text = None
    sent = []
    if fresh:
        text, sent = render_injection(clusters, fresh, len(already), total, settings.get("max_context_chars", 9500),
                                      size_capped=bool(decision.get("size_capped_lines")))
    left_out = total - len(sent) - len(already)
    return {"clusters": clusters, "chosen": chosen, "lines": sent, "held": already, "left_out": left_out,
            "text": text}


def render_injection(clusters, lines, held_count, total, max_chars, size_capped=False):
    """The injected text: a header naming the clusters, how many lines are already in the
    session and how many were left out, then ``- <slug> — <hook>`` lines. Whole lines are
    dropped from the end until it fits ``max_chars``. Returns (text, lines kept).

    The header says "size cap" when this render dropped lines, or when ``size_capped`` says the
    routing decision's own size cap already had (those lines never reach this stage).

    The header starts as ``router.score``'s does, so ``parse_header`` (the audit) reads it.
    """
    body = [f"- {line['slug']} \u2014 {line['hook']}" for line in lines]
    base = (HEADER_PLURAL if len(clusters) > 1 else HEADER_SINGLE) + ", ".join(clusters)
    kept = len(body)
    while True:
        # Short on purpose: the header rides along in every later request of the session.
        notes = []
        left_out = total - kept - held_count
        if left_out > 0:
            notes.append(f"{left_out} more not shown" + ("" if kept == len(body) and not size_capped else ", size cap"))
        if held_count:
            notes.append(f"{held_count} sent earlier")
        header = base + (f" ({'; '.join(notes)})" if notes else "")
        text = "\n".join([header] + body[:kept])
        if len(text) <= max_chars or kept == 0:
            return (text if kept else None), lines[:kept]
        kept -= 1


def pointer_text(clusters, held_count):
    """The one-line pointer the hook could send when every chosen line is held (measured, not
    used by default: see the module docstring)."""
    base = (HEADER_PLURAL if len(clusters) > 1 else HEADER_SINGLE) + ", ".join(clusters)
    return f"{base} ({held_count} relevant member line{'s' if held_count != 1 else ''} already sent above)"


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
    """The configured provider's decision (``router.provider.route``, given ``route_options``),
    then ``fresh``: what the hook sends this prompt in a new session."""
    from router.provider import route

    return fresh(route(prompt, table, settings, **route_options), prompt, settings)


# --------------------------------------------------------------------------- pure: the record


def store_identity(cluster_path):
    """The cluster file a record was made with: absolute path and stamp (size, mtime)."""
    path = os.path.abspath(cluster_path)
    st = os.stat(path)
    return [path, st.st_size, st.st_mtime_ns]


def new_record(session_id, store):
    return {"version": RECORD_VERSION, "session_id": session_id, "store": list(store), "updated": 0,
            "transcript": None, "transcript_size": 0, "persisted": False, "after_compaction": False, "held": [],
            "pending": []}


def check_record(data, session_id, store, now):
    """``(record, None)`` if ``data`` is a record this session can trust, else ``(None, why)``."""
    if not isinstance(data, dict):
        return None, "record is not a JSON object"
    if data.get("version") != RECORD_VERSION:
        return None, f"record version {data.get('version')!r}, not {RECORD_VERSION}"
    if data.get("session_id") != session_id:
        return None, "record belongs to another session"
    if data.get("store") != list(store):
        return None, "record was made with another cluster file or version of it"
    held = data.get("held")
    if not isinstance(held, list) or not all(isinstance(k, str) for k in held) or len(held) > MAX_HELD_LINES:
        return None, "record's held lines are damaged"
    pending = data.get("pending")
    if not isinstance(pending, list) or len(pending) > MAX_PENDING_LINES or not all(
            isinstance(p, list) and len(p) == 3 and all(isinstance(x, str) for x in p) for p in pending):
        return None, "record's pending lines are damaged"
    updated = data.get("updated")
    if isinstance(updated, bool) or not isinstance(updated, (int, float)) or updated < 0:
        return None, "record has no valid time"
    if updated > now + CLOCK_SLACK_S:
        return None, "record is dated in the future (clock changed)"
    size = data.get("transcript_size")
    transcript = data.get("transcript")
    if isinstance(size, bool) or not isinstance(size, int) or size < 0 or not (
            transcript is None or isinstance(transcript, str)) or not isinstance(data.get("persisted"), bool) or (
            not isinstance(data.get("after_compaction"), bool)):
        return None, "record's transcript position is damaged"
    return data, None


def record_injection(record, lines, now, transcript=None, transcript_size=0):
    """A new record: ``record`` plus ``lines`` sent now, stamped with the transcript's size."""
    held = list(record["held"])
    seen = set(held)
    for line in lines:
        key = line_key(line["slug"], line["hook"])
        if key not in seen:
            seen.add(key)
            held.append(key)
    if len(held) > MAX_HELD_LINES:
        # Forgetting the oldest means they are sent again: towards the fact, never away from it.
        held = held[-MAX_HELD_LINES:]
    out = dict(record)
    # persisted: not yet known for what was just sent (the next prompt looks for it in the transcript)
    out.update(held=held, updated=now, transcript=transcript, transcript_size=transcript_size, persisted=False,
               after_compaction=False)
    return out


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


# --------------------------------------------------------------------------- I/O


def sessions_dir():
    from router.cache import cache_dir

    return os.path.join(cache_dir(), "sessions")


def record_path(session_id, directory=None):
    """The record file of ``session_id``: the id itself when it is a plain file name, else a
    checksum of it (the record names its session, so a collision reads as a foreign record)."""
    if (not session_id or len(session_id) > 128 or session_id[0] == "."
            or not set(session_id) <= _SAFE_ID_CHARS):
        data = session_id.encode("utf-8", "surrogatepass")
        session_id = f"x-{zlib.crc32(data):08x}{zlib.adler32(data):08x}"
    return os.path.join(directory or sessions_dir(), session_id + ".json")


def read_record(path):
    """The parsed JSON at ``path``: ``(data, None)``, ``(None, None)`` if there is no record, or
    ``(None, why)`` if it cannot be trusted (unreadable, not a regular file, too large, bad JSON)."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except FileNotFoundError:
        return None, None
    except OSError as err:
        return None, f"record unreadable: {type(err).__name__}: {err}"
    try:
        import stat

        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None, "record is not a regular file"
        if st.st_size > MAX_RECORD_BYTES:
            return None, f"record is {st.st_size} bytes, over {MAX_RECORD_BYTES}"
        data = os.read(fd, MAX_RECORD_BYTES + 1)
    except OSError as err:
        return None, f"record unreadable: {type(err).__name__}: {err}"
    finally:
        os.close(fd)
    try:
        return json.loads(data.decode("utf-8")), None
    except ValueError as err:
        return None, f"record damaged: {err}"


def write_record(path, record):
    """Write ``record`` by temp file + rename: a reader (or a crash) sees the old or the new one.

    No fsync: the record only ever *suppresses* injections, and a record torn by a power loss
    reads as damaged, which means inject. Returns True if it was written."""
    data = json.dumps(record, separators=(",", ":")).encode("utf-8")
    if len(data) > MAX_RECORD_BYTES:
        return False
    directory = os.path.dirname(path)
    tmp = f"{path}.{os.getpid()}.{time.monotonic_ns()}.tmp"
    created = not os.path.exists(path)
    try:
        os.makedirs(directory, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if created:
        prune_sessions(directory, keep=path)
    return True


def prune_sessions(directory, keep=None, now=None, max_sessions=MAX_SESSIONS, max_age_s=MAX_SESSION_AGE_S):
    """Delete the oldest records beyond ``max_sessions`` and any older than ``max_age_s``, and
    temp files left by a crash. Run when a session's first record is written. Never raises."""
    now = time.time() if now is None else now
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    found = []
    removed = []
    for name in names:
        full = os.path.join(directory, name)
        if full == keep:
            continue
        try:
            mtime = os.stat(full).st_mtime
        except OSError:
            continue
        if name.endswith(".tmp"):
            if now - mtime > 60:
                found.append((-1.0, full))
            continue
        if name.endswith(".json"):
            found.append((mtime, full))
    found.sort()
    excess = max(0, len(found) + (1 if keep else 0) - max_sessions)
    for index, (mtime, full) in enumerate(found):
        if mtime < 0 or index < excess or now - mtime > max_age_s:
            try:
                os.unlink(full)
                removed.append(full)
            except OSError:
                pass
    return removed


def read_trusted_record(session_id, directory=None):
    """``(record, None)`` for ``session_id`` when its record is whole and its cluster file is
    unchanged, else ``(None, why)`` (``why`` is ``None`` when there is no record)."""
    path = record_path(session_id, directory)
    data, why = read_record(path)
    if data is None:
        return None, why
    store = data.get("store") if isinstance(data, dict) else None
    try:
        current = store_identity(store[0]) if isinstance(store, list) and store and isinstance(store[0], str) else None
    except OSError:
        current = None
    if current is None:
        return None, "record names no readable cluster file"
    return check_record(data, session_id, current, time.time())


def reset_session(session_id, directory=None):
    """Forget what ``session_id`` holds (after compaction or /clear). True if a record was removed."""
    try:
        os.unlink(record_path(session_id, directory))
        return True
    except FileNotFoundError:
        return False


def transcript_size(path):
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def scan_transcript(path, offset, limit=TRANSCRIPT_SCAN_BYTES, boundaries_allowed=0):
    """Read the transcript at ``path`` from its end back to byte ``offset`` (at most ``limit``).

    Returns ``(doubt, size, recorded)``: ``doubt`` is why the session's record cannot be trusted
    (more than ``boundaries_allowed`` ``compact_boundary`` entries since ``offset``; or the file
    shrank, vanished, or grew by more than ``limit``, since a wrong "no compaction" would drop a
    fact), else ``None``; ``size`` how far it was read; ``recorded`` whether a
    ``hook_additional_context`` attachment line was written since ``offset`` (the client records
    hook output, so a ``--resume`` keeps it). A missing file with ``offset`` 0 is no doubt
    (Claude Code may write it after the first hook runs).
    """
    try:
        fd = os.open(path, _READ_FLAGS)
    except FileNotFoundError:
        return (None if offset == 0 else "transcript is gone"), 0, False
    except OSError as err:
        return f"transcript unreadable: {type(err).__name__}", 0, False
    try:
        size = os.fstat(fd).st_size
        if size < offset:
            return f"transcript shrank from {offset} to {size} bytes", size, False
        if size - offset > limit:
            return f"{size - offset} transcript bytes since the last injection, over the {limit} scanned", size, False
        end = size
        carry = b""
        recorded = False
        boundaries = 0
        while True:
            start = max(offset, end - _SCAN_CHUNK)
            chunk = os.pread(fd, end - start, start) if hasattr(os, "pread") else _seek_read(fd, start, end - start)
            # The first line of a chunk may be cut: it is carried into the next, earlier read and
            # judged whole there; only the last read (at ``offset``) judges its first line.
            block = chunk + carry
            found, attachment = _scan_block(block, first_line=start == offset)
            boundaries += found
            recorded = recorded or attachment
            if boundaries > boundaries_allowed:
                return "compact_boundary in the transcript since the last injection", size, recorded
            if start == offset:
                return None, size, recorded
            cut = block.find(b"\n")
            carry = block[:cut + 1] if cut >= 0 else block
            end = start
    except OSError as err:
        return f"transcript unreadable: {type(err).__name__}", 0, False
    finally:
        os.close(fd)


def _seek_read(fd, start, length):
    os.lseek(fd, start, os.SEEK_SET)
    return os.read(fd, length)


def _scan_block(block, first_line=True):
    """``(boundaries, attachment)``: how many complete JSONL lines in ``block`` are
    ``compact_boundary`` system entries, and whether one is a ``hook_additional_context``
    attachment (a prompt that merely mentions either word is neither). ``first_line=False``
    leaves out the block's first line (it is judged with the read before it)."""
    boundaries = _count_entries(block, _COMPACT_MARK, lambda e: e.get("subtype") == "compact_boundary", first_line)
    attachment = _count_entries(block, _ATTACHMENT_MARK, lambda e: e.get("type") == "attachment" and isinstance(
        e.get("attachment"), dict) and e["attachment"].get("type") == "hook_additional_context", first_line) > 0
    return boundaries, attachment


def _count_entries(block, mark, accept, first_line):
    count = 0
    at = block.find(mark)
    while at >= 0:
        begin = block.rfind(b"\n", 0, at) + 1
        finish = block.find(b"\n", at)
        if finish < 0:
            break
        if begin > 0 or first_line:
            try:
                entry = json.loads(block[begin:finish])
            except ValueError:
                entry = None
            if isinstance(entry, dict) and accept(entry):
                count += 1
        at = block.find(mark, finish)
    return count


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
    now = time.time()
    store = store_identity(cluster_path)
    path = record_path(session_id)
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
