"""``memory-router transcript audit|locate|census``: the thin edge over the reader, audit, locate
and census modules. Exit codes: 0 every check passed, 1 a check failed (or ``--strict`` found
something), 2 a file could not be read at all (or nothing to locate)."""

import os
import pathlib
import sys

from harness import options
from router.errors import InputError

STATUS_STYLE = {"pass": "green", "fail": "bold red", "n/a": "dim", "unknown": "yellow"}


def expand_paths(paths, with_subagents=True):
    """FILE|DIR arguments -> transcript files, each session followed by its subagent files.

    Returns (files, missing): ``files`` is a list of ``pathlib.Path``; ``missing`` lists the
    arguments that do not exist."""
    from transcripts.locate import EMPTY_PATH_FIX, EMPTY_PATH_MESSAGE, subagent_files

    found, missing, seen = [], [], set()

    def add(path):
        key = os.path.abspath(path)
        if key not in seen:
            seen.add(key)
            found.append(pathlib.Path(path))

    for arg in paths:
        if not str(arg).strip():
            # pathlib.Path("") is ".", which would audit every .jsonl under the current directory.
            raise InputError(EMPTY_PATH_MESSAGE, fix=EMPTY_PATH_FIX)
        path = pathlib.Path(arg)
        if path.is_dir():
            for item in sorted(path.rglob("*.jsonl"), key=_session_order):
                if item.is_file():
                    add(item)
        elif path.exists():
            add(path)
            if with_subagents:
                for item in subagent_files(path):
                    add(item)
        else:
            missing.append(str(arg))
    return found, missing


def _session_order(path):
    """Sort key putting each session file right before its own subagent files."""
    if path.parent.name == "subagents":
        return (str(path.parent.parent) + ".jsonl", 1, path.name)
    return (str(path), 0, "")


def _subagents_of(path, files):
    folder = os.path.abspath(pathlib.Path(path).with_suffix("") / "subagents")
    return [f for f in files if os.path.abspath(f.parent) == folder]


# --------------------------------------------------------------------------- audit


def cmd_audit(args):
    from transcripts.audit import audit_path, result_to_dict

    files, missing = expand_paths(args.paths, with_subagents=not args.no_subagents)
    errors = [{"path": p, "error": "no such file or directory"} for p in missing]
    results = []
    for path in files:
        try:
            results.append(audit_path(path, args.sentinel, subagent_files=_subagents_of(path, files)))
        except InputError as err:
            errors.append({"path": str(path), "error": str(err)})
    if not files and not missing:
        errors.append({"path": ", ".join(args.paths), "error": "no .jsonl transcript found"})
    failed = any(r.status == "fail" for r in results)
    code = 2 if errors else (1 if failed else 0)
    if args.json:
        from harness.output import print_json

        print_json({
            "status": "error" if errors else ("fail" if failed else
                                              ("unknown" if any(r.status == "unknown" for r in results) else "pass")),
            "exit_code": code,
            "sentinel": args.sentinel,
            "files": [result_to_dict(r) for r in results],
            "errors": errors,
        })
        return code
    _print_audit(results, errors, args.sentinel)
    return code


def _evidence_text(check, limit=6):
    if not check.evidence:
        return ""
    shown = [f"L{e.line}: {e.note}" for e in check.evidence[:limit]]
    if len(check.evidence) > limit:
        shown.append(f"\u2026 {len(check.evidence) - limit} more")
    return "\n".join(shown)


def _print_audit(results, errors, sentinel):
    from rich.markup import escape

    from harness.output import console, table

    out = console()
    err = console(stderr=True)
    for result in results:
        versions = ", ".join(result.versions) or "no version"
        out.print(f"[bold]{escape(result.path)}[/bold] ({result.role}; Claude Code {escape(versions)})")
        for warning in result.warnings:
            err.print(f"warning: {escape(result.path)}:{warning.line}: {escape(warning.message)}", style="yellow")
        if not result.can_show_injections:
            out.print(f"[yellow]{escape(result.capability_note[:1].upper() + result.capability_note[1:])}."
                      " Its injection checks are unknown, not passed.[/yellow]")
        if not result.streams:
            out.print("  no entries: nothing to audit")
        for stream in result.streams:
            rows = []
            for prompt in stream.prompts:
                injections = "\n".join(
                    f"L{i.line}: {', '.join(i.cluster_ids) if i.cluster_ids else (i.hook_name or 'hook')}"
                    f" ({i.member_lines if i.cluster_ids is not None else i.lines} lines, {i.chars:,} chars"
                    f"{', by order' if i.anchor == 'order' else ''})"
                    for i in prompt.injections) or "-"
                rows.append((prompt.line, escape(prompt.preview), prompt.source or "-", escape(injections)))
            if stream.prompts_not_listed:
                rows.append(("\u2026", f"{stream.prompts_not_listed:,} more prompt(s) not listed", "", ""))
            for i in stream.unanchored:
                rows.append(("-", "(no prompt)", "-", escape(f"L{i.line}: {i.preview}")))
            unlisted = (stream.unanchored_count or 0) - len(stream.unanchored)
            if unlisted > 0:
                rows.append(("\u2026", f"{unlisted:,} more unanchored injection(s) not listed", "", ""))
            injected = stream.injection_count if stream.injection_count is not None else len(stream.injections)
            prompt_count = stream.prompt_count if stream.prompt_count is not None else len(stream.prompts)
            title = (f"{stream.stream}: {prompt_count:,} prompt(s), {injected:,} injection(s), "
                     f"{stream.entries} entries from line {stream.first_line}")
            if rows:
                out.print(table(title, ["line", "prompt", "source", "injections (line: clusters)"], rows))
            else:
                out.print(title)
            check_rows = [
                (f"({c.id}) {c.name}", f"[{STATUS_STYLE.get(c.status, '')}]{c.status}[/]", escape(c.message),
                 escape(_evidence_text(c)))
                for c in stream.checks
            ]
            out.print(table(f"{stream.stream}: checks", ["check", "status", "result", "evidence"], check_rows))
            for note in stream.notes:
                out.print(f"  note: {escape(note)}")
        out.print()
    for error in errors:
        err.print(f"memory-router: error: {escape(error['error'] if error['path'] in error['error'] else error['path'] + ': ' + error['error'])}",
                  style="red", soft_wrap=True)  # one line, however narrow the terminal
    failed = sum(1 for r in results if r.status == "fail")
    unknown = sum(1 for r in results if r.status == "unknown")
    out.print(f"{len(results)} file(s) audited: {len(results) - failed - unknown} pass, {failed} fail"
              + (f", {unknown} unknown (cannot show injections)" if unknown else "")
              + (f", {len(errors)} unreadable" if errors else "")
              + (f" (sentinel {escape(sentinel)!r})" if sentinel else ""))


# --------------------------------------------------------------------------- locate


def cmd_locate(args):
    from transcripts.locate import locate

    project = args.project or os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
    found = locate(project)
    if args.json:
        import datetime

        from harness.output import print_json

        record = {
            "project": found.project, "projects_dir": found.projects_dir, "key": found.key, "rule": found.rule,
            "directory": found.directory, "transcript": found.transcript, "sessions": found.sessions,
            "modified": (datetime.datetime.fromtimestamp(found.mtime, datetime.timezone.utc)
                         .isoformat().replace("+00:00", "Z") if found.mtime is not None else None),
            "session_id": pathlib.Path(found.transcript).stem if found.transcript else None,
        }
        print_json(record)
        return 0 if found.transcript else 2
    if found.transcript is None:
        where = found.directory or os.path.join(found.projects_dir, found.key)
        raise InputError(f"no session transcript for {found.project} (looked in {where})",
                         fix="run Claude Code in that directory first, pass --project DIR, or set CLAUDE_CONFIG_DIR")
    if found.rule == "prefix":
        print("memory-router: the project path is over 200 characters; Claude Code hashes such names, so this "
              "was matched by prefix (best effort)", file=sys.stderr)
    print(found.transcript)
    return 0


# --------------------------------------------------------------------------- census


def cmd_census(args):
    from transcripts.census import census_entries, combine, strict_failures
    from transcripts.reader import read_session

    files, missing = expand_paths(args.paths)
    unreadable = [(p, "no such file or directory") for p in missing]
    if not files and not missing:
        unreadable.append((", ".join(args.paths), "no .jsonl transcript found"))
    per_file = []
    for path in files:
        try:
            per_file.append(census_entries(read_session(path), path))
        except InputError as err:
            unreadable.append((str(path), str(err)))
    census = combine(per_file, unreadable)
    reasons = strict_failures(census) if args.strict else []
    code = 2 if unreadable else (1 if reasons else 0)
    if args.json:
        from dataclasses import asdict

        from harness.output import print_json

        print_json({
            "exit_code": code,
            "strict": args.strict,
            "strict_failures": reasons,
            "totals": census.totals,
            "files": [
                {**{k: v for k, v in asdict(f).items() if k != "diagnostics"},
                 "diagnostics": [{"line": d.line, "kind": d.kind, "message": d.message} for d in f.diagnostics]}
                for f in census.files
            ],
            "unreadable": [{"path": p, "error": e} for p, e in unreadable],
        })
        return code
    _print_census(census, reasons, args.strict)
    return code


def _short_names(paths):
    """Paths relative to their common directory, so a table of many files stays readable."""
    if len(paths) < 2:
        return {p: p for p in paths}
    root = os.path.commonpath([os.path.abspath(p) for p in paths])
    if os.path.isfile(root):
        root = os.path.dirname(root)
    return {p: os.path.relpath(os.path.abspath(p), root) for p in paths}


def _print_census(census, reasons, strict):
    from rich.markup import escape

    from harness.output import console, table

    out = console()
    err = console(stderr=True)
    names = _short_names([f.path for f in census.files])
    rows = [(escape(names[f.path]), f.lines, f.entries, escape(", ".join(f.versions) or "-"), f.bad_lines,
             f.invalid_utf8_lines, f.truncated_last_line or "-", f.sidechain_entries)
            for f in census.files]
    root = ""
    if len(census.files) > 1:
        root = " under " + os.path.commonpath([os.path.abspath(f.path) for f in census.files])
    out.print(table(f"{len(census.files)} transcript file(s){escape(root)}",
                    ["file", "lines", "entries", "versions", "bad", "bad utf-8", "truncated at", "sidechain"], rows))
    totals = census.totals
    for key, title in (("entry_types", "entry types"), ("attachment_types", "attachment types"),
                       ("system_subtypes", "system subtypes"), ("progress_types", "progress types"),
                       ("hook_events", "hook events (attachment/progress lines)"), ("kinds", "classification"),
                       ("versions", "Claude Code versions"), ("unknown_types", "UNKNOWN entry types"),
                       ("unknown_attachment_types", "attachment types not in the documented list")):
        counts = totals.get(key) or {}
        if counts:
            out.print(table(title, ["name", "count"], [(escape(str(k)), v) for k, v in counts.items()]))
    for item in census.files:
        for d in item.diagnostics:
            err.print(f"warning: {escape(item.path)}:{d.line}: {escape(d.message)}", style="yellow")
    for path, message in census.unreadable:
        err.print(f"memory-router: error: {escape(message if path in message else path + ': ' + message)}", style="red",
                  soft_wrap=True)  # one line, however narrow the terminal
    if strict:
        if reasons:
            for reason in reasons:
                out.print(f"[bold red]strict:[/] {escape(reason)}")
        else:
            out.print("[green]strict: no unknown types, no bad lines[/]")


# --------------------------------------------------------------------------- register


def register(subparsers):
    transcript = subparsers.add_parser(
        "transcript", help="audit, locate or census Claude Code session transcripts (JSONL)",
        description="Read Claude Code session transcripts (~/.claude/projects/<project>/<session>.jsonl) "
                    "as a stream, one line at a time.")
    sub = transcript.add_subparsers(dest="transcript_command", metavar="ACTION", required=True)

    audit = sub.add_parser(
        "audit", help="prove each UserPromptSubmit injection entered once, at its prompt, and never again",
        description="For each session: the prompts in order, the UserPromptSubmit injections attached to each "
                    "(clusters, lines, characters), and checks (a) one attachment entry per injection, "
                    "(b) nothing re-sent, (c) the --sentinel appears exactly once, (d) no injection over "
                    "10,000 characters, (e) sidechains audited on their own, (f) the router repeats no member "
                    "line in one context; each with the file line numbers "
                    "as evidence. Transcripts from before Claude Code recorded hook output (<= 2.1.39) say they "
                    "cannot show injections. Subagent files beside a session (<session>/subagents/*.jsonl) "
                    "are audited too, separately. Exit 0 all checks pass, 1 a check fails, 2 a file cannot be "
                    "read at all.")
    audit.add_argument("paths", nargs="+", metavar="FILE|DIR", help="transcript files, or directories to search for *.jsonl")
    audit.add_argument("--sentinel", metavar="TEXT", help="a unique string a one-shot hook injected (the sentinel test)")
    audit.add_argument("--no-subagents", action="store_true",
                       help="do not add the subagent files that sit beside a session FILE")
    options.json_output(audit)
    audit.set_defaults(handler=cmd_audit)

    locate = sub.add_parser(
        "locate", help="print the newest session transcript of a project",
        description="Prints the newest <session>.jsonl under $CLAUDE_CONFIG_DIR/projects (default ~/.claude/projects) "
                    "for the project directory, named by Claude Code's rule: the absolute path with every "
                    "non-alphanumeric character replaced by '-'. Paths whose name exceeds 200 characters are "
                    "matched by prefix (Claude Code appends an undocumented hash). Exit 2 when none is found.")
    locate.add_argument("--project", metavar="DIR",
                        help="the project directory (default: $CLAUDE_PROJECT_DIR, else the current directory)")
    options.json_output(locate)
    locate.set_defaults(handler=cmd_locate)

    census = sub.add_parser(
        "census", help="count entry, attachment and hook types, versions and bad lines",
        description="Counts entry types, attachment types, system and progress subtypes, hook events, unknown "
                    "types, bad lines and Claude Code versions, so a format change after an upgrade is noticed. "
                    "--strict exits 1 on unknown entry types, unknown hook_* attachment types, bad lines or "
                    "invalid UTF-8 (a truncated last line is only a warning).")
    census.add_argument("paths", nargs="+", metavar="FILE|DIR", help="transcript files, or directories to search for *.jsonl")
    census.add_argument("--strict", action="store_true", help="exit 1 on unknown types or bad lines")
    options.json_output(census)
    census.set_defaults(handler=cmd_census)
