"""router.gate.citation_ledger: which lines of a ledger are entries (every layout read), the lines
that look like entries but do not parse, decoding (byte-order marks), where ledgers are looked
for and where that stops, merging, and the shape of a ledger's ids. Pure functions over
tmp_path files; the mutation run uses these tests."""

import codecs

import pytest

from router.gate import citation_ledger as ct

PATTERN = r"D-\d+"
NAMES = [".wolf/decisions.md", "DECISIONS.md"]
DEAD = ("REVOKED", "SUPERSEDED", "AMENDED", "RETIRED", "MOOT")


@pytest.mark.parametrize("line, entry_id, word", [
    ("## D-030: Retention is 14 days", "D-030", "Retention"),
    ("# D-030 Retention", "D-030", "Retention"),
    ("###### D-030: x", "D-030", "x"),
    ("- D-030 \u2014 Retention", "D-030", "Retention"),
    ("* D-030 \u2013 Retention", "D-030", "Retention"),
    ("+ D-030 - Retention", "D-030", "Retention"),
    ("1. D-030: Retention", "D-030", "Retention"),
    ("12) D-030: Retention", "D-030", "Retention"),
    ("D-030: Retention", "D-030", "Retention"),
    ("   D-030: Retention", "D-030", "Retention"),
    ("## **D-030**: REVOKED \u2014 old", "D-030", "REVOKED"),
    ("- `D-030` | MOOT", "D-030", "MOOT"),
    ("## D-030. SUPERSEDED by D-031", "D-030", "SUPERSEDED"),
    ("## D-030: [AMENDED] limits", "D-030", "AMENDED"),
    ("## D-030: **REVOKED**", "D-030", "REVOKED"),
    ("## d-030: lower-case id", "D-030", "lower"),
    ("## D-030", "D-030", ""),
    ("## D-030:", "D-030", ""),
    ("| D-030 | Retention |", "D-030", "Retention"),
    ("|D-030|REVOKED|x|", "D-030", "REVOKED"),
    ("  | **D-030** | MOOT |", "D-030", "MOOT"),
    ("## Decision D-030: Retention", "D-030", "Retention"),
    ("### decision D-030 - Retention", "D-030", "Retention"),
    ("- Decision D-030: Retention", "D-030", "Retention"),
    ("### [D-030] Retention", "D-030", "Retention"),
    ("- [D-030]: RETIRED", "D-030", "RETIRED"),
    ("- [x] D-030: Retention", "D-030", "Retention"),
    ("- [X] D-030: Retention", "D-030", "Retention"),
    ("* [ ] D-030 \u2014 Retention", "D-030", "Retention"),
    ("1. [x] D-030: Retention", "D-030", "Retention"),
    ("## D\u2011030: folded hyphen", "D-030", "folded"),
])
def test_ledger_entry_forms(line, entry_id, word):
    entries, problems = ct.parse_ledger(ct.fold(line) + "\n", PATTERN)
    assert [(e[0], e[1]) for e in entries] == [(entry_id, word)]
    assert problems == []


@pytest.mark.parametrize("line", [
    "See D-030 for the window.",
    "D-030's window is 14 days.",
    "    D-030: indented four spaces is a code block",
    "## Decisions",
    "## Q3 plans",
    "Q3 plans",
    "",
    "   ",
    "abc D-030",
    "| id | decision |",
    "|---|---|",
    "| 2026-01-02 | D-030 |",
    "## Decision log",
    "## Decisions D-030: plural word",
    "- [y] D-030: not a checkbox",
    "-[x] D-030: no space",
    "### [D-030](link) title",
])
def test_lines_that_are_not_entries(line):
    entries, problems = ct.parse_ledger(ct.fold(line) + "\n", PATTERN)
    assert entries == []
    assert problems == []


@pytest.mark.parametrize("line, says", [
    ("## D030: Retention", "'D030' looks like ledger id D-030 written without its separator"),
    ("## D_030: Retention", "'D_030' looks like ledger id D-030"),
    ("## D 030: Retention", "'D 030' looks like ledger id D-030"),
    ("## D\u2013030: Retention", "ledger id D-030"),
    ("- d030 \u2014 Retention", "ledger id D-030"),
    ("## D-030a: Retention", "'D-030a' looks like a ledger entry but is not an id"),
    ("## D-030X: Retention", "'D-030X' looks like a ledger entry but is not an id"),
    ("## D-030-draft: Retention", "'D-030-draft' looks like a ledger entry"),
    ("## xD-030: Retention", "'xD-030' looks like a ledger entry"),
    ("D-030s: plural", "'D-030s' looks like a ledger entry"),
    ("#D-030 no space after the heading marker", "'#D-030' looks like a ledger entry"),
    ("-D-030 no space after the list marker", "'-D-030' looks like a ledger entry"),
    ("## __D-030__ underscores are not entry emphasis", "'__D-030' looks like a ledger entry"),
    ("## Decision D030: Retention", "'D030' looks like ledger id D-030"),
    ("### [D030] Retention", "'D030' looks like ledger id D-030"),
    ("| D030 | Retention |", "'D030' looks like ledger id D-030"),
    ("- [x] D-030a: Retention", "'D-030a' looks like a ledger entry"),
])
def test_lines_that_look_like_entries_are_reported(line, says):
    entries, problems = ct.parse_ledger("## D-001: first\n" + line + "\n", PATTERN, "L.md")
    assert [e[0] for e in entries] == ["D-001"]
    assert len(problems) == 1
    source, lineno, message = problems[0]
    assert (source, lineno) == ("L.md", 2)
    assert says in message


def test_a_duplicate_id_in_one_file_is_reported_and_both_kept():
    entries, problems = ct.parse_ledger("## D-001: a\n\n## D-001: REVOKED b\n", PATTERN, "L.md")
    assert [(e[0], e[1], e[2]) for e in entries] == [("D-001", "a", 1), ("D-001", "REVOKED", 3)]
    assert problems == [("L.md", 3, "D-001 is entered again (first at line 1)")]


def test_entry_text_runs_to_the_next_entry():
    text = "## D-001:\n\nREVOKED \u2014 see below\nmore text\n## D-002: Next\nbody\n"
    entries, _ = ct.parse_ledger(text, PATTERN, "L.md")
    assert entries == [("D-001", "REVOKED", 1, "L.md"), ("D-002", "Next", 5, "L.md")]


def test_text_before_the_first_entry_belongs_to_none():
    entries, _ = ct.parse_ledger("REVOKED preamble\n## D-001: Live\n", PATTERN)
    assert entries == [("D-001", "Live", 2, "<ledger>")]


@pytest.mark.parametrize("fence", ["```", "~~~", "```markdown", "  ```"])
def test_fenced_code_is_not_read_as_entries(fence):
    closing = fence.strip()[:3]
    text = f"## D-001: a\n{fence}\n## D-900: example in a code block\n## D900: malformed example\n{closing}\n## D-002: b\n"
    entries, problems = ct.parse_ledger(text, PATTERN)
    assert [e[0] for e in entries] == ["D-001", "D-002"]
    assert problems == []


def test_a_fence_closes_only_with_its_own_marker():
    text = "```\n~~~\n## D-900: still fenced\n```\n## D-001: a\n"
    assert [e[0] for e in ct.parse_ledger(text, PATTERN)[0]] == ["D-001"]


def test_an_unclosed_fence_hides_the_rest():
    assert ct.parse_ledger("## D-001: a\n```\n## D-002: b\n", PATTERN)[0][0][0] == "D-001"
    assert len(ct.parse_ledger("## D-001: a\n```\n## D-002: b\n", PATTERN)[0]) == 1


def test_the_fixture_ledger_parses_cleanly(fixture_ledger, ledger_ids):
    entries, problems = ct.parse_ledger(fixture_ledger.read_text(encoding="utf-8"), PATTERN, "F")
    assert problems == []
    assert [e[0] for e in entries] == ledger_ids["all"]
    opened = {e[0]: e[1] for e in entries}
    for word, entry_id in ledger_ids["dead"].items():
        assert opened[entry_id] == word
    assert not any(opened[i] in DEAD for i in ledger_ids["live"])


def test_find_ledgers_walks_up_nearest_first(tmp_path):
    deep = tmp_path / "repo" / ".claude" / "worktrees" / "wt" / "docs"
    deep.mkdir(parents=True)
    for where in (tmp_path / "repo", tmp_path / "repo" / ".claude" / "worktrees" / "wt"):
        (where / ".wolf").mkdir()
        (where / ".wolf" / "decisions.md").write_text("## D-001: a\n", encoding="utf-8")
    (tmp_path / "repo" / "DECISIONS.md").write_text("## D-002: b\n", encoding="utf-8")
    (tmp_path / "repo" / "docs").mkdir()
    (tmp_path / "repo" / "docs" / "DECISIONS.md").write_text("not on the path\n", encoding="utf-8")
    (deep / ".wolf").mkdir()  # a directory, not a ledger
    (deep / "DECISIONS.md").mkdir()
    found = ct.find_ledgers(str(deep), NAMES, str(tmp_path / "repo"))
    assert found == [str(tmp_path / "repo" / ".claude" / "worktrees" / "wt" / ".wolf" / "decisions.md"),
                     str(tmp_path / "repo" / ".wolf" / "decisions.md"),
                     str(tmp_path / "repo" / "DECISIONS.md")]


def test_find_ledgers_stops_at_the_boundary(tmp_path):
    (tmp_path / "DECISIONS.md").write_text("## D-999: above\n", encoding="utf-8")
    (tmp_path / "repo" / "sub").mkdir(parents=True)
    (tmp_path / "repo" / "DECISIONS.md").write_text("## D-001: a\n", encoding="utf-8")
    (tmp_path / "repo" / "sub" / "DECISIONS.md").write_text("## D-002: b\n", encoding="utf-8")
    start = str(tmp_path / "repo" / "sub")
    assert ct.find_ledgers(start, NAMES, str(tmp_path / "repo")) == [
        str(tmp_path / "repo" / "sub" / "DECISIONS.md"), str(tmp_path / "repo" / "DECISIONS.md")]
    assert ct.find_ledgers(start, NAMES, start) == [str(tmp_path / "repo" / "sub" / "DECISIONS.md")]
    # A boundary that does not enclose the start reads the start directory only.
    assert ct.find_ledgers(start, NAMES, str(tmp_path / "elsewhere")) == [str(tmp_path / "repo" / "sub" / "DECISIONS.md")]
    assert ct.find_ledgers(start, NAMES, str(tmp_path / "re")) == [str(tmp_path / "repo" / "sub" / "DECISIONS.md")]
    assert len(ct.find_ledgers(start, NAMES, "/")) == 3


def test_find_ledgers_reads_a_file_once_however_it_is_reached(tmp_path):
    (tmp_path / ".wolf").mkdir()
    (tmp_path / "DECISIONS.md").write_text("## D-001: a\n", encoding="utf-8")
    (tmp_path / ".wolf" / "decisions.md").symlink_to(tmp_path / "DECISIONS.md")
    assert ct.find_ledgers(str(tmp_path), NAMES, str(tmp_path)) == [str(tmp_path / ".wolf" / "decisions.md")]
    assert ct.find_ledgers(str(tmp_path), ["DECISIONS.md", "DECISIONS.md"], str(tmp_path)) == [
        str(tmp_path / "DECISIONS.md")]


def test_find_ledgers_accepts_a_relative_start(tmp_path, monkeypatch):
    (tmp_path / "DECISIONS.md").write_text("## D-001: a\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    assert ct.find_ledgers("sub", ["DECISIONS.md"], ".") == [str(tmp_path / "DECISIONS.md")]


def test_find_ledgers_finds_nothing(tmp_path):
    assert ct.find_ledgers(str(tmp_path), ["DECISIONS.md"], str(tmp_path)) == []


@pytest.fixture
def tree(tmp_path):
    """tmp/shared/checkout (a git checkout) holding a worktree and a nested clone."""
    checkout = tmp_path / "shared" / "checkout"
    (checkout / ".git").mkdir(parents=True)
    worktree = checkout / ".claude" / "worktrees" / "wt"
    (worktree / "docs").mkdir(parents=True)
    (worktree / ".git").write_text("gitdir: ../../../.git/worktrees/wt\n", encoding="utf-8")
    (checkout / "vendor" / "clone" / ".git").mkdir(parents=True)
    (tmp_path / "plain" / "sub").mkdir(parents=True)
    return tmp_path


@pytest.mark.parametrize("start, projects, boundary", [
    ("shared/checkout/.claude/worktrees/wt/docs", [], "shared/checkout"),
    ("shared/checkout/vendor/clone", [], "shared/checkout"),
    ("shared/checkout", [], "shared/checkout"),
    ("shared/checkout/.claude", ["shared/checkout/.claude"], "shared/checkout"),
    ("shared/checkout/.claude/worktrees/wt/docs", ["shared"], "shared"),
    ("shared/checkout/.claude", ["plain"], "shared/checkout"),
    ("plain/sub", [], "plain/sub"),
    ("plain/sub", ["plain"], "plain"),
    ("plain/sub", ["plain/sub"], "plain/sub"),
    ("plain/sub", ["pla"], "plain/sub"),
    ("plain/sub", ["", None, "plain/sub/deeper"], "plain/sub"),
    ("plain", ["plain/sub"], "plain"),
])
def test_ledger_boundary(tree, start, projects, boundary):
    dirs = [str(tree / p) if p else p for p in projects]
    assert ct.ledger_boundary(str(tree / start), dirs) == str(tree / boundary)


def test_ledger_boundary_of_a_relative_start(tree, monkeypatch):
    monkeypatch.chdir(tree / "shared" / "checkout" / "vendor")
    assert ct.ledger_boundary("clone") == str(tree / "shared" / "checkout")


@pytest.mark.parametrize("data, text", [
    (codecs.BOM_UTF8 + "## D-001: \u00e9\n".encode("utf-8"), "## D-001: \u00e9\n"),
    (codecs.BOM_UTF16_LE + "## D-001: \u00e9\n".encode("utf-16-le"), "## D-001: \u00e9\n"),
    (codecs.BOM_UTF16_BE + "## D-001: \u00e9\n".encode("utf-16-be"), "## D-001: \u00e9\n"),
    (codecs.BOM_UTF32_LE + "## D-001\n".encode("utf-32-le"), "## D-001\n"),
    (codecs.BOM_UTF32_BE + "## D-001\n".encode("utf-32-be"), "## D-001\n"),
    ("## D-001: \u00e9\n".encode("utf-8"), "## D-001: \u00e9\n"),
    (b"## D-001: caf\xe9\n", "## D-001: caf\ufffd\n"),
    (codecs.BOM_UTF16_LE + b"#\x00\x00\xd8", "#\ufffd"),
    (b"", ""),
])
def test_decode(data, text):
    assert ct.decode(data) == text


def test_load_ledgers_merges_ids_and_sources(tmp_path):
    (tmp_path / "a.md").write_text("## D-001: REVOKED a\n## D002: bad\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("## D-001: Live a\n## D-003: c\n", encoding="utf-8")
    merged = ct.load_ledgers([str(tmp_path / "a.md"), str(tmp_path / "b.md")], PATTERN)
    assert merged["sources"] == [str(tmp_path / "a.md"), str(tmp_path / "b.md")]
    assert merged["ids"] == {
        "D-001": [("D-001", "REVOKED", 1, str(tmp_path / "a.md")), ("D-001", "Live", 1, str(tmp_path / "b.md"))],
        "D-003": [("D-003", "c", 2, str(tmp_path / "b.md"))]}
    assert [(p[0], p[1]) for p in merged["problems"]] == [(str(tmp_path / "a.md"), 2)]
    assert merged["text"] == "## D-001: REVOKED a\n## D002: bad\n\n## D-001: Live a\n## D-003: c\n"


def test_load_ledgers_separates_files_without_a_trailing_newline(tmp_path):
    # Fused, "...ruled 2026-01-" + "02 ..." would read as the date 2026-01-02.
    (tmp_path / "a.md").write_text("## D-001: ruled 2026-01-", encoding="utf-8")
    (tmp_path / "b.md").write_text("02 is not a date here\n## D-002: b", encoding="utf-8")
    ledger = ct.load_ledgers([str(tmp_path / "a.md"), str(tmp_path / "b.md")], PATTERN)
    assert ledger["text"] == "## D-001: ruled 2026-01-\n02 is not a date here\n## D-002: b"
    assert "2026-01-02" not in ledger["dates"]


def test_load_ledgers_reads_invalid_utf8(tmp_path):
    (tmp_path / "a.md").write_bytes(b"## D-001: caf\xe9\n")
    assert list(ct.load_ledgers([str(tmp_path / "a.md")], PATTERN)["ids"]) == ["D-001"]


@pytest.mark.parametrize("ids, top", [
    ({"D-9": 1, "D-058": 1, "D-010": 1}, "D-058"),
    ({"D-100": 1, "D-99": 1}, "D-100"),
    ({"ADR-2-1": 1, "ADR-1-9": 1}, "ADR-2-1"),
    ({"D-1": 1}, "D-1"),
    ({}, None),
])
def test_highest_id(ids, top):
    assert ct.highest_id(ids) == top



@pytest.mark.parametrize("text, dates", [
    ("ruled 2026-07-30 and 2026-08-01", {"2026-07-30", "2026-08-01"}),
    ("12026-07-301", {"2026-07-30"}),
    ("2026-07-30-12", {"2026-07-30"}),
    ("1999-01-01-02", {"1999-01-01"}),
    ("20261-02-03", {"0261-02-03"}),
    ("2026-7-30", set()),
])
def test_load_ledgers_collects_every_date(tmp_path, text, dates):
    (tmp_path / "a.md").write_text(text, encoding="utf-8")
    assert ct.load_ledgers([str(tmp_path / "a.md")], PATTERN)["dates"] == dates


def test_load_ledgers_names_ledgers_without_entries(tmp_path):
    (tmp_path / "a.md").write_text("- id: D-001\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("## D-002: b\n", encoding="utf-8")
    (tmp_path / "c.md").write_text("", encoding="utf-8")
    ledger = ct.load_ledgers([str(tmp_path / n) for n in ("a.md", "b.md", "c.md")], PATTERN)
    assert ledger["empty"] == [str(tmp_path / "a.md"), str(tmp_path / "c.md")]


def test_load_ledgers_records_where_each_id_first_appears(tmp_path):
    (tmp_path / "a.md").write_text("intro\n\nsee d-003, D-004\n```\nD-005\n```\nD-003 again\nx-D-006\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("## D-001: cites D-003\nD-007\n", encoding="utf-8")
    ledger = ct.load_ledgers([str(tmp_path / "a.md"), str(tmp_path / "b.md")], PATTERN)
    a, b = str(tmp_path / "a.md"), str(tmp_path / "b.md")
    assert ledger["mentions"] == {"D-003": (a, 3), "D-004": (a, 3), "D-005": (a, 5), "D-001": (b, 1), "D-007": (b, 2)}


def test_mention_lines_count_a_leading_blank_line(tmp_path):
    (tmp_path / "a.md").write_text("\nD-003 pending\n\n\nD-004", encoding="utf-8")
    assert ct.load_ledgers([str(tmp_path / "a.md")], PATTERN)["mentions"] == {"D-003": (str(tmp_path / "a.md"), 2),
                                                                             "D-004": (str(tmp_path / "a.md"), 5)}


def test_load_ledgers_folds_look_alike_hyphens(tmp_path):
    (tmp_path / "a.md").write_text("## D\u2011001: a\n## D-00\u200d2: b\n", encoding="utf-8")
    assert list(ct.load_ledgers([str(tmp_path / "a.md")], PATTERN)["ids"]) == ["D-001", "D-002"]


@pytest.mark.parametrize("ids, shapes", [
    (["D-001", "D-058"], {"D-#": (True, {(3,)})}),
    (["D-1", "D-58"], {"D-#": (False, {(1,), (2,)})}),
    (["D-100", "D-001", "D-1000"], {"D-#": (True, {(3,), (4,)})}),
    (["ADR-2-01", "D-9"], {"ADR-#-#": (True, {(1, 2)}), "D-#": (False, {(1,)})}),
    (["D-0"], {"D-#": (False, {(1,)})}),
    ([], {}),
])
def test_id_shapes(ids, shapes):
    assert ct.id_shapes(ids) == shapes


@pytest.mark.parametrize("ledger_ids, cited, fits", [
    (["D-001", "D-058"], "D-999", True),
    (["D-001", "D-058"], "D-1", False),
    (["D-001", "D-058"], "D-0001", False),
    (["D-001", "D-058"], "D-1000", False),
    (["D-1", "D-58"], "D-999", True),
    (["D-1", "D-58"], "D-0", True),
    (["D-1", "D-58"], "D-01", False),
    (["D-1", "D-58"], "D-1-2", False),
    (["ADR-0001"], "D-0001", False),
    (["ADR-1-01"], "ADR-3-02", True),
    (["ADR-1-01"], "ADR-3-2", False),
    ([], "D-001", False),
])
def test_fits_shape(ledger_ids, cited, fits):
    assert ct.fits_shape(cited, ct.id_shapes(ledger_ids)) is fits
