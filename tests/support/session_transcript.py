"""Transcript lines the session tests append, as Claude Code writes them: a compaction boundary
and the attachment that records a hook's context (claude-code-formats.md)."""

import json

BOUNDARY = {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
            "compactMetadata": {"trigger": "manual", "preTokens": 1234}}


RECORDED = {"type": "attachment", "attachment": {"type": "hook_additional_context", "content": ["x"],
                                                 "hookName": "UserPromptSubmit", "hookEvent": "UserPromptSubmit"}}


def append_entries(path, *entries):
    """Append ``entries`` to the JSONL transcript at ``path``, one line each."""
    with open(path, "a", encoding="utf-8") as handle:
        for entry in entries:
            handle.write(json.dumps(entry) + "\n")
