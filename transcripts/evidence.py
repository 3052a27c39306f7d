"""Evidence for learned terms, read from a user's own sessions (docs/learning.md, ``memory-router learn``).

For each typed prompt of a session: which memories the router injected for it, which memory
files the agent then read in that turn (in the main session, inline sidechain lines, or a
subagent's own transcript), and which memory slugs it named in its text. A memory the agent
read or named that the router had *not* put in front of it is evidence that the prompt's words
lead to that memory.

What counts:

- **injected**: a UserPromptSubmit injection (``hook_additional_context``, a plain-stdout
  ``hook_success``, or the 1.0.x ``<user-prompt-submit-hook>`` block inside the prompt) whose
  text lists the slug as a member line (``- slug — hook``) or names it plainly (the rule below);
- **read**: a ``Read`` tool call whose ``file_path`` ends in ``<name>.md`` where ``name`` (or its
  slug form, ``normalise_slug``: kebab-case and capitals folded) is a store slug, MEMORY.md and its
  archives excepted; or an MCP ``get_memory`` call (any server prefix) with a store slug. The
  memory directory's location is not needed: a file only counts if its name is a store slug;
- **cited**: a store slug in the assistant's text (text blocks, not thinking or tool input), as a
  whole word. A slug with an underscore counts bare; a one-word slug (``deploy``) only when
  marked as a name (``deploy.md``, a backticked ``deploy``, ``memory: deploy``), so a reply
  that merely uses the word is not a citation.

What is *not* evidence, besides a slug injected for the prompt: a slug that was already in the
agent's context earlier in the session (injected for, read in or named in an earlier turn, until
a compaction): a follow-up prompt ("ok, do it") whose turn re-reads it says nothing about the
follow-up's words. Slash commands and prompts nobody typed (``promptSource: system``) are kept
as turns but never learned from. A transcript that cannot show injections (Claude Code up to
2.1.80 without attachment lines, ``transcripts.auditmodel.capability_of``) gives no evidence at
all: every read would look like a miss.

Subagent transcripts (``<session>/subagents/*.jsonl``, or 2.0.x's sibling ``agent-<id>.jsonl``
with the session's id) belong to the turn whose tool result carries their ``agentId``; failing
that, to the last prompt at or before their first timestamp.

Streaming: one line at a time; per turn only the prompt (its first ``MAX_PROMPT_CHARS``) and
small sets of slugs are kept.
"""

import bisect
import json
import os
from typing import NamedTuple

from router.safeio import irregular_kind, open_regular
from transcripts.auditmodel import RECORDED, capability_of
from transcripts.entries import ASSISTANT, INJECTION, PROMPT, SYSTEM, TOOL_RESULT, wrote_legacy_hook_tag
from transcripts.locate import subagent_files
from transcripts.reader import TranscriptReader
from transcripts.sightings import entry_sightings, injected_slugs, split_legacy_prompt

# Only the first MAX_TERMS_PER_FEEDBACK (16) new words of a prompt are learned; a pasted log's
# tail never reaches them, so it is not kept.
MAX_PROMPT_CHARS = 8000

INJECTED, IN_CONTEXT = "injected", "in_context"

class PromptEvidence(NamedTuple):
    """One typed prompt of the main session and what it tells the router.

    ``evidence``: the first sighting of each memory that is evidence for this prompt's words;
    ``ignored``: ``(slug, why)`` for memories sighted but not evidence (``injected`` for this
    prompt, or ``in_context`` from an earlier turn); ``skip``: why this prompt is never learned
    from (``None`` when it may be)."""
    path: str
    line: int
    timestamp: str | None
    prompt: str
    skip: str | None
    injected: tuple
    evidence: tuple
    ignored: tuple
    # For ``memory-router replay``, which judges the router now rather than learning from it: every
    # memory the turn met (first sighting each, whatever the rules above say), the API calls the
    # turn made (distinct ``message.id``s of the main session) and whether it was compacted.
    sightings: tuple = ()
    calls: int = 0
    compacted: bool = False

    def as_dict(self):
        return {"path": self.path, "line": self.line, "timestamp": self.timestamp, "prompt": self.prompt,
                "skip": self.skip, "injected": list(self.injected),
                "evidence": [s.as_dict() for s in self.evidence],
                "ignored": [{"slug": slug, "why": why} for slug, why in self.ignored]}


class SessionEvidence(NamedTuple):
    path: str
    session_id: str | None
    versions: tuple
    injections_visible: bool
    visibility: str             # the sentence saying why injections can or cannot be seen
    prompts: tuple              # PromptEvidence, in order
    subagents: tuple            # (path, prompt line it was attributed to, or None)
    reader_summary: dict
    cwd: str | None = None      # the first cwd a line names: the hook's payload carries it
    diagnostics: tuple = ()     # the reader's Diagnostic records (damaged lines, by line)

    @property
    def evidence_count(self):
        return sum(len(p.evidence) for p in self.prompts)

    def as_dict(self):
        return {"path": self.path, "session_id": self.session_id, "claude_code_versions": list(self.versions),
                "injections_visible": self.injections_visible, "visibility": self.visibility,
                "prompts": [p.as_dict() for p in self.prompts],
                "subagents": [{"path": p, "prompt_line": line} for p, line in self.subagents],
                "reader": self.reader_summary}


# --------------------------------------------------------------------------- one session


class _Turn:
    __slots__ = ("line", "timestamp", "prompt", "skip", "injected", "sightings", "compacted", "calls", "last_call")

    def __init__(self, line, timestamp, prompt, skip):
        self.line = line
        self.timestamp = timestamp
        self.prompt = prompt
        self.skip = skip
        self.injected = []
        self.sightings = {}        # slug -> first Sighting
        self.compacted = False     # a compaction happened during this turn
        self.calls = 0             # API calls: a streamed reply is several lines with one message.id
        self.last_call = None

    def call(self, message_id):
        # Rows of one reply are consecutive; a line without an id is a call of its own.
        if message_id is None or message_id != self.last_call:
            self.calls += 1
        self.last_call = message_id

    def see(self, sightings):
        for sighting in sightings:
            self.sightings.setdefault(sighting.slug, sighting)

    def inject(self, found):
        self.injected.extend(slug for slug in found if slug not in self.injected)


def _skip_reason(entry, words):
    if entry.subtype == "slash_command":
        return "slash command"
    if entry.prompt_source == "system":
        return "not typed (promptSource system)"
    if not words.strip():
        return "no words"
    return None


def _synthetic(entry):
    """An assistant line Claude Code wrote itself (model ``<synthetic>``: "No response requested."
    after a local command): no API call was made."""
    message = entry.raw.get("message") if entry.raw else None
    return isinstance(message, dict) and message.get("model") == "<synthetic>"


def _agent_id_of(entry):
    result = entry.raw.get("toolUseResult") if entry.raw else None
    agent = result.get("agentId") if isinstance(result, dict) else None
    return agent if isinstance(agent, str) and agent else None


def _first_json_fields(path):
    """(sessionId, agentId) of the first JSON line of a file; (None, None) when unreadable."""
    try:
        with open_regular(path, "rb") as handle:
            for raw in handle:
                if raw.strip():
                    obj = json.loads(raw)
                    if isinstance(obj, dict):
                        return obj.get("sessionId"), obj.get("agentId")
                    return None, None
    except (OSError, ValueError):
        pass
    return None, None


def find_subagent_files(transcript, session_id):
    """Subagent transcripts of a session: ``<session>/subagents/*.jsonl`` (2.1.x), and sibling
    ``agent-*.jsonl`` files whose first line carries the session's id (2.0.x)."""
    found = [str(p) for p in subagent_files(transcript)]
    if session_id:
        directory = os.path.dirname(os.path.abspath(transcript))
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            names = []
        for name in names:
            if name.startswith("agent-") and name.endswith(".jsonl"):
                candidate = os.path.join(directory, name)
                if candidate != os.path.abspath(transcript) and irregular_kind(candidate) is None \
                        and _first_json_fields(candidate)[0] == session_id:
                    found.append(candidate)
    return found


def _subagent_turn(path, by_agent, stamps):
    """The index of the turn a subagent file belongs to, or ``None``."""
    name = os.path.basename(path)
    agent = name[len("agent-"):-len(".jsonl")] if name.startswith("agent-") else None
    _session, first_agent = _first_json_fields(path)
    for candidate in (first_agent, agent):
        if candidate in by_agent:
            return by_agent[candidate]
    first_stamp = None
    try:
        with open_regular(path, "rb") as handle:
            for raw in handle:
                try:
                    obj = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(obj, dict) and isinstance(obj.get("timestamp"), str):
                    first_stamp = obj["timestamp"]
                    break
    except OSError:
        return None
    if first_stamp is None or not stamps:
        return None
    position = bisect.bisect_right([s for s, _i in stamps], first_stamp) - 1
    return stamps[position][1] if position >= 0 else None


def session_evidence(path, slugs, subagents=None, scored_chars=None):
    """The evidence of one session transcript (``SessionEvidence``) against the store's ``slugs``
    (a set). ``subagents``: the subagent transcripts to fold in (default: found beside it).
    ``scored_chars``: keep each prompt as the router scores it under ``max_prompt_chars`` (a
    longer one's first and last halves, ``router.routing.score.prompt_for_scoring``) instead of
    its first ``MAX_PROMPT_CHARS``, so routing the kept text gives the hook's decision.
    Raises ``router.errors.InputError`` when the file cannot be read or is not a transcript."""
    if scored_chars:
        from router.routing.score import prompt_for_scoring

        def keep(words):
            return prompt_for_scoring(words, scored_chars)
    else:
        def keep(words):
            return words[:MAX_PROMPT_CHARS]
    path = str(path)
    reader = TranscriptReader(path)
    turns = []
    by_agent = {}
    versions = []
    saw_attachment = False
    legacy = False
    session_id = None
    cwd = None
    current = None
    for entry in reader:
        if entry.type == "attachment":
            saw_attachment = True
        if entry.version and entry.version not in versions:
            versions.append(entry.version)
        if session_id is None and entry.session_id:
            session_id = entry.session_id
        if cwd is None and entry.raw and isinstance(entry.raw.get("cwd"), str):
            cwd = entry.raw["cwd"]
        kind = entry.kind
        if kind == PROMPT and not entry.is_sidechain:
            words, injected_text = (split_legacy_prompt(entry.text) if wrote_legacy_hook_tag(entry.version)
                                    else (entry.text, ""))
            current = _Turn(entry.line, entry.timestamp, keep(words), _skip_reason(entry, words))
            turns.append(current)
            if injected_text:
                legacy = True
                current.inject(injected_slugs(injected_text, slugs))
            continue
        if current is None:
            continue
        if kind == ASSISTANT:
            current.see(entry_sightings(entry, slugs, path))
            if not entry.is_sidechain and not _synthetic(entry):
                current.call(entry.message_id)
        elif kind == INJECTION and not entry.is_sidechain:
            current.inject(injected_slugs(entry.text, slugs))
        elif kind == TOOL_RESULT:
            agent = _agent_id_of(entry)
            if agent:
                by_agent.setdefault(agent, len(turns) - 1)
        elif kind == SYSTEM and entry.subtype == "compact_boundary":
            current.compacted = True
    capability, visibility = capability_of(versions, saw_attachment)
    visible = capability == RECORDED or legacy
    if legacy and capability != RECORDED:
        visibility = "injections are recorded inside the prompt (<user-prompt-submit-hook>, Claude Code 1.0.x)"

    stamps = sorted((turn.timestamp, i) for i, turn in enumerate(turns) if turn.timestamp)
    attributed = []
    for sub in (find_subagent_files(path, session_id) if subagents is None else [str(p) for p in subagents]):
        index = _subagent_turn(sub, by_agent, stamps)
        attributed.append((sub, turns[index].line if index is not None else None))
        if index is None:
            continue
        for entry in TranscriptReader(sub):
            if entry.kind == ASSISTANT:
                turns[index].see(entry_sightings(entry, slugs, sub))

    prompts = []
    context = set()
    for turn in turns:
        evidence, ignored = [], []
        for slug, sighting in turn.sightings.items():
            if slug in turn.injected:
                ignored.append((slug, INJECTED))
            elif slug in context:
                ignored.append((slug, IN_CONTEXT))
            elif visible and turn.skip is None:
                evidence.append(sighting)
        context.update(turn.injected)
        context.update(turn.sightings)
        if turn.compacted:
            context.clear()
        prompts.append(PromptEvidence(path, turn.line, turn.timestamp, turn.prompt, turn.skip, tuple(turn.injected),
                                      tuple(evidence), tuple(ignored), tuple(turn.sightings.values()), turn.calls,
                                      turn.compacted))
    return SessionEvidence(path, session_id, tuple(versions), visible, visibility, tuple(prompts), tuple(attributed),
                           reader.summary(), cwd, tuple(reader.diagnostics))


def session_transcripts(directory, skipped=None):
    """Every session transcript under ``directory``, sorted: ``*.jsonl`` regular files, except
    subagent transcripts (inside a ``subagents`` folder, or named ``agent-*.jsonl``), which are read
    with their session. A ``*.jsonl`` that is not a regular file (a FIFO would block the reader for
    ever) is passed over, and appended to ``skipped`` as ``(path, why)`` for the report to name."""
    found = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if d != "subagents")
        for name in sorted(files):
            if name.endswith(".jsonl") and not name.startswith("agent-"):
                path = os.path.join(root, name)
                why = irregular_kind(path)
                if why is None:
                    found.append(path)
                elif skipped is not None:
                    skipped.append((path, why))
    return sorted(found)


def transcript_files(paths, skipped=None):
    """TRANSCRIPT|DIR arguments -> session transcripts, each once (a directory: every session under
    it; subagent files are read with their session, never as sessions of their own). What
    ``learn`` and ``replay`` read; a path that is neither is an ``InputError`` naming the fix.
    A directory's entries that are not regular files go to ``skipped`` (``session_transcripts``);
    a file named as an argument is read, so a FIFO there is the reader's one-line error."""
    from router.errors import InputError

    files = []
    for arg in paths:
        if os.path.isdir(arg):
            found = session_transcripts(arg, skipped)
            if not found:
                raise InputError("no session transcript (*.jsonl) under this directory", path=arg,
                                 fix="pass a Claude Code project directory (~/.claude/projects/<key>) or a .jsonl file")
            files.extend(found)
        elif os.path.exists(arg):
            files.append(arg)
        else:
            raise InputError("no such transcript file or directory", path=arg,
                             fix="check the path; `memory-router transcript locate` finds this project's newest session")
    seen = set()
    return [f for f in files if not (os.path.abspath(f) in seen or seen.add(os.path.abspath(f)))]

