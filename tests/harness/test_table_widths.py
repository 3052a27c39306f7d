"""No word cut in any table at 80 or 100 columns (issue 29 item 9): route, init, doctor, slim,
tokens and canary run on a realistic store (the held-out Gullwing memory directory, 135
memories) in a new git project, each table checked word by word.

Every table goes through ``harness.output.table``; the test keeps each one a command builds and
checks that every word of every header and cell is on one line of what was printed (a path may
break after a ``/``: each of its pieces must then be whole), and that no table line is wider
than the console."""

import os
import pathlib
import re
import shutil

import pytest

from harness import output
from harness.cli import main
from harness.install import hookcommand
from router.store.memorystore import default_memory_dir
from support.git_repo import git_project  # noqa: F401 - a fixture

REPO = pathlib.Path(__file__).resolve().parents[2]
GULLWING_MEMORY = REPO / "benchmarks" / "heldout" / "memory"
EXE_DIR = os.path.dirname(hookcommand.router_executable()[0])
TABLE_LINE = ("┃", "│", "┏", "┡", "└", "┗", "┣", "├")


@pytest.fixture
def tables(monkeypatch):
    """Every FittedTable built while the test runs, in order."""
    built = []
    real = output.table

    def keep(*args, **kwargs):
        built.append(real(*args, **kwargs))
        return built[-1]

    monkeypatch.setattr(output, "table", keep)
    return built


def cut_words(fitted, printed, width):
    """The words of ``fitted``'s headers and cells that are not whole on any line of ``printed``."""
    lines = printed.splitlines()
    missing = []
    for text in [*fitted.headers, *(cell for row in fitted.rows for cell in row)]:
        for word in text.split():
            pieces = [word] if "/" not in word else re.findall(r"[^/]*/+|[^/]+", word)
            for piece in pieces:
                if len(piece) <= width - 8 and not any(piece in line for line in lines):
                    missing.append(piece)
    return missing


def run(capsys, tables, width, *argv):
    """``(exit code, stdout)`` of one command, and the tables it printed checked at ``width``."""
    del tables[:]
    code = main(list(argv))
    printed = capsys.readouterr().out
    for fitted in tables:
        assert cut_words(fitted, printed, width) == [], (argv, fitted.title)
    wide = [line for line in printed.splitlines() if line.startswith(TABLE_LINE) and len(line) > width]
    assert wide == [], argv
    return code, printed, len(tables)


@pytest.mark.parametrize("width", [80, 100])
def test_no_command_cuts_a_word_in_a_table(git_project, monkeypatch, capsys, tables, width):  # noqa: F811
    shutil.copytree(GULLWING_MEMORY, default_memory_dir(str(git_project)))
    monkeypatch.setenv("PATH", EXE_DIR + os.pathsep + "/usr/bin:/bin")
    monkeypatch.chdir(git_project)
    monkeypatch.setenv("COLUMNS", str(width))
    printed_tables = 0
    for argv in (["init", "--yes"],
                 ["route", "why does the archived sedge build fail on the Galaxy A54 after 12 minutes?"],
                 ["doctor", "-v"],
                 ["slim", "render", "--dry-run", "-v"],
                 ["slim", "render"],
                 ["tokens", "report"],
                 ["canary", "run", "-v"]):
        code, _printed, count = run(capsys, tables, width, *argv)
        assert code in (0, 1), argv
        printed_tables += count
    assert printed_tables >= 4          # route, doctor -v, canary run -v, tokens report at least


def test_a_path_too_long_for_its_column_breaks_after_a_slash_and_nothing_else_is_cut(capsys):
    # doctor's table at 80 columns: check, status and a detail holding a 47-character path; rich
    # alone cut it as "memory-layer1-clu" / "sters.md"
    from rich.console import Console
    import io

    path = "/tmp/h29c/w/proj/brain/memory-layer1-clusters.md"
    fitted = output.table("every check", ["check", "status", "detail"],
                          [("a check with a long name", "PASS", f"{path} (from clusters in memory-router.toml): 27 "
                                                                "clusters, 135 members")])
    console = Console(width=80, file=io.StringIO(), highlight=False)
    console.print(fitted)
    printed = console.file.getvalue()
    assert cut_words(fitted, printed, 80) == []
    assert "memory-layer1-clusters.md" in printed and "/tmp/h29c/w/proj/brain/" in printed
    assert max(len(line) for line in printed.splitlines()) <= 80


def test_a_table_that_cannot_fit_prints_each_row_as_a_block(capsys):
    from rich.console import Console
    import io

    fitted = output.table("t", ["first column", "second column", "third"],
                          [("averyveryverylongword " * 2, "anotherlongunbrokenword x", "thirdlongunbrokenword")])
    console = Console(width=40, file=io.StringIO(), highlight=False)
    console.print(fitted)
    printed = console.file.getvalue()
    assert cut_words(fitted, printed, 40) == []
    assert "second column  anotherlongunbrokenword x" in printed


@pytest.mark.parametrize("text, width, lines", [
    ("one two three", 7, ["one two", "three"]),
    ("a /very/long/path/to/a/file.md b", 12, ["a", "/very/long/", "path/to/a/", "file.md b"]),
    ("line\nnext line", 20, ["line", "next line"]),
    ("abcdefghij", 4, ["abcd", "efgh", "ij"]),              # nothing else left: a piece wider than the column
])
def test_wrap_offsets(text, width, lines):
    offsets = output.wrap_offsets(text, width)
    bounds = [0, *offsets, len(text)]
    assert [text[a:b].strip() for a, b in zip(bounds, bounds[1:])] == lines
