"""One transcript line as an :class:`Entry`: its kind, stream, hook fields and texts.

Classification (``Entry.kind``), following ../shared/spec/claude-code-formats.md §2:

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

import json
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

# Text Claude Code itself writes into user lines; none of it was typed.
_WRAPPER_KINDS = (
    ("<local-command-stdout>", LOCAL_COMMAND),
    ("<local-command-stderr>", LOCAL_COMMAND),
    ("<local-command-caveat>", LOCAL_COMMAND),
    ("<task-notification>", TASK_NOTIFICATION),
    ("[Request interrupted by user", INTERRUPT),
    # 1.0.x's own line for a UserPromptSubmit hook's output: flagged isVisibleInTranscriptOnly when
    # written, rewritten without the flag (as a list of text blocks) on --resume; never typed.
    ("<user-prompt-submit-hook>", META),
)
_PROMPT_SOURCES = frozenset({"typed", "sdk", "system"})
PERSISTED_MARKERS = ("<persisted-output>", "Output too large")
LEGACY_HOOK_TAG = "<user-prompt-submit-hook>"

MAX_STORED_DIAGNOSTICS = 200
_ATTACHMENT_BOOKKEEPING_KEYS = frozenset({"type", "hookName", "hookEvent", "toolUseID", "command"})


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


def _strings(value, out, depth=0):
    """Every string inside ``value`` (dicts, lists), in order."""
    # ``__class__ is``: json.loads makes exact str/dict/list, and this runs for most values of
    # most lines.
    cls = value.__class__
    if cls is str:
        if value:
            out.append(value)
    elif depth < 12:
        if cls is dict:
            for item in value.values():
                if item.__class__ is str:
                    if item:
                        out.append(item)
                else:
                    _strings(item, out, depth + 1)
        elif cls is list:
            for item in value:
                if item.__class__ is str:
                    if item:
                        out.append(item)
                else:
                    _strings(item, out, depth + 1)
        elif isinstance(value, (dict, list)):  # a subclass, from a caller other than json.loads
            for item in (value.values() if isinstance(value, dict) else value):
                _strings(item, out, depth + 1)


def _block_texts(content, out):
    """Strings of a user or tool_result ``content`` (a string, or a list of blocks)."""
    if isinstance(content, str):
        if content:
            out.append(content)
        return
    if not isinstance(content, list):
        return
    for block in content:
        if isinstance(block, str):
            if block:
                out.append(block)
        elif isinstance(block, dict):
            kind = block.get("type")
            if kind == "text":
                text = block.get("text")
                if isinstance(text, str) and text:
                    out.append(text)
            elif kind == "tool_result":
                _block_texts(block.get("content"), out)


def _join(parts):
    if not parts:
        return ""
    if len(parts) == 1:
        return parts[0]
    return "\n".join(parts)


def _is_persisted_stub(text):
    return text.lstrip().startswith(PERSISTED_MARKERS)


def _looks_like_json_object(text):
    stripped = text.strip()
    if not stripped.startswith("{"):
        return False
    try:
        return isinstance(json.loads(stripped), dict)
    except (ValueError, RecursionError):
        return False


def _classify_user(obj, message):
    content = message.get("content") if isinstance(message, dict) else None
    if obj.get("isCompactSummary"):
        return COMPACT_SUMMARY, None
    if content.__class__ is list:
        for block in content:
            if block.__class__ is dict and block.get("type") == "tool_result":
                return TOOL_RESULT, None
    elif isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
        return TOOL_RESULT, None
    if obj.get("isMeta") or obj.get("isVisibleInTranscriptOnly"):
        return META, None
    source = obj.get("promptSource")
    if source is not None and (source.__class__ is not str or source not in _PROMPT_SOURCES):
        # A source we have not seen: record it, but a line nobody typed must not anchor injections.
        return META, None
    if isinstance(content, str):
        head = content.lstrip()[:40]
    elif isinstance(content, list):
        first = next((b for b in content if isinstance(b, dict) and b.get("type") == "text"), None)
        text = first.get("text") if first else None
        head = text.lstrip()[:40] if isinstance(text, str) else ""
    else:
        return META, None
    for marker, kind in _WRAPPER_KINDS:
        if head.startswith(marker):
            return kind, None
    form = "slash_command" if ("<command-name>" in head or "<command-message>" in head) else "text"
    return PROMPT, form


def _attachment_fields(att):
    """(kind, subtype, hook_event, hook_name, command, text, texts, persisted)."""
    if not isinstance(att, dict):
        return ATTACHMENT, None, None, None, None, "", (), False
    att_type = att.get("type")
    att_type = att_type if isinstance(att_type, str) else None
    hook_name = att.get("hookName") if isinstance(att.get("hookName"), str) else None
    hook_event = att.get("hookEvent") if isinstance(att.get("hookEvent"), str) else None
    if hook_event is None and hook_name:
        hook_event = hook_name.split(":", 1)[0]
    command = att.get("command") if isinstance(att.get("command"), str) else None
    texts = []
    for key, value in att.items():
        # Hook bookkeeping, never model-facing: above all the hook's own command line, which for
        # the spec §3 sentinel hook holds the sentinel itself (``--text SENTINEL``) and is
        # recorded on every hook_success/hook_cancelled/error line of that hook.
        if key not in _ATTACHMENT_BOOKKEEPING_KEYS:
            cls = value.__class__
            if cls is str:
                if value:
                    texts.append(value)
            elif cls is not int and cls is not bool and value is not None:
                _strings(value, texts, 1)
    content = att.get("content")
    if isinstance(content, list):
        text = "\n".join(item if isinstance(item, str) else json.dumps(item, ensure_ascii=False) for item in content)
    elif isinstance(content, str):
        text = content
    else:
        text = ""
    persisted = bool(text) and _is_persisted_stub(text)
    kind = ATTACHMENT
    if hook_event == UPS and att_type in INJECTION_ATTACHMENT_TYPES:
        if att_type == "hook_success":
            stdout = att.get("stdout") if isinstance(att.get("stdout"), str) else ""
            if stdout.strip() and _looks_like_json_object(stdout):
                text = ""  # the raw JSON output; its additionalContext has its own line
            elif text.strip() and not persisted:
                if _looks_like_json_object(text):
                    text = ""
            elif stdout.strip():
                text = stdout  # content empty or a <persisted-output> stub: stdout has the text
        if text.strip():
            kind = INJECTION
    return kind, att_type, hook_event, hook_name, command, text, tuple(texts), persisted


def _assistant_fields(message, line):
    """(text, texts, tool_uses, message_id)."""
    if not isinstance(message, dict):
        return "", (), (), None
    message_id = message.get("id") if isinstance(message.get("id"), str) else None
    content = message.get("content")
    if isinstance(content, str):
        return content, ((content,) if content else ()), (), message_id
    parts, texts, tool_uses = [], [], []
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text":
                text = block.get("text")
                if isinstance(text, str) and text:
                    parts.append(text)
                    texts.append(text)
            elif kind == "thinking":
                text = block.get("thinking")
                if isinstance(text, str) and text:
                    texts.append(text)
            elif kind in ("tool_use", "server_tool_use"):
                name = block.get("name")
                tool_input = block.get("input")
                tool_uses.append(_new_entry(ToolUse, (line, block.get("id"), name if isinstance(name, str) else "?",
                                                      tool_input)))
                _strings(tool_input, texts)
    return _join(parts), tuple(texts), tuple(tool_uses), message_id


def _str_or_none(value):
    return value if isinstance(value, str) else None


def make_entry(obj, line):
    """Classify one parsed JSON object (a transcript line) into an :class:`Entry`."""
    get = obj.get
    entry_type = get("type")
    if entry_type.__class__ is not str:
        entry_type = "<missing>"
    subtype = event = name = command = source = message_id = None
    text, texts, tool_uses, persisted = "", (), (), False
    if entry_type == "user":
        message = get("message")
        kind, subtype = _classify_user(obj, message)
        parts = []
        _block_texts(message.get("content") if isinstance(message, dict) else None, parts)
        text, texts = _join(parts), tuple(parts)
        source = _str_or_none(get("promptSource"))
    elif entry_type == "assistant":
        kind = ASSISTANT
        text, texts, tool_uses, message_id = _assistant_fields(get("message"), line)
    elif entry_type == "attachment":
        kind, subtype, event, name, command, text, texts, persisted = _attachment_fields(get("attachment"))
        rendered = get("rendered")
        if rendered:
            extra = []
            _strings(rendered, extra)
            texts = texts + tuple(extra)
    elif entry_type == "progress":
        kind = PROGRESS
        data = get("data")
        if isinstance(data, dict):
            subtype = _str_or_none(data.get("type"))
            if subtype == "hook_progress":
                name = _str_or_none(data.get("hookName"))
                event = _str_or_none(data.get("hookEvent")) or (name.split(":", 1)[0] if name else None)
                command = _str_or_none(data.get("command"))
    elif entry_type == "system":
        kind = SYSTEM
        subtype = _str_or_none(get("subtype"))
        content = get("content")
        if content.__class__ is str and content:
            text, texts = content, (content,)
    elif entry_type in METADATA_TYPES:
        kind = METADATA
        subtype = _str_or_none(get("operation"))
        content = get("summary") if entry_type == "summary" else get("content")
        if content.__class__ is str:
            text = content
    else:
        kind = UNKNOWN
    uuid, parent, agent, session, version, stamp = (
        get("uuid"), get("parentUuid"), get("agentId"), get("sessionId"), get("version"), get("timestamp"))
    return _new_entry(Entry, (
        line, entry_type, kind,
        uuid if uuid.__class__ is str else None,
        parent if parent.__class__ is str else None,
        get("isSidechain") is True,
        agent if agent.__class__ is str else None,
        session if session.__class__ is str else None,
        version if version.__class__ is str else None,
        stamp if stamp.__class__ is str else None,
        subtype, event, name, command, text, texts, tool_uses, source, message_id, persisted, obj,
    ))


# tuple.__new__ directly: the NamedTuple's own __new__ is a Python frame of 21 arguments, built
# once per transcript line.
_new_entry = tuple.__new__
