"""The injection audit: does each UserPromptSubmit injection enter the conversation once, at its
prompt, and never again? (spec §3). Pure functions over the reader's entries, in one streaming pass.

Each conversation in a file is audited on its own: the main session, and every sidechain
(``isSidechain`` lines, grouped by ``agentId``). Subagent files (``<session>/subagents/*.jsonl``)
are separate files and so separate audits. For every stream: the prompts in order, and for each
prompt the injections attached to it, with the cluster ids the router's header names
(``router.routing.score.parse_header``), line count and characters. Then five checks, each ``pass``,
``fail``, ``n/a`` (nothing to check) or ``unknown`` (this transcript cannot show it), with the
file line numbers that are the evidence. (a)-(e) are about the client and the transcript; (f) is
about the router:

(a) each injection appears in exactly one attachment entry: the same text attached twice for the
    same prompt, or attached again with no new prompt, fails;
(b) nothing is re-sent: each injection hangs off its own new prompt (its ``parentUuid`` chain,
    followed through attachment/system/progress/meta lines, reaches a prompt; when there is no
    chain to follow, it must come after the latest prompt and before that turn's first assistant
    or tool-result line), at most one per hook per prompt, and never the same text twice for one
    prompt, wherever its chain points; and no later user, assistant or
    attachment line contains an injected text (compared by content, not position). A hook's text
    injected again for a new prompt is the hook's doing, not a re-send: see (f) for the router's;
(c) with a sentinel, it appears in exactly one entry, and that entry is an injection at a
    prompt (in a sidechain: at most once, anywhere; absent there is ``n/a``);
(d) no injection is over 10,000 characters, or was replaced by Claude Code's preview stub;
(e) sidechains are audited on their own: no injection's ``parentUuid`` chain crosses into
    another stream, and sidechain injections are never counted in the main session;
(f) the router repeats no member line in one context: Claude Code re-sends every earlier
    injection with every later call until the context is compacted, and the session-aware router
    (issue 13) sends a session each member line (``- slug — hook``) once per context; a router
    injection at a prompt that holds a member line (or a whole router text) already injected with
    no ``compact_boundary`` between fails. After a compaction it is sent again legitimately.

A transcript written before Claude Code recorded hook output as attachment lines (2.1.39 and
older: progress lines naming the hook at most) cannot show injections: (a), (b), (d) and (f) are then
``unknown``, never ``pass``, as is (c) when the sentinel is absent or found once outside an
injection (a sentinel found more than once still fails), and the audit says so.

Lines searched for re-sent text and the sentinel: every user line (prompts, tool results, meta,
summaries), assistant line (text, thinking, tool-use inputs) and attachment line, since those are
what later API calls carry. ``progress`` lines (UI status, including copies of subagent
messages), ``system`` lines and metadata lines are not. An assistant line that repeats an
injected text counts: the text then rides in the history of every later call all the same.
Texts shorter than ``MIN_RESEND_CHARS`` are not searched for, being too common to attribute.
"""

from transcripts.auditmodel import (  # noqa: F401 - the audit's result types and statuses, importable from here
    ATTACHMENTS_BY,
    CHECK_NAMES,
    FAIL,
    LAST_PRE_ATTACHMENT,
    MIN_RESEND_CHARS,
    NA,
    NOT_RECORDED,
    PASS,
    RECORDED,
    SEARCHED_KINDS,
    SIZE_LIMIT,
    UNCERTAIN,
    UNKNOWN,
    AuditResult,
    Check,
    Evidence,
    Injection,
    Prompt,
    StreamAudit,
    capability_of,
)
from transcripts.entries import Diagnostic
from transcripts.reader import version_tuple
from transcripts.streams import Session


def audit_session(entries, sentinel=None, *, path=None, role=None, subagent_files=()):
    """Audit one transcript's entries (any iterable of reader Entries, consumed once).

    ``entries`` may be a :class:`transcripts.reader.TranscriptReader`; its line counts and
    warnings are then part of the result. ``subagent_files`` names subagent transcripts audited
    separately (they are mentioned in the main stream's check (e), never merged).
    """
    session = Session(sentinel or None)
    versions = {}
    last_version = None
    saw_attachment = False
    selector_line = None
    main = None
    # The per-line work here is kept to a few comparisons: the audit must keep up with a bare
    # json.loads loop (benchmarks/transcript_audit.py).
    feed_main = None
    for entry in entries:
        if entry.is_sidechain:
            session.auditor(entry).feed(entry, session)
        else:
            if feed_main is None:
                main = session.auditor(entry)
                feed_main = main.feed
            feed_main(entry, session)
        version = entry.version
        if version != last_version and version is not None:
            versions[version] = None
            last_version = version
        if entry.type == "attachment":
            saw_attachment = True
            if selector_line is None and entry.subtype == SELECTOR_ATTACHMENT:
                selector_line = entry.line
    capability, note = capability_of(versions, saw_attachment)
    names = list(session.streams)
    results = []
    for name, auditor in session.streams.items():
        others = []
        if name == "main":
            side = [n for n in names if n != "main"]
            if side:
                others.append(f"{len(side)} sidechain stream(s) in this file ({', '.join(side)})")
            if subagent_files:
                others.append(f"{len(subagent_files)} subagent file(s)")
        results.append(auditor.finish(capability, note, others))
    if role is None:
        role = "subagent" if path is not None and _is_subagent_path(path) else "session"
    read = entries.summary() if hasattr(entries, "summary") else None
    warnings = tuple(getattr(entries, "diagnostics", ()))
    if selector_line is not None:
        warnings += (selector_warning(selector_line),)
    ordered = sorted(versions, key=lambda v: version_tuple(v) or (0,))
    return AuditResult(str(path) if path is not None else None, role, tuple(ordered), capability, note,
                       tuple(results), read, warnings, tuple(str(p) for p in subagent_files))


# Claude Code's own per-prompt memory selector leaves this attachment when it ran (observed on
# 2.1.328; ../shared/spec/claude-code-2.1.328-plugins-and-selector.md).
SELECTOR_ATTACHMENT = "relevant_memories"


def selector_warning(line):
    """The audit's warning that the built-in selector ran in the session beside the router."""
    return Diagnostic(line, "memory_selector",
                      "Claude Code's own memory selector ran in this session (a relevant_memories attachment): "
                      "beside memory-router every prompt pays for both; turn one off (unset CLAUDE_MEMORY_STORES "
                      "in your environment and settings env, or memory-router uninstall)")


def _is_subagent_path(path):
    import pathlib

    return pathlib.Path(path).parent.name == "subagents"


def audit_path(path, sentinel=None, subagent_files=()):
    """Read and audit one transcript file. Raises InputError (exit 2) if it cannot be read at all."""
    from transcripts.reader import read_session

    return audit_session(read_session(path), sentinel, path=path, subagent_files=subagent_files)


def sentinel_check(entries, sentinel, stream="main"):
    """Check (c) alone: the ``Check`` for ``sentinel`` in one stream of a transcript.

    ``entries`` is a path or an iterable of reader Entries. Returns None when the stream is absent."""
    if isinstance(entries, (str, bytes)) or hasattr(entries, "__fspath__"):
        result = audit_path(entries, sentinel)
    else:
        result = audit_session(entries, sentinel)
    return result.check("c", stream)


def _injection_dict(injection):
    return {
        "line": injection.line, "uuid": injection.uuid, "parent_uuid": injection.parent_uuid,
        "prompt_line": injection.prompt_line, "anchor": injection.anchor, "anchor_note": injection.anchor_note,
        "attachment_type": injection.attachment_type, "hook_event": injection.hook_event,
        "hook_name": injection.hook_name, "command": injection.command,
        "router": injection.cluster_ids is not None,
        "cluster_ids": list(injection.cluster_ids) if injection.cluster_ids is not None else None,
        "lines": injection.lines, "member_lines": injection.member_lines, "chars": injection.chars,
        "persisted_preview": injection.persisted_preview, "sha256": injection.sha256, "preview": injection.preview,
    }


def _check_dict(check):
    return {"id": check.id, "name": check.name, "status": check.status, "message": check.message,
            "evidence": [{"line": e.line, "note": e.note} for e in check.evidence]}


def result_to_dict(result):
    """The ``transcript audit --json`` shape of one file (documented in docs/transcripts.md)."""
    return {
        "path": result.path,
        "role": result.role,
        "status": result.status,
        "versions": list(result.versions),
        "capability": result.capability,
        "can_show_injections": result.can_show_injections,
        "capability_note": result.capability_note,
        "read": result.read,
        "warnings": [{"line": d.line, "kind": d.kind, "message": d.message} for d in result.warnings],
        "subagent_files": list(result.subagent_files),
        "streams": [
            {
                "stream": s.stream, "sidechain": s.is_sidechain, "agent_id": s.agent_id,
                "session_id": s.session_id, "first_line": s.first_line, "entries": s.entries,
                "status": s.status,
                "prompt_count": s.prompt_count if s.prompt_count is not None else len(s.prompts),
                "injection_count": s.injection_count if s.injection_count is not None else len(s.injections),
                "prompts_not_listed": s.prompts_not_listed,
                "unanchored_count": s.unanchored_count if s.unanchored_count is not None else len(s.unanchored),
                "hook_progress_count": s.hook_progress_count if s.hook_progress_count is not None
                else len(s.hook_progress),
                "prompts": [
                    {"line": p.line, "uuid": p.uuid, "source": p.source, "form": p.form, "chars": p.chars,
                     "preview": p.preview, "injections": [_injection_dict(i) for i in p.injections],
                     "injections_not_listed": p.injections_not_listed}
                    for p in s.prompts
                ],
                "unanchored_injections": [_injection_dict(i) for i in s.unanchored],
                "hook_progress": [{"line": e.line, "hook": e.note} for e in s.hook_progress],
                "notes": list(s.notes),
                "checks": [_check_dict(c) for c in s.checks],
            }
            for s in result.streams
        ],
    }
