"""What the lab's stand-in answers, rule by rule: a ``Script`` of conditions on a request
(its latest prompt, a tool result, a compaction request, an offered tool, the system prompt) and
the replies they give (text, ``tool_use`` turns, reported usage, pauses), loaded from JSON or YAML.

Apart from ``harness.lab.server`` because it decides what to say, not how: the server puts the
chosen reply on the wire, and a script is written, checked and tested without a socket."""

import json
import threading

from harness.lab.requestbody import (
    ends_with_tool_result,
    is_compaction_request,
    last_user_text,
    system_text,
    tool_names,
)

DEFAULT_INPUT_TOKENS = 100
# Claude Code compacts before the next prompt when the last reply reports a context this full.
COMPACTING_INPUT_TOKENS = 190_000
DEFAULT_SUMMARY = ("<summary>\nLab conversation summary: the user asked short questions and got short "
                   "answers. Nothing else to carry over.\n</summary>")


class Script:
    """What the stand-in answers, rule by rule.

    A rule is a dict: ``{"when": {...}, "reply": {...}, "times": 1}``. For each request the first
    rule whose ``when`` matches and whose ``times`` is not used up gives the reply; otherwise the
    default applies: a compaction request gets ``summary``, anything else the text
    ``"Reply <n>."``. ``times`` defaults to 1 (``0`` means unlimited).

    ``when`` keys (all given must hold; an empty ``when`` matches every request):

    - ``prompt_contains``: a substring of the latest prompt (last user message that is not only
      tool results);
    - ``after_tool_result``: true/false, whether the request answers a tool call;
    - ``compaction``: true/false, whether it is the summarisation request;
    - ``has_tool``: a tool name the request offers (e.g. ``Agent``; an MCP tool's full name);
    - ``system_contains``: a substring of the top-level system prompt (a subagent's differs).

    ``reply`` keys: ``text`` (a text block), ``tool_use`` (``{"name", "input"}`` or a list of
    them: tool_use blocks, stop_reason ``tool_use``), ``input_tokens`` (the usage reported;
    ``COMPACTING_INPUT_TOKENS`` makes the client auto-compact before its next prompt),
    ``output_tokens``, ``cache_creation_input_tokens`` and ``cache_read_input_tokens`` (reported in
    ``message_start``), ``pause`` (seconds the stream waits between content blocks: the client then
    writes the earlier blocks' transcript rows before the message's final usage arrives, as it
    does against the real API), ``enrich_answer`` (true: answer the memory-router enrichment
    request in the latest prompt, docs/enrich.md, from the request itself: ``per_memory``
    utterances for each memory asked about, or a label request's names; as a ``record_answer``
    tool call when the request offers that tool, else as JSON text).
    """

    def __init__(self, rules=(), summary=DEFAULT_SUMMARY, input_tokens=DEFAULT_INPUT_TOKENS):
        self.rules = [dict(rule) for rule in rules]
        self.summary = summary
        self.input_tokens = input_tokens
        self._used = [0] * len(self.rules)
        self._lock = threading.Lock()
        self._replies = 0

    @classmethod
    def default(cls):
        return cls()

    @classmethod
    def from_data(cls, data, source="script"):
        """A Script from parsed JSON/YAML: a list of rules, or ``{"rules": [...], "summary": ...,
        "input_tokens": N}``. Raises InputError naming what is wrong."""
        from router.errors import InputError

        if isinstance(data, list):
            data = {"rules": data}
        if not isinstance(data, dict):
            raise InputError("a lab script must be a list of rules or an object with \"rules\"", path=source,
                             fix='write [{"when": {"prompt_contains": "..."}, "reply": {"text": "..."}}]')
        rules = data.get("rules") or []
        for i, rule in enumerate(rules):
            if not isinstance(rule, dict) or not isinstance(rule.get("reply"), dict):
                raise InputError(f"rule {i} has no \"reply\" object", path=source,
                                 fix='give every rule a "reply": {"text": ...} or {"tool_use": ...}')
            unknown = set(rule.get("when") or {}) - WHEN_KEYS
            if unknown:
                raise InputError(f"rule {i}: unknown condition(s) {sorted(unknown)}", path=source,
                                 fix=f"use only {sorted(WHEN_KEYS)}")
            unknown = set(rule["reply"]) - REPLY_KEYS
            if unknown:
                raise InputError(f"rule {i}: unknown reply key(s) {sorted(unknown)}", path=source,
                                 fix=f"use only {sorted(REPLY_KEYS)}")
        return cls(rules, data.get("summary", DEFAULT_SUMMARY), data.get("input_tokens", DEFAULT_INPUT_TOKENS))

    @classmethod
    def load(cls, path):
        """A Script from a JSON or YAML file."""
        from router.errors import InputError, read_utf8

        text = read_utf8(path, "lab script", "pass an existing JSON or YAML script file")
        if str(path).endswith((".yaml", ".yml")):
            import yaml

            try:
                data = yaml.safe_load(text)
            except yaml.YAMLError as err:
                mark = getattr(err, "problem_mark", None)
                raise InputError(f"cannot parse lab script: {getattr(err, 'problem', None) or err}", path=path,
                                 line=mark.line + 1 if mark else None, column=mark.column + 1 if mark else None,
                                 fix="correct the YAML") from None
        else:
            try:
                data = json.loads(text)
            except ValueError as err:
                raise InputError(f"cannot parse lab script: {err.msg}", path=path, line=err.lineno, column=err.colno,
                                 fix="correct the JSON") from None
        return cls.from_data(data, source=str(path))

    def tool_names(self):
        """Every tool name the script calls (so the runner can allow them)."""
        names = []
        for rule in self.rules:
            uses = rule["reply"].get("tool_use") or []
            for use in uses if isinstance(uses, list) else [uses]:
                if use.get("name") and use["name"] not in names:
                    names.append(use["name"])
        return names

    def _matches(self, when, body):
        if "prompt_contains" in when and when["prompt_contains"] not in last_user_text(body):
            return False
        if "after_tool_result" in when and bool(when["after_tool_result"]) != ends_with_tool_result(body):
            return False
        if "compaction" in when and bool(when["compaction"]) != is_compaction_request(body):
            return False
        if "has_tool" in when and when["has_tool"] not in tool_names(body):
            return False
        if "system_contains" in when and when["system_contains"] not in system_text(body):
            return False
        return True

    def reply_for(self, body):
        """The reply dict for one parsed request body (thread-safe; consumes a rule's ``times``)."""
        with self._lock:
            self._replies += 1
            number = self._replies
            for i, rule in enumerate(self.rules):
                times = rule.get("times", 1)
                if times and self._used[i] >= times:
                    continue
                if self._matches(rule.get("when") or {}, body):
                    self._used[i] += 1
                    reply = dict(rule["reply"])
                    if reply.pop("enrich_answer", False):
                        reply.update(enrich_reply(body))
                    reply.setdefault("input_tokens", self.input_tokens)
                    reply["rule"] = i
                    return reply
        if is_compaction_request(body):
            return {"text": self.summary, "input_tokens": self.input_tokens, "rule": "summary"}
        return {"text": f"Reply {number}.", "input_tokens": self.input_tokens, "rule": "default"}


WHEN_KEYS = {"prompt_contains", "after_tool_result", "compaction", "has_tool", "system_contains"}
REPLY_KEYS = {"text", "tool_use", "input_tokens", "output_tokens", "cache_creation_input_tokens",
              "cache_read_input_tokens", "pause", "enrich_answer"}
REQUEST_MARKER = "The request, as JSON:\n"      # harness.clusters.enrich_protocol.prompt_text
TYPE_WORDS = ("env", "feedback", "project", "reference", "user")


def enrich_reply(body):
    """The reply to the memory-router request in ``body``'s latest prompt (``{}`` when it holds
    none): for ``memory-router.enrich/2`` ``per_memory`` utterances per memory, made of its slug's
    words; for ``memory-router.label/1`` an id, label and tags from its first member's slug."""
    text = last_user_text(body)
    at = text.find(REQUEST_MARKER)
    if at < 0:
        return {}
    try:
        request, _end = json.JSONDecoder().raw_decode(text[at + len(REQUEST_MARKER):])
    except ValueError:
        return {}

    def words(slug):
        return [w for w in slug.split("_") if w not in TYPE_WORDS] or [slug]

    if request.get("protocol") == "memory-router.label/1":
        first = words(request["memories"][0]["slug"])
        answer = {"cluster": {"id": "_".join(first[:2]), "label": "about " + " ".join(first), "tags": first[:4]}}
    else:
        n = int(request.get("per_memory") or 1)
        answer = {"utterances": {m["slug"]: [f"trouble with {' '.join(words(m['slug']))}, take {k + 1}"
                                             for k in range(n)] for m in request.get("memories", ())}}
    if "record_answer" in tool_names(body):
        return {"tool_use": {"name": "record_answer", "input": answer}}
    return {"text": json.dumps(answer)}
