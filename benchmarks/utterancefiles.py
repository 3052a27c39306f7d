"""Blind utterance files (``slug<TAB>utterance``, benchmarks/enrichment/) turned into what the
router reads: utterance rows, ``{slug: texts}``, or an utterances file beside a copy of a store.

    python benchmarks/utterancefiles.py BLIND.tsv CLUSTER_FILE [--out FILE] [--engine blind] [--model fixture]

writes the utterances file (``router.store.utterances`` format) for CLUSTER_FILE's members to FILE
(default: beside CLUSTER_FILE, ``<stem>.utterances.tsv``); with ``--near-misses``, BLIND.tsv is a
``cluster_id<TAB>near-miss`` file and the near-misses file (``<stem>.nearmisses.tsv``) is written. Each row's ``memory_hash`` is
``memory_text_hash`` of the memory's text: its hook line, and, when the store has a topic file
for it (``--memory-dir``), a newline and that file's body.

The blind files are data written by a model that saw only the cluster file (their README says
how); a figure measured with them says so.
"""

import argparse
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from router.store.clusterfile import load_cluster_file  # noqa: E402
from router.config import nearmisses_path, utterances_path  # noqa: E402
from router.store.nearmisses import NearMiss, cluster_text_hash, render_nearmisses  # noqa: E402
from router.store.utterances import Utterance, clean_utterance, memory_text_hash, render_utterances  # noqa: E402

ENRICHMENT = os.path.join(HERE, "enrichment")
# A fixed time, so a file written from the same blind file is the same bytes.
WRITTEN = "2026-12-01T00:00:00Z"


class BlindFileError(ValueError):
    """A blind file line that is not ``slug<TAB>utterance``."""


def read_blind(path):
    """``{slug: (utterance, ...)}`` of a blind file, in file order."""
    found = {}
    with open(path, encoding="utf-8") as handle:
        for lineno, raw in enumerate(handle, 1):
            line = raw.rstrip("\n")
            if not line.strip():
                continue
            slug, sep, text = line.partition("\t")
            if not sep or not slug or not text.strip():
                raise BlindFileError(f"{path}:{lineno}: expected slug<TAB>utterance")
            found.setdefault(slug, []).append(clean_utterance(text))
    return {slug: tuple(texts) for slug, texts in found.items()}


def read_near_misses(path):
    """{cluster id: texts} of a blind ``cluster_id<TAB>near-miss`` file (no header)."""
    found = {}
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            cluster_id, sep, text = line.rstrip("\n").partition("\t")
            if not sep or not text.strip():
                raise SystemExit(f"{path}:{number}: expected cluster_id<TAB>near-miss")
            found.setdefault(cluster_id, []).append(text.strip())
    return {key: tuple(texts) for key, texts in found.items()}


def _body(memory_dir, slug):
    if not memory_dir:
        return None
    path = os.path.join(memory_dir, slug + ".md")
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    if text.startswith("---"):
        end = text.find("\n---", 3)
        if end != -1:
            text = text[end + 4:]
    return text.strip()


def utterance_rows(blind, index, engine="blind", model="fixture", memory_dir=None):
    """``router.store.utterances.Utterance`` rows for the members of ``index`` that ``blind`` has
    (``{slug: texts}``), in cluster-file order; slugs not in the store are left out."""
    rows = []
    for cluster in index.clusters:
        for member in cluster.members:
            texts = blind.get(member.slug, ())
            if not texts:
                continue
            digest = member_hash(member, memory_dir)
            rows += [Utterance(member.slug, text, digest, engine, model, WRITTEN, 0) for text in texts]
    return rows


def member_hash(member, memory_dir=None):
    body = _body(memory_dir, member.slug)
    return memory_text_hash(member.hook if body is None else member.hook + "\n" + body)


def nearmiss_rows(near_misses, index, engine="blind", model="fixture", memory_dir=None):
    """``router.store.nearmisses.NearMiss`` rows for the clusters of ``index`` that ``near_misses``
    has (``{cluster id: texts}``), in cluster-file order."""
    rows = []
    for cluster in index.clusters:
        digest = cluster_text_hash([f"{m.slug}:{member_hash(m, memory_dir)}" for m in cluster.members])
        rows += [NearMiss(cluster.cluster_id, text, digest, engine, model, WRITTEN, 0)
                 for text in near_misses.get(cluster.cluster_id, ())]
    return rows


def write_nearmisses_file(near_path, cluster_path, out=None, engine="blind", model="fixture", memory_dir=None):
    """Write the near-misses file for ``cluster_path`` from a blind ``cluster_id<TAB>text`` file."""
    rows = nearmiss_rows(read_near_misses(near_path), load_cluster_file(cluster_path), engine, model, memory_dir)
    return _write(out or nearmisses_path(cluster_path), render_nearmisses(rows), out is None)


def write_utterances_file(blind_path, cluster_path, out=None, engine="blind", model="fixture", memory_dir=None):
    """Write the utterances file for ``cluster_path`` from ``blind_path``; returns its path."""
    rows = utterance_rows(read_blind(blind_path), load_cluster_file(cluster_path), engine, model, memory_dir)
    return _write(out or utterances_path(cluster_path), render_utterances(rows), out is None)


def _write(path, text, beside):
    """Write ``text`` to ``path``; a file beside a store that holds something else is refused,
    never overwritten (it may be one enrich wrote, or one a person edited): pass --out."""
    if beside and os.path.exists(path):
        with open(path, encoding="utf-8", newline="") as handle:
            if handle.read() != text:
                raise SystemExit(f"{path} exists and holds other rows; nothing was written (pass --out FILE)")
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
    return path


def store_copy_with_utterances(cluster_path, blind_path, directory, memory_dir=None, near_path=None):
    """A copy of ``cluster_path`` in ``directory`` with its utterances file beside it (from
    ``blind_path``) and, given ``near_path``, its near-misses file; returns the copy's path. The
    original store is never written to."""
    target = os.path.join(directory, os.path.basename(cluster_path))
    shutil.copyfile(cluster_path, target)
    write_utterances_file(blind_path, target, memory_dir=memory_dir)
    if near_path:
        write_nearmisses_file(near_path, target, memory_dir=memory_dir)
    return target


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("blind", help="slug<TAB>utterance file")
    parser.add_argument("cluster_file")
    parser.add_argument("--out", help="where to write (default: beside the cluster file)")
    parser.add_argument("--memory-dir", help="topic files, for the memory hash (default: none, hook line only)")
    parser.add_argument("--engine", default="blind")
    parser.add_argument("--model", default="fixture")
    parser.add_argument("--near-misses", action="store_true",
                        help="BLIND.tsv is a cluster_id<TAB>near-miss file: write the near-misses file instead")
    args = parser.parse_args(argv)
    write = write_nearmisses_file if args.near_misses else write_utterances_file
    print(write(args.blind, args.cluster_file, args.out, args.engine, args.model, args.memory_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
