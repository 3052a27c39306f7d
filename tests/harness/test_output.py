"""harness.output: the one unified diff every --dry-run prints, and the --json encoder."""

import dataclasses
import io
import json

import pytest

from harness.output import print_json, unified_diff


def test_unified_diff_marks_missing_final_newline():
    assert unified_diff("same\n", "same\n", "a", "b") == ""
    diff = unified_diff("one\ntwo", "one\nthree\n", "a", "b")
    assert "-two\n\\ No newline at end of file\n" in diff
    assert "+three\n" in diff


@pytest.mark.parametrize("before, after, head", [
    (b"{}\n", b'{"a": 1}\n', "--- f (now)\n+++ f (after)\n"),              # settings.json bytes
    (None, "x\n", "--- /dev/null\n+++ f (after)\n"),                         # a file not there yet
    ("x\n", None, "--- f (now)\n+++ /dev/null\n"),                           # a file to be deleted
    (b"\xff\n", b"ok\n", "--- f (now)\n+++ f (after)\n"),                    # bad UTF-8 is replaced, not fatal
])
def test_unified_diff_takes_bytes_text_and_absent_files(before, after, head):
    diff = unified_diff(before, after, "f (now)", "f (after)")
    assert diff.startswith(head)


def test_print_json_writes_sets_sorted_and_dataclasses_as_objects():
    @dataclasses.dataclass
    class Row:
        a: int

    out = io.StringIO()
    print_json({"row": Row(1), "tags": {"b", "a"}}, out)
    assert json.loads(out.getvalue()) == {"row": {"a": 1}, "tags": ["a", "b"]}


# --------------------------------------------------------------------------- tables at 80 columns

@pytest.mark.parametrize("ranges, available, widths", [
    ([(5, 10), (3, 4)], 20, None),                  # fits as it is: rich's natural widths
    ([(30, 30), (10, 40)], 50, [30, 20]),           # the room left goes to the column still short
    ([(4, 14), (4, 24)], 18, [7, 11]),              # in proportion to what each lacks (10 : 20)
    ([(4, 5), (4, 5), (4, 5)], 14, [5, 5, 4]),      # integer shares: the spare cells are handed out
    ([(28, 28), (40, 40)], 60, None),               # even the longest words cannot fit: rich folds
])
def test_fit_widths(ranges, available, widths):
    from harness.output import fit_widths

    got = fit_widths(ranges, available)
    assert got == widths
    if got is not None:
        assert sum(got) == available and all(low <= w <= high for (low, high), w in zip(ranges, got))


def render(renderable, width=80):
    from rich.console import Console

    out = Console(width=width, file=io.StringIO(), highlight=False)
    out.print(renderable)
    return out.file.getvalue()


def test_a_table_too_wide_for_80_columns_keeps_every_word_and_header_whole():
    from harness.output import table

    rows = [("layer1_project_memory_router", "17.0074", "-", "bash, setx, tool, variabl, " * 4, "routed"),
            ("layer1_01", "5.1695", "bash", "-", "")]
    text = render(table("Scores", ["cluster", "score", "tag hits", "member hits", ""], rows))
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "layer1_project_memory_router" in text and " tag hits " in text and " member hits " in text
    assert "variabl," in text and "variab\n" not in text


def test_rich_alone_cuts_the_id_that_fit_widths_keeps():
    """The failing case fit_widths exists for: the same table as a plain rich Table."""
    from rich.table import Table

    plain = Table()
    for name in ("cluster", "score", "tag hits", "member hits", ""):
        plain.add_column(name, overflow="fold")
    plain.add_row("layer1_project_memory_router", "17.0074", "-", "bash, setx, tool, variabl, " * 4, "routed")
    assert "layer1_project_memory_router" not in render(plain)


def test_no_wrap_columns_keep_each_line_whole_and_styles_survive():
    from rich.text import Text

    from harness.output import table

    fitted = table("t", ["verdict", "case"], [(Text("PASS", style="green"), "a " * 60)], no_wrap=("verdict",))
    assert fitted.table.columns[0].no_wrap and not fitted.table.columns[1].no_wrap
    assert isinstance(fitted.table.columns[0]._cells[0], Text)
    assert "PASS" in render(fitted, width=30)


@pytest.mark.parametrize("raw, shown", [
    ("\x1b[2J\x1b[31mred\x1b[0m", "red"),                      # CSI: clear screen, colour
    ("\x1b]8;;https://e.example\x07link\x1b]8;;\x07", "link"),  # OSC 8 hyperlink, BEL-terminated
    ("a\x1b]0;title\x1b\\b", "ab"),                             # OSC window title, ST-terminated
    ("\x9b31mz", "z"),                                          # the 8-bit CSI
    ("ab\u202ecd\u2066e\u200ff", "abcdef"),                     # bidi override, isolate, mark
    ("bell\x07 del\x7f nul\x00", "bell del nul"),
    ("tab\there\r\nnext", "tab here  next"),
    ("caf\u00e9 \U0001f600 \u4e2d", "caf\u00e9 \U0001f600 \u4e2d"),  # printable text untouched
])
def test_terminal_text_removes_what_a_terminal_would_act_on(raw, shown):
    from harness.output import terminal_text

    assert terminal_text(raw) == shown
    assert terminal_text({"k": [raw, 3]}) == {"k": [shown, 3]}


def test_a_table_title_wraps_by_words_at_the_console_width_not_the_tables():
    # issue 36 item 8: rich wrapped a title to its table's width, two words a line over a narrow one
    from rich.console import Console

    from harness.output import table

    title = "Memory bytes per session: flat against slim + router (newest last), and more words after it"
    console = Console(width=80, record=True)
    console.print(table(title, ["a", "b"], [("x", "1")]))
    lines = console.export_text().splitlines()
    assert lines[0].rstrip() == title[:title.rindex(" ", 0, 81)] and lines[1].strip() == title[len(lines[0].rstrip()):].strip()
    assert all(len(line) <= 80 for line in lines)
