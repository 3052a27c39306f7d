"""A marshal cache of parsed files, keyed on the source file's path, size, mtime and inode.

Parsing a 10,000-member cluster file, or importing ``tomllib`` (~9 ms here) to read a config,
would blow the hook's budget on every prompt; a valid cache entry costs one ``stat`` and one
``marshal.load``. The cache lives in ``$MEMORY_ROUTER_CACHE_DIR``, else
``$XDG_CACHE_HOME/memory-router``, else ``~/.cache/memory-router``; setting
``MEMORY_ROUTER_NO_CACHE=1`` turns it off. A cache that cannot be read or written is ignored.
"""

import marshal
import os
import zlib

from router import __version__

CACHE_FORMAT = 2


def cache_dir():
    explicit = os.environ.get("MEMORY_ROUTER_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "memory-router")


def cached(path, kind, build):
    """Return ``build(path)``, reusing a stored result while ``path`` is unchanged.

    ``build``'s result must be marshal-safe (dicts, tuples, lists, sets, str, int, float, None).
    """
    path = os.path.abspath(path)
    st = os.stat(path)
    if os.environ.get("MEMORY_ROUTER_NO_CACHE"):
        return build(path)
    key = (CACHE_FORMAT, __version__, kind, path, st.st_size, st.st_mtime_ns, st.st_ino)
    entry = os.path.join(cache_dir(), f"{kind}-{zlib.crc32(path.encode('utf-8', 'surrogateescape')):08x}.marshal")
    try:
        with open(entry, "rb") as handle:
            stored_key, value = marshal.load(handle)
        if stored_key == key:
            return value
    except (OSError, EOFError, ValueError, TypeError):
        pass
    value = build(path)
    _store(entry, (key, value))
    return value


def _store(entry, payload):
    tmp = f"{entry}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(entry), exist_ok=True)
        with open(tmp, "wb") as handle:
            marshal.dump(payload, handle)
        os.replace(tmp, entry)
    except (OSError, ValueError):
        try:
            os.unlink(tmp)
        except OSError:
            pass
