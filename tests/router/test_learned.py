"""Reading the learned-terms file (router/store/learned.py): where it is, and what a provider merges from
it. Writing it, and the format's checks on the way, are tests/router/test_feedback.py's."""

import pytest

from router.store import learned
from router.config import learned_path
from router.store.learned import read_learned
from support.learned_store import index, path  # noqa: F401 - pytest fixtures, used by name

@pytest.mark.parametrize("cluster_file, expected", [
    ("brain/memory-layer1-clusters.md", "brain/memory-layer1-clusters.learned.tsv"),
    ("brain/clusters.tsv", "brain/clusters.learned.tsv"),
    ("brain/clusters.MD", "brain/clusters.learned.tsv"),
    ("brain/clusters", "brain/clusters.learned.tsv"),
    ("brain/v1.2.clusters.txt", "brain/v1.2.clusters.txt.learned.tsv"),
])
def test_learned_file_sits_beside_the_cluster_file(cluster_file, expected):
    assert learned_path(cluster_file) == expected


def test_a_missing_file_reads_as_no_terms(path):
    assert read_learned(path) == []


# --------------------------------------------------------------------------- learned postings


def test_merge_learned_postings_is_its_own_posting_list_by_current_cluster(index):
    from router.routing.score import build_routing_table

    table = build_routing_table(index)
    merged = learned.merge_learned_postings(table, {
        "project_pdf_renderer": frozenset({"invoice", "slow", "pool"}),   # 'pool' is its own word already
        "env_crlf": frozenset({"slow", "invoice"}),                       # 'invoice' is beta's tag, not alpha's
        "gone_memory": frozenset({"ghost"}),
    })
    assert "learned_postings" not in table  # pure
    assert merged["tag_postings"] is table["tag_postings"]
    assert merged["learned_postings"] == {"slow": (0, 1), "invoice": (0,)}


def test_learned_hits_counts_the_prompts_learned_terms_per_cluster(index):
    from router.routing.score import build_routing_table

    table = learned.merge_learned_postings(build_routing_table(index),
                                           {"env_crlf": frozenset({"slow", "stall"}),
                                            "project_pdf_renderer": frozenset({"slow"})})
    assert learned.learned_hits({"slow", "stall", "other"}, table) == {0: ["slow", "stall"], 1: ["slow"]}
    assert learned.learned_hits({"slow"}, build_routing_table(index)) == {}


def test_utc_stamp_is_iso_8601_to_the_second():
    """The one stamp of the learned-terms and utterances files and the install records."""
    from router.store.learned import utc_stamp

    assert utc_stamp(0.999) == "1970-01-01T00:00:00Z"
    assert utc_stamp(86400 + 61) == "1970-01-02T00:01:01Z"


# --- issue 30 items 6 and 7 -------------------------------------------------------------------

LEARNED_HEAD = "\t".join(learned.COLUMNS)


def test_a_separator_in_a_learned_row_is_refused_by_name_and_lines_split_on_newline_only():
    text = f"# one\u2028comment\n{LEARNED_HEAD}\n2026-11-30T19:55:01Z\tenv\tenv_bash_tool\tse\x1ctx\tmcp\n"
    with pytest.raises(learned.LearnedFileError) as caught:
        learned.parse_learned_text(text, "l.tsv")
    column = len("2026-11-30T19:55:01Z\tenv\tenv_bash_tool\tse") + 1
    assert str(caught.value).startswith(f"l.tsv:3:{column}: U+001C FILE SEPARATOR in column 4 (term)")
    rows = learned.parse_learned_text(f"# a\x85b\r\n{LEARNED_HEAD}\r\n2026-11-30T19:55:01Z\tenv\tenv_bash_tool\tsetx\tmcp\r\n")
    assert [(r.term, r.line) for r in rows] == [("setx", 3)]


@pytest.mark.parametrize("added", ["2026-13-45T99:99:99Z", "2025-02-29T00:00:00Z", "2026-11-30T19:55:61Z"])
def test_an_impossible_added_time_is_refused(added):
    with pytest.raises(learned.LearnedFileError) as caught:
        learned.parse_learned_text(f"{LEARNED_HEAD}\n{added}\tenv\tenv_bash_tool\tsetx\tmcp\n", "l.tsv")
    assert str(caught.value).startswith(f"l.tsv:2:1: added {added!r} is not a real time")
    assert "fix: write a real UTC time like" in str(caught.value)
