"""The main session's turns, read in order: each prompt with the injections before its reply,
the reply and its tool calls (for the behavioural verdict), and where a text occurs."""

from dataclasses import dataclass, field

from transcripts.auditmodel import SEARCHED_KINDS, TURN_ADVANCING, capability_of
from transcripts.entries import ASSISTANT, INJECTION, PROMPT


@dataclass(frozen=True)
class Occurrence:
    line: int
    kind: str
    stream: str


def find_text(entries, needle):
    """Every searched line (see the module docstring) whose text contains ``needle``, in order."""
    found = []
    for entry in entries:
        if entry.kind in SEARCHED_KINDS and any(needle in text for text in entry.texts):
            found.append(Occurrence(entry.line, entry.kind, entry.stream))
    return tuple(found)


@dataclass(frozen=True)
class Turn:
    """One prompt of the main session and what followed it, up to the next prompt.

    ``injections`` are the UserPromptSubmit injection entries after the prompt and before the
    turn's first assistant or tool-result line; ``late_injections`` came after that (re-sends).
    This is order-based; ``audit_session`` follows parentUuid chains for the checks.
    """

    prompt: object                          # reader Entry
    injections: tuple = ()
    late_injections: tuple = ()
    assistant_entries: tuple = ()
    tool_uses: tuple = ()                   # reader ToolUse (line, id, name, input), in order
    sidechain_injections: tuple = ()        # injections on sidechain lines met during the turn
    sidechain_lines: int = 0
    end_line: int = 0
    saw_attachment: bool = False            # any attachment line up to the end of this turn
    versions: tuple = field(default=())

    @property
    def reply_text(self):
        return "\n".join(entry.text for entry in self.assistant_entries if entry.text)

    @property
    def capability(self):
        return capability_of(self.versions, self.saw_attachment)


def iter_turns(entries):
    """The main session's turns, streamed: each is yielded when the next prompt (or the end) arrives."""
    state = None
    saw_attachment = False
    versions = []

    def close(current):
        return Turn(current["prompt"], tuple(current["inj"]), tuple(current["late"]), tuple(current["asst"]),
                    tuple(current["tools"]), tuple(current["side_inj"]), current["side"], current["end"],
                    saw_attachment, tuple(versions))

    for entry in entries:
        if entry.type == "attachment":
            saw_attachment = True
        if entry.version and entry.version not in versions:
            versions.append(entry.version)
        if entry.is_sidechain:
            if state is not None:
                state["side"] += 1
                state["end"] = entry.line
                if entry.kind == INJECTION:
                    state["side_inj"].append(entry)
            continue
        if entry.kind == PROMPT:
            if state is not None:
                yield close(state)
            state = {"prompt": entry, "inj": [], "late": [], "asst": [], "tools": [], "side_inj": [], "side": 0,
                     "advanced": False, "end": entry.line}
            continue
        if state is None:
            continue
        state["end"] = entry.line
        if entry.kind == INJECTION:
            (state["late"] if state["advanced"] else state["inj"]).append(entry)
        elif entry.kind == ASSISTANT:
            state["advanced"] = True
            state["asst"].append(entry)
            state["tools"].extend(entry.tool_uses)
        elif entry.kind in TURN_ADVANCING:
            state["advanced"] = True
    if state is not None:
        yield close(state)


def first_turn(entries):
    """The first prompt of the main session with its injections, reply and tool calls; or None.

    Reads only as far as the second prompt."""
    turns = iter_turns(entries)
    try:
        return next(turns, None)
    finally:
        turns.close()
