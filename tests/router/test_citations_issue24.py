"""Issue 24, citation gate items 1-12: each case exactly as the issue filed it, through the
gate's pure decision (``router.gate.citations.decide`` over the fixture ledger). The hook-level cases
(items 9, 10 and 12 as Claude Code runs the gate) are in test_gate.py."""

import codecs

import pytest

from router.gate import citations as ct

PATTERN = r"D-\d+"
DEAD = ("REVOKED", "SUPERSEDED", "AMENDED", "RETIRED", "MOOT")
LEDGER_NAMES = [".wolf/decisions.md", "DECISIONS.md"]
MEMORY = {"slugs": {"feedback_killed_agent_work_verification", "project_hot_strip"}, "sources": ["/mem"]}


@pytest.fixture
def ledger(fixture_ledger):
    return ct.load_ledgers([str(fixture_ledger)], PATTERN)


def decide_text(text, ledger=None, memory=None):
    return ct.decide([("content", text)], ledger, memory, PATTERN, DEAD)


def ledger_file(tmp_path, data, name="decisions.md"):
    path = tmp_path / name
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    return ct.load_ledgers([str(path)], PATTERN)


# --- 1, 2: ids that are not citations ------------------------------------------------------------

@pytest.mark.parametrize("text", ["x = arr[d-1]", "echo $((d-1))", r"the sphere $S^{d-1}$"])
def test_item1_code_with_d_minus_1_is_no_citation(ledger, text):
    assert decide_text(text, ledger) == {"verdict": "pass", "blocks": [], "warnings": [], "bypassed": False}


@pytest.mark.parametrize("text, verdict, shown", [
    ("Take vitamin D-3 daily.", "warn", "D-3 (not written the way the ledger writes its ids, such as D-001)"),
    ("I shoot with a Nikon D-500.", "warn", "D-500 (after the name 'Nikon')"),
    ("File the Form D-1 by March.", "warn", "D-1 ("),
    ("See /docs/D-42/setup for the steps.", "pass", None),
    ("Open https://example.com/D-042/setup first.", "pass", None),
])
def test_item2_names_and_paths_are_not_refused(ledger, text, verdict, shown):
    result = decide_text(text, ledger)
    assert result["verdict"] == verdict and result["blocks"] == []
    if shown:
        [warning] = result["warnings"]
        assert warning.startswith("not blocked, as these may not be citations, but the ledger lacks them: ")
        assert shown in warning


@pytest.mark.parametrize("text", [
    "Shared memory: read-only",
    "cache:\n  memory: on-demand\n",
    "def open_store(memory: memory_store.Store) -> None:",
    "struct Pool {\n    memory: shared_mem::Handle,\n}",
])
def test_item3_memory_colon_in_prose_and_code_is_not_refused(text):
    result = decide_text(text, memory=MEMORY)
    assert result["verdict"] == "warn" and result["blocks"] == []
    assert result["warnings"][0].startswith("not blocked, as these may not be memory citations")


# --- 4, 5: ledgers the gate could not read ----------------------------------------------------

LAYOUTS = {
    "markdown table": "| id | decision |\n|---|---|\n| D-001 | Store memories |\n| D-002 | REVOKED: flat |\n"
                      "| D-003 | Retention is 14 days |\n",
    "decision heading": "## Decision D-001: Store memories\n## Decision D-002: REVOKED flat\n"
                        "## Decision D-003: Retention\n",
    "bracketed heading": "### [D-001] Store memories\n### [D-002] REVOKED flat\n### [D-003] Retention\n",
    "checkbox list": "- [x] D-001: Store memories\n- [ ] D-002: REVOKED flat\n- [X] D-003: Retention\n",
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_item4_common_ledger_layouts_are_read(tmp_path, layout):
    ledger = ledger_file(tmp_path, LAYOUTS[layout])
    assert list(ledger["ids"]) == ["D-001", "D-002", "D-003"] and ledger["problems"] == []
    assert decide_text("Per D-003 the window is 14 days.", ledger)["verdict"] == "pass"
    assert decide_text("Per D-002.", ledger)["warnings"][0].startswith("D-002 is cited, but its ledger entry opens REVOKED")
    assert decide_text("Per D-004.", ledger)["blocks"][0].startswith("D-004 is not in the decision ledger")


def test_item4_a_ledger_yielding_no_entries_warns_and_never_blocks(tmp_path):
    ledger = ledger_file(tmp_path, "decisions:\n  - id: D-003\n    title: Retention is 14 days\n")
    for cited in ("D-003", "D-999"):
        result = decide_text(f"Per {cited}.", ledger)
        assert result["verdict"] == "warn" and result["blocks"] == []
        assert result["warnings"][0] == (f"ledger {tmp_path / 'decisions.md'} yields no entries (none of its lines "
                                         "reads like '## D-001: title', '| D-001 | title |' or '- [x] D-001: title'): "
                                         "no id is blocked on its account")
    assert result["warnings"][1] == ("not blocked, as these may not be citations, but the ledger lacks them: "
                                     "D-999 (no entry could be read from the ledger). If one is a citation, cite an "
                                     "id the ledger holds")


def test_item4_an_id_in_the_ledger_text_but_not_an_entry_warns(tmp_path):
    ledger = ledger_file(tmp_path, "## D-001: Store memories\n\nPending: D-002 waits for the owner.\n")
    result = decide_text("Per D-002.", ledger)
    assert result["verdict"] == "warn" and result["blocks"] == []
    assert result["warnings"] == [f"D-002 is not a ledger entry but appears in the text of {tmp_path / 'decisions.md'}:3: "
                                  "not blocked; if it is a decision, give it an entry such as '## D-002: title'"]


LEDGER = "## D-001: Store memories\n## D-002: Retention\n"


@pytest.mark.parametrize("encoded", [
    codecs.BOM_UTF8 + LEDGER.encode("utf-8"),
    codecs.BOM_UTF16_LE + LEDGER.encode("utf-16-le"),
    codecs.BOM_UTF16_BE + LEDGER.encode("utf-16-be"),
], ids=["utf-8-bom", "utf-16-le", "utf-16-be"])
def test_item5_a_ledger_with_a_byte_order_mark_keeps_every_entry(tmp_path, encoded):
    ledger = ledger_file(tmp_path, encoded)
    assert list(ledger["ids"]) == ["D-001", "D-002"]
    assert decide_text("Per D-001 and D-002.", ledger)["verdict"] == "pass"
    assert decide_text("Per D-003.", ledger)["verdict"] == "block"


# --- 6, 7, 8: fabrications that passed --------------------------------------------------------

@pytest.mark.parametrize("text", ["Justified by _D-999_.", "Justified by __D-999__."])
def test_item6_an_id_in_underscore_emphasis_is_checked(ledger, text):
    assert decide_text(text, ledger)["blocks"][0].startswith("D-999 is not in the decision ledger")


@pytest.mark.parametrize("text, verdict", [
    ("per memory: _fake_", "warn"),
    ("per memory: _feedback_fake_slug_", "block"),
    ("per memory: __feedback_fake_slug__", "block"),
])
def test_item6_a_slug_in_underscore_emphasis_is_checked(text, verdict):
    assert decide_text(text, memory=MEMORY)["verdict"] == verdict


@pytest.mark.parametrize("text", ["per D\u2011999", "per D\uff0d999", "per D\u200d-999", "per D-9\u200d99",
                                  "per D\u2010999", "per D\u00ad-999"],
                         ids=["non-breaking-hyphen", "fullwidth-hyphen", "zwj-before-hyphen", "zwj-in-digits",
                              "unicode-hyphen", "soft-hyphen"])
def test_item7_look_alike_hyphens_and_invisible_joiners_do_not_hide_an_id(ledger, text):
    assert decide_text(text, ledger)["blocks"][0].startswith("D-999 is not in the decision ledger")


@pytest.mark.parametrize("text", ["per memory: feedback\u2011fake\u2011slug", "per memory: feedback_\u200dfake"])
def test_item7_look_alike_hyphens_and_joiners_do_not_hide_a_slug(text):
    assert decide_text(text, memory=MEMORY)["verdict"] == "block"


@pytest.mark.parametrize("value", [{"note": "see\tD-999"}, ["line one\nD-999"], {"k": {"deep": ["x\tD-999"]}}],
                         ids=["tab-in-object", "newline-in-array", "tab-nested"])
def test_item8_an_id_after_an_escape_in_a_non_string_field_is_found(ledger, value):
    _path, texts = ct.payload_texts({"tool_name": "Edit", "tool_input": {"file_path": "/p/a.md", "new_string": value}})
    assert ct.decide(texts, ledger, None, PATTERN, DEAD)["verdict"] == "block"


# --- 9: unreadable write payloads (the notice itself: test_gate.py) -----------------------------

@pytest.mark.parametrize("payload, why", [
    ([1, 2], "the payload is a JSON array, not an object"),
    ("text", "the payload is a JSON string, not an object"),
    (None, "the payload is a JSON null, not an object"),
    (3, "the payload is a JSON number, not an object"),
    (True, "the payload is a JSON boolean, not an object"),
    ({"tool_name": "Write", "tool_input": "x"}, "its tool_input is a JSON string, not an object"),
    ({"tool_input": None}, "its tool_input is a JSON null, not an object"),
    ({"tool_name": "Write", "tool_input": {"file_path": "/p/a.md"}},
     "Write carries no text where a write adds it (content, new_string, edits[].new_string, new_source)"),
    ({"tool_name": "NotebookEdit", "tool_input": {"notebook_path": "/p/n.ipynb", "new_source": None}},
     "NotebookEdit carries no text where a write adds it"),
    ({}, "the write carries no text where a write adds it"),
    ({"tool_name": "", "tool_input": {}}, "the write carries no text"),
], ids=["array", "string", "null", "number", "boolean", "tool-input-string", "tool-input-null", "write-no-content",
        "notebook-null-source", "empty-object", "empty-tool-name"])
def test_item9_every_unreadable_write_payload_is_named(payload, why):
    assert ct.unreadable(payload, ct.payload_texts(payload)[1]).startswith(why)


@pytest.mark.parametrize("payload", [
    {"tool_name": "Read", "tool_input": {"file_path": "/x"}},
    {"tool_name": "Write", "tool_input": {"file_path": "/p/a.md", "content": ""}},
    {"tool_name": "Bash", "tool_input": "not a write"},
])
def test_item9_readable_writes_and_other_tools_are_not_called_unreadable(payload):
    assert ct.unreadable(payload, ct.payload_texts(payload)[1]) is None


# --- 10: the output is capped ------------------------------------------------------------------

def test_item10_a_ledger_with_5000_malformed_lines_is_reported_once_and_short(tmp_path):
    text = "## D-001: Store memories\n" + "".join(f"## D{n:03d}: malformed\n" for n in range(2, 5002))
    ledger = ledger_file(tmp_path, text)
    result = decide_text("Per D-001.", ledger)
    assert result["verdict"] == "warn"
    source = tmp_path / "decisions.md"
    assert result["warnings"] == [
        f"ledger {source}:2: 'D002' looks like ledger id D-002 written without its separator",
        f"ledger {source}:3: 'D003' looks like ledger id D-003 written without its separator",
        f"ledger {source}:4: 'D004' looks like ledger id D-004 written without its separator",
        f"ledger {source}: and 4997 more lines that look like entries but do not parse"]


def test_item10_a_14_kb_csv_of_order_codes_gets_a_short_refusal(ledger):
    csv = "code,item,qty\n" + "".join(f"D-{n:03d},widget-blue,{n % 7}\n" for n in range(100, 1000))
    assert len(csv) > 14_000
    result = decide_text(csv, ledger)
    assert result["verdict"] == "block"
    assert len(ct.render(result)) < 4_000
    assert len(result["blocks"]) == ct.MAX_BLOCKS + 1
    assert result["blocks"][-1].startswith("and 895 more citations of ids or memories that do not exist: D-105, D-106")


# --- 12: where ledgers are looked for ------------------------------------------------------------

def _planted(tmp_path):
    """A DECISIONS.md planted in a shared ancestor that whitelists the fabricated D-999."""
    shared = tmp_path / "tmp"
    (shared / "project" / ".wolf").mkdir(parents=True)
    (shared / "project" / "docs").mkdir()
    (shared / "DECISIONS.md").write_text("## D-999: planted\n", encoding="utf-8")
    (shared / "project" / ".wolf" / "decisions.md").write_text("## D-001: real\n", encoding="utf-8")
    return shared / "project"


@pytest.mark.parametrize("marker", ["git checkout", "project directory"])
def test_item12_a_ledger_planted_above_the_project_is_not_read(tmp_path, marker):
    project = _planted(tmp_path)
    if marker == "git checkout":
        (project / ".git").mkdir()
    dirs = [str(project)] if marker == "project directory" else [str(project / "docs")]
    start = str(project / "docs")
    found = ct.find_ledgers(start, LEDGER_NAMES, ct.ledger_boundary(start, dirs))
    assert found == [str(project / ".wolf" / "decisions.md")]
    assert decide_text("Per D-999.", ct.load_ledgers(found, PATTERN))["verdict"] == "block"
