"""The citation gate's rules: read a write's text, find the decision ids and memory slugs it
cites, and decide whether the write may go ahead (docs/citation-gate.md).

Pure functions over plain dicts, lists and tuples, standard library only; file access is limited
to the ledger reads in ``find_ledgers``/``load_ledgers``. ``router.gate`` (the PreToolUse hook)
and ``harness.gate_cli`` (``memory-router gate check``) both decide through ``decide`` and skip
through ``skip_reason``, so the hook and the manual check cannot disagree about what a valid
citation is or which files are exempt.
"""

import difflib
import json
import os
import re

from router import safeio

BYPASS_MARKER = "citation-check: allow-unknown-ids"

# Where the text a write adds lives, per host. Claude Code: Write ``content``, Edit
# ``new_string``, MultiEdit (before ~2.0.3x) ``tool_input.edits[].new_string``, NotebookEdit
# ``new_source``. Cursor: a flat top-level ``edits`` array. ``old_string`` is deliberately not
# audited: it is text being removed, and removing a fabricated citation must never be refused.
TEXT_FIELDS = ("content", "new_string", "new_source")
EDIT_TEXT_FIELDS = ("new_string",)
PATH_FIELDS = ("file_path", "notebook_path")

_DATE = r"\d{4}-\d{2}-\d{2}"
OWNER_RULING_RE = re.compile(r"\bowner[ \t]+ruling[ \t,:]*(?:(?:of|on|dated)[ \t]+)?(" + _DATE + r")", re.I)
_MEMORY_RE = re.compile(
    r"(?<![\w-])(?:native[ \t]+)?memory:[ \t]*`?(?P<slug>[a-z][a-z0-9_.-]*[a-z0-9])", re.I | re.A)
# A Markdown heading or list marker before a ledger entry's id, and emphasis around it.
_ENTRY_LEAD = r"[ \t]{0,3}(?:#{1,6}[ \t]+|(?:[-*+]|\d{1,9}[.)])[ \t]+)?(?:\*\*|`)?"
_ENTRY_LEAD_RE = re.compile(_ENTRY_LEAD)
_ENTRY_SEP_RE = re.compile(r"(?:\*\*|`)?[ \t]*(?:[:|.\u2013\u2014-]+[ \t]*)?")
_FENCE_RE = re.compile(r"[ \t]{0,3}(```|~~~)")
# An id written without its separator or with the wrong one (D030, D_030, D 030, D–030).
_NEAR_ID_RE = re.compile(r"([A-Za-z]+)[-_ \u2013\u2014]?(\d+)(?![\w])")
_OPENING_WORD_RE = re.compile(r"[^A-Za-z0-9]*([A-Za-z0-9]+)")
# What may follow an entry's id: a separator, emphasis, whitespace or the end of the line (not
# ``'s``: a line opening with a possessive is prose about the entry, not the entry).
_ENTRY_END = r"(?:\*\*|`)?(?:[\s:|.\u2013\u2014]|$)"
# A first token that is an id glued to other word characters, hyphens or heading marks.
_WORDISH_RE = re.compile(r"[\w#-]+")


# --- payloads ---------------------------------------------------------------------------------

def _as_text(value):
    """A field's text: a string as is; anything else serialised, so no shape can hide text."""
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, default=str)


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
    object, or carries none of these fields, gives no texts."""
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


# --- citations ---------------------------------------------------------------------------------

def citation_regex(pattern):
    """The citation regex for an id pattern: case-insensitive, never inside a hyphenated
    identifier (``abc-D-030-x``) or a longer word (``D-030s``); a possessive ``D-030's`` counts.
    (``re`` caches compiled patterns, so building it per call costs a dict lookup.)"""
    return re.compile(r"(?<![\w-])(?:" + pattern + r")(?![\w-])", re.I)


def _loose_regex(pattern):
    """The id pattern anywhere, any case: for spotting ids glued to other text."""
    return re.compile(pattern, re.I)


def _entry_regex(pattern):
    """A ledger line opening an entry: lead, the id, then a separator, whitespace or the end."""
    return re.compile(_ENTRY_LEAD + r"(?P<id>(?:" + pattern + r"))(?=" + _ENTRY_END + ")", re.I)


def cited_ids(text, pattern):
    """Decision ids cited in ``text``, upper-cased, in first-seen order."""
    found = []
    for match in citation_regex(pattern).finditer(text):
        entry_id = match.group(0).upper()
        if entry_id not in found:
            found.append(entry_id)
    return found


def cited_memories(text):
    """Memory slugs cited as ``memory: <slug>`` or ``native memory: <slug>`` (any case, in or out
    of parentheses), normalised like memory file names, in first-seen order.

    A slug must start with a letter and contain ``_`` or ``-``: ``Memory: 4GB`` or ``memory: low``
    is prose, not a citation."""
    found = []
    for match in _MEMORY_RE.finditer(text):
        raw = match.group("slug")
        if "_" not in raw and "-" not in raw:
            continue
        slug = re.sub(r"[^a-z0-9_]+", "_", raw.lower())  # starts and ends alphanumeric already
        if slug not in found:
            found.append(slug)
    return found


def owner_ruling_dates(text):
    """The ISO dates named as ``owner ruling <date>``, in first-seen order."""
    dates = []
    for match in OWNER_RULING_RE.finditer(text):
        if match.group(1) not in dates:
            dates.append(match.group(1))
    return dates


# --- ledgers ----------------------------------------------------------------------------------

def find_ledgers(start_dir, names):
    """Every ledger file from ``start_dir`` up to the filesystem root, nearest first."""
    found = []
    current = os.path.abspath(start_dir)
    while True:
        for name in names:
            candidate = os.path.join(current, name)
            if os.path.isfile(candidate):
                found.append(candidate)
        parent = os.path.dirname(current)
        if parent == current:
            return found
        current = parent


def parse_ledger(text, pattern, source="<ledger>"):
    """``(entries, problems)`` of one ledger's text.

    An entry starts on a line whose first token, after any Markdown heading (``## ``) or list
    marker (``- ``, ``1. ``) and optional emphasis, is an id followed by a separator or the end
    of the line; its text runs to the next entry. ``entries`` is a list of
    ``(id, opening_word, line, source)``; the opening word is the first word of the entry's
    text. ``problems`` lists ``(source, line, message)`` for lines that look like an entry but
    do not parse (``D030:``, ``D-030a:``) and for an id entered twice in one file. Lines inside
    fenced code blocks are ignored."""
    entry_re = _entry_regex(pattern)
    entries = []
    problems = []
    seen = {}
    current = None
    fence = None
    for lineno, line in enumerate(text.splitlines(), 1):
        fenced = _FENCE_RE.match(line)
        if fence is not None:
            if fenced and fenced.group(1) == fence:
                fence = None
            continue
        if fenced:
            fence = fenced.group(1)
            continue
        match = entry_re.match(line)
        if match:
            entry_id = match.group("id").upper()
            rest = line[_ENTRY_SEP_RE.match(line, match.end()).end():]
            if entry_id in seen:
                problems.append((source, lineno, f"{entry_id} is entered again (first at line {seen[entry_id]})"))
            else:
                seen[entry_id] = lineno
            current = [entry_id, rest, lineno]
            entries.append(current)
            continue
        problem = _near_entry(line[_ENTRY_LEAD_RE.match(line).end():], pattern)
        if problem:
            problems.append((source, lineno, problem))
        if current is not None:
            current[1] += "\n" + line
    return [(entry_id, _opening_word(body), lineno, source) for entry_id, body, lineno in entries], problems


def _opening_word(body):
    match = _OPENING_WORD_RE.match(body)
    return match.group(1) if match else ""


def _near_entry(rest, pattern):
    """Why a line whose first token looks like a ledger id does not parse as an entry, or ``None``."""
    words = rest.split()
    if not words:
        return None
    token = words[0].rstrip(":.,;|*_`")
    if citation_regex(pattern).fullmatch(token):
        return None  # a well-formed id where no entry can start (an indented code line)
    if _WORDISH_RE.fullmatch(token) and _loose_regex(pattern).search(token):
        return f"{token!r} looks like a ledger entry but is not an id followed by a separator (write '## D-030: title')"
    near = _NEAR_ID_RE.match(rest)
    if near and not _loose_regex(pattern).match(rest):
        guess = f"{near.group(1)}-{near.group(2)}"
        if _loose_regex(pattern).fullmatch(guess):
            return f"{near.group(0)!r} looks like ledger id {guess.upper()} written without its separator"
    return None


def load_ledgers(paths, pattern):
    """The merged ledger of ``paths``: ``{"ids": {id: [entry, ...]}, "text": merged text,
    "sources": paths, "problems": [...]}``. Files are joined with a newline so a file without a
    trailing newline cannot fuse its last line with the next file's first."""
    ids = {}
    problems = []
    texts = []
    for path in paths:
        with safeio.open_regular(path, "rb") as handle:
            text = handle.read().decode("utf-8", errors="replace")
        texts.append(text)
        entries, found = parse_ledger(text, pattern, path)
        problems.extend(found)
        for entry in entries:
            ids.setdefault(entry[0], []).append(entry)
    return {"ids": ids, "text": "\n".join(texts), "sources": list(paths), "problems": problems}


def highest_id(ids):
    """The id with the largest number (``D-058`` over ``D-9``), or ``None``."""
    if not ids:
        return None
    return max(ids, key=lambda found: ([int(n) for n in re.findall(r"\d+", found)], found))


# --- skip list and decision -------------------------------------------------------------------

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


def _unknown_id_message(entry_id, ledger):
    top = highest_id(ledger["ids"])
    return (f"{entry_id} is not in the decision ledger (read: {', '.join(ledger['sources'])}; highest id "
            f"visible here: {top or 'none'}). If it was minted recently, refresh the ledger from main "
            "(merge or pull main into this checkout) and retry. Do not substitute a lower id that "
            "happens to exist: citing a different decision is itself a fabrication. To write about an "
            f"unknown id on purpose (a post-mortem, a bug log), include the literal {BYPASS_MARKER}.")


def _unknown_memory_message(slug, memory):
    near = difflib.get_close_matches(slug, sorted(memory["slugs"]))  # difflib's defaults: 3, ratio >= 0.6
    nearest = ("nearest existing: " + ", ".join(near)) if near else "no existing slug is close"
    return (f"memory {slug} is in neither the memory directory nor the cluster file "
            f"(read: {', '.join(memory['sources'])}); {nearest}. Cite a memory that exists, or "
            f"write the memory first. To write about a missing memory on purpose, include the "
            f"literal {BYPASS_MARKER}.")


def decide(texts, ledger, memory, pattern, dead_words):
    """The gate's decision for the texts of one write.

    ``ledger`` is ``load_ledgers``' result (``None``: no ledger found); ``memory`` is
    ``{"slugs": set, "sources": [...]}`` (``None``: no memory directory or cluster file found).
    Returns ``{"verdict": "block" | "warn" | "pass", "blocks": [...], "warnings": [...],
    "bypassed": bool}``. With the bypass marker the verdict is never ``block``: what would have
    been blocked is listed as a warning, so the bypass always announces itself."""
    text = "\n".join(body for _label, body in texts)
    blocks = []
    warnings = []
    ids = cited_ids(text, pattern)
    if ids and ledger is None:
        warnings.append(f"not checked: {', '.join(ids)} cited but no decision ledger was found")
    elif ids:
        for entry_id in ids:
            entries = ledger["ids"].get(entry_id)
            if not entries:
                blocks.append(_unknown_id_message(entry_id, ledger))
                continue
            for _id, word, line, source in entries:
                if word in dead_words:
                    warnings.append(f"{entry_id} is cited, but its ledger entry opens {word} ({source}:{line}): "
                                    "cite it as history, not as a current rule")
                    break
        for source, line, problem in ledger["problems"]:
            warnings.append(f"ledger {source}:{line}: {problem}")
    dates = owner_ruling_dates(text)
    if dates and ledger is None:
        warnings.append(f"not checked: owner ruling {', '.join(dates)} cited but no decision ledger was found")
    elif dates:
        for date in dates:
            if date not in ledger["text"]:
                warnings.append(f"'owner ruling {date}' names a date the ledger does not contain: "
                                "record the ruling in the ledger")
    slugs = cited_memories(text)
    if slugs and memory is None:
        warnings.append(f"not checked: memory {', '.join(slugs)} cited but no memory directory or cluster "
                        "file was found")
    elif slugs:
        blocks.extend(_unknown_memory_message(slug, memory) for slug in slugs if slug not in memory["slugs"])
    bypassed = BYPASS_MARKER in text
    if bypassed:
        warnings = [f"citation gate bypassed by the literal {BYPASS_MARKER}: "
                    + (f"{len(blocks)} citation(s) not enforced" if blocks else "nothing would have been blocked")]\
            + ["not enforced: " + block for block in blocks] + warnings
        blocks = []
    verdict = "block" if blocks else ("warn" if warnings else "pass")
    return {"verdict": verdict, "blocks": blocks, "warnings": warnings, "bypassed": bypassed}


def render(result):
    """The decision as text for people and models: blocks first, then warnings."""
    lines = [f"BLOCKED: {block}" for block in result["blocks"]]
    lines += [f"warning: {warning}" for warning in result["warnings"]]
    return "\n".join(lines)
