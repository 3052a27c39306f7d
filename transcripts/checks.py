"""The checks of the injection audit (spec §3's five, and (f) about the router itself; defined in
``transcripts.audit``'s docstring), each judged from one stream's assembled state
(``transcripts.streams.StreamAuditor``)."""

from transcripts.auditmodel import CHECK_NAMES, FAIL, MAX_EVIDENCE, NA, PASS, UNKNOWN, Check, Evidence
from transcripts.entries import INJECTION


def unknown(stream, check_id, note):
    progress = ""
    if stream.hook_progress:
        lines = ", ".join(str(e.line) for e in stream.hook_progress[:10])
        more = f" and {stream.hook_progress.total - 10:,} more" if stream.hook_progress.total > 10 else ""
        progress = f"; a UserPromptSubmit hook ran (progress lines {lines}{more}) but its output is not recorded"
    return Check(check_id, CHECK_NAMES[check_id], UNKNOWN, "unknown: " + note + progress,
                 tuple(stream.hook_progress[:10]))


def check_a(stream, count, recorded, note):
    if not recorded:
        return unknown(stream, "a", note)
    if stream.duplicates:
        total = stream.duplicates.total
        return Check("a", CHECK_NAMES["a"], FAIL,
                     f"{total:,} attachment entr{'y repeats' if total == 1 else 'ies repeat'} "
                     f"an injection{_listed(stream.duplicates)}", tuple(stream.duplicates))
    if count == 0:
        return Check("a", CHECK_NAMES["a"], NA, "no UserPromptSubmit injection recorded in this stream")
    return Check("a", CHECK_NAMES["a"], PASS, f"{count} injection(s), each in exactly one attachment entry")


def check_b(stream, count, recorded, note):
    if not recorded:
        return unknown(stream, "b", note)
    if stream.resent:
        evidence = tuple(sorted(stream.resent, key=lambda e: e.line))
        return Check("b", CHECK_NAMES["b"], FAIL,
                     f"re-sent or misplaced injection text at line(s) {evidence_lines(evidence)}"
                     f"{_listed(stream.resent)}", evidence)
    if count == 0:
        return Check("b", CHECK_NAMES["b"], NA, "no UserPromptSubmit injection recorded in this stream")
    prompts = stream.prompts_with_injections
    return Check("b", CHECK_NAMES["b"], PASS,
                 f"{count} injection(s) on {prompts} prompt(s), each hanging off its own prompt; "
                 "no later line repeats an injected text")


def check_c(stream, recorded, note):
    if not stream.sentinel:
        return Check("c", CHECK_NAMES["c"], NA, "no --sentinel given")
    hits = stream.sentinel_hits
    evidence = tuple(Evidence(line, kind.replace("_", " ") + (" at a prompt" if anchored else ""))
                     for (line, kind, anchored) in hits[:MAX_EVIDENCE])
    if not hits:
        if stream.is_sidechain:
            return Check("c", CHECK_NAMES["c"], NA, "the sentinel does not appear in this sidechain")
        if not recorded:
            return unknown(stream, "c", note + "; the sentinel does not appear")
        return Check("c", CHECK_NAMES["c"], FAIL, "the sentinel appears nowhere: the hook did not inject it")
    if hits.total > 1:
        return Check("c", CHECK_NAMES["c"], FAIL,
                     f"the sentinel appears in {hits.total} entries (lines {evidence_lines(evidence)}), not once", evidence)
    line, kind, anchored = hits[0]
    if not anchored and not recorded:
        # No injection can be recorded here, so "not an injection" says nothing about the sentinel.
        return Check("c", CHECK_NAMES["c"], UNKNOWN,
                     f"unknown: {note}; the sentinel appears once, at line {line} ({evidence[0].note})",
                     evidence)
    if anchored or stream.is_sidechain:
        return Check("c", CHECK_NAMES["c"], PASS, f"the sentinel appears once, at line {line} ({evidence[0].note})",
                     evidence)
    where = ("an injection attached to no prompt" if kind == INJECTION
             else f"a line of kind {kind.replace('_', ' ')}")
    return Check("c", CHECK_NAMES["c"], FAIL,
                 f"the sentinel appears once, at line {line}, but in {where}, not an injection at a prompt",
                 evidence)


def check_d(stream, count, recorded, note):
    if not recorded:
        return unknown(stream, "d", note)
    if stream.oversize:
        return Check("d", CHECK_NAMES["d"], FAIL,
                     f"{stream.oversize.total:,} injection(s) over the 10,000-character hook output cap"
                     f"{_listed(stream.oversize)}",
                     tuple(stream.oversize))
    if count == 0:
        return Check("d", CHECK_NAMES["d"], NA, "no UserPromptSubmit injection recorded in this stream")
    return Check("d", CHECK_NAMES["d"], PASS, f"largest injection {stream.largest:,} characters (cap 10,000)")


def check_e(stream, others):
    if stream.crossings:
        return Check("e", CHECK_NAMES["e"], FAIL,
                     "an injection's parentUuid chain crosses between the main session and a sidechain",
                     tuple(stream.crossings))
    if stream.is_sidechain:
        return Check("e", CHECK_NAMES["e"], PASS,
                     "this sidechain is audited on its own; its injections are not counted in the main session")
    if others:
        return Check("e", CHECK_NAMES["e"], PASS,
                     "audited apart from " + "; ".join(others) + "; their injections are not counted here")
    return Check("e", CHECK_NAMES["e"], NA, "no sidechain or subagent transcript")


def check_f(stream, recorded, note):
    """(f): a router member line sent again in one context (no ``compact_boundary`` between) is the
    router repeating itself. Apart from (b), which is about the client re-sending one injection."""
    if not recorded:
        return unknown(stream, "f", note)
    if stream.repeated:
        evidence = tuple(sorted(stream.repeated, key=lambda e: e.line))
        return Check("f", CHECK_NAMES["f"], FAIL,
                     f"the router sent member lines this context already held, at line(s) "
                     f"{evidence_lines(evidence)}{_listed(stream.repeated)}", evidence)
    if stream.router_injections == 0:
        return Check("f", CHECK_NAMES["f"], NA, "no router injection at a prompt in this stream")
    return Check("f", CHECK_NAMES["f"], PASS,
                 f"{stream.router_injections} router injection(s); no member line sent twice in one context")


def _listed(bucket):
    """``; the first N listed`` when a Bounded bucket holds fewer than it counted."""
    return f" (the first {len(bucket)} of {bucket.total:,} listed)" if bucket.total > len(bucket) else ""


def evidence_lines(evidence):
    shown = [str(e.line) for e in evidence[:12]]
    return ", ".join(shown) + (", \u2026" if len(evidence) > 12 else "")
