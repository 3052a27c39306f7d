"""Where and when the hook's caches are kept: their directory, their keys, complete writes.

The caches keep the hook within a few milliseconds of Python's own start-up. Two kinds, both keyed on the source file's path, device, inode, size, mtime and ctime (plus
the size and mtime of the router's own code and stopword list, so an upgrade that keeps the
version number cannot serve a table built by the old rules), both stored in
``$MEMORY_ROUTER_CACHE_DIR``, else ``$XDG_CACHE_HOME/memory-router``, else
``~/.cache/memory-router`` (``MEMORY_ROUTER_NO_CACHE=1`` turns them off; a cache that cannot
be read or written is ignored, never fatal):

- ``cached(path, kind, build)``: a small marshal blob (a parsed config: importing ``tomllib``
  alone costs ~9 ms here).
- ``load_routing_table(path, build)``: the routing table of a cluster file, sharded. Loading a
  10,000-member table whole costs tens of milliseconds; a prompt needs only the postings of its
  own ~10 tokens and the member lines of the one or two clusters it picks. So postings are
  split into shards by ``crc32(token)`` and clusters by position, and only the shards a prompt
  touches are read (``os.pread`` + ``marshal.loads``).

What an entry is as bytes is ``router.cacheformat``'s: every entry carries a CRC-32 of exactly
the bytes it is read as, so a damaged entry is rebuilt from the source and rewritten, never
used. An entry reaches its name only complete (temp file, fsync, rename).

Limits, stated honestly: a file rewritten in place with the same size within one tick of the
file system's clock (up to 2 s on FAT, a jiffy on ext4) keeps its key. So a result is stored
only when the file last changed at least ``RACY_WINDOW_NS`` before it was read ("racily clean"
files are rebuilt until then, as git does with its index). A file system whose clock runs far
ahead of this machine's (a network share) can still defeat that guard; set
``MEMORY_ROUTER_NO_CACHE=1`` there.
"""

import os
import struct
import time
import zlib

from router import __version__
from router.cacheformat import (CACHE_FORMAT, CorruptCacheError, close_table, entry_bytes, entry_value, read_table,
                                serialise_table)
from router.config import nearmisses_path, utterances_path
from router.removal import remove_owned
# A FIFO planted in the cache dir must not hang the hook: safeio refuses what is not a regular file.
from router.safeio import fsync_directory, open_regular_fd, read_regular_bytes, write_all_synced

RACY_WINDOW_NS = 2_000_000_000
# What a cached table or config is built by; their size and mtime join every key.
_HERE = os.path.dirname(os.path.abspath(__file__))
CODE_FILES = tuple(os.path.join(_HERE, *name.split("/")) for name in (
    "cache.py", "cacheformat.py", "config.py", "configcheck.py", "configfile.py", "tokens.py", "providername.py", "stem.py",
    "store/clusterfile.py", "store/learned.py", "store/utterances.py", "providers/provider.py",
    "routing/score.py", "routing/weighted.py", "routing/weightedscore.py", "routing/weightedtable.py", "routing/wordmatch.py",
    "routing/uttertable.py", "routing/utterscore.py", "routing/priors.py", "routing/exemplars.py",
    "store/nearmisses.py", "data/stopwords.txt", "data/stopstems.txt", "data/generic_negatives.txt"))


def cache_dir():
    """Where cache entries go, or ``None`` (no caching) when there is nowhere sensible.

    ``$MEMORY_ROUTER_CACHE_DIR`` is taken as given. Otherwise the base must be an absolute path
    (a relative ``$XDG_CACHE_HOME`` is invalid by the XDG spec and ignored) and ``$HOME`` an
    existing directory: a hook run with ``HOME`` empty or pointing nowhere (a service, a
    sandbox) must not create ``/.cache`` or ``/nonexistent/.cache``; it routes uncached instead."""
    explicit = os.environ.get("MEMORY_ROUTER_CACHE_DIR")
    if explicit:
        return explicit
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return os.path.join(xdg, "memory-router")
    home = os.path.expanduser("~")
    if not home or not os.path.isabs(home) or home == os.sep or not os.path.isdir(home):
        return None
    return os.path.join(home, ".cache", "memory-router")


def caching_off():
    return bool(os.environ.get("MEMORY_ROUTER_NO_CACHE")) or cache_dir() is None


def why_caching_off():
    """Why ``caching_off()`` holds, in words (``None`` when caching is on)."""
    if os.environ.get("MEMORY_ROUTER_NO_CACHE"):
        return "MEMORY_ROUTER_NO_CACHE is set"
    if cache_dir() is None:
        return ("no cache directory: HOME is empty or not a directory, and neither MEMORY_ROUTER_CACHE_DIR nor an "
                "absolute XDG_CACHE_HOME is set")
    return None


def _code_stamp():
    stamp = []
    for name in CODE_FILES:
        try:
            st = os.stat(name)
            stamp.append((st.st_size, st.st_mtime_ns))
        except OSError:
            stamp.append(None)
    return tuple(stamp)


def _stat_key(path, kind, companions=()):
    """(key, stat result) of ``path``; ``_settled(stat result)`` says whether a result built
    from what was read after this stat may be stored. ``companions``: other files the result is
    built from (the learned-terms file); their stat joins the key (``None`` while one is absent),
    and the stat result returned is the most recently changed of them all."""
    st = os.stat(path)
    key = (CACHE_FORMAT, __version__, kind, path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns,
           st.st_ctime_ns, _code_stamp())
    for companion in companions:
        try:
            other = os.stat(companion)
        except OSError:
            key += (companion, None)
            continue
        key += (companion, other.st_dev, other.st_ino, other.st_size, other.st_mtime_ns, other.st_ctime_ns)
        if max(other.st_mtime_ns, other.st_ctime_ns) > max(st.st_mtime_ns, st.st_ctime_ns):
            st = other
    return key, st


def _settled(st):
    # Changed less than RACY_WINDOW_NS ago: a same-size rewrite in the same clock tick would
    # keep this key, so the result is not stored (it is rebuilt until the file settles).
    return time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) >= RACY_WINDOW_NS


def entry_path(path, kind, suffix=".marshal"):
    """Where the cache keeps what it made of ``path`` as ``kind``: one name per path and kind."""
    digest = zlib.crc32(path.encode("utf-8", "surrogateescape"))
    return os.path.join(cache_dir(), f"{kind}-{digest:08x}{suffix}")


def cached(path, kind, build):
    """Return ``build(path)``, reusing a stored result while ``path`` is unchanged.

    ``build``'s result must be marshal-safe (dicts, tuples, lists, sets, str, int, float, None).
    """
    path = os.path.abspath(path)
    key, st = _stat_key(path, kind)
    if caching_off():
        return build(path)
    entry = entry_path(path, kind)
    try:
        stored_key, value = entry_value(read_regular_bytes(entry))
        if stored_key == key:
            return value
    except (OSError, EOFError, ValueError, TypeError):
        pass
    value = build(path)
    if _settled(st):
        try:
            _store(entry, entry_bytes(key, value))
        except ValueError:  # not marshal-safe: serve it uncached
            pass
    return value


# A temp file of ours only: created here, never an existing one (after removing what a killed
# process with our pid left), in binary mode where the platform has one.
_STORE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


def _store(entry, data):
    """Put ``data`` at ``entry`` only complete: a private temp file beside it, fsync, rename, fsync
    the directory. A failure leaves no temp file and is returned, never raised (the cache is
    optional; a command that needs the entry names it); ``None`` when it was stored."""
    directory = os.path.dirname(entry)
    tmp = f"{entry}.{os.getpid()}.tmp"
    try:
        os.makedirs(directory, exist_ok=True)
        remove_owned(tmp, directory)  # left by a killed process that had our pid
        fd = os.open(tmp, _STORE_FLAGS, 0o600)
        try:
            write_all_synced(fd, data)
        finally:
            os.close(fd)
        os.replace(tmp, entry)
    except (OSError, ValueError) as err:
        remove_owned(tmp, directory)  # whatever of it was made (none: nothing to remove)
        return err
    fsync_directory(directory)
    return None


def _open_table(entry, key):
    fd = open_regular_fd(entry)
    try:
        return read_table(fd, key)
    except BaseException:
        os.close(fd)
        raise


def release_table(table):
    """Close the file a table read from the cache reads its shards through (a table built in
    memory holds none): for a long-lived reader that loads a newer table."""
    if not isinstance(table.get("clusters"), (list, tuple)):
        close_table(table)


def _table_place(path, companions, beside=True):
    """``(key, stat result, entry path)`` of the routing table of the cluster file at ``path``
    (absolute): the one place a table's kind, key and cache entry are worked out."""
    kind = _table_kind(companions, beside)
    key, st = _stat_key(path, kind, _companions(path, companions, beside))
    return key, st, entry_path(path, kind)


def load_routing_table(path, build, companions=(), fallback=None, beside=True):
    """A routing table for the cluster file at ``path``: from the sharded cache when it is
    current, else ``build(path)`` (whose result is then cached). Both answer the same lookups.
    ``companions``: other files ``build`` reads (a changed one means a rebuild); a table built
    with companions is cached apart from one built without. The utterances and near-misses files
    beside ``path`` are always among them (``_companions``).

    A shard is checked only when a lookup first reads it, so a lookup on a cached table can
    raise ``CorruptCacheError``; ``use_routing_table`` handles that by rebuilding.

    ``fallback(path)``, when given, is asked first on a miss: a table it returns is used instead
    of building (the hook routes on the cluster file alone rather than build a table it could not
    finish in its budget; ``router.hooks.compiled``), ``None`` means build. ``beside=False``: the
    files beside the cluster file are not part of the key (a table built on the cluster file alone)."""
    path = os.path.abspath(path)
    if caching_off():
        # No cache: ``fallback`` still decides (the hook must not build a table it cannot finish).
        table = fallback(path) if fallback is not None else None
        return build(path) if table is None else table
    key, st, entry = _table_place(path, companions, beside)
    try:
        return _open_table(entry, key)
    except (OSError, EOFError, ValueError, TypeError, struct.error):
        pass
    if fallback is not None:
        table = fallback(path)
        if table is not None:
            return table
    return _build_and_store(path, build, key, st, entry)


def _current(entry, key):
    """Whether ``entry`` holds a whole table for ``key`` (its header read and checked, then closed)."""
    try:
        table = _open_table(entry, key)
    except (OSError, EOFError, ValueError, TypeError, struct.error):
        return False
    close_table(table)
    return True


def compile_routing_table(path, build, companions=()):
    """Build the routing table of the cluster file at ``path`` now and store it where
    ``load_routing_table`` looks, settled or not: for a command that has just written the store
    (the files are ours, replaced by rename, so a later write cannot keep their key short of a
    same-size in-place edit within one clock tick). Returns ``(entry path or None, why not)``:
    ``why not`` says why the table is not there for the hook (caching off, the cache directory not
    writable, a write that failed, an entry that does not read back whole), ``None`` when it is."""
    path = os.path.abspath(path)
    if caching_off():
        return None, f"caching is off ({why_caching_off()})"
    key, _st, entry = _table_place(path, companions)
    failed = _store(entry, serialise_table(build(path), key))
    if failed is not None:
        reason = failed.strerror if isinstance(failed, OSError) and failed.strerror else str(failed)
        return None, f"the table could not be written in the cache directory {os.path.dirname(entry)}: {reason}"
    if not _current(entry, key):
        return None, f"the table written at {entry} does not read back whole (the cache directory keeps a damaged copy)"
    return entry, None


def table_is_current(path, companions=()):
    """Whether the stored routing table of ``path`` (with the files beside it) is current."""
    path = os.path.abspath(path)
    if caching_off():
        return False
    key, _st, entry = _table_place(path, companions)
    return _current(entry, key)


def _build_and_store(path, build, key, st, entry):
    table = build(path)
    if _settled(st):
        try:
            _store(entry, serialise_table(table, key))
        except ValueError:
            pass
    return table


def _table_kind(companions, beside=True):
    kind = "table-companions" if companions else "table"
    return kind if beside else kind + "-alone"


def _companions(path, companions, beside=True):
    """What a table of the cluster file at ``path`` is built from besides it: the caller's
    ``companions`` and the utterances and near-misses files beside it (``router.routing.weightedtable``
    reads them whenever it builds a table), so writing, editing or deleting one means a rebuild;
    ``beside=False``: the caller's alone."""
    if not beside:
        return tuple(companions)
    return tuple(companions) + (utterances_path(path), nearmisses_path(path))


def use_routing_table(path, build, use, companions=(), fallback=None):
    """``use(table)`` for the cluster file at ``path``. When a shard read on the way fails its
    checksum, the damaged entries are dropped and the table loaded again (so the rebuild follows
    the same ``fallback`` policy as any miss), and ``use`` called again on it: a damaged cache
    costs one rebuild, never a wrong or missing answer."""
    table = load_routing_table(path, build, companions, fallback)
    try:
        return use(table)
    except CorruptCacheError:  # only a cached table has shards to fail, so there is a cache
        path = os.path.abspath(path)
        for beside in (True, False):
            entry = _table_place(path, companions, beside)[2]
            remove_owned(entry, os.path.dirname(entry))   # our own cache entries
        return use(load_routing_table(path, build, companions, fallback))
