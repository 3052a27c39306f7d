"""router/store/nearmisses.py: the near-misses file, read back exactly or refused by line and column."""

import pytest

from router.config import nearmisses_path
from router.store.nearmisses import (
    COLUMNS,
    NearMiss,
    NearMissesFileError,
    cluster_text_hash,
    nearmisses_by_cluster,
    parse_nearmisses_text,
    read_generic_negatives,
    read_nearmisses,
    render_nearmisses,
)

ROWS = [
    NearMiss("layer1_deploy", "add a --dry-run flag to the deploy script", "0123456789abcdef", "claude", "haiku",
             "2026-12-01T21:00:00Z", 0),
    NearMiss("layer1_deploy", "what is a blue green deploy", "0123456789abcdef", "claude", "haiku",
             "2026-12-01T21:00:00Z", 0),
    NearMiss("layer1_db", "explain mvcc in plain words", "-", "hand", "-", "2026-12-02T08:00:00Z", 0),
]


def test_render_and_parse_round_trip():
    text = render_nearmisses(ROWS)
    back = parse_nearmisses_text(text, "x.nearmisses.tsv")
    assert [row._replace(line=0) for row in back] == ROWS
    assert nearmisses_by_cluster(back) == {"layer1_deploy": (ROWS[0].text, ROWS[1].text),
                                           "layer1_db": (ROWS[2].text,)}


def test_the_file_sits_beside_the_cluster_file(tmp_path):
    assert nearmisses_path(tmp_path / "brain" / "x.md") == str(tmp_path / "brain" / "x.nearmisses.tsv")
    assert read_nearmisses(str(tmp_path / "missing.tsv")) == []


@pytest.mark.parametrize("row, message, column", [
    ("Layer1 Deploy\tx\t-\thand\t-\t2026-12-01T21:00:00Z", "invalid cluster id", 1),
    ("layer1_deploy\t\t-\thand\t-\t2026-12-01T21:00:00Z", "empty near-miss", 15),
    ("layer1_deploy\tx\tnothex\thand\t-\t2026-12-01T21:00:00Z", "cluster_hash 'nothex'", 17),
    ("layer1_deploy\tx\t-\thand\t-\tyesterday", "written 'yesterday'", 26),
    ("layer1_deploy\tx\t-\thand", "expected 6 tab-separated fields, got 4", 1),
])
def test_a_bad_row_is_refused_at_its_line_and_column(row, message, column):
    text = "\t".join(COLUMNS) + "\n" + row + "\n"
    with pytest.raises(NearMissesFileError) as err:
        parse_nearmisses_text(text, "x.nearmisses.tsv")
    assert message in str(err.value)
    assert err.value.line == 2 and err.value.column == column


def test_the_cluster_hash_changes_with_any_member():
    base = ["a:0000000000000001", "b:0000000000000002"]
    assert cluster_text_hash(base) == cluster_text_hash(list(base))
    assert cluster_text_hash(base) != cluster_text_hash(base[:1])
    assert cluster_text_hash(base) != cluster_text_hash(["a:0000000000000001", "b:0000000000000003"])


def test_the_shipped_generic_negatives_are_everyday_requests():
    generics = read_generic_negatives()
    assert 150 <= len(generics) <= 300
    assert all(text and "\t" not in text and not text.startswith("#") for text in generics)
    assert len({text.casefold() for text in generics}) == len(generics)
