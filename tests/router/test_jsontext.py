"""Strict JSON for user files: deep nesting and NaN/Infinity found with their line and column."""

import pytest

from router.errors import InputError
from router.jsontext import MAX_JSON_DEPTH, line_column, loads_strict, nonstandard_constant_at, too_deep_at


@pytest.mark.parametrize("text,expected", [
    ("[" * 5 + "]" * 5, None),
    ('{"a": "[[[[[[[[[["}', None),                # brackets inside strings do not count
    ('{"a": "\\"[[[[[[", "b": [[[[[[]]]]]]}', 27),  # the 5th "[" of b opens level 6
])
def test_too_deep_at_skips_strings(text, expected):
    assert too_deep_at(text, limit=5) == expected


@pytest.mark.parametrize("text,expected", [
    ('{"a": NaN}', (6, "NaN")),
    ('[1, -Infinity]', (4, "-Infinity")),
    ('{"NaN": "Infinity", "b": Infinity}', (25, "Infinity")),
    ('{"a": 1}', None),
])
def test_nonstandard_constant_at(text, expected):
    assert nonstandard_constant_at(text) == expected


def test_line_column():
    assert line_column("ab\ncd", 4) == (2, 2)


@pytest.mark.parametrize("text,message,line,column", [
    ("{\n  \"a\": " + "[" * 100_000 + "]" * 100_000 + "}", f"nested more than {MAX_JSON_DEPTH} levels", 2, 7 + MAX_JSON_DEPTH),
    ('{\n "a": [1,\n  NaN]}', "holds NaN", 3, 3),
    ('{"a": Infinity}', "holds Infinity", 1, 7),
    ('{"a": }', "invalid JSON", 1, 7),
])
def test_loads_strict_names_file_line_and_column(text, message, line, column):
    with pytest.raises(InputError) as info:
        loads_strict(text, "settings.json", "settings file", "fix it")
    err = info.value
    assert message in err.message and (err.path, err.line, err.column) == ("settings.json", line, column)
    assert err.exit_code == 2 and err.fix == "fix it"


def test_loads_strict_parses_valid_json():
    assert loads_strict('{"a": [1, 2.5, "NaN"]}', "f", "file", "x") == {"a": [1, 2.5, "NaN"]}
