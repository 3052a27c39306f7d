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
