"""What one Messages API request body holds, read as the real client sent it: its texts, its
latest prompt, its system prompt and offered tools, whether it answers a tool call or asks for a
compaction summary, and which thread (main or a subagent's) it belongs to.

Apart from the stand-in and the measurement because both read bodies: the stand-in
(``harness.lab.script``) to pick a reply, ``harness.lab.measure`` to count memory bytes. Pure."""

import hashlib
import json

# How the client words the request that asks for a compaction summary (2.1.328); see
# is_compaction_request.
COMPACTION_MARKERS = (
    "Your task is to create a detailed summary of the conversation",
    "create a detailed summary of the conversation so far",
)


def digest(text):
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def text_of_content(content):
    """All text of one message's ``content`` (a string or a list of blocks), tool results included."""
    if isinstance(content, str):
        return content
    parts = []
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            if isinstance(block.get("text"), str):
                parts.append(block["text"])
            inner = block.get("content")
            if inner is not None and block.get("type") == "tool_result":
                parts.append(text_of_content(inner))
    return "\n".join(parts)


def last_user_text(body):
    """The text of the last user message that is not only tool results (the latest prompt)."""
    for message in reversed(body.get("messages") or []):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, list) and content and all(
                isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            continue
        return text_of_content(content)
    return ""


def ends_with_tool_result(body):
    """True when the last message carries a tool_result: the client is answering our tool call.
    ``system``-role messages after it are passed over: 2.1.328 appends one when a tool call
    changed what it offers (ToolSearch loading an MCP tool lists the deferred tools again), and
    2.1.293 appends its ``<total_tokens>`` note after every tool result."""
    messages = [m for m in body.get("messages") or [] if not (isinstance(m, dict) and m.get("role") == "system")]
    if not messages or not isinstance(messages[-1], dict):
        return False
    content = messages[-1].get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def is_compaction_request(body):
    """True for the client's request that asks for a summary of the conversation (``/compact``)."""
    text = last_user_text(body)
    return any(marker in text for marker in COMPACTION_MARKERS)


def system_text(body):
    system = body.get("system")
    if isinstance(system, str):
        return system
    return text_of_content(system) if isinstance(system, list) else ""


def tool_names(body):
    return [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]


def message_texts(message):
    """Every text string of one message (text blocks, string content, tool results, tool inputs)."""
    content = message.get("content") if isinstance(message, dict) else None
    out = []

    def walk(node):
        if isinstance(node, str):
            out.append(node)
        elif isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            if isinstance(node.get("text"), str):
                out.append(node["text"])
            if node.get("type") == "tool_result":
                walk(node.get("content"))
            if node.get("type") == "tool_use" and node.get("input") is not None:
                out.append(json.dumps(node["input"], ensure_ascii=False))

    walk(content)
    return out


def system_texts(body):
    system = body.get("system")
    if isinstance(system, str):
        return [system]
    return [b["text"] for b in system or [] if isinstance(b, dict) and isinstance(b.get("text"), str)]


def thread_key(body):
    """The system prompt without its first block (a billing line that changes between builds)."""
    texts = system_texts(body)
    return digest("\n".join(texts[1:] if len(texts) > 1 else texts))


def last_assistant_index(messages):
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], dict) and messages[i].get("role") == "assistant":
            return i
    return -1
