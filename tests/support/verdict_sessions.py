"""Sessions built in the 2.1.293 shape for the behavioural verdict's tests (canaries.verdict and
its command, harness.canary.verdict).

The attachment lines are copies of a real 2.1.293 UserPromptSubmit line (the first
``hook_additional_context`` line of tests/fixtures/transcripts/v2.1.293-routed-silent-routed.jsonl,
same keys in the same order) carrying the text the router really emits for the case's prompt; typed prompt
lines follow claude-code-formats.md §2.4; assistant lines carry message.content text blocks.
"""


import copy
import functools
import json
import pathlib
import uuid


from canaries.suite import load_suite
from canaries.verdict import HotStripEvidence, judge
from router.store.clusterfile import load_cluster_file
from router.config import bundled_cluster_file, default_settings
from router.routing.score import build_routing_table, route_prompt
from support.fixture_transcripts import real_injection_line
from transcripts.reader import read_session

REAL_LINE = real_injection_line()
SPEC = pathlib.Path(__file__).resolve().parents[2] / "canaries" / "spec.yaml"
CASE = load_suite(SPEC).behavioural_case("cloudflare-cold")
SLUG = CASE.fact
CWD = "/home/marek/aria"
MEMORY_DIR = "/home/marek/.claude/projects/-home-marek-aria/memory"
RIGHT = "Because Secrets are not visible at build time. Fix: set that variable's type to Text (or Plaintext) " \
        "instead of Secret, then redeploy."
WRONG = "Build-time variables must be encrypted: use a Secret and read it with env.PUBLIC_X in the build."
SLIM = "# Memory Index\n\n## Always-loaded (confabulation catchers)\n\n- env_bash_tool_env_var_caching \u2014 " \
       "setx vars never reach the Bash tool\n\n## Cluster router (routed on demand)\n\n" \
       "- layer1_project_memory_router (9) \u2014 behaviour, caching \u2014 memory router saga\n"


@functools.lru_cache(maxsize=None)
def router_context(prompt=CASE.prompt):
    table = build_routing_table(load_cluster_file(bundled_cluster_file()))
    return route_prompt(prompt, table, default_settings())["additional_context"]


class Session:
    """Lines of one session; each method appends one line and returns its 1-based number."""

    def __init__(self, version="2.1.293", session_id="d6b06b53-fc7b-4a57-9e93-333e04c29f19"):
        self.version = version
        self.session_id = session_id
        self.lines = []
        self.last = None
        self.clock = 0

    def _envelope(self, kind, sidechain=False, agent_id=None, parent=None):
        self.clock += 1
        line = {"parentUuid": parent if parent is not None else self.last, "isSidechain": sidechain}
        if agent_id:
            line["agentId"] = agent_id
        line.update({"type": kind, "uuid": str(uuid.uuid4()),
                     "timestamp": f"2026-10-08T11:{self.clock // 60:02d}:{self.clock % 60:02d}.000Z",
                     "userType": "external", "entrypoint": "cli", "cwd": CWD, "sessionId": self.session_id,
                     "version": self.version, "gitBranch": "main"})
        return line

    def _add(self, line):
        self.lines.append(line)
        if not line.get("isSidechain"):
            self.last = line["uuid"]
        return len(self.lines)

    def prompt(self, text):
        line = self._envelope("user")
        line.update({"promptId": str(uuid.uuid4()), "message": {"role": "user", "content": text},
                     "permissionMode": "default", "promptSource": "typed"})
        return self._add(line)

    def injection(self, text, sidechain=False, agent_id=None):
        line = copy.deepcopy(REAL_LINE)
        envelope = self._envelope("attachment", sidechain, agent_id)
        for key in ("parentUuid", "isSidechain", "uuid", "timestamp", "sessionId", "version"):
            line[key] = envelope[key]
        line["cwd"] = CWD
        if agent_id:
            line["agentId"] = agent_id
        line["attachment"]["content"] = [text]
        line["attachment"]["toolUseID"] = f"hook-{uuid.uuid4()}"
        line["rendered"] = [{"content": f"<system-reminder>\nUserPromptSubmit hook additional context: {text}\n"
                                        "</system-reminder>"}]
        return self._add(line)

    def hook_success_json(self, context):
        line = self._envelope("attachment")
        stdout = json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": context}})
        line["attachment"] = {"type": "hook_success", "hookName": "UserPromptSubmit", "toolUseID": "hook-1",
                              "hookEvent": "UserPromptSubmit", "content": "", "stdout": stdout, "stderr": "",
                              "exitCode": 0, "command": "/v/bin/memory-router hook", "durationMs": 40}
        return self._add(line)

    def _assistant(self, block, sidechain=False, agent_id=None):
        line = self._envelope("assistant", sidechain, agent_id)
        line.update({"message": {"model": "claude-opus-4-5-20251101", "id": f"msg_{uuid.uuid4().hex[:20]}",
                                 "type": "message", "role": "assistant", "content": [block], "stop_reason": None,
                                 "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 40}},
                     "requestId": f"req_{uuid.uuid4().hex[:20]}"})
        return self._add(line)

    def reply(self, text, **kw):
        return self._assistant({"type": "text", "text": text}, **kw)

    def tool_use(self, name, tool_input):
        self.tool_id = f"toolu_{uuid.uuid4().hex[:20]}"
        return self._assistant({"type": "tool_use", "id": self.tool_id, "name": name, "input": tool_input})

    def tool_result(self, content):
        line = self._envelope("user")
        line.update({"message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": self.tool_id, "content": content}]},
            "toolUseResult": {"stdout": content}, "sourceToolAssistantUUID": self.last})
        return self._add(line)

    def hook_progress(self):
        line = self._envelope("progress")
        line.update({"data": {"type": "hook_progress", "hookEvent": "UserPromptSubmit",
                              "hookName": "UserPromptSubmit", "command": "memory-router hook"},
                     "parentToolUseID": "x", "toolUseID": "x"})
        return self._add(line)

    def write(self, path):
        path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in self.lines), encoding="utf-8")
        return path


def entries_of(session, tmp_path):
    return list(read_session(session.write(tmp_path / f"{session.session_id}.jsonl")))


CLEAN = HotStripEvidence(memory_path=MEMORY_DIR + "/MEMORY.md", memory_text=SLIM)


def standard(session=None, reply=RIGHT):
    session = session or Session()
    session.prompt(CASE.prompt)
    session.injection(router_context())
    session.reply(reply)
    return session


def verdict_of(session, tmp_path, hot=CLEAN, **kw):
    return judge(entries_of(session, tmp_path), CASE, hot=hot, watch_paths=(MEMORY_DIR,), **kw)


def lines_of(result):
    return {e.line: e.what for e in result.evidence if e.line is not None}
