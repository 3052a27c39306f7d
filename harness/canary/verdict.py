"""``memory-router canary verdict TRANSCRIPT --case ID``'s model: the behavioural canary's verdict,
read from the session transcript (the judging is ``canaries.verdict``; this module gathers its
evidence from disk and appends the record; ``harness.canary.cli`` prints it).

Exit codes: 0 PASS, 1 FAIL, 3 INCONCLUSIVE, 2 invalid input (an unreadable transcript or suite,
an unknown case). INCONCLUSIVE has its own code so that neither a script nor CI can mistake
"this run proves nothing" for a pass or for a failure of the router.
"""

import datetime
import os

from router.errors import InputError
from router.safeio import read_regular_bytes

DEFAULT_RECORD_HINT = "behavioural-canaries.jsonl"


def _session_cwd(entries):
    return next((e.raw.get("cwd") for e in entries
                 if isinstance(e.raw, dict) and isinstance(e.raw.get("cwd"), str) and not e.is_sidechain), None)


def _parse_time(stamp):
    if not stamp:
        return None
    try:
        return datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def hot_strip_evidence(memory_dir, config, session_start):
    """What the verdict can know of the always-loaded surface: today's MEMORY.md in ``memory_dir``
    (flagged when it changed after ``session_start``, a POSIX time), the config's ``hot_strip``,
    and the memory files marked ``hot: true``."""
    from canaries.verdict import HotStripEvidence
    from harness.memorydir import hot_slugs, index_path

    path = index_path(memory_dir) if memory_dir else None
    text, changed = None, False
    if path and os.path.isfile(path):
        text = read_regular_bytes(path).decode("utf-8", errors="replace")
        if session_start is not None and os.path.getmtime(path) > session_start:
            changed = True
    return HotStripEvidence(
        memory_path=path,
        memory_text=text,
        changed_after=changed,
        config_hot=tuple((config or {}).get("hot_strip") or ()),
        flagged_hot=tuple(hot_slugs(memory_dir)) if memory_dir else (),
    )


def _record_line(record):
    """One compact JSONL line, serialised by jsonlines (the design card's JSONL library)."""
    import io

    import jsonlines

    buffer = io.StringIO()
    with jsonlines.Writer(buffer, compact=True) as writer:
        writer.write(record)
        return buffer.getvalue().encode("utf-8")


def append_record(path, record):
    """Append one JSON line to ``path`` in a single write with O_APPEND, so concurrent verdicts
    never interleave and existing lines are never rewritten; a last line left without its newline
    gets one first."""
    data = _record_line(record)
    from router.safeio import open_regular, open_regular_fd

    try:
        with open_regular(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            if handle.tell() > 0:
                handle.seek(-1, os.SEEK_END)
                if handle.read(1) != b"\n":
                    data = b"\n" + data
    except FileNotFoundError:
        pass
    parent = os.path.dirname(os.path.abspath(path))
    if parent.endswith(os.path.join(os.sep + ".claude", "memory-router")):
        from harness.fileops import ensure_state_dir

        # memory-router's own folder (where the checklist puts the record) gets its .gitignore,
        # so a recorded verdict leaves `git status` as it was.
        ensure_state_dir(parent)
    else:
        os.makedirs(parent, exist_ok=True)
    fd = open_regular_fd(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def _subagent_entries(transcript):
    from transcripts.locate import subagent_files
    from transcripts.reader import read_session

    out = []
    for path in subagent_files(transcript):
        try:
            out.extend(e for e in read_session(path) if e.kind == "injection")
        except InputError:
            continue
    return out


def verdict(transcript, case_id, suite_path=None, record_path=None, memory_dir=None, project=None):
    """``(result, record)``: the verdict of behavioural case ``case_id`` on ``transcript``, and the
    JSON line recorded (appended to ``record_path`` when given). The memory directory the session
    loaded: ``harness.project.resolve_memory_dir`` with the ``memory/`` beside the transcript and
    Claude Code's default for the session's cwd."""
    from canaries.suite import load_suite
    from canaries.verdict import first_turn_entries, judge, record_line
    from harness.canary.suiteargs import cluster_file_family, default_suite_path
    from harness.project import project_config, resolve_memory_dir
    from transcripts.reader import read_session

    suite_path = suite_path or default_suite_path()
    suite = load_suite(suite_path)
    try:
        case = suite.behavioural_case(case_id)
    except KeyError:
        known = ", ".join(c.id for c in suite.behavioural) or "(none)"
        raise InputError(f"no behavioural case {case_id!r}", path=suite_path, fix=f"use one of: {known}") from None

    entries = first_turn_entries(read_session(transcript))
    if not entries:
        raise InputError("the transcript holds no entries", path=transcript,
                         fix="pass a Claude Code session .jsonl (memory-router transcript locate finds it)")
    session_cwd = _session_cwd(entries)
    project = project or (session_cwd if session_cwd and os.path.isdir(session_cwd) else os.getcwd())
    config = project_config(os.path.abspath(project))
    beside = os.path.join(os.path.dirname(os.path.abspath(transcript)), "memory")
    memory_dir, _how = resolve_memory_dir(memory_dir, config, session_cwd, beside=beside, required=False)
    prompt_entry = next((e for e in entries if e.kind == "prompt" and not e.is_sidechain), None)
    hot = hot_strip_evidence(memory_dir, config, _parse_time(prompt_entry.timestamp if prompt_entry else None))
    watch = (memory_dir, *cluster_file_family(suite.cluster_path), (config or {}).get("clusters"),
             (config or {}).get("source"))
    result = judge(entries, case, hot=hot, watch_paths=watch, subagent_entries=_subagent_entries(transcript))

    record = record_line(result, os.path.abspath(transcript),
                         datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z"))
    record["suite"] = os.path.abspath(suite_path)
    record["memory_dir"] = memory_dir
    if record_path:
        try:
            append_record(record_path, record)
        except OSError as err:
            # Exit 2, not a traceback (which would exit 1 and read as a FAIL verdict).
            raise InputError(f"cannot append the verdict ({result.verdict}) to the record: {err.strerror or err}",
                             path=record_path, fix="pass --record a file path in a writable directory") from None
    return result, record
