"""The citation gate's rules: read a write's text, find the decision ids and memory slugs it
cites, and decide whether the write may go ahead (docs/citation-gate.md).

Pure functions over plain dicts, lists and tuples, standard library only; what a text cites is
read by ``router.gate.citation_text``, the ledgers by ``router.gate.citation_ledger`` (the only file
access). ``router.gate.gate`` (the PreToolUse hook) and ``harness.gate_cli`` (``memory-router gate
check``) both decide through ``decide`` and skip through ``skip_reason``, so the hook and the
manual check cannot disagree about what a valid citation is or which files are exempt.

The rule: block only what is certainly a citation of an id (or memory) the ledger (or store)
lacks; where it is ambiguous, warn. The output is capped, whatever the text cites.
"""

import difflib
import json
import os

# find_ledgers, ledger_boundary, load_ledgers and scan are used through this module by router.gate.gate.
from router.gate.citation_ledger import (fits_shape, find_ledgers, highest_id, id_shapes,  # noqa: F401
                                    ledger_boundary, load_ledgers)
from router.gate.citation_text import scan

BYPASS_MARKER = "citation-check: allow-unknown-ids"

# Where the text a write adds lives, per host. Claude Code: Write ``content``, Edit
# ``new_string``, MultiEdit (before ~2.0.3x) ``tool_input.edits[].new_string``, NotebookEdit
# ``new_source``. Cursor: a flat top-level ``edits`` array. ``old_string`` is deliberately not
# audited: it is text being removed, and removing a fabricated citation must never be refused.
TEXT_FIELDS = ("content", "new_string", "new_source")
EDIT_TEXT_FIELDS = ("new_string",)
PATH_FIELDS = ("file_path", "notebook_path")
WRITE_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")

# The output's caps: a write citing 20,000 absent ids, or a ledger with 5,000 malformed lines,
# must not turn into a megabyte of hook output.
MAX_BLOCKS = 5
MAX_WARNINGS = 12
MAX_LISTED = 10
MAX_PROBLEMS_PER_LEDGER = 3
MAX_SHOWN_CHARS = 60


# --- payloads ---------------------------------------------------------------------------------

def _strings(value):
    """Every string in a JSON value, keys and values, in document order; a number or boolean as
    its JSON text. Walked, not serialised: a ``\\t`` or ``\\n`` before an id stays a real tab or
    line break, where a JSON escape would glue ``t`` or ``n`` to the id and hide it."""
    found = []
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            for key, inner in reversed(list(item.items())):
                pending.append(inner)
                pending.append(key)
        elif isinstance(item, (list, tuple)):
            pending.extend(reversed(item))
        elif isinstance(item, (bool, int, float)):
            found.append(json.dumps(item))
        elif item is not None:
            found.append(str(item))
    return found


def _as_text(value):
    """A field's text: a string as is; anything else its strings, one a line, so no shape can
    hide text."""
    if isinstance(value, str):
        return value
    return "\n".join(_strings(value))


def _edit_texts(edits, where):
    if not isinstance(edits, list):
        return [(where, _as_text(edits))]
    texts = []
    for number, edit in enumerate(edits, 1):
        label = f"{where}[{number}]"
        if not isinstance(edit, dict):
            texts.append((label, _as_text(edit)))
            continue
        for name in EDIT_TEXT_FIELDS:
            if edit.get(name) is not None:
                texts.append((f"{label}.{name}", _as_text(edit[name])))
    return texts


def payload_texts(payload):
    """``(file_path or None, [(label, text), ...])``: every piece of text a write payload adds.

    Reads every known shape at once and audits each source, so a payload carrying both a
    ``content`` field and an ``edits`` array cannot hide the array. A payload that is not a JSON
    object, or carries none of these fields, gives no texts (``unreadable`` says whether that
    leaves a write unchecked)."""
    if not isinstance(payload, dict):
        return None, []
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        tool_input = {}
    texts = []
    for name in TEXT_FIELDS:
        if tool_input.get(name) is not None:
            texts.append((f"tool_input.{name}", _as_text(tool_input[name])))
    if tool_input.get("edits") is not None:
        texts.extend(_edit_texts(tool_input["edits"], "tool_input.edits"))
    if payload.get("edits") is not None:
        texts.extend(_edit_texts(payload["edits"], "edits"))
    path = None
    for holder in (tool_input, payload):
        for name in PATH_FIELDS:
            if path is None and isinstance(holder.get(name), str) and holder[name]:
                path = holder[name]
    return path, texts


def _json_kind(value):
    if value is None:
        return "null"
    return {list: "array", str: "string", bool: "boolean"}.get(type(value), "number")


def unreadable(payload, texts):
    """Why the gate cannot read the write ``payload`` (so the write would go unchecked), or
    ``None``: it gave ``texts``, or it names a tool that is not a write (``Read``)."""
    if not isinstance(payload, dict):
        return f"the payload is a JSON {_json_kind(payload)}, not an object"
    if texts:
        return None
    tool = payload.get("tool_name")
    if isinstance(tool, str) and tool and tool not in WRITE_TOOLS:
        return None
    if "tool_input" in payload and not isinstance(payload["tool_input"], dict):
        return f"its tool_input is a JSON {_json_kind(payload['tool_input'])}, not an object"
    name = tool if isinstance(tool, str) and tool else "the write"
    return (f"{name} carries no text where a write adds it (content, new_string, edits[].new_string, "
            "new_source)")


# --- skip list --------------------------------------------------------------------------------

def skip_reason(path, ledger_names, fixtures_dir):
    """Why a write to ``path`` is not checked (``"ledger file"`` or ``"fixtures directory"``), or
    ``None``. ``ledger_names`` are relative (the config refuses absolute ones); ``fixtures_dir``
    ``""`` means none. The one skip list: the hook and ``gate check`` both call it."""
    if not path:
        return None
    normalised = os.path.abspath(path)
    for name in ledger_names:
        if normalised.endswith(os.sep + os.path.normpath(name)):
            return "ledger file"
    if fixtures_dir:
        root = os.path.abspath(fixtures_dir)
        if normalised != root and os.path.commonpath([normalised, root]) == root:
            return "fixtures directory"
    return None


# --- messages ---------------------------------------------------------------------------------

def _shown(text):
    """``text`` cut to a length a message can carry (an id of 300,000 digits is still one id)."""
    return text if len(text) <= MAX_SHOWN_CHARS else text[:MAX_SHOWN_CHARS - 3] + "..."


def _listing(items):
    """``a, b, c`` of at most ``MAX_LISTED`` items (already ``_shown``), then ``and K more``."""
    items = list(items)
    shown = ", ".join(items[:MAX_LISTED])
    return shown + (f" and {len(items) - MAX_LISTED} more" if len(items) > MAX_LISTED else "")


def _unknown_id_message(entry_id, ledger, top):
    return (f"{_shown(entry_id)} is not in the decision ledger (read: {', '.join(ledger['sources'])}; highest id "
            f"visible here: {top}). If it was minted recently, refresh the ledger from main "
            "(merge or pull main into this checkout) and retry. Do not substitute a lower id that "
            "happens to exist: citing a different decision is itself a fabrication. To write about an "
            f"unknown id on purpose (a post-mortem, a bug log), include the literal {BYPASS_MARKER}.")


def _unknown_memory_message(slug, memory):
    near = difflib.get_close_matches(slug, sorted(memory["slugs"]))  # difflib's defaults: 3, ratio >= 0.6
    nearest = ("nearest existing: " + ", ".join(near)) if near else "no existing slug is close"
    return (f"memory {_shown(slug)} is in neither the memory directory nor the cluster file "
            f"(read: {', '.join(memory['sources'])}); {nearest}. Cite a memory that exists, or "
            f"write the memory first. To write about a missing memory on purpose, include the "
            f"literal {BYPASS_MARKER}.")


def _shape_doubt(entry_id, shapes, example):
    """Why an id the ledger lacks, written in upper case or in prose, is not certainly a citation
    of it (its shape), or ``None``."""
    if not shapes:
        return "no entry could be read from the ledger"
    if not fits_shape(entry_id, shapes):
        return f"not written the way the ledger writes its ids, such as {example}"
    return None


# --- the decision -----------------------------------------------------------------------------

class _Report:
    """The blocks and warnings of one decision. Warnings are capped as they are collected (past
    the cap only a count is kept); blocks are kept as the missing ids and slugs, and only the
    first few are made messages, since each message names the ledgers or the nearest slugs."""

    def __init__(self):
        self.missing_ids = []        # blocks: messages are built for the first few only
        self.missing_memories = []
        self.warnings = []
        self.unlisted = 0

    def warn(self, message):
        if len(self.warnings) < MAX_WARNINGS:
            self.warnings.append(message)
        else:
            self.unlisted += 1


def _check_ids(report, ids, ledger, dead_words):
    for source in ledger["empty"]:
        report.warn(f"ledger {source} yields no entries (none of its lines reads like '## D-001: title', "
                    "'| D-001 | title |' or '- [x] D-001: title'): no id is blocked on its account")
    shapes = id_shapes(ledger["ids"])
    example = next(iter(ledger["ids"]), None)
    doubtful = []
    for entry_id, seen in ids.items():
        entries = ledger["ids"].get(entry_id)
        if entries:
            for _id, word, line, source in entries:
                if word in dead_words:
                    report.warn(f"{_shown(entry_id)} is cited, but its ledger entry opens {word} ({source}:{line}): "
                                "cite it as history, not as a current rule")
                    break
            continue
        upper = seen["upper"] or seen["prose"]
        doubt = _shape_doubt(entry_id, shapes, example) if upper else seen["reason"]
        if not seen["upper"] and doubt and seen["prose"] and not seen["reason"]:
            continue  # lower case and not the ledger's shape: ``x = d-1`` is no citation
        mention = ledger["mentions"].get(entry_id)
        if mention:
            report.warn(f"{_shown(entry_id)} is not a ledger entry but appears in the text of {mention[0]}:"
                        f"{mention[1]}: not blocked; if it is a decision, give it an entry such as "
                        f"'## {_shown(entry_id)}: title'")
        elif doubt:
            doubtful.append(f"{_shown(seen['as'])} ({doubt})")
        else:
            report.missing_ids.append(entry_id)
    if doubtful:
        report.warn(f"not blocked, as these may not be citations, but the ledger lacks them: "
                    f"{_listing(doubtful)}. If one is a citation, cite an id the ledger holds")
    by_source = {}
    for source, line, problem in ledger["problems"]:
        by_source.setdefault(source, []).append((line, problem))
    for source, found in by_source.items():
        for line, problem in found[:MAX_PROBLEMS_PER_LEDGER]:
            report.warn(f"ledger {source}:{line}: {problem}")
        if len(found) > MAX_PROBLEMS_PER_LEDGER:
            report.warn(f"ledger {source}: and {len(found) - MAX_PROBLEMS_PER_LEDGER} more lines that look like "
                        "entries but do not parse")


def _check_memories(report, memories, memory):
    doubtful = []
    for slug, seen in memories.items():
        if slug in memory["slugs"]:
            continue
        if seen["certain"]:
            report.missing_memories.append(slug)
        else:
            doubtful.append(f"{_shown(seen['as'])} ({seen['reason']})")
    if doubtful:
        report.warn("not blocked, as these may not be memory citations, but neither the memory "
                    f"directory nor the cluster file holds them: {_listing(doubtful)}")


def _block_messages(report, ledger, memory):
    ids = report.missing_ids[:MAX_BLOCKS]
    top = highest_id(ledger["ids"]) if ids else None
    messages = [_unknown_id_message(entry_id, ledger, top) for entry_id in ids]
    messages += [_unknown_memory_message(slug, memory) for slug in report.missing_memories[:MAX_BLOCKS - len(ids)]]
    rest = (report.missing_ids + report.missing_memories)[MAX_BLOCKS:]
    if rest:
        messages.append(f"and {len(rest)} more citations of ids or memories that do not exist: "
                        f"{_listing([_shown(key) for key in rest])}")
    return messages


def decide(texts, ledger, memory, pattern, dead_words):
    """The gate's decision for the texts of one write (``decide_scanned`` on ``scan`` of them).

    ``ledger`` is ``load_ledgers``' result (``None``: no ledger found); ``memory`` is
    ``{"slugs": set, "sources": [...]}`` (``None``: no memory directory or cluster file found).
    Returns ``{"verdict": "block" | "warn" | "pass", "blocks": [...], "warnings": [...],
    "bypassed": bool}``, each list capped. With the bypass marker the verdict is never
    ``block``: what would have been blocked is listed as a warning, so the bypass always
    announces itself."""
    text = joined(texts)
    return decide_scanned(scan(text, pattern), text, ledger, memory, dead_words)


def joined(texts):
    """The texts of one write as one text, a line break between them (so the end of one and the
    start of the next cannot fuse into an id)."""
    return "\n".join(body for _label, body in texts)


def decide_scanned(cited, text, ledger, memory, dead_words):
    """``decide`` for a write whose joined ``text`` has been scanned already (``cited``)."""
    report = _Report()
    ids = cited["ids"]
    if ids and ledger is None:
        report.warn(f"not checked: {_listing(map(_shown, ids))} cited but no decision ledger was found")
    elif ids:
        _check_ids(report, ids, ledger, dead_words)
    dates = cited["dates"]
    if dates and ledger is None:
        report.warn(f"not checked: owner ruling {_listing(dates)} cited but no decision ledger was found")
    elif dates:
        for date in dates:
            if date not in ledger["dates"]:
                report.warn(f"'owner ruling {date}' names a date the ledger does not contain: "
                            "record the ruling in the ledger")
    memories = cited["memories"]
    if memories and memory is None:
        report.warn(f"not checked: memory {_listing(map(_shown, memories))} cited but no memory directory or "
                    "cluster file was found")
    elif memories:
        _check_memories(report, memories, memory)
    blocks = _block_messages(report, ledger, memory)
    warnings = report.warnings + ([f"and {report.unlisted} more warnings"] if report.unlisted else [])
    bypassed = BYPASS_MARKER in text
    if bypassed:
        count = len(report.missing_ids) + len(report.missing_memories)
        warnings = [f"citation gate bypassed by the literal {BYPASS_MARKER}: "
                    + (f"{count} citation(s) not enforced" if count else "nothing would have been blocked")]\
            + ["not enforced: " + block for block in blocks] + warnings
        blocks = []
    verdict = "block" if blocks else ("warn" if warnings else "pass")
    return {"verdict": verdict, "blocks": blocks, "warnings": warnings, "bypassed": bypassed}


def render(result):
    """The decision as text for people and models: blocks first, then warnings."""
    lines = [f"BLOCKED: {block}" for block in result["blocks"]]
    lines += [f"warning: {warning}" for warning in result["warnings"]]
    return "\n".join(lines)
