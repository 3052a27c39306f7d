"""Writing the learned-terms file (router/store/feedback.py): the feedback rules, the cap, the locked atomic rewrite."""

import os
import subprocess
import sys
import threading

import pytest

from router.store import feedback, learned
from router.errors import InputError
from router.store.feedback import add_feedback
from router.store.learned import LearnedFileError, read_learned, terms_by_slug
from support.learned_store import index, path, terms  # noqa: F401 - pytest fixtures, used by name



def test_feedback_writes_a_reviewable_file_with_its_header(index, path):
    report = add_feedback(path, "the nightly export of the pdf renderer is slow on Windows", "project_pdf_renderer",
                          True, index=index, cap=24, now=1_700_000_000)
    text = open(path, encoding="utf-8").read()
    assert text.startswith("# memory-router learned terms (see docs/learning.md)")
    assert "added\tcluster_id\tslug\tterm\tsource\n" in text
    assert "2023-11-14T22:13:20Z\tbeta\tproject_pdf_renderer\tnightly\tmcp\n" in text
    assert report["added"] == ["nightly", "export", "slow"] and report["written"] is True
    assert report["skipped"] == {"hand_tag": ["window"], "own_word": ["pdf", "renderer"], "over_limit": []}
    assert terms_by_slug(read_learned(path)) == {"project_pdf_renderer": frozenset({"nightly", "export", "slow"})}


def test_hand_tags_are_never_learned_nor_the_memorys_own_words(index, path):
    report = add_feedback(path, "powershell windows setx registry quirk", "env_crlf", True, index=index, cap=24, now=0)
    # windows and powershell are alpha's tags; 'setx' and 'registry' are another member's words (kept);
    # 'quirk' is new.
    assert report["skipped"]["hand_tag"] == ["powershell", "window"]
    assert report["added"] == ["setx", "registry", "quirk"]
    own = add_feedback(path, "git autocrlf box stall", "env_crlf", True, index=index, cap=24, now=1)
    assert own["skipped"]["own_word"] == ["git", "autocrlf", "box"] and own["added"] == ["stall"]
    # a tag of *another* cluster is not learned either: hand tags win wherever they are
    other = add_feedback(path, "invoices", "env_crlf", True, index=index, cap=24, now=2)
    assert other["skipped"]["hand_tag"] == ["invoice"] and other["added"] == []


def test_the_cap_holds_per_cluster_and_the_oldest_leave_first(index, path):
    add_feedback(path, "one two three", "env_setx_path", True, index=index, cap=4, now=10)
    add_feedback(path, "freeze stall", "project_pdf_renderer", True, index=index, cap=4, now=11)  # other cluster
    report = add_feedback(path, "four five", "env_crlf", True, index=index, cap=4, now=20)
    assert [e["term"] for e in report["evicted"]] == ["one"]
    assert terms(path) == ["two", "three", "freeze", "stall", "four", "five"]
    assert report["terms_in_cluster"] == 4


def test_learning_a_term_again_moves_it_to_the_end(index, path):
    add_feedback(path, "one two three", "env_setx_path", True, index=index, cap=3, now=10)
    again = add_feedback(path, "one", "env_setx_path", True, index=index, cap=3, now=20)
    assert again["refreshed"] == ["one"] and again["added"] == [] and again["evicted"] == []
    later = add_feedback(path, "four", "env_setx_path", True, index=index, cap=3, now=30)
    assert [e["term"] for e in later["evicted"]] == ["two"]
    assert terms(path) == ["three", "one", "four"]


def test_one_feedback_brings_at_most_the_cap(index, path):
    report = add_feedback(path, "aa bb cc dd ee", "env_setx_path", True, index=index, cap=2, now=0)
    assert report["added"] == ["aa", "bb"] and report["skipped"]["over_limit"] == ["cc", "dd", "ee"]
    assert report["evicted"] == []


def test_one_feedback_brings_at_most_max_terms_per_feedback(index, path):
    words = " ".join(f"word{chr(97 + i)}" for i in range(learned.MAX_TERMS_PER_FEEDBACK + 3))
    report = add_feedback(path, words, "env_setx_path", True, index=index, cap=100, now=0)
    assert len(report["added"]) == learned.MAX_TERMS_PER_FEEDBACK and len(report["skipped"]["over_limit"]) == 3


def test_negative_feedback_removes_only_that_memorys_terms_in_the_prompt(index, path):
    add_feedback(path, "quirk stall", "env_setx_path", True, index=index, cap=24, now=0)
    add_feedback(path, "quirk", "env_crlf", True, index=index, cap=24, now=1)
    report = add_feedback(path, "a quirk nobody wanted", "env_setx_path", False, index=index, cap=24, now=2)
    assert report["removed"] == ["quirk"] and report["added"] == []
    assert terms_by_slug(read_learned(path)) == {"env_setx_path": frozenset({"stall"}),
                                                 "env_crlf": frozenset({"quirk"})}


def test_feedback_that_changes_nothing_writes_nothing(index, path):
    report = add_feedback(path, "powershell", "env_setx_path", True, index=index, cap=24, now=0)
    assert report["written"] is False and not os.path.exists(path)
    report = add_feedback(path, "anything", "env_setx_path", False, index=index, cap=24, now=0)
    assert report["written"] is False and not os.path.exists(path)


@pytest.mark.parametrize("slug, cap, message", [
    ("no_such_memory", 24, "is not in the store"),
    ("env_setx_path", 0, "cap must be a positive integer"),
    ("env_setx_path", True, "cap must be a positive integer"),
])
def test_bad_feedback_is_refused_and_nothing_is_written(index, path, slug, cap, message):
    with pytest.raises(InputError, match=message):
        add_feedback(path, "quirk", slug, True, index=index, cap=cap, now=0)
    assert not os.path.exists(path)


def test_rows_of_memories_no_longer_in_the_store_are_kept_for_review(index, path):
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(learned.render_learned([learned.LearnedTerm("2026-01-01T00:00:00Z", "gone", "old_memory",
                                                                 "relic", "hand", None)]))
    add_feedback(path, "quirk", "env_setx_path", True, index=index, cap=1, now=0)
    assert [(r.slug, r.term) for r in read_learned(path)] == [("old_memory", "relic"), ("env_setx_path", "quirk")]


def test_a_memory_that_moved_cluster_counts_against_its_new_cluster(index, path):
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(learned.render_learned([learned.LearnedTerm("2026-01-01T00:00:00Z", "beta", "env_crlf",
                                                                 "relic", "mcp", None)]))
    report = add_feedback(path, "quirk", "env_setx_path", True, index=index, cap=1, now=0)
    assert report["evicted"] == [{"slug": "env_crlf", "term": "relic", "added": "2026-01-01T00:00:00Z"}]
    assert [r.cluster_id for r in read_learned(path)] == ["alpha"]


@pytest.mark.parametrize("body, line, message", [
    ("added\tcluster_id\tslug\tterm\n", 7, "expected the column row"),
    ("added\tcluster_id\tslug\tterm\tsource\nyesterday\talpha\tenv_crlf\tquirk\tmcp\n", 8, "is not a UTC time"),
    ("added\tcluster_id\tslug\tterm\tsource\n2026-01-01T00:00:00Z\talpha\tenv_crlf\tquirk\n", 8, "expected 5"),
    ("added\tcluster_id\tslug\tterm\tsource\n2026-01-01T00:00:00Z\talpha\tEnv-Crlf\tquirk\tmcp\n", 8, "invalid slug"),
    ("added\tcluster_id\tslug\tterm\tsource\n2026-01-01T00:00:00Z\talpha\tenv_crlf\ttwo words\tmcp\n", 8,
     "not one routing word"),
    ("added\tcluster_id\tslug\tterm\tsource\n2026-01-01T00:00:00Z\talpha\tenv_crlf\tthe\tmcp\n", 8,
     "not one routing word"),
    ("added\tcluster_id\tslug\tterm\tsource\n2026-01-01T00:00:00Z\talpha\tenv_crlf\tquirk\trobot\n", 8,
     "unknown source"),
])
def test_a_damaged_file_is_refused_by_line_and_never_rewritten(index, path, body, line, message):
    data = (learned.HEADER_COMMENT + body).encode("utf-8")
    with open(path, "wb") as handle:
        handle.write(data)
    with pytest.raises(LearnedFileError, match=message) as caught:
        read_learned(path)
    assert f"{path}:{line}:" in str(caught.value) and "(fix: " in str(caught.value)
    with pytest.raises(LearnedFileError):
        add_feedback(path, "quirk", "env_setx_path", True, index=index, cap=24, now=0)
    assert open(path, "rb").read() == data


def test_hand_edits_in_the_documented_format_read_back(path):
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("# my notes\n\nadded\tcluster_id\tslug\tterm\tsource\n"
                     "2026-01-01T00:00:00Z\talpha\tenv_crlf\tquirk\thand\n\n")
    (row,) = read_learned(path)
    assert (row.slug, row.term, row.source, row.line) == ("env_crlf", "quirk", "hand", 4)


def test_a_failed_replace_leaves_the_old_file_and_no_temp_file(index, path, monkeypatch):
    add_feedback(path, "quirk", "env_setx_path", True, index=index, cap=24, now=0)
    before = open(path, "rb").read()

    def fail(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(feedback.os, "replace", fail)
    with pytest.raises(LearnedFileError, match="No space left on device; it is unchanged"):
        add_feedback(path, "stall", "env_setx_path", True, index=index, cap=24, now=1)
    assert open(path, "rb").read() == before
    assert os.listdir(os.path.dirname(path)) == [os.path.basename(path)]


def test_writes_go_through_a_symlink_and_keep_it(index, tmp_path):
    real = tmp_path / "dotfiles" / "learned.tsv"
    real.parent.mkdir()
    link = tmp_path / "clusters.learned.tsv"
    os.symlink(real, link)
    add_feedback(str(link), "quirk", "env_setx_path", True, index=index, cap=24, now=0)
    assert os.path.islink(link) and terms(str(real)) == ["quirk"]


def test_concurrent_writers_keep_every_row(index, path):
    words = [f"word{chr(97 + i)}" for i in range(12)]
    errors = []

    def write(word):
        try:
            add_feedback(path, word, "env_setx_path", True, index=index, cap=100, now=0)
        except Exception as err:  # surfaced below
            errors.append(err)

    threads = [threading.Thread(target=write, args=(w,)) for w in words]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(terms(path)) == sorted(words)


def test_the_module_imports_only_the_standard_library_and_router():
    code = ("import sys, router.store.learned, router.store.feedback; bad = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('harness', 'canaries', 'transcripts', 'yaml', 'rich', 'dataclasses', 'argparse', 'tomllib')); "
            "print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --------------------------------------------------------------------------- many feedbacks, one write


def test_add_feedbacks_applies_in_order_and_writes_once(index, path, monkeypatch):
    writes = []
    real = feedback._atomic_replace
    monkeypatch.setattr(feedback, "_atomic_replace", lambda p, data: (writes.append(p), real(p, data)))
    result = feedback.add_feedbacks(path, [("nightly export slow", "project_pdf_renderer", True, 0),
                                          ("quirk stall", "env_crlf", True, 60)], index=index, cap=24)
    assert len(writes) == 1 and result["written"] is True and result["before"] is None
    assert [(r.slug, r.term, r.source) for r in read_learned(path)] == [
        ("project_pdf_renderer", "nightly", "learn"), ("project_pdf_renderer", "export", "learn"),
        ("project_pdf_renderer", "slow", "learn"), ("env_crlf", "quirk", "learn"), ("env_crlf", "stall", "learn")]
    assert [r["added"] for r in result["reports"]] == [["nightly", "export", "slow"], ["quirk", "stall"]]
    assert result["after"] == open(path, encoding="utf-8").read()


def test_add_feedbacks_dry_run_writes_nothing_and_gives_both_texts(index, path):
    add_feedback(path, "nightly", "project_pdf_renderer", True, index=index, cap=24, now=0)
    before = open(path, encoding="utf-8").read()
    result = feedback.add_feedbacks(path, [("export slow", "project_pdf_renderer", True, 0)], index=index, cap=24,
                                   dry_run=True)
    assert open(path, encoding="utf-8").read() == before == result["before"]
    assert result["written"] is False and result["after"].endswith("project_pdf_renderer\tslow\tlearn\n")


def test_add_feedbacks_that_leave_the_text_unchanged_write_nothing(index, path):
    feedbacks = [("nightly export", "project_pdf_renderer", True, 0)]
    feedback.add_feedbacks(path, feedbacks, index=index, cap=24)
    mtime = os.stat(path).st_mtime_ns
    again = feedback.add_feedbacks(path, feedbacks, index=index, cap=24)
    assert again["written"] is False and again["reports"][0]["refreshed"] == ["nightly", "export"]
    assert os.stat(path).st_mtime_ns == mtime


def test_add_feedbacks_keeps_the_cap(index, path):
    result = feedback.add_feedbacks(path, [("one two three", "env_setx_path", True, 0),
                                          ("four five", "env_crlf", True, 1)], index=index, cap=3)
    assert terms(path) == ["three", "four", "five"]
    assert [e["term"] for e in result["reports"][1]["evicted"]] == ["one", "two"]


def test_add_feedbacks_refuses_a_damaged_file_and_leaves_it(index, path):
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("added\tcluster_id\tslug\tterm\tsource\nyesterday\tbeta\tproject_pdf_renderer\tslow\tmcp\n")
    with pytest.raises(LearnedFileError, match=r":2:1: added 'yesterday'"):
        feedback.add_feedbacks(path, [("export", "project_pdf_renderer", True, 0)], index=index, cap=24)
    assert "yesterday" in open(path, encoding="utf-8").read()
