"""The decision ledgers the citation gate checks ids against (docs/citation-gate.md#the-ledger):
where they are looked for, how their bytes are decoded, which lines are entries, and the shape
of the ids they hold.

Standard library only; file access is limited to ``ledger_boundary`` and ``find_ledgers``
(which stat directories) and ``load_ledgers`` (which reads the files).
"""

import codecs
import os
import re

from router import safeio
from router.gate.citation_text import fold

# A byte-order mark names the encoding (UTF-32 before UTF-16: its little-endian mark starts
# with UTF-16's); without one a ledger is UTF-8, and "utf-8-sig" drops a UTF-8 mark.
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
_NO_BOM_CODEC = "utf-8-sig"
_UNDECODABLE = "replace"

# Before a ledger entry's id: a table row's first cell (``| D-003 |``), or a Markdown heading or
# list marker with an optional checkbox (``- [x] D-003``) and the word Decision (``## Decision
# D-003``); then emphasis or a bracket (``**D-003**``, ```D-003```, ``[D-003]``).
_ENTRY_LEAD = (r"[ \t]{0,3}(?:\|[ \t]*|(?:#{1,6}[ \t]+|(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?)?"
               r"(?:decision[ \t]+)?)(?:\*\*|`|\[)?")
_ENTRY_LEAD_RE = re.compile(_ENTRY_LEAD, re.I)
# What may follow an entry's id: a separator, emphasis or a bracket, whitespace or the end of
# the line (not ``'s``: a line opening with a possessive is prose about the entry).
_ENTRY_END = r"(?:\*\*|`|\])?(?:[\s:|.\u2013\u2014]|$)"
_ENTRY_SEP_RE = re.compile(r"(?:\*\*|`|\])?[ \t]*(?:[:|.\u2013\u2014-]+[ \t]*)?")
_FENCE_RE = re.compile(r"[ \t]{0,3}(```|~~~)")
# An id written without its separator or with the wrong one (D030, D_030, D 030, D–030).
_NEAR_ID_RE = re.compile(r"([A-Za-z]+)[-_ \u2013\u2014]?(\d+)(?![\w])")
_OPENING_WORD_RE = re.compile(r"[^A-Za-z0-9]*([A-Za-z0-9]+)")
# A first token that is an id glued to other word characters, hyphens or heading marks.
_WORDISH_RE = re.compile(r"[\w#-]+")
_DIGITS_RE = re.compile(r"\d+")
# Every ISO date in a ledger, overlapping ones included (the lookahead consumes nothing).
_DATES_RE = re.compile(r"(?=(\d{4}-\d{2}-\d{2}))")


# --- where ledgers are ------------------------------------------------------------------------

def _encloses(outer, inner):
    return inner == outer or inner.startswith(outer.rstrip(os.sep) + os.sep)


def ledger_boundary(start_dir, project_dirs=()):
    """The highest directory the up-tree walk from ``start_dir`` reads: the outermost enclosing
    git work tree (a directory holding ``.git``, a directory or a worktree's file) or an
    enclosing project directory, whichever is higher; ``start_dir`` itself when neither encloses
    it. A worktree under a checkout is inside the checkout's work tree, so it still sees the
    checkout's ledger; a ``DECISIONS.md`` in a shared ancestor such as ``/tmp`` is not read."""
    start = os.path.abspath(start_dir)
    highest = start
    current = start
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            highest = current
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    for project in project_dirs:
        project = os.path.abspath(project) if project else None
        if project and _encloses(project, start) and _encloses(project, highest):
            highest = project
    return highest


def find_ledgers(start_dir, names, boundary):
    """Every ledger file from ``start_dir`` up to ``boundary`` (inclusive), nearest first, each
    file once however many names or links reach it. Only ``start_dir`` is read when
    ``boundary`` does not enclose it."""
    found = []
    seen = set()
    current = os.path.abspath(start_dir)
    boundary = os.path.abspath(boundary)
    while True:
        for name in names:
            candidate = os.path.join(current, name)
            real = os.path.realpath(candidate)
            if real not in seen and os.path.isfile(candidate):
                seen.add(real)
                found.append(candidate)
        parent = os.path.dirname(current)
        if current == boundary or parent == current or not _encloses(boundary, current):
            return found
        current = parent


def decode(data):
    """A ledger's text: UTF-32 or UTF-16 by their byte-order mark, else UTF-8 (a UTF-8 mark
    dropped); undecodable bytes become U+FFFD rather than failing the write."""
    for mark, codec in _BOMS:
        if data.startswith(mark):
            return data.decode(codec, _UNDECODABLE)
    return data.decode(_NO_BOM_CODEC, _UNDECODABLE)


# --- entries ----------------------------------------------------------------------------------

def _entry_regex(pattern):
    """A ledger line opening an entry: lead, the id, then a separator, whitespace or the end."""
    return re.compile(_ENTRY_LEAD + r"(?P<id>(?:" + pattern + r"))(?=" + _ENTRY_END + ")", re.I)


def _standalone_regex(pattern):
    return re.compile(r"(?<![\w-])(?:" + pattern + r")(?![\w-])", re.I)


def parse_ledger(text, pattern, source="<ledger>"):
    """``(entries, problems)`` of one ledger's (folded) text.

    An entry starts on a line whose first token, after a table row's ``|``, a Markdown heading
    (``## ``, ``## Decision ``) or list marker (``- ``, ``1. ``, ``- [x] ``) and optional
    emphasis or bracket, is an id followed by a separator or the end of the line; its text runs
    to the next entry. ``entries`` is a list of ``(id, opening_word, line, source)``; the opening
    word is the first word of the entry's text. ``problems`` lists ``(source, line, message)``
    for lines that look like an entry but do not parse (``D030:``, ``D-030a:``) and for an id
    entered twice in one file. Lines inside fenced code blocks are ignored."""
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
            current = [entry_id, _opening_word(rest), lineno, source]
            entries.append(current)
            continue
        problem = _near_entry(line[_ENTRY_LEAD_RE.match(line).end():], pattern)
        if problem:
            problems.append((source, lineno, problem))
        if current is not None and current[1] == "":
            current[1] = _opening_word(line)
    return [tuple(entry) for entry in entries], problems


def _opening_word(text):
    match = _OPENING_WORD_RE.match(text)
    return match.group(1) if match else ""


def _near_entry(rest, pattern):
    """Why a line whose first token looks like a ledger id does not parse as an entry, or ``None``."""
    words = rest.split()
    if not words:
        return None
    token = words[0].rstrip(":.,;|*_`]")
    if _standalone_regex(pattern).fullmatch(token):
        return None  # a well-formed id where no entry can start (an indented code line)
    loose = re.compile(pattern, re.I)
    if _WORDISH_RE.fullmatch(token) and loose.search(token):
        return f"{token!r} looks like a ledger entry but is not an id followed by a separator (write '## D-030: title')"
    near = _NEAR_ID_RE.match(rest)
    if near and not loose.match(rest):
        guess = f"{near.group(1)}-{near.group(2)}"
        if loose.fullmatch(guess):
            return f"{near.group(0)!r} looks like ledger id {guess.upper()} written without its separator"
    return None


def _mentions(text, pattern, source, into):
    """Record in ``into`` where each id standing alone in ``text`` first appears (source, line)."""
    line, last = 1, 0
    for match in _standalone_regex(pattern).finditer(text):
        line += text.count("\n", last, match.start())
        last = match.start()
        into.setdefault(match.group(0).upper(), (source, line))


def load_ledgers(paths, pattern):
    """The merged ledger of ``paths``: ``{"ids": {id: [entry, ...]}, "text": merged text, "dates":
    every ISO date in it, "sources": paths, "problems": [...], "empty": sources with no entry,
    "mentions": {id: (source, line)} where each id first stands in a ledger's text}``. Files are
    joined with a newline so a file without a trailing newline cannot fuse its last line with the
    next file's first."""
    ids = {}
    problems = []
    texts = []
    empty = []
    mentions = {}
    for path in paths:
        with safeio.open_regular(path, "rb") as handle:
            text = fold(decode(handle.read()))
        texts.append(text)
        entries, found = parse_ledger(text, pattern, path)
        problems.extend(found)
        if not entries:
            empty.append(path)
        for entry in entries:
            ids.setdefault(entry[0], []).append(entry)
        _mentions(text, pattern, path, mentions)
    merged = "\n".join(texts)
    return {"ids": ids, "text": merged, "dates": set(_DATES_RE.findall(merged)), "sources": list(paths),
            "problems": problems, "empty": empty, "mentions": mentions}


# --- the ids' shape ---------------------------------------------------------------------------

def _zero_padded(runs):
    return any(len(run) > 1 and run[0] == "0" for run in runs)


def id_shapes(ids):
    """``{skeleton: (zero_padded, {digit widths})}`` of a ledger's ids, where the skeleton is the
    id with each run of digits as ``#`` (``D-001`` -> ``D-#``, widths ``(3,)``)."""
    shapes = {}
    for entry_id in ids:
        runs = _DIGITS_RE.findall(entry_id)
        skeleton = _DIGITS_RE.sub("#", entry_id)
        padded, widths = shapes.setdefault(skeleton, (False, set()))
        widths.add(tuple(len(run) for run in runs))
        shapes[skeleton] = (padded or _zero_padded(runs), widths)
    return shapes


def fits_shape(entry_id, shapes):
    """Whether ``entry_id`` is written as the ledger writes its ids: the same letters and
    punctuation, and the same digit widths when the ledger pads with zeros (``D-001``: ``D-1``
    and ``D-0001`` do not fit) or no leading zero when it does not (``D-1``: ``D-01`` does not)."""
    found = shapes.get(_DIGITS_RE.sub("#", entry_id))
    if found is None:
        return False
    padded, widths = found
    runs = _DIGITS_RE.findall(entry_id)
    if padded:
        return tuple(len(run) for run in runs) in widths
    return not _zero_padded(runs)


def highest_id(ids):
    """The id with the largest number (``D-058`` over ``D-9``), or ``None``."""
    if not ids:
        return None
    return max(ids, key=lambda found: ([int(n) for n in _DIGITS_RE.findall(found)], found))
