"""The utterances file: things a user might type when a memory is the one they need (docs/enrich.md).

Written at build time by ``memory-router clusters enrich`` through the engine the user chose (their
Claude Code CLI, the Anthropic SDK, any command), one row per (memory, utterance), in a
tab-separated file beside the cluster file, ``<cluster file stem>.utterances.tsv``:

    # (a header comment saying what the file is)
    slug<TAB>utterance<TAB>memory_hash<TAB>engine<TAB>model<TAB>written
    env_bash_tool<TAB>my env var is empty in the bash tool<TAB>3f2a9c0d1e7b4a55<TAB>claude<TAB>haiku<TAB>2026-12-01T21:00:00Z

- ``memory_hash`` is ``memory_text_hash`` of the memory text the utterance was written from (its
  hook line and topic-file body): enrich asks again only for memories whose hash changed. A row a
  person adds by hand may write ``-`` there (and ``hand`` as its engine); enrich keeps such rows.
- Utterances are words for matching only: no router ever puts them in ``additionalContext``, so
  whatever a model wrote here cannot reach the agent as text.

Standard library and ``router.*`` only: the default provider reads this file when it builds its
routing table (a cache miss), never on a cache hit.
"""

import hashlib
import re
from collections import namedtuple

from router.errors import InputError, read_utf8
from router.store.learned import HIDDEN_CHARACTER_FIX, hidden_character, skip_or_raise, split_rows, utc_stamp_problem

COLUMNS = ("slug", "utterance", "memory_hash", "engine", "model", "written")
HEADER_COMMENT = (
    "# memory-router utterances (see docs/enrich.md). Each row: something a user might type when this\n"
    "# memory is the one they need, written by `memory-router clusters enrich` through the engine you\n"
    "# chose. Used for matching only: an utterance never reaches the model's context. Review freely:\n"
    "# edit or delete a row; add your own with memory_hash '-' and engine 'hand' (enrich keeps them).\n"
    "# The file is rewritten whole by enrich, so comments other than this header are not kept.\n"
)
MAX_UTTERANCE_CHARS = 200
HAND_HASH = "-"
HAND_ENGINE = "hand"

Utterance = namedtuple("Utterance", "slug text memory_hash engine model written line")
Utterance.__doc__ = ("One row: memory slug, the utterance, hash of the memory text it was written from, "
                     "engine, model, when (UTC ISO 8601), file line (0 for a row not read from a file).")

_SLUG_RE = re.compile(r"^[a-z0-9_]+$")
_HASH_RE = re.compile(r"^(?:[0-9a-f]{16}|-)$")
_ENGINE_RE = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")


class UtterancesFileError(InputError):
    """An utterances file that cannot be read back (exit 2; the hook routes without it)."""

    quotes_build_time_text = True   # its message may quote a row: router.agenttext.tool_error


def memory_text_hash(text):
    """16 hex digits of the SHA-256 of a memory's text (its hook line, a newline, its body)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def clean_utterance(text):
    """``text`` as one row's utterance: whitespace (tabs, newlines) folded to single spaces."""
    return " ".join(str(text).split())


def parse_utterances_text(text, path="<utterances>", skipped=None):
    """Rows of an utterances file's text, in file order; a bad row is an ``UtterancesFileError``
    naming its line and column and the fix (``skipped``: see ``parse_rows``)."""
    return [Utterance(*row) for row in parse_rows(text, path, COLUMNS, UtterancesFileError, MAX_UTTERANCE_CHARS,
                                                  skipped=skipped)]


def parse_rows(text, path, columns, error, max_chars, key_name="slug", hash_name="memory_hash", skipped=None):
    """``(key, text, hash, engine, model, written, line)`` of each row of a build-time TSV file
    (utterances, near-misses: six columns, the first a slug-shaped key), in file order. A bad row
    raises ``error`` naming its line and column and the fix; with a ``skipped`` list, the error is
    appended there and the row left out (what routing does: one bad row must not switch the file
    off), while a writer, which must not drop a row it cannot read, passes none. A missing or wrong
    column row always raises: without it no row can be read."""
    rows = []
    seen_header = False
    for lineno, raw in split_rows(text):     # \n and \r\n only (router.store.learned)
        if not raw.strip() or raw.startswith("#"):
            continue
        hidden = hidden_character(raw, columns)
        if hidden and seen_header:
            skip_or_raise(skipped, error(hidden[0], path=path, line=lineno, column=hidden[1], fix=HIDDEN_CHARACTER_FIX))
            continue
        if hidden:
            raise error(hidden[0], path=path, line=lineno, column=hidden[1], fix=HIDDEN_CHARACTER_FIX)
        fields = raw.split("\t")
        if not seen_header:
            if tuple(f.strip() for f in fields) != columns:
                raise error("expected the column row " + "\\t".join(columns), path=path,
                            line=lineno, column=1,
                            fix="restore the header row, or run memory-router clusters enrich --force")
            seen_header = True
            continue
        if len(fields) != len(columns):
            skip_or_raise(skipped, error(f"expected {len(columns)} tab-separated fields, got {len(fields)}",
                                         path=path, line=lineno, column=1,
                                         fix="write " + ", ".join(columns) + " separated by tabs"))
            continue
        key, body, text_hash, engine, model, written = (f.strip() for f in fields)
        starts = [1]
        for field in fields[:-1]:
            starts.append(starts[-1] + len(field) + 1)
        what = columns[1].replace("_", "-")
        problem = None
        if not _SLUG_RE.match(key):
            problem, column, fix = f"invalid {key_name} {key!r}", starts[0], f"{key_name}s use only a-z, 0-9 and _"
        elif not body:
            problem, column, fix = f"empty {what}", starts[1], f"write the {what}, or delete the row"
        elif len(body) > max_chars:
            problem, column, fix = (f"{what} of {len(body)} characters (at most {max_chars})",
                                    starts[1], "shorten it")
        elif not _HASH_RE.match(text_hash):
            problem, column, fix = (f"{hash_name} {text_hash!r} is not 16 hex digits or '-'", starts[2],
                                    "write '-' for a row written by hand")
        elif not _ENGINE_RE.match(engine):
            problem, column, fix = f"invalid engine {engine!r}", starts[3], "write 'hand' for a row written by hand"
        elif not model:
            problem, column, fix = "empty model", starts[4], "write '-' when there is no model"
        elif utc_stamp_problem(written):
            problem, column, fix = (f"written {written!r} {utc_stamp_problem(written)}", starts[5],
                                    "write a real UTC time like 2026-12-01T21:00:00Z")
        if problem:
            skip_or_raise(skipped, error(problem, path=path, line=lineno, column=column, fix=fix))
            continue
        rows.append((key, body, text_hash, engine, model, written, lineno))
    return rows


def read_utterances(path, skipped=None):
    """The rows of the utterances file at ``path``, in file order; ``[]`` when there is none
    (``skipped``: see ``parse_rows``)."""
    text = read_utf8(path, "utterances file", "fix its permissions, or delete it and run memory-router clusters enrich",
                     UtterancesFileError, missing_ok=True)
    return [] if text is None else parse_utterances_text(text, path, skipped)


def utterances_by_slug(rows):
    """``{slug: (utterance, ...)}`` in file order, duplicates dropped: what a router matches on."""
    found = {}
    for row in rows:
        texts = found.setdefault(row.slug, [])
        if row.text not in texts:
            texts.append(row.text)
    return {slug: tuple(texts) for slug, texts in found.items()}


def render_utterances(rows):
    """The file text for ``rows`` (header comment, column row, one line per row)."""
    lines = [HEADER_COMMENT.rstrip("\n"), "\t".join(COLUMNS)]
    lines += ["\t".join((r.slug, clean_utterance(r.text), r.memory_hash, r.engine, r.model, r.written))
              for r in rows]
    return "\n".join(lines) + "\n"
