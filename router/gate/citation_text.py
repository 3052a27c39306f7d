"""Reading the citations out of a write's text for the citation gate (docs/citation-gate.md).

``scan`` finds every decision id, memory slug and owner-ruling date a text cites and says how
sure it is of each: a gate that refuses honest writes is switched off, so only a certain citation
may block, and anything merely shaped like one is left to warn. Every step is linear in the
text: each match is judged from a few characters around it and from code and URL spans found in
one pass, never by rescanning the text (20,000 ids in a 338 KB write must stay cheap).

Pure functions, standard library only.
"""

import bisect
import re

# Characters that render as a hyphen (hyphen, non-breaking hyphen, figure dash, minus sign, small
# and fullwidth hyphen-minus) read as "-"; invisible ones (soft hyphen, zero-width space, joiners,
# word joiner, a BOM inside the text) are dropped; fullwidth ASCII reads as ASCII. Otherwise
# ``D‑999`` with a non-breaking hyphen, or ``D-9\u200d99``, would hide a fabricated id.
_FOLD = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}
_FOLD.update({ord(char): "-" for char in "\u2010\u2011\u2012\u2212\ufe63"})
_FOLD.update({ord(char): None for char in "\u00ad\u200b\u200c\u200d\u2060\ufeff"})

_DATE = r"\d{4}-\d{2}-\d{2}"
OWNER_RULING_RE = re.compile(r"\bowner[ \t]+ruling[ \t,:]*(?:(?:of|on|dated)[ \t]+)?(" + _DATE + r")", re.I)
_FENCE_RE = re.compile(r"[ \t]{0,3}(```|~~~)")
_TICKS_RE = re.compile(r"`+")
# A URL (scheme://...) or an absolute or ./ ../ ~/ path, up to whitespace or a closing bracket or
# quote. The lookbehinds let a match start only where a scheme or a path can start, which keeps
# the search linear on a long run of letters.
_URL_OR_PATH_RE = re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,31}://[^\s<>\"'`)\]]*"
                             r"|(?<![\w.~/\\-])(?:~|\.{1,2})?/[^\s<>\"'`)\]]*")
_SLUG_CHARS_RE = re.compile(r"[^a-z0-9_]+")

# What the text around a citation says about it. The text before one is read backwards, by
# matching these at its start in the reversed text (anchored, so each costs only what it reads):
# the capitalised word and one space straight before an id (``Nikon D-500``), and whether a
# sentence, a list item, a heading or a cell opens before that word (the start, a line break or
# such a mark, then spaces); whitespace and at most three opening brackets or quotes before a
# lower-case id in prose; what stands before ``memory:`` (the start, a line break, punctuation or
# a bracket, then spaces; or a citing word, ``per memory:``).
_OPENING_MARKS = "\n.!?:;([{\"'*#>|\u201c\u2018\u2013\u2014-"
_NAME_BEHIND_RE = re.compile(r"[ \u00a0](?P<name>[^\W\d_]*[A-Z])(?![\w-])(?P<opening>[ \t]*(?:["
                             + re.escape(_OPENING_MARKS) + r"]|\Z))?")
_PROSE_BEHIND_RE = re.compile(r"[(\"'*\u201c\u2018]{0,3}(?:\s|\Z)")
_MEMORY_LEADS = ("per", "see", "cf", "from", "in", "by", "and", "or", "also", "via", "under", "as")
_MEMORY_BEHIND_RE = re.compile(r"[ \t]*(?:[" + re.escape(_OPENING_MARKS + ",`") + r"]|\Z)|[ \t]+(?:"
                               + "|".join(word[::-1] for word in _MEMORY_LEADS) + r")(?![\w-])", re.I | re.A)
# After an id in prose: a possessive and at most three closing marks, then whitespace or the end.
_PROSE_AFTER = r"(?P<post>(?:['\u2019]s)?[.,;:!?)\"'*\u201d\u2019]{0,3}(?!\S))?"
# A capitalised word straight before an id names a product or a form (``Nikon D-500``,
# ``Form D-1``) unless it opens a sentence or is one of these.
_CITING_WORDS = frozenset({"Decision", "Decisions", "Per", "See", "Cf", "Under"})
# ``memory: <slug>``, and code after it (``shared_mem::Handle``, ``store(``, ``x[``, ``x<T>``,
# ``x{``, ``x=``, a path).
_MEMORY_RE = re.compile(
    r"(?<![\w-])(?:native[ \t]+)?memory:[ \t]*(?P<open>`|\*{1,2}|_{1,2})?"
    r"(?P<slug>[a-z][a-z0-9_.-]*[a-z0-9])(?P<close>`|\*{1,2}|_{1,2})?(?P<code>::|[(\[<{=/\\])?", re.I | re.A)


def fold(text):
    """``text`` with look-alike hyphens as ``-``, invisible characters dropped and fullwidth ASCII
    as ASCII. Applied to the citing text and to the ledger alike."""
    return text.translate(_FOLD)


def id_regex(pattern):
    """An id of ``pattern`` standing alone, any case: never inside a hyphenated identifier
    (``fix-D-030-x``) or a longer word (``ND-030``, ``file_D-030``, the plural ``D-030s``); the
    possessive ``D-030's`` counts, and so does underscore emphasis (``_D-030_``, ``__D-030__``).
    Its group ``post`` is set when prose follows it (``_PROSE_AFTER``)."""
    return re.compile(r"(?<![\w-])(?P<u>_{0,2})(?P<id>(?:" + pattern + r"))(?P=u)(?![\w-])" + _PROSE_AFTER, re.I)


def _behind(regex, backwards, position):
    """``regex`` matched backwards from ``position`` of a text whose reverse is ``backwards``."""
    return regex.match(backwards, len(backwards) - position)


# --- where code and URLs are ------------------------------------------------------------------

def code_spans(text):
    """``(start, end)`` of every fenced block line and inline code span, in order."""
    spans = []
    if "`" not in text and "~~~" not in text:
        return spans
    fence = None
    offset = 0
    for line in text.split("\n"):
        fenced = _FENCE_RE.match(line)
        if fence is not None or fenced:
            spans.append((offset, offset + len(line)))
            if fence is None:
                fence = fenced.group(1)
            elif fenced and fenced.group(1) == fence:
                fence = None
        elif "`" in line:
            spans.extend((offset + start, offset + end) for start, end in _inline_code(line))
        offset += len(line) + 1
    return spans


def _inline_code(line):
    """Inline code spans of one line: a run of backticks up to the next run of the same length."""
    runs = [match.span() for match in _TICKS_RE.finditer(line)]
    following = [None] * len(runs)  # the index of the next run of the same length
    nearest = {}
    for index in reversed(range(len(runs))):
        length = runs[index][1] - runs[index][0]
        following[index] = nearest.get(length)
        nearest[length] = index
    spans = []
    index = 0
    while index < len(runs):
        closing = following[index]
        if closing is None:
            index += 1
        else:
            spans.append((runs[index][0], runs[closing][1]))
            index = closing + 1
    return spans


def url_spans(text):
    """``(start, end)`` of every URL and absolute or relative path (``_URL_OR_PATH_RE``), in order."""
    if "/" not in text:
        return []
    return [match.span() for match in _URL_OR_PATH_RE.finditer(text)]


def inside(spans, position):
    """Whether ``position`` lies in one of ``spans`` (sorted, not overlapping)."""
    index = bisect.bisect_right(spans, position, key=_span_start) - 1
    return index >= 0 and position < spans[index][1]


def _span_start(span):
    return span[0]


# --- decision ids ------------------------------------------------------------------------------

def _is_name(behind):
    """Whether the capitalised word read backwards before an id (``_NAME_BEHIND_RE``'s match) is
    a name: it does not open a sentence and is not a citing word."""
    return behind is not None and behind.group("opening") is None and behind.group("name")[::-1] not in _CITING_WORDS


def _note_id(found, entry_id, written, kind, reason=None):
    seen = found.get(entry_id)
    if seen is None:
        seen = found[entry_id] = {"as": written, "upper": False, "prose": False, "reason": None}
    if kind == "reason":
        seen["reason"] = seen["reason"] or reason
    else:
        seen[kind] = True


def scan_ids(text, pattern):
    """``{id: {"as", "upper", "prose", "reason"}}`` for the ids ``text`` cites, upper-cased, in
    first-seen order. ``upper``: written in upper case outside code and not after a name;
    ``prose``: in lower case as a word of prose; ``reason``: why an upper-case occurrence is not
    certain (inside code, after a name). A lower-case id outside prose (``arr[d-1]``) and any id
    in a URL or path (``/docs/D-42/setup``) is no citation and not listed. Whether the id has the
    ledger's shape is the caller's question (``router.gate.citation_ledger.fits_shape``)."""
    code = code_spans(text)
    urls = url_spans(text)
    backwards = text[::-1]
    found = {}
    for match in id_regex(pattern).finditer(text):
        start = match.start("id")
        if inside(urls, start):
            continue
        written = match.group("id")
        entry_id = written.upper()
        in_code = inside(code, start)
        if written != entry_id:
            if not in_code and match.group("post") is not None and _behind(_PROSE_BEHIND_RE, backwards, match.start()):
                _note_id(found, entry_id, written, "prose")
            continue
        name = _behind(_NAME_BEHIND_RE, backwards, match.start())
        if in_code:
            _note_id(found, entry_id, written, "reason", "inside code")
        elif _is_name(name):
            _note_id(found, entry_id, written, "reason", f"after the name {name.group('name')[::-1]!r}")
        else:
            _note_id(found, entry_id, written, "upper")
    return found


# --- memory citations --------------------------------------------------------------------------

def _slug_doubt(raw, emphasised, code):
    """Why the slug ``raw`` may not be a memory citation, ``""`` when it is not one at all (one
    plain word: ``memory: low``), or ``None`` when it certainly is one."""
    if "." in raw:
        return "a dotted name"
    if code:
        return "followed by code"
    if "_" in raw or raw.count("-") > 1:
        return None
    if "-" in raw:
        return "a hyphenated word"
    return "an emphasised word" if emphasised else ""


def scan_memories(text):
    """``{slug: {"as", "certain", "reason"}}`` for the memory slugs ``text`` cites as
    ``memory: <slug>`` or ``native memory: <slug>`` (any case, optionally in backticks or
    emphasis), normalised like memory file names (lower case, ``[^a-z0-9_]`` as ``_``, a
    ``.md`` suffix dropped), in first-seen order.

    Certain: a slug shaped like a memory file name (with ``_``, or two or more ``-``) at the start
    of a line, after punctuation or a citing word (``per``, ``see``), not inside code, not dotted
    and not followed by code. Uncertain (``reason`` says why): ``Shared memory: read-only``,
    YAML ``memory: on-demand``, ``memory: memory_store.Store``, ``memory: shared_mem::Handle``,
    ``memory: _fake_``. One plain word (``memory: low``, ``Memory: 4GB``) is no citation."""
    code = code_spans(text)
    backwards = text[::-1]
    found = {}
    for match in _MEMORY_RE.finditer(text):
        opened, closed = match.group("open"), match.group("close")
        if opened and closed != opened:
            continue  # ``memory: _leading``: an underscore the slug cannot start with
        raw = match.group("slug")
        if raw.lower().endswith(".md"):
            raw = raw[:-3]
        doubt = _slug_doubt(raw, bool(opened), match.group("code"))
        if doubt == "":
            continue
        if doubt is None and inside(code, match.start()):
            doubt = "inside code"
        if doubt is None and not _behind(_MEMORY_BEHIND_RE, backwards, match.start()):
            doubt = "after another word"
        slug = _SLUG_CHARS_RE.sub("_", raw.lower())
        seen = found.setdefault(slug, {"as": raw, "certain": False, "reason": doubt})
        if doubt is None:
            seen.update(certain=True, reason=None)
    return found


def owner_ruling_dates(text):
    """The ISO dates named as ``owner ruling <date>``, in first-seen order."""
    return list(dict.fromkeys(match.group(1) for match in OWNER_RULING_RE.finditer(text)))


def scan(text, pattern):
    """Everything ``text`` cites: ``{"ids": scan_ids, "memories": scan_memories, "dates": [...]}``,
    read from the folded text (``fold``)."""
    folded = fold(text)
    return {"ids": scan_ids(folded, pattern), "memories": scan_memories(folded), "dates": owner_ruling_dates(folded)}
