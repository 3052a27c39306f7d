"""Caches that keep the hook within a few milliseconds of Python's own start-up.

Two kinds, both keyed on the source file's path, size, mtime and inode, both stored in
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
"""

import marshal
import os
import struct
import zlib

from router import __version__

CACHE_FORMAT = 3
_MAGIC = b"MRTABLE3"
_HEAD = struct.Struct("<8sQ")
TOKENS_PER_SHARD = 64
CLUSTERS_PER_SHARD = 16


def cache_dir():
    explicit = os.environ.get("MEMORY_ROUTER_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "memory-router")


def _key(path, kind):
    st = os.stat(path)
    return (CACHE_FORMAT, __version__, kind, path, st.st_size, st.st_mtime_ns, st.st_ino)


def _entry_path(path, kind):
    digest = zlib.crc32(path.encode("utf-8", "surrogateescape"))
    return os.path.join(cache_dir(), f"{kind}-{digest:08x}.marshal")


def cached(path, kind, build):
    """Return ``build(path)``, reusing a stored result while ``path`` is unchanged.

    ``build``'s result must be marshal-safe (dicts, tuples, lists, sets, str, int, float, None).
    """
    path = os.path.abspath(path)
    key = _key(path, kind)
    if os.environ.get("MEMORY_ROUTER_NO_CACHE"):
        return build(path)
    entry = _entry_path(path, kind)
    try:
        with open(entry, "rb") as handle:
            stored_key, value = marshal.loads(handle.read())
        if stored_key == key:
            return value
    except (OSError, EOFError, ValueError, TypeError):
        pass
    value = build(path)
    _store(entry, marshal.dumps((key, value)))
    return value


def _store(entry, data):
    tmp = f"{entry}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(entry), exist_ok=True)
        with open(tmp, "wb") as handle:
            handle.write(data)
        os.replace(tmp, entry)
    except (OSError, ValueError):
        try:
            os.unlink(tmp)
        except OSError:
            pass


# --------------------------------------------------------------------------- sharded table


def _shard_of(token, shards):
    return zlib.crc32(token.encode("utf-8", "surrogateescape")) % shards


def serialise_table(table, key):
    """The sharded cache bytes for a routing table (see ``build_routing_table``)."""
    tokens = set(table["tag_postings"]) | set(table["member_postings"])
    posting_shards = max(1, len(tokens) // TOKENS_PER_SHARD)
    clusters = table["clusters"]
    cluster_shards = max(1, len(clusters) // CLUSTERS_PER_SHARD)
    postings = [{} for _ in range(posting_shards)]
    for token in tokens:
        postings[_shard_of(token, posting_shards)][token] = (
            table["tag_postings"].get(token, ()), table["member_postings"].get(token, ()))
    grouped = [{} for _ in range(cluster_shards)]
    for position, cluster in enumerate(clusters):
        grouped[position % cluster_shards][position] = cluster
    blobs = [marshal.dumps(shard) for shard in postings] + [marshal.dumps(shard) for shard in grouped]
    spans = []
    offset = 0
    for blob in blobs:
        spans.append((offset, len(blob)))
        offset += len(blob)
    header = marshal.dumps((key, posting_shards, cluster_shards, len(clusters), tuple(spans)))
    return _HEAD.pack(_MAGIC, len(header)) + header + b"".join(blobs)


class _ShardReader:
    __slots__ = ("fd", "base", "posting_shards", "cluster_shards", "count", "spans", "loaded")

    def __init__(self, fd, base, posting_shards, cluster_shards, count, spans):
        self.fd = fd
        self.base = base
        self.posting_shards = posting_shards
        self.cluster_shards = cluster_shards
        self.count = count
        self.spans = spans
        self.loaded = {}

    def shard(self, number):
        shard = self.loaded.get(number)
        if shard is None:
            offset, length = self.spans[number]
            data = os.pread(self.fd, length, self.base + offset)
            if len(data) != length:
                raise EOFError("truncated routing-table cache")
            shard = self.loaded[number] = marshal.loads(data)
        return shard


class _PostingView:
    __slots__ = ("reader", "which")

    def __init__(self, reader, which):
        self.reader = reader
        self.which = which

    def get(self, token, default=()):
        reader = self.reader
        entry = reader.shard(_shard_of(token, reader.posting_shards)).get(token)
        return entry[self.which] if entry is not None else default

    def __iter__(self):
        reader = self.reader
        for number in range(reader.posting_shards):
            for token, entry in reader.shard(number).items():
                if entry[self.which]:
                    yield token


class _ClusterView:
    __slots__ = ("reader",)

    def __init__(self, reader):
        self.reader = reader

    def __getitem__(self, position):
        reader = self.reader
        if not 0 <= position < reader.count:
            raise IndexError(position)
        return reader.shard(reader.posting_shards + position % reader.cluster_shards)[position]

    def __len__(self):
        return self.reader.count


def _open_table(entry, key):
    fd = os.open(entry, os.O_RDONLY)
    try:
        head = os.pread(fd, _HEAD.size, 0)
        magic, header_len = _HEAD.unpack(head)
        if magic != _MAGIC:
            raise ValueError("not a routing-table cache")
        stored_key, posting_shards, cluster_shards, count, spans = marshal.loads(
            os.pread(fd, header_len, _HEAD.size))
        if stored_key != key:
            raise ValueError("stale routing-table cache")
        end = _HEAD.size + header_len + (spans[-1][0] + spans[-1][1] if spans else 0)
        if os.fstat(fd).st_size != end:
            raise ValueError("truncated routing-table cache")
    except BaseException:
        os.close(fd)
        raise
    reader = _ShardReader(fd, _HEAD.size + header_len, posting_shards, cluster_shards, count, spans)
    return {"tag_postings": _PostingView(reader, 0), "member_postings": _PostingView(reader, 1),
            "clusters": _ClusterView(reader)}


def load_routing_table(path, build):
    """A routing table for the cluster file at ``path``: from the sharded cache when it is
    current, else ``build(path)`` (whose result is then cached). Both answer the same lookups."""
    path = os.path.abspath(path)
    key = _key(path, "table")
    if os.environ.get("MEMORY_ROUTER_NO_CACHE"):
        return build(path)
    entry = _entry_path(path, "table")
    try:
        return _open_table(entry, key)
    except (OSError, EOFError, ValueError, TypeError, struct.error):
        pass
    table = build(path)
    try:
        _store(entry, serialise_table(table, key))
    except ValueError:
        pass
    return table
