"""``memory-router canary verdict TRANSCRIPT --case ID``: the behavioural canary's verdict, read
from the session transcript (logic in ``canaries.verdict``).

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
    from harness.memorydir import hot_slugs

    path = os.path.join(memory_dir, "MEMORY.md") if memory_dir else None
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


def resolve_verdict_memory_dir(explicit, config, transcript, session_cwd):
    """--memory-dir; the config's memory_dir; the ``memory/`` beside the transcript (Claude Code
    keeps both under ~/.claude/projects/<project>/); Claude Code's default for the session's cwd."""
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    if config and config.get("memory_dir"):
        return config["memory_dir"]
    beside = os.path.join(os.path.dirname(os.path.abspath(transcript)), "memory")
    if os.path.isdir(beside):
        return beside
    if session_cwd:
        from harness.project import default_memory_dir

        return default_memory_dir(session_cwd)
    return None


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


def cmd_verdict(args):
    from canaries.suite import load_suite
    from canaries.verdict import EXIT_CODES, first_turn_entries, judge, record_line
    from harness.canary.checklist import default_suite_path
    from harness.project import project_config
    from transcripts.reader import read_session

    suite_path = args.suite or default_suite_path()
    suite = load_suite(suite_path)
    try:
        case = suite.behavioural_case(args.case)
    except KeyError:
        known = ", ".join(c.id for c in suite.behavioural) or "(none)"
        raise InputError(f"no behavioural case {args.case!r}", path=suite_path, fix=f"use one of: {known}") from None

    reader = read_session(args.transcript)
    entries = first_turn_entries(reader)
    if not entries:
        raise InputError("the transcript holds no entries", path=args.transcript,
                         fix="pass a Claude Code session .jsonl (memory-router transcript locate finds it)")
    session_cwd = _session_cwd(entries)
    project = args.project or (session_cwd if session_cwd and os.path.isdir(session_cwd) else os.getcwd())
    config = project_config(os.path.abspath(project))
    memory_dir = resolve_verdict_memory_dir(args.memory_dir, config, args.transcript, session_cwd)
    prompt_entry = next((e for e in entries if e.kind == "prompt" and not e.is_sidechain), None)
    hot = hot_strip_evidence(memory_dir, config, _parse_time(prompt_entry.timestamp if prompt_entry else None))
    from harness.canary.checklist import cluster_file_family

    watch = (memory_dir, *cluster_file_family(suite.cluster_path), (config or {}).get("clusters"),
             (config or {}).get("source"))
    result = judge(entries, case, hot=hot, watch_paths=watch,
                   subagent_entries=_subagent_entries(args.transcript))

    record = record_line(result, os.path.abspath(args.transcript),
                         datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z"))
    record["suite"] = os.path.abspath(suite_path)
    record["memory_dir"] = memory_dir
    if args.record:
        try:
            append_record(args.record, record)
        except OSError as err:
            # Exit 2, not a traceback (which would exit 1 and read as a FAIL verdict).
            raise InputError(f"cannot append the verdict ({result.verdict}) to the record: {err.strerror or err}",
                             path=args.record, fix="pass --record a file path in a writable directory") from None
    if args.json:
        from harness.output import print_json

        out = result.as_dict()
        out.update({"transcript": os.path.abspath(args.transcript), "suite": record["suite"],
                    "memory_dir": memory_dir, "record": os.path.abspath(args.record) if args.record else None,
                    "exit_code": EXIT_CODES[result.verdict]})
        print_json(out)
    else:
        _print_verdict(result, args)
    return EXIT_CODES[result.verdict]


def _print_verdict(result, args):
    from rich.text import Text

    from harness.output import console, table

    styles = {"PASS": "bold green", "FAIL": "bold red", "INCONCLUSIVE": "bold yellow"}
    out = console()
    head = Text(f"{result.verdict}", style=styles[result.verdict])
    head.append(f"  {result.case}  (Claude Code {result.version or '?'}, session {result.session_id or '?'})",
                style="default")
    out.print(head)
    for reason in result.reasons:
        out.print(f"- {reason}", markup=False)
    if result.evidence:
        rows = [(str(e.line) if e.line is not None else "-", e.what) for e in result.evidence]
        out.print(table(f"evidence ({args.transcript})", ["line", "what"], rows))
    if args.record:
        out.print(f"recorded in {args.record}", markup=False)


def register_verdict(canary_subparsers):
    import argparse

    verdict = canary_subparsers.add_parser(
        "verdict", help="the behavioural canary's verdict from a session transcript: PASS, FAIL or INCONCLUSIVE",
        description="Reads the transcript of a fresh session whose first prompt was a behavioural case's prompt. "
                    "PASS: that prompt's router injection carries the case's fact and the reply contains an "
                    "expected phrase and no forbidden one. INCONCLUSIVE, never PASS, when the fact could have come "
                    "another way (always loaded in MEMORY.md or the hot strip; a subagent call, a web lookup, a "
                    "tool touching the memory store, or any line naming the slug before the answer), when the "
                    "injection is only in a sidechain, when the transcript's Claude Code version cannot show "
                    "injections, or when the transcript is not a run of this case. FAIL otherwise. Every verdict "
                    "names its evidence by line number.",
        epilog="exit codes: 0 PASS; 1 FAIL; 3 INCONCLUSIVE; 2 invalid input (transcript, suite, unknown case)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    verdict.add_argument("transcript", metavar="TRANSCRIPT",
                         help="the session's .jsonl transcript (memory-router transcript locate prints it)")
    verdict.add_argument("--case", metavar="ID", required=True, help="the behavioural case's id")
    verdict.add_argument("--suite", metavar="SUITE", help="suite file (default: the bundled canaries/spec.yaml)")
    verdict.add_argument("--record", metavar="FILE",
                         help=f"append the verdict as one JSON line (e.g. {DEFAULT_RECORD_HINT})")
    verdict.add_argument("--memory-dir", metavar="DIR",
                         help="the memory directory whose MEMORY.md the session loaded (default: memory_dir in the "
                              "config, else the memory/ beside the transcript, else Claude Code's default)")
    verdict.add_argument("--project", metavar="DIR",
                         help="project whose config (hot_strip, memory_dir) applies (default: the session's cwd)")
    verdict.add_argument("--json", action="store_true", help="machine-readable output")
    verdict.set_defaults(handler=cmd_verdict)
