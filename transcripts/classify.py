"""One parsed transcript line classified into an :class:`transcripts.entries.Entry`: its kind (the
rules are in ``transcripts.entries``' docstring), hook fields, main text and every string it
carries into the model's context.

This runs once per line of files of any size, beside a bare ``json.loads`` it must keep up with
(benchmarks/transcript_audit.py): ``__class__ is`` tests first (json.loads makes exact str, dict
and list), ``isinstance`` only for what else a caller may pass, and no helper call a common line
does not need."""

import json

from transcripts.entries import (
    ASSISTANT,
    ATTACHMENT,
    COMPACT_SUMMARY,
    INJECTION,
    INJECTION_ATTACHMENT_TYPES,
    INTERRUPT,
    LEGACY_HOOK_TAG,
    LOCAL_COMMAND,
    META,
    METADATA,
    METADATA_TYPES,
    PERSISTED_MARKERS,
    PROGRESS,
    PROMPT,
    SYSTEM,
    TASK_NOTIFICATION,
    TOOL_RESULT,
    UNKNOWN,
    UPS,
    Entry,
    ToolUse,
    wrote_legacy_hook_tag,
)

# Text Claude Code itself writes into user lines; none of it was typed.
_WRAPPER_KINDS = (
    ("<local-command-stdout>", LOCAL_COMMAND),
    ("<local-command-stderr>", LOCAL_COMMAND),
    ("<local-command-caveat>", LOCAL_COMMAND),
    ("<task-notification>", TASK_NOTIFICATION),
    ("[Request interrupted by user", INTERRUPT),
    # 1.0.x's own line for a UserPromptSubmit hook's output: flagged isVisibleInTranscriptOnly when
    # written, rewritten without the flag (as a list of text blocks) on --resume; never typed there
    # (on 2.x it is a prompt: wrote_legacy_hook_tag).
    (LEGACY_HOOK_TAG, META),
)
_WRAPPER_MARKERS = tuple(marker for marker, _kind in _WRAPPER_KINDS)
_PROMPT_SOURCES = frozenset({"typed", "sdk", "system"})
_LONGEST_MARKER = max(map(len, PERSISTED_MARKERS))
_ATTACHMENT_BOOKKEEPING_KEYS = frozenset({"type", "hookName", "hookEvent", "toolUseID", "command"})

# tuple.__new__ directly: the NamedTuple's own __new__ is a Python frame of 21 arguments, built
# once per transcript line.
_new_record = tuple.__new__


def _strings(value, out, depth=0):
    """Every string inside ``value`` (dicts, lists), in order."""
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
    # A marker opens the text: strip the whitespace of its head only, unless too little of the
    # head is left to hold a marker (then all of it, as text.lstrip() would).
    head = text[:64].lstrip()
    if len(head) < _LONGEST_MARKER and len(text) > 64:
        head = text.lstrip()
    return head.startswith(PERSISTED_MARKERS)


def _looks_like_json_object(text):
    stripped = text.strip()
    if not stripped.startswith("{"):
        return False
    try:
        return isinstance(json.loads(stripped), dict)
    except (ValueError, RecursionError):
        return False


def _lstripped_head(text, size=40):
    """``text.lstrip()[:size]`` without copying all of a long text."""
    if text[:1].isspace():
        return text.lstrip()[:size]
    return text[:size]


def _classify_user(get, content):
    if get("isCompactSummary"):
        return COMPACT_SUMMARY, None
    if content.__class__ is list:
        for block in content:
            if block.__class__ is dict and block.get("type") == "tool_result":
                return TOOL_RESULT, None
    elif isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
        return TOOL_RESULT, None
    if get("isMeta") or get("isVisibleInTranscriptOnly"):
        return META, None
    source = get("promptSource")
    if source is not None and (source.__class__ is not str or source not in _PROMPT_SOURCES):
        # A source we have not seen: record it, but a line nobody typed must not anchor injections.
        return META, None
    if isinstance(content, str):
        head = _lstripped_head(content)
    elif isinstance(content, list):
        first = next((b for b in content if isinstance(b, dict) and b.get("type") == "text"), None)
        text = first.get("text") if first else None
        head = _lstripped_head(text) if isinstance(text, str) else ""
    else:
        return META, None
    if head.startswith(_WRAPPER_MARKERS):
        for marker, kind in _WRAPPER_KINDS:
            if head.startswith(marker):
                if marker == LEGACY_HOOK_TAG and not wrote_legacy_hook_tag(get("version")):
                    break  # a 2.x user typed it
                return kind, None
    form = "slash_command" if ("<command-name>" in head or "<command-message>" in head) else "text"
    return PROMPT, form


# Each builder below reads one type of line: ``(kind, fields)``, where ``fields`` are the Entry's
# fields from ``subtype`` to ``persisted_preview``, in order.
_NO_FIELDS = (None, None, None, None, "", (), (), None, None, False)


def _user(get, entry_type, line):
    message = get("message")
    content = message.get("content") if isinstance(message, dict) else None
    kind, form = _classify_user(get, content)
    if content.__class__ is str:
        text, texts = (content, (content,)) if content else ("", ())
    else:
        parts = []
        _block_texts(content, parts)
        text, texts = _join(parts), tuple(parts)
    source = get("promptSource")
    if source.__class__ is not str and not isinstance(source, str):
        source = None
    return kind, (form, None, None, None, text, texts, (), source, None, False)


def _assistant(get, entry_type, line):
    message = get("message")
    if not isinstance(message, dict):
        return ASSISTANT, _NO_FIELDS
    message_id = message.get("id")
    if message_id.__class__ is not str and not isinstance(message_id, str):
        message_id = None
    content = message.get("content")
    if isinstance(content, str):
        return ASSISTANT, (None, None, None, None, content, (content,) if content else (), (), None, message_id,
                           False)
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
                tool_uses.append(_new_record(ToolUse, (line, block.get("id"), name if isinstance(name, str) else "?",
                                                       tool_input)))
                _strings(tool_input, texts)
    return ASSISTANT, (None, None, None, None, _join(parts), tuple(texts), tuple(tool_uses), None, message_id, False)


def _attachment(get, entry_type, line):
    att = get("attachment")
    texts = []
    if not isinstance(att, dict):
        return ATTACHMENT, (None, None, None, None, "", _with_rendered(get, texts), (), None, None, False)
    att_get = att.get
    att_type = att_get("type")
    if att_type.__class__ is not str and not isinstance(att_type, str):
        att_type = None
    hook_name = att_get("hookName")
    if hook_name.__class__ is not str and not isinstance(hook_name, str):
        hook_name = None
    hook_event = att_get("hookEvent")
    if hook_event.__class__ is not str and not isinstance(hook_event, str):
        hook_event = None
    if hook_event is None and hook_name:
        hook_event = hook_name.split(":", 1)[0]
    command = att_get("command")
    if command.__class__ is not str and not isinstance(command, str):
        command = None
    # Hook bookkeeping is never model-facing: above all the hook's own command line, which for the
    # spec §3 sentinel hook holds the sentinel itself (``--text SENTINEL``) and is recorded on every
    # hook_success/hook_cancelled/error line of that hook. Empty strings and numbers (most values
    # of a hook line) are passed over before the key is looked at.
    bookkeeping = _ATTACHMENT_BOOKKEEPING_KEYS
    for key, value in att.items():
        cls = value.__class__
        if cls is str:
            if value and key not in bookkeeping:
                texts.append(value)
        elif cls is not int and cls is not bool and value is not None and key not in bookkeeping:
            _strings(value, texts, 1)
    content = att_get("content")
    if content.__class__ is str:
        text = content
    elif isinstance(content, list):
        text = "\n".join(item if isinstance(item, str) else json.dumps(item, ensure_ascii=False) for item in content)
    elif isinstance(content, str):
        text = content
    else:
        text = ""
    persisted = bool(text) and _is_persisted_stub(text)
    kind = ATTACHMENT
    if hook_event == UPS and att_type in INJECTION_ATTACHMENT_TYPES:
        if att_type == "hook_success":
            stdout = att_get("stdout") if isinstance(att_get("stdout"), str) else ""
            if stdout.strip() and _looks_like_json_object(stdout):
                text = ""  # the raw JSON output; its additionalContext has its own line
            elif text.strip() and not persisted:
                if _looks_like_json_object(text):
                    text = ""
            elif stdout.strip():
                text = stdout  # content empty or a <persisted-output> stub: stdout has the text
        if text.strip():
            kind = INJECTION
    return kind, (att_type, hook_event, hook_name, command, text, _with_rendered(get, texts), (), None, None,
                  persisted)


def _with_rendered(get, texts):
    """``texts`` and the strings of the line's ``rendered`` copy (what the model was sent)."""
    rendered = get("rendered")
    if rendered:
        _strings(rendered, texts)
    return tuple(texts)


def _system(get, entry_type, line):
    subtype = _str_or_none(get("subtype"))
    content = get("content")
    if content.__class__ is str and content:
        return SYSTEM, (subtype, None, None, None, content, (content,), (), None, None, False)
    return SYSTEM, (subtype, None, None, None, "", (), (), None, None, False)


def _progress(get, entry_type, line):
    subtype = event = name = command = None
    data = get("data")
    if isinstance(data, dict):
        subtype = _str_or_none(data.get("type"))
        if subtype == "hook_progress":
            name = _str_or_none(data.get("hookName"))
            event = _str_or_none(data.get("hookEvent")) or (name.split(":", 1)[0] if name else None)
            command = _str_or_none(data.get("command"))
    return PROGRESS, (subtype, event, name, command, "", (), (), None, None, False)


def _metadata(get, entry_type, line):
    content = get("summary") if entry_type == "summary" else get("content")
    return METADATA, (_str_or_none(get("operation")), None, None, None, content if content.__class__ is str else "",
                      (), (), None, None, False)


def _unknown(get, entry_type, line):
    return UNKNOWN, _NO_FIELDS


def _str_or_none(value):
    return value if isinstance(value, str) else None


_BUILDERS = {"user": _user, "assistant": _assistant, "attachment": _attachment, "system": _system,
             "progress": _progress, **dict.fromkeys(METADATA_TYPES, _metadata)}


def make_entry(obj, line):
    """Classify one parsed JSON object (a transcript line) into an :class:`Entry`."""
    get = obj.get
    entry_type = get("type")
    if entry_type.__class__ is not str:
        entry_type = "<missing>"
    # Unpacked rather than spread into the record below: measured the cheaper of the two.
    kind, (subtype, event, name, command, text, texts, tool_uses, source, message_id, persisted) = \
        _BUILDERS.get(entry_type, _unknown)(get, entry_type, line)
    uuid, parent, agent, session, version, stamp = (
        get("uuid"), get("parentUuid"), get("agentId"), get("sessionId"), get("version"), get("timestamp"))
    return _new_record(Entry, (
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
