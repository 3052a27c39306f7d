"""The one entry point: every command module registers, --help shows the defaults, bad commands exit 2."""

from harness.cli import COMMAND_MODULES, build_parser, main


def test_every_command_module_exists():
    import importlib

    for name in COMMAND_MODULES:
        assert hasattr(importlib.import_module(name), "register"), name
    build_parser()


def test_help_shows_every_default(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for text in ("score_floor = 3", "tag_weight = 3", "member_weight = 1", "line_cap = 12", "exit codes"):
        assert text in out


def test_unknown_command_is_a_usage_error(capsys):
    assert main(["no-such-command"]) == 2
