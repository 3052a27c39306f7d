"""The learned-terms file: words that feedback says lead to a memory (docs/learning.md).

A prompt whose answer needed memory ``slug`` makes the prompt's content words evidence for
that memory. They are kept as one row per (memory, word) in a tab-separated file beside the
cluster file, ``<cluster file stem>.learned.tsv``, that a person can read, edit and delete:

    # (a header comment saying what the file is)
    added<TAB>cluster_id<TAB>slug<TAB>term<TAB>source
    2026-11-30T19:55:01Z<TAB>env<TAB>env_bash_tool<TAB>setx<TAB>mcp

Rules every writer follows (``router.store.feedback.apply_feedback`` is the one place they live; this
module only reads):

- a term is a routing token of the prompt (``router.tokens.tokenize``), at most
  ``MAX_TERMS_PER_FEEDBACK`` (and never more than the cap) from one feedback;
- a word that is a hand tag of any cluster is never learned (hand tags win), nor a word the
  memory's own slug or hook already holds (it routes there already);
- at most ``cap`` rows per cluster; rows are kept in the order they were learned, a term learned
  again moves to the end, and the oldest rows of a cluster leave first;
- negative feedback (``useful=False``) removes the memory's learned terms that the prompt holds;
  it never adds anything and never touches the cluster file;
- the file is replaced atomically (temp file, fsync, rename) under a lock on its directory, so
  a reader sees the old file or the new one and two writers do not lose each other's rows.

Standard library and ``router.*`` only: the default provider reads this file on the hook path.
"""

import re
import time
from collections import namedtuple

from router.config import learned_path
from router.errors import InputError, read_utf8
from router.tokens import tokenize

COLUMNS = ("added", "cluster_id", "slug", "term", "source")
HEADER_COMMENT = (
    "# memory-router learned terms (see docs/learning.md). Each row says: a prompt holding this word\n"
    "# was answered by this memory, so the word is evidence for it. Written by memory-router from\n"
    "# feedback (the MCP record_feedback tool, memory-router learn); the file is rewritten whole, so\n"
    "# comments other than this header are not kept. Review freely: delete a row to forget it.\n"
    "# Hand tags in the cluster file always win: a word that is a tag there is never learned.\n"
    "# At most learned_cap rows per cluster (memory-router.toml); the oldest leave first.\n"
)
MAX_TERMS_PER_FEEDBACK = 16
SOURCES = ("mcp", "learn", "hand")

LearnedTerm = namedtuple("LearnedTerm", "added cluster_id slug term source line")
LearnedTerm.__doc__ = "One learned row: when (UTC ISO 8601), cluster, memory slug, word, who wrote it, file line."

_STAMP_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")   # ASCII digits: \d takes any
_SLUG_RE = re.compile(r"^[a-z0-9_]+$")
_CLUSTER_ID_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


class LearnedFileError(InputError):
    """A learned-terms file that cannot be read back (exit 2, never rewritten on a guess)."""

    quotes_build_time_text = True   # its message may quote a row: router.agenttext.tool_error


def utc_stamp(now=None):
    """The UTC time in ISO 8601 to the second (2026-11-30T19:55:01Z), as the learned-terms and
    utterances files and the install records write it: the one definition."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if now is None else now))


def utc_stamp_problem(text):
    """What is wrong with ``text`` as a time ``utc_stamp`` writes, or ``None``: the shape
    (2026-11-30T19:55:01Z) and a real date and time. The shape alone let 2026-13-45T99:99:99Z
    through. No leap second: ``utc_stamp`` never writes one."""
    if not isinstance(text, str) or not _STAMP_RE.fullmatch(text):
        return "is not a UTC time like 2026-11-30T19:55:01Z"
    year, month, day = int(text[:4]), int(text[5:7]), int(text[8:10])
    hour, minute, second = int(text[11:13]), int(text[14:16]), int(text[17:19])
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
    if not 1 <= month <= 12:
        return f"is not a real time: there is no month {month:02d}"
    if not 1 <= day <= days[month - 1]:
        return f"is not a real time: {year:04d}-{month:02d} has no day {day:02d}"
    if hour > 23 or minute > 59 or second > 59:
        return f"is not a real time: there is no {hour:02d}:{minute:02d}:{second:02d} in a day"
    return None


# A row is one line, split on \n (and \r\n) only. str.splitlines() also broke a row at form feed,
# \x1c-\x1e, \x85, U+2028 and U+2029, so such a character was misreported as a short row (with a fix
# the row already followed) or shifted every later line number. Inside a row, any control
# character (a tab only separates columns) and both Unicode separators are refused by name.
_HIDDEN_RE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")
_HIDDEN_NAMES = {0x00: "NULL", 0x07: "BELL", 0x08: "BACKSPACE", 0x0B: "LINE TABULATION", 0x0C: "FORM FEED",
                 0x0D: "CARRIAGE RETURN", 0x1B: "ESCAPE", 0x1C: "FILE SEPARATOR", 0x1D: "GROUP SEPARATOR",
                 0x1E: "RECORD SEPARATOR", 0x1F: "UNIT SEPARATOR", 0x7F: "DELETE", 0x85: "NEXT LINE",
                 0x2028: "LINE SEPARATOR", 0x2029: "PARAGRAPH SEPARATOR"}
HIDDEN_CHARACTER_FIX = "remove it: a row is one line of text, its columns separated by tabs"


def split_rows(text):
    """``(line number, line)`` of a row file's text: lines end at \n or \r\n, nothing else."""
    for lineno, raw in enumerate(text.split("\n"), 1):
        yield lineno, raw[:-1] if raw.endswith("\r") else raw


def hidden_character(line, columns):
    """``(message, column)`` for the first control or separator character in a row's ``line``
    (``U+2028 LINE SEPARATOR in column 2 (utterance)``; the column is the character's), else
    ``None``. ``columns`` names the tab-separated fields."""
    match = _HIDDEN_RE.search(line)
    if match is None:
        return None
    code = ord(match.group())
    field = line.count("\t", 0, match.start()) + 1
    where = f"column {field}" + (f" ({columns[field - 1]})" if field <= len(columns) else "")
    return f"U+{code:04X} {_HIDDEN_NAMES.get(code, 'CONTROL CHARACTER')} in {where}", match.start() + 1


# --------------------------------------------------------------------------- reading


def skip_or_raise(skipped, err):
    """A bad row's error: kept in ``skipped`` (the row is left out, the rest are used) or raised.
    Every row file's reader (learned terms, utterances, near-misses) decides this one way."""
    if skipped is None:
        raise err
    skipped.append(err)


def skipped_rows(errors):
    """``((where, message), ...)`` of the rows a reader skipped: ``where`` is ``file:line:col``
    (what may be shown anywhere), ``message`` the whole line with its fix (it may quote the row, so
    it is for a person: the log, ``clusters compile``, ``route``, doctor; never a model)."""
    return tuple((f"{err.path}:{err.line}:{err.column}", err.format()) for err in errors)


def parse_learned_text(text, path="<learned>", skipped=None):
    """Rows of a learned-terms file's text; a bad row is a ``LearnedFileError`` naming its line
    (with a ``skipped`` list, it is appended there and the row left out: what routing does; a
    writer passes none, so it never drops a row it cannot read)."""
    rows = []
    seen_header = False
    for lineno, raw in split_rows(text):
        if not raw.strip() or raw.startswith("#"):
            continue
        hidden = hidden_character(raw, COLUMNS)
        if hidden:
            err = LearnedFileError(hidden[0], path=path, line=lineno, column=hidden[1], fix=HIDDEN_CHARACTER_FIX)
            if not seen_header:
                raise err
            skip_or_raise(skipped, err)
            continue
        fields = raw.split("\t")
        if not seen_header:
            if tuple(f.strip() for f in fields) != COLUMNS:
                raise LearnedFileError("expected the column row " + "\\t".join(COLUMNS), path=path, line=lineno,
                                       column=1, fix="restore the header row, or delete the file to start over")
            seen_header = True
            continue
        if len(fields) != len(COLUMNS):
            err = LearnedFileError(f"expected {len(COLUMNS)} tab-separated fields, got {len(fields)}", path=path,
                                   line=lineno, column=1, fix="write " + ", ".join(COLUMNS) + " separated by tabs")
            skip_or_raise(skipped, err)
            continue
        added, cluster_id, slug, term, source = (f.strip() for f in fields)
        problem = None
        column = 1
        if utc_stamp_problem(added):
            problem, fix = f"added {added!r} {utc_stamp_problem(added)}", "write a real UTC time like 2026-11-30T19:55:01Z"
        elif not _CLUSTER_ID_RE.match(cluster_id):
            column = len(fields[0]) + 2
            problem, fix = f"invalid cluster id {cluster_id!r}", "use the cluster's id from the cluster file"
        elif not _SLUG_RE.match(slug):
            column = len(fields[0]) + len(fields[1]) + 3
            problem, fix = f"invalid slug {slug!r}", "slugs use only a-z, 0-9 and _"
        elif tokenize(term) != {term}:
            column = len("\t".join(fields[:3])) + 2
            problem, fix = (f"term {term!r} is not one routing word",
                            "write one lowercase word (a stopword or a bare number never routes)")
        elif source not in SOURCES:
            column = len("\t".join(fields[:4])) + 2
            problem, fix = f"unknown source {source!r}", "use one of: " + ", ".join(SOURCES)
        if problem:
            err = LearnedFileError(problem, path=path, line=lineno, column=column, fix=fix)
            skip_or_raise(skipped, err)
            continue
        rows.append(LearnedTerm(added, cluster_id, slug, term, source, lineno))
    return rows


def read_learned(path, skipped=None):
    """The rows of the learned-terms file at ``path``, in file order; ``[]`` when there is none."""
    text = read_utf8(path, "learned-terms file", "fix its permissions, or delete it to start over",
                     LearnedFileError, missing_ok=True)
    return [] if text is None else parse_learned_text(text, path, skipped)


def learned_terms_for(cluster_path, skipped=None):
    """``{slug: terms}`` of the learned-terms file beside ``cluster_path`` (``{}`` when there is
    none): what the default provider adds to each memory's words while ``learning = true``."""
    return terms_by_slug(read_learned(learned_path(cluster_path), skipped))


def terms_by_slug(rows):
    """``{slug: frozenset(terms)}``: what a router adds to each memory's words."""
    found = {}
    for row in rows:
        found.setdefault(row.slug, set()).add(row.term)
    return {slug: frozenset(terms) for slug, terms in found.items()}


def render_learned(rows):
    lines = [HEADER_COMMENT.rstrip("\n"), "\t".join(COLUMNS)]
    lines += ["\t".join((r.added, r.cluster_id, r.slug, r.term, r.source)) for r in rows]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- routing


def merge_learned_postings(table, learned):
    """A copy of routing ``table`` (``router.routing.score.build_routing_table``) with learned terms as
    their own posting list, ``learned_postings`` (``{term: (cluster position, ...)}``), for a
    provider to score at a weight of its own, below a hand tag's.

    ``learned``: ``{slug: terms}`` (``terms_by_slug(read_learned(path))``). A term goes to the
    cluster its memory is in now (a row naming a memory no longer in the store is ignored), and
    not where that cluster already has it as a tag or member word (it scores there already).
    Pure; ``table`` is not changed."""
    where = {}
    for position, cluster in enumerate(table["clusters"]):
        for member in cluster[3]:
            where[member[0]] = position
    tag_postings = table["tag_postings"]
    member_postings = table["member_postings"]
    postings = {}
    for slug, terms in learned.items():
        position = where.get(slug)
        if position is None:
            continue
        for term in terms:
            if position in tag_postings.get(term, ()) or position in member_postings.get(term, ()):
                continue
            postings.setdefault(term, set()).add(position)
    merged = dict(table)
    merged["learned_postings"] = {term: tuple(sorted(p)) for term, p in postings.items()}
    return merged


def learned_hits(prompt_tokens, table):
    """``{cluster position: sorted learned terms of the prompt}`` over ``table["learned_postings"]``
    (empty when the table has none): what a provider adds, times its learned weight."""
    postings = table.get("learned_postings") or {}
    hits = {}
    for token in prompt_tokens:
        for position in postings.get(token, ()):
            hits.setdefault(position, []).append(token)
    return {position: sorted(terms) for position, terms in hits.items()}
