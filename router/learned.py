"""The learned-terms file: words that feedback says lead to a memory (docs/learning.md).

A prompt whose answer needed memory ``slug`` makes the prompt's content words evidence for
that memory. They are kept as one row per (memory, word) in a tab-separated file beside the
cluster file, ``<cluster file stem>.learned.tsv``, that a person can read, edit and delete:

    # (a header comment saying what the file is)
    added<TAB>cluster_id<TAB>slug<TAB>term<TAB>source
    2026-11-30T19:55:01Z<TAB>env<TAB>env_bash_tool<TAB>setx<TAB>mcp

Rules every writer follows (``apply_feedback`` is the one place they live):

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

import os
import re
import time
from collections import namedtuple

from router import safeio
from router.errors import InputError, decode_utf8
from router.tokens import slug_words, tokenize

COLUMNS = ("added", "cluster_id", "slug", "term", "source")
HEADER_COMMENT = (
    "# memory-router learned terms (see docs/learning.md). Each row says: a prompt holding this word\n"
    "# was answered by this memory, so the word is evidence for it. Written by memory-router from\n"
    "# feedback (the MCP record_feedback tool, memory-router learn); the file is rewritten whole, so\n"
    "# comments other than this header are not kept. Review freely: delete a row to forget it.\n"
    "# Hand tags in the cluster file always win: a word that is a tag there is never learned.\n"
    "# At most learned_cap rows per cluster (memory-router.toml); the oldest leave first.\n"
)
SUFFIX = ".learned.tsv"
MAX_TERMS_PER_FEEDBACK = 16
SOURCES = ("mcp", "learn", "hand")

LearnedTerm = namedtuple("LearnedTerm", "added cluster_id slug term source line")
LearnedTerm.__doc__ = "One learned row: when (UTC ISO 8601), cluster, memory slug, word, who wrote it, file line."

_STAMP_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
_SLUG_RE = re.compile(r"^[a-z0-9_]+$")
_CLUSTER_ID_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


class LearnedFileError(InputError):
    """A learned-terms file that cannot be read back (exit 2, never rewritten on a guess)."""


def learned_path(cluster_path):
    """The learned-terms file of a cluster file: ``brain/x.md`` -> ``brain/x.learned.tsv``."""
    base, ext = os.path.splitext(os.fspath(cluster_path))
    if ext.lower() not in (".md", ".markdown", ".tsv"):
        base = os.fspath(cluster_path)
    return base + SUFFIX


def utc_stamp(now):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))


# --------------------------------------------------------------------------- reading


def parse_learned_text(text, path="<learned>"):
    """Rows of a learned-terms file's text; a bad row is a ``LearnedFileError`` naming its line."""
    rows = []
    seen_header = False
    for lineno, raw in enumerate(text.splitlines(), 1):
        if not raw.strip() or raw.startswith("#"):
            continue
        fields = raw.split("\t")
        if not seen_header:
            if tuple(f.strip() for f in fields) != COLUMNS:
                raise LearnedFileError("expected the column row " + "\\t".join(COLUMNS), path=path, line=lineno,
                                       column=1, fix="restore the header row, or delete the file to start over")
            seen_header = True
            continue
        if len(fields) != len(COLUMNS):
            raise LearnedFileError(f"expected {len(COLUMNS)} tab-separated fields, got {len(fields)}", path=path,
                                   line=lineno, column=1, fix="write " + ", ".join(COLUMNS) + " separated by tabs")
        added, cluster_id, slug, term, source = (f.strip() for f in fields)
        problem = None
        column = 1
        if not _STAMP_RE.match(added):
            problem, fix = f"added {added!r} is not a UTC time like 2026-11-30T19:55:01Z", "write the time as shown"
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
            raise LearnedFileError(problem, path=path, line=lineno, column=column, fix=fix)
        rows.append(LearnedTerm(added, cluster_id, slug, term, source, lineno))
    return rows


def read_learned(path):
    """The rows of the learned-terms file at ``path``, in file order; ``[]`` when there is none."""
    try:
        with safeio.open_regular(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return []
    except OSError as err:
        raise LearnedFileError(f"cannot read learned-terms file: {err.strerror or err}", path=path,
                               fix="fix its permissions, or delete it to start over") from None
    return parse_learned_text(decode_utf8(data, path, "learned-terms file", LearnedFileError), path)


def learned_terms_for(cluster_path):
    """``{slug: terms}`` of the learned-terms file beside ``cluster_path`` (``{}`` when there is
    none): what the default provider adds to each memory's words while ``learning = true``."""
    return terms_by_slug(read_learned(learned_path(cluster_path)))


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


# --------------------------------------------------------------------------- feedback


def hand_tag_words(index):
    """Every routing word of every cluster's hand tags: never learned, whoever asks."""
    words = set()
    for cluster in index.clusters:
        for tag in cluster.tags:
            words |= tokenize(tag)
    return words


def prompt_terms(prompt):
    """The prompt's routing words in the order they first appear (the order decides which
    survive ``MAX_TERMS_PER_FEEDBACK``)."""
    ordered = []
    seen = set()
    for chunk in prompt.split():
        for term in sorted(tokenize(chunk)):
            if term not in seen:
                seen.add(term)
                ordered.append(term)
    return ordered


def apply_feedback(rows, prompt, slug, useful, *, index, cap, now, source="mcp", hand_tags=None):
    """Pure: ``(new rows, report)`` for one feedback on ``rows`` (see the module docstring).

    ``index`` is the store's ``ClusterIndex``; ``slug`` must be one of its members (else
    ``InputError``). ``hand_tags`` is ``hand_tag_words(index)``, for a caller that keeps it
    between calls (on a 10,000-member store it costs more than the rest). ``report`` says what
    was added, refreshed, removed, skipped and evicted."""
    found = index.find_member(slug)
    if found is None:
        raise InputError(f"memory {slug!r} is not in the store", fix="pass a slug from the cluster file")
    if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
        raise InputError(f"the learned-terms cap must be a positive integer, got {cap!r}",
                         fix="set learned_cap = 24 in memory-router.toml")
    cluster, member = found

    def current_cluster(row):
        # A memory that moved to another cluster counts against the cluster it is in now.
        owner = index.find_member(row.slug)
        return row if owner is None or owner[0].cluster_id == row.cluster_id else row._replace(
            cluster_id=owner[0].cluster_id)

    rows = [current_cluster(r) for r in rows]
    terms = prompt_terms(prompt)
    report = {"slug": slug, "cluster_id": cluster.cluster_id, "useful": bool(useful), "added": [],
              "refreshed": [], "removed": [], "evicted": [],
              "skipped": {"hand_tag": [], "own_word": [], "over_limit": []}, "cap": cap}
    mine = {r.term for r in rows if r.slug == slug}
    if not useful:
        drop = set(terms) & mine
        report["removed"] = [t for t in terms if t in drop]
        rows = [r for r in rows if not (r.slug == slug and r.term in drop)]
        report["terms_in_cluster"] = sum(1 for r in rows if r.cluster_id == cluster.cluster_id)
        return rows, report
    tags = hand_tag_words(index) if hand_tags is None else hand_tags
    own = slug_words(member.slug) | tokenize(member.hook)
    limit = min(MAX_TERMS_PER_FEEDBACK, cap)
    chosen = []
    for term in terms:
        if term in tags:
            report["skipped"]["hand_tag"].append(term)
        elif term in own:
            report["skipped"]["own_word"].append(term)
        elif len(chosen) >= limit:
            report["skipped"]["over_limit"].append(term)
        else:
            chosen.append(term)
    stamp = utc_stamp(now)
    again = set(chosen) & mine
    rows = [r for r in rows if not (r.slug == slug and r.term in again)]
    for term in chosen:
        report["refreshed" if term in again else "added"].append(term)
        rows.append(LearnedTerm(stamp, cluster.cluster_id, slug, term, source, None))
    in_cluster = [i for i, r in enumerate(rows) if r.cluster_id == cluster.cluster_id]
    evict = set(in_cluster[:max(0, len(in_cluster) - cap)])
    report["evicted"] = [{"slug": rows[i].slug, "term": rows[i].term, "added": rows[i].added} for i in sorted(evict)]
    rows = [r for i, r in enumerate(rows) if i not in evict]
    report["terms_in_cluster"] = sum(1 for r in rows if r.cluster_id == cluster.cluster_id)
    return rows, report


def add_feedback(path, prompt, slug, useful, *, index, cap, now=None, source="mcp", hand_tags=None):
    """Record one feedback in the learned-terms file at ``path`` (created when missing) and
    return the report of ``apply_feedback`` with ``path`` added. Nothing is written when
    nothing changes; an unreadable file is refused (``LearnedFileError``), never overwritten."""
    now = time.time() if now is None else now
    directory = os.path.dirname(os.path.abspath(path)) or "."
    with _DirectoryLock(directory):
        before = read_learned(path)
        rows, report = apply_feedback(before, prompt, slug, useful, index=index, cap=cap, now=now, source=source,
                                      hand_tags=hand_tags)
        report["path"] = os.path.abspath(path)
        changed = report["added"] or report["refreshed"] or report["removed"] or report["evicted"]
        if changed:
            _atomic_replace(path, render_learned(rows).encode("utf-8"))
        report["written"] = bool(changed)
    return report


def add_feedbacks(path, feedbacks, *, index, cap, source="learn", hand_tags=None, dry_run=False):
    """Record many useful/not-useful feedbacks in one read-modify-write: each of ``feedbacks`` is
    ``(prompt, slug, useful, now)``, applied in order by ``apply_feedback`` (so the rules and the
    caps are the same as for one), then the file is written once, or not at all when its text
    would not change. ``dry_run``: nothing is locked or written.

    Returns ``{"path", "reports", "before", "after", "written"}``: ``before``/``after`` are the
    file's text (``before`` is ``None`` when there was no file; a diff of the two is the review)."""
    hand_tags = hand_tag_words(index) if hand_tags is None else hand_tags
    directory = os.path.dirname(os.path.abspath(path)) or "."

    def run():
        try:
            with safeio.open_regular(path, "rb") as handle:
                before = decode_utf8(handle.read(), path, "learned-terms file", LearnedFileError)
        except FileNotFoundError:
            before = None
        except OSError as err:
            raise LearnedFileError(f"cannot read learned-terms file: {err.strerror or err}", path=path,
                                   fix="fix its permissions, or delete it to start over") from None
        rows = parse_learned_text(before, path) if before is not None else []
        reports = []
        for prompt, slug, useful, now in feedbacks:
            rows, report = apply_feedback(rows, prompt, slug, useful, index=index, cap=cap,
                                          now=time.time() if now is None else now, source=source, hand_tags=hand_tags)
            reports.append(report)
        after = render_learned(rows) if (rows or before is not None) else None
        written = False
        if not dry_run and after is not None and after != before:
            _atomic_replace(path, after.encode("utf-8"))
            written = True
        return {"path": os.path.abspath(path), "reports": reports, "before": before, "after": after,
                "written": written}

    if dry_run:
        return run()
    with _DirectoryLock(directory):
        return run()


# --------------------------------------------------------------------------- routing


def merge_learned_postings(table, learned):
    """A copy of routing ``table`` (``router.score.build_routing_table``) with learned terms as
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


# --------------------------------------------------------------------------- writing


class _DirectoryLock:
    """An exclusive ``flock`` on the file's directory for one read-modify-write, so two servers
    recording feedback at once do not drop each other's rows. Where there is no ``fcntl``
    (Windows) it does nothing: the replace is still atomic, but a concurrent row can be lost."""

    def __init__(self, directory):
        self.directory = directory
        self.fd = None

    def __enter__(self):
        try:
            import fcntl
        except ImportError:
            return self
        try:
            self.fd = os.open(self.directory, os.O_RDONLY)
        except OSError as err:
            raise LearnedFileError(f"cannot open the directory of the learned-terms file: {err.strerror or err}",
                                   path=self.directory, fix="create it, or fix its permissions") from None
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)  # closing the descriptor releases the flock
            self.fd = None
        return False


def _current_umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _atomic_replace(path, data):
    """Temp file in the same directory, fsync, rename, fsync the directory. (harness.fileops has
    the same for the harness; router/ may not import it, and this runs without the harness.)
    Through a symlink the file it points to is replaced and the link kept."""
    path = os.path.realpath(os.fspath(path))
    directory = os.path.dirname(path)
    try:
        import tempfile  # write path only: the hook reads this module and never writes

        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    except OSError as err:
        raise LearnedFileError(f"cannot write the learned-terms file: {err.strerror or err}", path=path,
                               fix="make its directory writable") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        mode = os.stat(path).st_mode & 0o7777 if os.path.exists(path) else 0o666 & ~_current_umask()
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException as err:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(err, OSError):
            raise LearnedFileError(f"cannot write the learned-terms file: {err.strerror or err}; it is unchanged",
                                   path=path, fix="check permissions and free space") from None
        raise
    safeio.fsync_directory(directory)
