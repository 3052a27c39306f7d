"""harness.options: each shared option defined once, so it reads the same in every command."""

import argparse

import pytest

from harness import options
from harness.cli import build_parser


@pytest.mark.parametrize("add, argv, dest, value", [
    (options.json_output, ["--json"], "json", True),
    (options.clusters_and_config, ["--clusters", "c.md", "--config", "t.toml"], "config", "t.toml"),
    (options.memory_dir, ["--memory-dir", "m"], "memory_dir", "m"),
    (options.project, ["--project", "p"], "project", "p"),
    (options.dry_run, ["--dry-run"], "dry_run", True),
])
def test_each_option_parses(add, argv, dest, value):
    parser = argparse.ArgumentParser()
    add(parser)
    assert getattr(parser.parse_args(argv), dest) == value


def _subparser(parser, *path):
    for name in path:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[name]
    return parser


def _help_of(parser, flag):
    return next(a.help for a in parser._actions if flag in a.option_strings)


@pytest.mark.parametrize("path, default", [
    (("doctor",), options.MEMORY_DIR_GUESSED),
    (("checklist",), options.MEMORY_DIR_GUESSED),
    (("mcp",), options.MEMORY_DIR_GUESSED),
    (("gate", "check"), options.MEMORY_DIR_GUESSED),
    (("slim", "render"), options.MEMORY_DIR_FROM_CONFIG),    # writers never guess
    (("slim", "rollback"), options.MEMORY_DIR_FROM_CONFIG),
    (("clusters", "build"), options.MEMORY_DIR_FROM_CONFIG),
])
def test_memory_dir_help_states_the_commands_policy(path, default):
    help_text = _help_of(_subparser(build_parser(), *path), "--memory-dir")
    assert help_text.endswith(f"(default: {default})")
    if default == options.MEMORY_DIR_FROM_CONFIG:
        assert "projects/<project>" not in help_text


def test_json_is_the_same_option_everywhere():
    parser = build_parser()
    helps = {_help_of(_subparser(parser, *path), "--json")
             for path in (("route",), ("doctor",), ("canary", "run"), ("transcript", "audit"), ("slim", "render"),
                          ("tokens", "report"), ("learn",), ("gate", "check"), ("lab", "client"))}
    assert helps == {"machine-readable output"}


# --- issue 30 item 1: a file operand named like an option ------------------------------------

def _operand_parser():
    parser = options.file_operand_parser()(prog="tool check")
    parser.add_argument("files", nargs="+")
    parser.add_argument("--config")
    parser.add_argument("-k", dest="pattern")
    options.json_output(parser)
    return parser


@pytest.mark.parametrize("argv, unplaced", [
    (["--foo.md", "a.md"], "--foo.md"),
    (["a.md", "-x"], "-x"),
    (["--config", "--foo.md", "a.md"], None),       # an option's value is the option's
    (["--config=c.toml", "--jso", "a.md"], None),   # a unique abbreviation is the option
    (["-kPAT", "-", "a.md"], None),                 # a short option with its value; - is stdin
    (["-1", "a md", "-b c"], None),                 # argparse's operands: a number, a space
    (["--", "--foo.md", "-h"], None),               # after --, every token is a file
    (["a.md", "--", "-x"], None),
])
def test_unplaced_option_is_the_first_token_no_option_claims(argv, unplaced):
    assert options.unplaced_option(_operand_parser(), argv) == unplaced


def test_a_file_named_like_an_option_is_refused_by_name_with_the_fix(capsys):
    with pytest.raises(SystemExit) as exit_:
        _operand_parser().parse_args(["--foo.md"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "--foo.md is not an option of tool check" in err
    assert "put -- before the file names: tool check -- --foo.md" in err
    args = _operand_parser().parse_args(["--json", "--", "--foo.md", "-h"])
    assert args.files == ["--foo.md", "-h"] and args.json
