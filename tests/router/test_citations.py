"""router.gate.citations: payload reading, citation extraction, ledger parsing and discovery, the skip
list, the bypass and the decision. Pure-function tests (the mutation run uses these); the hook as
Claude Code runs it is tested in test_gate.py."""

import json
import os

import pytest

from router.gate import citations as ct

PATTERN = r"D-\d+"
DEAD = ("REVOKED", "SUPERSEDED", "AMENDED", "RETIRED", "MOOT")


def ledger_of(tmp_path, text, name="decisions.md"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return ct.load_ledgers([str(path)], PATTERN)


def decide_text(text, ledger=None, memory=None):
    return ct.decide([("content", text)], ledger, memory, PATTERN, DEAD)


# --- payloads -----------------------------------------------------------------------------------

def test_every_shape_yields_the_added_text_and_the_path(shape, payloads):
    path, texts = ct.payload_texts(payloads("Per D-123.", "/p/docs/a.md")[shape])
    assert path == "/p/docs/a.md"
    assert any(body == "Per D-123." for _label, body in texts)


@pytest.mark.parametrize("payload, expected", [
    ({"tool_input": {"file_path": "/f", "content": "c"}}, [("tool_input.content", "c")]),
    ({"tool_input": {"file_path": "/f", "old_string": "gone D-999", "new_string": "n"}},
     [("tool_input.new_string", "n")]),
    ({"tool_input": {"notebook_path": "/n.ipynb", "new_source": "s"}}, [("tool_input.new_source", "s")]),
    ({"tool_input": {"content": "c", "edits": [{"new_string": "e1"}, {"new_string": "e2"}]}},
     [("tool_input.content", "c"), ("tool_input.edits[1].new_string", "e1"), ("tool_input.edits[2].new_string", "e2")]),
    ({"edits": [{"old_string": "o", "new_string": "flat"}]}, [("edits[1].new_string", "flat")]),
    ({"tool_input": {"edits": [{"new_string": "nested"}]}, "edits": [{"new_string": "flat"}]},
     [("tool_input.edits[1].new_string", "nested"), ("edits[1].new_string", "flat")]),
    ({"tool_input": {"new_string": {"text": "D-999"}}}, [("tool_input.new_string", "text\nD-999")]),
    ({"tool_input": {"content": ["D-1", 2]}}, [("tool_input.content", "D-1\n2")]),
    ({"tool_input": {"content": 7}}, [("tool_input.content", "7")]),
    ({"tool_input": {"edits": [{"new_string": ["a", "b"]}]}}, [("tool_input.edits[1].new_string", "a\nb")]),
    ({"tool_input": {"edits": "not a list D-9"}}, [("tool_input.edits", "not a list D-9")]),
    ({"tool_input": {"edits": {"new_string": "D-9"}}}, [("tool_input.edits", "new_string\nD-9")]),
    ({"tool_input": {"edits": [["D-9"], {"old_string": "only old"}, {"new_string": "third"}]}},
     [("tool_input.edits[1]", "D-9"), ("tool_input.edits[3].new_string", "third")]),
    ({"tool_input": {"content": None, "new_string": None}}, []),
    ({"tool_input": {"file_path": "/f"}}, []),
    ({"tool_input": "not an object", "content": "top-level content is not a write field"}, []),
    ({}, []),
], ids=["write", "edit-new-only", "notebook", "content-and-edits", "cursor-flat", "both-edit-arrays",
        "dict-new-string", "list-content", "number-content", "list-in-edit", "edits-not-a-list", "edits-an-object",
        "edit-not-an-object", "null-fields", "no-text", "tool-input-not-object", "empty"])
def test_payload_texts_reads_every_source(payload, expected):
    assert ct.payload_texts(payload)[1] == expected


def test_a_non_string_field_gives_its_strings_not_json_escapes():
    texts = ct.payload_texts({"tool_input": {"content": {"k": "caf\u00e9\tD-9", "n": ["a\nb"]}}})[1]
    assert texts == [("tool_input.content", "k\ncaf\u00e9\tD-9\nn\na\nb")]


def test_a_non_string_field_is_read_in_document_order():
    value = {"b": 1, "a": [True, None, 2.5, False, {"z": "last"}], "c": (("t",),)}
    assert ct.payload_texts({"tool_input": {"content": value}})[1] == [
        ("tool_input.content", "b\n1\na\ntrue\n2.5\nfalse\nz\nlast\nc\nt")]


def test_unserialisable_values_still_give_text():
    class Odd:
        def __str__(self):
            return "odd D-5"

    assert ct.payload_texts({"tool_input": {"content": {"x": Odd()}}})[1] == [("tool_input.content", "x\nodd D-5")]


def test_a_deeply_nested_field_is_walked_without_recursion():
    value = "D-9"
    for _ in range(5000):
        value = [value]
    assert ct.payload_texts({"tool_input": {"content": value}})[1] == [("tool_input.content", "D-9")]


@pytest.mark.parametrize("payload, path", [
    ({"tool_input": {"file_path": "/a", "notebook_path": "/b"}}, "/a"),
    ({"tool_input": {"notebook_path": "/b"}}, "/b"),
    ({"tool_input": {"file_path": ""}, "file_path": "/top"}, "/top"),
    ({"tool_input": {"file_path": "/in"}, "file_path": "/top"}, "/in"),
    ({"tool_input": {"file_path": 5}}, None),
    ({"tool_input": {}}, None),
])
def test_payload_path(payload, path):
    assert ct.payload_texts(payload)[0] == path


@pytest.mark.parametrize("payload", [None, [], "text", 3, ["tool_input"]])
def test_non_object_payloads_give_nothing(payload):
    assert ct.payload_texts(payload) == (None, [])


# --- skip list ----------------------------------------------------------------------------------

LEDGER_NAMES = [".wolf/decisions.md", "DECISIONS.md"]


@pytest.mark.parametrize("path, fixtures, reason", [
    ("/repo/.wolf/decisions.md", "", "ledger file"),
    ("/repo/sub/DECISIONS.md", "", "ledger file"),
    ("/repo/./.wolf/../.wolf/decisions.md", "", "ledger file"),
    ("/repo/decisions.md", "", None),
    ("/repo/wolf/decisions.md", "", None),
    ("/repo/MY-DECISIONS.md", "", None),
    ("/repo/DECISIONS.md.bak", "", None),
    ("/repo/.claude/hooks/fixture.json", "/repo/.claude/hooks", "fixtures directory"),
    ("/repo/.claude/hooks/deep/x.md", "/repo/.claude/hooks/", "fixtures directory"),
    ("/repo/.claude/hooks2/x.md", "/repo/.claude/hooks", None),
    ("/repo/.claude/hooks", "/repo/.claude/hooks", None),
    ("/repo/docs/a.md", "/repo/.claude/hooks", None),
    ("/repo/docs/a.md", "", None),
    (None, "/repo", None),
    ("", "/repo", None),
])
def test_skip_reason(path, fixtures, reason):
    assert ct.skip_reason(path, LEDGER_NAMES, fixtures) == reason


def test_fixtures_dir_at_the_root_skips_everything():
    assert ct.skip_reason("/repo/a.md", LEDGER_NAMES, "/") == "fixtures directory"


def test_skip_reason_resolves_a_relative_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert ct.skip_reason("fixtures/x.md", LEDGER_NAMES, str(tmp_path / "fixtures")) == "fixtures directory"
    assert ct.skip_reason("x.md", LEDGER_NAMES, "fixtures") is None
    assert ct.skip_reason("sub/x.md", LEDGER_NAMES, "sub") == "fixtures directory"


# --- the decision -------------------------------------------------------------------------------

@pytest.fixture
def fixture_ledger_loaded(fixture_ledger):
    return ct.load_ledgers([str(fixture_ledger)], PATTERN)


def test_clean_citation_passes(fixture_ledger_loaded, ledger_ids):
    result = decide_text(f"Per {ledger_ids['live'][0]} and {ledger_ids['live'][-1].lower()}.", fixture_ledger_loaded)
    assert result == {"verdict": "pass", "blocks": [], "warnings": [], "bypassed": False}


@pytest.mark.parametrize("case", ["upper", "lower"])
def test_fabricated_id_blocks_with_the_full_refusal(fixture_ledger_loaded, ledger_ids, case):
    cited = ledger_ids["fabricated"] if case == "upper" else ledger_ids["fabricated"].lower()
    result = decide_text(f"Justified by {cited}.", fixture_ledger_loaded)
    assert result["verdict"] == "block"
    assert result["warnings"] == []
    [message] = result["blocks"]
    top = max(ledger_ids["all"], key=lambda i: int(i[2:]))
    assert message.startswith(f"{ledger_ids['fabricated']} is not in the decision ledger")
    assert f"highest id visible here: {top}" in message
    assert str(fixture_ledger_loaded["sources"][0]) in message
    assert "refresh the ledger from main" in message
    assert "Do not substitute a lower id" in message
    assert ct.BYPASS_MARKER in message


def test_unknown_id_message_in_full(tmp_path):
    (tmp_path / "a.md").write_text("## D-001: a\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("## D-007: b\n", encoding="utf-8")
    ledger = ct.load_ledgers([str(tmp_path / "a.md"), str(tmp_path / "b.md")], PATTERN)
    assert decide_text("per D-030", ledger)["blocks"] == [
        f"D-030 is not in the decision ledger (read: {tmp_path / 'a.md'}, {tmp_path / 'b.md'}; highest id visible "
        "here: D-007). If it was minted recently, refresh the ledger from main (merge or pull main into this "
        "checkout) and retry. Do not substitute a lower id that happens to exist: citing a different decision is "
        "itself a fabrication. To write about an unknown id on purpose (a post-mortem, a bug log), include the "
        f"literal {ct.BYPASS_MARKER}."]


def test_each_fabricated_id_gets_its_own_block(fixture_ledger_loaded, ledger_ids):
    result = decide_text(f"{ledger_ids['fabricated']} D-999 {ledger_ids['live'][0]}", fixture_ledger_loaded)
    assert [b.split()[0] for b in result["blocks"]] == [ledger_ids["fabricated"], "D-999"]


@pytest.mark.parametrize("word", DEAD)
def test_each_dead_status_warns_never_blocks(fixture_ledger_loaded, fixture_ledger, ledger_ids, word):
    entry_id = ledger_ids["dead"][word]
    result = decide_text(f"As {entry_id} says.", fixture_ledger_loaded)
    assert result["verdict"] == "warn" and result["blocks"] == []
    [warning] = result["warnings"]
    line = next(n for n, text in enumerate(fixture_ledger.read_text(encoding="utf-8").splitlines(), 1)
                if text.split()[1:2] in ([entry_id], [entry_id + ":"]))
    assert warning == (f"{entry_id} is cited, but its ledger entry opens {word} ({fixture_ledger}:{line}): "
                       "cite it as history, not as a current rule")


def test_dead_words_are_configurable_and_case_sensitive(tmp_path):
    ledger = ledger_of(tmp_path, "## D-001: Revoked hardware policy\n## D-002: VOID\n")
    assert ct.decide([("c", "D-001 D-002")], ledger, None, PATTERN, DEAD)["verdict"] == "pass"
    result = ct.decide([("c", "D-001 D-002")], ledger, None, PATTERN, ("VOID",))
    assert [w.split()[0] for w in result["warnings"]] == ["D-002"]


def test_dead_in_any_merged_ledger_warns_once(tmp_path):
    (tmp_path / "a.md").write_text("## D-001: Live\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("## D-001: REVOKED\n## D-001: MOOT\n", encoding="utf-8")
    ledger = ct.load_ledgers([str(tmp_path / "a.md"), str(tmp_path / "b.md")], PATTERN)
    result = decide_text("D-001", ledger)
    assert [w for w in result["warnings"] if "opens" in w] == [
        f"D-001 is cited, but its ledger entry opens REVOKED ({tmp_path / 'b.md'}:1): "
        "cite it as history, not as a current rule"]


def test_recorded_owner_ruling_passes_and_unrecorded_warns(fixture_ledger_loaded, fixture_ledger):
    recorded = next(part for part in fixture_ledger.read_text(encoding="utf-8").split() if part.startswith("2026-07"))
    recorded = recorded.rstrip(",.")
    assert decide_text(f"owner ruling {recorded}", fixture_ledger_loaded)["verdict"] == "pass"
    result = decide_text("owner ruling 1999-01-01", fixture_ledger_loaded)
    assert result["verdict"] == "warn" and result["blocks"] == []
    assert result["warnings"] == ["'owner ruling 1999-01-01' names a date the ledger does not contain: "
                                  "record the ruling in the ledger"]


def test_hyphenated_identifier_is_not_a_citation(fixture_ledger_loaded, ledger_ids):
    fake = ledger_ids["fabricated"]
    assert decide_text(f"branch abc-{fake}-x and file_{fake}s", fixture_ledger_loaded)["verdict"] == "pass"


def test_possessive_is_checked_plural_is_not(fixture_ledger_loaded, ledger_ids):
    fake = ledger_ids["fabricated"]
    assert decide_text(f"{fake}'s scope", fixture_ledger_loaded)["verdict"] == "block"
    assert decide_text(f"{fake}s", fixture_ledger_loaded)["verdict"] == "pass"


def test_every_text_of_a_write_is_audited(fixture_ledger_loaded, ledger_ids):
    texts = [("content", f"per {ledger_ids['live'][0]}"), ("edits[2].new_string", f"per {ledger_ids['fabricated']}")]
    assert ct.decide(texts, fixture_ledger_loaded, None, PATTERN, DEAD)["verdict"] == "block"


@pytest.mark.parametrize("texts, verdict", [
    ([("a", "prefix D-"), ("b", "12 suffix")], "pass"),       # "D-" + "12" is not a citation of D-12
    ([("a", "per D-12"), ("b", "3 more")], "block"),          # nor is "D-12" + "3" a citation of D-123 only
    ([("a", "per D-12"), ("b", "x")], "block"),               # an id at the end of one text is still cited
])
def test_texts_are_joined_with_a_line_break(tmp_path, texts, verdict):
    ledger = ledger_of(tmp_path, "## D-10: two-digit ids\n")
    assert ct.decide(texts, ledger, None, PATTERN, DEAD)["verdict"] == verdict


def test_ledger_problems_are_warned_when_ids_are_checked(tmp_path):
    ledger = ledger_of(tmp_path, "## D-001: a\n## D002: b\n")
    result = decide_text("Per D-001.", ledger)
    assert result["warnings"] == [f"ledger {tmp_path / 'decisions.md'}:2: 'D002' looks like ledger id D-002 "
                                  "written without its separator"]
    assert decide_text("No citation here.", ledger)["verdict"] == "pass"


def test_no_ledger_warns_that_ids_were_not_checked():
    result = decide_text("Per D-030, D-031 and owner ruling 2026-01-01, owner ruling 2026-01-02.")
    assert result["verdict"] == "warn"
    assert result["warnings"] == [
        "not checked: D-030, D-031 cited but no decision ledger was found",
        "not checked: owner ruling 2026-01-01, 2026-01-02 cited but no decision ledger was found"]


def test_text_without_citations_passes_without_a_ledger():
    assert decide_text("Nothing cited.") == {"verdict": "pass", "blocks": [], "warnings": [], "bypassed": False}


MEMORY = {"slugs": {"feedback_killed_agent_work_verification", "env_bash_tool_env_var_caching", "project_hot_strip"},
          "sources": ["/mem", "/clusters.md"]}


def test_known_memory_passes():
    assert decide_text("(native memory: feedback_killed_agent_work_verification)", memory=MEMORY)["verdict"] == "pass"


def test_unknown_memory_blocks_naming_the_nearest_slugs():
    result = decide_text("per memory: feedback_killed_agent_verification", memory=MEMORY)
    assert result["verdict"] == "block"
    [message] = result["blocks"]
    assert message.startswith("memory feedback_killed_agent_verification is in neither the memory directory "
                              "nor the cluster file (read: /mem, /clusters.md); nearest existing: "
                              "feedback_killed_agent_work_verification.")
    assert ct.BYPASS_MARKER in message


def test_unknown_memory_message_in_full():
    memory = {"slugs": {"feedback_tabs_a", "feedback_tabs_b", "zzz"}, "sources": ["/mem", "/c.md"]}
    assert decide_text("memory: feedback_tabs_c", memory=memory)["blocks"] == [
        "memory feedback_tabs_c is in neither the memory directory nor the cluster file (read: /mem, /c.md); "
        "nearest existing: feedback_tabs_b, feedback_tabs_a. Cite a memory that exists, or write the memory "
        f"first. To write about a missing memory on purpose, include the literal {ct.BYPASS_MARKER}."]


def test_unknown_memory_with_nothing_close():
    result = decide_text("memory: zzz_qqq_www", memory=MEMORY)
    assert result["blocks"][0].startswith("memory zzz_qqq_www is in neither the memory directory nor the cluster "
                                          "file (read: /mem, /clusters.md); no existing slug is close. Cite")


def test_nearest_slugs_are_at_most_three():
    memory = {"slugs": {f"feedback_item_{n}" for n in range(10)}, "sources": ["/m"]}
    message = decide_text("memory: feedback_item_x", memory=memory)["blocks"][0]
    assert message.split("nearest existing: ")[1].split(".")[0].count(",") == 2


def test_no_memory_store_warns_that_memories_were_not_checked():
    result = decide_text("memory: feedback_x_y, memory: feedback_z")
    assert result == {"verdict": "warn", "blocks": [], "bypassed": False,
                      "warnings": ["not checked: memory feedback_x_y, feedback_z cited but no memory directory or "
                                   "cluster file was found"]}


def test_bypass_lets_the_write_through_and_announces_it(fixture_ledger_loaded, ledger_ids):
    text = f"Post-mortem: {ledger_ids['fabricated']} never existed. {ct.BYPASS_MARKER}"
    result = decide_text(text, fixture_ledger_loaded, MEMORY)
    assert result["verdict"] == "warn" and result["blocks"] == [] and result["bypassed"] is True
    assert result["warnings"][0] == f"citation gate bypassed by the literal {ct.BYPASS_MARKER}: 1 citation(s) not enforced"
    assert result["warnings"][1].startswith(f"not enforced: {ledger_ids['fabricated']} is not in the decision ledger")


def test_bypass_announces_itself_even_when_nothing_was_blocked():
    result = decide_text(f"clean text {ct.BYPASS_MARKER}")
    assert result == {"verdict": "warn", "blocks": [], "bypassed": True, "warnings": [
        f"citation gate bypassed by the literal {ct.BYPASS_MARKER}: nothing would have been blocked"]}


def test_bypass_marker_in_a_later_text_counts(fixture_ledger_loaded, ledger_ids):
    texts = [("a", ledger_ids["fabricated"]), ("b", ct.BYPASS_MARKER)]
    assert ct.decide(texts, fixture_ledger_loaded, None, PATTERN, DEAD)["verdict"] == "warn"


def test_bypass_marker_is_literal():
    assert decide_text("Citation-Check: Allow-Unknown-IDs")["bypassed"] is False


def test_render_lists_blocks_then_warnings():
    result = {"blocks": ["b1"], "warnings": ["w1", "w2"]}
    assert ct.render(result) == "BLOCKED: b1\nwarning: w1\nwarning: w2"
    assert ct.render({"blocks": [], "warnings": []}) == ""


def test_decision_is_json_serialisable(fixture_ledger_loaded, ledger_ids):
    json.dumps(decide_text(ledger_ids["fabricated"], fixture_ledger_loaded))


def test_skip_reason_uses_os_separators(monkeypatch):
    # The ledger names use "/" whatever the platform; a path is compared in "/" form.
    assert ct.skip_reason(os.path.join(os.sep, "r", ".wolf", "decisions.md"), LEDGER_NAMES, "") == "ledger file"


# --- caps (issue 24 item 10) --------------------------------------------------------------------

def test_warnings_are_capped_with_a_count_of_the_rest(tmp_path):
    ledger = ledger_of(tmp_path, "".join(f"## D-{n:03d}: REVOKED\n" for n in range(1, 21)))
    result = decide_text(" ".join(f"D-{n:03d}" for n in range(1, 21)), ledger)
    assert len(result["warnings"]) == ct.MAX_WARNINGS + 1 == 13
    assert result["warnings"][-2].startswith("D-012 is cited, but its ledger entry opens REVOKED")
    assert result["warnings"][-1] == "and 8 more warnings"


def test_exactly_the_cap_of_warnings_adds_no_count(tmp_path):
    ledger = ledger_of(tmp_path, "".join(f"## D-{n:03d}: REVOKED\n" for n in range(1, 13)))
    result = decide_text(" ".join(f"D-{n:03d}" for n in range(1, 13)), ledger)
    assert len(result["warnings"]) == 12 and result["warnings"][-1].startswith("D-012 is cited")


@pytest.mark.parametrize("count, tail", [(10, "D-010 cited"), (11, "D-010 and 1 more cited"), (15, "D-010 and 5 more cited")])
def test_listings_name_at_most_ten(count, tail):
    [warning] = decide_text(" ".join(f"D-{n:03d}" for n in range(1, count + 1)))["warnings"]
    assert warning == "not checked: " + ", ".join(f"D-{n:03d}" for n in range(1, 11)) + tail[5:] + \
        " but no decision ledger was found"


def test_blocks_are_capped_and_the_rest_named(fixture_ledger_loaded, ledger_ids):
    fakes = [f"D-{n}" for n in range(901, 908)]
    result = decide_text(" ".join(fakes), fixture_ledger_loaded)
    assert [block.split()[0] for block in result["blocks"][:5]] == fakes[:5]
    assert result["blocks"][5] == "and 2 more citations of ids or memories that do not exist: D-906, D-907"
    assert len(result["blocks"]) == ct.MAX_BLOCKS + 1


def test_exactly_the_cap_of_blocks_adds_no_count(fixture_ledger_loaded):
    assert len(decide_text(" ".join(f"D-{n}" for n in range(901, 906)), fixture_ledger_loaded)["blocks"]) == 5


def test_a_bypass_counts_every_block_not_only_the_listed(fixture_ledger_loaded):
    result = decide_text(" ".join(f"D-{n}" for n in range(901, 908)) + " " + ct.BYPASS_MARKER, fixture_ledger_loaded)
    assert result["warnings"][0].endswith("7 citation(s) not enforced")
    assert result["warnings"][6] == "not enforced: and 2 more citations of ids or memories that do not exist: D-906, D-907"


@pytest.mark.parametrize("digits, shown", [(57, "D-" + "1" * 57), (58, "D-" + "1" * 58), (59, "D-" + "1" * 55 + "...")])
def test_a_long_id_is_cut_in_messages(digits, shown):
    [warning] = decide_text("D-" + "1" * digits)["warnings"]
    assert warning == f"not checked: {shown} cited but no decision ledger was found"


def test_memory_listings_are_capped_and_cut():
    slugs = [f"feedback_{n:02d}" for n in range(12)] + ["feedback_" + "x" * 70]
    [warning] = decide_text(" ".join(f"memory: {slug}" for slug in slugs))["warnings"]
    assert warning == ("not checked: memory " + ", ".join(slugs[:10]) + " and 3 more cited but no memory directory "
                       "or cluster file was found")
    [warning] = decide_text("memory: feedback_" + "x" * 70)["warnings"]
    assert "memory feedback_" + "x" * 48 + "... cited" in warning


def test_doubtful_ids_are_listed_once_with_their_reasons(fixture_ledger_loaded):
    [warning] = decide_text("`D-901` and D-1 and a Nikon D-902 and `D-901`", fixture_ledger_loaded)["warnings"]
    assert warning == ("not blocked, as these may not be citations, but the ledger lacks them: D-901 (inside code), "
                       "D-1 (not written the way the ledger writes its ids, such as D-001), D-902 (after the name "
                       "'Nikon'). If one is a citation, cite an id the ledger holds")


def test_a_certain_occurrence_makes_a_doubtful_id_block(fixture_ledger_loaded):
    assert decide_text("`D-901` then per D-901", fixture_ledger_loaded)["verdict"] == "block"
    assert decide_text("per d-901 and `D-901`", fixture_ledger_loaded)["verdict"] == "block"


def test_lower_case_prose_of_another_shape_is_dropped_but_upper_case_warns(fixture_ledger_loaded):
    assert decide_text("so x = d-1 here", fixture_ledger_loaded)["verdict"] == "pass"
    assert decide_text("so x = d-1 and `D-1` here", fixture_ledger_loaded)["warnings"][0].endswith(
        "d-1 (not written the way the ledger writes its ids, such as D-001). If one is a citation, cite an id the "
        "ledger holds")


def test_doubtful_memories_are_listed_with_their_reasons():
    memory = {"slugs": {"project_hot_strip"}, "sources": ["/m"]}
    [warning] = decide_text("Shared memory: read-only; memory: a_b.c; memory: project_hot_strip.", memory=memory)[
        "warnings"]
    assert warning == ("not blocked, as these may not be memory citations, but neither the memory directory nor the "
                       "cluster file holds them: read-only (a hyphenated word), a_b.c (a dotted name)")


def test_exactly_three_ledger_problems_add_no_count(tmp_path):
    ledger = ledger_of(tmp_path, "## D-001: a\n## D002: b\n## D003: c\n## D004: d\n")
    result = decide_text("Per D-001.", ledger)
    assert [w.split(": ", 1)[0] for w in result["warnings"]] == [f"ledger {tmp_path / 'decisions.md'}:{n}" for n in (2, 3, 4)]


def test_a_citation_after_a_dropped_one_is_still_checked(fixture_ledger_loaded):
    assert decide_text("x = d-1 and D-999", fixture_ledger_loaded)["blocks"][0].startswith("D-999 is not in")


def test_a_missing_memory_after_a_known_one_blocks():
    memory = {"slugs": {"project_hot_strip"}, "sources": ["/m"]}
    result = decide_text("per memory: project_hot_strip and per memory: feedback_missing", memory=memory)
    assert [block.split()[1] for block in result["blocks"]] == ["feedback_missing"]


def test_blocks_of_ids_and_memories_share_the_cap(fixture_ledger_loaded):
    memory = {"slugs": {"project_hot_strip"}, "sources": ["/m"]}
    text = "D-901 D-902 D-903; " + ", ".join(f"memory: feedback_{n}_x" for n in range(4))
    blocks = decide_text(text, fixture_ledger_loaded, memory)["blocks"]
    assert [block.split()[0] for block in blocks[:5]] == ["D-901", "D-902", "D-903", "memory", "memory"]
    assert blocks[3].startswith("memory feedback_0_x is in neither") and blocks[4].startswith("memory feedback_1_x")
    assert blocks[5] == "and 2 more citations of ids or memories that do not exist: feedback_2_x, feedback_3_x"


def test_memory_blocks_alone_are_capped():
    memory = {"slugs": {"project_hot_strip"}, "sources": ["/m"]}
    blocks = decide_text(", ".join(f"memory: feedback_{n}_x" for n in range(6)), memory=memory)["blocks"]
    assert len(blocks) == 6 and blocks[5] == "and 1 more citations of ids or memories that do not exist: feedback_5_x"


def test_a_bypass_counts_missing_ids_and_memories_together(fixture_ledger_loaded):
    memory = {"slugs": {"project_hot_strip"}, "sources": ["/m"]}
    text = f"D-901; per memory: feedback_a_x, memory: feedback_b_x {ct.BYPASS_MARKER}"
    result = decide_text(text, fixture_ledger_loaded, memory)
    assert result["warnings"][0].endswith("3 citation(s) not enforced")
