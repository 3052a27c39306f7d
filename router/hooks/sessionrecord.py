"""The per-session record of what was injected: its shape, the checks it must pass to be
trusted, and its file in the cache directory (``<cache>/sessions/<session id>.json``), written by
temp file + rename so a crash leaves the old record or the new one.

Apart from ``router.hooks.session`` (the stage that decides with it) so the record's format, its
bounds and every reason not to trust it sit in one place. A record that is missing, unreadable,
damaged, too large, of another version, of another session, of another store (path or stamp of
the cluster file) or dated in the future is reported with the reason, and the caller then treats
the session as holding nothing: every chosen line is sent again (towards the fact).

Standard library only, plain dicts and lists: this is on the hook's path.
"""

import json
import os
import time
import zlib

from router.routing.injection import line_key
from router.removal import remove_owned
from router.safeio import NotRegularFileError, open_regular_fd
from router.store.transcriptscan import scan_transcript, transcript_size

RECORD_VERSION = 1
# Bounds: a record is a few KB (one short key per injected line); past these it is not trusted.
MAX_RECORD_BYTES = 256 * 1024
MAX_HELD_LINES = 4000
MAX_PENDING_LINES = 64
# Past this many entries in the sessions folder, a session's first write prunes it down to
# PRUNED_SESSIONS: the oldest records beyond those go, and any untouched MAX_SESSION_AGE_S, and
# stale temp files. Otherwise only the names are listed, so a new session's first prompt does not
# stat every record, and a full folder is pruned once per 64 new sessions, not on each.
MAX_SESSIONS = 256
PRUNED_SESSIONS = 192
MAX_SESSION_AGE_S = 14 * 24 * 3600
# A record dated further than this into the future means the clock jumped: not trusted.
CLOCK_SLACK_S = 300
# A prompt that sends nothing still moves the record's transcript position past a stretch this
# long that it scanned clean, so a long run of held-only prompts never outgrows the scan.
ADVANCE_BYTES = 512 * 1024
_SAFE_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")


# --------------------------------------------------------------------------- pure


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
    return record_keys(record, [line_key(line["slug"], line["hook"]) for line in lines], now, transcript,
                       transcript_size)


def record_keys(record, keys, now, transcript=None, transcript_size=0):
    """``record_injection`` given the sent lines' ``line_key``s (a plan carries them)."""
    held = list(record["held"])
    seen = set(held)
    for key in keys:
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


def next_record(record, plan, now, transcript=None, transcript_size=0):
    """The record after one prompt's ``plan`` (``router.routing.injection.plan_injection``'s):
    what it sends joins ``held``; ``pending`` becomes the lines it needed that the session already
    held (Claude Code runs UserPromptSubmit *before* an automatic compaction, observed with 2.1.328,
    so those lines may be summarised away under the prompt that relied on them, and the
    SessionStart hook sends them again). ``None`` when nothing changed."""
    pending = [[line["cluster_id"], line["slug"], line["hook"]] for line in plan["held"]][:MAX_PENDING_LINES]
    if not plan["lines"]:
        return None if pending == record["pending"] else dict(record, pending=pending, updated=now)
    updated = record_keys(record, plan["keys"], now, transcript, transcript_size)
    updated["pending"] = pending
    return updated


# --------------------------------------------------------------------------- one prompt's pass


def session_pass(session_id, cluster_path, transcript, plan, log):
    """One prompt's session stage, in one pass: the record read and trusted once (its file, its
    checks, the transcript since its last injection), ``plan(held)`` called once with the line
    keys it holds (``router.routing.injection.plan_injection`` with the prompt bound), and the
    record after that plan written once. Returns the plan.

    Every doubt about the record is logged through ``log(message)`` and means "holds nothing"."""
    path = record_path(session_id)
    if path is None:
        # No cache directory (no usable HOME, no cache variable): route, record nothing.
        log(f"session {session_id}: no cache directory to keep a session record in; every prompt is sent "
            "its lines as in a new session")
        return plan(frozenset())
    now = time.time()
    store = store_identity(cluster_path)
    record, why, changed, size = _trusted_record(path, session_id, store, now, transcript)
    if record is None:
        if why:
            log(f"session {session_id}: {why}; injecting as if the session held nothing")
        record = new_record(session_id, store)
    made = plan(frozenset(record["held"]))
    updated = next_record(record, made, now, transcript, size)
    if updated is None and changed:
        updated = dict(record, updated=now)
    if updated is not None:
        try:
            write_record(path, updated)
        except OSError as err:
            log(f"session {session_id}: record not written ({type(err).__name__}: {err}); "
                "the next prompt will inject again")
    return made


def _trusted_record(path, session_id, store, now, transcript):
    """``(record or None, why, changed, transcript size)``: the record at ``path`` if it passes its
    checks and, when it holds lines, the transcript since its last injection (no compaction, the
    injection recorded); ``changed`` when the trusted record moved (a flag or the scan's position)."""
    data, why = read_record(path)
    record = None
    if data is not None:
        record, why = check_record(data, session_id, store, now)
    if record is None or not record["held"] or transcript is None:
        return record, why, False, transcript_size(transcript) if transcript else 0
    if record["transcript"] not in (None, transcript):
        return None, "transcript path changed", False, transcript_size(transcript)
    # A record the SessionStart hook wrote during a compaction predates that compaction's own
    # boundary line, which the client writes after the hook: one is expected.
    why, scanned_to, recorded = scan_transcript(transcript, record["transcript_size"],
                                                boundaries_allowed=1 if record["after_compaction"] else 0)
    if why is None and not record["persisted"] and not recorded:
        why = ("the last injection is not in the transcript (a client that does not record hook "
               "output forgets it on --resume)")
    if why is not None:
        return None, why, False, transcript_size(transcript)
    # Everything up to here is checked: the next scan starts here. Written when a flag changes or
    # the scan has come far, so a long run of held-only prompts stays cheap.
    changed = (not record["persisted"] or record["after_compaction"]
               or scanned_to - record["transcript_size"] > ADVANCE_BYTES)
    return (dict(record, persisted=True, after_compaction=False, transcript=transcript, transcript_size=scanned_to),
            None, changed, scanned_to)


# --------------------------------------------------------------------------- I/O


def sessions_dir():
    """``<cache dir>/sessions``, or ``None`` when there is no cache directory (no usable HOME and no
    cache variable, ``router.cache.cache_dir``): then no session is recorded, and every prompt is
    routed as in a new session."""
    from router.cache import cache_dir

    base = cache_dir()
    return os.path.join(base, "sessions") if base else None


def record_path(session_id, directory=None):
    """The record file of ``session_id``: the id itself when it is a plain file name, else a
    checksum of it (the record names its session, so a collision reads as a foreign record).
    ``None`` when ``directory`` is not given and there is no sessions directory."""
    directory = directory or sessions_dir()
    if directory is None:
        return None
    if (not session_id or len(session_id) > 128 or session_id[0] == "."
            or not set(session_id) <= _SAFE_ID_CHARS):
        data = session_id.encode("utf-8", "surrogatepass")
        session_id = f"x-{zlib.crc32(data):08x}{zlib.adler32(data):08x}"
    return os.path.join(directory, session_id + ".json")


def read_record(path):
    """The parsed JSON at ``path``: ``(data, None)``, ``(None, None)`` if there is no record, or
    ``(None, why)`` if it cannot be trusted (unreadable, not a regular file, too large, bad JSON)."""
    try:
        fd = open_regular_fd(path)
    except FileNotFoundError:
        return None, None
    except (NotRegularFileError, IsADirectoryError):
        return None, "record is not a regular file"
    except OSError as err:
        return None, f"record unreadable: {type(err).__name__}: {err}"
    try:
        st = os.fstat(fd)
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
        remove_owned(tmp, directory)
        raise
    if created:
        try:
            crowded = len(os.listdir(directory)) > MAX_SESSIONS
        except OSError:
            crowded = False
        if crowded:
            prune_sessions(directory, keep=path, max_sessions=PRUNED_SESSIONS)
    return True


def prune_sessions(directory, keep=None, now=None, max_sessions=MAX_SESSIONS, max_age_s=MAX_SESSION_AGE_S):
    """Delete the oldest records beyond ``max_sessions`` and any older than ``max_age_s``, and
    temp files left by a crash. Run when a session's first record finds the folder holding more
    than ``MAX_SESSIONS`` entries. Never raises."""
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
            if os.path.lexists(full) and remove_owned(full, directory) is None:
                removed.append(full)
    return removed


def read_trusted_record(session_id, directory=None):
    """``(record, None)`` for ``session_id`` when its record is whole and its cluster file is
    unchanged, else ``(None, why)`` (``why`` is ``None`` when there is no record, or nowhere to keep one)."""
    path = record_path(session_id, directory)
    if path is None:
        return None, None
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
