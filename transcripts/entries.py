"""One transcript line as an :class:`Entry`: its kind, stream, hook fields and texts.

Classification (``Entry.kind``, assigned by ``transcripts.classify.make_entry``), following
../shared/spec/claude-code-formats.md §2:

``prompt``
    A ``type: user`` line a person (or an SDK client) submitted: ``promptSource`` is ``typed``
    or ``sdk``, or it is absent and the content is a string or a list of text/image blocks; and
    it is not ``isMeta``, not ``isCompactSummary``/``isVisibleInTranscriptOnly``, holds no
    ``tool_result`` block, and is none of the wrappers below. Slash commands
    (``<command-name>…``) count as prompts (``subtype == "slash_command"``): the person typed
    them and Claude Code runs UserPromptSubmit for them. ``promptSource: "system"`` lines
    (auto-continuation and the like) are prompts too (``prompt_source == "system"``): they
    start a new turn and UserPromptSubmit may fire for them. Sidechain lines are classified the
    same way and told apart by ``is_sidechain``/``stream``. A ``promptSource`` value not in
    {typed, sdk, system} makes the line ``meta``: nobody is known to have typed it.
``tool_result``
    A user line whose content holds a ``tool_result`` block.
``meta``
    ``isMeta`` user lines (slash-command bodies, skill text, ``Caveat:`` lines) and
    ``isVisibleInTranscriptOnly`` lines that are not compact summaries.
``compact_summary``
    ``isCompactSummary`` user lines written after a compaction.
``local_command``, ``task_notification``, ``interrupt``
    User text that Claude Code wrote, not the person: ``<local-command-stdout|stderr|caveat>``
    wrappers, ``<task-notification>`` (a background task finished), ``[Request interrupted by
    user…]``.
``assistant``
    Assistant lines (one content block per line while a response streams).
``injection``
    An ``attachment`` line from a UserPromptSubmit hook that put text into the context:
    ``hook_additional_context`` (``content`` a list of strings, or a string) or ``hook_success``
    with plain stdout (``content``; when that is a ``<persisted-output>`` stub the text falls
    back to ``stdout``). A ``hook_success`` whose stdout is a JSON object is the hook's raw JSON
    output (its context arrives as ``hook_additional_context``), so it is an ``attachment``.
``attachment``
    Every other attachment line (other hook events, ``hook_system_message``, errors,
    ``hook_cancelled``, ``skill_listing``, …).
``progress``
    ``progress`` lines; for ``hook_progress`` the hook is named (``hook_event``, ``hook_name``,
    ``hook_command``) but its output never is.
``system``
    ``system`` lines (``subtype`` = ``stop_hook_summary``, ``compact_boundary``, …).
``metadata``
    The other known types: ``summary``, ``file-history-snapshot``, ``queue-operation``,
    ``last-prompt``, ``mode``, ``permission-mode``, ``ai-title``, ``pr-link``, ``agent-setting``,
    and 2.1.328's ``api-request``, ``api-request-blob``, ``api-request-shape``, ``atis-latch``,
    ``cost-state``, ``tools-used``.
``unknown``
    Any other ``type`` (or none).
"""

from typing import NamedTuple


KNOWN_TYPES = frozenset({
    "user", "assistant", "summary", "system", "file-history-snapshot", "progress", "queue-operation",
    "attachment", "last-prompt", "mode", "permission-mode", "ai-title", "pr-link", "agent-setting",
    # written by 2.1.328 (tests/fixtures/transcripts/v2.1.328-*): request bookkeeping, never a turn
    "api-request", "api-request-blob", "api-request-shape", "atis-latch", "cost-state", "tools-used",
})
METADATA_TYPES = KNOWN_TYPES - {"user", "assistant", "system", "progress", "attachment"}

KNOWN_ATTACHMENT_TYPES = frozenset({
    "hook_success", "hook_additional_context", "hook_non_blocking_error", "hook_blocking_error",
    "hook_error_during_execution", "hook_cancelled", "hook_system_message", "queued_command",
    "skill_listing", "deferred_tools_delta", "task_reminder", "environment", "model", "instructions",
    "invoked_skills", "total_tokens_reminder",
})
INJECTION_ATTACHMENT_TYPES = frozenset({"hook_additional_context", "hook_success"})
UPS = "UserPromptSubmit"

PROMPT = "prompt"
TOOL_RESULT = "tool_result"
META = "meta"
COMPACT_SUMMARY = "compact_summary"
LOCAL_COMMAND = "local_command"
TASK_NOTIFICATION = "task_notification"
INTERRUPT = "interrupt"
ASSISTANT = "assistant"
INJECTION = "injection"
ATTACHMENT = "attachment"
PROGRESS = "progress"
SYSTEM = "system"
METADATA = "metadata"
UNKNOWN = "unknown"

USER_KINDS = frozenset({PROMPT, TOOL_RESULT, META, COMPACT_SUMMARY, LOCAL_COMMAND, TASK_NOTIFICATION, INTERRUPT})

PERSISTED_MARKERS = ("<persisted-output>", "Output too large")
LEGACY_HOOK_TAG = "<user-prompt-submit-hook>"


def wrote_legacy_hook_tag(version):
    """True for a line of a Claude Code that put a UserPromptSubmit hook's output inside
    ``LEGACY_HOOK_TAG`` in the user's line: 1.x (1.0.54 added the hook; 2.0 dropped the tag; see
    docs/learning.md). A 2.x prompt holding the tag was typed so, and keeps its words. A line with no
    version is read as the older form (only 1.x lines were written without one)."""
    if version.__class__ is not str:
        return True
    major = version.split(".", 1)[0]
    return not (major.isdigit() and int(major) >= 2)

MAX_STORED_DIAGNOSTICS = 200


class ToolUse(NamedTuple):
    line: int
    id: str | None
    name: str
    input: object


class Entry(NamedTuple):
    """One transcript line. ``texts`` holds every string the line carries into the model's
    context (used to search for re-sent text); ``text`` is its main text: the prompt, the joined
    tool results, the assistant's text blocks, the injected text. ``raw`` is the parsed object:
    keep entries only as long as you need them, or memory grows with the file.

    A NamedTuple rather than a frozen dataclass: it is built once per line, and a frozen
    dataclass of this width costs several times json.loads of a small line to construct."""

    line: int
    type: str
    kind: str
    uuid: str | None = None
    parent_uuid: str | None = None
    is_sidechain: bool = False
    agent_id: str | None = None
    session_id: str | None = None
    version: str | None = None
    timestamp: str | None = None
    subtype: str | None = None
    hook_event: str | None = None
    hook_name: str | None = None
    hook_command: str | None = None
    text: str = ""
    texts: tuple = ()
    tool_uses: tuple = ()
    prompt_source: str | None = None
    message_id: str | None = None
    persisted_preview: bool = False
    raw: dict | None = None

    @property
    def stream(self):
        """``main`` or ``sidechain`` / ``sidechain:<agentId>``: the conversation this line belongs to."""
        if not self.is_sidechain:
            return "main"
        return f"sidechain:{self.agent_id}" if self.agent_id else "sidechain"

    @property
    def is_injection(self):
        return self.kind == INJECTION


class Diagnostic(NamedTuple):
    line: int
    kind: str       # "bad_line", "invalid_utf8", "truncated_last_line", "not_an_object"
    message: str
