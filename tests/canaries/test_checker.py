"""The typed field reads a suite check is written in (canaries/checker.py): each wrong value is a
problem on its own line, with a fix, and reading goes on after it."""

from canaries.checker import Checker, type_name
from canaries.yamllines import compose_located


def read(text):
    problems = []
    return Checker(problems), compose_located(text, problems), problems


def test_type_names_say_what_was_written():
    assert [type_name(v) for v in (None, True, 3, "x", [], {})] == [
        "nothing", "a boolean (true)", "a number (3)", "a string ('x')", "a list", "a mapping"]


def test_every_wrong_field_is_reported_on_its_line_and_the_rest_still_read():
    checker, data, problems = read("a: 5\nb: [x, x]\nc: -1\nd: yes please\ne: 2.5\nf: true\ng: [p, q]\n")
    assert checker.string(data, "a") is None
    assert checker.string_list(data, "b") is None
    assert checker.integer(data, "c") is None
    assert checker.boolean(data, "d") is None
    assert (checker.number(data, "e"), checker.boolean(data, "f")) == (2.5, True)
    assert checker.string_list(data, "g") == [("p", 7), ("q", 7)]
    assert [(p.line, p.message.split(",")[0]) for p in problems] == [
        (1, "'a' must be a non-empty string"), (2, "'x' is listed twice in 'b'"),
        (3, "'c' must be a whole number >= 0"), (4, "'d' must be true or false")]
    assert all(p.fix for p in problems)


def test_a_missing_required_string_names_the_key_and_an_absent_optional_is_no_problem():
    checker, data, problems = read("x: 1\n")
    assert checker.string(data, "prompt", required=True, what="case") is None
    assert checker.string(data, "note") is None and checker.integer(data, "max_lines") is None
    assert [(p.line, p.message) for p in problems] == [(1, "case has no 'prompt'")]


def test_ids_must_be_well_formed_and_unique():
    checker, data, problems = read("- id: first\n- id: first\n- id: -bad\n")
    seen = {}
    assert [checker.case_id(item, seen, "case") for item in data] == ["first", None, None]
    assert [(p.line, p.message) for p in problems] == [
        (2, "duplicate id 'first' (first on line 1)"), (3, "invalid id '-bad'")]


def test_unknown_keys_are_each_reported_with_the_known_ones():
    checker, data, problems = read("prompt: x\nroute: y\n")
    checker.unknown_keys(data, ("prompt", "routes_to"), "case")
    assert [(p.line, p.message, p.fix) for p in problems] == [
        (2, "unknown key 'route' in case", "use one of: prompt, routes_to")]
