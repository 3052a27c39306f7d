"""What the MCP tools need of a store's files, and when to rebuild it (issue 24 items 20, 21).

The server is long-lived, so it keeps one ``LoadedStore`` and rebuilds it when its reload key
changes: the stat of every file the hook's table is built from (the cluster file, the learned-terms
file while learning is on, the utterances and near-misses files; ``None`` while one is absent). A
``record_feedback``, a ``learn`` run, a person editing a file or a ``clusters enrich`` is seen by
the next tool call, as the hook sees it on the next prompt. The table is the hook's own
(``router.hooks.compiled.hook_table``), read from the compiled cache.

A damaged learned-terms or utterances file, or a bad row in one, does what it does to the hook: one
line in ``$MEMORY_ROUTER_LOG`` (and on the server's stderr, which MCP hosts keep as the server's
log), routing and search without it, every tool still serving; the results name it in
``store_problems`` by file (and line and column) only (``router.agenttext``). Only a missing or
broken cluster file is an error, since there is nothing to serve without it. ``record_feedback``
still refuses to rewrite a damaged learned file.
"""

import os
import stat
import sys

from harness.context import RouterContext
from router.config import learned_path, nearmisses_path, utterances_path
from router.errors import InputError
from router.hookio import log_diagnostic


def _stat_key(path):
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as err:  # unreadable: the loader says why; the key still changes when it does
        return ("error", err.errno)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def reload_key(cluster_path, learning):
    """The stats a ``LoadedStore`` of ``cluster_path`` was built from; ``InputError`` when the
    cluster file is missing or not a regular file."""
    try:
        st = os.stat(cluster_path)
    except OSError as err:
        raise InputError(f"cannot read the cluster file: {err.strerror or err}", path=cluster_path,
                         fix="build one (memory-router clusters build), or point --clusters or clusters in "
                             "memory-router.toml at it") from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError("the cluster file is not a regular file", path=cluster_path,
                         fix="point --clusters at a .md or .tsv cluster file")
    own = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    learned = _stat_key(learned_path(cluster_path)) if learning else None
    return (own, learned, _stat_key(utterances_path(cluster_path)), _stat_key(nearmisses_path(cluster_path)))


def read_learned_terms(cluster_path):
    """``({slug: terms}, problem)``: the learned terms beside ``cluster_path`` (a bad row left
    out), or ``{}`` and the one-line reason when the file cannot be used at all."""
    from router.store.learned import LearnedFileError, learned_terms_for

    try:
        return learned_terms_for(cluster_path, []), None
    except LearnedFileError as err:
        return {}, err.format()


def load_store(cluster_path, settings, config, learning):
    """The state the tools read: ``context`` (a ``RouterContext`` on the hook's table),
    ``tag_words`` per cluster position, ``member_words`` and ``position`` (cluster position,
    member number) per slug, ``postings`` (word -> positions), ``hand_tags`` (every tag word),
    ``learned`` ({slug: terms}, empty while learning is off) and ``problems`` (``(where,
    message)`` per file left out or row skipped: ``where`` is the file, or ``file:line:col``)."""
    from router.tokens import slug_words, tokenize

    learned, problem = read_learned_terms(cluster_path) if learning else ({}, None)
    problems = []
    if problem:
        problems.append((learned_path(cluster_path),
                         f"{problem}; routing and search go on without learned terms until it is fixed"))
    ctx = RouterContext(cluster_path, settings, config, log=lambda message: None)
    utterance_problem = (ctx.table.get("utterance_meta") or {}).get("problem")
    if utterance_problem:
        problems.append((utterances_path(cluster_path),
                         f"{utterance_problem}; routing and search go on without utterances until it is fixed"))
    problems += [(where, f"{message}; that row is skipped, the rest are used") for where, message in ctx.skipped_rows()]
    for _where, line in problems:
        log_diagnostic("mcp", line)
        print(f"memory-router mcp: {line}", file=sys.stderr, flush=True)
    tag_words = [set().union(*(tokenize(t) for t in c.tags)) for c in ctx.index.clusters]
    member_words = {}
    where = {}
    postings = {}
    for position, cluster in enumerate(ctx.index.clusters):
        for number, member in enumerate(cluster.members):
            # As the scorer counts them: a word that is one of its cluster's tags scores as a tag only.
            words = (slug_words(member.slug) | tokenize(member.hook)) - tag_words[position]
            member_words[member.slug] = words
            where[member.slug] = (position, number)
            for word in words:
                postings.setdefault(word, []).append((position, number))
    return {"context": ctx, "tag_words": tag_words, "member_words": member_words, "position": where,
            "postings": postings, "hand_tags": set().union(*tag_words) if tag_words else set(),
            "learned": learned, "problems": problems}
