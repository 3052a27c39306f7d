"""The behavioural canary verdict (spec §6.2, §11, §13): did the router's injection, on its own,
change the answer? Pure: transcript entries (``transcripts.entries.Entry``) and facts in, a
``Verdict`` out; ``harness.verdict_cli`` reads the files.

PASS needs all of: the session's first typed prompt is the case's prompt (whitespace
normalised); the router's injection on that prompt carries the fact's slug; the assistant's reply
to it contains an expected phrase and no forbidden one (case-insensitive, whole words).

INCONCLUSIVE (never PASS) when this transcript cannot decide the case, or the fact could have
reached the agent another way:

- the run is not a run of this case: no typed prompt, or the first one is not the case's prompt
  (a later prompt would have been primed by the turns before it); or there is no reply;
- the transcript's Claude Code version cannot show injections (no ``attachment`` lines: up to
  2.1.39 for certain, and 2.1.40-2.1.80 where the first such version is unknown);
- the injection carrying the fact appears only in a sidechain (a subagent's stream), or only
  after the reply had already stated the fact;
- the fact is always loaded: its slug (or its hook text) is in the MEMORY.md the session loaded,
  in the configured ``hot_strip``, or marked ``hot: true``; or that MEMORY.md cannot be read, or
  changed after the session started (then today's file is not the one the session loaded);
- before the reply's first expected phrase: a subagent call (Task/Agent), a web lookup, a tool call
  touching the memory directory, MEMORY.md or the cluster file, or any other entry (a tool
  result, another hook's output, a meta line) that names the fact's slug;
- a forbidden phrase appears only after a negation in its sentence ("you don't need to restart
  the session"): a phrase test cannot tell that from the confabulation, so a person must read it.

FAIL otherwise: a forbidden phrase in the reply (the confabulation, whatever else happened), no
router injection carrying the slug on the first prompt, or no expected phrase in the reply.
Contamination only ever withholds a PASS: a wrong answer stays a FAIL.
"""

import json
from dataclasses import dataclass, field

from canaries.phrases import find_phrases, forbidden_hits, member_line, normalise_prompt
from router.routing.score import parse_header
from transcripts import audit, turns
from transcripts import entries as tr

PASS, FAIL, INCONCLUSIVE = "PASS", "FAIL", "INCONCLUSIVE"
EXIT_CODES = {PASS: 0, FAIL: 1, INCONCLUSIVE: 3}

SUBAGENT_TOOLS = frozenset({"Task", "Agent"})
WEB_TOOLS = frozenset({"WebSearch", "WebFetch", "web_search", "web_fetch"})
# Names that locate the memory store in a tool's input, whatever the tool.
MEMORY_MARKERS = ("memory.md", ".claude/projects/", "memory-layer1-clusters", "memory-router.toml")


@dataclass(frozen=True)
class Evidence:
    line: int | None
    what: str

    def as_dict(self):
        return {"line": self.line, "what": self.what}


@dataclass(frozen=True)
class HotStripEvidence:
    """What is known of the always-loaded surface the session had.

    ``memory_text``: the MEMORY.md read (``None`` if none was found); ``memory_path``; ``changed_after``:
    its modification time is later than the session's first prompt; ``config_hot`` /
    ``flagged_hot``: the configured hot strip and the slugs whose files say ``hot: true``."""

    memory_path: str | None = None
    memory_text: str | None = None
    changed_after: bool = False
    config_hot: tuple = ()
    flagged_hot: tuple = ()


@dataclass(frozen=True)
class Verdict:
    case: str
    verdict: str
    reasons: tuple
    evidence: tuple
    session_id: str | None = None
    version: str | None = None
    details: dict = field(default_factory=dict)

    @property
    def exit_code(self):
        return EXIT_CODES[self.verdict]

    def as_dict(self):
        return {
            "case": self.case,
            "verdict": self.verdict,
            "reasons": list(self.reasons),
            "evidence": [e.as_dict() for e in self.evidence],
            "session_id": self.session_id,
            "claude_code_version": self.version,
            **self.details,
        }


# --------------------------------------------------------------------------- what a tool call names


def _norm_path(text):
    return text.replace("\\", "/").lower()


def _mentions(value, needle):
    if not needle:
        return False
    if isinstance(value, str):
        hay = value
    else:
        try:
            hay = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError):
            hay = str(value)
    return needle.lower() in _norm_path(hay).replace("//", "/")


# --------------------------------------------------------------------------- reading the session


def injection_visibility(turn):
    """``(capability, note)`` from the transcript audit: can this transcript show injections?"""
    return audit.capability_of(turn.versions, turn.saw_attachment)


def _router_injection(injections, slug):
    """``(entry, clusters, member line, hook)`` of the router injection carrying ``slug``; else the
    first router injection with ``None`` for the line and hook; else ``None``."""
    best = None
    for entry in injections:
        clusters = parse_header(entry.text)
        if clusters is None:
            continue
        found = member_line(entry.text, slug)
        if found:
            return entry, clusters, found[0], found[1]
        best = best or (entry, clusters, None, None)
    return best


def _is_router_output(entry):
    """A UserPromptSubmit hook line holding the router's own output (its injection, or the raw
    JSON stdout some versions also record): the way in under test, not another one."""
    if entry.hook_event != tr.UPS or entry.type != "attachment":
        return False
    if parse_header(entry.text or "") is not None:
        return True
    att = entry.raw.get("attachment") if isinstance(entry.raw, dict) else None
    stdout = att.get("stdout") if isinstance(att, dict) else None
    if isinstance(stdout, str) and stdout.strip().startswith("{"):
        try:
            context = json.loads(stdout)["hookSpecificOutput"]["additionalContext"]
        except (ValueError, KeyError, TypeError):
            return False
        return isinstance(context, str) and parse_header(context) is not None
    return False


def _contamination(entries, turn, slug, watch_paths, until_line, router_entry):
    """Events before ``until_line`` through which the fact could have reached the agent: tool
    calls of the first turn (``turn.tool_uses``), and any main-stream line up to then, other than
    the router's own output and the assistant's words, that names the slug
    (``transcripts.turns.find_text``: prompts, tool results, meta lines, attachments)."""
    found = []
    watch = [_norm_path(p).rstrip("/") for p in watch_paths if p]
    for use in turn.tool_uses:
        if until_line is not None and use.line >= until_line:
            continue
        name = use.name
        if name in SUBAGENT_TOOLS:
            found.append(Evidence(use.line, f"subagent call ({name}) before the reply: it may have read memory"))
        elif name in WEB_TOOLS:
            found.append(Evidence(use.line, f"web lookup ({name}) before the reply"))
        elif _mentions(use.input, slug):
            found.append(Evidence(use.line, f"{name} names the fact's slug before the reply"))
        elif any(_mentions(use.input, marker) for marker in MEMORY_MARKERS) or \
                any(_mentions(use.input, path) for path in watch):
            found.append(Evidence(use.line, f"{name} touches the memory store or cluster file before the reply"))
    by_line = {entry.line: entry for entry in entries}
    for hit in turns.find_text(entries, slug):
        if hit.stream != "main" or hit.kind == tr.ASSISTANT or (until_line is not None and hit.line >= until_line):
            continue
        entry = by_line.get(hit.line)
        if entry is None or entry is router_entry or _is_router_output(entry) or entry is turn.prompt:
            continue
        what = {tr.TOOL_RESULT: "a tool result", tr.INJECTION: f"another {entry.hook_event} hook's output",
                tr.ATTACHMENT: f"an attachment ({entry.subtype})", tr.META: "a meta line"}.get(
                    entry.kind, f"a {entry.kind} line")
        found.append(Evidence(hit.line, f"{what} names the fact's slug before the reply"))
    return sorted(found, key=lambda e: e.line)


def _hot_strip_findings(hot, slug, hook):
    """``(status, evidence list)``; status is ``clean``, ``leak`` or ``unknown``."""
    from canaries.memoryindex import memory_index_facts

    leaks = []
    if slug in hot.config_hot:
        leaks.append(Evidence(None, f"{slug} is in the configured hot_strip"))
    if slug in hot.flagged_hot:
        leaks.append(Evidence(None, f"{slug}'s memory file says hot: true"))
    if hot.memory_text is None:
        if leaks:
            return "leak", leaks
        return "unknown", [Evidence(None, "no MEMORY.md found, so the always-loaded surface cannot be checked "
                                          "(pass --memory-dir)")]
    facts = memory_index_facts(hot.memory_text, slug, hook)
    for line in facts["slug_lines"]:
        leaks.append(Evidence(None, f"{hot.memory_path}:{line} names {slug} (always loaded)"))
    for line in facts["hook_lines"]:
        if line not in facts["slug_lines"]:
            leaks.append(Evidence(None, f"{hot.memory_path}:{line} carries the fact's hook text (always loaded)"))
    if leaks:
        return "leak", leaks
    if hot.changed_after:
        return "unknown", [Evidence(None, f"{hot.memory_path} changed after the session started, so it is not "
                                          "the file the session loaded")]
    return "clean", [Evidence(None, f"{slug} absent from {hot.memory_path}"
                                    + (" (slim index)" if facts["slim"] else " (not a slim index)"))]


# --------------------------------------------------------------------------- the verdict


def judge(entries, case, hot=HotStripEvidence(), watch_paths=(), subagent_entries=()):
    """The verdict of one behavioural ``case`` (id, prompt, fact, expect_any, forbid) on a session.

    ``entries``: the main transcript's entries in order, at least up to its second typed prompt
    (``first_turn_entries`` reads just that much); ``subagent_entries``: entries of its subagent
    files. ``watch_paths``: the memory directory and cluster file, whose mention in a tool call
    before the reply counts as another way in."""
    entries = list(entries)
    turn = turns.first_turn(entries)
    slug = case.fact
    evidence = []
    details = {"first_prompt": None, "injection": None, "reply": None, "contamination": [],
               "hot_strip": None, "injections_visible": None}
    session_id = next((e.session_id for e in entries if e.session_id and not e.is_sidechain), None)
    versions = turn.versions if turn else tuple(dict.fromkeys(e.version for e in entries if e.version))
    version = versions[-1] if versions else None

    def verdict(kind, *reasons):
        ordered = sorted(evidence, key=lambda e: (e.line is None, e.line or 0))
        return Verdict(case.id, kind, tuple(reasons), tuple(ordered), session_id, version, details)

    if turn is None:
        return verdict(INCONCLUSIVE, "no typed prompt in the main session: not a run of this case")
    prompt_ok = normalise_prompt(turn.prompt.text) == normalise_prompt(case.prompt)
    details["first_prompt"] = {"line": turn.prompt.line, "matches": prompt_ok, "text": turn.prompt.text[:500]}
    evidence.append(Evidence(turn.prompt.line, "first typed prompt" + ("" if prompt_ok else " (not the case's prompt)")))
    if not prompt_ok:
        return verdict(INCONCLUSIVE, "the first typed prompt is not the case's prompt: not a run of this case "
                                     "(it must be the first prompt of a fresh session)")
    capability, note = injection_visibility(turn)
    details["injections_visible"] = capability
    if capability != audit.RECORDED:
        return verdict(INCONCLUSIVE, note)

    replies = [e for e in turn.assistant_entries if e.text]
    if not replies:
        return verdict(INCONCLUSIVE, "no assistant reply to the prompt in the main session")
    forbidden, negated = {}, {}
    for entry in replies:
        for phrase, is_negated in forbidden_hits(case.forbid, entry.text).items():
            (negated if is_negated else forbidden).setdefault(phrase, entry.line)
    negated = {p: line for p, line in negated.items() if p not in forbidden}
    expected = {}
    for entry in replies:
        for phrase in find_phrases(case.expect_any, entry.text):
            expected.setdefault(phrase, entry.line)
    first_expected = min(expected.values()) if expected else None
    details["reply"] = {"lines": [e.line for e in replies], "expected_found": expected, "forbidden_found": forbidden,
                        "forbidden_negated": negated}
    evidence.extend(Evidence(line, f"reply says forbidden {phrase!r}") for phrase, line in forbidden.items())
    evidence.extend(Evidence(line, f"reply says forbidden {phrase!r}, but negated") for phrase, line in negated.items())
    evidence.extend(Evidence(line, f"reply says expected {phrase!r}") for phrase, line in expected.items())

    router = _router_injection(list(turn.injections) + list(turn.late_injections), slug)
    router_entry = router[0] if router else None
    carried = bool(router and router[2])
    if router:
        details["injection"] = {"line": router_entry.line, "clusters": list(router[1]), "member_line": router[2],
                                "parent_matches": router_entry.parent_uuid == turn.prompt.uuid,
                                "late": router_entry in turn.late_injections}
        evidence.append(Evidence(router_entry.line, f"router injection ({', '.join(router[1])}) "
                                                    + ("carries " if carried else "without ") + slug))
    side = [e for e in list(turn.sidechain_injections) + [e for e in subagent_entries if e.kind == tr.INJECTION]
            if member_line(e.text, slug)]

    if forbidden:
        reasons = [f"the reply gives the confabulation: {', '.join(repr(p) for p in forbidden)}"]
        if not carried:
            reasons.append(f"and no router injection on the first prompt carried {slug}")
        return verdict(FAIL, *reasons)
    if not carried:
        if side:
            evidence.extend(Evidence(e.line, f"injection carrying {slug} in a sidechain ({e.stream})") for e in side)
            return verdict(INCONCLUSIVE, f"the injection carrying {slug} appears only in a sidechain, "
                                         "not on the session's first prompt")
        what = "routed, but not to the fact" if router else "no router injection at all"
        return verdict(FAIL, f"the router did not deliver {slug} on the first prompt ({what}): the hook is "
                             "missing, failing open, or the prompt misroutes (`memory-router route` shows why)")
    if not expected:
        return verdict(FAIL, "the reply has none of the expected phrases "
                             f"({', '.join(repr(p) for p in case.expect_any)}) although {slug} was injected")

    hot_status, hot_evidence = _hot_strip_findings(hot, slug, router[3])
    details["hot_strip"] = {"status": hot_status, "evidence": [e.what for e in hot_evidence]}
    evidence.extend(hot_evidence)
    other_ways = _contamination(entries, turn, slug, watch_paths, first_expected, router_entry)
    details["contamination"] = [e.as_dict() for e in other_ways]
    evidence.extend(other_ways)
    reasons = []
    if negated:
        reasons.append("the reply mentions " + ", ".join(f"{p!r} (line {line})" for p, line in negated.items())
                       + " only after a negation; a phrase test cannot tell that from the confabulation, so "
                         "read the reply and judge by hand")
    if hot_status == "leak":
        reasons.append(f"{slug} is always loaded (hot strip / MEMORY.md): passive priming explains the answer")
    elif hot_status == "unknown":
        reasons.append("cannot rule out passive priming: " + hot_evidence[0].what)
    if other_ways:
        reasons.append(f"the fact could have arrived another way before the answer ({len(other_ways)} event(s): "
                       + "; ".join(f"line {e.line}: {e.what}" for e in other_ways[:3]) + ")")
    if router_entry.line > first_expected:
        # The reply stated the fact before the injection was recorded, so the injection cannot be
        # what the reply drew on.
        evidence.append(Evidence(router_entry.line, f"the injection carrying {slug} comes after the reply's "
                                                    f"first expected phrase (line {first_expected})"))
        reasons.append(f"the reply stated the fact (line {first_expected}) before the injection carrying {slug} "
                       f"(line {router_entry.line}): it did not come from the router")
    if reasons:
        return verdict(INCONCLUSIVE, *reasons)
    return verdict(PASS, f"the router injected {slug} on the first prompt and the reply states the documented "
                         f"fact ({', '.join(repr(p) for p in expected)}) with no other way in")


def first_turn_entries(entries):
    """The entries up to (not including) the main session's second prompt: all a verdict reads,
    so a long session is never held whole in memory."""
    out, prompts = [], 0
    for entry in entries:
        if entry.kind == tr.PROMPT and not entry.is_sidechain:
            prompts += 1
            if prompts == 2:
                break
        out.append(entry)
    return out


def record_line(result, transcript, date):
    """One JSONL record of a verdict (``date`` an ISO-8601 UTC string)."""
    return {
        "date": date,
        "case": result.case,
        "verdict": result.verdict,
        "claude_code_version": result.version,
        "session_id": result.session_id,
        "transcript": transcript,
        "reasons": list(result.reasons),
        "evidence": [e.as_dict() for e in result.evidence],
    }
