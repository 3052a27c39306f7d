"""The MCP server's reload key and lenient loading (harness/mcp/loaded.py, issue 24 items 20, 21)."""

import os
import shutil

import pytest

from harness.mcp.loaded import load_store, read_learned_terms, reload_key
from router.config import bundled_cluster_file, default_settings, learned_path, nearmisses_path, utterances_path
from router.errors import InputError

HEADER_LEARNED = "added\tcluster_id\tslug\tterm\tsource\n"
HEADER_UTTERANCES = "slug\tutterance\tmemory_hash\tengine\tmodel\twritten\n"
HEADER_NEARMISSES = "cluster_id\tnear_miss\tcluster_hash\tengine\tmodel\twritten\n"


@pytest.fixture
def clusters(tmp_path):
    path = tmp_path / "c.md"
    shutil.copy(bundled_cluster_file(), path)
    return str(path)


def touch(path, text):
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.utime(path, ns=(7, 7 + len(text)))   # a different mtime even on a coarse clock


@pytest.mark.parametrize("which, learning, changes", [
    ("cluster", False, True),
    ("learned", True, True),
    ("learned", False, False),      # learning off: the learned file is never read, so it is not watched
    ("utterances", False, True),
    ("utterances", True, True),
    ("nearmisses", False, True),    # the veto reads them: a deleted row must stop vetoing (issue 35 item 6)
])
def test_the_key_changes_with_each_file_the_store_is_built_from(clusters, which, learning, changes):
    before = reload_key(clusters, learning)
    path = {"cluster": clusters, "learned": learned_path(clusters), "utterances": utterances_path(clusters),
            "nearmisses": nearmisses_path(clusters)}[which]
    if which == "cluster":
        touch(path, open(path, encoding="utf-8").read() + "\n")
    else:
        touch(path, {"learned": HEADER_LEARNED, "utterances": HEADER_UTTERANCES,
                     "nearmisses": HEADER_NEARMISSES}[which])
    assert (reload_key(clusters, learning) != before) is changes


@pytest.mark.parametrize("make, message", [
    (lambda p: None, "cannot read the cluster file"),
    (lambda p: os.mkdir(p), "the cluster file is not a regular file"),
])
def test_no_cluster_file_is_an_input_error(tmp_path, make, message):
    path = str(tmp_path / "missing.md")
    make(path)
    with pytest.raises(InputError, match=message):
        reload_key(path, True)


def test_a_damaged_learned_file_is_a_problem_not_an_error(clusters):
    touch(learned_path(clusters), "added\tcluster\n2026-01-01T00:00:00Z\tlayer1_01\n")
    terms, problem = read_learned_terms(clusters)
    assert terms == {} and f"{learned_path(clusters)}:1:1: expected the column row" in problem
    loaded = load_store(clusters, default_settings(), {"learning": True}, learning=True)
    assert loaded["learned"] == {} and len(loaded["problems"]) == 1
    assert loaded["problems"][0][0] == learned_path(clusters)
    assert "routing and search go on without learned terms" in loaded["problems"][0][1]


def test_a_bad_learned_row_is_skipped_and_named_the_rest_are_used(clusters):
    """Issue 35 item 7: one bad row no longer switches the learned file off."""
    touch(learned_path(clusters), HEADER_LEARNED + "yesterday\tlayer1_01\tenv_x\tslow\tmcp\n"
          "2026-01-01T00:00:00Z\tlayer1_01\tenv_msys_path_conversion\tmangled\tmcp\n")
    terms, problem = read_learned_terms(clusters)
    assert problem is None and terms == {"env_msys_path_conversion": frozenset({"mangled"})}
    loaded = load_store(clusters, default_settings(), {"learning": True}, learning=True)
    assert loaded["learned"] == terms
    [(where, message)] = loaded["problems"]
    assert where == f"{learned_path(clusters)}:2:1" and "added 'yesterday'" in message and "skipped" in message


def test_learning_off_never_reads_the_learned_file(clusters):
    touch(learned_path(clusters), "not a learned file\n")
    loaded = load_store(clusters, default_settings(), None, learning=False)
    assert loaded["learned"] == {} and loaded["problems"] == []
