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
_MEMORY_RE = re.compile(
    r"(?<![\w-])(?:native[ \t]+)?memory:[ \t]*(?P<open>`|\*{1,2}|_{1,2})?"
    r"(?P<slug>[a-z][a-z0-9_.-]*[a-z0-9])(?P<close>`|\*{1,2}|_{1,2})?", re.I | re.A)
_SLUG_CHARS_RE = re.compile(r"[^a-z0-9_]+")

# Before a lower-case id in prose: whitespace or the start, after at most three of these.
_OPENERS = "(\"'*\u201c\u2018"
# After an id in prose: at most three of these, then whitespace or the end.
_CLOSERS = ".,;:!?)\"'*\u201d\u2019"
# A capitalised word straight before an id names a product or a form (``Nikon D-500``,
# ``Form D-1``) unless it opens a sentence or is one of these.
_CITING_WORDS = frozenset({"Decision", "Decisions", "Per", "See", "Cf", "Under"})
# What may end the text before a word that opens a sentence (or a list item, a heading, a cell).
_SENTENCE_ENDS = ".!?:;([{\"'*#>|-\u201c\u2018\u2013\u2014\n"
# The words that may stand before ``memory:`` in a citation (``per memory: x``); any other word
# makes it a phrase (``Shared memory: x``).
_MEMORY_LEADS = frozenset({"per", "see", "cf", "from", "in", "by", "and", "or", "also", "via", "under", "as"})
# What may stand before ``memory:`` besides such a word.
_MEMORY_LEAD_MARKS = "([{,;:.!?\"'*`>|#-\u201c\u2018\u2013\u2014\n"
# After a slug, these make it code: ``shared_mem::Handle``, ``store(``, ``x[``, ``x<T>``, ``x=``.
_CODE_AFTER = ("::", "(", "[", "<", "{", "=", "/", "\\")


def fold(text):
    """``text`` with look-alike hyphens as ``-``, invisible characters dropped and fullwidth ASCII
    as ASCII. Applied to the citing text and to the ledger alike."""
    return text.translate(_FOLD)


def id_regex(pattern):
    """An id of ``pattern`` standing alone, any case: never inside a hyphenated identifier
    (``fix-D-030-x``) or a longer word (``ND-030``, ``file_D-030``, the plural ``D-030s``); the
    possessive ``D-030's`` counts, and so does underscore emphasis (``_D-030_``, ``__D-030__``)."""
    return re.compile(r"(?<![\w-])(?P<u>_{0,2})(?P<id>(?:" + pattern + r"))(?P=u)(?![\w-])", re.I)


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
    runs = [(match.start(), match.end()) for match in _TICKS_RE.finditer(line)]
    following = {}  # run index -> index of the next run of the same length
    nearest = {}
    for index in range(len(runs) - 1, -1, -1):
        length = runs[index][1] - runs[index][0]
        following[index] = nearest.get(length)
        nearest[length] = index
    spans = []
    index = 0
    while index < len(runs):
        closing = following[index]
        if closing is None:
            index += 1
            continue
        spans.append((runs[index][0], runs[closing][1]))
        index = closing + 1
    return spans


def url_spans(text):
    return [match.span() for match in _URL_OR_PATH_RE.finditer(text)]


def inside(spans, position):
    """Whether ``position`` lies in one of ``spans`` (sorted, not overlapping)."""
    index = bisect.bisect_right(spans, position, key=_span_start) - 1
    return index >= 0 and position < spans[index][1]


def _span_start(span):
    return span[0]


# --- decision ids ------------------------------------------------------------------------------

def _in_prose(text, start, end):
    """Whether the id at ``text[start:end]`` stands as a word of prose: after whitespace (or an
    opening bracket or quote after whitespace), before whitespace (or closing punctuation, or a
    possessive, then whitespace). ``arr[d-1]``, ``$((d-1))`` and ``S^{d-1}`` do not."""
    before = start
    while before > 0 and start - before < 3 and text[before - 1] in _OPENERS:
        before -= 1
    if before > 0 and not text[before - 1].isspace():
        return False
    after = end
    if text[after:after + 2] in ("'s", "\u2019s"):
        after += 2
    limit = after + 3
    while after < len(text) and after < limit and text[after] in _CLOSERS:
        after += 1
    return after == len(text) or text[after].isspace()


def _name_before(text, start):
    """The capitalised word straight before an id when it reads as a name (``Nikon D-500``), or
    ``None``: a word opening a sentence, a list item or a heading reads as prose (``Per D-030``)."""
    if start < 2 or text[start - 1] not in " \u00a0":
        return None
    first = start - 1
    while first > 0 and start - first < 40 and text[first - 1].isalpha():
        first -= 1
    word = text[first:start - 1]
    if not word or not word[0].isupper() or word in _CITING_WORDS:
        return None
    if first > 0 and (text[first - 1].isalnum() or text[first - 1] in "_-"):
        return None
    before = first
    while before > 0 and first - before < 8 and text[before - 1] in " \t":
        before -= 1
    if before == 0 or text[before - 1] in _SENTENCE_ENDS:
        return None
    return word


def _note_id(found, entry_id, written, kind, reason=None):
    seen = found.get(entry_id)
    if seen is None:
        seen = found[entry_id] = {"as": written, "upper": False, "prose": False, "reason": None}
    if kind == "reason":
        seen["reason"] = seen["reason"] or reason
    else:
        seen[kind] = True


def scan_ids(text, pattern, code=None, urls=None):
    """``{id: {"as", "upper", "prose", "reason"}}`` for the ids ``text`` cites, upper-cased, in
    first-seen order. ``upper``: written in upper case outside code and not after a name;
    ``prose``: in lower case as a word of prose; ``reason``: why an upper-case occurrence is not
    certain (inside code, after a name). A lower-case id outside prose (``arr[d-1]``) and any id
    in a URL or path (``/docs/D-42/setup``) is no citation and not listed. Whether the id has the
    ledger's shape is the caller's question (``router.citation_ledger.fits_shape``)."""
    code = code_spans(text) if code is None else code
    urls = url_spans(text) if urls is None else urls
    found = {}
    for match in id_regex(pattern).finditer(text):
        start = match.start("id")
        if inside(urls, start):
            continue
        written = match.group("id")
        entry_id = written.upper()
        in_code = inside(code, start)
        if written != entry_id:
            if not in_code and _in_prose(text, match.start(), match.end()):
                _note_id(found, entry_id, written, "prose")
            continue
        if in_code:
            _note_id(found, entry_id, written, "reason", "inside code")
            continue
        name = _name_before(text, start)
        if name:
            _note_id(found, entry_id, written, "reason", f"after the name {name!r}")
        else:
            _note_id(found, entry_id, written, "upper")
    return found


# --- memory citations --------------------------------------------------------------------------

def _memory_lead(text, start):
    """Whether what stands before ``memory:`` at ``start`` lets it be a citation."""
    before = start
    while before > 0 and start - before < 8 and text[before - 1] in " \t":
        before -= 1
    if before == 0 or text[before - 1] in _MEMORY_LEAD_MARKS:
        return True
    first = before
    while first > 0 and before - first < 20 and text[first - 1].isalpha():
        first -= 1
    return text[first:before].lower() in _MEMORY_LEADS


def _slug_doubt(raw, emphasised, after):
    """Why the slug ``raw`` may not be a memory citation, ``""`` when it is not one at all (one
    plain word: ``memory: low``), or ``None`` when it certainly is one."""
    if "." in raw:
        return "a dotted name"
    if after.startswith(_CODE_AFTER):
        return "followed by code"
    if "_" in raw or raw.count("-") > 1:
        return None
    if "-" in raw:
        return "a hyphenated word"
    return "an emphasised word" if emphasised else ""


def scan_memories(text, code=None):
    """``{slug: {"as", "certain", "reason"}}`` for the memory slugs ``text`` cites as
    ``memory: <slug>`` or ``native memory: <slug>`` (any case, optionally in backticks or
    emphasis), normalised like memory file names (lower case, ``[^a-z0-9_]`` as ``_``, a
    ``.md`` suffix dropped), in first-seen order.

    Certain: a slug shaped like a memory file name (with ``_``, or two or more ``-``) at the start
    of a line, after punctuation or a citing word (``per``, ``see``), not inside code, not dotted
    and not followed by code. Uncertain (``reason`` says why): ``Shared memory: read-only``,
    YAML ``memory: on-demand``, ``memory: memory_store.Store``, ``memory: shared_mem::Handle``,
    ``memory: _fake_``. One plain word (``memory: low``, ``Memory: 4GB``) is no citation."""
    code = code_spans(text) if code is None else code
    found = {}
    for match in _MEMORY_RE.finditer(text):
        opened, closed = match.group("open"), match.group("close")
        if opened and closed != opened:
            continue  # ``memory: _leading``: an underscore the slug cannot start with
        raw = match.group("slug")
        if raw.lower().endswith(".md"):
            raw = raw[:-3]
        end = match.end() if opened else match.end("slug")
        after = text[end:end + 2]
        doubt = _slug_doubt(raw, bool(opened), after)
        if doubt == "":
            continue
        if doubt is None and inside(code, match.start()):
            doubt = "inside code"
        if doubt is None and not _memory_lead(text, match.start()):
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
    code = code_spans(folded)
    return {"ids": scan_ids(folded, pattern, code, url_spans(folded)),
            "memories": scan_memories(folded, code),
            "dates": owner_ruling_dates(folded)}
