"""What the real client sent: memory bytes per API call, from the request log alone. Pure.

Input: the records of a ``requests.jsonl`` (``harness.lab.server``), each with the request
``body`` verbatim and the ``prompt_index`` the runner stamped. Nothing else is consulted: no
transcript, no model of a session. Every figure here is a measurement of what went over the wire.

Memory text in a request, found by content:

- the **MEMORY.md section**: ``Contents of <path>/MEMORY.md (...):\\n\\n<text>`` inside the
  ``<system-reminder>`` of the first user message (Claude Code 2.1.328), up to the end of that
  reminder or the next ``Contents of`` section; the header line counts, since the index brings it;
- every **routed context**: the text after ``UserPromptSubmit hook additional context: `` (or
  ``UserPromptSubmit hook success: ``, a hook that printed plain text) up to the next blank line
  or the end of its text block, or inside ``<user-prompt-submit-hook>`` tags (Claude Code 1.0.x). Each distinct text is then counted wherever it occurs in a
  request, by content: in a system message, a user message, a tool result or an assistant reply.

An occurrence is **new** when it sits after the request's last assistant message (the current
turn: the model has not seen it before) and **history** when it sits before (re-sent with the
conversation). So a routed context should be new exactly once per injection and history on every
later call until compaction drops it.

Threads: requests whose top-level ``system`` (the first block, a per-build billing line, left
out) matches the session's first request that offers tools are the **main** thread; any other
(a subagent, a side query) is reported apart, and a routed context found there is a **leak**. A
request whose last user message asks for a conversation summary is a **compaction** request,
counted in the main thread whatever its system prompt.

Byte figures are UTF-8 bytes of the decoded text; ``request_bytes`` is the body's length on the
wire.
"""

import json
import re

from harness.lab.requestbody import (
    digest,
    is_compaction_request,
    last_assistant_index,
    message_texts,
    system_texts,
    thread_key,
)
from router.safeio import open_regular

CONTEXT_MARKERS = ("UserPromptSubmit hook additional context: ", "UserPromptSubmit hook success: ")
MEMORY_SECTION_RE = re.compile(r"Contents of (?P<path>[^\n]*?MEMORY\.md) \([^\n]*\):\n\n")
# 2.1.328: "> WARNING: MEMORY.md is 400 lines (limit: 200). Only part of it was loaded: ..." or
# "> WARNING: MEMORY.md is 28.4KB (limit: 24.4KB) — index entries are too long. ..."
TRUNCATION_RE = re.compile(r"> WARNING: MEMORY\.md is [^\n]*")
REMINDER_END = "\n</system-reminder>"
MAIN, OTHER = "main", "other"


def utf8_len(text):
    return len(text.encode("utf-8", "surrogatepass"))


LEGACY_OPEN, LEGACY_CLOSE = "<user-prompt-submit-hook>", "</user-prompt-submit-hook>"


def harvest_contexts(text):
    """The hook contexts rendered in one text: ``[(marker, context)]``. Claude Code 1.0.x wraps
    the hook's output in ``<user-prompt-submit-hook>`` tags inside the user message instead."""
    found = []
    start = text.find(LEGACY_OPEN)
    while start != -1:
        begin = start + len(LEGACY_OPEN)
        end = text.find(LEGACY_CLOSE, begin)
        context = text[begin:] if end == -1 else text[begin:end]
        if context.strip():
            found.append((LEGACY_OPEN, context))
        start = text.find(LEGACY_OPEN, begin)
    for marker in CONTEXT_MARKERS:
        start = text.find(marker)
        while start != -1:
            begin = start + len(marker)
            end = text.find("\n\n", begin)
            context = text[begin:] if end == -1 else text[begin:end]
            if context.endswith("\n"):
                context = context[:-1]
            if context:
                found.append((marker, context))
            start = text.find(marker, begin)
    return found


def memory_sections(text):
    """The MEMORY.md sections in one text: ``[{"path", "text" (header + body), "body", "truncation"}]``."""
    sections = []
    for match in MEMORY_SECTION_RE.finditer(text):
        begin = match.end()
        ends = [i for i in (text.find(REMINDER_END, begin), text.find("\n\nContents of ", begin)) if i != -1]
        end = min(ends) if ends else len(text)
        body = text[begin:end]
        warning = TRUNCATION_RE.search(body)
        sections.append({"path": match.group("path"), "text": text[match.start():end], "body": body,
                         "truncation": warning.group(0) if warning else None})
    return sections


def parse_record(record):
    """``(body dict or None, error or None)`` of one log record."""
    raw = record.get("body")
    if not isinstance(raw, str) or not raw:
        return None, "no body"
    try:
        body = json.loads(raw)
    except ValueError as err:
        return None, f"body is not JSON: {err}"
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return None, "body has no messages list"
    return body, None


# --------------------------------------------------------------------------- a session


def analyze_requests(records):
    """Per-call and per-context figures of one session's request log (see the module docstring).

    ``records``: log records in arrival order. Returns a dict: ``calls``, ``contexts``,
    ``prompts``, ``compactions``, ``leaks``, ``skipped`` and ``totals``.
    """
    parsed = []
    skipped = []
    for record in records:
        if "/messages" not in str(record.get("path", "")) or "count_tokens" in str(record.get("path", "")):
            skipped.append({"seq": record.get("seq"), "why": f"not a Messages call ({record.get('path')})"})
            continue
        body, error = parse_record(record)
        if body is None:
            skipped.append({"seq": record.get("seq"), "why": error})
            continue
        parsed.append((record, body))

    # The main thread is the first request that offers tools: 2.0.x sends tool-less "Warmup"
    # requests for its built-in agents before the first prompt's call.
    with_tools = [body for _record, body in parsed if body.get("tools")]
    main_key = thread_key((with_tools or [body for _record, body in parsed])[0]) if parsed else None
    # Pass 1: the distinct contexts, in order of first appearance.
    contexts = {}
    order = []
    for record, body in parsed:
        for message in body["messages"]:
            for text in message_texts(message):
                for marker, context in harvest_contexts(text):
                    key = digest(context)
                    if key not in contexts:
                        contexts[key] = {"id": f"c{len(order) + 1}", "sha256": key, "marker": marker.strip(),
                                         "text": context, "chars": len(context), "bytes": utf8_len(context),
                                         "header": context.split("\n", 1)[0][:160], "first_seq": record.get("seq"),
                                         "first_prompt": record.get("prompt_index"), "new": 0, "history": 0,
                                         "new_at": [], "leaked": 0}
                        order.append(key)

    calls = []
    compactions = []
    leaks = []
    live_before_compaction = None
    first_memory = None
    for record, body in parsed:
        messages = body["messages"]
        boundary = last_assistant_index(messages)
        compaction = is_compaction_request(body)
        # A summarisation request summarises the main conversation, whatever system prompt it
        # carries (2.1.39 sends it without tools and with a system prompt of its own).
        thread = MAIN if compaction or thread_key(body) == main_key else OTHER
        memory = []
        new, history = [], []
        for position, message in enumerate(messages):
            texts = message_texts(message)
            for text in texts:
                memory.extend(memory_sections(text))
                for key in order:
                    count = text.count(contexts[key]["text"])
                    if count:
                        (new if position > boundary else history).extend([key] * count)
        for text in system_texts(body):
            for key in order:
                count = text.count(contexts[key]["text"])
                history.extend([key] * count)
        md_bytes = sum(utf8_len(section["text"]) for section in memory)
        routed_new = sum(contexts[key]["bytes"] for key in new)
        routed_history = sum(contexts[key]["bytes"] for key in history)
        call = {
            "seq": record.get("seq"),
            "prompt_index": record.get("prompt_index"),
            "thread": thread,
            "compaction": compaction,
            "request_bytes": record.get("bytes") if isinstance(record.get("bytes"), int) else utf8_len(record["body"]),
            "memory_md_bytes": md_bytes,
            "memory_md_sections": len(memory),
            "memory_md_truncation": next((s["truncation"] for s in memory if s["truncation"]), None),
            "new_contexts": [contexts[key]["id"] for key in new],
            "history_contexts": [contexts[key]["id"] for key in history],
            "routed_new_bytes": routed_new,
            "routed_history_bytes": routed_history,
            "memory_bytes": md_bytes + routed_new + routed_history,
        }
        calls.append(call)
        if memory and first_memory is None:
            first_memory = {"seq": record.get("seq"), "path": memory[0]["path"], "body": memory[0]["body"],
                            "bytes": utf8_len(memory[0]["text"]), "truncation": memory[0]["truncation"]}
        for key in new:
            if thread == MAIN and not compaction:
                contexts[key]["new"] += 1
                contexts[key]["new_at"].append(record.get("seq"))
        for key in history:
            contexts[key]["history"] += 1
        if thread == OTHER and (new or history):
            for key in dict.fromkeys(new + history):
                contexts[key]["leaked"] += 1
                leaks.append({"seq": record.get("seq"), "context": contexts[key]["id"]})
        if thread == MAIN:
            if compaction:
                live_before_compaction = {"seq": record.get("seq"), "prompt_index": record.get("prompt_index"),
                                          "contexts_before": sorted(set(contexts[k]["id"] for k in new + history),
                                                                    key=_id_order),
                                          "carried_after": None}
                compactions.append(live_before_compaction)
            elif live_before_compaction is not None and live_before_compaction["carried_after"] is None:
                before = set(live_before_compaction["contexts_before"])
                live_before_compaction["carried_after"] = sorted(
                    before & set(contexts[k]["id"] for k in history), key=_id_order)
                live_before_compaction["first_seq_after"] = record.get("seq")
                live_before_compaction = None

    prompts = {}
    for call in calls:
        row = prompts.setdefault(call["prompt_index"], {"prompt_index": call["prompt_index"], "calls": 0,
                                                        "other_calls": 0, "new_contexts": [], "memory_bytes": 0,
                                                        "request_bytes": 0})
        row["calls" if call["thread"] == MAIN else "other_calls"] += 1
        row["memory_bytes"] += call["memory_bytes"]
        row["request_bytes"] += call["request_bytes"]
        if call["thread"] == MAIN and not call["compaction"]:
            row["new_contexts"].extend(call["new_contexts"])
    context_list = [dict(contexts[key]) for key in order]
    for context in context_list:
        del context["text"]
    main_calls = [c for c in calls if c["thread"] == MAIN]
    return {
        "calls": calls,
        "contexts": context_list,
        "prompts": [prompts[k] for k in sorted(prompts, key=lambda v: (v is None, v if v is not None else 0))],
        "compactions": compactions,
        "leaks": leaks,
        "memory_md": first_memory,
        "skipped": skipped,
        "totals": {
            "calls": len(calls),
            "main_calls": len(main_calls),
            "other_calls": len(calls) - len(main_calls),
            "request_bytes": sum(c["request_bytes"] for c in calls),
            "memory_bytes": sum(c["memory_bytes"] for c in calls),
            "memory_md_bytes": sum(c["memory_md_bytes"] for c in calls),
            "routed_bytes": sum(c["routed_new_bytes"] + c["routed_history_bytes"] for c in calls),
            "main_memory_bytes": sum(c["memory_bytes"] for c in main_calls),
            "last_call_memory_bytes": main_calls[-1]["memory_bytes"] if main_calls else None,
            "contexts": len(context_list),
        },
        "context_texts": {contexts[key]["id"]: contexts[key]["text"] for key in order},
    }


def _id_order(context_id):
    return int(context_id[1:])


def injections_from_requests(analysis):
    """The injections the requests show, in order: ``[(sha256, prompt_index)]``, one per new
    occurrence in a main-thread, non-compaction call."""
    by_id = {c["id"]: c for c in analysis["contexts"]}
    out = []
    for call in analysis["calls"]:
        if call["thread"] == MAIN and not call["compaction"]:
            out.extend((by_id[cid]["sha256"], call["prompt_index"]) for cid in call["new_contexts"])
    return out


# --------------------------------------------------------------------------- checks


def check_once_as_new(analysis):
    """Each injection reaches the model exactly once as new text: a context new in two calls of
    the same prompt (a retry that re-sent it) or never new (seen only as history) fails.
    Returns a list of problems (empty when it holds)."""
    problems = []
    by_prompt = {}
    for sha, prompt in injections_from_requests(analysis):
        by_prompt.setdefault((sha, prompt), 0)
        by_prompt[(sha, prompt)] += 1
    ids = {c["sha256"]: c["id"] for c in analysis["contexts"]}
    for (sha, prompt), count in by_prompt.items():
        if count > 1:
            problems.append(f"context {ids[sha]} reached the model as new text {count} times for prompt {prompt}")
    for context in analysis["contexts"]:
        if context["new"] == 0 and context["leaked"] == 0:
            problems.append(f"context {context['id']} never reached the model as new text (history only)")
    return problems


def compare_with_audit(analysis, audit_injections):
    """Agreement between the requests and the transcript audit.

    ``audit_injections``: the audit's main-stream injections in order, as sha256 digests of the
    injected text. Returns ``{"agree": bool, "requests": n, "audit": n, "missing_in_audit": [...],
    "extra_in_audit": [...]}`` where each list entry names a context (by id, or the audit's
    digest prefix when the requests never carried it).
    """
    seen = [sha for sha, _prompt in injections_from_requests(analysis)]
    ids = {c["sha256"]: c["id"] for c in analysis["contexts"]}
    remaining = list(audit_injections)
    missing = []
    for sha in seen:
        if sha in remaining:
            remaining.remove(sha)
        else:
            missing.append(ids.get(sha, sha[:12]))
    extra = [ids.get(sha, "audit-only:" + sha[:12]) for sha in remaining]
    return {"agree": not missing and not extra and len(seen) == len(audit_injections),
            "requests": len(seen), "audit": len(audit_injections),
            "missing_in_audit": missing, "extra_in_audit": extra}




def tool_exchanges(records):
    """Every tool call the model made and what the client answered, from the requests alone:
    ``[{"seq", "id", "name", "input", "is_error", "text"}]`` in the order the results first reached
    the model. ``seq`` is the request that first carried the ``tool_result`` (the next request
    after the call); ``name``/``input`` come from the ``tool_use`` block with the same id in that
    request's history (None when it is not there); ``text`` is the result's text (a string
    content, or its text blocks joined). A result re-sent as history in later requests is listed
    once."""
    seen, out = set(), []
    for record in records:
        body, _error = parse_record(record)
        if body is None:
            continue
        uses = {}
        for message in body["messages"]:
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                    uses[block["id"]] = block
                elif block.get("type") == "tool_result" and block.get("tool_use_id") not in seen:
                    use_id = block.get("tool_use_id")
                    seen.add(use_id)
                    use = uses.get(use_id) or {}
                    inner = block.get("content")
                    text = inner if isinstance(inner, str) else "\n".join(
                        b["text"] for b in inner or [] if isinstance(b, dict) and isinstance(b.get("text"), str))
                    out.append({"seq": record.get("seq"), "id": use_id, "name": use.get("name"),
                                "input": use.get("input"), "is_error": bool(block.get("is_error")), "text": text})
    return out


def read_log(path):
    """The records of a request log. Raises InputError naming the line of a bad one."""
    from router.errors import InputError

    records = []
    try:
        handle = open_regular(path, encoding="utf-8")
    except OSError as err:
        raise InputError(f"cannot read the request log: {err.strerror or err}", path=path,
                         fix="pass a lab run directory (it holds requests.jsonl)") from None
    with handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError as err:
                raise InputError(f"not a JSON line: {err.msg}", path=path, line=number, column=err.colno,
                                 fix="the log is written by the lab server; re-run the session") from None
            if not isinstance(record, dict):
                raise InputError("a log line must be a JSON object", path=path, line=number,
                                 fix="re-run the session")
            records.append(record)
    return records
