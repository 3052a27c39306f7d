"""router.gate.citation_text: which decision ids, memory slugs and owner-ruling dates a text cites,
and how sure the gate may be of each (the code, URL, prose and name rules, folding). Pure
functions; the mutation run uses these tests."""

import pytest

from router.gate import citation_text as tx

PATTERN = r"D-\d+"


def ids_of(text, pattern=PATTERN):
    """``[(id, as written, how)]``: how = "upper", "prose" or the reason an upper-case id is doubtful."""
    found = tx.scan_ids(tx.fold(text), pattern)
    return [(entry_id, seen["as"], "upper" if seen["upper"] else "prose" if seen["prose"] else seen["reason"])
            for entry_id, seen in found.items()]


# --- decision ids -------------------------------------------------------------------------------

@pytest.mark.parametrize("text, ids", [
    ("Per D-030 the window is 14 days.", [("D-030", "D-030", "upper")]),
    ("per d-030", [("D-030", "d-030", "prose")]),
    ("D-030's scope", [("D-030", "D-030", "upper")]),
    ("d-030's scope", [("D-030", "d-030", "prose")]),
    ("d-030\u2019s scope", [("D-030", "d-030", "prose")]),
    ("(D-030)", [("D-030", "D-030", "upper")]),
    ("(d-030), then", [("D-030", "d-030", "prose")]),
    ("\"d-030\".", [("D-030", "d-030", "prose")]),
    ("*d-030*", [("D-030", "d-030", "prose")]),
    ("D-030.", [("D-030", "D-030", "upper")]),
    ("D-030, D-031; D-030", [("D-030", "D-030", "upper"), ("D-031", "D-031", "upper")]),
    ("see D-031 and d-030", [("D-031", "D-031", "upper"), ("D-030", "d-030", "prose")]),
    ("d-030 then D-030", [("D-030", "d-030", "upper")]),
    ("D-1234", [("D-1234", "D-1234", "upper")]),
    ("_D-030_ and __D-031__", [("D-030", "D-030", "upper"), ("D-031", "D-031", "upper")]),
    ("abc-D-030-x", []),
    ("abc-D-030", []),
    ("D-030-x", []),
    ("D-030s", []),
    ("ND-030", []),
    ("D-030x", []),
    ("_D-030", []),
    ("D-030_", []),
    ("file_D-030", []),
    ("__D-030_", []),
    ("D-", []),
    ("D030", []),
    ("", []),
])
def test_scan_ids_finds_ids_standing_alone(text, ids):
    assert ids_of(text) == ids


@pytest.mark.parametrize("text", ["arr[d-1]", "$((d-1))", "S^{d-1}", "x=d-1", "f(d-1)", "d-1x", "d-1]", "f((d-1))",
                                  "a d-1ab", "d-1)]", "x d-1.).)", "`per d-030`", "/d-030", "d-030/x"])
def test_lower_case_outside_prose_is_no_citation(text):
    assert ids_of(text) == []


@pytest.mark.parametrize("text", ["d-1", " d-1 ", "(d-1)", "\"'(d-1", "d-1.", "d-1)).", "d-1's", "\td-1\n"])
def test_lower_case_in_prose_is_a_citation(text):
    assert ids_of(text) == [("D-1", "d-1", "prose")]


@pytest.mark.parametrize("text, how", [
    ("`D-030`", "inside code"),
    ("run ``x D-030 y`` now", "inside code"),
    ("```\nD-030\n```", "inside code"),
    ("~~~\n~~~\nD-030", "upper"),
    ("```\n~~~\nD-030\n```\nD-031", "inside code"),
    ("~~~\nD-030\n~~~", "inside code"),
    ("`D-030` and D-030", "upper"),
    ("`a` D-030 `b`", "upper"),
    ("``a` D-030", "upper"),
    ("I shoot with a Nikon D-030.", "after the name 'Nikon'"),
    ("cameras, NIKON D-030", "after the name 'NIKON'"),
    ("the Form\u00a0D-030 now", "after the name 'Form'"),
    ("a Nikon _D-030_", "after the name 'Nikon'"),
    ("a Nikon\tD-030", "upper"),
    ("a Nikon D-030", "after the name 'Nikon'"),
    ("Nikon, a Nikon D-030", "after the name 'Nikon'"),
    ("x.  Nikon D-030", "upper"),
    ("x:\tNikon D-030", "upper"),
    ("x| Nikon D-030", "upper"),
    ("x \u2014 Nikon D-030", "upper"),
    ("(Nikon D-030)", "upper"),
    ("a MyNikon D-030", "after the name 'MyNikon'"),
    ("a myNikon D-030", "upper"),
    ("Nikon D-030 is a camera.", "upper"),
    ("A camera. Nikon D-030 is one.", "upper"),
    ("x\nNikon D-030", "upper"),
    ("- Nikon D-030", "upper"),
    ("as Decision D-030 says", "upper"),
    ("as Per D-030", "upper"),
    ("x-Nikon D-030", "upper"),
    ("3Nikon D-030", "upper"),
    ("a nikon D-030", "upper"),
    ("a Nikon  D-030", "upper"),
    ("a Nikon, D-030", "upper"),
])
def test_upper_case_in_code_or_after_a_name_is_doubtful(text, how):
    assert [found[2] for found in ids_of(text) if found[0] == "D-030"] == [how]


@pytest.mark.parametrize("text", ["/docs/D-042/setup", "see /docs/D-042/setup", "./D-042", "../D-042", "~/D-042",
                                  "https://example.com/D-042", "(https://x.org/a?id=D-042)", "git+ssh://h/D-042"])
def test_ids_in_urls_and_paths_are_no_citation(text):
    assert ids_of(text) == []


def test_an_id_after_one_in_a_url_is_still_read():
    assert ids_of("see /docs/D-042 and per D-999") == [("D-999", "D-999", "upper")]


@pytest.mark.parametrize("text", ["D-001/D-042", "[D-042](https://x.org/D-999)", "word/ D-042", "x.y/D-042"])
def test_an_id_beside_a_url_or_after_a_relative_slash_is_still_read(text):
    assert "D-042" in [found[0] for found in ids_of(text)]


def test_a_configured_pattern_keeps_its_boundaries():
    assert [i[0] for i in ids_of("ADR-0007 and D-030 and adr-0008x", r"ADR-\d{4}")] == ["ADR-0007"]
    # The pattern is grouped before the guards apply, so an alternation cannot escape them.
    assert [i[0] for i in ids_of("x-ADR-1-y RFC-2", r"ADR-\d|RFC-\d")] == ["RFC-2"]


def test_id_regex_is_case_insensitive_and_guarded():
    assert tx.id_regex(PATTERN).fullmatch("d-030")
    assert not tx.id_regex(PATTERN).search("x-D-030")


@pytest.mark.parametrize("text, folded", [
    ("D\u2010\u2011\u2012\u2212\ufe63\uff0d", "D------"),
    ("a\u00adb\u200bc\u200cd\u200de\u2060f\ufeffg", "abcdefg"),
    ("\uff24\uff0d\uff19\uff10\uff10\uff01\uff5e", "D-900!~"),
    ("\uff00\uff5f\u2013\u2014", "\uff00\uff5f\u2013\u2014"),
])
def test_fold(text, folded):
    assert tx.fold(text) == folded


# --- spans --------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, spans", [
    ("a `b` c", [(2, 5)]),
    ("``a`b`` c", [(0, 7)]),
    ("`a", []),
    ("`a` `b`", [(0, 3), (4, 7)]),
    ("x\n```\ny\n```\nz", [(2, 5), (6, 7), (8, 11)]),
    ("  ~~~\nq", [(0, 5), (6, 7)]),
    ("    ```\nq", []),
    ("`a ``b`` c", [(3, 8)]),
    ("`a ``b`` c `d`", [(0, 12)]),
    ("~~~\nx\n~~~\ny", [(0, 3), (4, 5), (6, 9)]),
])
def test_code_spans(text, spans):
    assert tx.code_spans(text) == spans


@pytest.mark.parametrize("spans, position, inside", [
    ([(2, 5)], 1, False), ([(2, 5)], 2, True), ([(2, 5)], 4, True), ([(2, 5)], 5, False),
    ([(0, 1), (3, 4)], 3, True), ([(0, 1), (3, 4)], 2, False), ([], 0, False),
])
def test_inside(spans, position, inside):
    assert tx.inside(spans, position) is inside


def test_url_spans_stop_at_brackets_and_quotes():
    text = "(see https://x.org/a) and '/abs/p' x/y"
    assert [text[a:b] for a, b in tx.url_spans(text)] == ["https://x.org/a", "/abs/p"]


# --- memory citations ---------------------------------------------------------------------------

def memories_of(text):
    return [(slug, seen["certain"], seen["reason"]) for slug, seen in tx.scan_memories(tx.fold(text)).items()]


@pytest.mark.parametrize("text, slug", [
    ("(memory: feedback_killed_agent_work)", "feedback_killed_agent_work"),
    ("memory: feedback_killed_agent_work", "feedback_killed_agent_work"),
    ("(native memory: feedback_x_y)", "feedback_x_y"),
    ("Native  Memory: Feedback-X-Y.", "feedback_x_y"),
    ("MEMORY:feedback_a", "feedback_a"),
    ("memory: `env_bash_tool`", "env_bash_tool"),
    ("memory: **env_bash_tool**", "env_bash_tool"),
    ("memory: _env_bash_tool_", "env_bash_tool"),
    ("memory:\tenv_bash_tool", "env_bash_tool"),
    ("memory: feedback_x.md", "feedback_x"),
    ("per memory: feedback_x", "feedback_x"),
    ("As memory: feedback_x says", "feedback_x"),
    ("x\n  memory: feedback_x", "feedback_x"),
    ("see it, memory: feedback_x", "feedback_x"),
    ("memory: feedback_x: it says", "feedback_x"),
    ("memory: feedback_x_", "feedback_x"),
])
def test_certain_memory_citations(text, slug):
    assert memories_of(text) == [(slug, True, None)]


@pytest.mark.parametrize("text, slug, reason", [
    ("Shared memory: ring_buffer", "ring_buffer", "after another word"),
    ("Shared memory: read-only", "read_only", "a hyphenated word"),
    ("memory: on-demand", "on_demand", "a hyphenated word"),
    ("memory: memory_store.Store", "memory_store_store", "a dotted name"),
    ("memory: a.b_c", "a_b_c", "a dotted name"),
    ("memory: shared_mem::Handle", "shared_mem", "followed by code"),
    ("memory: new_store()", "new_store", "followed by code"),
    ("memory: vec_of[u8]", "vec_of", "followed by code"),
    ("memory: box_of<T>", "box_of", "followed by code"),
    ("memory: key_a=1", "key_a", "followed by code"),
    ("memory: some_dir/file", "some_dir", "followed by code"),
    ("memory: some_dir\\file", "some_dir", "followed by code"),
    ("memory: {a_b", "a_b", None),
    ("memory: `new_store`()", "new_store", "followed by code"),
    ("memory: **a_b**::x", "a_b", "followed by code"),
    ("`memory: feedback_x`", "feedback_x", "inside code"),
    ("memory: _fake_", "fake", "an emphasised word"),
    ("memory: `low`", "low", "an emphasised word"),
])
def test_doubtful_memory_citations(text, slug, reason):
    if reason is None:
        assert memories_of(text) == []
    else:
        assert memories_of(text) == [(slug, False, reason)]


@pytest.mark.parametrize("text", [
    "memory: \u212aelvin_sign", "memory: \u017fhort_s", "Memory: 4GB", "memory: low", "memory: _leading",
    "memory: __x_y_", "mymemory: feedback_x", "short-memory: feedback_x", "memory feedback_x", "memories: feedback_x",
])
def test_not_memory_citations(text):
    assert memories_of(text) == []


@pytest.mark.parametrize("text", ["memory: _leading and per memory: feedback_x", "memory: low, then per memory: feedback_x",
                                  "memory: **a_b* and per memory: feedback_x"])
def test_a_citation_after_one_that_is_not_is_still_read(text):
    assert memories_of(text) == [("feedback_x", True, None)]


def test_a_certain_occurrence_makes_a_doubtful_slug_certain():
    assert memories_of("Shared memory: ring_buffer, per memory: ring_buffer") == [("ring_buffer", True, None)]
    assert memories_of("per memory: a_b, memory: a_b and memory: c-d-e") == [("a_b", True, None), ("c_d_e", True, None)]


@pytest.mark.parametrize("text, dates", [
    ("owner ruling 2026-07-30", ["2026-07-30"]),
    ("Owner Ruling of 2026-07-30", ["2026-07-30"]),
    ("owner ruling on 2026-07-30", ["2026-07-30"]),
    ("owner ruling dated 2026-07-30", ["2026-07-30"]),
    ("owner ruling, 2026-07-30 and owner ruling: 2026-01-02; owner ruling 2026-07-30",
     ["2026-07-30", "2026-01-02"]),
    ("owner  ruling 2026-07-30", ["2026-07-30"]),
    ("the owner's ruling 2026-07-30", []),
    ("owner ruling July 30", []),
    ("coowner ruling 2026-07-30", []),
])
def test_owner_ruling_dates(text, dates):
    assert tx.owner_ruling_dates(text) == dates


def test_scan_folds_the_text_before_reading_it():
    found = tx.scan("per D\u2011030 and memory: feedback\u200d_x, owner ruling 2026\uff0d01-02", PATTERN)
    assert list(found["ids"]) == ["D-030"]
    assert list(found["memories"]) == ["feedback_x"]
    assert found["dates"] == ["2026-01-02"]


def test_scan_reads_code_spans_for_ids_and_memories():
    found = tx.scan("`D-030` `memory: feedback_x`", PATTERN)
    assert found["ids"]["D-030"]["reason"] == "inside code"
    assert found["memories"]["feedback_x"]["reason"] == "inside code"
