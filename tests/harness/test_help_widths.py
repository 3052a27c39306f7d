"""Help at 80 columns (issue 36, item 8): ``memory-router --help`` and every subcommand's
``--help`` fit 80 columns, cut no word (every word of every description, epilog and option help
is whole in what is printed), and cite no document the user does not have (the design spec)."""

import argparse
import re

import pytest

from harness.cli import build_parser

WIDTH = 80


def parsers():
    """``(command words, parser)`` for the top level and every subcommand, at any depth."""
    found = []

    def walk(parser, words):
        found.append((words, parser))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    if sub not in [p for _w, p in found]:
                        walk(sub, words + [name])

    walk(build_parser(), [])
    return found


def source_words(parser):
    """Every word the parser's texts hold, as written (``%(default)s`` forms left out)."""
    texts = [parser.description or "", parser.epilog or ""]
    texts += [action.help for action in parser._actions if action.help and action.help != argparse.SUPPRESS]
    return {word for text in texts for word in text.split() if "%(" not in word and ")s" not in word}


@pytest.fixture(scope="module")
def helps():
    import os

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(WIDTH)
    try:
        return [(" ".join(words) or "(top)", parser, parser.format_help()) for words, parser in parsers()]
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old


def test_every_help_line_fits_80_columns(helps):
    wide = [f"{name}: {line!r}" for name, _parser, text in helps for line in text.splitlines() if len(line) > WIDTH]
    assert not wide, f"{len(wide)} lines over {WIDTH} columns:\n" + "\n".join(wide[:40])


def test_no_help_cuts_a_word(helps):
    cut = []
    for name, parser, text in helps:
        printed = set(text.split())
        cut += [f"{name}: {word!r}" for word in sorted(source_words(parser)) if word not in printed]
    assert not cut, f"{len(cut)} words cut or lost:\n" + "\n".join(cut[:40])


def test_no_help_cites_the_design_spec(helps):
    cited = [f"{name}: {line.strip()}" for name, _parser, text in helps for line in text.splitlines()
             if re.search(r"\bspec\s*\u00a7|\bspec\.md\b", line)]
    assert not cited, "\n".join(cited)


REPEATED_DEFAULT = re.compile(r"\(default: ([^()]*)\)\s+\(default: \1\)")


def test_no_option_states_its_default_twice(helps):
    # slim render --help said "(default: the current directory) (default: the current directory)":
    # its help text held the default and options.project added it again
    twice = [f"{name}: {found.group(0)}" for name, _parser, text in helps
             for found in REPEATED_DEFAULT.finditer(re.sub(r"\s+", " ", text))]
    assert not twice, "\n".join(twice)
    assert REPEATED_DEFAULT.search("dir (default: the current\n   directory) (default: the current directory)"
                                   .replace("\n   ", " "))


def test_the_checks_fail_on_a_parser_that_overflows_and_cuts(monkeypatch):
    # a planted parser: a long unbroken word in its help (argparse's own wrapping cuts it)
    import os

    monkeypatch.setenv("COLUMNS", str(WIDTH))
    parser = argparse.ArgumentParser(prog="x", description="see spec \u00a73 " + "w" * 90)
    parser.add_argument("--flag", help="a " + "long-hyphenated-word-" * 5 + "end")
    text = parser.format_help()
    assert any(len(line) > WIDTH for line in text.splitlines()) or \
        any(word not in set(text.split()) for word in source_words(parser))


def test_descriptions_read_as_short_paragraphs():
    # issue 36 item 8: descriptions of up to 1,349 characters were one unbroken paragraph
    from harness.options import PARAGRAPH_CHARS, _short_paragraphs

    long = []
    for words, parser in parsers():
        for paragraph in _short_paragraphs(parser.description or "").split("\n"):
            sentences = re.split(r"(?<=[a-z0-9)'\]]\.)\s+(?=[A-Z(]|--)", paragraph)
            if len(paragraph) > PARAGRAPH_CHARS and len(sentences) > 1:
                long.append(f"{' '.join(words)}: {len(paragraph)} characters")
    assert not long, long
    wall = "This is one sentence of a wall. " * 40
    assert len(_short_paragraphs(wall.strip()).split("\n\n")) >= 3
