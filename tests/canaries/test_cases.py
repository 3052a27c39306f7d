"""canaries/cases.py: SuiteError's order, text and dict; a case's expectations; suite lookups.

Loading real suite files into these records is tested in test_suite.py."""

import pytest

from canaries.cases import BehaviouralCase, Case, Problem, SessionCase, SessionStep, Suite, SuiteError
from router.errors import InputError

PATH = "suite.yaml"


@pytest.mark.parametrize("problems, order", [
    # by line, then column; a problem with no line (the whole file) comes first
    ([Problem(5, 1, "e"), Problem(2, 9, "b")], ["b", "e"]),
    ([Problem(1, None, "line one"), Problem(None, None, "whole file")], ["whole file", "line one"]),
    ([Problem(3, 4, "x"), Problem(3, 2, "y")], ["y", "x"]),
    ([Problem(3, 1, "x"), Problem(3, None, "y")], ["y", "x"]),
])
def test_problems_are_sorted_by_line_then_column(problems, order):
    assert [p.message for p in SuiteError(PATH, problems).problems] == order


def test_error_attributes_are_those_of_the_first_problem():
    err = SuiteError(PATH, [Problem(9, 2, "later", "fix later"), Problem(4, 7, "first", "fix first")])
    assert isinstance(err, InputError) and err.exit_code == 2
    assert (err.path, err.line, err.column, err.message, err.fix) == (PATH, 4, 7, "first", "fix first")


@pytest.mark.parametrize("problems, text", [
    ([Problem(4, 7, "bad key", "remove it")], "suite.yaml:4:7: bad key (fix: remove it)"),
    ([Problem(None, None, "empty file")], "suite.yaml: empty file"),
    ([Problem(3, None, "no id"), Problem(8, 2, "bad prompt")],
     "suite.yaml:3: no id\nsuite.yaml:8:2: bad prompt\n2 problems in suite.yaml"),
    ([Problem(1, 1, "a"), Problem(2, 1, "b"), Problem(3, 1, "c")],
     "suite.yaml:1:1: a\nsuite.yaml:2:1: b\nsuite.yaml:3:1: c\n3 problems in suite.yaml"),
])
def test_error_text_lists_every_problem(problems, text):
    err = SuiteError(PATH, problems)
    assert err.format() == text
    assert str(err) == text


def test_error_dict():
    err = SuiteError(PATH, [Problem(8, None, "bad prompt"), Problem(3, 5, "no id", "add an id")])
    assert err.to_dict() == {"file": "suite.yaml", "problems": [
        {"line": 3, "column": 5, "message": "no id", "fix": "add an id"},
        {"line": 8, "column": None, "message": "bad prompt", "fix": None},
    ]}


@pytest.mark.parametrize("fields, kinds, expects_route", [
    ({}, [], False),
    ({"routes_to": ("a",), "max_lines": 3}, ["routes_to", "max_lines"], True),
    ({"routes_to": (), "injects": (), "silent": True}, ["silent"], False),   # empty lists check nothing
    ({"injects": ("s",), "min_margin": 0}, ["injects", "min_margin"], True),
    ({"silent": False, "max_chars": 0, "not_injects": ("t",)}, ["not_injects", "silent", "max_chars"], True),
])
def test_case_expectations_and_expects_route(fields, kinds, expects_route):
    case = Case(id="c", prompt="p", **fields)
    assert case.expectations() == kinds
    assert case.expects_route is expects_route


def test_suite_lookups_name_the_missing_id():
    suite = Suite(path=PATH, cluster_path="c.md", defaults={},
                  cases=(Case(id="one", prompt="p1"),),
                  behavioural=(BehaviouralCase(id="fresh", prompt="p2", fact="f", expect_any=("x",)),))
    assert suite.case("one").prompt == "p1"
    assert suite.behavioural_case("fresh").prompt == "p2"
    assert suite.prompts == ["p1", "p2"]
    with pytest.raises(KeyError) as missing_case:
        suite.case("two")
    assert missing_case.value.args == ("two",)
    with pytest.raises(KeyError) as missing_behavioural:
        suite.behavioural_case("one")
    assert missing_behavioural.value.args == ("one",)


def test_suite_session_finds_that_id_among_several():
    sessions = tuple(SessionCase(id=name, steps=(SessionStep(kind="prompt", prompt=name),)) for name in ("a", "b", "c"))
    suite = Suite(path=PATH, cluster_path="c.md", defaults={}, cases=(Case(id="b-case", prompt="p"),), sessions=sessions)
    assert [suite.session(name).id for name in ("c", "a", "b")] == ["c", "a", "b"]
    assert suite.session("b") is sessions[1]
    with pytest.raises(KeyError) as missing:
        suite.session("b-case")     # a routing case's id is not a session's
    assert missing.value.args == ("b-case",)


def test_session_case_prompts_skip_control_steps_and_a_step_lists_its_expectations():
    steps = (SessionStep(kind="prompt", prompt="one", injects=("s",), max_chars=0), SessionStep(kind="compact"),
             SessionStep(kind="clear"), SessionStep(kind="prompt", prompt="two", not_injects=(), silent=False,
                                                     new_lines=0))
    assert SessionCase(id="s", steps=steps).prompts == ["one", "two"]
    assert [step.expectations() for step in steps] == [["injects", "max_chars"], [], [], ["silent", "new_lines"]]
