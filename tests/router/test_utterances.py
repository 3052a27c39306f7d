"""router/store/utterances.py: the utterances file format, its reader and its renderer."""

import pytest

from router.store.utterances import (
    COLUMNS,
    MAX_UTTERANCE_CHARS,
    Utterance,
    UtterancesFileError,
    memory_text_hash,
    parse_utterances_text,
    read_utterances,
    render_utterances,
    utterances_by_slug,
)

HEAD = "\t".join(COLUMNS)
GOOD = "env_bash_tool\tmy env var is empty in the bash tool\t3f2a9c0d1e7b4a55\tclaude\thaiku\t2026-12-01T21:00:00Z"


def row(slug="env_bash_tool", text="why is my variable empty", digest="3f2a9c0d1e7b4a55", engine="claude",
        model="haiku", written="2026-12-01T21:00:00Z"):
    return "\t".join((slug, text, digest, engine, model, written))


def test_render_then_parse_gives_the_rows_back():
    rows = [Utterance("a_b", "first\tone", "-", "hand", "-", "2026-12-01T21:00:00Z", 0),
            Utterance("c_d", "second", "0123456789abcdef", "blind", "fixture", "2026-12-01T21:00:01Z", 0)]
    text = render_utterances(rows)
    assert text.startswith("# memory-router utterances")
    back = parse_utterances_text(text)
    assert [(r.slug, r.text, r.memory_hash, r.engine, r.model, r.written) for r in back] == [
        ("a_b", "first one", "-", "hand", "-", "2026-12-01T21:00:00Z"),
        ("c_d", "second", "0123456789abcdef", "blind", "fixture", "2026-12-01T21:00:01Z")]
    assert [r.line for r in back] == [7, 8]


@pytest.mark.parametrize("line, field, words", [
    ("env_bash_tool\tx", 0, "expected 6 tab-separated fields"),
    (row(slug="Bad-Slug"), 0, "invalid slug"),
    (row(text=" "), 1, "empty utterance"),
    (row(text="x" * (MAX_UTTERANCE_CHARS + 1)), 1, "characters (at most"),
    (row(digest="xyz"), 2, "is not 16 hex digits"),
    (row(engine="Claude Code"), 3, "invalid engine"),
    (row(model=" "), 4, "empty model"),
    (row(written="2026-12-01 21:00"), 5, "is not a UTC time"),
])
def test_a_damaged_row_names_its_line_and_column(line, field, words):
    text = HEAD + "\n" + line + "\n"
    with pytest.raises(UtterancesFileError) as err:
        parse_utterances_text(text, "u.tsv")
    assert words in str(err.value)
    assert err.value.line == 2
    assert err.value.column == 1 + sum(len(part) + 1 for part in line.split("\t")[:field])
    assert err.value.fix


def test_the_column_row_is_required():
    with pytest.raises(UtterancesFileError) as err:
        parse_utterances_text(GOOD + "\n", "u.tsv")
    assert err.value.line == 1 and "column row" in str(err.value)


def test_comments_and_blank_lines_are_skipped():
    rows = parse_utterances_text("# a comment\n\n" + HEAD + "\n# another\n" + GOOD + "\n")
    assert [r.slug for r in rows] == ["env_bash_tool"] and rows[0].line == 5


def test_a_missing_file_has_no_rows_and_an_unreadable_one_is_an_error(tmp_path):
    assert read_utterances(tmp_path / "none.utterances.tsv") == []
    bad = tmp_path / "bad.utterances.tsv"
    bad.write_bytes((HEAD + "\n").encode() + b"a_b\t\xff\xfe\t-\thand\t-\t2026-12-01T21:00:00Z\n")
    with pytest.raises(UtterancesFileError):
        read_utterances(bad)


def test_utterances_by_slug_keeps_file_order_and_drops_duplicates():
    rows = parse_utterances_text(HEAD + "\n" + "\n".join([row(text="one"), row(text="two"), row(text="one"),
                                                          row(slug="other", text="three")]) + "\n")
    assert utterances_by_slug(rows) == {"env_bash_tool": ("one", "two"), "other": ("three",)}


def test_memory_text_hash_is_sixteen_hex_digits_of_the_text():
    digest = memory_text_hash("a hook line\nits body")
    assert len(digest) == 16 and int(digest, 16) >= 0
    assert digest != memory_text_hash("a hook line")
    assert memory_text_hash("same") == memory_text_hash("same")


# --- issue 30 items 6 and 7: line splitting, control and separator characters, real times

@pytest.mark.parametrize("char, name", [
    ("\u2028", "LINE SEPARATOR"), ("\u2029", "PARAGRAPH SEPARATOR"), ("\x0c", "FORM FEED"),
    ("\x1c", "FILE SEPARATOR"), ("\x1d", "GROUP SEPARATOR"), ("\x1e", "RECORD SEPARATOR"), ("\x85", "NEXT LINE"),
    ("\x0b", "LINE TABULATION"), ("\r", "CARRIAGE RETURN"), ("\x01", "CONTROL CHARACTER"), ("\x7f", "DELETE"),
])
def test_a_separator_inside_a_field_is_refused_by_name_at_its_line_and_column(char, name):
    """str.splitlines() broke the row there: "expected 6 tab-separated fields, got 2", with a fix
    the row already followed."""
    text = f"# header\n{HEAD}\n{row(text='why is my' + char + 'variable empty')}\n{row()}\n"
    with pytest.raises(UtterancesFileError) as caught:
        parse_utterances_text(text, "u.tsv")
    message = str(caught.value)
    column = len("env_bash_tool\twhy is my") + 1
    assert message.startswith(f"u.tsv:3:{column}: U+{ord(char):04X} {name} in column 2 (utterance)")
    assert "fix: remove it" in message


def test_lines_end_at_newline_and_crlf_only_and_a_comment_keeps_the_numbering():
    """A comment holding U+2028 counted as two lines: a later error was reported past the end."""
    text = f"# a comment\u2028with a separator\x0cand a form feed\r\n{HEAD}\r\n{row()}\r\n{row(written='2026-12-01T21:00:60Z')}\n"
    with pytest.raises(UtterancesFileError) as caught:
        parse_utterances_text(text, "u.tsv")
    assert str(caught.value).startswith("u.tsv:4:")
    assert [r.line for r in parse_utterances_text(text.rsplit("\n", 2)[0] + "\n")] == [3]


@pytest.mark.parametrize("written, words", [
    ("2026-13-45T99:99:99Z", "there is no month 13"),
    ("2026-02-29T10:00:00Z", "2026-02 has no day 29"),
    ("2026-04-31T10:00:00Z", "2026-04 has no day 31"),
    ("2026-12-01T24:00:00Z", "there is no 24:00:00 in a day"),
    ("2026-12-01T21:60:00Z", "there is no 21:60:00"),
    ("\u0662\u0660\u0662\u0666-12-01T21:00:00Z", "is not a UTC time like"),     # digits, but not ASCII
])
def test_an_impossible_time_is_refused_with_its_column_and_the_fix(written, words):
    with pytest.raises(UtterancesFileError) as caught:
        parse_utterances_text(f"{HEAD}\n{row(written=written)}\n", "u.tsv")
    column = len(row()) - len("2026-12-01T21:00:00Z") + 1
    assert str(caught.value).startswith(f"u.tsv:2:{column}: written {written!r}")
    assert words in str(caught.value) and "fix: write a real UTC time" in str(caught.value)


def test_a_real_leap_day_is_a_time():
    assert parse_utterances_text(f"{HEAD}\n{row(written='2028-02-29T23:59:59Z')}\n")[0].written == "2028-02-29T23:59:59Z"
