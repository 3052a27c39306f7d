"""router/routing/uttertable.py and router.routing.weightedtable's ``utterances``: the postings a routing table
gains from the utterances file beside its cluster file, and what it does without one."""

import marshal
import os
import sys

import pytest

from router.store.clusterfile import load_cluster_file, parse_cluster_text
from router.config import utterances_path
from router.providers.provider import build_table
from router.routing.score import build_routing_table
from router.store.utterances import Utterance, render_utterances
from router.routing.uttertable import MAX_DF_SHARE, MIN_DF_FOR_DROP, read_beside
from router.routing.weightedtable import extend_table

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
from stores import generate_store  # noqa: E402

STORE = """\
## Layer 0 - Cluster Router

- c_windows · 2 · tags: windows, bash · label: the Windows dev box
- c_git · 2 · tags: git, rebase · label: git workflow

## Layer 1 - Member Lines

### c_windows
- env_bash_path_conversion - env; git bash rewrites path arguments; prefix with MSYS_NO_PATHCONV=1
- env_windows_defender - env; defender scanning slows bash installs on windows

### c_git
- feedback_rebase_main - feedback; update branches with git rebase main, never merge main
- env_worktree_per_session - env; each session gets its own worktree
"""

UTTERANCES = {
    "env_windows_defender": ("npm install takes forever on my machine", "antivirus eats the cpu during installs"),
    "feedback_rebase_main": ("should i merge or rebase my feature branch",),
    "gone_from_the_store": ("a memory that left",),
}


def utterance_file(path, utterances):
    rows = [Utterance(slug, text, "-", "hand", "-", "2026-12-01T21:00:00Z", 0)
            for slug, texts in utterances.items() for text in texts]
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(render_utterances(rows))
    return path


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "clusters.md"
    path.write_text(STORE, encoding="utf-8")
    return path


def canonical(table):
    """The table's content independent of dict order (a set's order follows the hash seed)."""
    return marshal.dumps(sorted((key, sorted(value.items()) if isinstance(value, dict) else value)
                                for key, value in table.items()))


def test_without_a_file_the_table_is_the_cluster_files_alone(store):
    index = load_cluster_file(store)
    beside = build_table(index)
    none = extend_table(build_routing_table(index), index, utterances=None)
    assert not any(key.startswith("utterance") for key in beside)
    assert canonical(beside) == canonical(none)


def test_utterances_add_their_own_keys_and_change_no_other(store):
    index = load_cluster_file(store)
    plain = extend_table(build_routing_table(index), index, utterances=None)
    utterance_file(utterances_path(store), UTTERANCES)
    rich = build_table(index)
    assert {key for key in rich if key not in plain} == {"utterance_postings", "utterance_meta",
                                                         "utterance_term_postings", "utterance_fuzzy_postings",
                                                         "utterance_line_postings", "exemplar_postings",
                                                         "exemplar_meta", "utterance_fuzzy_filter"}
    assert canonical({k: v for k, v in rich.items() if k in plain}) == canonical(plain)


def test_utterance_words_are_their_members_words_as_learned_terms_are(store):
    # What issue 21's experiment did (utterances fed in as learned terms), kept apart from the
    # table's own postings: the view routing reads is the learned-terms table, entry for entry.
    from router.routing.utterscore import member_view

    index = load_cluster_file(store)
    rich = extend_table(build_routing_table(index), index, utterances=UTTERANCES)
    learned = extend_table(build_routing_table(index), index, learned_terms=UTTERANCES, utterances=None)
    view = member_view(rich)
    assert rich["utterance_term_postings"]
    for word, entry in learned["term_postings"].items():
        got = view["term_postings"].get(word)
        assert got[1:] == entry[1:] and got[0] == pytest.approx(entry[0]), word
    for word, words in learned["fuzzy_postings"].items():
        assert sorted(view["fuzzy_postings"].get(word)) == sorted(words), word
    for token, flat in learned["learned_line_postings"].items():
        assert view["learned_line_postings"].get(token) == flat, token


def test_the_file_beside_the_cluster_file_is_read_when_the_table_is_built(store):
    utterance_file(utterances_path(store), UTTERANCES)
    table = build_table(load_cluster_file(store))
    meta = table["utterance_meta"]
    assert meta["members"] == 2 and meta["rows"] == 3 and meta["problem"] is None
    assert meta["file"] == utterances_path(store)
    assert table["utterance_postings"]["antivirus"][1:] == (0, 1)  # cluster 0, member 1
    assert table["utterance_postings"]["rebas"][1:] == (1, 0)


def test_rows_of_memories_no_longer_in_the_store_are_ignored(store):
    table = extend_table(build_routing_table(load_cluster_file(store)), load_cluster_file(store),
                         utterances=UTTERANCES)
    assert "left" not in table["utterance_postings"]


def test_clusters_with_a_member_without_utterances_are_named(store):
    table = extend_table(build_routing_table(load_cluster_file(store)), load_cluster_file(store),
                         utterances=UTTERANCES)
    assert table["utterance_meta"]["unenriched"] == (0, 1)
    every = dict(UTTERANCES, env_bash_path_conversion=("paths come out wrong",))
    table = extend_table(build_routing_table(load_cluster_file(store)), load_cluster_file(store), utterances=every)
    assert table["utterance_meta"]["unenriched"] == (1,)


@pytest.mark.parametrize("damage", [
    "not the column row\n",
    b"slug\tutterance\tmemory_hash\tengine\tmodel\twritten\nok\t\xff\t-\thand\t-\t2026-12-01T21:00:00Z\n",
])
def test_a_damaged_file_is_logged_once_and_routes_on_the_cluster_file(store, tmp_path, monkeypatch, damage):
    log = tmp_path / "router.log"
    monkeypatch.setenv("MEMORY_ROUTER_LOG", str(log))
    target = utterances_path(store)
    if isinstance(damage, bytes):
        with open(target, "wb") as handle:
            handle.write(damage)
    else:
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(damage)
    index = load_cluster_file(store)
    table = build_table(index)
    lines = log.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1 and "memory-router utterances:" in lines[0] and "routing on the cluster file alone" in lines[0]
    assert table["utterance_meta"]["problem"] and table["utterance_meta"]["members"] == 0
    assert table["utterance_postings"] == {}
    plain = extend_table(build_routing_table(index), index, utterances=None)
    assert canonical({k: v for k, v in table.items() if k in plain}) == canonical(plain)


def test_a_bad_row_is_logged_by_place_and_skipped_the_rest_are_used(store, tmp_path, monkeypatch):
    """Issue 35 item 7: an utterance over 200 characters (or any bad row) no longer switches the file off."""
    log = tmp_path / "router.log"
    monkeypatch.setenv("MEMORY_ROUTER_LOG", str(log))
    good = "env_bash_path_conversion\tpaths come out wrong\t-\thand\t-\t2026-12-01T21:00:00Z\n"
    with open(utterances_path(store), "w", encoding="utf-8") as handle:
        handle.write("slug\tutterance\tmemory_hash\tengine\tmodel\twritten\n"
                     f"env_bash_path_conversion\t{'x' * 201}\t-\thand\t-\t2026-12-01T21:00:00Z\n" + good)
    table = build_table(load_cluster_file(store))
    assert table["utterance_meta"]["problem"] is None and table["utterance_meta"]["rows"] == 1
    [(where, message)] = table["skipped_rows"]
    assert where == f"{utterances_path(store)}:2:26" and "of 201 characters (at most 200)" in message
    logged = log.read_text(encoding="utf-8")
    assert f"{utterances_path(store)}:2:26" in logged and "that row is skipped, the rest are used" in logged


def test_an_oversized_file_is_not_read(store, monkeypatch):
    utterance_file(utterances_path(store), UTTERANCES)
    # The globals of the read_beside this module imported: a test that swaps router.routing modules
    # in sys.modules (test_weighted_gate_mutations) can leave another module object there.
    monkeypatch.setitem(read_beside.__globals__, "MAX_UTTERANCES_FILE_BYTES", 10)
    found, _path, problem = read_beside(str(store))
    assert found == {} and "over the router's limit" in problem


def test_an_index_parsed_from_text_reads_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    utterance_file(tmp_path / "<clusters>.utterances.tsv", UTTERANCES)
    table = build_table(parse_cluster_text(STORE))
    assert "utterance_meta" not in table


def test_a_stem_in_most_members_utterances_is_not_indexed():
    index = parse_cluster_text(generate_store(clusters=10, members_per_cluster=4, vocabulary=200, seed=5), "s.md")
    slugs = [member.slug for cluster in index.clusters for member in cluster.members]
    assert len(slugs) == 40 > MIN_DF_FOR_DROP / MAX_DF_SHARE
    utterances = {slug: (f"the widget broke again for {slug}",) for slug in slugs}
    utterances[slugs[0]] += ("a wobbly gizmo",)
    table = extend_table(build_routing_table(index), index, utterances=utterances)
    assert "widget" not in table["utterance_postings"] and "broke" not in table["utterance_postings"]
    assert table["utterance_postings"]["gizmo"][1:] == (0, 0)
    assert table["utterance_meta"]["dropped_common"] >= 2


# The example store's table on its cluster file alone, digested (keys sorted, JSON), as commit
# b9a8b13 built it before utterances existed. Without utterances the table is today's, to the
# byte: change this only with a change to the table's rules (tokens, stems, idf) made on purpose.
TABLE_BEFORE_UTTERANCES = "a350180cf3b0d6584a1401dc14157b08ebb41f83424e3e6c73de75eb0e4f31bb"


def test_a_table_built_without_utterances_is_the_one_built_before_they_existed(example_cluster_file):
    import hashlib
    import json

    def canon(value):
        return sorted((key, canon(item)) for key, item in value.items()) if isinstance(value, dict) else value

    index = load_cluster_file(example_cluster_file)
    table = extend_table(build_routing_table(index), index, utterances=None)
    # the spelling repair's key filter (issue 37) indexes the same fuzzy postings; the rest is unchanged
    from router.routing.wordmatch import key_filter

    member_filter = table.pop("fuzzy_filter")
    assert member_filter == key_filter(set(table["fuzzy_postings"]))
    assert hashlib.sha256(json.dumps(canon(table)).encode()).hexdigest() == TABLE_BEFORE_UTTERANCES
    shipped = build_table(index)
    assert shipped["utterance_meta"]["members"] == 126
    assert shipped.pop("fuzzy_filter") == member_filter
    assert canonical({k: v for k, v in shipped.items()
                      if not k.startswith(("utterance", "exemplar"))}) == canonical(table)
