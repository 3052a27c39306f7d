"""Reading an engine's answer: parsed, then checked against the shipped schema; what breaks it is dropped and said."""

import jsonschema
import pytest

from harness.clusters import enrich_answers as answers
from harness.clusters import enrich_protocol as protocol
from harness.clusters.enrich_plan import MemoryText
from router.store.clusterfile import Cluster, Member

CLUSTER = Cluster("layer1_tools", 2, False, ("pnpm", "lockfile"), "package tools",
                  (Member("env_pnpm_store", "env", "pnpm store on D:", 0),
                   Member("feedback_bun_scripts", "feedback", "use bun for scripts", 0)), 0)
MEMORIES = (MemoryText("env_pnpm_store", "env", "pnpm store on D:", "The store lives on D:.", "0" * 16),
            MemoryText("feedback_bun_scripts", "feedback", "use bun for scripts", "", "1" * 16))


def valid(kind, value):
    return protocol.validator(kind).is_valid(value)


# --------------------------------------------------------------------------- answers

SLUGS = ["env_pnpm_store", "feedback_bun_scripts"]


def test_a_good_answer_is_kept_whole_and_matches_the_schema():
    answer = {"utterances": {"env_pnpm_store": ["where is my pnpm store", "disk D full of packages"],
                             "feedback_bun_scripts": ["run the build script"]}}
    assert valid("enrich_answer", answer)
    check = answers.check_enrich_answer(answer, SLUGS, 10)
    assert check.refused is None and check.notes == []
    assert check.utterances == answer["utterances"]


REFUSED_ANSWERS = [
    ("a list", ["how do i"], "not {\"utterances\""),
    ("a string", "utterances", "got str"),
    ("no utterances key", {"answers": {}}, "without an \"utterances\" object"),
    ("utterances a list", {"utterances": ["a"]}, "without an \"utterances\" object"),
    ("only slugs not asked for", {"utterances": {"other": ["a"]}}, "no usable utterance"),
    ("only non-strings", {"utterances": {"env_pnpm_store": [1, None, {"a": 1}]}}, "no usable utterance"),
    ("only empty strings", {"utterances": {"env_pnpm_store": ["", "   "]}}, "no usable utterance"),
]


@pytest.mark.parametrize("why, answer, reason", REFUSED_ANSWERS, ids=[a[0] for a in REFUSED_ANSWERS])
def test_an_answer_with_nothing_usable_is_refused_whole(why, answer, reason):
    check = answers.check_enrich_answer(answer, SLUGS, 10)
    assert check.utterances == {} and reason in check.refused
    assert not valid("enrich_answer", answer) or why == "only slugs not asked for"


TRIMMED = [
    ("over 200 characters", ["ok", "x" * 201], ["ok"], "dropped 1 utterance(s) over 200 characters"),
    ("exactly 200 characters", ["y" * 200], ["y" * 200], None),
    ("past per_memory", ["a", "b", "c", "d"], ["a", "b", "c"], "dropped 1 utterance(s) past 3 per memory"),
    ("non-strings", ["a", 7, None], ["a"], "dropped 2 utterance(s) not a string"),
    ("repeated", ["Same words", "same  words"], ["Same words"], "dropped 1 utterance(s) repeated"),
    ("escape sequence", ["a", "\x1b[31mred"], ["a"], "dropped 1 utterance(s) with control or invisible characters"),
    ("bidi override", ["a", "abc\u202edef"], ["a"], "with control or invisible characters"),
    ("tabs and newlines folded", ["one\ttwo\nthree"], ["one two three"], None),
]


@pytest.mark.parametrize("why, given, kept, note", TRIMMED, ids=[t[0] for t in TRIMMED])
def test_a_bad_utterance_is_dropped_and_said(why, given, kept, note):
    check = answers.check_enrich_answer({"utterances": {"env_pnpm_store": given}}, ["env_pnpm_store"], 3)
    assert check.refused is None
    assert check.utterances == {"env_pnpm_store": kept}
    if note is None:
        assert check.notes == []
    else:
        assert any(note in n for n in check.notes), check.notes


def test_slugs_not_asked_for_and_missing_slugs_are_said_in_notes():
    answer = {"utterances": {"env_pnpm_store": ["a"], "rm_rf_everything": ["b"], "x\x1b[2J": ["c"]}, "extra": 1}
    check = answers.check_enrich_answer(answer, SLUGS, 10)
    assert check.utterances == {"env_pnpm_store": ["a"]}
    joined = " | ".join(check.notes)
    assert "ignored 2 slug(s) not asked for: 'rm_rf_everything', 'x\\\\x1b[2J'" in joined
    assert "nothing usable for feedback_bun_scripts (asked again next run)" in joined
    assert "ignored 1 key(s) besides \"utterances\"" in joined
    assert "\x1b" not in joined


def test_a_value_that_is_not_a_list_is_refused_for_that_slug():
    check = answers.check_enrich_answer({"utterances": {"env_pnpm_store": "a b c",
                                                         "feedback_bun_scripts": ["ok"]}}, SLUGS, 10)
    assert check.utterances == {"feedback_bun_scripts": ["ok"]}
    assert any("not a list for env_pnpm_store" in n for n in check.notes)


PARSED = [
    ("plain", '{"utterances": {}}', {"utterances": {}}),
    ("surrounding space", '\n  {"a": 1}  \n', {"a": 1}),
    ("fenced json", '```json\n{"a": 1}\n```', {"a": 1}),
    ("fenced bare", '```\n[1]\n```', [1]),
    ("bytes", b'{"a": 1}', {"a": 1}),
]


@pytest.mark.parametrize("why, text, value", PARSED, ids=[p[0] for p in PARSED])
def test_parse_answer_text_reads_json_or_one_fenced_block(why, text, value):
    assert answers.parse_answer_text(text) == value


NOT_PARSED = [
    ("prose", "Sure! Here you go: {}", "not JSON"),
    ("prose then fence", 'Here:\n```json\n{"a": 1}\n```', "not JSON"),
    ("two objects", '{"a": 1}\n{"b": 2}', "not JSON"),
    ("empty", "   ", "empty"),
    ("not utf-8", b"\xff\xfe{}", "not UTF-8"),
    ("flood", b" " * (answers.MAX_ANSWER_BYTES + 1), "bytes (at most"),
    ("nested too deep", "[" * 100000 + "]" * 100000, "nested too deep"),
]


@pytest.mark.parametrize("why, text, reason", NOT_PARSED, ids=[p[0] for p in NOT_PARSED])
def test_parse_answer_text_refuses_anything_else(why, text, reason):
    with pytest.raises(answers.AnswerError, match=reason.replace("(", r"\(")):
        answers.parse_answer_text(text)


def test_show_escapes_and_shortens_what_a_model_wrote():
    assert answers.show("\x1b[31m" + "z" * 100) == repr("\\x1b[31m" + "z" * 32 + "...")
    assert answers.show({"k": "\u202e"}) == repr('{"k": "\\u202e"}')


# --------------------------------------------------------------------------- label answers

EVERYDAY = {"working", "failed", "error"}.__contains__


def test_a_good_label_answer_is_kept():
    answer = {"cluster": {"id": "pnpm_store", "label": "pnpm and bun", "tags": ["pnpm", "Bun", "lockfile"]}}
    assert valid("label_answer", {"cluster": {**answer["cluster"], "tags": ["pnpm", "bun", "lockfile"]}})
    check = answers.check_label_answer(answer, taken_ids={"layer1_other"}, is_everyday=EVERYDAY)
    assert check == answers.LabelCheck("layer1_pnpm_store", "pnpm and bun", ("pnpm", "bun", "lockfile"), [], None)


LABEL_CASES = [
    ("id taken", {"id": "layer1_other"}, "cluster_id", None, "id 'layer1_other' refused"),
    ("id with spaces", {"id": "pnpm store"}, "cluster_id", None, "refused"),
    ("id too long", {"id": "a" * 41}, "cluster_id", None, "refused"),
    ("id not a string", {"id": 5}, "cluster_id", None, "refused"),
    ("label too long", {"label": "l" * 81}, "label", None, "label"),
    ("label with escape", {"label": "\x1b[2Jhi"}, "label", None, "label"),
    ("everyday tag", {"tags": ["pnpm", "working"]}, "tags", ("pnpm",), "dropped 1 tag(s)"),
    ("two-word tag", {"tags": ["pnpm", "lock file"]}, "tags", ("pnpm",), "dropped 1 tag(s)"),
    ("claimed tag", {"tags": ["pnpm", "docker"]}, "tags", ("pnpm",), "another cluster's"),
    ("too many tags", {"tags": list("abcdefgh")}, "tags", tuple("abcdef"), None),
]


@pytest.mark.parametrize("why, change, field, expected, note", LABEL_CASES, ids=[c[0] for c in LABEL_CASES])
def test_a_bad_part_of_a_label_answer_is_dropped(why, change, field, expected, note):
    cluster = {"id": "fine_id", "label": "fine", "tags": ["pnpm", "bun", "lockfile"], **change}
    check = answers.check_label_answer({"cluster": cluster}, taken_ids={"layer1_other"}, is_everyday=EVERYDAY,
                                        claimed={"docker"})
    assert check.refused is None
    assert getattr(check, field) == expected
    if note:
        assert any(note in n for n in check.notes), check.notes


def test_a_label_answer_with_nothing_usable_is_refused():
    assert answers.check_label_answer(["x"]).refused
    check = answers.check_label_answer({"cluster": {"id": "Bad Id", "label": "", "tags": ["working"]}},
                                        is_everyday=EVERYDAY)
    assert check.refused == "nothing usable in the answer (no valid id, label or tag)"


def test_the_tool_schema_names_exactly_the_asked_slugs():
    request = protocol.enrich_request(CLUSTER, MEMORIES, 4)
    schema = answers.answer_tool_schema(request)
    inner = schema["properties"]["utterances"]
    assert inner["required"] == SLUGS and inner["additionalProperties"] is False
    assert inner["properties"]["env_pnpm_store"]["maxItems"] == 4
    jsonschema.Draft202012Validator.check_schema(schema)
    label = answers.answer_tool_schema(protocol.label_request(CLUSTER, MEMORIES))
    assert label["required"] == ["cluster"]


def test_schema_errors_give_the_path_of_what_goes():
    answer = {"utterances": {"env_pnpm_store": ["fine", 7, "x" * 201, "\x1b[2J"], "feedback_bun_scripts": "a b"}}
    assert answers.schema_errors("enrich_answer", answer) == {
        ("utterances", "env_pnpm_store", 1): ["type"], ("utterances", "env_pnpm_store", 2): ["maxLength"],
        ("utterances", "env_pnpm_store", 3): ["pattern"], ("utterances", "feedback_bun_scripts"): ["type"]}
    assert protocol.field_name(("utterances", "env_pnpm_store", 3)) == "utterances.env_pnpm_store[3]"
    assert protocol.field_name(()) == "the answer"


def test_the_schema_takes_tabs_and_line_breaks_and_refuses_other_controls():
    assert valid("utterance", "one\ttwo\nthree\r")
    assert not valid("utterance", "next line\x85here") and not valid("utterance", "bell\x07")
    check = answers.check_enrich_answer({"utterances": {"env_pnpm_store": ["ok", "c1\x85control"]}},
                                        ["env_pnpm_store"], 3)
    assert check.utterances == {"env_pnpm_store": ["ok"]}
    assert check.notes == ["dropped 1 utterance(s) with control or invisible characters"]
