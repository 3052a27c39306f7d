"""What the injection audit reports (``transcripts.audit``): the check names and statuses, the
per-stream and per-file results, and whether a transcript can show injections at all."""

from dataclasses import dataclass

from transcripts.entries import (
    ASSISTANT,
    ATTACHMENT,
    COMPACT_SUMMARY,
    INJECTION,
    INTERRUPT,
    LOCAL_COMMAND,
    TASK_NOTIFICATION,
    TOOL_RESULT,
    USER_KINDS,
)
from transcripts.reader import version_tuple

SIZE_LIMIT = 10_000
MIN_RESEND_CHARS = 24
PROBE_CHARS = 16
KEY_CHARS = 64
RECENT_TURN_ENTRIES = 512
MAX_EVIDENCE = 200
# Memory stays flat in the file's size (issue 11): what grows with the file is counted, and only
# this much of it is kept. A prompt is followed (its uuid resolvable, its injections attachable)
# while it is among the last LIVE_PROMPTS; the first MAX_LISTED_PROMPTS are listed in the result.
LIVE_PROMPTS = 512
MAX_LISTED_PROMPTS = 2000
MAX_INJECTIONS_PER_PROMPT = 200
MAX_NOTES = 200
# Non-turn lines (attachments, progress, system) followed back from an injection to its prompt;
# an injection this many lines into a turn without any assistant line is no longer "at" it.
MAX_PASSTHROUGH = 10_000

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
    # Not the client's doing: the session-aware router (issue 13) sends a session each member line
    # once per context, so a line it sends again before a compaction is the router repeating itself.
    "f": "the router repeats no member line in one context",
}

SEARCHED_KINDS = USER_KINDS | {ASSISTANT, ATTACHMENT, INJECTION}
# Lines after which an injection no longer sits "at its prompt".
TURN_ADVANCING = {ASSISTANT, TOOL_RESULT, COMPACT_SUMMARY, LOCAL_COMMAND, TASK_NOTIFICATION, INTERRUPT}


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
    injections_not_listed: int = 0   # past MAX_INJECTIONS_PER_PROMPT: counted, not kept


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
    # Totals: ``prompts``, ``unanchored``, ``hook_progress`` and ``notes`` list at most a bounded
    # number; these count every one (None: the same as the list's length).
    prompt_count: int | None = None
    injection_count: int | None = None
    unanchored_count: int | None = None
    hook_progress_count: int | None = None

    @property
    def prompts_not_listed(self):
        return (self.prompt_count or len(self.prompts)) - len(self.prompts)

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
