"""Writing the learned-terms file: the feedback rules and the locked, atomic rewrite.

``router.store.learned`` reads the file (the hook and the providers need only that); this module is
what changes it, for ``memory-router learn`` and the MCP ``record_feedback`` tool. The rules every
writer follows are in ``router.store.learned``'s docstring; ``apply_feedback`` is the one place they
live. Standard library and ``router.*`` only, like the reader, though nothing on the hook's path
imports it.
"""

import os
import time

from router import safeio
from router.errors import InputError, decode_utf8
from router.removal import remove_owned
from router.store.learned import (
    MAX_TERMS_PER_FEEDBACK,
    LearnedFileError,
    LearnedTerm,
    parse_learned_text,
    read_learned,
    render_learned,
    utc_stamp,
)
from router.tokens import slug_words, tokenize


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
            self.fd = os.open(self.directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))  # never a FIFO
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
        mode = os.stat(path).st_mode & 0o7777 if os.path.exists(path) else 0o666 & ~safeio.current_umask()
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException as err:
        remove_owned(tmp, os.path.dirname(os.path.abspath(tmp)))
        if isinstance(err, OSError):
            raise LearnedFileError(f"cannot write the learned-terms file: {err.strerror or err}; it is unchanged",
                                   path=path, fix="check permissions and free space") from None
        raise
    safeio.fsync_directory(directory)
