"""What the hook's cache entries are as bytes, apart from where they are kept (``router.cache``).

Two formats, each carrying a CRC-32 of exactly the bytes it is read as, checked before
``marshal.loads`` sees them (a damaged entry raises ``CorruptCacheError``, never answers):

- a small entry: magic, CRC-32, then ``marshal.dumps((key, value))`` (``entry_bytes``,
  ``entry_value``);
- a routing table, sharded: magic, header length, header CRC-32, the header (the key, the
  shard counts, every shard's span and CRC-32, the table's small metadata), then the shards.
  Postings are split into shards by ``crc32(token)`` and clusters by position, so a prompt
  reads only the shards its own ~10 tokens and its one or two clusters touch (``read_table``
  answers lookups through views that ``os.pread`` a shard the first time it is needed).

Standard library only; it opens no file (the caller hands it a descriptor).
"""

import marshal
import os
import struct
import zlib

# Joins every cache key: a change to either format below must bump it.
CACHE_FORMAT = 8   # 8: near-miss codes of router.routing.veto hold the row number in 32 bits
TABLE_MAGIC = b"MRTABLE5"
# magic, header length, CRC-32 of the header.
TABLE_HEAD = struct.Struct("<8sQI")
_ENTRY_MAGIC = b"MRENTRY1"
# magic, CRC-32 of the marshal body that follows.
_ENTRY_HEAD = struct.Struct("<8sI")
TOKENS_PER_SHARD = 64
SEPARATE_TOKENS_PER_SHARD = 128
CLUSTERS_PER_SHARD = 16


class CorruptCacheError(ValueError):
    """A cache entry whose bytes fail their checksum: rebuild it, never use it."""


def entry_value(data):
    """``(key, value)`` of a small entry's bytes, after its magic and CRC-32 have been checked."""
    if len(data) < _ENTRY_HEAD.size:
        raise CorruptCacheError("short cache entry")
    magic, crc = _ENTRY_HEAD.unpack_from(data)
    body = data[_ENTRY_HEAD.size:]
    if magic != _ENTRY_MAGIC or zlib.crc32(body) != crc:
        raise CorruptCacheError("cache entry fails its checksum")
    return marshal.loads(body)


def entry_bytes(key, value):
    """A small entry's bytes (``ValueError`` when ``value`` is not marshal-safe)."""
    body = marshal.dumps((key, value))
    return _ENTRY_HEAD.pack(_ENTRY_MAGIC, zlib.crc32(body)) + body


def _shard_of(token, shards):
    return zlib.crc32(token.encode("utf-8", "surrogateescape")) % shards


# Postings sharded on their own: the veto's exemplars (every stem and adjacent pair of a few
# thousand short texts) are read only for a prompt that routes, so the scoring's shards must not
# carry them (a shard is read whole).
SEPARATE_KINDS = ("exemplar_postings",)


def posting_kinds(table):
    """The token-keyed postings of a table (``tag_postings``, ``member_postings``, and what a
    provider adds) sharded together, in a fixed order; every other key but ``clusters`` and the
    ``SEPARATE_KINDS`` is small metadata."""
    return tuple(sorted(name for name in table if name.endswith("_postings") and name not in SEPARATE_KINDS))


def serialise_table(table, key):
    """The sharded cache bytes for a routing table (see ``router.providers.provider.build_table``)."""
    kinds = posting_kinds(table)
    separate = tuple(name for name in SEPARATE_KINDS if name in table)
    meta = {name: value for name, value in table.items()
            if name != "clusters" and name not in kinds and name not in separate}
    tokens = set()
    for name in kinds:
        tokens.update(table[name])
    posting_shards = max(1, len(tokens) // TOKENS_PER_SHARD)
    clusters = table["clusters"]
    cluster_shards = max(1, len(clusters) // CLUSTERS_PER_SHARD)
    postings = [{} for _ in range(posting_shards)]
    for token in tokens:
        postings[_shard_of(token, posting_shards)][token] = tuple(table[name].get(token, ()) for name in kinds)
    grouped = [{} for _ in range(cluster_shards)]
    for position, cluster in enumerate(clusters):
        grouped[position % cluster_shards][position] = cluster
    blobs = [marshal.dumps(shard) for shard in postings] + [marshal.dumps(shard) for shard in grouped]
    spans = []
    offset = 0
    for blob in blobs:
        spans.append((offset, len(blob), zlib.crc32(blob)))
        offset += len(blob)
    # A separately sharded kind: its shards, then the index of their spans (one more span of the
    # header's), so the header a prompt reads stays the size of the scoring's own shards.
    groups = []
    for name in separate:
        own = table[name]
        count = max(1, len(own) // SEPARATE_TOKENS_PER_SHARD)
        shards = [{} for _ in range(count)]
        for token, entry in own.items():
            shards[_shard_of(token, count)][token] = entry
        own_spans = []
        for shard in shards:
            blob = marshal.dumps(shard)
            own_spans.append((offset, len(blob), zlib.crc32(blob)))
            blobs.append(blob)
            offset += len(blob)
        index_blob = marshal.dumps(tuple(own_spans))
        groups.append((name, len(spans), count))
        spans.append((offset, len(index_blob), zlib.crc32(index_blob)))
        blobs.append(index_blob)
        offset += len(index_blob)
    header = marshal.dumps((key, posting_shards, cluster_shards, len(clusters), tuple(spans), kinds, meta,
                            tuple(groups)))
    return TABLE_HEAD.pack(TABLE_MAGIC, len(header), zlib.crc32(header)) + header + b"".join(blobs)


def _pread(fd, length, offset):
    if _HAS_PREAD:
        return os.pread(fd, length, offset)
    os.lseek(fd, offset, os.SEEK_SET)  # Windows has no os.pread; the descriptor is ours alone
    return os.read(fd, length)


_HAS_PREAD = hasattr(os, "pread")


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

    def shard(self, number, spans=None, key=None):
        """Shard ``number`` of the header's spans (or of ``spans``, a group's, cached as ``key``)."""
        key = number if key is None else key
        shard = self.loaded.get(key)
        if shard is None:
            offset, length, crc = (spans or self.spans)[number]
            data = _pread(self.fd, length, self.base + offset)
            if len(data) != length or zlib.crc32(data) != crc:
                raise CorruptCacheError(f"routing-table cache shard {key} fails its checksum")
            shard = self.loaded[key] = marshal.loads(data)
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


class _SeparateView:
    """A postings kind sharded on its own (``SEPARATE_KINDS``): ``get`` only. Its spans are read
    from their index span on the first lookup."""

    __slots__ = ("reader", "index", "count")

    def __init__(self, reader, index, count):
        self.reader, self.index, self.count = reader, index, count

    def get(self, token, default=()):
        reader = self.reader
        spans = reader.shard(self.index)
        number = _shard_of(token, self.count)
        entry = reader.shard(number, spans, key=(self.index, number)).get(token)
        return entry if entry is not None else default


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


def read_table(fd, key):
    """The routing table stored at the open descriptor ``fd`` for ``key``, as views that read its
    shards on demand (the descriptor stays open with them; ``close_table``). Raises ``ValueError``
    (or ``CorruptCacheError``, ``EOFError``, ``struct.error``) when it is not a whole table for
    ``key``; the caller then closes ``fd``."""
    size = os.fstat(fd).st_size
    head = _pread(fd, TABLE_HEAD.size, 0)
    magic, header_len, header_crc = TABLE_HEAD.unpack(head)
    if magic != TABLE_MAGIC:
        raise ValueError("not a routing-table cache")
    if header_len > size - TABLE_HEAD.size:
        raise CorruptCacheError("routing-table cache header runs past the end of the file")
    header = _pread(fd, header_len, TABLE_HEAD.size)
    if zlib.crc32(header) != header_crc:
        raise CorruptCacheError("routing-table cache header fails its checksum")
    stored_key, posting_shards, cluster_shards, count, spans, kinds, meta, groups = marshal.loads(header)
    if stored_key != key:
        raise ValueError("stale routing-table cache")
    end = TABLE_HEAD.size + header_len + (spans[-1][0] + spans[-1][1] if spans else 0)
    if size != end:
        raise ValueError("truncated routing-table cache")
    reader = _ShardReader(fd, TABLE_HEAD.size + header_len, posting_shards, cluster_shards, count, spans)
    table = dict(meta)
    for which, name in enumerate(kinds):
        table[name] = _PostingView(reader, which)
    table["clusters"] = _ClusterView(reader)
    for name, index, shards in groups:
        table[name] = _SeparateView(reader, index, shards)
    return table


def close_table(table):
    """Close the descriptor a table from ``read_table`` reads its shards through."""
    os.close(table["clusters"].reader.fd)
