"""Sessions built in the exact 2.1.293 shape.

Tests build sessions with the variations they need; the attachment line is a copy of a real
2.1.293 ``hook_additional_context`` line (the first one 2.1.293 wrote for our hook in
tests/fixtures/transcripts/v2.1.293-routed-silent-routed.jsonl: same keys, same order) with uuids
and content varied;
prompt, assistant and tool-result lines carry the envelope keys documented for 2.1.177-2.1.293 in
claude-code-formats.md §2.2.
"""

import copy
import json
import pathlib
import uuid as uuid_mod

import pytest

from support.fixture_transcripts import real_injection_line

AUTO = object()


def router_body(cluster_ids, members):
    """Text in the router's format (router/routing/score.py render_context): header, then member lines."""
    header = ("Routed memory clusters: " if len(cluster_ids) > 1 else "Routed memory cluster: ") + ", ".join(cluster_ids)
    return "\n".join([header] + [f"- {slug} \u2014 {hook}" for slug, hook in members])


SETX_BODY = router_body(["env-vars"], [
    ("setx-bash-visibility", "setx writes the registry; only a user-opened terminal sees it, a reboot didn't fix the Bash tool"),
    ("path-order", "Git Bash puts /usr/bin before the Windows PATH"),
])
CLOUDFLARE_BODY = router_body(["cloudflare", "deploy"], [
    ("cf-env-text", "Cloudflare Pages env vars for the build must be Text (Plaintext), not Secret"),
    ("wrangler-version", "pin wrangler in package.json; the global one drifts"),
    ("deploy-hook", "the deploy hook URL lives in the team vault"),
])


class SessionBuilder:
    """Appends transcript lines; every method returns the new line's uuid. ``parent`` defaults to
    the previous line's uuid (Claude Code chains each line to the one before)."""

    def __init__(self, version="2.1.293", session_id=None, cwd="/home/user/proj", sidechain=False, agent_id=None):
        self.version = version
        self.session_id = session_id or str(uuid_mod.uuid4())
        self.cwd = cwd
        self.sidechain = sidechain
        self.agent_id = agent_id
        self.lines = []
        self.last_uuid = None
        self.clock = 0

    @property
    def line(self):
        """The 1-based line number of the last line added."""
        return len(self.lines)

    def _stamp(self):
        self.clock += 1
        return f"2026-10-08T11:{self.clock // 60:02d}:{self.clock % 60:02d}.000Z"

    def _add(self, obj):
        self.lines.append(json.dumps(obj, ensure_ascii=False))
        if obj.get("uuid"):
            self.last_uuid = obj["uuid"]
        return obj.get("uuid")

    def _parent(self, parent):
        return self.last_uuid if parent is AUTO else parent

    def envelope(self, entry_type, parent=AUTO, uid=None):
        obj = {"parentUuid": self._parent(parent), "isSidechain": self.sidechain}
        if self.agent_id:
            obj["agentId"] = self.agent_id
        obj.update({"type": entry_type, "uuid": uid or str(uuid_mod.uuid4()), "timestamp": self._stamp(),
                    "userType": "external", "entrypoint": "cli", "cwd": self.cwd, "sessionId": self.session_id,
                    "version": self.version, "gitBranch": "main"})
        return obj

    def prompt(self, text, parent=AUTO, uid=None, **extra):
        obj = self.envelope("user", parent, uid)
        obj.update({"promptId": str(uuid_mod.uuid4()), "message": {"role": "user", "content": text},
                    "permissionMode": "default", "promptSource": "typed", "origin": {"kind": "human"}})
        obj.update(extra)
        return self._add(obj)

    def injection(self, content, parent=AUTO, hook_event="UserPromptSubmit", as_string=False, uid=None):
        """A copy of the real 2.1.293 hook_additional_context line with new uuids and content."""
        obj = real_injection_line()
        new_uuid = uid or str(uuid_mod.uuid4())
        obj["parentUuid"] = self._parent(parent)
        obj["isSidechain"] = self.sidechain
        obj["attachment"]["content"] = content if as_string else [content]
        obj["attachment"]["hookName"] = hook_event
        obj["attachment"]["hookEvent"] = hook_event
        obj["attachment"]["toolUseID"] = f"hook-{uuid_mod.uuid4()}"
        obj["uuid"] = new_uuid
        obj["timestamp"] = self._stamp()
        obj["rendered"] = [{"content": f"<system-reminder>\n{hook_event} hook additional context: {content}\n</system-reminder>"}]
        obj["cwd"] = self.cwd
        obj["sessionId"] = self.session_id
        obj["version"] = self.version
        if self.agent_id:
            obj["agentId"] = self.agent_id
        return self._add(obj)

    def attachment(self, attachment, parent=AUTO):
        obj = self.envelope("attachment", parent)
        obj["attachment"] = copy.deepcopy(attachment)
        return self._add(obj)

    def hook_success(self, stdout, content=None, hook_event="UserPromptSubmit", command="node hook.js", parent=AUTO):
        return self.attachment({"type": "hook_success", "hookName": hook_event, "toolUseID": f"hook-{uuid_mod.uuid4()}",
                                "hookEvent": hook_event, "content": stdout if content is None else content,
                                "stdout": stdout, "stderr": "", "exitCode": 0, "command": command,
                                "durationMs": 40}, parent)

    def assistant(self, text=None, tool=None, parent=AUTO, message_id=None):
        """One streamed assistant row: a text block, or a tool_use block (name, input, id)."""
        obj = self.envelope("assistant", parent)
        if tool is not None:
            name, tool_input, tool_id = tool
            block = {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}
        else:
            block = {"type": "text", "text": text}
        obj["message"] = {"model": "claude-opus-4-5", "id": message_id or f"msg_{uuid_mod.uuid4().hex[:20]}",
                          "type": "message", "role": "assistant", "content": [block], "stop_reason": None,
                          "stop_sequence": None, "usage": {"input_tokens": 3, "output_tokens": 12,
                                                            "cache_creation_input_tokens": 0,
                                                            "cache_read_input_tokens": 9000}}
        obj["requestId"] = f"req_{uuid_mod.uuid4().hex[:20]}"
        return self._add(obj)

    def tool_result(self, tool_id, content, parent=AUTO):
        obj = self.envelope("user", parent)
        obj["message"] = {"role": "user", "content": [{"tool_use_id": tool_id, "type": "tool_result", "content": content}]}
        obj["toolUseResult"] = {"stdout": content, "stderr": "", "interrupted": False}
        obj["sourceToolAssistantUUID"] = self.last_uuid
        return self._add(obj)

    def tool_call(self, name, tool_input, result):
        """An assistant tool_use row and its tool_result line; returns the tool_result's uuid."""
        tool_id = f"toolu_{uuid_mod.uuid4().hex[:24]}"
        self.assistant(tool=(name, tool_input, tool_id))
        return self.tool_result(tool_id, result)

    def raw(self, text):
        self.lines.append(text)

    def write(self, path, tail=""):
        path = pathlib.Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(self.lines) + "\n" + tail, encoding="utf-8")
        return path


@pytest.fixture
def session():
    """A factory for SessionBuilder (call it for more than one session)."""
    return SessionBuilder


@pytest.fixture
def bodies():
    return {"setx": SETX_BODY, "cloudflare": CLOUDFLARE_BODY}
