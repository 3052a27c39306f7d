"""Stream assembly for the injection audit: one pass over a transcript's entries builds, per
conversation stream, its prompts, the injections hanging off each (their ``parentUuid`` chains
followed, across streams too), what was re-sent, and where the sentinel was met. The checks
(``transcripts.checks``) then judge that state."""

from router.routing.score import parse_header
from transcripts.auditmodel import (
    LIVE_PROMPTS,
    MAX_INJECTIONS_PER_PROMPT,
    MAX_LISTED_PROMPTS,
    MAX_NOTES,
    MAX_PASSTHROUGH,
    RECORDED,
    SEARCHED_KINDS,
    SIZE_LIMIT,
    TURN_ADVANCING,
    Evidence,
    Injection,
    Prompt,
    StreamAudit,
    RECENT_TURN_ENTRIES,
)
from transcripts.bounded import Bounded
from transcripts.checks import check_a, check_b, check_c, check_d, check_e, check_f
from transcripts.entries import ATTACHMENT, INJECTION, LEGACY_HOOK_TAG, META, PROGRESS, PROMPT, SYSTEM, UPS
from transcripts.injected import SEPARATOR, InjectedTexts, text_digest


def _preview(text, limit=80):
    # Collapse the whitespace of a head of the text, not of all of it (injections run to 10,000
    # characters): enough when the head collapses to more than the limit.
    head = text[: limit * 4]
    flat = " ".join(head.split())
    if len(flat) <= limit and len(head) < len(text):
        flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "\u2026"


def _hook_label(hook_id):
    if hook_id == ("router",):
        return "the memory router"
    name, command = hook_id
    return f"{name} hook `{command}`"


class _PromptState:
    __slots__ = ("index", "entry_line", "uuid", "source", "form", "chars", "preview", "injections", "hooks")

    def __init__(self, entry, index):
        self.index = index
        self.entry_line = entry.line
        self.uuid = entry.uuid
        self.source = entry.prompt_source
        self.form = entry.subtype
        self.hooks = {}
        # Prompts retire in order and only the first MAX_LISTED_PROMPTS are frozen into the result:
        # a later one keeps counts only, and none of its injections' records is built.
        if index < MAX_LISTED_PROMPTS:
            self.chars = len(entry.text)
            self.preview = _preview(entry.text)
            self.injections = Bounded(MAX_INJECTIONS_PER_PROMPT)
        else:
            self.chars = self.preview = None
            self.injections = Bounded(0)

    def freeze(self):
        return Prompt(self.entry_line, self.uuid, self.source, self.form, self.chars, self.preview,
                      tuple(self.injections), self.injections.total - len(self.injections))


def _injection_record(entry, prompt, anchor, anchor_note, clusters, digest):
    body = entry.text
    return Injection(
        line=entry.line, uuid=entry.uuid, parent_uuid=entry.parent_uuid, attachment_type=entry.subtype,
        hook_event=entry.hook_event, hook_name=entry.hook_name, command=entry.hook_command,
        prompt_line=prompt.entry_line if prompt else None, anchor=anchor, anchor_note=anchor_note,
        cluster_ids=tuple(clusters) if clusters is not None else None, chars=len(body),
        # Counted, not split: the lines, and those starting "- " (the first, or after a newline).
        lines=body.count("\n") + 1, member_lines=body.count("\n- ") + body.startswith("- "),
        persisted_preview=entry.persisted_preview, sha256=digest, preview=_preview(body),
    )


class StreamAuditor:
    """Accumulates one stream's state. Memory is bounded in the file's size: it grows with the
    number of distinct injected texts (each must be remembered to find it re-sent later), never
    with lines, prompts or re-injections, which are counted (see auditmodel's bounds)."""

    def __init__(self, entry, sentinel):
        self.name = entry.stream
        self.is_sidechain = entry.is_sidechain
        self.agent_id = entry.agent_id
        self.session_id = entry.session_id
        self.first_line = entry.line
        self.sentinel = sentinel
        self.entries = 0
        self.live = {}                   # prompt index -> _PromptState, the last LIVE_PROMPTS prompts
        self.listed = []                 # frozen Prompts, the first MAX_LISTED_PROMPTS
        self.prompt_count = 0
        self.injection_count = 0
        self.prompts_with_injections = 0
        self.prompt_by_uuid = {}         # uuid -> prompt index, live prompts only
        self.latest = None
        self.advanced_at = None          # first turn-advancing line since the latest prompt
        self.passthrough = {}            # uuid -> (parent_uuid, line), since the latest prompt
        # uuid -> (kind, line) of turn-advancing lines: the last RECENT_TURN_ENTRIES at least, in two
        # generations (cheaper per line than an OrderedDict trimmed one entry at a time).
        self.recent = {}
        self.recent_before = {}
        self.unanchored = Bounded(MAX_LISTED_PROMPTS)
        self.last_unanchored_line = None
        # Injected texts are kept as digests, so memory grows with distinct injected texts only.
        self.injected = InjectedTexts(separator_safe=not (sentinel and SEPARATOR in sentinel))
        self.duplicates = Bounded()
        self.resent = Bounded()
        # Check (f): router member lines sent again in one context, and the router injections seen.
        self.repeated = Bounded()
        self.router_injections = 0
        self.last_router_line = None
        self.crossings = Bounded()
        self.sentinel_hits = Bounded()
        self.hook_progress = Bounded()
        self.notes = Bounded(MAX_NOTES)
        self.largest = 0
        self.oversize = Bounded()

    def prompt_line(self, index):
        state = self.live.get(index)
        return state.entry_line if state is not None else None

    # -- lookups used to follow parentUuid chains, also from other streams
    def lookup(self, uuid):
        index = self.prompt_by_uuid.get(uuid)
        if index is not None:
            return ("prompt", index, self.live[index].entry_line)
        hit = self.passthrough.get(uuid)
        if hit is not None:
            return ("pass", hit[0], hit[1])
        hit = self.recent.get(uuid) or self.recent_before.get(uuid)
        if hit is not None:
            return ("turn", hit[0], hit[1])
        return None

    def _new_prompt(self, entry):
        index = self.prompt_count
        self.prompt_count += 1
        self.live[index] = _PromptState(entry, index)
        if entry.uuid:
            self.prompt_by_uuid[entry.uuid] = index
        if len(self.live) > LIVE_PROMPTS:
            oldest = next(iter(self.live))
            self._retire(self.live.pop(oldest))
        return index

    def _retire(self, state):
        if state.uuid and self.prompt_by_uuid.get(state.uuid) == state.index:
            del self.prompt_by_uuid[state.uuid]
        if len(self.listed) < MAX_LISTED_PROMPTS and state.index == len(self.listed):
            self.listed.append(state.freeze())

    def feed(self, entry, session):
        self.entries += 1
        kind = entry.kind
        if kind in TURN_ADVANCING:
            # The commonest lines (assistant, tool results); every one of them is searched.
            if self.advanced_at is None and self.latest is not None:
                self.advanced_at = (kind, entry.line)
            uuid = entry.uuid
            if uuid:
                recent = self.recent
                recent[uuid] = (kind, entry.line)
                if len(recent) >= RECENT_TURN_ENTRIES:
                    self.recent_before, self.recent = recent, {}
            texts = entry.texts
            if texts and (self.sentinel or self.injected.probes):
                self._search(entry, texts, None)
            return
        if kind == PROMPT:
            self.latest = self._new_prompt(entry)
            self.advanced_at = None
            self.passthrough = {}
            if LEGACY_HOOK_TAG in entry.text:
                self.notes.add(f"line {entry.line}: legacy {LEGACY_HOOK_TAG} text inside the prompt "
                               "(Claude Code 1.0.x); not audited as an injection")
        else:
            uuid = entry.uuid
            if uuid and len(self.passthrough) < MAX_PASSTHROUGH:
                self.passthrough[uuid] = (entry.parent_uuid, entry.line)

        own_digest = None
        if kind == INJECTION:
            own_digest = self._injection(entry, session)
        elif kind == META:
            if entry.text.lstrip().startswith(LEGACY_HOOK_TAG):
                self.notes.add(f"line {entry.line}: legacy {LEGACY_HOOK_TAG} user line (Claude Code 1.0.x's "
                               "record of the hook's output); not audited as an injection")
        elif kind == SYSTEM:
            if entry.subtype == "compact_boundary":
                self.injected.compacted()
            return
        elif kind == PROGRESS:
            if entry.hook_event == UPS:
                self.hook_progress.add(Evidence(entry.line, entry.hook_name or UPS))
            return
        elif kind == ATTACHMENT and entry.hook_event == UPS and entry.subtype in (
                "hook_cancelled", "hook_non_blocking_error", "hook_blocking_error", "hook_error_during_execution"):
            why = " (timed out: its context was discarded)" if entry.raw and (entry.raw.get("attachment") or {}).get("timedOut") else ""
            self.notes.add(f"line {entry.line}: UserPromptSubmit {entry.subtype}{why}")
        if (self.sentinel or self.injected.probes) and kind in SEARCHED_KINDS:
            texts = entry.texts
            if texts:
                self._search(entry, texts, own_digest)

    def _anchor(self, entry, session):
        """(prompt index or None, "parent"/"order"/None, note)."""
        found = session.resolve(self, entry.parent_uuid)
        if found[0] == "prompt":
            return found[1], "parent", f"parentUuid leads to the prompt at line {self.prompt_line(found[1])}"
        if found[0] == "turn":
            return None, None, f"its parentUuid leads to the {found[1].replace('_', ' ')} at line {found[2]}, not to a prompt"
        if found[0] == "cross":
            self.crossings.add(Evidence(entry.line, f"parentUuid leads into stream {found[1]} (line {found[2]})"))
        if self.latest is None:
            return None, None, "no prompt comes before it"
        if self.advanced_at is not None:
            kind, line = self.advanced_at
            return None, None, (f"no parentUuid chain to a prompt, and the turn of the prompt at line "
                                f"{self.prompt_line(self.latest)} had already gone on "
                                f"({kind.replace('_', ' ')} at line {line})")
        return self.latest, "order", "no parentUuid chain to follow; it follows the prompt in file order"

    def _injection(self, entry, session):
        body = entry.text
        line = entry.line
        index, how, note = self._anchor(entry, session)
        clusters = parse_header(body)
        prompt = self.live.get(index) if index is not None else None
        self.injection_count += 1
        if len(body) > self.largest:
            self.largest = len(body)
        if len(body) > SIZE_LIMIT:
            self.oversize.add(Evidence(line, f"{len(body):,} characters: Claude Code replaces hook "
                                             "output over 10,000 characters by a preview and a file path"))
        elif entry.persisted_preview:
            self.oversize.add(Evidence(line, "Claude Code replaced this output by a <persisted-output> "
                                             "preview: the model saw only the preview"))
        digest = text_digest(body)
        earlier = self.injected.get(digest)
        resent_here = False
        if earlier is not None:
            # A dict lookup, not a scan of every earlier injection of the text: linear in the file.
            same_prompt = earlier.by_prompt.get(index) if index is not None else None
            if index is None or same_prompt is not None:
                first = same_prompt if same_prompt is not None else earlier.first_line
                why = (f"for the same prompt (line {prompt.entry_line})" if same_prompt is not None
                       else "with no new prompt")
                self.duplicates.offer(lambda: Evidence(line, f"repeats the text injected at line {first} {why}"))
                if same_prompt is not None and prompt is not None:
                    # Compared by content: whatever its parentUuid says, the same text attached again
                    # without a new prompt is a re-send for (b) as well (anchorless ones are added below).
                    self.resent.offer(lambda: Evidence(line, f"the text injected at line {first} attached "
                                                             f"again {why}: a re-send"))
                    resent_here = True
            elif clusters is None:
                self.notes.offer(lambda: f"line {line}: the same text as line {earlier.last_line} injected again "
                                         f"for a new prompt (line {prompt.entry_line}): allowed")
        if clusters is not None and prompt is not None:
            self.router_injections += 1
            self.last_router_line = line
            if not resent_here:
                self._member_lines_again(line, body)
        if prompt is None:
            self.resent.offer(lambda: Evidence(line, f"not attached to a new prompt: {note}"))
            self.unanchored.offer(_injection_record, entry, prompt, how, note, clusters, digest)
            self.last_unanchored_line = line
        else:
            hook_id = (entry.hook_name, entry.hook_command) if entry.hook_command else (
                ("router",) if clusters is not None else None)
            if hook_id is not None and hook_id in prompt.hooks:
                if not resent_here:
                    self.resent.offer(lambda: Evidence(line, f"a second injection from {_hook_label(hook_id)} "
                                                             f"for the prompt at line {prompt.entry_line} (first "
                                                             f"at line {prompt.hooks[hook_id]})"))
            elif hook_id is not None:
                prompt.hooks[hook_id] = line
            if not prompt.injections.total:
                self.prompts_with_injections += 1
            prompt.injections.offer(_injection_record, entry, prompt, how, note, clusters, digest)
        self.injected.remember(body, digest, line, index if prompt is not None else None,
                               router=clusters is not None)
        return digest

    def _member_lines_again(self, line, body):
        """Flag router member lines this context already holds: check (f), the router repeating itself."""
        # The header line is one of the lines, and never starts with "- ".
        again = self.injected.members_again(body.split("\n"), line)
        if again:
            named = ", ".join(f"{slug} (line {first})" for slug, first in again[:5])
            more = f" and {len(again) - 5} more" if len(again) > 5 else ""
            self.repeated.add(Evidence(line, f"{len(again)} member line(s) already injected in this context "
                                             f"with no compaction between: {named}{more}: the router repeated itself"))

    def _search(self, entry, texts, own_digest):
        injected = self.injected
        # One find() per probe over the texts joined, not one per text: most lines hold no probe.
        # The separator cannot be part of a match unless an injected text or the sentinel holds
        # it; then each text is searched alone.
        if len(texts) == 1 or not injected.separator_safe:
            haystacks = texts
        else:
            haystacks = (SEPARATOR.join(texts),)
        if injected.probes:
            found = injected.find(haystacks, own_digest)
            if found:
                # A router injection at a prompt is the hook's own output: an earlier router text
                # inside it is the router repeating itself (f), not the client re-sending (b).
                own_router_line = entry.kind == INJECTION and entry.line == self.last_router_line
                for digest in found:
                    if own_router_line and injected[digest].router:
                        self.repeated.add(Evidence(entry.line, f"this router injection repeats the router text "
                                                               f"injected at line {injected[digest].last_line}"))
                        continue
                    self.resent.add(Evidence(
                        entry.line, f"this {entry.kind.replace('_', ' ')} line repeats the text injected at line "
                                    f"{injected[digest].last_line}"))
        sentinel = self.sentinel
        if sentinel:
            for text in haystacks:
                if sentinel in text:
                    # _injection ran first: an injection that found no prompt is the last unanchored one.
                    anchored = entry.kind == INJECTION and self.last_unanchored_line != entry.line
                    self.sentinel_hits.add((entry.line, entry.kind, anchored))
                    break

    # -- the checks (transcripts.checks) over what was assembled
    def finish(self, capability, capability_note, others):
        for state in list(self.live.values()):
            self._retire(state)
        self.live = {}
        prompts = tuple(self.listed)
        count = self.injection_count
        recorded = capability == RECORDED
        note = "this transcript cannot show injections"
        checks = [
            check_a(self, count, recorded, note),
            check_b(self, count, recorded, note),
            check_c(self, recorded, note),
            check_d(self, count, recorded, note),
            check_e(self, others),
            check_f(self, recorded, note),
        ]
        notes = list(self.notes)
        if self.notes.total > len(self.notes):
            notes.append(f"{self.notes.total - len(self.notes):,} more notes like these are not listed")
        return StreamAudit(self.name, self.is_sidechain, self.agent_id, self.session_id, self.first_line,
                           self.entries, prompts, tuple(self.unanchored), tuple(self.hook_progress),
                           tuple(notes), tuple(checks), self.prompt_count, self.injection_count,
                           self.unanchored.total, self.hook_progress.total)


class Session:
    """The streams of one file, so a parentUuid chain can be followed and cross-checked."""

    def __init__(self, sentinel):
        self.sentinel = sentinel
        self.streams = {}

    def auditor(self, entry):
        found = self.streams.get(entry.stream)
        if found is None:
            found = self.streams[entry.stream] = StreamAuditor(entry, self.sentinel)
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
