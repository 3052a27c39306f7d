"""The injection audit: does each UserPromptSubmit injection enter the conversation once, at its
prompt, and never again? (spec §3). Pure functions over the reader's entries, in one streaming pass.

Each conversation in a file is audited on its own: the main session, and every sidechain
(``isSidechain`` lines, grouped by ``agentId``). Subagent files (``<session>/subagents/*.jsonl``)
are separate files and so separate audits. For every stream: the prompts in order, and for each
prompt the injections attached to it, with the cluster ids the router's header names
(``router.score.parse_header``), line count and characters. Then five checks, each ``pass``,
``fail``, ``n/a`` (nothing to check) or ``unknown`` (this transcript cannot show it), with the
file line numbers that are the evidence:

(a) each injection appears in exactly one attachment entry: the same text attached twice for the
    same prompt, or attached again with no new prompt, fails;
(b) nothing is re-sent: each injection hangs off its own new prompt (its ``parentUuid`` chain,
    followed through attachment/system/progress/meta lines, reaches a prompt; when there is no
    chain to follow, it must come after the latest prompt and before that turn's first assistant
    or tool-result line), at most one per hook per prompt, and never the same text twice for one
    prompt, wherever its chain points; and no later user, assistant or
    attachment line contains an injected text (compared by content, not position). The same
    text injected again for a new prompt that asks about the same topic again is legitimate;
(c) with a sentinel, it appears in exactly one entry, and that entry is an injection at a
    prompt (in a sidechain: at most once, anywhere; absent there is ``n/a``);
(d) no injection is over 10,000 characters, or was replaced by Claude Code's preview stub;
(e) sidechains are audited on their own: no injection's ``parentUuid`` chain crosses into
    another stream, and sidechain injections are never counted in the main session.

A transcript written before Claude Code recorded hook output as attachment lines (2.1.39 and
older: progress lines naming the hook at most) cannot show injections: (a), (b) and (d) are then
``unknown``, never ``pass``, as is (c) when the sentinel is absent or found once outside an
injection (a sentinel found more than once still fails), and the audit says so.

Lines searched for re-sent text and the sentinel: every user line (prompts, tool results, meta,
summaries), assistant line (text, thinking, tool-use inputs) and attachment line, since those are
what later API calls carry. ``progress`` lines (UI status, including copies of subagent
messages), ``system`` lines and metadata lines are not. An assistant line that repeats an
injected text counts: the text then rides in the history of every later call all the same.
Texts shorter than ``MIN_RESEND_CHARS`` are not searched for, being too common to attribute.
"""

import hashlib
from collections import OrderedDict
from dataclasses import dataclass, field

from router.score import parse_header
from transcripts.reader import (
    ASSISTANT,
    ATTACHMENT,
    COMPACT_SUMMARY,
    INJECTION,
    INTERRUPT,
    LEGACY_HOOK_TAG,
    LOCAL_COMMAND,
    PROGRESS,
    PROMPT,
    TASK_NOTIFICATION,
    TOOL_RESULT,
    UPS,
    USER_KINDS,
    version_tuple,
)

SIZE_LIMIT = 10_000
MIN_RESEND_CHARS = 24
_PROBE_CHARS = 16
_KEY_CHARS = 64
_RECENT_TURN_ENTRIES = 512
_MAX_EVIDENCE = 200

PASS, FAIL, NA, UNKNOWN = "pass", "fail", "n/a", "unknown"

RECORDED, NOT_RECORDED, UNCERTAIN = "recorded", "not-recorded", "uncertain"
LAST_PRE_ATTACHMENT = (2, 1, 39)     # spotter fixtures: progress lines only
ATTACHMENTS_BY = (2, 1, 81)          # spec §2.3: attachment lines first seen between 2.1.40 and 2.1.81

CHECK_NAMES = {
    "a": "each injection in exactly one attachment entry",
    "b": "nothing re-sent: each injection hangs off its own new prompt",
    "c": "sentinel appears exactly once, at its prompt",
    "d": "no injection over 10,000 characters",
    "e": "sidechains audited on their own",
}

SEARCHED_KINDS = USER_KINDS | {ASSISTANT, ATTACHMENT, INJECTION}
# Lines after which an injection no longer sits "at its prompt".
_TURN_ADVANCING = {ASSISTANT, TOOL_RESULT, COMPACT_SUMMARY, LOCAL_COMMAND, TASK_NOTIFICATION, INTERRUPT}


@dataclass(frozen=True)
class Evidence:
    line: int
    note: str


@dataclass(frozen=True)
class Check:
    id: str
    name: str
    status: str
    message: str
    evidence: tuple = ()


@dataclass(frozen=True)
class Injection:
    line: int
    uuid: str | None
    parent_uuid: str | None
    attachment_type: str | None
    hook_event: str | None
    hook_name: str | None
    command: str | None
    prompt_line: int | None       # the prompt it is attached to, or None
    anchor: str | None            # "parent" (parentUuid chain), "order" (fallback) or None
    anchor_note: str
    cluster_ids: tuple | None     # from the router's header; None when not a router injection
    chars: int
    lines: int
    member_lines: int
    persisted_preview: bool
    sha256: str
    preview: str


@dataclass(frozen=True)
class Prompt:
    line: int
    uuid: str | None
    source: str | None            # promptSource ("typed", "sdk", "system") or None (older versions)
    form: str | None              # "text" or "slash_command"
    chars: int
    preview: str
    injections: tuple = ()


@dataclass(frozen=True)
class StreamAudit:
    stream: str                   # "main", "sidechain" or "sidechain:<agentId>"
    is_sidechain: bool
    agent_id: str | None
    session_id: str | None
    first_line: int
    entries: int
    prompts: tuple
    unanchored: tuple             # injections attached to no prompt
    hook_progress: tuple          # Evidence: UserPromptSubmit progress lines (hook named, output not)
    notes: tuple
    checks: tuple

    @property
    def injections(self):
        found = [inj for prompt in self.prompts for inj in prompt.injections] + list(self.unanchored)
        return tuple(sorted(found, key=lambda inj: inj.line))

    @property
    def status(self):
        """fail if a check failed; unknown if none failed but one could not be shown (a transcript
        that cannot show injections never reads as a pass); else pass."""
        statuses = {check.status for check in self.checks}
        if FAIL in statuses:
            return FAIL
        return UNKNOWN if UNKNOWN in statuses else PASS

    def check(self, check_id):
        return next(check for check in self.checks if check.id == check_id)


@dataclass(frozen=True)
class AuditResult:
    path: str | None
    role: str                     # "session" or "subagent"
    versions: tuple
    capability: str               # "recorded", "not-recorded" or "uncertain"
    capability_note: str
    streams: tuple
    read: dict | None = None      # the reader's line counts, when the entries came from a file
    warnings: tuple = ()          # reader Diagnostics
    subagent_files: tuple = ()

    @property
    def status(self):
        statuses = {stream.status for stream in self.streams}
        if FAIL in statuses:
            return FAIL
        return UNKNOWN if UNKNOWN in statuses else PASS

    @property
    def can_show_injections(self):
        return self.capability == RECORDED

    def stream(self, name="main"):
        return next((stream for stream in self.streams if stream.stream == name), None)

    def check(self, check_id, stream="main"):
        found = self.stream(stream)
        return found.check(check_id) if found else None


def capability_of(versions, saw_attachment):
    """Whether a transcript can show injections: (capability, a sentence saying why)."""
    if saw_attachment:
        return RECORDED, "hook output is recorded as attachment lines in this transcript"
    parsed = sorted(v for v in (version_tuple(v) for v in versions) if v)
    newest = ".".join(map(str, parsed[-1])) if parsed else None
    if parsed and parsed[-1] >= ATTACHMENTS_BY:
        return RECORDED, (f"Claude Code {newest} records hook output as attachment lines; "
                          "none is in this transcript")
    if not parsed:
        return UNCERTAIN, ("this transcript cannot show injections: it names no Claude Code version "
                           "and has no attachment lines")
    if parsed[-1] <= LAST_PRE_ATTACHMENT:
        return NOT_RECORDED, (f"this transcript cannot show injections: Claude Code {newest} predates "
                              "attachment lines and records a hook run at most as a progress line naming "
                              "the hook, never the text it injected")
    return UNCERTAIN, (f"this transcript cannot show injections: Claude Code {newest} is from the range "
                       "(2.1.40-2.1.80) where attachment lines began, and this file has none")


def _digest(text):
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _preview(text, limit=80):
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "\u2026"


def _hook_label(hook_id):
    if hook_id == ("router",):
        return "the memory router"
    name, command = hook_id
    return f"{name} hook `{command}`"


class _PromptState:
    __slots__ = ("entry_line", "uuid", "source", "form", "chars", "preview", "injections", "hooks")

    def __init__(self, entry):
        self.entry_line = entry.line
        self.uuid = entry.uuid
        self.source = entry.prompt_source
        self.form = entry.subtype
        self.chars = len(entry.text)
        self.preview = _preview(entry.text)
        self.injections = []
        self.hooks = {}

    def freeze(self):
        return Prompt(self.entry_line, self.uuid, self.source, self.form, self.chars, self.preview,
                      tuple(self.injections))


class _StreamAuditor:
    """Accumulates one stream's state; memory grows with prompts and injections, not lines."""

    def __init__(self, entry, sentinel):
        self.name = entry.stream
        self.is_sidechain = entry.is_sidechain
        self.agent_id = entry.agent_id
        self.session_id = entry.session_id
        self.first_line = entry.line
        self.sentinel = sentinel
        self.entries = 0
        self.prompts = []
        self.prompt_by_uuid = {}
        self.latest = None
        self.advanced_at = None          # first turn-advancing line since the latest prompt
        self.passthrough = {}            # uuid -> (parent_uuid, line), since the latest prompt
        self.recent = OrderedDict()      # uuid -> (kind, line) of turn-advancing lines, bounded
        self.unanchored = []
        # Injected texts are kept as digests, so memory grows with the number of injections only.
        self.by_digest = {}              # sha256 -> [(prompt index or None, line)]
        self.probes = {}                 # first chars -> ({first _KEY_CHARS: [(length, sha256)]}, [short texts])
        self.last_line_of = {}           # sha256 -> line of its latest injection
        self.duplicates = []
        self.resent = []
        self.crossings = []
        self.sentinel_hits = []
        self.hook_progress = []
        self.notes = []
        self.largest = 0
        self.oversize = []

    # -- lookups used to follow parentUuid chains, also from other streams
    def lookup(self, uuid):
        index = self.prompt_by_uuid.get(uuid)
        if index is not None:
            return ("prompt", index, self.prompts[index].entry_line)
        hit = self.passthrough.get(uuid)
        if hit is not None:
            return ("pass", hit[0], hit[1])
        hit = self.recent.get(uuid)
        if hit is not None:
            return ("turn", hit[0], hit[1])
        return None

    def feed(self, entry, session):
        self.entries += 1
        kind = entry.kind
        if kind == PROMPT:
            self.prompts.append(_PromptState(entry))
            if entry.uuid:
                self.prompt_by_uuid[entry.uuid] = len(self.prompts) - 1
            self.latest = len(self.prompts) - 1
            self.advanced_at = None
            self.passthrough = {}
            if LEGACY_HOOK_TAG in entry.text:
                self.notes.append(f"line {entry.line}: legacy {LEGACY_HOOK_TAG} text inside the prompt "
                                  "(Claude Code 1.0.x); not audited as an injection")
        elif kind in _TURN_ADVANCING:
            if self.advanced_at is None and self.latest is not None:
                self.advanced_at = (kind, entry.line)
            if entry.uuid:
                self.recent[entry.uuid] = (kind, entry.line)
                if len(self.recent) > _RECENT_TURN_ENTRIES:
                    self.recent.popitem(last=False)
        elif entry.uuid:
            self.passthrough[entry.uuid] = (entry.parent_uuid, entry.line)

        if kind == INJECTION:
            self._injection(entry, session)
        elif kind == PROGRESS:
            if entry.hook_event == UPS:
                self.hook_progress.append(Evidence(entry.line, entry.hook_name or UPS))
            return
        elif kind == ATTACHMENT and entry.hook_event == UPS and entry.subtype in (
                "hook_cancelled", "hook_non_blocking_error", "hook_blocking_error", "hook_error_during_execution"):
            why = " (timed out: its context was discarded)" if entry.raw and (entry.raw.get("attachment") or {}).get("timedOut") else ""
            self.notes.append(f"line {entry.line}: UserPromptSubmit {entry.subtype}{why}")
        if (self.probes or self.sentinel) and kind in SEARCHED_KINDS and entry.texts:
            self._search(entry, _digest(entry.text) if kind == INJECTION else None)

    def _anchor(self, entry, session):
        """(prompt index or None, "parent"/"order"/None, note)."""
        found = session.resolve(self, entry.parent_uuid)
        if found[0] == "prompt":
            return found[1], "parent", f"parentUuid leads to the prompt at line {self.prompts[found[1]].entry_line}"
        if found[0] == "turn":
            return None, None, f"its parentUuid leads to the {found[1].replace('_', ' ')} at line {found[2]}, not to a prompt"
        if found[0] == "cross":
            self.crossings.append(Evidence(entry.line, f"parentUuid leads into stream {found[1]} (line {found[2]})"))
        if self.latest is None:
            return None, None, "no prompt comes before it"
        if self.advanced_at is not None:
            kind, line = self.advanced_at
            return None, None, (f"no parentUuid chain to a prompt, and the turn of the prompt at line "
                                f"{self.prompts[self.latest].entry_line} had already gone on "
                                f"({kind.replace('_', ' ')} at line {line})")
        return self.latest, "order", "no parentUuid chain to follow; it follows the prompt in file order"

    def _injection(self, entry, session):
        body = entry.text
        index, how, note = self._anchor(entry, session)
        clusters = parse_header(body)
        lines = body.split("\n")
        prompt = self.prompts[index] if index is not None else None
        injection = Injection(
            line=entry.line, uuid=entry.uuid, parent_uuid=entry.parent_uuid, attachment_type=entry.subtype,
            hook_event=entry.hook_event, hook_name=entry.hook_name, command=entry.hook_command,
            prompt_line=prompt.entry_line if prompt else None, anchor=how, anchor_note=note,
            cluster_ids=tuple(clusters) if clusters is not None else None, chars=len(body), lines=len(lines),
            member_lines=sum(1 for line in lines if line.startswith("- ")),
            persisted_preview=entry.persisted_preview,
            sha256=_digest(body), preview=_preview(body),
        )
        self.largest = max(self.largest, len(body))
        if len(body) > SIZE_LIMIT:
            self.oversize.append(Evidence(entry.line, f"{len(body):,} characters: Claude Code replaces hook "
                                                      "output over 10,000 characters by a preview and a file path"))
        elif entry.persisted_preview:
            self.oversize.append(Evidence(entry.line, "Claude Code replaced this output by a <persisted-output> "
                                                      "preview: the model saw only the preview"))
        digest = injection.sha256
        earlier = self.by_digest.get(digest)
        resent_here = False
        if earlier:
            same_prompt = [line for (i, line) in earlier if i == index and index is not None]
            if index is None or same_prompt:
                first = (same_prompt or [earlier[0][1]])[0]
                why = (f"for the same prompt (line {prompt.entry_line})" if same_prompt
                       else "with no new prompt")
                self._add(self.duplicates, Evidence(entry.line, f"repeats the text injected at line {first} {why}"))
                if same_prompt and prompt is not None:
                    # Compared by content: whatever its parentUuid says, the same text attached again
                    # without a new prompt is a re-send for (b) as well (anchorless ones are added below).
                    self._add(self.resent, Evidence(entry.line, f"the text injected at line {first} attached again "
                                                                f"{why}: a re-send"))
                    resent_here = True
            else:
                self.notes.append(f"line {entry.line}: the same text as line {earlier[-1][1]} injected again for "
                                  f"a new prompt (line {prompt.entry_line}): allowed")
        if prompt is None:
            self._add(self.resent, Evidence(entry.line, f"not attached to a new prompt: {note}"))
            self.unanchored.append(injection)
        else:
            hook_id = (entry.hook_name, entry.hook_command) if entry.hook_command else (
                ("router",) if clusters is not None else None)
            if hook_id is not None and hook_id in prompt.hooks:
                if not resent_here:
                    self._add(self.resent, Evidence(entry.line, f"a second injection from {_hook_label(hook_id)} for "
                                                                f"the prompt at line {prompt.entry_line} (first at line "
                                                                f"{prompt.hooks[hook_id]})"))
            elif hook_id is not None:
                prompt.hooks[hook_id] = entry.line
            prompt.injections.append(injection)
        self.by_digest.setdefault(digest, []).append((index, entry.line))
        self.last_line_of[digest] = entry.line
        if len(body) >= MIN_RESEND_CHARS:
            # Two levels, so the cost stays linear in the text searched, not in the number of injections:
            # one find() per distinct short probe (router injections share one), then a dict lookup of
            # the text at each hit against the injected texts' longer prefixes.
            by_key, short = self.probes.setdefault(body[:_PROBE_CHARS], ({}, []))
            if len(body) >= _KEY_CHARS:
                group = by_key.setdefault(body[:_KEY_CHARS], [])
                if (len(body), digest) not in group:
                    group.append((len(body), digest))
            elif body not in short:
                short.append(body)

    def _search(self, entry, own_digest):
        texts = entry.texts
        found = None
        for probe, (by_key, short) in self.probes.items():
            for text in texts:
                pos = text.find(probe)
                while pos != -1:
                    hits = [(length, digest) for (length, digest) in by_key.get(text[pos:pos + _KEY_CHARS], ())
                            if _digest(text[pos:pos + length]) == digest]
                    hits += [(len(body), _digest(body)) for body in short if text.startswith(body, pos)]
                    for _length, digest in hits:
                        if digest != own_digest:
                            found = found if found is not None else {}
                            found[digest] = None
                    pos = text.find(probe, pos + 1)
        if found:
            for digest in found:
                self._add(self.resent, Evidence(
                    entry.line, f"this {entry.kind.replace('_', ' ')} line repeats the text injected at line "
                                f"{self.last_line_of[digest]}"))
        sentinel = self.sentinel
        if sentinel:
            for text in texts:
                if sentinel in text:
                    # _injection ran first: an injection that found no prompt is the last unanchored one.
                    anchored = entry.kind == INJECTION and not (
                        self.unanchored and self.unanchored[-1].line == entry.line)
                    self.sentinel_hits.append((entry.line, entry.kind, anchored))
                    break

    def _add(self, bucket, evidence):
        if len(bucket) < _MAX_EVIDENCE:
            bucket.append(evidence)

    # -- the checks
    def finish(self, capability, capability_note, others):
        prompts = tuple(p.freeze() for p in self.prompts)
        count = sum(len(p.injections) for p in prompts) + len(self.unanchored)
        recorded = capability == RECORDED
        note = "this transcript cannot show injections"
        checks = [
            self._check_a(count, recorded, note),
            self._check_b(count, recorded, note),
            self._check_c(recorded, note),
            self._check_d(count, recorded, note),
            self._check_e(others),
        ]
        return StreamAudit(self.name, self.is_sidechain, self.agent_id, self.session_id, self.first_line,
                           self.entries, prompts, tuple(self.unanchored), tuple(self.hook_progress),
                           tuple(self.notes), tuple(checks))

    def _unknown(self, check_id, note):
        progress = ""
        if self.hook_progress:
            lines = ", ".join(str(e.line) for e in self.hook_progress[:10])
            progress = f"; a UserPromptSubmit hook ran (progress lines {lines}) but its output is not recorded"
        return Check(check_id, CHECK_NAMES[check_id], UNKNOWN, "unknown: " + note + progress,
                     tuple(self.hook_progress[:10]))

    def _check_a(self, count, recorded, note):
        if not recorded:
            return self._unknown("a", note)
        if self.duplicates:
            return Check("a", CHECK_NAMES["a"], FAIL,
                         f"{len(self.duplicates)} attachment entr{'y repeats' if len(self.duplicates) == 1 else 'ies repeat'} "
                         "an injection", tuple(self.duplicates))
        if count == 0:
            return Check("a", CHECK_NAMES["a"], NA, "no UserPromptSubmit injection recorded in this stream")
        return Check("a", CHECK_NAMES["a"], PASS, f"{count} injection(s), each in exactly one attachment entry")

    def _check_b(self, count, recorded, note):
        if not recorded:
            return self._unknown("b", note)
        if self.resent:
            evidence = tuple(sorted(self.resent, key=lambda e: e.line))
            return Check("b", CHECK_NAMES["b"], FAIL,
                         f"re-sent or misplaced injection text at line(s) {_lines(evidence)}", evidence)
        if count == 0:
            return Check("b", CHECK_NAMES["b"], NA, "no UserPromptSubmit injection recorded in this stream")
        prompts = sum(1 for p in self.prompts if p.injections)
        return Check("b", CHECK_NAMES["b"], PASS,
                     f"{count} injection(s) on {prompts} prompt(s), each hanging off its own prompt; "
                     "no later line repeats an injected text")

    def _check_c(self, recorded, note):
        if not self.sentinel:
            return Check("c", CHECK_NAMES["c"], NA, "no --sentinel given")
        hits = self.sentinel_hits
        evidence = tuple(Evidence(line, kind.replace("_", " ") + (" at a prompt" if anchored else ""))
                         for (line, kind, anchored) in hits[:_MAX_EVIDENCE])
        if not hits:
            if self.is_sidechain:
                return Check("c", CHECK_NAMES["c"], NA, "the sentinel does not appear in this sidechain")
            if not recorded:
                return self._unknown("c", note + "; the sentinel does not appear")
            return Check("c", CHECK_NAMES["c"], FAIL, "the sentinel appears nowhere: the hook did not inject it")
        if len(hits) > 1:
            return Check("c", CHECK_NAMES["c"], FAIL,
                         f"the sentinel appears in {len(hits)} entries (lines {_lines(evidence)}), not once", evidence)
        line, kind, anchored = hits[0]
        if not anchored and not recorded:
            # No injection can be recorded here, so "not an injection" says nothing about the sentinel.
            return Check("c", CHECK_NAMES["c"], UNKNOWN,
                         f"unknown: {note}; the sentinel appears once, at line {line} ({evidence[0].note})",
                         evidence)
        if anchored or self.is_sidechain:
            return Check("c", CHECK_NAMES["c"], PASS, f"the sentinel appears once, at line {line} ({evidence[0].note})",
                         evidence)
        where = ("an injection attached to no prompt" if kind == INJECTION
                 else f"a line of kind {kind.replace('_', ' ')}")
        return Check("c", CHECK_NAMES["c"], FAIL,
                     f"the sentinel appears once, at line {line}, but in {where}, not an injection at a prompt",
                     evidence)

    def _check_d(self, count, recorded, note):
        if not recorded:
            return self._unknown("d", note)
        if self.oversize:
            return Check("d", CHECK_NAMES["d"], FAIL,
                         f"{len(self.oversize)} injection(s) over the 10,000-character hook output cap",
                         tuple(self.oversize))
        if count == 0:
            return Check("d", CHECK_NAMES["d"], NA, "no UserPromptSubmit injection recorded in this stream")
        return Check("d", CHECK_NAMES["d"], PASS, f"largest injection {self.largest:,} characters (cap 10,000)")

    def _check_e(self, others):
        if self.crossings:
            return Check("e", CHECK_NAMES["e"], FAIL,
                         "an injection's parentUuid chain crosses between the main session and a sidechain",
                         tuple(self.crossings))
        if self.is_sidechain:
            return Check("e", CHECK_NAMES["e"], PASS,
                         "this sidechain is audited on its own; its injections are not counted in the main session")
        if others:
            return Check("e", CHECK_NAMES["e"], PASS,
                         "audited apart from " + "; ".join(others) + "; their injections are not counted here")
        return Check("e", CHECK_NAMES["e"], NA, "no sidechain or subagent transcript")


def _lines(evidence):
    shown = [str(e.line) for e in evidence[:12]]
    return ", ".join(shown) + (", \u2026" if len(evidence) > 12 else "")


class _Session:
    """The streams of one file, so a parentUuid chain can be followed and cross-checked."""

    def __init__(self, sentinel):
        self.sentinel = sentinel
        self.streams = {}

    def auditor(self, entry):
        found = self.streams.get(entry.stream)
        if found is None:
            found = self.streams[entry.stream] = _StreamAuditor(entry, self.sentinel)
        return found

    def resolve(self, stream, uuid):
        """("prompt", index) / ("turn", kind, line) / ("cross", stream, line) / ("missing",)."""
        hops = 0
        while uuid and hops < 10_000:
            hops += 1
            hit = stream.lookup(uuid)
            if hit is None:
                for other in self.streams.values():
                    if other is not stream:
                        crossed = other.lookup(uuid)
                        if crossed is not None:
                            return ("cross", other.name, crossed[2])
                return ("missing",)
            if hit[0] == "prompt":
                return ("prompt", hit[1])
            if hit[0] == "turn":
                return ("turn", hit[1], hit[2])
            uuid = hit[1]
        return ("missing",)


def audit_session(entries, sentinel=None, *, path=None, role=None, subagent_files=()):
    """Audit one transcript's entries (any iterable of reader Entries, consumed once).

    ``entries`` may be a :class:`transcripts.reader.TranscriptReader`; its line counts and
    warnings are then part of the result. ``subagent_files`` names subagent transcripts audited
    separately (they are mentioned in the main stream's check (e), never merged).
    """
    session = _Session(sentinel or None)
    versions = {}
    saw_attachment = False
    main = None
    for entry in entries:
        if entry.is_sidechain:
            session.auditor(entry).feed(entry, session)
        else:
            if main is None:
                main = session.auditor(entry)
            main.feed(entry, session)
        version = entry.version
        if version is not None:
            versions[version] = versions.get(version, 0) + 1
        if entry.type == "attachment":
            saw_attachment = True
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
    ordered = sorted(versions, key=lambda v: version_tuple(v) or (0,))
    return AuditResult(str(path) if path is not None else None, role, tuple(ordered), capability, note,
                       tuple(results), read, warnings, tuple(str(p) for p in subagent_files))


def _is_subagent_path(path):
    import pathlib

    return pathlib.Path(path).parent.name == "subagents"


def audit_path(path, sentinel=None, subagent_files=()):
    """Read and audit one transcript file. Raises InputError (exit 2) if it cannot be read at all."""
    from transcripts.reader import read_session

    return audit_session(read_session(path), sentinel, path=path, subagent_files=subagent_files)


# --------------------------------------------------------------------------- helpers for other checks


@dataclass(frozen=True)
class Occurrence:
    line: int
    kind: str
    stream: str


def find_text(entries, needle):
    """Every searched line (see the module docstring) whose text contains ``needle``, in order."""
    found = []
    for entry in entries:
        if entry.kind in SEARCHED_KINDS and any(needle in text for text in entry.texts):
            found.append(Occurrence(entry.line, entry.kind, entry.stream))
    return tuple(found)


@dataclass(frozen=True)
class Turn:
    """One prompt of the main session and what followed it, up to the next prompt.

    ``injections`` are the UserPromptSubmit injection entries after the prompt and before the
    turn's first assistant or tool-result line; ``late_injections`` came after that (re-sends).
    This is order-based; ``audit_session`` follows parentUuid chains for the checks.
    """

    prompt: object                          # reader Entry
    injections: tuple = ()
    late_injections: tuple = ()
    assistant_entries: tuple = ()
    tool_uses: tuple = ()                   # reader ToolUse (line, id, name, input), in order
    sidechain_injections: tuple = ()        # injections on sidechain lines met during the turn
    sidechain_lines: int = 0
    end_line: int = 0
    saw_attachment: bool = False            # any attachment line up to the end of this turn
    versions: tuple = field(default=())

    @property
    def reply_text(self):
        return "\n".join(entry.text for entry in self.assistant_entries if entry.text)

    @property
    def capability(self):
        return capability_of(self.versions, self.saw_attachment)


def iter_turns(entries):
    """The main session's turns, streamed: each is yielded when the next prompt (or the end) arrives."""
    state = None
    saw_attachment = False
    versions = []

    def close(current):
        return Turn(current["prompt"], tuple(current["inj"]), tuple(current["late"]), tuple(current["asst"]),
                    tuple(current["tools"]), tuple(current["side_inj"]), current["side"], current["end"],
                    saw_attachment, tuple(versions))

    for entry in entries:
        if entry.type == "attachment":
            saw_attachment = True
        if entry.version and entry.version not in versions:
            versions.append(entry.version)
        if entry.is_sidechain:
            if state is not None:
                state["side"] += 1
                state["end"] = entry.line
                if entry.kind == INJECTION:
                    state["side_inj"].append(entry)
            continue
        if entry.kind == PROMPT:
            if state is not None:
                yield close(state)
            state = {"prompt": entry, "inj": [], "late": [], "asst": [], "tools": [], "side_inj": [], "side": 0,
                     "advanced": False, "end": entry.line}
            continue
        if state is None:
            continue
        state["end"] = entry.line
        if entry.kind == INJECTION:
            (state["late"] if state["advanced"] else state["inj"]).append(entry)
        elif entry.kind == ASSISTANT:
            state["advanced"] = True
            state["asst"].append(entry)
            state["tools"].extend(entry.tool_uses)
        elif entry.kind in _TURN_ADVANCING:
            state["advanced"] = True
    if state is not None:
        yield close(state)


def first_turn(entries):
    """The first prompt of the main session with its injections, reply and tool calls; or None.

    Reads only as far as the second prompt."""
    turns = iter_turns(entries)
    try:
        return next(turns, None)
    finally:
        turns.close()


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
                "prompts": [
                    {"line": p.line, "uuid": p.uuid, "source": p.source, "form": p.form, "chars": p.chars,
                     "preview": p.preview, "injections": [_injection_dict(i) for i in p.injections]}
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
