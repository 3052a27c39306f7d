"""The near-misses file: requests that graze a cluster's words but need none of the store's memories.

Written at build time by ``memory-router clusters enrich`` (protocol ``memory-router.enrich/2``)
through the engine the user chose, beside the cluster file as ``<cluster file stem>.nearmisses.tsv``:

    # (a header comment saying what the file is)
    cluster_id<TAB>near_miss<TAB>cluster_hash<TAB>engine<TAB>model<TAB>written
    layer1_deploy<TAB>add a --dry-run flag to the deploy script<TAB>5b0c...<TAB>claude<TAB>haiku<TAB>2026-12-01T21:00:00Z

- ``cluster_hash`` is ``cluster_text_hash`` of the cluster's member lines (and topic-file bodies)
  the near-misses were written from: enrich asks again when a member, or its text, changes. A row
  a person adds by hand writes ``-`` there (and ``hand`` as its engine); enrich keeps such rows.
- A near-miss is an exemplar of "no memory needed" for the nearest-exemplar veto
  (``router.routing.veto``). It is never sent: no router puts it in ``additionalContext``.

The generic negatives (``router/data/generic_negatives.txt``: everyday requests to a coding
assistant, written without any store) are exemplars of the same kind for every store.

A sibling file rather than a kind column in the utterances file: near-misses belong to a cluster,
not a member, and a ``/1`` utterances file stays exactly as it was.

Standard library and ``router.*`` only: read when a routing table is compiled, never on a prompt.
"""

import hashlib
import os
from collections import namedtuple

from router.errors import InputError, read_utf8
from router.store.utterances import clean_utterance, parse_rows
from router.safeio import open_regular

COLUMNS = ("cluster_id", "near_miss", "cluster_hash", "engine", "model", "written")
HEADER_COMMENT = (
    "# memory-router near-misses (see docs/enrich.md). Each row: a request that touches this cluster's\n"
    "# words but needs none of the store's memories, written by `memory-router clusters enrich` through\n"
    "# the engine you chose. Used only to keep the router quiet on such requests: a near-miss never\n"
    "# reaches the model's context. Review freely: edit or delete a row; add your own with\n"
    "# cluster_hash '-' and engine 'hand' (enrich keeps them). Comments other than this header are not kept.\n"
)
MAX_NEAR_MISS_CHARS = 200
GENERIC_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                            "generic_negatives.txt")


NearMiss = namedtuple("NearMiss", "key text text_hash engine model written line")
NearMiss.__doc__ = ("One row: cluster id, the near-miss, hash of the cluster text it was written from ('-' by "
                    "hand), engine, model, when (UTC ISO 8601), file line (0 for a row not read from a file).")


class NearMissesFileError(InputError):
    """A near-misses file that cannot be read back (exit 2; the hook routes without it)."""

    quotes_build_time_text = True   # its message may quote a row: router.agenttext.tool_error


def cluster_text_hash(member_hashes):
    """16 hex digits of the SHA-256 of a cluster's members, in file order: each member's slug and
    ``memory_text_hash`` (``slug:hash``). A member added, removed or edited changes it."""
    digest = hashlib.sha256()
    for item in member_hashes:
        digest.update(item.encode("utf-8", "surrogatepass") + b"\0")
    return digest.hexdigest()[:16]


def parse_nearmisses_text(text, path="<near-misses>", skipped=None):
    """``NearMiss`` rows of a near-misses file's text, in file order; a bad row is a
    ``NearMissesFileError`` naming its line, column and fix (``skipped``:
    ``router.store.utterances.parse_rows``)."""
    return [NearMiss(*row) for row in parse_rows(text, path, COLUMNS, NearMissesFileError, MAX_NEAR_MISS_CHARS,
                                                 key_name="cluster id", hash_name="cluster_hash", skipped=skipped)]


def read_nearmisses(path, skipped=None):
    """The rows of the near-misses file at ``path``; ``[]`` when there is none."""
    text = read_utf8(path, "near-misses file",
                     "fix its permissions, or delete it and run memory-router clusters enrich",
                     NearMissesFileError, missing_ok=True)
    return [] if text is None else parse_nearmisses_text(text, path, skipped)


def nearmisses_by_cluster(rows):
    """``{cluster id: (near-miss, ...)}`` in file order, duplicates dropped."""
    found = {}
    for row in rows:
        texts = found.setdefault(row.key, [])
        if row.text not in texts:
            texts.append(row.text)
    return {cluster_id: tuple(texts) for cluster_id, texts in found.items()}


def render_nearmisses(rows):
    """The file text for ``rows`` (header comment, column row, one line per row)."""
    lines = [HEADER_COMMENT.rstrip("\n"), "\t".join(COLUMNS)]
    lines += ["\t".join((r.key, clean_utterance(r.text), r.text_hash, r.engine, r.model, r.written)) for r in rows]
    return "\n".join(lines) + "\n"


def read_generic_negatives(path=GENERIC_PATH):
    """The shipped generic negatives: one request a line, ``#`` comments and blank lines skipped."""
    with open_regular(path, encoding="utf-8") as handle:
        return tuple(line.strip() for line in handle if line.strip() and not line.startswith("#"))
