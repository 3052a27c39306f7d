"""router/cacheformat.py: an entry as bytes and back, on small hand-made tables read through a real
descriptor; every way a file can fail to be a whole table for its key is refused, never answered
(test_cache.py covers the same formats through the cache on a generated store)."""

import os
import struct
import zlib

import pytest

from router import cacheformat
from router.cacheformat import (
    TABLE_HEAD,
    TABLE_MAGIC,
    CorruptCacheError,
    close_table,
    entry_bytes,
    entry_value,
    posting_kinds,
    read_table,
    serialise_table,
)

KEY = ("format", 1, "table", "/store.md")


def small_table(tokens=3, clusters=3, exemplars=0):
    table = {
        "clusters": [(f"c{i}", ("tag",), f"label {i}", ((f"m{i}", "env", f"hook {i}"),)) for i in range(clusters)],
        "tag_postings": {f"t{i}": (i, -1) for i in range(tokens)},
        "member_postings": {f"t{i}": (i, 0) for i in range(0, tokens, 2)},
        "weighted_meta": {"documents": 7},
        "note": "small",
    }
    if exemplars:
        table["exemplar_postings"] = {f"e{i}": (1.0, i, 0.5) for i in range(exemplars)}
    return table


def write(tmp_path, data, name="table.bin"):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def opened(path, key=KEY):
    fd = os.open(path, os.O_RDONLY)
    try:
        return read_table(fd, key)
    except BaseException:
        os.close(fd)
        raise


def test_a_table_reads_back_through_its_views(tmp_path):
    table = opened(write(tmp_path, serialise_table(small_table(), KEY)))
    read_back = table
    try:
        assert read_back["weighted_meta"] == {"documents": 7} and read_back["note"] == "small"
        assert [read_back["tag_postings"].get(f"t{i}") for i in range(3)] == [(0, -1), (1, -1), (2, -1)]
        assert read_back["member_postings"].get("t0") == (0, 0) and read_back["member_postings"].get("t2") == (2, 0)
        assert read_back["member_postings"].get("t1") == ()           # in another kind only
        assert read_back["member_postings"].get("t1", None) == ()     # the token is stored: its entry, empty
        assert read_back["tag_postings"].get("absent") == () and read_back["tag_postings"].get("absent", 5) == 5
        assert len(read_back["clusters"]) == 3
        assert [read_back["clusters"][i] for i in range(3)] == small_table()["clusters"]
        for position in (-1, 3):
            with pytest.raises(IndexError) as outside:
                read_back["clusters"][position]
            assert outside.value.args == (position,)
        assert sorted(read_back) == ["clusters", "member_postings", "note", "tag_postings", "weighted_meta"]
    finally:
        close_table(table)


def test_close_table_closes_its_descriptor(tmp_path):
    table = opened(write(tmp_path, serialise_table(small_table(), KEY)))
    fd = table["clusters"].reader.fd
    close_table(table)
    with pytest.raises(OSError):
        os.fstat(fd)


def test_many_tokens_and_clusters_spread_over_shards_and_read_back(tmp_path):
    big = small_table(tokens=300, clusters=40, exemplars=300)
    data = serialise_table(big, KEY)
    table = opened(write(tmp_path, data))
    try:
        reader = table["clusters"].reader
        assert (reader.posting_shards, reader.cluster_shards) == (300 // 64, 40 // 16)
        assert all(table["tag_postings"].get(f"t{i}") == (i, -1) for i in range(300))
        assert all(table["member_postings"].get(f"t{i}") == ((i, 0) if i % 2 == 0 else ()) for i in range(300))
        assert [table["clusters"][i][0] for i in range(40)] == [f"c{i}" for i in range(40)]
        assert all(table["exemplar_postings"].get(f"e{i}") == (1.0, i, 0.5) for i in range(300))
        assert table["exemplar_postings"].get("absent") == () and table["exemplar_postings"].get("absent", 1) == 1
        # a prompt reads only the shards it touches
        assert len(reader.loaded) == reader.posting_shards + reader.cluster_shards + 1 + 300 // 128
    finally:
        close_table(table)


def test_the_separate_postings_are_not_in_the_scorings_shards(tmp_path):
    table = opened(write(tmp_path, serialise_table(small_table(exemplars=2), KEY)))
    try:
        reader = table["clusters"].reader
        table["tag_postings"].get("t0")
        assert table["exemplar_postings"].get("e1") == (1.0, 1, 0.5)
        scoring = reader.shard(0)
        assert "e1" not in scoring and "t0" in scoring
    finally:
        close_table(table)


def test_posting_kinds_are_the_postings_but_the_separate_ones_in_order():
    assert posting_kinds({"clusters": [], "b_postings": {}, "a_postings": {}, "exemplar_postings": {},
                          "meta": 1}) == ("a_postings", "b_postings")


def header_of(data):
    magic, length, crc = TABLE_HEAD.unpack_from(data)
    return magic, length, crc, data[TABLE_HEAD.size:TABLE_HEAD.size + length]


@pytest.mark.parametrize("damage, error, message", [
    (lambda d: b"NOTATABL" + d[8:], ValueError, "not a routing-table cache"),
    (lambda d: d[:TABLE_HEAD.size + 3], CorruptCacheError, "routing-table cache header runs past the end of the file"),
    (lambda d: d[:TABLE_HEAD.size] + bytes([d[TABLE_HEAD.size] ^ 1]) + d[TABLE_HEAD.size + 1:], CorruptCacheError,
     "routing-table cache header fails its checksum"),
    (lambda d: d[:-1], ValueError, "truncated routing-table cache"),
    (lambda d: d + b"\0", ValueError, "truncated routing-table cache"),
    (lambda d: d[:5], struct.error, None),
])
def test_a_damaged_table_is_refused(tmp_path, damage, error, message):
    data = damage(serialise_table(small_table(), KEY))
    with pytest.raises(error) as refused:
        opened(write(tmp_path, data))
    if message is not None:
        assert str(refused.value) == message


def test_a_table_at_the_exact_size_of_its_header_length_is_read(tmp_path):
    # the header may end exactly at the file's end only when there are no shards; with shards the
    # size check is exact: one byte past the header's claim is refused, the claim itself is read
    data = serialise_table(small_table(), KEY)
    magic, length, crc, header = header_of(data)
    assert len(data) > TABLE_HEAD.size + length
    grown = TABLE_HEAD.pack(magic, len(data) - TABLE_HEAD.size + 1, crc) + data[TABLE_HEAD.size:]
    with pytest.raises(CorruptCacheError, match="runs past the end"):
        opened(write(tmp_path, grown))
    exact = TABLE_HEAD.pack(magic, len(data) - TABLE_HEAD.size, crc) + data[TABLE_HEAD.size:]
    with pytest.raises(CorruptCacheError, match="header fails its checksum"):   # got past the size check
        opened(write(tmp_path, exact, "exact.bin"))


def test_a_table_for_another_key_is_stale(tmp_path):
    path = write(tmp_path, serialise_table(small_table(), KEY))
    with pytest.raises(ValueError) as stale:
        opened(path, key=KEY + ("changed",))
    assert str(stale.value) == "stale routing-table cache"


def test_a_shard_failing_its_checksum_is_refused_when_first_read(tmp_path):
    data = bytearray(serialise_table(small_table(), KEY))
    data[-1] ^= 0xFF       # the last cluster shard
    table = opened(write(tmp_path, bytes(data)))
    try:
        assert table["tag_postings"].get("t0") == (0, -1)          # the postings shard is whole
        with pytest.raises(CorruptCacheError, match="shard 1 fails its checksum"):
            table["clusters"][0]
    finally:
        close_table(table)


def test_a_shard_read_short_is_refused(tmp_path, monkeypatch):
    table = opened(write(tmp_path, serialise_table(small_table(), KEY)))
    real = cacheformat._pread
    monkeypatch.setattr(cacheformat, "_pread", lambda fd, length, offset: real(fd, length, offset)[:-1])
    try:
        with pytest.raises(CorruptCacheError, match="fails its checksum"):
            table["tag_postings"].get("t0")
    finally:
        close_table(table)


def test_reads_without_pread_seek_and_read(tmp_path, monkeypatch):
    monkeypatch.setattr(cacheformat, "_HAS_PREAD", False)
    table = opened(write(tmp_path, serialise_table(small_table(exemplars=3), KEY)))
    try:
        assert table["tag_postings"].get("t2") == (2, -1) and table["clusters"][2][0] == "c2"
        assert table["exemplar_postings"].get("e2") == (1.0, 2, 0.5)
    finally:
        close_table(table)


def test_a_small_entry_round_trips_and_a_damaged_one_is_refused():
    data = entry_bytes(("k", 1), {"value": [1, 2]})
    assert entry_value(data) == (("k", 1), {"value": [1, 2]})
    with pytest.raises(CorruptCacheError) as short:
        entry_value(data[:11])
    assert str(short.value) == "short cache entry"
    assert entry_value(data[:12] + data[12:]) == (("k", 1), {"value": [1, 2]})
    with pytest.raises(CorruptCacheError) as bad_magic:
        entry_value(b"MRENTRYX" + data[8:])
    assert str(bad_magic.value) == "cache entry fails its checksum"
    with pytest.raises(CorruptCacheError, match="fails its checksum"):
        entry_value(data[:-1] + bytes([data[-1] ^ 1]))
    assert data[:8] == b"MRENTRY1" and struct.unpack_from("<I", data, 8)[0] == zlib.crc32(data[12:])
    with pytest.raises(ValueError):
        entry_bytes("k", object())


def test_a_table_starts_with_its_magic_and_header_checksum():
    data = serialise_table(small_table(), KEY)
    magic, length, crc, header = header_of(data)
    assert magic == TABLE_MAGIC and crc == zlib.crc32(header) and len(header) == length


def test_the_separate_view_answers_lookups_only(tmp_path):
    """``get`` only, as its docstring says: it had an ``__iter__`` copied from another view that read
    an attribute it does not have (no caller iterated it)."""
    table = opened(write(tmp_path, serialise_table(small_table(exemplars=2), KEY)))
    try:
        with pytest.raises(TypeError):
            iter(table["exemplar_postings"])
    finally:
        close_table(table)


def test_a_shard_is_read_once_however_often_it_is_asked(tmp_path, monkeypatch):
    table = opened(write(tmp_path, serialise_table(small_table(), KEY)))
    reads = []
    real = cacheformat._pread
    monkeypatch.setattr(cacheformat, "_pread", lambda fd, length, offset: reads.append(offset) or real(fd, length, offset))
    try:
        for _ in range(3):
            assert table["tag_postings"].get("t0") == (0, -1) and table["clusters"][1][0] == "c1"
        assert len(reads) == 2                       # one postings shard, one cluster shard
    finally:
        close_table(table)


def test_a_token_that_is_not_valid_unicode_has_a_shard():
    token = "caf\udce9"          # surrogateescape leaves undecodable bytes as lone surrogates
    assert 0 <= cacheformat._shard_of(token, 7) < 7
    assert cacheformat._shard_of(token, 7) == zlib.crc32(b"caf\xe9") % 7


def test_the_header_holds_the_small_metadata_only():
    import marshal

    _magic, _length, _crc, header = header_of(serialise_table(small_table(exemplars=2), KEY))
    key, posting_shards, cluster_shards, count, spans, kinds, meta, groups = marshal.loads(header)
    assert key == KEY and kinds == ("member_postings", "tag_postings") and count == 3
    assert meta == {"weighted_meta": {"documents": 7}, "note": "small"}     # no postings, no clusters
    assert groups == (("exemplar_postings", len(spans) - 1, 1),)            # two tokens: one shard
